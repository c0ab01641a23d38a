/* tests/unit/test_fuzz_gen.c: the differential fuzzer's generator (tests/gpu/fuzz/fuzz_gen.h) on the CPU: a call is a function of (seed, index) alone (replay), every entry point and every kind of bad argument turns up, at least half the calls are valid, and the draws stay in their ranges. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "tests/gpu/fuzz/fuzz_gen.h"
#include "oz_test_util.h"

#define NCALLS 20000

static void test_replay(void **state)
{
    (void)state;
    for (uint64_t i = 0; i < 2000; i++) {
        fz_call a, b, c;
        memset(&a, 0, sizeof a);
        memset(&b, 0xff, sizeof b);
        fz_make(0x1234, i, &a);
        fz_make(0x1234, i, &b);
        fz_make(0x1235, i, &c);
        /* every field the same (the padding may differ: compare fields) */
        assert_int_equal(a.ep, b.ep);
        assert_int_equal(a.ta, b.ta);
        assert_int_equal(a.m, b.m);
        assert_int_equal(a.k, b.k);
        assert_int_equal(a.ldc, b.ldc);
        assert_int_equal(a.batch, b.batch);
        assert_int_equal(a.strideA, b.strideA);
        assert_int_equal(a.data_seed, b.data_seed);
        assert_true(memcmp(a.alpha, b.alpha, sizeof a.alpha) == 0 && memcmp(a.beta, b.beta, sizeof a.beta) == 0);
        assert_int_equal(a.index, i);
        (void)c;
    }
    /* another seed, another sequence */
    int differ = 0;
    for (uint64_t i = 0; i < 100; i++) {
        fz_call a, c;
        fz_make(0x1234, i, &a);
        fz_make(0x1235, i, &c);
        differ += a.ep != c.ep || a.m != c.m || a.data_seed != c.data_seed;
    }
    assert_true(differ > 90);
}

