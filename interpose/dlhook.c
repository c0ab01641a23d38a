/* interpose/dlhook.c: the shim's dlsym and dlvsym: a lookup of an intercepted cuBLAS / cuBLASLt name on a handle of that library gets the shim's function; every other lookup is the real one, as if the shim were not there.
 *
 * XLA (JAX) dlopens libcublas and libcublasLt itself and takes every
 * function with dlsym(its_handle, "cublas..."): a lookup in that library's
 * own scope, which symbol interposition (LD_PRELOAD) never enters. So the
 * preload defines dlsym and dlvsym (x86_64), as two assembler trampolines
 * that ask ozcrt_dl_route what to do, then either return its answer or
 * JUMP (not call) into the real function with the caller's registers and
 * return address untouched: glibc reads the caller from the return address
 * (RTLD_NEXT searches after the caller's object, RTLD_DEFAULT in the
 * caller's scope, which for a library loaded RTLD_LOCAL includes its own
 * group), so a lookup passed through gets exactly what it would get
 * without the shim, dlerror() included.
 *
 * Taken only when all hold (otherwise passed through):
 *  - the handle is not RTLD_DEFAULT or RTLD_NEXT, and the name is one of
 *    OZCRT_INTERCEPTED (a string compare; nothing else is looked at first);
 *  - the caller is not the shim (real.c, lt.c and the static CUDA runtime
 *    take their real functions with dlsym) nor cuBLAS / cuBLASLt itself;
 *  - the real lookup on that handle finds the name (a lookup on a handle
 *    does not depend on the caller, so it is made here; not found: passed
 *    through, so that the caller's own lookup sets dlerror);
 *  - the handle's object (dlinfo RTLD_DI_LINKMAP) is a libcublas.so* or
 *    libcublasLt.so* (by file name, not the shim), and the definition found
 *    is in such an object, of the name's family (cublasLt* names in
 *    libcublasLt, the others in libcublas).
 * Then the caller gets ozcrt_dl_cublas_function / ozcrt_dl_lt_function
 * (dlhook.h): the shim's function, whose calls go to THAT library (its
 * handles are tied to it). OZCRT_DLSYM=0 passes every lookup through.
 *
 * The real dlsym and dlvsym cannot be found by name from here (the shim's
 * own calls reach its own definitions): they are read from the dynamic
 * symbol table of the next object after the shim (in load order; before it
 * when the shim was dlopen'ed) that defines both, libc.so.6 from glibc 2.34
 * on (libdl.so.2 before), its default version. Nothing here allocates or
 * takes a lock of the shim before a name matched; the cuBLAS calls
 * themselves are untouched (only lookups pass here). */
#include "dlhook.h"
#include "envparse.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"
#include "real.h"

typedef void *dlsym_fn(void *, const char *);
typedef void *dlvsym_fn(void *, const char *, const char *);

/* ---- the real dlsym and dlvsym, from the ELF dynamic symbol table ---- */

/* A dynamic-section address: relocated in place by the loader on most
 * machines, an offset from the load address on the others. */
static uintptr_t dyn_addr(uintptr_t base, uintptr_t v)
{
    return v < base ? base + v : v;
}

static uint32_t gnu_hash(const char *s)
{
    uint32_t h = 5381;
    for (; *s; s++)
        h = h * 33 + (unsigned char)*s;
    return h;
}

static uint32_t sysv_hash(const char *s)
{
    uint32_t h = 0;
    for (; *s; s++) {
        h = (h << 4) + (unsigned char)*s;
        const uint32_t g = h & 0xf0000000u;
        if (g)
            h ^= g >> 24;
        h &= ~g;
    }
    return h;
}

typedef struct elf_syms {
    uintptr_t base;
    const ElfW(Sym) *sym;
    const char *str;
    const ElfW(Half) *ver;
    void *found, *hidden; /* the default version's definition; a non-default one */
} elf_syms;

/* Symbol i, if it is a function definition named `name`. */
static void consider(elf_syms *e, uint32_t i, const char *name)
{
    const ElfW(Sym) *s = &e->sym[i];
    if (s->st_shndx == SHN_UNDEF || s->st_value == 0 || (s->st_info & 0xf) != STT_FUNC ||
        strcmp(e->str + s->st_name, name) != 0)
        return;
    const unsigned v = e->ver ? e->ver[i] : 1;
    if ((v & 0x7fff) == 0) /* VER_NDX_LOCAL */
        return;
    void *addr = (void *)(e->base + s->st_value);
    if (!(v & 0x8000) && !e->found)
        e->found = addr;
    else if (!e->hidden)
        e->hidden = addr;
}

