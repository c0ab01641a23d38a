/* tests/unit/test_oz2_res_grid.c: the ozaki2 residue kernel's blocks (kernels/oz2_res_grid.h): every (row block, K tile) taken once, for grids with every K group and for grids capped below the group count, and the order that keeps the blocks in flight on adjacent tiles of one row block. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/oz2_res_grid.h"

/* The kernel's walk: block (bx, by) takes K groups kg_first, kg_first +
 * kg_step, ... below kgroups; group kg the tiles kg + j kgroups, j < tiles,
 * below ktiles. Counts every (row block, tile) taken. */
static void walk(uint32_t gx, uint32_t gy, int ktiles, int tiles, int *count)
{
    const int kgroups = oz2_res_kgroups(ktiles, tiles);
    for (uint32_t by = 0; by < gy; by++)
        for (uint32_t bx = 0; bx < gx; bx++) {
            int64_t rblk;
            int kg_first, kg_step;
            oz2_res_block_of(bx, by, gx, gy, kgroups, &rblk, &kg_first, &kg_step);
            assert_true(rblk >= 0 && rblk < (int64_t)gx);
            assert_true(kg_first >= 0 && kg_step >= 1);
            for (int kg = kg_first; kg < kgroups; kg += kg_step) {
                int kt = kg;
                for (int j = 0; j < tiles && kt < ktiles; j++, kt += kgroups)
                    count[rblk * ktiles + kt]++;
            }
        }
}

/* The launch's grid (kernels/oz2_residues.cu: y is the group count, capped
 * at `cap`, at least 1), every (row block, tile) once. */
static void test_cover(void **state)
{
    (void)state;
    static const int ktiles_set[] = {1, 2, 3, 4, 5, 7, 8, 63, 64, 65, 256, 257};
    static const int tiles_set[] = {1, 2, 4, 8};
    static const uint32_t rows_set[] = {1, 2, 5, 32};
    static const uint32_t caps[] = {65535, 5, 2, 1};
    for (size_t a = 0; a < sizeof ktiles_set / sizeof *ktiles_set; a++)
        for (size_t t = 0; t < sizeof tiles_set / sizeof *tiles_set; t++)
            for (size_t r = 0; r < sizeof rows_set / sizeof *rows_set; r++)
                for (size_t c = 0; c < sizeof caps / sizeof *caps; c++) {
                    const int ktiles = ktiles_set[a], tiles = tiles_set[t];
                    const uint32_t gx = rows_set[r];
                    const int kgroups = oz2_res_kgroups(ktiles, tiles);
                    const uint32_t gy = (uint32_t)kgroups < caps[c] ? (uint32_t)kgroups : caps[c];
                    int *count = calloc((size_t)gx * (size_t)ktiles, sizeof *count);
                    assert_non_null(count);
                    walk(gx, gy, ktiles, tiles, count);
                    for (size_t i = 0; i < (size_t)gx * (size_t)ktiles; i++)
                        if (count[i] != 1)
                            fail_msg("ktiles %d tiles %d rows %u cap %u: (row block %zu, tile %zu) taken %d times",
                                     ktiles, tiles, gx, caps[c], i / (size_t)ktiles, i % (size_t)ktiles, count[i]);
                    free(count);
                }
}

/* With every group in the grid, consecutive blocks (x fastest) are the
 * groups of one row block in order, one group a block (with the groups'
 * tiles kg + j kgroups, the blocks in flight write neighbouring pieces of
 * the same plane rows). */
static void test_order(void **state)
{
    (void)state;
    const int ktiles = 256, tiles = 4, kgroups = oz2_res_kgroups(ktiles, tiles);
    const uint32_t gx = 7, gy = (uint32_t)kgroups;
    for (uint32_t by = 0; by < gy; by++)
        for (uint32_t bx = 0; bx < gx; bx++) {
            int64_t rblk;
            int kg_first, kg_step;
            oz2_res_block_of(bx, by, gx, gy, kgroups, &rblk, &kg_first, &kg_step);
            const int64_t id = (int64_t)by * gx + bx;
            assert_int_equal(rblk, id / kgroups);
            assert_int_equal(kg_first, id % kgroups);
            assert_int_equal(kg_step, kgroups); /* one group a block */
        }
    /* a capped grid: block (x, y) is row block x */
    int64_t rblk;
    int kg_first, kg_step;
    oz2_res_block_of(3, 2, 5, 4, 9, &rblk, &kg_first, &kg_step);
    assert_int_equal(rblk, 3);
    assert_int_equal(kg_first, 2);
    assert_int_equal(kg_step, 4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cover),
        cmocka_unit_test(test_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
