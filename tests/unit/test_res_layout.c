/* tests/unit/test_res_layout.c: the engine's residue output layout (kernels/res_layout.h): a permutation of each group of 128 rows whose 32-bit words hold the rows one engine thread owns, and the rows the CRT kernel reads back. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "kernels/res_layout.h"

/* Every row of the first groups lands on a distinct byte of its own group,
 * and oz_res_row_at undoes oz_res_row_pos (both ways). */
static void test_permutation(void **state)
{
    (void)state;
    enum { GROUPS = 5, ROWS = GROUPS * OZ_RES_GROUP };
    static int seen[ROWS];
    memset(seen, 0, sizeof seen);
    for (int64_t i = 0; i < ROWS; i++) {
        const int64_t p = oz_res_row_pos(i);
        assert_true(p >= 0 && p < ROWS);
        assert_int_equal(p / OZ_RES_GROUP, i / OZ_RES_GROUP);
        assert_int_equal(seen[p], 0);
        seen[p] = 1;
        assert_int_equal(oz_res_row_at(p), i);
        assert_int_equal(oz_res_row_pos(oz_res_row_at(i)), i);
    }
    /* far rows: only the offset within the group moves */
    const int64_t big = (int64_t)1 << 40;
    for (int64_t i = 0; i < OZ_RES_GROUP; i++)
        assert_int_equal(oz_res_row_pos(big + i), big + oz_res_row_pos(i));
}

/* The engine's fragment (wgmma m64nNk32: warp v, lane 4 g + t; block h of
 * two m64 blocks): row 64 h + 16 v + 8 s + g of a consumer's 128 rows is
 * byte 2 h + s of word 8 v + g. Written from the fragment's definition,
 * not from the header's formula. */
static void test_engine_fragment(void **state)
{
    (void)state;
    for (int v = 0; v < 4; v++)
        for (int g = 0; g < 8; g++)
            for (int h = 0; h < 2; h++)
                for (int s = 0; s < 2; s++) {
                    const int row = 64 * h + 16 * v + 8 * s + g;
                    assert_int_equal(oz_res_row_pos(row), 4 * (8 * v + g) + 2 * h + s);
                    assert_int_equal(oz_res_row_at(4 * (8 * v + g) + 2 * h + s), row);
                }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_permutation),
        cmocka_unit_test(test_engine_fragment),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    printf("test_res_layout: %d failed\n", failed);
    return failed;
}