static void test_coverage(void **state)
{
    (void)state;
    int per_ep[FZ_EP_COUNT] = {0}, valid = 0, bad_op = 0, neg = 0, zero = 0, low_ld = 0, batch0 = 0, stride0 = 0;
    int nan_a = 0, inf_a = 0, nan_b = 0, alpha0 = 0, dev = 0, host = 0, mixed = 0, cplx_ex = 0, pedantic = 0;
    int dist[FZ_D_COUNT] = {0}, bad_algo = 0, tensor_algo = 0, streams[FZ_STREAMS] = {0};
    for (uint64_t i = 0; i < NCALLS; i++) {
        fz_call c;
        fz_make(0xfeed, i, &c);
        assert_true(c.ep >= 0 && c.ep < FZ_EP_COUNT);
        per_ep[c.ep]++;
        valid += fz_valid(&c);
        bad_op += c.ta < 0 || c.ta > 2 || c.tb < 0 || c.tb > 2;
        neg += c.m < 0 || c.n < 0 || c.k < 0;
        zero += c.m == 0 || c.n == 0 || c.k == 0;
        low_ld += c.lda < fz_max1(fz_rows_a(&c)) || c.ldb < fz_max1(fz_rows_b(&c)) || c.ldc < fz_max1(c.m);
        assert_true(c.m <= FZ_MAX_DIM && c.n <= FZ_MAX_DIM && c.k <= FZ_MAX_DIM);
        assert_true(c.batch >= 0 && c.batch <= FZ_MAX_BATCH);
        if (fz_ep_kind[c.ep] == 0)
            assert_int_equal(c.batch, 1);
        batch0 += c.batch == 0;
        stride0 += fz_ep_kind[c.ep] == 1 && (c.strideA == 0 || c.strideB == 0);
        assert_true(c.strideA >= 0 && c.strideB >= 0 && c.strideC >= c.ldc * fz_max1(c.n));
        nan_a += isnan(c.alpha[0]) || isnan(c.alpha[1]);
        inf_a += isinf(c.alpha[0]) || isinf(c.alpha[1]);
        nan_b += isnan(c.beta[0]) || isnan(c.beta[1]);
        alpha0 += c.alpha[0] == 0.0 && c.alpha[1] == 0.0;
        if (!c.complex_)
            assert_true(c.alpha[1] == 0.0 && c.beta[1] == 0.0);
        if (fz_ep_complex[c.ep] >= 0)
            assert_int_equal(c.complex_, fz_ep_complex[c.ep]);
        dev += c.device_scalars;
        host += !c.device_scalars;
        mixed += c.types == FZ_T_MIXED;
        cplx_ex += fz_ep_ex[c.ep] && c.types == FZ_T_COMPLEX;
        pedantic += c.pedantic;
        assert_true(c.dist >= 0 && c.dist < FZ_D_COUNT);
        dist[c.dist]++;
        if (fz_ep_ex[c.ep] && c.types == FZ_T_MIXED)
            assert_false(fz_valid(&c));
        if (!fz_ep_ex[c.ep])
            assert_int_equal(c.algo, -1);
        assert_true(c.stream >= 0 && c.stream < FZ_STREAMS);
        streams[c.stream]++;
        bad_algo += !fz_algo_known(c.algo);
        tensor_algo += c.algo >= 99;
        if (!fz_algo_known(c.algo))
            assert_false(fz_valid(&c));
    }
    for (int e = 0; e < FZ_EP_COUNT; e++)
        if (per_ep[e] < NCALLS / FZ_EP_COUNT / 2)
            fail_msg("%s drawn %d times in %d calls", fz_ep_name[e], per_ep[e], NCALLS);
    for (int d = 0; d < FZ_D_COUNT; d++)
        assert_true(dist[d] > NCALLS / FZ_D_COUNT / 2);
    print_message("fuzz_gen: %d of %d calls valid\n", valid, NCALLS);
    assert_true(valid >= NCALLS / 2 && valid < NCALLS - NCALLS / 20);
    assert_true(bad_op > 100 && neg > 100 && zero > 100 && low_ld > 100 && batch0 > 50 && stride0 > 50);
    assert_true(nan_a > 100 && inf_a > 100 && nan_b > 100 && alpha0 > 100 && dev > NCALLS / 3 && host > NCALLS / 3);
    assert_true(mixed > 50 && cplx_ex > 200 && pedantic > 50);
    assert_true(bad_algo > 50 && tensor_algo > 50);
    for (int i = 0; i < FZ_STREAMS; i++)
        assert_true(streams[i] > NCALLS / FZ_STREAMS / 2);
}

/* fz_valid is cuBLAS's rule set: one broken rule each makes a valid call invalid. */
static void test_valid_rules(void **state)
{
    (void)state;
    int checked = 0;
    for (uint64_t i = 0; checked < 500 && i < NCALLS; i++) {
        fz_call c;
        fz_make(0xbeef, i, &c);
        if (!fz_valid(&c) || c.m < 1 || c.n < 1 || c.k < 1 || fz_ep_kind[c.ep] == 3)
            continue;
        checked++;
        fz_call x = c;
        x.ta = 3;
        assert_false(fz_valid(&x));
        x = c;
        x.k = -1;
        assert_false(fz_valid(&x));
        x = c;
        x.lda = fz_max1(fz_min_lda(&c)) - 1;
        assert_false(fz_valid(&x));
        x = c;
        x.ldc = fz_max1(c.m) - 1;
        if (fz_ep_kind[c.ep] == 4)
            x.ldd = x.ldc; /* in place or not, too small either way */
        assert_false(fz_valid(&x));
        x = c;
        x.batch = -1;
        assert_false(fz_valid(&x));
    }
    assert_int_equal(checked, 500);
}

