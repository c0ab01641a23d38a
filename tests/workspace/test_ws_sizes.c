/* tests/workspace/test_ws_sizes.c: the GPU paths' workspace sizes (kernels/ozcrt_gemm.h, kernels/oz2_gemm.h) against the cap the shim passes, on the CPU (host code only, no device).
 *
 * For real and complex calls, Phase 22 and ozaki2 at fixed bits and in
 * automatic precision, square and odd shapes from 1024 to 32768 and caps
 * from 1 to 64 GiB: the four sizes are ordered (whole >= capped >= least,
 * bounded <= capped), and the plan under the cap fits the cap whenever the
 * least does. The shim takes no size above its cap (workspace_table.c), so a
 * capped size past it would leave the call with the small bounded plan: the
 * automatic plan's estimate bytes once made complex auto at 16384^3 run so. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include "crt/oz2_auto.h"
#include "kernels/oz2_gemm.h"
#include "kernels/ozcrt_gemm.h"

static void check(const oz_gemm_desc *d, int bits, size_t cap, const char *what)
{
    size_t s[OZ_GEMM_WS_SIZES];
    if (bits == 0)
        oz_gemm_workspace_sizes(d, cap, s);
    else
        oz2_gemm_workspace_sizes(d, bits, cap, s);
    if (s[0] == 0)
        return; /* not served */
    if (!(s[0] >= s[1] && s[1] >= s[3] && s[2] <= s[1] && s[3] > 0))
        fail_msg("%s m %lld k %lld cap %zu GiB: sizes not ordered: %zu %zu %zu %zu", what, (long long)d->m,
                 (long long)d->k, cap >> 30, s[0], s[1], s[2], s[3]);
    if (s[3] <= cap && s[1] > cap)
        fail_msg("%s m %lld k %lld: the plan under a cap of %zu GiB takes %.2f GiB", what, (long long)d->m,
                 (long long)d->k, cap >> 30, (double)s[1] / (1 << 30));
}

static void test_sizes_within_cap(void **state)
{
    (void)state;
    const int64_t dims[][3] = {{1024, 1024, 1024}, {4096, 4096, 4096}, {8192, 8192, 8192}, {16384, 16384, 16384},
                               {12345, 6789, 23456}, {32768, 32768, 4096}, {2048, 2048, 100000}};
    const size_t caps[] = {(size_t)1 << 30, (size_t)4 << 30, (size_t)16 << 30, (size_t)64 << 30};
    const int bits[] = {0, 53, 34, OZ2A_AUTO(53), OZ2A_AUTO(40)};
    for (int cx = 0; cx < 2; cx++)
        for (size_t di = 0; di < sizeof dims / sizeof dims[0]; di++)
            for (size_t ci = 0; ci < sizeof caps / sizeof caps[0]; ci++)
                for (size_t bi = 0; bi < sizeof bits / sizeof bits[0]; bi++) {
                    if (cx && bits[bi] == 0)
                        continue; /* Phase 22 has no complex path */
                    static const double one[2] = {1.0, 0.0};
                    oz_gemm_desc d = {0};
                    d.alpha = one, d.beta = one;
                    d.m = dims[di][0], d.n = dims[di][1], d.k = dims[di][2];
                    d.lda = d.m, d.ldb = d.k, d.ldc = d.m, d.batch = 1;
                    d.elem = cx ? OZ_ELEM_COMPLEX : OZ_ELEM_REAL;
                    char what[64];
                    snprintf(what, sizeof what, "%s %s%d", cx ? "complex" : "real",
                             bits[bi] == 0 ? "phase22 " : oz2a_is_auto(bits[bi]) ? "auto:" : "bits ",
                             bits[bi] == 0 ? 0 : oz2a_is_auto(bits[bi]) ? oz2a_target(bits[bi]) : bits[bi]);
                    check(&d, bits[bi], caps[ci], what);
                }
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_sizes_within_cap)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
