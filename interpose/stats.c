/* interpose/stats.c: per-entry-point counters and the table written at exit. */
#include "stats.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crt/moduli.h"
#include "kernels/ozcrt_gemm.h"
#include "kernels/oz2_auto_estimate.h"
#include "lifecycle.h"
#include "plan_counts.h"
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
static atomic_int g_counting; /* ozcrt_stats_set_counting (the API), beside OZCRT_STATS */
/* Emulated calls by path: [0] Phase 22, [N] ozaki2 with N moduli; complex
 * calls (ozaki2 at a fixed N only) in a row of their own. */
_Static_assert(OZCRT_PATH_AUTO == OZ2_MAX_MODULI + 1, "the auto path follows the moduli counts");
static uint64_t g_paths[OZCRT_PATH_AUTO + 1];   /* 0 phase22, N, OZCRT_PATH_AUTO */
static uint64_t g_paths_z[OZCRT_PATH_AUTO + 1]; /* the same for complex calls */

/* The table to `path`, NULL: OZCRT_STATS_FILE or the log. -1 when `path` given
 * and not writable. */
int ozcrt_stats_write_table(const char *path)
{
    const ozcrt_policy *p = ozcrt_policy_get();
    FILE *f = p->log;
    int close_it = 0;
    const char *file = path && path[0] ? path : p->stats_file;
    if (file) {
        FILE *s = fopen(file, "w");
        if (s) {
            f = s;
            close_it = 1;
        } else if (path && path[0]) {
            ozcrt_error("ozcrt: the stats table cannot be written to \"%s\"", path);
            return -1;
        } else {
            ozcrt_error("ozcrt: OZCRT_STATS_FILE=\"%s\" cannot be opened; the table goes to the log", p->stats_file);
        }
    }
    pthread_mutex_lock(&g_stats_lock);
    const ozcrt_settings *st = ozcrt_effective_policy();
    if (st->mode == OZCRT_MODE_OZAKI2)
    {
        char bn[16];
        fprintf(f, "ozcrt stats (mode %s, bits %s)\n", ozcrt_mode_name(st->mode), ozcrt_bits_name(st->bits, bn, sizeof bn));
    }
    else
        fprintf(f, "ozcrt stats (mode %s)\n", ozcrt_mode_name(st->mode));
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
    /* the modes that ran the emulated calls (a thread may switch modes: ozcrt.h) */
    fprintf(f, "emulated calls by mode:");
    int any_path = 0;
    for (int z = 0; z < 2; z++) {
        const uint64_t *paths = z ? g_paths_z : g_paths;
        const char *ozaki2 = z ? "ozaki2-complex" : "ozaki2";
        for (int q = 0; q <= OZCRT_PATH_AUTO; q++)
            if (paths[q]) {
                if (q == 0)
                    fprintf(f, "%s %s=%llu", any_path ? "," : "", z ? "phase22-complex" : "phase22",
                            (unsigned long long)paths[q]);
                else if (q == OZCRT_PATH_AUTO) /* N chosen on the GPU, per call */
                    fprintf(f, "%s %s(auto)=%llu", any_path ? "," : "", ozaki2, (unsigned long long)paths[q]);
                else
                    fprintf(f, "%s %s(N=%d)=%llu", any_path ? "," : "", ozaki2, q, (unsigned long long)paths[q]);
                any_path = 1;
            }
    }
    fprintf(f, "%s\n", any_path ? "" : " -");
    /* what those results are worth: a clause per kind of path that ran (docs/accuracy.md) */
    int p22 = g_paths[0] || g_paths_z[0], fixed = 0, autop = g_paths[OZCRT_PATH_AUTO] || g_paths_z[OZCRT_PATH_AUTO];
    for (int q = 1; q < OZCRT_PATH_AUTO; q++)
        fixed |= g_paths[q] || g_paths_z[q];
    if (any_path) {
        fprintf(f, "accuracy of the emulated calls:");
        const char *sep = "";
        if (p22) {
            fprintf(f, " phase22: about 34 bits of each row's and column's largest element, less than FP64");
            sep = ";";
        }
        if (fixed) {
            fprintf(f, "%s ozaki2 at fixed bits: that many bits of each row's and column's largest element "
                       "(fixed point, not certified on badly scaled data)", sep);
            sep = ";";
        }
        if (autop)
            fprintf(f, "%s ozaki2 auto: every element within 2^-B (|A||B|)_ij (B = 53 unless OZCRT_BITS=auto:B), "
                       "or the product ran natively", sep);
        fprintf(f, "\n");
    }
    /* the automatic plans, as the GPU made them (a product each; plan_counts.h) */
    for (int z = 0; z < 2; z++) {
        uint64_t pc[OZ2A_PLAN_COUNTS_CX];
        ozcrt_plan_counts_read(z, pc, OZ2A_PLAN_COUNTS_CX);
        int any = 0;
        for (int q = 0; q < OZ2A_PLAN_COUNTS_CX; q++)
            if (pc[q]) {
                if (!any)
                    fprintf(f, "automatic plans of %s products (made on the GPU):", z ? "complex" : "real");
                if (q == 0)
                    fprintf(f, "%s no plan (native)=%llu", any ? "," : "", (unsigned long long)pc[q]);
                else
                    fprintf(f, "%s %s=%d: %llu", any ? "," : "", z ? "N'" : "N", q, (unsigned long long)pc[q]);
                any = 1;
            }
        if (any)
            fprintf(f, "\n");
    }
    pthread_mutex_unlock(&g_stats_lock);
    if (close_it)
        return fclose(f) == 0 ? 0 : -1;
    fflush(f);
    return 0;
}

