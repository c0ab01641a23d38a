/* interpose/stats.c: per-entry-point counters and the table written at exit. */
#include "stats.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "policy.h"

static const char *const g_reason_names[] = {
#define OZCRT_X_NAME(id, str) str,
    OZCRT_REASONS(OZCRT_X_NAME)
#undef OZCRT_X_NAME
};

static const char *const g_entry_names[] = {
#define OZCRT_X_NAME(name) #name,
    OZCRT_INTERCEPTED(OZCRT_X_NAME)
#undef OZCRT_X_NAME
};

const char *ozcrt_reason_name(ozcrt_reason r)
{
    return (unsigned)r < OZCRT_R_COUNT ? g_reason_names[r] : "?";
}

const char *ozcrt_entry_name(ozcrt_entry ep)
{
    return (unsigned)ep < OZCRT_EP_COUNT ? g_entry_names[ep] : "?";
}

typedef struct {
    uint64_t calls;
    uint64_t by_reason[OZCRT_R_COUNT];
    double flop;
} entry_stats;

static entry_stats g_stats[OZCRT_EP_COUNT];
static pthread_mutex_t g_stats_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t g_atexit_once = PTHREAD_ONCE_INIT;

static void write_table(void)
{
    const ozcrt_policy *p = ozcrt_policy_get();
    FILE *f = p->log;
    int close_it = 0;
    if (p->stats_file) {
        FILE *s = fopen(p->stats_file, "w");
        if (s) {
            f = s;
            close_it = 1;
        } else {
            ozcrt_error("ozcrt: OZCRT_STATS_FILE=\"%s\" cannot be opened; the table goes to the log", p->stats_file);
        }
    }
    pthread_mutex_lock(&g_stats_lock);
    fprintf(f, "ozcrt stats (%s)\n", p->mode == OZCRT_MODE_OFF ? "mode off" : "mode phase22");
    fprintf(f, "%-28s %10s %10s %10s %10s %14s  %s\n", "entry point", "calls", "emulated", "failed",
            "forwarded", "emulated_GFLOP", "forwarded by reason");
    for (int e = 0; e < OZCRT_EP_GEMM_COUNT; e++) {
        const entry_stats *s = &g_stats[e];
        uint64_t fwd = s->calls - s->by_reason[OZCRT_R_EMULATED] - s->by_reason[OZCRT_R_FAILED];
        fprintf(f, "%-28s %10llu %10llu %10llu %10llu %14.3f ", g_entry_names[e], (unsigned long long)s->calls,
                (unsigned long long)s->by_reason[OZCRT_R_EMULATED], (unsigned long long)s->by_reason[OZCRT_R_FAILED],
                (unsigned long long)fwd, s->flop * 1e-9);
        int any = 0;
        for (int r = OZCRT_R_FAILED + 1; r < OZCRT_R_COUNT; r++)
            if (s->by_reason[r]) {
                fprintf(f, "%s%s=%llu", any ? "," : " ", g_reason_names[r], (unsigned long long)s->by_reason[r]);
                any = 1;
            }
        fprintf(f, "%s\n", any ? "" : " -");
    }
    pthread_mutex_unlock(&g_stats_lock);
    if (close_it)
        fclose(f);
    else
        fflush(f);
}

static void register_atexit(void)
{
    if (atexit(write_table) != 0)
        ozcrt_error("ozcrt: atexit failed: no stats table will be written");
}

void ozcrt_stats_record(ozcrt_entry ep, ozcrt_reason r, double flop)
{
    if (!ozcrt_policy_get()->stats || (unsigned)ep >= OZCRT_EP_COUNT || (unsigned)r >= OZCRT_R_COUNT)
        return;
    pthread_once(&g_atexit_once, register_atexit);
    pthread_mutex_lock(&g_stats_lock);
    g_stats[ep].calls++;
    g_stats[ep].by_reason[r]++;
    if (r == OZCRT_R_EMULATED)
        g_stats[ep].flop += flop;
    pthread_mutex_unlock(&g_stats_lock);
}
