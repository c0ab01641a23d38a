/* tests/fake/stderr_capture.h: a test's stderr (file descriptor 2) sent to a temporary file, then restored and read back (the shim's warnings and log lines). */
#ifndef OZCRT_TESTS_STDERR_CAPTURE_H
#define OZCRT_TESTS_STDERR_CAPTURE_H

#include <stdio.h>
#include <unistd.h>

typedef struct oz_stderr_capture {
    int saved;  /* the original fd 2 */
    FILE *tmp;
} oz_stderr_capture;

/* From now on fd 2 writes into a temporary file; 0, or -1 (nothing changed). */
static inline int oz_stderr_capture_begin(oz_stderr_capture *c)
{
    fflush(stderr);
    c->saved = dup(2);
    c->tmp = tmpfile();
    if (c->saved >= 0 && c->tmp && dup2(fileno(c->tmp), 2) >= 0)
        return 0;
    if (c->saved >= 0)
        close(c->saved);
    if (c->tmp)
        fclose(c->tmp);
    return -1;
}

/* fd 2 back; what was written meanwhile into buf (size bytes, NUL-terminated). */
static inline const char *oz_stderr_capture_end(oz_stderr_capture *c, char *buf, size_t size)
{
    fflush(stderr);
    dup2(c->saved, 2);
    close(c->saved);
    rewind(c->tmp);
    size_t n = fread(buf, 1, size - 1, c->tmp);
    buf[n] = '\0';
    fclose(c->tmp);
    return buf;
}

#endif