/* The function `name` defined by the object of `info` (its default version
 * if it has several), NULL when none. */
static void *elf_lookup(const struct dl_phdr_info *info, const char *name)
{
    const ElfW(Dyn) *dyn = NULL;
    for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
            dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
    if (!dyn)
        return NULL;
    elf_syms e = {.base = info->dlpi_addr};
    const uint32_t *gnu = NULL, *sysv = NULL;
    for (const ElfW(Dyn) *d = dyn; d->d_tag != DT_NULL; d++) {
        const uintptr_t p = dyn_addr(e.base, d->d_un.d_ptr);
        switch (d->d_tag) {
        case DT_SYMTAB: e.sym = (const ElfW(Sym) *)p; break;
        case DT_STRTAB: e.str = (const char *)p; break;
        case DT_VERSYM: e.ver = (const ElfW(Half) *)p; break;
        case DT_GNU_HASH: gnu = (const uint32_t *)p; break;
        case DT_HASH: sysv = (const uint32_t *)p; break;
        default: break;
        }
    }
    if (!e.sym || !e.str)
        return NULL;
    if (gnu) {
        const uint32_t nbuckets = gnu[0], symoffset = gnu[1], bloom_size = gnu[2];
        if (nbuckets == 0)
            return NULL;
        const uint32_t *buckets = (const uint32_t *)((const ElfW(Addr) *)(gnu + 4) + bloom_size);
        const uint32_t *chain = buckets + nbuckets;
        const uint32_t h = gnu_hash(name);
        uint32_t i = buckets[h % nbuckets];
        if (i >= symoffset)
            for (;; i++) {
                const uint32_t ch = chain[i - symoffset];
                if ((ch | 1) == (h | 1))
                    consider(&e, i, name);
                if (ch & 1)
                    break;
            }
    } else if (sysv) {
        const uint32_t nbucket = sysv[0], nchain = sysv[1];
        if (nbucket == 0)
            return NULL;
        const uint32_t *bucket = sysv + 2, *chain = bucket + nbucket;
        for (uint32_t i = bucket[sysv_hash(name) % nbucket], n = 0; i != 0 && i < nchain && n < nchain;
             i = chain[i], n++)
            consider(&e, i, name);
    } else {
        return NULL;
    }
    return e.found ? e.found : e.hidden;
}

typedef struct next_find {
    uintptr_t self; /* an address inside the shim */
    int seen_self;
    void *after[2], *before[2]; /* dlsym, dlvsym */
} next_find;

static int contains(const struct dl_phdr_info *info, uintptr_t addr)
{
    for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *p = &info->dlpi_phdr[i];
        const uintptr_t lo = info->dlpi_addr + p->p_vaddr;
        if (p->p_type == PT_LOAD && addr >= lo && addr < lo + p->p_memsz)
            return 1;
    }
    return 0;
}

static int find_next_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    next_find *f = data;
    if (contains(info, f->self)) {
        f->seen_self = 1;
        return 0;
    }
    void **into = f->seen_self ? f->after : f->before;
    if (into[0])
        return 0;
    void *s = elf_lookup(info, "dlsym"), *v = s ? elf_lookup(info, "dlvsym") : NULL;
    if (!s || !v)
        return 0;
    into[0] = s;
    into[1] = v;
    return f->seen_self; /* the first after the shim ends the walk */
}

typedef struct ozcrt_dl_answer {
    void *value; /* what dlsym returns, when next is NULL */
    void *next;  /* else the real function, entered with the caller's arguments */
} ozcrt_dl_answer;

/* Called by the trampolines below (hidden; the prototype for -Wmissing-prototypes). */
ozcrt_dl_answer ozcrt_dl_route(void *handle, const char *name, const char *version, const void *caller);

static _Atomic(dlsym_fn *) g_dlsym;
static _Atomic(dlvsym_fn *) g_dlvsym;
static atomic_int g_enabled = -1; /* OZCRT_DLSYM, read once: 1 on, 0 off */

/* The real functions, found once (a race finds the same ones twice). */
static int find_real(void)
{
    if (atomic_load_explicit(&g_dlsym, memory_order_acquire))
        return 1;
    next_find f = {.self = (uintptr_t)(void *)ozcrt_dl_route};
    dl_iterate_phdr(find_next_cb, &f);
    void **got = f.after[0] ? f.after : f.before;
    if (!got[0])
        return 0;
    atomic_store_explicit(&g_dlvsym, (dlvsym_fn *)got[1], memory_order_release);
    atomic_store_explicit(&g_dlsym, (dlsym_fn *)got[0], memory_order_release);
    return 1;
}

