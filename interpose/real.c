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
 * constructor: the application's cuBLAS may be loaded after us.
 *
 * That copy is the default. A process may hold two (PyTorch built for one
 * CUDA major next to CuPy built for another, each RTLD_LOCAL): the shim's
 * cublasCreate_v2 asks which library its caller's code reaches, that is
 * dlsym on the caller's own object (dladdr1 of the return address), which
 * searches the object and its dependencies, never the preloaded shim; the
 * handle is then tied to that library, and every call on it goes there. */
#include "real.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lifecycle.h"
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

static void fill_table(ozcrt_real_table *t, void *handle)
{
#define OZCRT_X_DLSYM(name) t->name = (ozcrt_##name##_fn)dlsym(handle, #name);
    OZCRT_ALL_SYMBOLS(OZCRT_X_DLSYM)
#undef OZCRT_X_DLSYM
}

static void fill_from_handle(void *handle)
{
    fill_table(&g_real, handle);
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

int ozcrt_basename_is(const char *path, const char *prefix)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    return strncmp(base, prefix, strlen(prefix)) == 0;
}

typedef struct find_loaded {
    const char *prefix;
    char *path;
    size_t size;
} find_loaded;

static int find_loaded_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    const find_loaded *f = data;
    if (info->dlpi_name && info->dlpi_name[0] && ozcrt_basename_is(info->dlpi_name, f->prefix)) {
        snprintf(f->path, f->size, "%s", info->dlpi_name);
        return 1;
    }
    return 0;
}

int ozcrt_find_loaded(const char *prefix, char *path, size_t size)
{
    find_loaded f = {prefix, path, size};
    path[0] = '\0';
    dl_iterate_phdr(find_loaded_cb, &f);
    return path[0] != '\0';
}

