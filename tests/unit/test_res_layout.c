/* tests/unit/test_res_layout.c: the engine's residue output layout (kernels/res_layout.h): a permutation of each plane whose 32-bit words hold two rows of two columns that one engine thread owns, and the rows the CRT kernel reads back. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "kernels/res_layout.h"

/* Every element of a few planes lands on a distinct byte of its plane, and
 * the word rows are the ones oz_res_pos gives (both ways). */
static void test_permutation(void **state)
{
    (void)state;
    static const int64_t shapes[][2] = {{16, 2}, {32, 6}, {128, 128}, {144, 10}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        const int64_t rows = shapes[s][0], cols = shapes[s][1];
        static int seen[144 * 128];
        memset(seen, 0, sizeof seen);
        for (int64_t j = 0; j < cols; j++)
            for (int64_t i = 0; i < rows; i++) {
                const int64_t p = oz_res_pos(i, j, rows);
                assert_true(p >= 0 && p < rows * cols);
                assert_int_equal(seen[p], 0);
                seen[p] = 1;
                /* the word's first row and the byte's place in it */
                const int64_t w = (p % (2 * rows)) / 4, e = p % 4;
                assert_int_equal(p / (2 * rows), j / 2);
                assert_int_equal(oz_res_word_row(w) + 8 * (e & 1), i);
                assert_int_equal(e >> 1, j & 1);
            }
    }
    /* far elements: the column pair's offset and the row block's move, nothing else */
    const int64_t big = (int64_t)1 << 36, rows = (int64_t)1 << 20;
    for (int64_t i = 0; i < 16; i++)
        for (int64_t j = 0; j < 2; j++)
            assert_int_equal(oz_res_pos(rows - 16 + i, big + j, rows),
                             (big / 2) * 2 * rows + 4 * 8 * ((rows - 16) / 16) + oz_res_pos(i, j, rows));
}

/* The engine's fragment (wgmma m64nNk32: warp v, lane 4 g + t; accumulator
 * 4 i + c + 2 s is row 16 v + g + 8 s, column 8 i + 2 t + c of an m64 block
 * starting at row R0, a multiple of 64): its four accumulators of each i are
 * the four bytes of one word, byte 2 c + s. Written from the fragment's
 * definition, not from the header's formula. */
static void test_engine_fragment(void **state)
{
    (void)state;
    const int64_t rows = 256;
    for (int64_t R0 = 0; R0 < rows; R0 += 64)
        for (int v = 0; v < 4; v++)
            for (int g = 0; g < 8; g++)
                for (int t = 0; t < 4; t++)
                    for (int i = 0; i < 32; i++) {
                        const int64_t J = (8 * i + 2 * t) / 2;
                        const int64_t word = J * 2 * rows + 4 * (8 * ((R0 + 16 * v) / 16) + g);
                        for (int c = 0; c < 2; c++)
                            for (int s = 0; s < 2; s++)
                                assert_int_equal(oz_res_pos(R0 + 16 * v + g + 8 * s, 8 * i + 2 * t + c, rows),
                                                 word + 2 * c + s);
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