static int enabled(void)
{
    int on = atomic_load_explicit(&g_enabled, memory_order_relaxed);
    if (on >= 0)
        return on;
    const char *v = getenv("OZCRT_DLSYM");
    const int b = v && v[0] ? ozcrt_env_bool(v) : 1;
    on = b != 0;
    if (b < 0)
        fprintf(stderr, "ozcrt: warning: OZCRT_DLSYM=\"%s\" is not a boolean (" OZCRT_ENV_BOOL_WORDS
                        "); using the default, 1\n", v);
    atomic_store_explicit(&g_enabled, on, memory_order_relaxed);
    return on;
}

/* ---- which lookups are taken ---- */

enum { DL_OTHER, DL_CUBLAS, DL_LT };

static int family(const char *path)
{
    if (!path || !path[0])
        return DL_OTHER;
    if (ozcrt_basename_is(path, "libcublasLt.so"))
        return DL_LT;
    return ozcrt_basename_is(path, "libcublas.so") ? DL_CUBLAS : DL_OTHER;
}

static int entry_by_name(const char *name)
{
    static const char *const names[] = {
#define OZCRT_X_NAME(n) #n,
        OZCRT_INTERCEPTED(OZCRT_X_NAME)
#undef OZCRT_X_NAME
    };
    if (strncmp(name, "cublas", 6) != 0)
        return -1;
    for (int i = 0; i < (int)(sizeof names / sizeof names[0]); i++)
        if (strcmp(name + 6, names[i] + 6) == 0)
            return i;
    return -1;
}

static struct link_map *object_of(const void *addr, Dl_info *info)
{
    struct link_map *lm = NULL;
    if (!addr || !dladdr1(addr, info, (void **)&lm, RTLD_DL_LINKMAP))
        return NULL;
    return lm;
}

ozcrt_dl_answer ozcrt_dl_route(void *handle, const char *name, const char *version, const void *caller)
{
    if (!find_real()) {
        static atomic_int said;
        if (!atomic_exchange(&said, 1))
            fprintf(stderr, "ozcrt: no real dlsym/dlvsym found after libozcrt.so; %s(%s) returns NULL\n",
                    version ? "dlvsym" : "dlsym", name ? name : "(null)");
        return (ozcrt_dl_answer){NULL, NULL};
    }
    dlsym_fn *real_dlsym = atomic_load_explicit(&g_dlsym, memory_order_acquire);
    dlvsym_fn *real_dlvsym = atomic_load_explicit(&g_dlvsym, memory_order_acquire);
    const ozcrt_dl_answer pass = {NULL, version ? (void *)real_dlvsym : (void *)real_dlsym};
    if (handle == RTLD_DEFAULT || handle == RTLD_NEXT || !name)
        return pass;
    const int ep = entry_by_name(name);
    if (ep < 0 || !enabled())
        return pass;
    Dl_info ci, si, di;
    struct link_map *self = object_of((const void *)ozcrt_dl_route, &si);
    struct link_map *from = object_of(caller, &ci);
    if (from == self || (from && family(from->l_name) != DL_OTHER))
        return pass; /* the shim's own lookups; cuBLAS's */
    void *sym = version ? real_dlvsym(handle, name, version) : real_dlsym(handle, name);
    if (!sym)
        return pass; /* asked again, from the caller: its dlerror */
    const ozcrt_dl_answer real = {sym, NULL};
    struct link_map *lib = NULL;
    if (dlinfo(handle, RTLD_DI_LINKMAP, &lib) != 0 || !lib || lib == self || family(lib->l_name) == DL_OTHER)
        return real;
    struct link_map *def = object_of(sym, &di);
    const int lt = ep == OZCRT_EP_cublasLtMatmul || ep == OZCRT_EP_cublasLtDestroy;
    if (!def || def == self || family(def->l_name) != (lt ? DL_LT : DL_CUBLAS))
        return real;
    void *mine = lt ? ozcrt_dl_lt_function((ozcrt_entry)ep, (uintptr_t)di.dli_fbase, def->l_name)
                    : ozcrt_dl_cublas_function((ozcrt_entry)ep, (uintptr_t)di.dli_fbase, def->l_name);
    if (!mine) {
        static atomic_int said;
        if (!atomic_exchange(&said, 1))
            ozcrt_error("ozcrt: more than %d cuBLAS (or cuBLASLt) libraries looked up with dlsym: %s keeps its "
                        "own %s",
                        OZCRT_DL_SLOTS, def->l_name, name);
        return real;
    }
    ozcrt_log(2, "ozcrt: %s(%s, %s) from %s: the shim's", version ? "dlvsym" : "dlsym", def->l_name, name,
              from && from->l_name[0] ? from->l_name : "the program");
    return (ozcrt_dl_answer){mine, NULL};
}

