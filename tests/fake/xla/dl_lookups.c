/* tests/fake/xla/dl_lookups.c: prints what a set of dlsym / dlvsym lookups return, made from the program and from a library loaded RTLD_LOCAL (xla_client.c), for check_dl_lookups.sh to compare without and with the shim preloaded.
 *
 * A line a lookup: "same LABEL: OBJECT+0xOFFSET dlerror" for the lookups
 * the shim must leave exactly as they are (other libraries, RTLD_DEFAULT,
 * RTLD_NEXT, versioned ones, unknown names on the cuBLAS handle; the
 * answer as object file base name and offset, ASLR aside, and what
 * dlerror() says after it), "taken LABEL: ..." for the intercepted names on
 * a cuBLAS / cuBLASLt handle (their fake's without the shim, libozcrt.so's
 * with it). argv: the client library, a fake libcublas, a fake libcublasLt.
 * OZ_DL_LATE=LIBOZCRT: the shim dlopened RTLD_GLOBAL first (not preloaded, as
 * Python's `import ozcrt`), and ozcrt_hook_dlsym() called once the client is
 * loaded: the same answers as under the preload. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void show(const char *kind, const char *label, void *p)
{
    const char *err = dlerror(); /* right after the lookup: what the caller would see */
    char why[512];
    snprintf(why, sizeof why, "%s", err ? err : "-");
    Dl_info info;
    if (!p)
        printf("%s %s: NULL %s\n", kind, label, why);
    else if (dladdr(p, &info) && info.dli_fname) {
        const char *base = strrchr(info.dli_fname, '/');
        printf("%s %s: %s+0x%lx %s\n", kind, label, base ? base + 1 : info.dli_fname,
               (unsigned long)((uintptr_t)p - (uintptr_t)info.dli_fbase), why);
    } else
        printf("%s %s: ?%p %s\n", kind, label, p, why);
}

