/* tests/tools/ref_gemm.c: the CPU references of ozcrt's products on matrices in files, for checks
 * that hold a GPU result to its reference bit for bit from another language (jax_check.py).
 *
 *   ref_gemm MODE M N K A.bin B.bin C.bin
 *
 * MODE: phase22 (reference/refgemm.h), real:BITS (reference/oz2gemm.h) or
 * complex:BITS (reference/oz2zgemm.h), BITS as OZCRT_BITS takes it: auto,
 * auto:B (B in 20..64) or a number of bits. C = op N (A) op N (B), alpha 1,
 * beta 0; A is M x K and B K x N, column-major with the least leading
 * dimensions, raw doubles (complex: re, im interleaved); C (M x N) is
 * written the same way. A row-major product C = A B of the same shapes is
 * C^T = B^T A^T: pass (N, M, K, B, A). Exit 0 when C is written; 2 on bad
 * arguments or files; 3 when the reference answers that the call is not
 * emulated (ozaki2 with no N reaching a fixed BITS). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crt/oz2_auto.h"
#include "reference/oz2gemm.h"
#include "reference/oz2zgemm.h"
#include "reference/refgemm.h"

static int usage(void)
{
    fprintf(stderr, "usage: ref_gemm phase22|real:BITS|complex:BITS M N K A.bin B.bin C.bin (BITS: auto, auto:B or N)\n");
    return 2;
}

/* BITS as OZCRT_BITS spells it, in the references' encoding (OZ2A_AUTO(B) for automatic precision); 0 if bad */
static int parse_bits(const char *s)
{
    char *end = NULL;
    if (strcmp(s, "auto") == 0)
        return OZ2A_AUTO(53);
    const int automatic = strncmp(s, "auto:", 5) == 0;
    errno = 0;
    const long b = strtol(automatic ? s + 5 : s, &end, 10);
    if (errno || !end || *end || end == (automatic ? s + 5 : s))
        return 0;
    if (automatic)
        return b >= 20 && b <= 64 ? OZ2A_AUTO((int)b) : 0;
    return b >= 1 && b <= 128 ? (int)b : 0;
}

static int parse_dim(const char *s, int64_t *v)
{
    char *end = NULL;
    errno = 0;
    const long long x = strtoll(s, &end, 10);
    if (errno || !end || *end || x < 1 || x > (1LL << 20))
        return 0;
    *v = x;
    return 1;
}

/* exactly `count` doubles from `path` into a new buffer */
static double *load(const char *path, size_t count)
{
    FILE *f = fopen(path, "rb");
    double *p = malloc(count * sizeof *p);
    int ok = f && p && fread(p, sizeof *p, count, f) == count && fgetc(f) == EOF;
    if (f)
        fclose(f);
    if (!ok) {
        fprintf(stderr, "ref_gemm: %s does not hold exactly %zu doubles\n", path, count);
        free(p);
        return NULL;
    }
    return p;
}

int main(int argc, char **argv)
{
    if (argc != 8)
        return usage();
    int64_t m, n, k;
    if (!parse_dim(argv[2], &m) || !parse_dim(argv[3], &n) || !parse_dim(argv[4], &k))
        return usage();
    const char *mode = argv[1];
    const int phase22 = strcmp(mode, "phase22") == 0;
    const int cplx = strncmp(mode, "complex:", 8) == 0;
    const int bits = phase22 ? 0 : cplx ? parse_bits(mode + 8) : strncmp(mode, "real:", 5) == 0 ? parse_bits(mode + 5) : 0;
    if (!phase22 && bits == 0)
        return usage();
    const size_t es = cplx ? 2 : 1;
    double *A = load(argv[5], (size_t)(m * k) * es), *B = load(argv[6], (size_t)(k * n) * es);
    double *C = calloc((size_t)(m * n) * es, sizeof *C);
    if (!A || !B || !C)
        return 2;
    int rc;
    if (phase22)
        rc = oz_ref_dgemm(OZ_OP_N, OZ_OP_N, m, n, k, 1.0, A, m, B, k, 0.0, C, m);
    else if (cplx)
        rc = oz2_ref_zgemm(OZ_OP_N, OZ_OP_N, m, n, k, (oz_cplx){1.0, 0.0}, A, m, B, k, (oz_cplx){0.0, 0.0}, C, m, bits);
    else
        rc = oz2_ref_dgemm(OZ_OP_N, OZ_OP_N, m, n, k, 1.0, A, m, B, k, 0.0, C, m, bits);
    if (rc == OZ2_REF_UNREACHABLE) {
        fprintf(stderr, "ref_gemm: no N reaches %s (the call is not emulated)\n", mode);
        return 3;
    }
    if (rc != OZ_REF_OK) {
        fprintf(stderr, "ref_gemm: the reference returned %d\n", rc);
        return 2;
    }
    FILE *f = fopen(argv[7], "wb");
    const size_t count = (size_t)(m * n) * es;
    if (!f || fwrite(C, sizeof *C, count, f) != count || fclose(f) != 0) {
        fprintf(stderr, "ref_gemm: cannot write %s\n", argv[7]);
        return 2;
    }
    free(A), free(B), free(C);
    return 0;
}
