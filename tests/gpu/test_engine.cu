/* tests/gpu/test_engine.cu: the INT8 engine's residue planes equal a naive int8 GEMM reduced mod each engine modulus (layers 1-2 on the engine). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <vector>

#include "crt/moduli.h"
#include "gpu_util.h"
#include "kernels/engine.h"
#include "kernels/res_layout.h"



/* The residue mode's tile (oz_engine_residue_job::tile_rows): every case runs with both. */
static int g_tile_rows;

#define OZ_T_M_(i, m) (m),
static const int32_t moduli[OZ_ENGINE_NMODULI] = {OZ_ENGINE_MODULI(OZ_T_M_)};

/* One case: rows_a x kpad and rows_b x kpad planes, nmod moduli, group items.
 * kind 0: random int8; 1: all -128 (the largest sums, sign-aligned). accumulate: the job runs
 * twice, the second time adding to the first's planes (2 R_q mod m_q).
 * tickets: the dynamic tile scheduler (its counters must be zero again
 * after each launch), else the fixed round robin. */
static int run_case1(int64_t rows_a, int64_t rows_b, int64_t kpad, int nmod, int64_t group, int kind,
                     bool accumulate, bool tickets, int64_t k_begin = 0, int64_t k_len = 0)
{
    const int64_t pa = rows_a * kpad, pb = rows_b * kpad, pr = rows_a * rows_b;
    const int64_t slot_a = nmod * pa, slot_b = nmod * pb, item = slot_a + slot_b;
    std::vector<int8_t> h((size_t)(item * group));
    for (auto &x : h)
        x = kind == 1 ? (int8_t)-128 : (int8_t)(rng_u64() >> 56);
    int8_t *d_ws;
    uint8_t *d_res;
    CUDA_CHECK(cudaMalloc(&d_ws, h.size()));
    CUDA_CHECK(cudaMalloc(&d_res, (size_t)(pr * nmod * group)));
    CUDA_CHECK(cudaMemcpy(d_ws, h.data(), h.size(), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(d_res, 0xA5, (size_t)(pr * nmod * group))); /* poison */
    oz_engine_residue_job job = {};
    job.a = oz_operand_ws{(char *)d_ws, item, 0, 0, 0, rows_a, kpad, rows_a};
    job.b = oz_operand_ws{(char *)d_ws, item, slot_a, 0, 0, rows_b, kpad, rows_b};
    job.m = rows_a;
    job.n = rows_b;
    job.nmod = nmod;
    job.res = d_res;
    job.res_item_bytes = pr * nmod;
    job.k_begin = k_begin;
    job.k_len = k_len;
    job.tile_rows = g_tile_rows;
    unsigned long long *d_tk = nullptr, tk_left[2] = {0, 0};
    if (tickets) {
        CUDA_CHECK(cudaMalloc(&d_tk, sizeof tk_left));
        CUDA_CHECK(cudaMemset(d_tk, 0, sizeof tk_left));
        job.tickets = d_tk;
    }
    CUDA_CHECK(oz_engine_residues(job, group, 0));
    if (accumulate) {
        job.accumulate = true;
        CUDA_CHECK(oz_engine_residues(job, group, 0));
    }
    CUDA_CHECK(cudaDeviceSynchronize());
    if (tickets) {
        CUDA_CHECK(cudaMemcpy(tk_left, d_tk, sizeof tk_left, cudaMemcpyDeviceToHost));
        CUDA_CHECK(cudaFree(d_tk));
    }
    std::vector<uint8_t> r((size_t)(pr * nmod * group));
    CUDA_CHECK(cudaMemcpy(r.data(), d_res, r.size(), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(d_ws));
    CUDA_CHECK(cudaFree(d_res));
    int64_t bad = 0, checked = 0;
    for (int64_t b = 0; b < group; b++)
        for (int q = 0; q < nmod; q++) {
            const int8_t *A = h.data() + b * item + q * pa, *B = h.data() + b * item + slot_a + q * pb;
            /* every element on small cases, a sample of rows and columns on large ones */
            int64_t step_i = rows_a * rows_b * kpad > (int64_t)1 << 28 ? 7 : 1;
            for (int64_t i = 0; i < rows_a; i += step_i)
                for (int64_t j = 0; j < rows_b; j++) {
                    int64_t s = 0;
                    for (int64_t k = k_begin; k < (k_len ? k_begin + k_len : kpad); k++)
                        s += (int64_t)A[i * kpad + k] * B[j * kpad + k];
                    if (accumulate)
                        s *= 2;
                    int64_t want = ((s % moduli[q]) + moduli[q]) % moduli[q];
                    int got = r[(size_t)(b * pr * nmod + q * pr + oz_res_pos(i, j, rows_a))];
                    checked++;
                    if (got != want && bad++ < 5)
                        fprintf(stderr, "  item %lld modulus %d (%d) element (%lld,%lld): %d, want %lld\n", (long long)b,
                                q, moduli[q], (long long)i, (long long)j, got, (long long)want);
                }
        }
    if (tk_left[0] || tk_left[1]) {
        fprintf(stderr, "  the scheduler's counters were left at %llu, %llu\n", tk_left[0], tk_left[1]);
        bad++;
    }
    printf("engine tile %d: %lldx%lld k=%lld [%lld, +%lld) nmod=%d group=%lld kind=%d%s%s: %lld checked, %lld wrong\n",
           g_tile_rows, (long long)rows_a, (long long)rows_b, (long long)kpad, (long long)k_begin, (long long)k_len,
           nmod, (long long)group, kind,
           accumulate ? " accumulated" : "", tickets ? "" : " round-robin", (long long)checked, (long long)bad);
    return bad != 0;
}

/* The case plain and accumulated with the scheduler's tickets, and once in
 * the fixed round robin. */
static int run_case(int64_t rows_a, int64_t rows_b, int64_t kpad, int nmod, int64_t group, int kind)
{
    int fails = 0;
    for (int acc = 0; acc < 2; acc++)
        fails += run_case1(rows_a, rows_b, kpad, nmod, group, kind, acc != 0, true);
    fails += run_case1(rows_a, rows_b, kpad, nmod, group, kind, false, false);
    return fails;
}

int main(void)
{
    rng_state = 0x243f6a8885a308d3ULL; /* the cases of the recorded runs */
    int dev = 0;
    CUDA_CHECK(cudaGetDevice(&dev));
    if (!oz_engine_usable(dev)) {
        printf("test_engine: SKIP (the sm_90a engine does not run on this device)\n");
        return 0;
    }
    int fails = 0;
    for (int tile : {128, 192}) {
        g_tile_rows = tile;
        fails += run_case(128, 128, 128, 1, 1, 0);
        fails += run_case(384, 256, 640, 3, 2, 0);   /* a partial A tile (TMA zero fill), two items */
        fails += run_case(256, 384, 4096, 6, 1, 0);
        fails += run_case(128, 128, 65536 + 384, 2, 1, 1); /* two K chunks, sign-aligned: the exact-range hazard */
        fails += run_case(512, 256, 1024, 20, 1, 0); /* every engine modulus */
        fails += run_case(640, 384, 1152, 5, 2, 0);  /* 640 rows: a partial wide tile; 384 columns: a partial wide B */
        fails += run_case(448, 256, 512, 4, 1, 0);   /* 192-row tiles: the last has one consumer's rows */
        fails += run_case(320, 512, 384, 3, 2, 0);   /* 192-row tiles: the last has two consumers' rows */
        fails += run_case(2048, 1536, 256, 3, 2, 0); /* 576 items: most of them taken by tickets */
        /* K ranges of the planes (Phase 22 unfused: one K chunk a job), the second to the padded end */
        fails += run_case1(256, 512, 8192 + 256, 6, 2, 0, false, true, 4096, 4096);
        fails += run_case1(256, 512, 8192 + 256, 6, 2, 1, true, true, 8192, 0);
        fails += run_case1(384, 256, 1024, 2, 1, 0, false, false, 512, 384);
    }
    printf("test_engine: %d failed\n", fails);
    return fails ? 1 : 0;
}
