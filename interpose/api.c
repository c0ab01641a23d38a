/* interpose/api.c: the public ozcrt_* API (ozcrt.h): process and per-thread settings, the effective policy of a call, stats and reports now.
 *
 * The settings. The environment's values are read once (g_env). The process
 * values (g_proc) are written under g_lock; every write bumps g_gen. A thread
 * keeps its overrides (t_over, mask t_mask) and a cached effective copy
 * (t_eff) with the generation it was computed at (t_gen, 0 = stale). The
 * call path (ozcrt_effective_policy) is one acquire load of g_gen and a
 * compare with t_gen; only after a change does a thread take g_lock to
 * recompute its copy. g_gen starts at 1 and a thread's t_gen at 0, so the
 * first call of every thread recomputes (after the environment is read). */
#include "ozcrt.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "compare/compare.h"
#include "lifecycle.h"
#include "dlhook.h"
#include "kernels/oz2_auto_estimate.h"
#include "plan_counts.h"
#include "policy.h"
#include "stats.h"

#define OZCRT_EXPORT __attribute__((visibility("default")))

_Static_assert(OZCRT_PHASE22 == OZCRT_MODE_PHASE22 && OZCRT_OFF == OZCRT_MODE_OFF &&
                   OZCRT_OZAKI2 == OZCRT_MODE_OZAKI2 && OZCRT_MODE_COUNT == 3,
               "ozcrt.h's mode numbers are policy.h's");
_Static_assert(OZCRT_RESULT_NATIVE == OZCMP_RESULT_NATIVE && OZCRT_RESULT_EMULATED == OZCMP_RESULT_EMULATED,
               "ozcrt.h's compare results are compare/compare.h's");

static ozcrt_settings g_env;  /* written once, under g_env_once */
static ozcrt_settings g_proc; /* under g_lock */
static pthread_once_t g_env_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_uint_fast64_t g_gen = 1;

__attribute__((constructor)) static void register_lock(void)
{
    ozcrt_lifecycle_register_mutex(&g_lock); /* never held across fork() (lifecycle.h) */
}

static _Thread_local uint64_t t_gen;
static _Thread_local unsigned t_mask; /* bit i: knob i overridden */
static _Thread_local ozcrt_settings t_over;
static _Thread_local ozcrt_settings t_eff;

static void read_env(void)
{
    const ozcrt_policy *p = ozcrt_policy_get();
    const ozcmp_config *sc = ozcmp_config_get();
    g_env = (ozcrt_settings){
        .mode = p->mode, .min_m = p->min_m, .min_n = p->min_n, .min_k = p->min_k, .bits = p->bits,
        .min_speedup = p->min_speedup, .compare = sc->enabled != 0, .compare_result = (int)sc->result,
    };
    pthread_mutex_lock(&g_lock);
    g_proc = g_env;
    pthread_mutex_unlock(&g_lock);
}

static int64_t knob_get(const ozcrt_settings *s, int knob)
{
    switch (knob) {
    case OZCRT_KNOB_MODE: return (int64_t)s->mode;
    case OZCRT_KNOB_MIN_M: return s->min_m;
    case OZCRT_KNOB_MIN_N: return s->min_n;
    case OZCRT_KNOB_MIN_K: return s->min_k;
    case OZCRT_KNOB_BITS: return s->bits;
    case OZCRT_KNOB_COMPARE: return s->compare;
    case OZCRT_KNOB_COMPARE_RESULT: return s->compare_result;
    case OZCRT_KNOB_MIN_SPEEDUP: return s->min_speedup;
    default: return -1;
    }
}

/* Sets a knob known to be valid (knob_ok). */
static void knob_put(ozcrt_settings *s, int knob, int64_t v)
{
    switch (knob) {
    case OZCRT_KNOB_MODE: s->mode = (ozcrt_mode)v; break;
    case OZCRT_KNOB_MIN_M: s->min_m = v; break;
    case OZCRT_KNOB_MIN_N: s->min_n = v; break;
    case OZCRT_KNOB_MIN_K: s->min_k = v; break;
    case OZCRT_KNOB_BITS: s->bits = (int)v; break;
    case OZCRT_KNOB_COMPARE: s->compare = (int)v; break;
    case OZCRT_KNOB_COMPARE_RESULT: s->compare_result = (int)v; break;
    case OZCRT_KNOB_MIN_SPEEDUP: s->min_speedup = v; break;
    default: break;
    }
}

