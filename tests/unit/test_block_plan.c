/* tests/unit/test_block_plan.c: the engine path's workspace planner (kernels/block_plan.h): bounded bytes, valid blocks and slabs, the least-cost choice, and plans that reproduce from their own bytes. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdio.h>

#include "kernels/block_plan.h"
#include "oz_test_util.h"

/* A model of the engine's scratch (kernels/sm90_engine.cu,
 * oz_engine_p22_scratch_bytes of oz_engine_p22_tiles, as of commit
 * 261d523): 256 x 128 logical tiles (2 logical rows per real row), one CTA
 * per tile up to 160, 262144 bytes each. The planner only needs it to grow
 * with the tiles; the printed bytes are those of that engine. */
static int64_t model_scratch(int64_t mpad, int64_t npad, int64_t group)
{
    int64_t tiles = ((2 * mpad + 255) / 256) * ((2 * npad + 127) / 128) * group;
    return (tiles < 160 ? tiles : 160) * 262144;
}

/* Which Phase 22 call the tests plan: fused (0) or unfused (1); each test
 * that plans Phase 22 runs for both (setup functions below). */
static int g_unfused;

static oz_bp_call call_of(int64_t m, int64_t n, int64_t k, int64_t batch, int c_unread)
{
    return g_unfused ? oz_bp_call_p22_unfused(m, n, k, batch, c_unread)
                     : oz_bp_call_p22_fused(m, n, k, batch, c_unread, model_scratch);
}

static int setup_fused(void **state)
{
    (void)state;
    g_unfused = 0;
    return 0;
}

static int setup_unfused(void **state)
{
    (void)state;
    g_unfused = 1;
    return 0;
}

/* Everything at once, as the path did before plans: all of K, batch whole. */
static oz_bp_plan whole(const oz_bp_call *c)
{
    return oz_bp_plan_of(c, c->batch < OZ_BP_MAX_GROUP ? c->batch : OZ_BP_MAX_GROUP,
                          oz_bp_rup(c->m, OZ_PAD_ROWS_A), oz_bp_rup(c->n, OZ_PAD_ROWS_B), c->k);
}

static int same_plan(const oz_bp_plan *a, const oz_bp_plan *b)
{
    return a->mb == b->mb && a->nb == b->nb && a->ks == b->ks && a->group == b->group && a->bytes == b->bytes &&
           a->acc_in_c == b->acc_in_c && a->acc_in_ws == b->acc_in_ws;
}

/* What every plan must be: blocks that are whole engine tiles and cover C
 * with no empty block, slabs that start on chunk boundaries, groups only of
 * whole items, the accumulators where they may be, a layout in order. */
