/* interpose/policy.c: reads OZCRT_* once, with one warning per bad value; the log.
 *
 * Plain C and libc only, so tests/fake/test_policy.c can #include it. */
#include "policy.h"

#include "envparse.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static ozcrt_policy g_policy;
static pthread_once_t g_policy_once = PTHREAD_ONCE_INIT;

/* (warn_bad: for a parser with no range to name) */
static void warn_bad(const char *var, const char *value, const char *dflt) __attribute__((unused));
static void warn_bad(const char *var, const char *value, const char *dflt)
{
    fprintf(stderr, "ozcrt: warning: %s=\"%s\" is not valid; using the default %s\n", var, value, dflt);
}

/* The same, naming what is valid ("an integer in 0..2"). */
static void warn_bad_valid(const char *var, const char *value, const char *valid, const char *dflt)
{
    fprintf(stderr, "ozcrt: warning: %s=\"%s\" is not valid (%s); using the default %s\n", var, value, valid, dflt);
}

static const char *skip_blanks(const char *p)
{
    while (isspace((unsigned char)*p))
        p++;
    return p;
}

/* Whether a number parsed from p (strto*: its end, errno) took all of p but trailing blanks. */
static int parsed_whole(const char *p, const char *end)
{
    return errno == 0 && end && end != p && *skip_blanks(end) == '\0';
}

int ozcrt_parse_int(const char *var, const char *value, int64_t lo, int64_t hi, int64_t dflt, int64_t *out)
{
    *out = dflt;
    if (!value || !value[0])
        return 0;
    const char *p = skip_blanks(value);
    char *end = NULL;
    errno = 0;
    long long v = strtoll(p, &end, 10);
    if (!parsed_whole(p, end) || v < lo || v > hi) {
        char d[32], valid[80];
        snprintf(d, sizeof d, "%" PRId64, dflt);
        if (hi >= ((int64_t)1 << 40)) /* no upper bound worth saying */
            snprintf(valid, sizeof valid, "an integer >= %" PRId64, lo);
        else
            snprintf(valid, sizeof valid, "an integer in %" PRId64 "..%" PRId64, lo, hi);
        warn_bad_valid(var, value, valid, d);
        return -1;
    }
    *out = (int64_t)v;
    return 1;
}

const char *ozcrt_bits_name(int bits, char *buf, size_t size)
{
    if (bits == -53)
        snprintf(buf, size, "auto");
    else if (bits < 0)
        snprintf(buf, size, "auto:%d", -bits);
    else
        snprintf(buf, size, "%d", bits);
    return buf;
}

int ozcrt_parse_bits(const char *var, const char *value, int dflt, int *out)
{
    *out = dflt;
    if (!value || !value[0])
        return 0;
    const char *p = skip_blanks(value);
    long long v = 0;
    char *end = NULL;
    errno = 0;
    if (strncasecmp(p, "auto", 4) == 0) {
        const char *q = skip_blanks(p + 4);
        if (*q == '\0') {
            *out = -53;
            return 1;
        }
        if (*q == ':') {
            q = skip_blanks(q + 1);
            v = strtoll(q, &end, 10);
            if (parsed_whole(q, end) && v >= OZCRT_MIN_AUTO_BITS && v <= OZCRT_MAX_AUTO_BITS) {
                *out = -(int)v;
                return 1;
            }
        }
    } else {
        v = strtoll(p, &end, 10);
        if (parsed_whole(p, end) && v >= OZCRT_MIN_BITS && v <= OZCRT_MAX_BITS) {
            *out = (int)v;
            return 1;
        }
    }
    char d[16];
    warn_bad_valid(var, value, "an integer in 1..64, auto, or auto:B with B in 20..64", ozcrt_bits_name(dflt, d, sizeof d));
    return -1;
}

