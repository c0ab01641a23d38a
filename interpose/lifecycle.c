/* interpose/lifecycle.c: the one pthread_atfork registration of the shim, the owner process of the exit files, CUDA teardown. */
#include "lifecycle.h"

#include <stdio.h>
#include <sys/types.h>
#include <unistd.h>
#include <cuda_runtime_api.h>

#define OZCRT_MAX_FORK_MUTEXES 16
#define OZCRT_MAX_FORK_HOOKS 8

typedef struct fork_hook {
    void (*prepare)(void), (*parent)(void), (*child)(void);
} fork_hook;

/* Registrations come from constructors and once-initialisers; g_reg_lock
 * orders them. It is not itself taken around fork() (no registration is
 * made by a thread that forks), so the tables are read without it there. */
static pthread_mutex_t g_reg_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t *g_mutexes[OZCRT_MAX_FORK_MUTEXES];
static fork_hook g_hooks[OZCRT_MAX_FORK_HOOKS];
static int g_nmutexes, g_nhooks;
static pthread_once_t g_atfork_once = PTHREAD_ONCE_INIT;
static pid_t g_owner; /* the process that loaded the shim (first registration: a constructor) */

/* Hooks first: their locks (a table's entries) may be held while a
 * registered mutex is taken (a leaf: the handle table, the stats), never
 * the other way round. */
static void before_fork(void)
{
    for (int i = g_nhooks - 1; i >= 0; i--)
        if (g_hooks[i].prepare)
            g_hooks[i].prepare();
    for (int i = 0; i < g_nmutexes; i++)
        pthread_mutex_lock(g_mutexes[i]);
}

static void after_fork_parent(void)
{
    for (int i = g_nmutexes - 1; i >= 0; i--)
        pthread_mutex_unlock(g_mutexes[i]);
    for (int i = 0; i < g_nhooks; i++)
        if (g_hooks[i].parent)
            g_hooks[i].parent();
}

static void after_fork_child(void)
{
    for (int i = g_nmutexes - 1; i >= 0; i--)
        pthread_mutex_unlock(g_mutexes[i]); /* held by this thread: the one that forked */
    for (int i = 0; i < g_nhooks; i++)
        if (g_hooks[i].child)
            g_hooks[i].child();
}

static void init(void)
{
    g_owner = getpid();
    if (pthread_atfork(before_fork, after_fork_parent, after_fork_child) != 0)
        fprintf(stderr, "ozcrt: pthread_atfork failed: a child forked while the shim holds a lock may hang\n");
}

int ozcrt_lifecycle_register_mutex(pthread_mutex_t *m)
{
    pthread_once(&g_atfork_once, init);
    pthread_mutex_lock(&g_reg_lock);
    int ok = g_nmutexes < OZCRT_MAX_FORK_MUTEXES;
    if (ok)
        g_mutexes[g_nmutexes++] = m;
    pthread_mutex_unlock(&g_reg_lock);
    if (!ok)
        fprintf(stderr, "ozcrt: internal error: more than %d mutexes registered for fork()\n",
                OZCRT_MAX_FORK_MUTEXES);
    return ok ? 0 : -1;
}

int ozcrt_lifecycle_on_fork(void (*prepare)(void), void (*parent)(void), void (*child)(void))
{
    pthread_once(&g_atfork_once, init);
    pthread_mutex_lock(&g_reg_lock);
    int ok = g_nhooks < OZCRT_MAX_FORK_HOOKS;
    if (ok)
        g_hooks[g_nhooks++] = (fork_hook){prepare, parent, child};
    pthread_mutex_unlock(&g_reg_lock);
    if (!ok)
        fprintf(stderr, "ozcrt: internal error: more than %d fork hooks registered\n", OZCRT_MAX_FORK_HOOKS);
    return ok ? 0 : -1;
}

int ozcrt_lifecycle_is_fork_child(void)
{
    pthread_once(&g_atfork_once, init);
    return getpid() != g_owner;
}

int ozcrt_cuda_unloading(int cuda_error)
{
    return cuda_error == cudaErrorCudartUnloading;
}