typedef void *lookup_fn(const char *);
typedef void *vlookup_fn(const char *, const char *);

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: %s CLIENT LIBCUBLAS LIBCUBLASLT\n", argv[0]);
        return 2;
    }
    const char *late = getenv("OZ_DL_LATE");
    void *shim = late && late[0] ? dlopen(late, RTLD_NOW | RTLD_GLOBAL) : NULL;
    if (late && late[0] && !shim) {
        fprintf(stderr, "dlopen %s: %s\n", late, dlerror());
        return 2;
    }
    void *client = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!client) {
        fprintf(stderr, "dlopen %s: %s\n", argv[1], dlerror());
        return 2;
    }
    if (shim) {
        int (*hook)(void);
        *(void **)&hook = dlsym(shim, "ozcrt_hook_dlsym");
        if (!hook || hook() < 2) {
            fprintf(stderr, "%s: ozcrt_hook_dlsym failed\n", late);
            return 2;
        }
        (void)dlerror();
    }
    int (*open_fn)(const char *, const char *);
    *(void **)&open_fn = dlsym(client, "xla_client_open");
    lookup_fn *sym = (lookup_fn *)dlsym(client, "xla_client_sym");
    lookup_fn *lt_sym = (lookup_fn *)dlsym(client, "xla_client_lt_sym");
    vlookup_fn *vsym = (vlookup_fn *)dlsym(client, "xla_client_vsym");
    lookup_fn *def = (lookup_fn *)dlsym(client, "xla_client_default");
    lookup_fn *next = (lookup_fn *)dlsym(client, "xla_client_next");
    if (!open_fn || !sym || !lt_sym || !vsym || !def || !next || open_fn(argv[2], argv[3]) != 0) {
        fprintf(stderr, "%s: not an xla_client, or its libraries did not open\n", argv[1]);
        return 2;
    }
    /* from the client: its own scope holds libozcrt_dltest_dep.so, the global one does not */
    show("same", "client RTLD_DEFAULT dltest_dep_value", def("dltest_dep_value"));
    show("same", "client RTLD_NEXT dltest_dep_value", next("dltest_dep_value"));
    show("same", "client RTLD_DEFAULT printf", def("printf"));
    show("same", "client RTLD_NEXT printf", next("printf"));
    show("same", "client RTLD_NEXT cublasDgemm_v2", next("cublasDgemm_v2"));
    show("same", "client RTLD_NEXT no_such_symbol", next("no_such_symbol"));
    show("same", "client RTLD_DEFAULT no_such_symbol", def("no_such_symbol"));
    show("same", "client cublas cublasSetStream_v2", sym("cublasSetStream_v2"));
    show("same", "client cublas cublasGetPointerMode_v2", sym("cublasGetPointerMode_v2"));
    show("same", "client cublas fake_cublas_count", sym("fake_cublas_count"));
    show("same", "client cublas no_such_symbol", sym("no_such_symbol"));
    show("same", "client cublas cublasNoSuchGemm", sym("cublasNoSuchGemm"));
    show("same", "client cublasLt cublasLtCreate", lt_sym("cublasLtCreate"));
    show("same", "client cublasLt cublasLtMatmulDescCreate", lt_sym("cublasLtMatmulDescCreate"));
    show("same", "client cublasLt cublasDgemm_v2", lt_sym("cublasDgemm_v2"));
    show("same", "client cublas cublasSetStream_v2@libcublas.so.13", vsym("cublasSetStream_v2", "libcublas.so.13"));
    /* from the program */
    void *libm = dlopen("libm.so.6", RTLD_NOW | RTLD_LOCAL), *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
    void *blas = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
    show("same", "main RTLD_DEFAULT printf", dlsym(RTLD_DEFAULT, "printf"));
    show("same", "main RTLD_NEXT printf", dlsym(RTLD_NEXT, "printf"));
    show("same", "main RTLD_NEXT no_such_symbol", dlsym(RTLD_NEXT, "no_such_symbol"));
    show("same", "main RTLD_DEFAULT dltest_dep_value", dlsym(RTLD_DEFAULT, "dltest_dep_value"));
    show("same", "main RTLD_DEFAULT cublasSetStream_v2", dlsym(RTLD_DEFAULT, "cublasSetStream_v2"));
    show("same", "main libm cos", dlsym(libm, "cos"));
    show("same", "main libm no_such_symbol", dlsym(libm, "no_such_symbol"));
    show("same", "main libc dlsym", dlsym(libc, "dlsym"));
    show("same", "main libc dlvsym", dlsym(libc, "dlvsym"));
    show("same", "main libc memcpy@GLIBC_2.2.5", dlvsym(libc, "memcpy", "GLIBC_2.2.5"));
    show("same", "main libc memcpy@GLIBC_2.14", dlvsym(libc, "memcpy", "GLIBC_2.14"));
    show("same", "main libc memcpy@GLIBC_9.9", dlvsym(libc, "memcpy", "GLIBC_9.9"));
    show("same", "main libc dlsym@GLIBC_2.2.5", dlvsym(libc, "dlsym", "GLIBC_2.2.5"));
    show("same", "main RTLD_NEXT memcpy@GLIBC_2.14", dlvsym(RTLD_NEXT, "memcpy", "GLIBC_2.14"));
    show("same", "main RTLD_DEFAULT no_such_symbol@GLIBC_2.2.5", dlvsym(RTLD_DEFAULT, "no_such_symbol", "GLIBC_2.2.5"));
    show("same", "main cublas cublasSetStream_v2", dlsym(blas, "cublasSetStream_v2"));
    show("same", "main cublas fake_cublas_id", dlsym(blas, "fake_cublas_id"));
    /* the intercepted names on a cuBLAS / cuBLASLt handle */
    show("taken", "client cublas cublasCreate_v2", sym("cublasCreate_v2"));
    show("taken", "client cublas cublasDgemm_v2", sym("cublasDgemm_v2"));
    show("taken", "client cublas cublasGemmStridedBatchedEx", sym("cublasGemmStridedBatchedEx"));
    show("taken", "client cublas cublasDgemm", sym("cublasDgemm"));
    show("taken", "client cublas cublasLtMatmul", sym("cublasLtMatmul")); /* in libcublasLt, a dependency */
    show("taken", "client cublasLt cublasLtMatmul", lt_sym("cublasLtMatmul"));
    show("taken", "client cublasLt cublasLtDestroy", lt_sym("cublasLtDestroy"));
    show("taken", "client cublas cublasDgemm_v2@libcublas.so.13", vsym("cublasDgemm_v2", "libcublas.so.13"));
    show("taken", "main cublas cublasGemmEx", dlsym(blas, "cublasGemmEx"));
    return 0;
}