/* ---- the trampolines ---- */

#if defined(__x86_64__)
/* dlsym(handle, name) and dlvsym(handle, name, version): the arguments are
 * saved, ozcrt_dl_route(handle, name, version or NULL, return address)
 * answers in rax (value) and rdx (next); with next, the arguments are put
 * back and the real function is jumped to (r11: no argument register), so
 * that it returns to our caller and sees its return address. endbr64 for
 * IBT; the stack is 16-byte aligned at the call. */
__asm__(".text\n"
        ".globl dlsym\n"
        ".type dlsym, @function\n"
        ".globl ozcrt_dlsym_entry\n"
        ".hidden ozcrt_dlsym_entry\n"
        ".p2align 4\n"
        "dlsym:\n"
        "ozcrt_dlsym_entry:\n"
        ".cfi_startproc\n"
        "endbr64\n"
        "pushq %rdi\n"
        ".cfi_adjust_cfa_offset 8\n"
        "pushq %rsi\n"
        ".cfi_adjust_cfa_offset 8\n"
        "subq $8, %rsp\n"
        ".cfi_adjust_cfa_offset 8\n"
        "xorl %edx, %edx\n"
        "movq 24(%rsp), %rcx\n"
        "call ozcrt_dl_route\n"
        "addq $8, %rsp\n"
        ".cfi_adjust_cfa_offset -8\n"
        "popq %rsi\n"
        ".cfi_adjust_cfa_offset -8\n"
        "popq %rdi\n"
        ".cfi_adjust_cfa_offset -8\n"
        "movq %rdx, %r11\n"
        "testq %r11, %r11\n"
        "jz 1f\n"
        "jmpq *%r11\n"
        "1: ret\n"
        ".cfi_endproc\n"
        ".size dlsym, .-dlsym\n"
        "\n"
        ".globl dlvsym\n"
        ".type dlvsym, @function\n"
        ".globl ozcrt_dlvsym_entry\n"
        ".hidden ozcrt_dlvsym_entry\n"
        ".p2align 4\n"
        "dlvsym:\n"
        "ozcrt_dlvsym_entry:\n"
        ".cfi_startproc\n"
        "endbr64\n"
        "pushq %rdi\n"
        ".cfi_adjust_cfa_offset 8\n"
        "pushq %rsi\n"
        ".cfi_adjust_cfa_offset 8\n"
        "pushq %rdx\n"
        ".cfi_adjust_cfa_offset 8\n"
        "movq 24(%rsp), %rcx\n"
        "call ozcrt_dl_route\n"
        "movq %rdx, %r11\n"
        "popq %rdx\n"
        ".cfi_adjust_cfa_offset -8\n"
        "popq %rsi\n"
        ".cfi_adjust_cfa_offset -8\n"
        "popq %rdi\n"
        ".cfi_adjust_cfa_offset -8\n"
        "testq %r11, %r11\n"
        "jz 2f\n"
        "jmpq *%r11\n"
        "2: ret\n"
        ".cfi_endproc\n"
        ".size dlvsym, .-dlvsym\n");
#endif

/* ---- objects that do not see the preload: their GOT slots (ozcrt_dl_hook_objects) ----
 *
 * Loaded without LD_PRELOAD (`import ozcrt`: dlopen RTLD_GLOBAL), the shim's
 * dlsym comes after libc's in the global scope, so every object's calls to
 * dlsym and dlvsym go to libc's. ozcrt_dl_hook_objects points the GOT slots
 * that hold dlsym and dlvsym (R_X86_64_JUMP_SLOT and GLOB_DAT relocations of
 * those names) in every loaded object at the trampolines above (through
 * hidden labels: the names dlsym and dlvsym, seen from here, bind to libc's
 * when the shim is not preloaded). The trampolines keep the caller's return
 * address, so what every lookup returns is as under the preload. Not
 * patched: the shim, the dynamic linker, libc and libdl (the definers) and
 * cuBLAS / cuBLASLt (their lookups pass through anyway). A slot's page is
 * made writable for the store (a no-op where it is), then read-only again
 * where the loader had made it so (its RELRO pages).
 * Objects loaded later keep libc's until the next call. */
#if defined(__x86_64__)
extern char ozcrt_dlsym_entry[], ozcrt_dlvsym_entry[];

typedef struct got_walk {
    uintptr_t self;
    int slots, failed;
} got_walk;

