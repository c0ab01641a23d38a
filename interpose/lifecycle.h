/* interpose/lifecycle.h: the shim across fork() and exit: one pthread_atfork registration for every lock, the process that owns the exit files, CUDA's teardown at exit. */
#ifndef OZCRT_INTERPOSE_LIFECYCLE_H
#define OZCRT_INTERPOSE_LIFECYCLE_H

#include <pthread.h>

/* FORK. The shim registers one pthread_atfork handler (here); every lock of
 * the shim that a thread may hold while another thread calls fork() goes
 * through it, so that the child never inherits a lock held by a thread that
 * does not exist there (a deadlock at its next GEMM or at exit).
 *
 * ozcrt_lifecycle_register_mutex: a LEAF mutex that lives as long as the
 * process (a static one: the handle table, the stats, the API's values):
 * nothing else of the shim is locked while it is held. Before fork() the
 * registered mutexes are locked in the order of registration, after it they
 * are unlocked (parent and child). A static mutex registers from a
 * constructor of its file (`__attribute__((constructor))`, nothing else
 * there), so it is registered before any thread can hold it.
 *
 * ozcrt_lifecycle_on_fork: for outer locks and locks that come and go (a
 * table's per-entry locks, say workspace.c's, which may be held while a
 * leaf mutex is taken): `prepare` runs before fork() and takes them,
 * `parent` and `child` run after and release them (or, in the child,
 * re-initialise them). Prepare hooks run BEFORE the registered mutexes are
 * locked (in reverse order of registration), parent/child hooks after they
 * are unlocked (in order of registration). NULL members are skipped.
 * Both return 0, or -1 when the table is full (an error on stderr). */
int ozcrt_lifecycle_register_mutex(pthread_mutex_t *m);
int ozcrt_lifecycle_on_fork(void (*prepare)(void), void (*parent)(void), void (*child)(void));

/* 1 in a process forked (without exec) from the one that loaded the shim,
 * which owns the exit files: at exit such a child writes no shadow report
 * and no stats table (they are the parent's files, written by the parent),
 * except a stats table of its own calls where OZCRT_STATS_FILE names a file
 * per process (%p: stats.c, ozcrt_policy_own_stats_file). Its log lines are
 * appended to the log as usual. A program started by fork + exec loads the
 * shim anew and owns its own files. */
int ozcrt_lifecycle_is_fork_child(void);

/* EXIT. 1 for the CUDA error that means the runtime is being torn down
 * (cudaErrorCudartUnloading: a cublasDestroy_v2 run from a program's atexit
 * handler or static destructor after the runtime's own). A free that meets
 * it has nothing left to free (the runtime releases everything) and must
 * say nothing. */
int ozcrt_cuda_unloading(int cuda_error);

#endif
