/* interpose/real.c: finds the real cuBLAS, once, without ever loading a second copy.
 *
 * Order (field-notes.md, "Symbol resolution under Python"):
 *  1. OZCRT_CUBLAS_LIBRARY=path: dlopen(path, RTLD_LAZY | RTLD_LOCAL). Asked
 *     for explicitly, so it is authoritative: if it fails, nothing else is tried.
 *  2. dlsym(RTLD_NEXT, "cublasDgemm_v2"): the program (or a global library)
 *     links cuBLAS. The handle of that object is then taken with dladdr and
 *     dlopen(RTLD_NOLOAD), so every symbol comes from the same library.
 *  3. The copy already loaded into a local scope (Python's dlopen of torch or
 *     cupy): dlopen("libcublas.so.13" / ".12" / "libcublas.so", RTLD_NOLOAD),
 *     then dl_iterate_phdr for any object named libcublas.so* (never
 *     libcublasLt), opened with RTLD_NOLOAD.
 * Resolution runs lazily at the first intercepted call, never in a
 * constructor: the application's cuBLAS may be loaded after us. */
#include "real.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"

_Thread_local int ozcrt_in_real;

static ozcrt_real_table g_real;
static pthread_once_t g_real_once = PTHREAD_ONCE_INIT;
static char g_tried[1024]; /* what was tried, for the error message */

static const char *const g_sonames[] = {"libcublas.so.13", "libcublas.so.12", "libcublas.so"};

static void tried(const char *what, const char *err)
{
    size_t used = strlen(g_tried);
    if (used + 1 >= sizeof g_tried)
        return;
    snprintf(g_tried + used, sizeof g_tried - used, "%s%s (%s)", used ? "; " : "", what,
             err ? err : "not found");
}

static void fill_from_handle(void *handle)
{
#define OZCRT_X_DLSYM(name) g_real.name = (ozcrt_##name##_fn)dlsym(handle, #name);
    OZCRT_ALL_SYMBOLS(OZCRT_X_DLSYM)
#undef OZCRT_X_DLSYM
}

static void record_path(const void *symbol)
{
    Dl_info info;
    if (symbol && dladdr(symbol, &info) && info.dli_fname)
        snprintf(g_real.path, sizeof g_real.path, "%s", info.dli_fname);
}

static int by_override(const char *path)
{
    void *h = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
    if (!h) {
        tried("OZCRT_CUBLAS_LIBRARY", dlerror());
        return 0;
    }
    fill_from_handle(h);
    g_real.how = "OZCRT_CUBLAS_LIBRARY";
    snprintf(g_real.path, sizeof g_real.path, "%s", path);
    if (!g_real.cublasDgemm_v2)
        tried("OZCRT_CUBLAS_LIBRARY dlsym cublasDgemm_v2", dlerror());
    return 1; /* authoritative even when symbols are missing */
}

static int by_rtld_next(void)
{
    void *sym = dlsym(RTLD_NEXT, "cublasDgemm_v2");
    if (!sym) {
        tried("dlsym(RTLD_NEXT)", dlerror());
        return 0;
    }
    Dl_info info;
    void *h = NULL;
    if (dladdr(sym, &info) && info.dli_fname)
        h = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
    if (h) {
        fill_from_handle(h);
        g_real.how = "RTLD_NEXT";
    } else { /* cannot name the object: every symbol through RTLD_NEXT */
#define OZCRT_X_NEXT(name) g_real.name = (ozcrt_##name##_fn)dlsym(RTLD_NEXT, #name);
        OZCRT_ALL_SYMBOLS(OZCRT_X_NEXT)
#undef OZCRT_X_NEXT
        g_real.how = "RTLD_NEXT (no handle)";
    }
    record_path(sym);
    return 1;
}

static int is_cublas_basename(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    return strncmp(base, "libcublas.so", 12) == 0; /* libcublasLt.so does not match */
}

static int find_loaded_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    char *out = data;
    if (info->dlpi_name && info->dlpi_name[0] && is_cublas_basename(info->dlpi_name)) {
        snprintf(out, 512, "%s", info->dlpi_name);
        return 1;
    }
    return 0;
}

static int by_loaded_copy(void)
{
    for (size_t i = 0; i < sizeof g_sonames / sizeof g_sonames[0]; i++) {
        void *h = dlopen(g_sonames[i], RTLD_LAZY | RTLD_NOLOAD);
        if (h) {
            fill_from_handle(h);
            g_real.how = "dlopen(RTLD_NOLOAD)";
            record_path((void *)g_real.cublasDgemm_v2);
            if (!g_real.path[0])
                snprintf(g_real.path, sizeof g_real.path, "%s", g_sonames[i]);
            return 1;
        }
        tried(g_sonames[i], dlerror());
    }
    char path[512] = "";
    dl_iterate_phdr(find_loaded_cb, path); /* dlopen only after the walk: loader lock */
    if (!path[0]) {
        tried("loaded objects named libcublas.so*", "none");
        return 0;
    }
    void *h = dlopen(path, RTLD_LAZY | RTLD_NOLOAD);
    if (!h) {
        tried(path, dlerror());
        return 0;
    }
    fill_from_handle(h);
    g_real.how = "loaded object (dl_iterate_phdr)";
    snprintf(g_real.path, sizeof g_real.path, "%s", path);
    return 1;
}

static void resolve(void)
{
    const char *override = getenv("OZCRT_CUBLAS_LIBRARY");
    int found;
    if (override && override[0])
        found = by_override(override);
    else
        found = by_rtld_next() || by_loaded_copy();
    if (!found)
        g_real.how = "none";
    if (g_real.cublasDgemm_v2)
        ozcrt_log(2, "ozcrt: real cuBLAS by %s: %s", g_real.how, g_real.path[0] ? g_real.path : "?");
}

const ozcrt_real_table *ozcrt_real(void)
{
    pthread_once(&g_real_once, resolve);
    return &g_real;
}

cublasStatus_t ozcrt_real_missing(const char *name)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static char reported[OZCRT_EP_COUNT + 8][48];
    static int nreported;
    int first = 1;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < nreported; i++)
        if (strcmp(reported[i], name) == 0)
            first = 0;
    if (first && nreported < (int)(sizeof reported / sizeof reported[0]))
        snprintf(reported[nreported++], sizeof reported[0], "%s", name);
    pthread_mutex_unlock(&lock);
    if (first) {
        if (g_real.path[0])
            ozcrt_error("ozcrt: the real %s is not in %s (found by %s); returning CUBLAS_STATUS_NOT_INITIALIZED",
                        name, g_real.path, g_real.how);
        else
            ozcrt_error("ozcrt: no real cuBLAS for %s; tried: %s; returning CUBLAS_STATUS_NOT_INITIALIZED",
                        name, g_tried);
    }
    return CUBLAS_STATUS_NOT_INITIALIZED;
}