int ozcrt_parse_pct(const char *var, const char *value, int64_t max_pct, int64_t dflt, int64_t *out)
{
    *out = dflt;
    if (!value || !value[0])
        return 0;
    const char *p = skip_blanks(value);
    if (strncmp(p, "auto", 4) == 0 && *skip_blanks(p + 4) == '\0') {
        *out = OZCRT_MIN_SPEEDUP_AUTO;
        return 1;
    }
    char *end = NULL;
    errno = 0;
    const double v = strtod(p, &end);
    /* written as a decimal ratio: no hex, inf or nan */
    const int plain = strspn(p, "0123456789.+-eE \t") == strlen(p);
    if (!parsed_whole(p, end) || !plain || !(v >= 0.0) || v * 100.0 > (double)max_pct) {
        char d[32], valid[80];
        if (dflt == OZCRT_MIN_SPEEDUP_AUTO)
            snprintf(d, sizeof d, "auto");
        else
            snprintf(d, sizeof d, "%" PRId64 ".%02" PRId64, dflt / 100, dflt % 100);
        snprintf(valid, sizeof valid, "a ratio in 0..%" PRId64 ", or auto", max_pct / 100);
        warn_bad_valid(var, value, valid, d);
        return -1;
    }
    *out = (int64_t)(v * 100.0 + 0.5);
    return 1;
}

/* Unset or empty: phase22, the default. A name in any case. Anything else
 * runs OFF (native cuBLAS), never a mode the user did not name. */
int ozcrt_parse_mode(const char *var, const char *value, ozcrt_mode *out)
{
    *out = OZCRT_MODE_PHASE22;
    if (!value || !value[0])
        return 0;
    int m = ozcrt_mode_parse_name(value);
    if (m >= 0) {
        *out = (ozcrt_mode)m;
        return 1;
    }
    *out = OZCRT_MODE_OFF;
    fprintf(stderr, "ozcrt: warning: %s=\"%s\" is not a mode (phase22, ozaki2 or off, in any case); "
                    "running off: every call goes to the native cuBLAS\n", var, value);
    return -1;
}

int ozcrt_mode_parse_name(const char *name)
{
    for (int m = 0; name && m < OZCRT_MODE_COUNT; m++)
        if (ozcrt_env_word_is(name, ozcrt_mode_name((ozcrt_mode)m)))
            return m;
    return -1;
}

int ozcrt_parse_bool(const char *var, const char *value, int dflt, int *out)
{
    *out = dflt;
    if (!value || !value[0])
        return 0;
    int b = ozcrt_env_bool(value);
    if (b < 0) {
        warn_bad_valid(var, value, OZCRT_ENV_BOOL_WORDS, dflt ? "1" : "0");
        return -1;
    }
    *out = b;
    return 1;
}

int ozcrt_parse_path(const char *var, const char *value, char *buf, size_t size, const char **out)
{
    *out = NULL;
    if (!value || !value[0])
        return 0;
    if (ozcrt_env_expand_path(value, buf, size) != 0) {
        fprintf(stderr, "ozcrt: warning: %s=\"%s\" is too long once %%p/%%h are expanded; using it as it is\n",
                var, value); /* buf: the name unexpanded (cut to size) */
        *out = buf;
        return -1;
    }
    *out = buf;
    return 1;
}

const char *ozcrt_mode_name(ozcrt_mode m)
{
    switch (m) {
    case OZCRT_MODE_PHASE22:
        return "phase22";
    case OZCRT_MODE_OFF:
        return "off";
    case OZCRT_MODE_OZAKI2:
        return "ozaki2";
    default:
        return "?";
    }
}

static FILE *open_log(const char *path)
{
    if (!path || !path[0] || strcmp(path, "stderr") == 0)
        return stderr;
    FILE *f = fopen(path, "a");
    if (!f) {
        fprintf(stderr, "ozcrt: warning: OZCRT_LOG_FILE=\"%s\" cannot be opened (%s); using stderr\n",
                path, strerror(errno));
        return stderr;
    }
    setvbuf(f, NULL, _IOLBF, 0);
    return f;
}

static char g_stats_pattern[OZCRT_PATH_MAX]; /* OZCRT_STATS_FILE as given (empty: unset or too long) */