static void check_plan(const oz_bp_call *c, const oz_bp_plan *p)
{
    const int64_t Mpad = oz_bp_rup(c->m, OZ_PAD_ROWS_A), Npad = oz_bp_rup(c->n, OZ_PAD_ROWS_B);
    assert_int_equal(p->mb % OZ_PAD_ROWS_A, 0);
    assert_int_equal(p->nb % OZ_PAD_ROWS_B, 0);
    assert_true(p->mb >= OZ_PAD_ROWS_A && p->mb <= Mpad);
    assert_true(p->nb >= OZ_PAD_ROWS_B && p->nb <= Npad);
    const int64_t bm = oz_bp_count(c->m, p->mb), bn = oz_bp_count(c->n, p->nb), bk = oz_bp_count(c->k, p->ks);
    assert_true(bm * p->mb >= c->m && (bm - 1) * p->mb < c->m); /* covered, the last block not empty */
    assert_true(bn * p->nb >= c->n && (bn - 1) * p->nb < c->n);
    assert_true(p->ks == c->k || (p->ks % OZ_P22_KCHUNK == 0 && p->ks < c->k));
    assert_true(bk * p->ks >= c->k && (bk - 1) * p->ks < c->k);
    assert_true(p->group >= 1 && p->group <= c->batch && p->group <= OZ_BP_MAX_GROUP);
    if (p->group > 1)
        assert_true(bm == 1 && bn == 1 && bk == 1);
    const int carried = bk > 1 || (c->carry_k > 0 && c->k > c->carry_k); /* across slabs, or chunks (unfused) */
    assert_int_equal(p->acc_in_c, carried && c->acc_bytes && c->c_unread);
    assert_int_equal(p->acc_in_ws, carried && c->acc_bytes && !c->c_unread);
    /* residues of a block and a slab, scales of whole items, flags, accumulators, the block's output */
    const int64_t kpad = oz_bp_rup(p->ks, OZ_PAD_K);
    assert_true(p->off_res_b >= (int64_t)c->res_bytes * p->mb * kpad);
    assert_true(p->off_scale_a - p->off_res_b >= (int64_t)c->res_bytes * p->nb * kpad);
    assert_true(p->off_scale_b - p->off_scale_a >= 4 * Mpad);
    assert_true(p->off_special - p->off_scale_b >= 4 * Npad);
    assert_true(p->off_acc - p->off_special >= 8);
    assert_true(p->off_out - p->off_acc >= (p->acc_in_ws ? (int64_t)c->acc_bytes * p->mb * p->nb : 0));
    assert_true(p->slot_bytes - p->off_out >= (int64_t)c->out_bytes * p->mb * p->nb);
    assert_int_equal(p->off_res_b % 256, 0);
    assert_int_equal(p->off_acc % 256, 0);
    assert_int_equal(p->off_out % 256, 0);
    assert_int_equal(p->slot_bytes % 256, 0);
    assert_int_equal(p->off_scratch, p->slot_bytes * p->group);
    assert_true(p->bytes - p->off_scratch >= (c->scratch ? c->scratch(p->mb, p->nb, p->group) : 0));
}

/* The sizing contract of oz_gemm_workspace_min/full (oz2_gemm_...) for one call; returns the full plan. */
static oz_bp_plan check_plan_call(const oz_bp_call c)
{
    const oz_bp_plan mn = oz_bp_plan_min(&c), w = whole(&c);
    const int64_t B = oz_bp_budget(&c);
    const int64_t bound = B > mn.bytes ? B : mn.bytes;
    const oz_bp_plan full = oz_bp_plan_full(&c, B);
    check_plan(&c, &mn);
    check_plan(&c, &full);
    assert_true(full.bytes <= bound);
    assert_true(full.bytes <= w.bytes);
    assert_true(full.bytes >= mn.bytes);
    if (w.bytes <= bound) /* everything fits: one block, one slab, the batch whole */
        assert_true(same_plan(&full, &w));
    /* the least need runs, and nothing less does */
    oz_bp_plan p;
    assert_true(oz_bp_plan_make(&c, mn.bytes, &p));
    assert_true(p.bytes <= mn.bytes);
    assert_false(oz_bp_plan_make(&c, mn.bytes - 1, &p));
    /* a workspace sized from a plan gets that plan back */
    assert_true(oz_bp_plan_make(&c, full.bytes, &p));
    assert_true(same_plan(&p, &full));
    return full;
}

static oz_bp_plan check_call(int64_t m, int64_t n, int64_t k, int64_t batch, int c_unread)
{
    return check_plan_call(call_of(m, n, k, batch, c_unread));
}

static void test_budget(void **state)
{
    (void)state;
    oz_bp_call c = call_of(16384, 16384, 16384, 1, 0);
    assert_int_equal(oz_bp_budget(&c), INT64_C(3) << 29); /* 6 GiB of operands / 4 */
    c = call_of(8192, 8192, 8192, 1, 0);
    assert_int_equal(oz_bp_budget(&c), INT64_C(1) << 30); /* 1.5 GiB / 4 < 1 GiB */
    c = call_of(4096, 4096, 4096, 16, 0);
    assert_int_equal(oz_bp_budget(&c), INT64_C(3) << 29);
}