/* cuBLASLt calls: row order's leading dimensions, D's layout, in place with another ldd, the draws' mix. */
static void test_lt(void **state)
{
    (void)state;
    int n = 0, inplace = 0, rows = 0, bias = 0, cx = 0, valid = 0, checked = 0;
    for (uint64_t i = 0; i < NCALLS; i++) {
        fz_call c;
        fz_make(0x1717, i, &c);
        if (fz_ep_kind[c.ep] != 4) {
            assert_true(c.ldd == c.ldc && !c.in_place && !c.row_order && !c.bias);
            continue;
        }
        n++;
        inplace += c.in_place, rows += c.row_order, bias += c.bias, cx += c.types == FZ_T_COMPLEX;
        assert_true(c.m >= 1 && c.n >= 1 && c.k >= 1 && c.batch >= 1 && c.batch <= 2 && c.algo == -1);
        if (c.in_place)
            assert_int_equal(c.strideD, c.strideC);
        else
            assert_true(c.strideD >= c.ldd * c.n);
        assert_true(c.strideA >= c.lda * fz_span_a(&c) && c.strideB >= c.ldb * fz_span_b(&c));
        if (!fz_valid(&c))
            continue;
        valid++;
        checked++;
        fz_call x = c;
        x.ldd = x.ldc + 1;
        if (c.in_place)
            assert_false(fz_valid(&x)); /* in place: D's layout must be C's */
        x = c;
        x.ldd = c.m - 1;
        assert_false(fz_valid(&x));
        x = c;
        x.m = 0;
        assert_false(fz_valid(&x));
        if (c.row_order) { /* row order: lda counts columns */
            x = c;
            x.lda = fz_cols_a(&c) - 1;
            assert_false(fz_valid(&x));
        }
    }
    print_message("fuzz_gen: %d cuBLASLt calls, %d valid, %d in place, %d row order, %d BIAS, %d complex\n", n, valid,
                  inplace, rows, bias, cx);
    assert_true(n > 500 && valid > n / 2 && inplace > n / 3 && rows > n / 8 && bias > n / 10 && cx > n / 5 && checked > 200);
}

/* Grouped calls: valid only when every group is; each group's rules, a negative size or count. */
static void test_grouped(void **state)
{
    (void)state;
    int checked = 0, groups[FZ_MAX_GROUPS + 1] = {0}, bad_size = 0, items = 0;
    for (uint64_t i = 0; i < NCALLS; i++) {
        fz_call c;
        fz_make(0xabcd, i, &c);
        if (fz_ep_kind[c.ep] != 3) {
            assert_int_equal(c.groups, 0);
            continue;
        }
        assert_true(c.groups >= 0 && c.groups <= FZ_MAX_GROUPS);
        groups[c.groups]++;
        int64_t total = 0;
        for (int g = 0; g < c.groups; g++) {
            bad_size += c.grp[g].size < 0;
            total += c.grp[g].size > 0 ? c.grp[g].size : 0;
        }
        assert_int_equal(c.batch, total);
        assert_true(total <= FZ_MAX_BATCH);
        items += total > 0;
        if (c.groups > 0) /* group 0 is the call's own shape */
            assert_true(c.grp[0].m == c.m && c.grp[0].n == c.n && c.grp[0].lda == c.lda && c.grp[0].ta == c.ta);
        if (!fz_valid(&c) || c.groups < 2)
            continue;
        checked++;
        const int g = (int)(i % (uint64_t)c.groups);
        fz_call x = c;
        x.grp[g].tb = 7;
        assert_false(fz_valid(&x));
        x = c;
        x.grp[g].ldb = fz_max1(x.grp[g].tb == 0 ? c.k : x.grp[g].n) - 1;
        assert_false(fz_valid(&x));
        x = c;
        x.grp[g].ldc = fz_max1(x.grp[g].m) - 1;
        assert_false(fz_valid(&x));
        x = c;
        x.grp[g].size = -1;
        assert_false(fz_valid(&x));
        x = c;
        x.groups = -1;
        assert_false(fz_valid(&x));
    }
    print_message("fuzz_gen: grouped calls with 0..3 groups: %d %d %d %d; %d checked\n", groups[0], groups[1],
                  groups[2], groups[3], checked);
    assert_true(checked > 100 && bad_size > 10 && items > 200);
    for (int g = 0; g <= FZ_MAX_GROUPS; g++)
        assert_true(groups[g] > 10);
}

int main(void)
{
    uint64_t seed = oz_rng_seed_from_env(UINT64_C(0xf022));
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_replay),
        cmocka_unit_test(test_coverage),
        cmocka_unit_test(test_valid_rules),
        cmocka_unit_test(test_grouped),
        cmocka_unit_test(test_lt),
    };
    return OZ_TEST_RUN("test_fuzz_gen", "fuzz_gen", tests, seed);
}