static void read_policy(void)
{
    ozcrt_policy *p = &g_policy;
    int64_t v;
    ozcrt_parse_mode("OZCRT_MODE", getenv("OZCRT_MODE"), &p->mode);
    ozcrt_parse_int("OZCRT_MIN_M", getenv("OZCRT_MIN_M"), 0, INT64_MAX, OZCRT_DEFAULT_MIN_DIM, &p->min_m);
    ozcrt_parse_int("OZCRT_MIN_N", getenv("OZCRT_MIN_N"), 0, INT64_MAX, OZCRT_DEFAULT_MIN_DIM, &p->min_n);
    ozcrt_parse_int("OZCRT_MIN_K", getenv("OZCRT_MIN_K"), 0, INT64_MAX, OZCRT_DEFAULT_MIN_DIM, &p->min_k);
    ozcrt_parse_bits("OZCRT_BITS", getenv("OZCRT_BITS"), OZCRT_DEFAULT_BITS, &p->bits);
    ozcrt_parse_pct("OZCRT_MIN_SPEEDUP", getenv("OZCRT_MIN_SPEEDUP"), OZCRT_MAX_MIN_SPEEDUP_PCT,
                    OZCRT_MIN_SPEEDUP_AUTO, &p->min_speedup);
    ozcrt_parse_int("OZCRT_LOG", getenv("OZCRT_LOG"), 0, 2, 0, &v);
    p->log_level = (int)v;
    ozcrt_parse_bool("OZCRT_STATS", getenv("OZCRT_STATS"), 0, &p->stats);
    ozcrt_parse_int("OZCRT_MAX_WORKSPACE_MB", getenv("OZCRT_MAX_WORKSPACE_MB"), 0, INT64_MAX / (1 << 20),
                    OZCRT_DEFAULT_MAX_WORKSPACE_MB, &v);
    p->max_workspace_bytes = (size_t)v << 20;
    static char stats_file[OZCRT_PATH_MAX], log_file[OZCRT_PATH_MAX]; /* %p, %h expanded */
    const char *sf = getenv("OZCRT_STATS_FILE");
    if (sf && strlen(sf) < sizeof g_stats_pattern)
        strcpy(g_stats_pattern, sf);
    ozcrt_parse_path("OZCRT_STATS_FILE", sf, stats_file, sizeof stats_file, &p->stats_file);
    const char *lf = NULL;
    if (p->log_level > 0)
        ozcrt_parse_path("OZCRT_LOG_FILE", getenv("OZCRT_LOG_FILE"), log_file, sizeof log_file, &lf);
    p->log = p->log_level > 0 ? open_log(lf) : stderr;
}

const ozcrt_policy *ozcrt_policy_get(void)
{
    pthread_once(&g_policy_once, read_policy);
    return &g_policy;
}

int ozcrt_policy_own_stats_file(char *buf, size_t size)
{
    (void)ozcrt_policy_get();
    return ozcrt_env_path_per_process(g_stats_pattern) && ozcrt_env_expand_path(g_stats_pattern, buf, size) == 0;
}

static void vlog_to(FILE *f, const char *fmt, va_list ap)
{
    char line[1024];
    vsnprintf(line, sizeof line, fmt, ap);
    fprintf(f, "%s\n", line); /* one fprintf: lines from threads do not interleave */
}

void ozcrt_log(int level, const char *fmt, ...)
{
    const ozcrt_policy *p = ozcrt_policy_get();
    if (level > p->log_level)
        return;
    va_list ap;
    va_start(ap, fmt);
    vlog_to(p->log, fmt, ap);
    va_end(ap);
}

void ozcrt_error(const char *fmt, ...)
{
    const ozcrt_policy *p = ozcrt_policy_get();
    va_list ap;
    va_start(ap, fmt);
    vlog_to(stderr, fmt, ap);
    va_end(ap);
    if (p->log != stderr && p->log_level > 0) {
        va_start(ap, fmt);
        vlog_to(p->log, fmt, ap);
        va_end(ap);
    }
}