static int system_object(const char *path)
{
    return ozcrt_basename_is(path, "ld-linux") || ozcrt_basename_is(path, "libc.so") ||
           ozcrt_basename_is(path, "libdl.so") || family(path) != DL_OTHER;
}

/* Whether addr lies in the pages the loader made read-only after relocating (PT_GNU_RELRO, rounded down). */
static int in_relro(const struct dl_phdr_info *info, uintptr_t addr, uintptr_t page)
{
    for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *p = &info->dlpi_phdr[i];
        if (p->p_type != PT_GNU_RELRO)
            continue;
        const uintptr_t lo = (info->dlpi_addr + p->p_vaddr) & ~(page - 1);
        const uintptr_t hi = (info->dlpi_addr + p->p_vaddr + p->p_memsz) & ~(page - 1);
        if (addr >= lo && addr < hi)
            return 1;
    }
    return 0;
}

static void store_slot(const struct dl_phdr_info *info, void **slot, void *target, got_walk *w)
{
    w->slots++;
    if (__atomic_load_n(slot, __ATOMIC_ACQUIRE) == target)
        return;
    const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), at = (uintptr_t)slot & ~(page - 1);
    /* writable first whatever the page was (a no-op where it is), so that a store never faults;
     * read-only again where the loader had made it so */
    if (mprotect((void *)at, page, PROT_READ | PROT_WRITE) != 0) {
        w->failed++;
        return;
    }
    __atomic_store_n(slot, target, __ATOMIC_RELEASE);
    if (in_relro(info, (uintptr_t)slot, page) && mprotect((void *)at, page, PROT_READ) != 0)
        w->failed++;
}

static void patch_relocs(const struct dl_phdr_info *info, const ElfW(Rela) *r, size_t bytes, const ElfW(Sym) *sym,
                         const char *str, got_walk *w)
{
    for (size_t i = 0; r && i < bytes / sizeof *r; i++) {
        const unsigned type = (unsigned)ELF64_R_TYPE(r[i].r_info);
        if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT)
            continue;
        const char *name = str + sym[ELF64_R_SYM(r[i].r_info)].st_name;
        void *target = strcmp(name, "dlsym") == 0 ? (void *)ozcrt_dlsym_entry
                       : strcmp(name, "dlvsym") == 0 ? (void *)ozcrt_dlvsym_entry
                                                     : NULL;
        if (target)
            store_slot(info, (void **)(info->dlpi_addr + r[i].r_offset), target, w);
    }
}

static int hook_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    got_walk *w = data;
    if (contains(info, w->self) || system_object(info->dlpi_name))
        return 0;
    const ElfW(Dyn) *dyn = NULL;
    for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
            dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
    if (!dyn)
        return 0;
    const ElfW(Sym) *sym = NULL;
    const char *str = NULL;
    const ElfW(Rela) *jmprel = NULL, *rela = NULL;
    size_t jmpsz = 0, relasz = 0;
    long pltrel = DT_RELA;
    for (const ElfW(Dyn) *d = dyn; d->d_tag != DT_NULL; d++) {
        const uintptr_t p = dyn_addr(info->dlpi_addr, d->d_un.d_ptr);
        switch (d->d_tag) {
        case DT_SYMTAB: sym = (const ElfW(Sym) *)p; break;
        case DT_STRTAB: str = (const char *)p; break;
        case DT_JMPREL: jmprel = (const ElfW(Rela) *)p; break;
        case DT_PLTRELSZ: jmpsz = d->d_un.d_val; break;
        case DT_PLTREL: pltrel = (long)d->d_un.d_val; break;
        case DT_RELA: rela = (const ElfW(Rela) *)p; break;
        case DT_RELASZ: relasz = d->d_un.d_val; break;
        default: break;
        }
    }
    if (!sym || !str || pltrel != DT_RELA)
        return 0;
    patch_relocs(info, jmprel, jmpsz, sym, str, w);
    patch_relocs(info, rela, relasz, sym, str, w);
    return 0;
}
#endif

int ozcrt_dl_hook_objects(void)
{
#if defined(__x86_64__)
    if (!find_real()) /* no glibc dlsym to pass lookups to: the slots stay as they are */
        return -1;
    got_walk w = {.self = (uintptr_t)(void *)ozcrt_dl_route};
    dl_iterate_phdr(hook_cb, &w);
    ozcrt_log(2, "ozcrt: dlsym/dlvsym of the loaded objects: %d GOT slots on the shim's hook, %d could not be written",
              w.slots - w.failed, w.failed);
    return w.failed ? -1 : w.slots;
#else
    return -1;
#endif
}