void *ozcrt_caller_symbol(const void *ret_addr, const char *name, int *is_cublas)
{
    Dl_info info;
    struct link_map *lm = NULL;
    *is_cublas = 0;
    if (!ret_addr || !dladdr1(ret_addr, &info, (void **)&lm, RTLD_DL_LINKMAP) || !lm || !lm->l_name ||
        !lm->l_name[0])
        return NULL; /* the main program (its scope is the global one) or unknown */
    *is_cublas = ozcrt_basename_is(lm->l_name, "libcublas.so"); /* libcublasLt.so does not match */
    void *caller = dlopen(lm->l_name, RTLD_LAZY | RTLD_NOLOAD);
    if (!caller)
        return NULL;
    void *sym = dlsym(caller, name); /* the caller's object and its dependencies, never the preloaded shim */
    dlclose(caller);
    return sym;
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
    char path[512];
    if (!ozcrt_find_loaded("libcublas.so", path, sizeof path)) { /* dlopen only after the walk: loader lock */
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

/* ---- handle -> library, for handles created through the shim by a second copy ---- */

#define OZCRT_MAX_LIBRARIES 8

typedef struct handle_tie {
    cublasHandle_t handle;
    const ozcrt_real_table *table;
} handle_tie;

static pthread_mutex_t g_ties_lock = PTHREAD_MUTEX_INITIALIZER; /* g_libs, g_ties */
static ozcrt_real_table g_libs[OZCRT_MAX_LIBRARIES];
static int g_nlibs;
static handle_tie *g_ties;
static size_t g_nties_cap;
static atomic_size_t g_nties; /* read without the lock: 0 means every handle is the default's */
static pthread_mutex_t g_missing_lock = PTHREAD_MUTEX_INITIALIZER;

__attribute__((constructor)) static void register_locks(void)
{
    ozcrt_lifecycle_register_mutex(&g_ties_lock);
    ozcrt_lifecycle_register_mutex(&g_missing_lock);
}

/* The table of the library whose cublasCreate_v2 is `create` (in file
 * `path`), added on first sight. dlopen/dlsym run outside the lock: the
 * loader's lock may be held by a thread that is about to call us. */
static const ozcrt_real_table *library_table(void *create, const char *path)
{
    pthread_mutex_lock(&g_ties_lock);
    for (int i = 0; i < g_nlibs; i++)
        if ((void *)g_libs[i].cublasCreate_v2 == create) {
            pthread_mutex_unlock(&g_ties_lock);
            return &g_libs[i];
        }
    pthread_mutex_unlock(&g_ties_lock);
    ozcrt_real_table t = {0};
    void *h = dlopen(path, RTLD_LAZY | RTLD_NOLOAD); /* kept: the library stays while handles of it may live */
    if (!h)
        return NULL;
    fill_table(&t, h);
    if ((void *)t.cublasCreate_v2 != create)
        return NULL;
    t.how = "the creating caller's scope";
    snprintf(t.path, sizeof t.path, "%s", path);
    const ozcrt_real_table *out = NULL;
    pthread_mutex_lock(&g_ties_lock);
    for (int i = 0; i < g_nlibs && !out; i++)
        if ((void *)g_libs[i].cublasCreate_v2 == create)
            out = &g_libs[i]; /* another thread was first */
    if (!out && g_nlibs < OZCRT_MAX_LIBRARIES) {
        g_libs[g_nlibs] = t;
        out = &g_libs[g_nlibs++];
    }
    pthread_mutex_unlock(&g_ties_lock);
    if (out)
        ozcrt_log(2, "ozcrt: a second cuBLAS, for the handles its callers create: %s", path);
    else
        ozcrt_error("ozcrt: more than %d cuBLAS libraries in one process: handles of %s go to %s",
                    OZCRT_MAX_LIBRARIES, path, g_real.path);
    return out;
}

const ozcrt_real_table *ozcrt_real_for_caller(const void *ret_addr)
{
    const ozcrt_real_table *def = ozcrt_real();
    if (g_real.how && strcmp(g_real.how, "OZCRT_CUBLAS_LIBRARY") == 0)
        return def; /* authoritative */
    int is_cublas;
    void *create = ozcrt_caller_symbol(ret_addr, "cublasCreate_v2", &is_cublas); /* NULL: the main program's
                                                                                   scope, which RTLD_NEXT found */
    Dl_info ci, self;
    if (!create || create == (void *)def->cublasCreate_v2 || !dladdr(create, &ci) || !ci.dli_fname ||
        !dladdr((void *)ozcrt_real_for_caller, &self) || ci.dli_fbase == self.dli_fbase)
        return def; /* the default library, or the shim itself (a caller that links libozcrt.so) */
    const ozcrt_real_table *t = library_table(create, ci.dli_fname);
    return t ? t : def;
}

const ozcrt_real_table *ozcrt_real_for_library(const char *path)
{
    const ozcrt_real_table *def = ozcrt_real();
    if (g_real.how && strcmp(g_real.how, "OZCRT_CUBLAS_LIBRARY") == 0)
        return def; /* authoritative */
    void *h = path && path[0] ? dlopen(path, RTLD_LAZY | RTLD_NOLOAD) : NULL;
    void *create = h ? dlsym(h, "cublasCreate_v2") : NULL;
    if (h)
        dlclose(h);
    if (!create) {
        ozcrt_error("ozcrt: the cuBLAS %s looked up with dlsym is not loaded or has no cublasCreate_v2; its "
                    "handles go to %s",
                    path ? path : "?", g_real.path[0] ? g_real.path : "the default cuBLAS");
        return def;
    }
    if (create == (void *)def->cublasCreate_v2)
        return def;
    const ozcrt_real_table *t = library_table(create, path);
    return t ? t : def;
}

void ozcrt_real_remember(cublasHandle_t handle, const ozcrt_real_table *table)
{
    if (!handle || !table || table == &g_real)
        return;
    pthread_mutex_lock(&g_ties_lock);
    size_t n = atomic_load(&g_nties);
    size_t i = 0;
    while (i < n && g_ties[i].handle != handle)
        i++;
    if (i == n && n == g_nties_cap) {
        size_t cap = g_nties_cap ? 2 * g_nties_cap : 16;
        handle_tie *grown = realloc(g_ties, cap * sizeof *grown);
        if (!grown) {
            pthread_mutex_unlock(&g_ties_lock);
            ozcrt_error("ozcrt: out of memory: calls on handle %p go to %s", (void *)handle, g_real.path);
            return;
        }
        g_ties = grown;
        g_nties_cap = cap;
    }
    g_ties[i] = (handle_tie){handle, table};
    if (i == n)
        atomic_store(&g_nties, n + 1);
    pthread_mutex_unlock(&g_ties_lock);
}

static const ozcrt_real_table *lookup(cublasHandle_t handle, int drop)
{
    if (!handle || atomic_load(&g_nties) == 0)
        return ozcrt_real();
    const ozcrt_real_table *t = NULL;
    pthread_mutex_lock(&g_ties_lock);
    size_t n = atomic_load(&g_nties);
    for (size_t i = 0; i < n && !t; i++)
        if (g_ties[i].handle == handle) {
            t = g_ties[i].table;
            if (drop) {
                g_ties[i] = g_ties[n - 1];
                atomic_store(&g_nties, n - 1);
            }
        }
    pthread_mutex_unlock(&g_ties_lock);
    return t ? t : ozcrt_real();
}

const ozcrt_real_table *ozcrt_real_for(cublasHandle_t handle)
{
    return lookup(handle, 0);
}

const ozcrt_real_table *ozcrt_real_forget(cublasHandle_t handle)
{
    return lookup(handle, 1);
}

cublasStatus_t ozcrt_real_missing(const char *name)
{
    pthread_mutex_t *const lock = &g_missing_lock;
    static char reported[OZCRT_EP_COUNT + 8][48];
    static int nreported;
    int first = 1;
    pthread_mutex_lock(lock);
    for (int i = 0; i < nreported; i++)
        if (strcmp(reported[i], name) == 0)
            first = 0;
    if (first && nreported < (int)(sizeof reported / sizeof reported[0]))
        snprintf(reported[nreported++], sizeof reported[0], "%s", name);
    pthread_mutex_unlock(lock);
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