static int knob_ok(int knob, int64_t v)
{
    switch (knob) {
    case OZCRT_KNOB_MODE: return v >= 0 && v < OZCRT_MODE_COUNT;
    case OZCRT_KNOB_MIN_M:
    case OZCRT_KNOB_MIN_N:
    case OZCRT_KNOB_MIN_K: return v >= 0;
    case OZCRT_KNOB_BITS: return ozcrt_bits_valid(v);
    case OZCRT_KNOB_COMPARE:
    case OZCRT_KNOB_COMPARE_RESULT: return v == 0 || v == 1;
    case OZCRT_KNOB_MIN_SPEEDUP: return v == OZCRT_MIN_SPEEDUP_AUTO || (v >= 0 && v <= OZCRT_MAX_MIN_SPEEDUP_PCT);
    default: return 0;
    }
}

static const char *const g_knob_names[OZCRT_KNOB_COUNT] = {
    "mode", "min_m", "min_n", "min_k", "bits", "compare", "compare_result", "min_speedup",
};

static void bad_arg(const char *fn, int scope, int knob, int64_t value)
{
    fprintf(stderr, "ozcrt: warning: %s(scope %d, knob %s, value %lld): not valid; nothing changed\n", fn, scope,
            (unsigned)knob < OZCRT_KNOB_COUNT ? g_knob_names[knob] : "?", (long long)value);
}

/* The slow path: the process values with this thread's overrides. */
static const ozcrt_settings *recompute(void)
{
    pthread_once(&g_env_once, read_env);
    pthread_mutex_lock(&g_lock);
    ozcrt_settings s = g_proc;
    uint64_t gen = atomic_load_explicit(&g_gen, memory_order_relaxed);
    pthread_mutex_unlock(&g_lock);
    for (int k = 0; k < OZCRT_KNOB_COUNT; k++)
        if (t_mask & (1u << k))
            knob_put(&s, k, knob_get(&t_over, k));
    t_eff = s;
    t_gen = gen;
    return &t_eff;
}

const ozcrt_settings *ozcrt_effective_policy(void)
{
    if (__builtin_expect(atomic_load_explicit(&g_gen, memory_order_acquire) == t_gen, 1))
        return &t_eff;
    return recompute();
}

OZCRT_EXPORT int ozcrt_api_version(void)
{
    return OZCRT_API_VERSION;
}

OZCRT_EXPORT int ozcrt_get(int scope, int knob, int64_t *value)
{
    if ((unsigned)knob >= OZCRT_KNOB_COUNT || !value)
        return -1;
    pthread_once(&g_env_once, read_env);
    switch (scope) {
    case OZCRT_THREAD:
        *value = knob_get(ozcrt_effective_policy(), knob);
        return 0;
    case OZCRT_PROCESS:
        pthread_mutex_lock(&g_lock);
        *value = knob_get(&g_proc, knob);
        pthread_mutex_unlock(&g_lock);
        return 0;
    case OZCRT_ENV:
        *value = knob_get(&g_env, knob);
        return 0;
    default:
        return -1;
    }
}

OZCRT_EXPORT int ozcrt_set(int scope, int knob, int64_t value)
{
    if ((scope != OZCRT_THREAD && scope != OZCRT_PROCESS) || !knob_ok(knob, value)) {
        bad_arg("ozcrt_set", scope, knob, value);
        return -1;
    }
    pthread_once(&g_env_once, read_env);
    if (scope == OZCRT_THREAD) {
        knob_put(&t_over, knob, value);
        t_mask |= 1u << knob;
        t_gen = 0;
        return 0;
    }
    pthread_mutex_lock(&g_lock);
    knob_put(&g_proc, knob, value);
    atomic_fetch_add_explicit(&g_gen, 1, memory_order_release);
    pthread_mutex_unlock(&g_lock);
    return 0;
}

