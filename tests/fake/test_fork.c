/* tests/fake/test_fork.c: fork() under the shim: children that call a GEMM and exit leave the parent's stats file alone (or, with a %p in its name, write their own), and never hang.
 *
 * Run under LD_PRELOAD=libozcrt.so with OZCRT_STATS=1 and OZCRT_STATS_FILE
 * (check_fork.sh). The parent makes DGEMM calls while a second thread makes
 * them without pause (so the shim's locks are often held when fork() runs),
 * and forks children that each make one call and exit(0), under alarm(): a
 * child that inherited a held lock would hang and be killed. After the
 * children, the stats file must not exist (only the parent writes it, at its
 * exit; with a %p in OZCRT_STATS_FILE the name never exists as given).
 * Prints "parent pid P" and "parent calls N": check_fork.sh then finds N in
 * the table (and, per process, 1 in each child's). */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cublas_v2.h>

#define CHILDREN 50

static const double one = 1.0, half = 0.5;
static cublasHandle_t g_h;
static atomic_int g_stop;
static atomic_long g_calls;

static void dgemm(void)
{
    (void)cublasDgemm_v2(g_h, CUBLAS_OP_N, CUBLAS_OP_N, 256, 256, 256, &one, (const double *)0x1000, 256,
                         (const double *)0x2000, 256, &half, (double *)0x3000, 256);
}

static void *hammer(void *arg)
{
    (void)arg;
    while (!atomic_load(&g_stop)) {
        dgemm();
        atomic_fetch_add(&g_calls, 1);
    }
    return NULL;
}

int main(void)
{
    const char *stats = getenv("OZCRT_STATS_FILE");
    if (!stats || !getenv("LD_PRELOAD")) {
        fprintf(stderr, "FAIL: run under the shim with OZCRT_STATS_FILE set (check_fork.sh)\n");
        return 2;
    }
    if (cublasCreate_v2(&g_h) != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "FAIL: cublasCreate_v2\n");
        return 2;
    }
    for (int i = 0; i < 3; i++, atomic_fetch_add(&g_calls, 1))
        dgemm();
    pthread_t t;
    if (pthread_create(&t, NULL, hammer, NULL) != 0) {
        fprintf(stderr, "FAIL: pthread_create\n");
        return 2;
    }
    int bad = 0;
    for (int i = 0; i < CHILDREN; i++) {
        fflush(NULL);
        pid_t pid = fork();
        if (pid < 0) {
            perror("fork");
            bad++;
            break;
        }
        if (pid == 0) { /* the child: one call, then exit() runs the atexit handlers */
            alarm(10);
            dgemm();
            exit(0);
        }
        int st = 0;
        if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            fprintf(stderr, "FAIL: child %d %s %d\n", i, WIFSIGNALED(st) ? "killed by signal (hung?)" : "exited with",
                    WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
            bad++;
        }
    }
    atomic_store(&g_stop, 1);
    pthread_join(t, NULL);
    struct stat sb;
    if (stat(stats, &sb) == 0) {
        fprintf(stderr, "FAIL: %s was written before the parent's exit (by a child)\n", stats);
        bad++;
    }
    printf("parent pid %ld\nparent calls %ld\n", (long)getpid(), atomic_load(&g_calls));
    if (bad)
        fprintf(stderr, "FAIL: %d problems\n", bad);
    return bad ? 1 : 0;
}