/* The sizes of the issue: the bytes they plan, printed for the record. */
static void test_square(void **state)
{
    (void)state;
    static const int64_t sizes[] = {1024, 4096, 8192, 16384, 32768};
    for (int i = 0; i < 5; i++)
        for (int cu = 0; cu <= 1; cu++) {
            const int64_t s = sizes[i];
            const oz_bp_plan p = check_call(s, s, s, 1, cu);
            const oz_bp_call c = call_of(s, s, s, 1, cu);
            print_message("%5" PRId64 "^3 beta%s0: %6.1f MiB (everything at once %7.1f MiB, B %6.1f MiB): "
                          "mb %" PRId64 " nb %" PRId64 " ks %" PRId64 ", acc %s\n",
                          s, cu ? "==" : "!=", p.bytes / 1048576.0, whole(&c).bytes / 1048576.0,
                          oz_bp_budget(&c) / 1048576.0, p.mb, p.nb, p.ks,
                          p.acc_in_c ? "in C" : p.acc_in_ws ? "in the workspace" : "none");
            if (s <= 4096) { /* fits within B: everything at once, as before */
                const oz_bp_plan w = whole(&c);
                assert_true(same_plan(&p, &w));
            }
        }
    /* 8192^3, beta == 0: C whole (unfused: four blocks, a chunk's planes are
     * 24 bytes an element), two slabs, the accumulators in C, within 1 GiB */
    oz_bp_plan p = check_call(8192, 8192, 8192, 1, 1);
    assert_int_equal(p.mb, g_unfused ? 4096 : 8192);
    assert_int_equal(p.nb, g_unfused ? 4096 : 8192);
    assert_int_equal(p.ks, 4096);
    assert_true(p.acc_in_c);
    assert_true(p.bytes <= INT64_C(1) << 30);
    /* 16384^3 within 1.5 GiB either way (residues of all K: 6 GiB) */
    assert_true(check_call(16384, 16384, 16384, 1, 0).bytes <= INT64_C(3) << 29);
    assert_true(check_call(16384, 16384, 16384, 1, 1).bytes <= INT64_C(3) << 29);
}