OZCRT_EXPORT int ozcrt_reset(int scope, int knob)
{
    if ((scope != OZCRT_THREAD && scope != OZCRT_PROCESS) ||
        (knob != OZCRT_KNOB_ALL && (unsigned)knob >= OZCRT_KNOB_COUNT)) {
        bad_arg("ozcrt_reset", scope, knob, 0);
        return -1;
    }
    pthread_once(&g_env_once, read_env);
    if (scope == OZCRT_THREAD) {
        t_mask &= knob == OZCRT_KNOB_ALL ? 0u : ~(1u << knob);
        t_gen = 0;
        return 0;
    }
    pthread_mutex_lock(&g_lock);
    if (knob == OZCRT_KNOB_ALL)
        g_proc = g_env;
    else
        knob_put(&g_proc, knob, knob_get(&g_env, knob));
    atomic_fetch_add_explicit(&g_gen, 1, memory_order_release);
    pthread_mutex_unlock(&g_lock);
    return 0;
}

OZCRT_EXPORT const char *ozcrt_knob_name(int knob)
{
    return (unsigned)knob < OZCRT_KNOB_COUNT ? g_knob_names[knob] : NULL;
}

OZCRT_EXPORT const char *ozcrt_mode_to_name(int mode)
{
    return (unsigned)mode < OZCRT_MODE_COUNT ? ozcrt_mode_name((ozcrt_mode)mode) : NULL;
}

OZCRT_EXPORT int ozcrt_mode_from_name(const char *name)
{
    return ozcrt_mode_parse_name(name); /* any case, as OZCRT_MODE */
}

/* ---- stats ---- */

OZCRT_EXPORT int ozcrt_stats_enable(int on)
{
    return ozcrt_stats_set_counting(on);
}

OZCRT_EXPORT int ozcrt_stats_entry_count(void)
{
    return OZCRT_EP_GEMM_COUNT;
}

OZCRT_EXPORT const char *ozcrt_stats_entry_name(int entry)
{
    return (unsigned)entry < OZCRT_EP_GEMM_COUNT ? ozcrt_entry_name((ozcrt_entry)entry) : NULL;
}

OZCRT_EXPORT int ozcrt_stats_reason_count(void)
{
    return OZCRT_R_COUNT;
}

OZCRT_EXPORT const char *ozcrt_stats_reason_name(int reason)
{
    return (unsigned)reason < OZCRT_R_COUNT ? ozcrt_reason_name((ozcrt_reason)reason) : NULL;
}

OZCRT_EXPORT int ozcrt_stats_get(int entry, uint64_t *calls, uint64_t *by_reason, int nreasons,
                                 double *emulated_flop)
{
    uint64_t c, r[OZCRT_R_COUNT];
    double f;
    if ((unsigned)entry >= OZCRT_EP_GEMM_COUNT || nreasons < 0 || (nreasons > 0 && !by_reason) ||
        ozcrt_stats_read((ozcrt_entry)entry, &c, r, &f) != 0)
        return -1;
    if (calls)
        *calls = c;
    for (int i = 0; i < nreasons && i < OZCRT_R_COUNT; i++)
        by_reason[i] = r[i];
    if (emulated_flop)
        *emulated_flop = f;
    return 0;
}

OZCRT_EXPORT int ozcrt_stats_auto_plans(int complex_, uint64_t *counts, int ncounts)
{
    if (ncounts < 0 || (ncounts > 0 && !counts))
        return -1;
    uint64_t c[OZ2A_PLAN_COUNTS_CX];
    ozcrt_plan_counts_read(complex_ != 0, c, OZ2A_PLAN_COUNTS_CX);
    for (int i = 0; i < ncounts && i < OZ2A_PLAN_COUNTS_CX; i++)
        counts[i] = c[i];
    return OZ2A_PLAN_COUNTS_CX;
}

OZCRT_EXPORT void ozcrt_stats_clear(void)
{
    ozcrt_stats_reset_all();
}

OZCRT_EXPORT int ozcrt_stats_write(const char *path)
{
    return ozcrt_stats_write_table(path);
}

/* ---- the shadow report ---- */

OZCRT_EXPORT int ozcrt_report_write(const char *path)
{
    const ozcrt_policy *p = ozcrt_policy_get();
    return ozcmp_report_now(path, p->log_level > 0 ? p->log : stderr);
}

OZCRT_EXPORT int ozcrt_compare_begin(void)
{
    return ozcmp_region_begin();
}

OZCRT_EXPORT int ozcrt_hook_dlsym(void)
{
    return ozcrt_dl_hook_objects();
}

OZCRT_EXPORT int ozcrt_compare_end(int id, const char *path)
{
    const ozcrt_policy *p = ozcrt_policy_get();
    return ozcmp_region_end(id, path, p->log_level > 0 ? p->log : stderr);
}
