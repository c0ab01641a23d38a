/* interpose/envparse.h: the OZCRT_* variables' shared syntax: words, booleans, per-process file names.
 *
 * Header-only (static inline, plain C and libc), so that interpose/policy.c
 * and compare/shadow.c (a library of its own) read the variables alike:
 *   - words (modes, emulated/native) case-insensitive, blanks around ignored;
 *   - one boolean syntax for every boolean variable: 1/0, yes/no, true/false,
 *     on/off, case-insensitive;
 *   - file names (OZCRT_LOG_FILE, OZCRT_STATS_FILE, OZCRT_REPORT_FILE) with
 *     %p (the process id), %h (the host name) and %% (a %) expanded. */
#ifndef OZCRT_INTERPOSE_ENVPARSE_H
#define OZCRT_INTERPOSE_ENVPARSE_H

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* The accepted boolean words, for warnings. */
#define OZCRT_ENV_BOOL_WORDS "1/0, yes/no, true/false, on/off"

/* Whether value, blanks around it ignored, is `word` in any case. */
static inline int ozcrt_env_word_is(const char *value, const char *word)
{
    if (!value)
        return 0;
    while (isspace((unsigned char)*value))
        value++;
    size_t n = strlen(word);
    if (strncasecmp(value, word, n) != 0)
        return 0;
    for (value += n; *value; value++)
        if (!isspace((unsigned char)*value))
            return 0;
    return 1;
}

/* A boolean: 1 true, 0 false, -1 neither (unset and empty are the caller's default). */
static inline int ozcrt_env_bool(const char *value)
{
    static const char *const yes[] = {"1", "yes", "true", "on"}, *const no[] = {"0", "no", "false", "off"};
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
        if (ozcrt_env_word_is(value, yes[i]))
            return 1;
        if (ozcrt_env_word_is(value, no[i]))
            return 0;
    }
    return -1;
}

/* The file name `pattern` with %p (getpid()), %h (gethostname()) and %%
 * expanded into out (size bytes); any other % is kept as it is. Returns 0, or
 * -1 when the result does not fit (out then holds the pattern, truncated). */
static inline int ozcrt_env_expand_path(const char *pattern, char *out, size_t size)
{
    size_t n = 0;
    if (size == 0)
        return -1;
    for (const char *p = pattern; *p; p++) {
        char piece[300];
        const char *add = piece;
        if (p[0] == '%' && p[1] == 'p') {
            snprintf(piece, sizeof piece, "%ld", (long)getpid());
            p++;
        } else if (p[0] == '%' && p[1] == 'h') {
            if (gethostname(piece, sizeof piece - 1) != 0)
                snprintf(piece, sizeof piece, "unknown-host");
            piece[sizeof piece - 1] = '\0';
            p++;
        } else if (p[0] == '%' && p[1] == '%') {
            add = "%";
            p++;
        } else {
            piece[0] = *p;
            piece[1] = '\0';
        }
        size_t len = strlen(add);
        if (n + len >= size) {
            size_t keep = strlen(pattern) < size ? strlen(pattern) : size - 1;
            memcpy(out, pattern, keep);
            out[keep] = '\0';
            return -1;
        }
        memcpy(out + n, add, len);
        n += len;
    }
    out[n] = '\0';
    return 0;
}

/* Whether ozcrt_env_expand_path puts the process id into `pattern` (a %p
 * that is not the second half of a %%): a file per process. */
static inline int ozcrt_env_path_per_process(const char *pattern)
{
    for (const char *p = pattern; p && *p; p++)
        if (p[0] == '%' && (p[1] == 'p' || p[1] == '%')) {
            if (p[1] == 'p')
                return 1;
            p++;
        }
    return 0;
}

#endif
