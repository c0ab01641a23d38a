/* tests/unit/test_p22_crt.c: kernels/p22_layout.h's oz_p22_crt_word (the unfused Phase 22 CRT of one K chunk, as kernels/p22_crt.cu runs it) against a per-element model: each element's residues read where res_layout.h and oz_p22g_row put them, X by oz_p22g_centered, the passes added in phase22.md's order. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "crt/moduli.h"
#include "kernels/p22_layout.h"
#include "oz_test_util.h"

#define OZ_T_M_(q, m, f, mu) (m),
static const uint32_t moduli[OZ_P22G_NMODULI] = {OZ_P22G_MODULI(OZ_T_M_)};
#define OZ_T_F_(q, m, f, mu) (f),
static const uint64_t basis[OZ_P22G_NMODULI] = {OZ_P22G_MODULI(OZ_T_F_)};

/* Element (i, j)'s chunk in the model: per pass, its own byte of each plane. */
static double model(const uint8_t *res, int64_t res_rows, int64_t plane, int64_t i, int64_t j, double d)
{
    for (int p = 0; p < OZ_P22_NPASSES; p++) {
        const int64_t pos = oz_res_pos(oz_p22g_row(i, p >> 1), oz_p22g_row(j, p & 1), res_rows);
        uint64_t S = 0;
        for (int q = 0; q < OZ_P22G_NMODULI; q++)
            S += (uint64_t)res[q * plane + pos] * basis[q];
        const double scale = p == 0 ? 0x1p-34 : p == 3 ? 0x1p-68 : 0x1p-51;
        d = d + oz_p22g_centered(S) * scale;
    }
    return d;
}

/* rows x cols real elements (multiples of 64 and of 2: a block's padded
 * sizes), planes of 2 rows x 2 cols logical rows and columns; random
 * residues in [0, m_q) (or the extremes), random starting accumulators. */
static void check_block(int64_t rows, int64_t cols, int kind)
{
    const int64_t res_rows = 2 * rows, res_cols = 2 * cols, plane = res_rows * res_cols;
    uint8_t *res = malloc((size_t)(plane * OZ_P22G_NMODULI));
    assert_non_null(res);
    for (int q = 0; q < OZ_P22G_NMODULI; q++)
        for (int64_t x = 0; x < plane; x++)
            res[q * plane + x] = (uint8_t)(kind == 0 ? oz_rng_u64() % moduli[q] : kind == 1 ? moduli[q] - 1 : 0);
    int64_t checked = 0;
    for (int64_t w = 0; w < rows / 2; w++) { /* every word of a column pair: what the kernel's threads cover */
        const int64_t r0 = oz_res_word_row(w);
        assert_true(r0 + 8 < rows && (r0 & 8) == 0);
        for (int64_t j0 = 0; j0 < cols; j0 += 2) {
            double d[4], want[4];
            for (int e = 0; e < 4; e++)
                d[e] = kind == 2 ? 0.0 : (double)(int64_t)(oz_rng_u64() >> 20) * 0x1p-30;
            for (int e = 0; e < 4; e++)
                want[e] = model(res, res_rows, plane, r0 + 8 * (e & 1), j0 + (e >> 1), d[e]);
            oz_p22_crt_word(res, res_rows, plane, r0, j0, d);
            for (int e = 0; e < 4; e++)
                if (memcmp(&d[e], &want[e], sizeof d[e]) != 0)
                    fail_msg("rows %lld cols %lld kind %d: element (%lld, %lld): %.17g, want %.17g", (long long)rows,
                             (long long)cols, kind, (long long)(r0 + 8 * (e & 1)), (long long)(j0 + (e >> 1)), d[e],
                             want[e]);
            checked += 4;
        }
    }
    assert_int_equal(checked, rows * cols); /* the words cover every element once */
    free(res);
}

static void test_word_crt(void **state)
{
    (void)state;
    check_block(64, 2, 0);
    check_block(128, 64, 0);
    check_block(192, 130, 0); /* 3 groups of 64 rows, an odd number of column pairs */
    check_block(128, 128, 1); /* the largest residues: X at the top of the range */
    check_block(64, 64, 2);   /* zeros: X = 0, d stays 0 */
}

int main(void)
{
    const uint64_t seed = oz_rng_seed_from_env(UINT64_C(0x7022c47));
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_word_crt)};
    return OZ_TEST_RUN("p22_crt", "p22_crt", tests, seed);
}
