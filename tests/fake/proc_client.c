/* tests/fake/proc_client.c: one process of check_per_process.sh: N cublasDgemm_v2 calls (argv[1]) on the fake cuBLAS, under the shim.
 *
 * Prints "pid P calls N" and exits 0; the shim (OZCRT_STATS=1, OZCRT_LOG=1)
 * writes this process's stats table and log lines to the files its
 * OZCRT_STATS_FILE and OZCRT_LOG_FILE name once %p and %h are expanded. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <cublas_v2.h>

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 1;
    static const double one = 1.0, half = 0.5;
    cublasHandle_t h;
    if (cublasCreate_v2(&h) != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "FAIL: cublasCreate_v2\n");
        return 2;
    }
    for (int i = 0; i < n; i++)
        (void)cublasDgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_N, 256, 256, 256, &one, (const double *)0x1000, 256,
                             (const double *)0x2000, 256, &half, (double *)0x3000, 256);
    (void)cublasDestroy_v2(h);
    printf("pid %ld calls %d\n", (long)getpid(), n);
    return 0;
}