static void test_thin_odd_batched(void **state)
{
    (void)state;
    static const int64_t shapes[][4] = {
        {1, 1, 1, 1}, {1, 1, 300000, 1}, {16384, 64, 16384, 1}, {64, 16384, 16384, 1},
        {16384, 16384, 64, 1}, {100000, 128, 8192, 1}, {129, 65, 4097, 3}, {8191, 8193, 12289, 1},
        {300, 700, 3 * 4096 + 300, 5}, {1024, 1024, 1024, 1000}, {4096, 4096, 4096, 16},
        {8192, 8192, 8192, 4}, {64, 64, 64, 100000}, {40000, 40000, 1000, 1}, {2048, 2048, 500000, 1},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        for (int cu = 0; cu <= 1; cu++)
            check_call(shapes[i][0], shapes[i][1], shapes[i][2], shapes[i][3], cu);
    /* a batch of items that fit whole: groups of whole items as before, the
     * batch halved until a group fits (B: 1000 x 24 MiB of residues do not,
     * nor, unfused, 125 x 48 MiB of residues and planes) */
    const oz_bp_call c = call_of(1024, 1024, 1024, 1000, 0);
    oz_bp_plan p = oz_bp_plan_full(&c, oz_bp_budget(&c));
    assert_int_equal(p.group, g_unfused ? 63 : 125); /* unfused: 48 MiB an item with the planes */
    assert_true(p.mb == 1024 && p.nb == 1024 && p.ks == 1024);
    assert_true(oz_bp_plan_of(&c, 2 * p.group, 1024, 1024, 1024).bytes > oz_bp_budget(&c));
    assert_true(oz_bp_plan_make(&c, whole(&c).bytes, &p));
    assert_int_equal(p.group, 1000);
    assert_true(oz_bp_plan_make(&c, whole(&c).bytes - 1, &p));
    assert_int_equal(p.group, 500);
}

/* A plan of c for a random budget between its least need and everything at
 * once: it exists, is valid and fits; *budget gets the budget. */
static oz_bp_plan plan_in_random_budget(const oz_bp_call *c, int64_t *budget)
{
    const oz_bp_plan mn = oz_bp_plan_min(c), w = whole(c);
    *budget = mn.bytes + (int64_t)((double)(w.bytes - mn.bytes) * oz_rng_unit());
    oz_bp_plan p;
    assert_true(oz_bp_plan_make(c, *budget, &p));
    check_plan(c, &p);
    assert_true(p.bytes <= *budget);
    return p;
}

/* Every plan of small calls against all the alternatives: it fits, it is
 * valid, and when blocks of C are needed no fitting plan costs less. */
static void test_random_budgets(void **state)
{
    (void)state;
    int blocked = 0;
    for (int it = 0; it < 300; it++) {
        const int64_t m = oz_rng_range(1, 1500), n = oz_rng_range(1, 1500), k = oz_rng_range(1, 5 * 4096 + 100);
        const oz_bp_call c = call_of(m, n, k, oz_rng_range(1, 3), (int)oz_rng_range(0, 1));
        int64_t budget;
        const oz_bp_plan p = plan_in_random_budget(&c, &budget);
        oz_bp_plan again;
        assert_true(oz_bp_plan_make(&c, p.bytes, &again));
        assert_true(same_plan(&p, &again));
        if (p.mb == oz_bp_rup(m, OZ_PAD_ROWS_A) && p.nb == oz_bp_rup(n, OZ_PAD_ROWS_B))
            continue; /* C whole: (a) or (b), preferred to any blocks */
        /* (b) found nothing: no plan with C whole fits */
        for (int i = 0; oz_bp_slab(&c, i) > 0; i++)
            assert_true(oz_bp_plan_of(&c, 1, oz_bp_rup(m, OZ_PAD_ROWS_A), oz_bp_rup(n, OZ_PAD_ROWS_B),
                                       oz_bp_slab(&c, i)).bytes > budget);
        blocked++;
        const double cost = oz_bp_plan_cost(&c, &p);
        for (int64_t mb = OZ_PAD_ROWS_A; mb <= oz_bp_rup(m, OZ_PAD_ROWS_A); mb += OZ_PAD_ROWS_A)
            for (int64_t nb = OZ_PAD_ROWS_B; nb <= oz_bp_rup(n, OZ_PAD_ROWS_B); nb += OZ_PAD_ROWS_B)
                for (int64_t ks = OZ_P22_KCHUNK; ks < k + OZ_P22_KCHUNK; ks += OZ_P22_KCHUNK) {
                    const oz_bp_plan q = oz_bp_plan_of(&c, 1, mb, nb, ks < k ? ks : k);
                    if (q.bytes <= budget)
                        assert_true(oz_bp_plan_cost(&c, &q) >= cost);
                }
    }
    assert_true(blocked >= 30); /* the search itself was checked */
}

/* The ozaki2 calls (N residue bytes per element of A and B, N planes per
 * element of C, the slabs carried by the planes): the same contract for
 * the shapes above and every N, the bytes of the sizes printed,
 * and random budgets between the least and everything at once. */
static void test_ozaki2(void **state)
{
    (void)state;
    static const int64_t shapes[][4] = {
        {1, 1, 1, 1}, {1, 1, 300000, 1}, {16384, 64, 16384, 1}, {64, 16384, 16384, 1}, {16384, 16384, 64, 1},
        {129, 65, 4097, 3}, {8191, 8193, 12289, 1}, {1024, 1024, 1024, 1000}, {4096, 4096, 4096, 16},
        {4096, 4096, 4096, 1}, {8192, 8192, 8192, 1}, {16384, 16384, 16384, 1}, {2048, 2048, 500000, 1},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        for (int n = 2; n <= 20; n += 6) {
            const oz_bp_call c = oz_bp_call_oz2(shapes[i][0], shapes[i][1], shapes[i][2], shapes[i][3], n);
            const oz_bp_plan p = check_plan_call(c);
            assert_false(p.acc_in_c || p.acc_in_ws);
            if (n == 14 && shapes[i][0] == shapes[i][1] && shapes[i][0] == shapes[i][2] && shapes[i][0] >= 4096 &&
                shapes[i][3] == 1)
                print_message("ozaki2 N=%d %5" PRId64 "^3: %7.1f MiB (everything at once %7.1f MiB, B %6.1f MiB): "
                              "mb %" PRId64 " nb %" PRId64 " ks %" PRId64 "\n",
                              n, shapes[i][0], p.bytes / 1048576.0, whole(&c).bytes / 1048576.0,
                              oz_bp_budget(&c) / 1048576.0, p.mb, p.nb, p.ks);
        }
    for (int it = 0; it < 200; it++) {
        const int64_t m = oz_rng_range(1, 1500), n = oz_rng_range(1, 1500), k = oz_rng_range(1, 5 * 4096 + 100);
        const oz_bp_call c = oz_bp_call_oz2(m, n, k, oz_rng_range(1, 3), (int)oz_rng_range(2, 20));
        int64_t budget;
        (void)plan_in_random_budget(&c, &budget);
    }
}

/* ozaki2 keeps B's residues across row blocks when C's columns are whole and
 * K is one slab (b_once): a call whose whole plan does not fit then takes row
 * blocks over all of K (each operand's residues made once, no slab round
 * trips) over slabs of K with C whole. The complex 16384^3 call at 53 bits
 * (36 planes) under the default 16 GiB cap is the case that needed it: its
 * plan has nb = n, ks = k, and costs exactly one residue pass per operand. */
static void test_ozaki2_b_once(void **state)
{
    (void)state;
    const int64_t s = 16384, cap = (int64_t)16384 << 20;
    const oz_bp_call c = oz_bp_call_oz2(s, s, s, 1, 36);
    oz_bp_plan p;
    assert_true(oz_bp_plan_make(&c, cap, &p));
    assert_true(p.bytes <= cap);
    assert_true(p.mb < s);
    assert_int_equal(p.nb, s);
    assert_int_equal(p.ks, s);
    const double once = (8.0 + 36.0) * (double)s * (2.0 * (double)s);
    assert_true(oz_bp_plan_cost(&c, &p) == once);
    /* the same plan without b_once pays B's residues per row block */
    oz_bp_call c2 = c;
    c2.b_once = 0;
    assert_true(oz_bp_plan_cost(&c2, &p) > once);
}

/* Phase 22's fused/unfused rule (oz_bp_p22_unfused) on the H200's 132 SMs
 * with the engine's tiles (model_scratch's tiling): the path that was faster
 * under the shim for each shape of BENCHMARKS.md session 9, calls 3 and 4,
 * and the rule's edges. */
static int64_t model_tiles(int64_t m, int64_t n, int64_t batch)
{
    const int64_t mpad = (m + 127) / 128 * 128, npad = (n + 127) / 128 * 128;
    return ((2 * mpad + 255) / 256) * ((2 * npad + 127) / 128) * batch;
}

static void test_p22_path_rule(void **state)
{
    (void)state;
    static const struct {
        int64_t m, n, k;
        int unfused; /* the faster path measured */
    } measured[] = {
        {1024, 1024, 1024, 0}, {1280, 1280, 1280, 1}, {1536, 1536, 1536, 1}, {1792, 1792, 1792, 0},
        {2048, 2048, 2048, 0}, {2560, 2560, 2560, 1}, {2048, 2048, 512, 0},  {1024, 1024, 8192, 0},
        {1536, 1536, 4096, 1}, {4096, 4096, 1024, 0}, {8192, 1024, 2048, 0}, {768, 768, 768, 1},
        {1280, 1280, 4096, 1}, {2304, 2304, 2304, 0}, {2816, 2816, 2816, 1}, {3072, 1536, 2048, 1},
        {512, 4096, 4096, 0},  {3328, 3328, 3328, 1},
    };
    for (size_t i = 0; i < sizeof measured / sizeof measured[0]; i++)
        assert_int_equal(oz_bp_p22_unfused(model_tiles(measured[i].m, measured[i].n, 1), 132), measured[i].unfused);
    /* edges: unknown SM count; less than one wave; the threshold itself;
     * exactly full waves; the waves where the rule stops; no overflow on
     * huge counts */
    assert_int_equal(oz_bp_p22_unfused(5, 0), 0);
    assert_int_equal(oz_bp_p22_unfused(5, -1), 0);
    assert_int_equal(oz_bp_p22_unfused(1, 132), 1);
    assert_int_equal(oz_bp_p22_unfused(125, 132), 1); /* 94.7% */
    assert_int_equal(oz_bp_p22_unfused(126, 132), 0); /* 95.5% */
    assert_int_equal(oz_bp_p22_unfused(132, 132), 0);
    assert_int_equal(oz_bp_p22_unfused(133, 132), 1);
    assert_int_equal(oz_bp_p22_unfused(100, 100), 0);
    assert_int_equal(oz_bp_p22_unfused(11 * 132 + 1, 132), 1); /* 11 waves and a tile: 1453 of 1584 slots */
    assert_int_equal(oz_bp_p22_unfused(12 * 132 + 1, 132), 0); /* 12 waves and a tile: past the rule's range */
    assert_int_equal(oz_bp_p22_unfused(INT64_MAX / 4, 132), 0);
    /* the large shapes stay fused */
    assert_int_equal(oz_bp_p22_unfused(model_tiles(8192, 8192, 1), 132), 0);
    assert_int_equal(oz_bp_p22_unfused(model_tiles(16384, 16384, 1), 132), 0);
    assert_int_equal(oz_bp_p22_unfused(model_tiles(1024, 1024, 1000), 132), 0);
}

/* The residue mode's tile (oz_bp_res_tall): the measured sizes of session 18
 * (A's padded rows), then every padded row count up to 2^17: tall exactly
 * where the 192-row tiles' padding is at most 1% of the rows. */
static void test_res_tile_rule(void **state)
{
    (void)state;
    static const struct {
        int64_t rows;
        int tall;
    } measured[] = {{16384, 1}, {12288, 1}, {8192, 1}, {6144, 1}, {4096, 0}, {2048, 0}, {128, 0}, {384, 1}};
    for (size_t i = 0; i < sizeof measured / sizeof measured[0]; i++)
        assert_int_equal(oz_bp_res_tall(measured[i].rows), measured[i].tall);
    assert_int_equal(oz_bp_res_tall(0), 0);
    assert_int_equal(oz_bp_res_tall((int64_t)1 << 40), 1); /* 2^40 mod 192 = 64: no overflow */
    for (int64_t rows = OZ_PAD_ROWS_A; rows <= ((int64_t)1 << 17); rows += OZ_PAD_ROWS_A) {
        const int64_t tiles = (rows + OZ_BP_RES_TALL_ROWS - 1) / OZ_BP_RES_TALL_ROWS;
        const int64_t pad = tiles * OZ_BP_RES_TALL_ROWS - rows;
        assert_int_equal(oz_bp_res_tall(rows), 100 * pad <= rows);
    }
    assert_int_equal(OZ_BP_RES_TALL_ROWS % 64, 0); /* whole consumers of 64 rows */
}

int main(void)
{
    uint64_t seed = oz_rng_seed_from_env(20261130);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_budget, setup_fused),
        cmocka_unit_test_setup(test_square, setup_fused),
        cmocka_unit_test_setup(test_thin_odd_batched, setup_fused),
        cmocka_unit_test_setup(test_random_budgets, setup_fused),
        cmocka_unit_test_setup(test_budget, setup_unfused),
        cmocka_unit_test_setup(test_square, setup_unfused),
        cmocka_unit_test_setup(test_thin_odd_batched, setup_unfused),
        cmocka_unit_test_setup(test_random_budgets, setup_unfused),
        cmocka_unit_test(test_ozaki2),
        cmocka_unit_test(test_ozaki2_b_once),
        cmocka_unit_test(test_p22_path_rule),
        cmocka_unit_test(test_res_tile_rule),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    printf("test_block_plan: seed %" PRIu64 ", %d failed\n", seed, failed);
    return failed;
}