static void write_table(void)
{
    char own[OZCRT_PATH_MAX];
    const char *path = NULL;
    if (ozcrt_lifecycle_is_fork_child()) { /* the table is the parent's file (lifecycle.h), unless there is one a process */
        if (!ozcrt_policy_own_stats_file(own, sizeof own))
            return;
        path = own;
    }
    (void)ozcrt_stats_write_table(path);
}

/* A fork child counts its own calls from zero (its table, if it writes one, is its own). */
static void stats_child(void)
{
    memset(g_stats, 0, sizeof g_stats);
    memset(g_paths, 0, sizeof g_paths);
    memset(g_paths_z, 0, sizeof g_paths_z);
}

__attribute__((constructor)) static void register_lock(void)
{
    ozcrt_lifecycle_register_mutex(&g_stats_lock); /* never held across fork() */
    (void)ozcrt_lifecycle_on_fork(NULL, NULL, stats_child);
}

static void register_atexit(void)
{
    if (atexit(write_table) != 0)
        ozcrt_error("ozcrt: atexit failed: no stats table will be written");
}

void ozcrt_stats_record(ozcrt_entry ep, ozcrt_reason r, double flop)
{
    int table = ozcrt_policy_get()->stats;
    if (!(table || atomic_load_explicit(&g_counting, memory_order_relaxed)) || (unsigned)ep >= OZCRT_EP_COUNT ||
        (unsigned)r >= OZCRT_R_COUNT)
        return;
    if (table)
        pthread_once(&g_atexit_once, register_atexit);
    pthread_mutex_lock(&g_stats_lock);
    g_stats[ep].calls++;
    g_stats[ep].by_reason[r]++;
    if (r == OZCRT_R_EMULATED)
        g_stats[ep].flop += flop;
    pthread_mutex_unlock(&g_stats_lock);
}

int ozcrt_stats_counting(void)
{
    return ozcrt_policy_get()->stats || atomic_load_explicit(&g_counting, memory_order_relaxed);
}

void ozcrt_stats_record_path(int nmod, int elem)
{
    if (!ozcrt_stats_counting() || nmod < 0 || nmod > OZCRT_PATH_AUTO)
        return;
    pthread_mutex_lock(&g_stats_lock);
    (elem == OZ_ELEM_COMPLEX ? g_paths_z : g_paths)[nmod]++;
    pthread_mutex_unlock(&g_stats_lock);
}

int ozcrt_stats_set_counting(int on)
{
    return atomic_exchange(&g_counting, on ? 1 : 0) || ozcrt_policy_get()->stats;
}

int ozcrt_stats_read(ozcrt_entry ep, uint64_t *calls, uint64_t by_reason[OZCRT_R_COUNT], double *flop)
{
    if ((unsigned)ep >= OZCRT_EP_COUNT)
        return -1;
    pthread_mutex_lock(&g_stats_lock);
    *calls = g_stats[ep].calls;
    for (int r = 0; r < OZCRT_R_COUNT; r++)
        by_reason[r] = g_stats[ep].by_reason[r];
    *flop = g_stats[ep].flop;
    pthread_mutex_unlock(&g_stats_lock);
    return 0;
}

void ozcrt_stats_reset_all(void)
{
    pthread_mutex_lock(&g_stats_lock);
    memset(g_stats, 0, sizeof g_stats);
    memset(g_paths, 0, sizeof g_paths);
    memset(g_paths_z, 0, sizeof g_paths_z);
    ozcrt_plan_counts_clear();
    pthread_mutex_unlock(&g_stats_lock);
}
