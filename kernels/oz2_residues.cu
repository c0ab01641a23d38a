/* kernels/oz2_residues.cu: an operand's scaled integers a'' = rne(x 2^(w - s)) reduced into the symmetric int8 residue planes of the first N engine moduli, their byte sums on the tensor cores (ozaki2.md step 2). */
#include <type_traits>

#include "oz2_params.h"
#include "oz2_res_grid.h"
#include "../slicing/slice_fast.h" /* oz_fast_pack4 */
#include "cp_async.cuh"
#include "../crt/oz2_complex.h"

/* The kernel's tile: OZ2_RT_ROWS rows x OZ2_RT_K k of the padded operand,
 * 256 threads, each OZ2_RT_E consecutive k of one row (one 8-byte store per
 * plane; a warp writes 4 rows x 64 contiguous bytes of each plane). */
#define OZ2_RT_ROWS 32
#define OZ2_RT_K 64
#define OZ2_RT_E 8
/* Blocks per SM with one word: 3 (80 registers, no spill; two words: 2). At
 * 4 (64 registers) ptxas spilled 20 bytes, and the reloads' latency was the
 * kernel's largest stall (ncu source counters, session 10 call 6: ~40% of the
 * samples on the instructions waiting for them); 3 blocks: 2.27 + 2.24 ms
 * against 2.68 + 2.52 at 16384^3, N = 16 (call 7). */
#define OZ2_RT_MINB 3
#define OZ2_RT_LOADS 8 /* doubles a thread stages per tile */
#define OZ2_RT_TILES 4 /* K tiles a block works through, the next one's loads in flight (cp.async) under this one's work */
static_assert(OZ2_RT_ROWS * OZ2_RT_K == 256 * OZ2_RT_E, "one tile per block pass");
static_assert(OZ_PAD_K % OZ2_RT_K == 0 && OZ_PAD_ROWS_A % OZ2_RT_ROWS == 0 && OZ_PAD_ROWS_B % OZ2_RT_ROWS == 0,
              "tiles cover the padding");
static_assert(OZ2_RT_LOADS * 256 == OZ2_RT_ROWS * OZ2_RT_K && OZ2_RT_ROWS == 32 && OZ2_RT_K == 64,
              "a warp copies 4 rows x 8 k, or 32 k of one row, per load");
static_assert(OZ2_RT_E == 8, "a thread's elements fill the two rows of four m16n8k32 fragments");

/* The moduli a launch makes residues for: the engine moduli (real calls),
 * or the split moduli (complex calls, docs/ozaki2-complex.md), compile-time
 * per instantiation. */
#define OZ2_RM_(q, m) (m),
#define OZ2_RMS_(q, p, r, inv2r) (p),
#define OZ2_RMR_(q, p, r, inv2r) (r),
static constexpr uint32_t kOz2Moduli[OZ_ENGINE_NMODULI] = {OZ_ENGINE_MODULI(OZ2_RM_)};
static constexpr uint32_t kOz2zModuli[OZ2Z_SPLIT_NMODULI] = {OZ2Z_SPLIT_MODULI(OZ2_RMS_)};
static constexpr uint32_t kOz2zRoots[OZ2Z_SPLIT_NMODULI] = {OZ2Z_SPLIT_MODULI(OZ2_RMR_)};
#undef OZ2_RM_
#undef OZ2_RMS_
#undef OZ2_RMR_
static_assert(OZ_ENGINE_NMODULI % 2 == 0 && OZ2Z_SPLIT_NMODULI % 2 == 0,
              "moduli go in pairs: an m16n8 fragment's 8 columns are 4 slots x 2 moduli");
template <bool CX>
struct oz2_rt_set {
    static constexpr int NMOD = CX ? OZ2Z_SPLIT_NMODULI : OZ_ENGINE_NMODULI;
    static constexpr uint32_t mod(int q) { return CX ? kOz2zModuli[q] : kOz2Moduli[q]; }
};

/* crt/oz2.h's K_b(m) of every modulus of a set, four bytes a word: the B
 * fragments (word j: bytes 4j .. 4j + 3 of z = a'' + 2^(w+1)). */
template <int NM>
struct oz2_bytepow_tab {
    uint32_t w[NM][OZ2_BYTES / 4];
};
template <bool CX>
static constexpr oz2_bytepow_tab<oz2_rt_set<CX>::NMOD> oz2_make_bytepow_tab()
{
    oz2_bytepow_tab<oz2_rt_set<CX>::NMOD> t{};
    for (int q = 0; q < oz2_rt_set<CX>::NMOD; q++)
        for (int j = 0; j < OZ2_BYTES / 4; j++)
            t.w[q][j] = oz2_bytepow4(j, oz2_rt_set<CX>::mod(q));
    return t;
}
static __constant__ oz2_bytepow_tab<OZ_ENGINE_NMODULI> c_bytepow = oz2_make_bytepow_tab<false>();

/* The complex path's two tables per split modulus q: K_b(p) and its
 * product with the root, K'_b = r K_b mod p (symmetric, |K'_b| <= 120): a
 * column of the second turns the im part's bytes into r a''_im mod p. */
struct oz2z_bytepow_tab {
    uint32_t w[OZ2Z_SPLIT_NMODULI][2][OZ2_BYTES / 4];
};
static constexpr oz2z_bytepow_tab oz2z_make_bytepow_tab()
{
    oz2z_bytepow_tab t{};
    for (int q = 0; q < OZ2Z_SPLIT_NMODULI; q++) {
        const uint32_t p = kOz2zModuli[q], r = kOz2zRoots[q];
        for (int j = 0; j < OZ2_BYTES / 4; j++) {
            t.w[q][0][j] = oz2_bytepow4(j, p);
            uint32_t word = 0;
            for (int i = 0; i < 4; i++) {
                const int32_t kb = oz2_bytepow(4 * j + i, p);
                const uint32_t rk = (uint32_t)(((int64_t)r * kb % (int64_t)p + (int64_t)p) % (int64_t)p);
                const int32_t sym = rk > p / 2 ? (int32_t)rk - (int32_t)p : (int32_t)rk;
                word |= (uint32_t)(uint8_t)sym << (8 * i);
            }
            t.w[q][1][j] = word;
        }
    }
    return t;
}
static __constant__ oz2z_bytepow_tab c_bytepow_z = oz2z_make_bytepow_tab();

/* D = A B + C, m16n8k32, A unsigned bytes (row-major), B signed bytes
 * (column-major), C's columns alternating c0, c1. */
__device__ __forceinline__ void oz2_mma_u8s8(uint32_t (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1,
                                             uint32_t c0, uint32_t c1)
{
    asm("mma.sync.aligned.m16n8k32.row.col.s32.u8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%10,%11};\n"
        : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1), "r"(c0), "r"(c1));
}

/* D += A B (the second word of z). */
__device__ __forceinline__ void oz2_mma_u8s8_acc(uint32_t (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1)
{
    asm("mma.sync.aligned.m16n8k32.row.col.s32.u8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

/* The byte sums' start of each modulus at the call's width (crt/oz2.h's
 * oz2_bias_bits), a kernel parameter; complex calls: of the split moduli. */
struct oz2_bias {
    uint32_t c[OZ_ENGINE_NMODULI];
};
struct oz2z_bias {
    uint32_t c[OZ2Z_SPLIT_NMODULI];  /* bits(MAGIC) - (2^(w+1) mod p) */
    uint32_t cr[OZ2Z_SPLIT_NMODULI]; /* bits(MAGIC) - (r 2^(w+1) mod p): the r K_b columns' start */
};
template <bool CX>
using oz2_bias_of = typename std::conditional<CX, oz2z_bias, oz2_bias>::type;

/* How the byte sums X = bias + sum_b B_b K_b(m) of a thread's own elements come
 * out of mma.sync (lane = 4 g + t): a fragment row holds four element
 * slots of 8 bytes each, slot t's bytes 0-3 at k = 4t .. 4t+3 and bytes 4-7
 * at k = 16 + 4t .. 16 + 4t + 3, which is exactly what lane t of the row's
 * quad holds in its A registers; column n of B is slot n / 2 and modulus
 * 2p + n % 2 of the pair p, nonzero only at its slot's k. So the lane's D
 * (columns 2t, 2t + 1 of rows g and g + 8) are its own two elements' sums
 * for both moduli of the pair: no data crosses lanes. Element e of a
 * thread is fragment f = e / 2, row g + 8 (e % 2). Words j of z = a'' +
 * 2^(w+1) (64 bits each) are K steps against B's bytes 8j .. 8j + 7; C
 * holds the bias of the pair's two moduli. */
template <int NW>
struct oz2_frag_elems {
    uint32_t a[OZ2_RT_E / 2][NW][4];
};

/* The byte sums of pair P of moduli (2P, 2P + 1): d[f] for fragment f. */
template <int NW, int P>
__device__ __forceinline__ void oz2_pair_sums(const oz2_frag_elems<NW> &el, const oz2_bias &bias, bool mine, int godd,
                                              uint32_t (&d)[OZ2_RT_E / 2][4])
{
    const int q = 2 * P + godd; /* this lane's B column's modulus */
#pragma unroll
    for (int j = 0; j < NW; j++) {
        const uint32_t b0 = mine ? c_bytepow.w[q][2 * j] : 0u, b1 = mine ? c_bytepow.w[q][2 * j + 1] : 0u;
#pragma unroll
        for (int f = 0; f < OZ2_RT_E / 2; f++) {
            if (j == 0)
                oz2_mma_u8s8(d[f], el.a[f][j], b0, b1, bias.c[2 * P], bias.c[2 * P + 1]);
            else
                oz2_mma_u8s8_acc(d[f], el.a[f][j], b0, b1);
        }
    }
}

/* Pair P's residues from its sums d, and the pairs after it, while 2P <
 * nmod. (Issuing the next pair's MMAs before this pair's reductions was
 * slower: the registers cost occupancy, BENCHMARKS.md run 52.) */
template <int NW, int P>
__device__ __forceinline__ void oz2_residue_pairs(const oz2_frag_elems<NW> &el, const oz2_bias &bias, int nmod,
                                                  bool mine, int godd, const uint32_t (&d)[OZ2_RT_E / 2][4],
                                                  int8_t *out, int64_t plane_bytes)
{
    if constexpr (P < OZ_ENGINE_NMODULI / 2) {
        if (2 * P >= nmod)
            return;
#pragma unroll
        for (int qi = 0; qi < 2; qi++) {
            constexpr uint32_t m0 = kOz2Moduli[2 * P], m1 = kOz2Moduli[2 * P + 1];
            const uint32_t m = qi ? m1 : m0;
            if (2 * P + qi < nmod) {
                uint32_t u[OZ2_RT_E];
#pragma unroll
                for (int e = 0; e < OZ2_RT_E; e++)
                    u[e] = oz2_byte_residue_bits(d[e / 2][2 * (e % 2) + qi], m);
                uint2 word;
                word.x = oz_fast_pack4(u[0], u[1], u[2], u[3]); /* the low bytes */
                word.y = oz_fast_pack4(u[4], u[5], u[6], u[7]);
                *(uint2 *)(out + (2 * P + qi) * plane_bytes) = word;
            }
        }
        if constexpr (P + 1 < OZ_ENGINE_NMODULI / 2) {
            uint32_t dn[OZ2_RT_E / 2][4];
            oz2_pair_sums<NW, P + 1>(el, bias, mine, godd, dn);
            oz2_residue_pairs<NW, P + 1>(el, bias, nmod, mine, godd, dn, out, plane_bytes);
        }
    }
}

/* Complex calls: a thread's 8 elements are 4 complex elements c, re as
 * element 2 c and im as 2 c + 1 (fragment c, rows g and g + 8). Per split
 * modulus Q one MMA per fragment and word, its columns 2 t and 2 t + 1
 * being slot t's K_b and K'_b = r K_b: row g (re) gives x = a''_re mod p
 * and row g + 8 (im) r y = r a''_im mod p, both as MAGIC + an integer below
 * 2^19. u = x + r y and v = x - r y are then one float addition each (exact:
 * below 2^20) and one reduction (oz2_byte_residue_bits: int8
 * representatives, |u| <= 128, which is all the engine needs): the split
 * needs no per-element integer work. */
template <int NW, int Q>
__device__ __forceinline__ void oz2z_mod_sums(const oz2_frag_elems<NW> &el, const oz2z_bias &bias, bool mine, int godd,
                                              uint32_t (&d)[OZ2_RT_E / 2][4])
{
#pragma unroll
    for (int j = 0; j < NW; j++) {
        const uint32_t b0 = mine ? c_bytepow_z.w[Q][godd][2 * j] : 0u, b1 = mine ? c_bytepow_z.w[Q][godd][2 * j + 1] : 0u;
#pragma unroll
        for (int f = 0; f < OZ2_RT_E / 2; f++) {
            if (j == 0)
                oz2_mma_u8s8(d[f], el.a[f][j], b0, b1, bias.c[Q], bias.cr[Q]);
            else
                oz2_mma_u8s8_acc(d[f], el.a[f][j], b0, b1);
        }
    }
}

/* Split modulus Q's u and v from its sums d (4 bytes of u to plane 2 Q, 4
 * of v to 2 Q + 1, swapped for op C: conjugation turns u into v), then the
 * moduli after it, while Q < nmod. */
template <int NW, int Q>
__device__ __forceinline__ void oz2z_residue_mods(const oz2_frag_elems<NW> &el, const oz2z_bias &bias, int nmod,
                                                  bool mine, int godd, const uint32_t (&d)[OZ2_RT_E / 2][4],
                                                  int8_t *out, int64_t plane_bytes, int conj)
{
    if constexpr (Q < OZ2Z_SPLIT_NMODULI) {
        if (Q >= nmod)
            return;
        constexpr uint32_t p = kOz2zModuli[Q];
        uint32_t uu[4], vv[4];
#pragma unroll
        for (int c = 0; c < 4; c++)
            oz2z_uv_from_sums(d[c][0], d[c][3], p, &uu[c], &vv[c]);
        *(uint32_t *)(out + (2 * Q + conj) * plane_bytes) = oz_fast_pack4(uu[0], uu[1], uu[2], uu[3]);
        *(uint32_t *)(out + (2 * Q + 1 - conj) * plane_bytes) = oz_fast_pack4(vv[0], vv[1], vv[2], vv[3]);
        if constexpr (Q + 1 < OZ2Z_SPLIT_NMODULI) {
            uint32_t dn[OZ2_RT_E / 2][4];
            oz2z_mod_sums<NW, Q + 1>(el, bias, mine, godd, dn);
            oz2z_residue_mods<NW, Q + 1>(el, bias, nmod, mine, godd, dn, out, plane_bytes, conj);
        }
    }
}

/* A warp's staging buffer: its own OZ2_RT_WROWS rows of a tile, two
 * buffers, no padding. Element (r, kk) lives at column oz2_rt_col(r, kk):
 * kk with bits 0-1 XORed with kk's 16-group, bit 2 with bit 0 of r and bit 3
 * with bit 1 of r (a bijection on each row: bits 4-5 of kk are kept). An
 * 8-byte access goes to shared memory a half-warp at a time (ncu, session
 * 11: 4.1 wavefronts a read where the previous swizzle, which spread the
 * whole warp's 32 doubles over the 16 bank pairs twice but each half-warp's
 * 16 over only 8, had been thought to need 2); now each half-warp of every
 * one of the warp's three access patterns touches all 16 bank pairs of
 * 8-byte words once (oz2_rt_banks_ok): the copies of rows-contiguous
 * operands (lane l: row l & 3, kk = l / 4 + 8 i), those of k-contiguous ones
 * (row i / 2, kk = l + 32 (i % 2)), and the reads (lane l: row l / 8, kk =
 * 8 (l % 8) + e at step e; the half-warps' two rows differ in r's bit 0, so
 * in bit 2 of the column). */
#define OZ2_RT_WARPS 8
#define OZ2_RT_WROWS (OZ2_RT_ROWS / OZ2_RT_WARPS)
static_assert(OZ2_RT_WROWS == 4 && OZ2_RT_K == 64 && 256 / OZ2_RT_WARPS == 32,
              "a warp owns 4 rows of 64 k: lane l makes the 8 elements of row l / 8 from k = 8 (l % 8)");
__host__ __device__ constexpr int oz2_rt_col(int r, int kk)
{
    return kk ^ (((kk >> 4) & 3) | ((r & 1) << 2) | ((r & 2) << 2));
}
/* Element (r, kk)'s index in the warp's buffer. */
__host__ __device__ constexpr int oz2_rt_place(int r, int kk) { return r * OZ2_RT_K + oz2_rt_col(r, kk); }

/* The kernel's copy i of lane l goes to T(l) ^ K(i) (below): true of every
 * lane and copy in both layouts, and every place is taken once. */
__host__ __device__ constexpr int oz2_rt_T(bool rows_contig, int l)
{
    return rows_contig ? (((l & 3) * OZ2_RT_K) | ((l >> 2) ^ (((l & 1) << 2) | ((l & 2) << 2)))) : (l ^ (l >> 4));
}
__host__ __device__ constexpr int oz2_rt_K(bool rows_contig, int i)
{
    return rows_contig ? (((i >> 1) & 3) | (8 * i))
                       : (((i / 2) * OZ2_RT_K + 32 * (i % 2)) ^ (2 * (i % 2) | ((i / 2) & 1) << 2 | ((i / 2) & 2) << 2));
}
constexpr bool oz2_rt_split_ok()
{
    for (int c = 0; c < 2; c++) {
        bool seen[OZ2_RT_WROWS * OZ2_RT_K] = {};
        for (int l = 0; l < 32; l++)
            for (int i = 0; i < OZ2_RT_LOADS; i++) {
                const int row = c ? l & 3 : i / 2, kk = c ? (l >> 2) + 8 * i : l + 32 * (i % 2);
                const int at = oz2_rt_T(c, l) ^ oz2_rt_K(c, i);
                if (at != oz2_rt_place(row, kk) || seen[at])
                    return false;
                seen[at] = true;
            }
    }
    for (int l = 0; l < 32; l++) /* the reads: element e of lane l at place(l / 8, 8 (l % 8)) ^ e */
        for (int e = 0; e < OZ2_RT_E; e++)
            if ((oz2_rt_place(l >> 3, 8 * (l & 7)) ^ e) != oz2_rt_place(l >> 3, 8 * (l & 7) + e))
                return false;
    return true;
}
static_assert(oz2_rt_split_ok(), "the copies' places T ^ K and the reads' R ^ e are the swizzled places");
/* Every half-warp of every copy and read touches 16 distinct bank pairs
 * (place % 16: a row is 64 doubles, whole bank cycles). */
constexpr bool oz2_rt_banks_ok()
{
    for (int h = 0; h < 2; h++) {
        for (int n = 0; n < 3 * OZ2_RT_LOADS; n++) { /* copies of both layouts (i = n % 8), then reads (e = n % 8) */
            bool hit[16] = {};
            for (int l = 16 * h; l < 16 * h + 16; l++) {
                const int c = n / OZ2_RT_LOADS, i = n % OZ2_RT_LOADS;
                const int at = c < 2 ? oz2_rt_T(c, l) ^ oz2_rt_K(c, i) : oz2_rt_place(l >> 3, 8 * (l & 7)) ^ i;
                if (hit[at % 16])
                    return false;
                hit[at % 16] = true;
            }
        }
    }
    return true;
}
static_assert(OZ2_RT_LOADS == OZ2_RT_E && oz2_rt_banks_ok(), "conflict-free half-warps: every access one wavefront each");

/* The doubles are staged through shared memory so that the global reads are
 * coalesced along whichever of r or kk is contiguous (RC: rows, the
 * template's layout, so that the copies' addresses are a base and
 * compile-time steps): a block works through up to OZ2_RT_TILES K tiles of
 * its rows, the next tile's doubles copied (cp.async, two buffers) while
 * this one's residues are made. Each warp stages only the 4 rows whose
 * residues it makes, so it waits for nobody but itself (no block barrier;
 * every access conflict-free, oz2_rt_col). Measured on the H200
 * (BENCHMARKS.md session 10, calls 4-5, at 4 blocks an SM): 2.67 + 2.52 ms
 * for op(A) and op(B) at 16384^3, N = 16, against 2.68 + 2.73 with the
 * block staging before; 8 or 16 K tiles a block were slower (tails). Also
 * measured and no faster (session 12, calls 1, 4, 9): the conflict-free
 * staging (kept), three staging buffers, and a persistent grid (slower).
 * Session 13 (ncu source counters, 16384^3): a fifth of the instructions
 * were the copies' addresses (both layouts in one body, ~26 a copy) and the
 * reads' swizzled places recomputed per element (register pressure); the
 * first copies waited for the row's scale. Now the layout is a template
 * parameter, each read is one XOR on a byte address kept from the start,
 * and the first copies go out before the scale is read (instructions -18%,
 * time unchanged: the kernel is bound by how its writes reach DRAM). What
 * moved it is the grid's order (below): 2.27 + 2.23 -> 1.97 + 1.80 ms at
 * 16384^3, DRAM 59% -> ~72% of peak, against a floor of 1.65 ms for this
 * traffic (tests/gpu/bench_bw); 4 blocks an SM, 8 or 16 tiles a block, and
 * K groups in chunks were slower (BENCHMARKS.md session 13). Each thread turns
 * its 8 elements into z = a'' + 2^(w+1) once (crt/oz2.h's oz2_biased_u64 /
 * _u128, NW 64-bit words); per pair of moduli, 4 NW mma.sync give the
 * biased byte sums, and each residue costs three operations
 * (oz2_byte_residue_bits, m a compile-time constant) and a byte permute;
 * 8 residues go out as one 8-byte word per plane. Padding gets zeros, and
 * so do special (Inf/NaN) rows, which the fix-up kernel computes instead. */
/* Complex calls (CX) run the same kernel on the operand seen as doubles
 * (the host's oz2z_real_view): with rows contiguous (RC), 2 rows of doubles
 * a complex row (re, im) and the same K; with K contiguous, the same rows
 * and 2 doubles of K a complex k. Either way a thread takes 4 complex
 * elements, re and im in turn (oz2z_residue_mods): with K contiguous its 8
 * doubles of K as the real kernel does; with rows contiguous lane l takes
 * complex row l / 16 of the warp's two, k = 4 (l % 16) + c of both parts'
 * rows (a half-warp's reads of one (c, part) hit kk = 4 l' + c: its 16
 * places are distinct modulo 16 under oz2_rt_col's swizzle, one wavefront).
 * The scales are per complex row; the planes have complex rows and K. */
template <int NW, bool RC, bool AUTO, bool CX>
__global__ void __launch_bounds__(256, NW == 1 && !CX ? OZ2_RT_MINB : 2)
    oz2_residues_kernel(oz_view v, oz_operand_ws w, int nmod, int wbits,
                        const __grid_constant__ oz2_bias_of<CX> bias_arg, const oz2a_dev_plan *plan, int conj)
{
    /* the automatic plan (kernels/oz2_auto_estimate.h): N (complex: N'), w
     * and the byte sums' starts from device memory; the kernel of the other
     * word count, or a call the plan does not emulate, does nothing */
    if constexpr (AUTO) {
        nmod = plan->n;
        wbits = plan->w;
        if (nmod == 0 || (wbits <= 62) != (NW == 1))
            return;
    }
    static_assert(sizeof(oz2_bias) == sizeof(plan->bias) && sizeof(oz2z_bias) == sizeof(plan->zbias),
                  "the plan's byte sums are an oz2_bias and an oz2z_bias");
    const oz2_bias_of<CX> &bias =
        AUTO ? *reinterpret_cast<const oz2_bias_of<CX> *>(CX ? (const void *)plan->zbias : (const void *)plan->bias)
             : bias_arg;
    __shared__ __align__(128) double stage[OZ2_RT_WARPS][2][OZ2_RT_WROWS][OZ2_RT_K];
    constexpr uint32_t BUF_BYTES = OZ2_RT_WROWS * OZ2_RT_K * sizeof(double);
    const int64_t b = blockIdx.z;
    const double *x = v.ptr(b);
    const int tx = threadIdx.x & 31, wp = threadIdx.x >> 5;
    constexpr int KX = CX && !RC ? 2 : 1; /* doubles of the view's K per k of the planes */
    const int ktiles = (int)(KX * w.kpad / OZ2_RT_K), kgroups = oz2_res_kgroups(ktiles, OZ2_RT_TILES); /* < 2^30: the launch checks */
    /* which rows and K groups (kernels/oz2_res_grid.h) */
    int64_t rblk;
    int kg_first, kg_step;
    oz2_res_block_of(blockIdx.x, blockIdx.y, gridDim.x, gridDim.y, kgroups, &rblk, &kg_first, &kg_step);
    const int64_t r0 = rblk * OZ2_RT_ROWS + wp * OZ2_RT_WROWS; /* the warp's rows */
    const int rr = tx >> 3, kq = (tx & 7) * OZ2_RT_E; /* this thread's row of the warp's and first k */
    /* complex, rows contiguous: the thread's complex row (of the planes) and its first k */
    const int ci = tx >> 4, kq4 = 4 * (tx & 15);
    const int64_t r = CX && RC ? (r0 >> 1) + ci : r0 + rr; /* the row of the planes and scales */
    /* the warp's buffers as a shared-memory byte address (64-byte aligned:
     * an XOR of bits 3-5 stays inside the thread's 8 doubles); element e of
     * this thread is at place R ^ e, byte address rb ^ 8 e */
    const uint32_t sbase = (uint32_t)__cvta_generic_to_shared(&stage[wp][0][0][0]);
    const uint32_t rb = sbase + 8u * (uint32_t)oz2_rt_place(rr, kq);
    /* element e's place for complex rows contiguous: part e % 2, k kq4 + e / 2 */
    auto cplace = [&](int e) { return sbase + 8u * (uint32_t)oz2_rt_place(2 * ci + (e & 1), kq4 + (e >> 1)); };

    /* tile kt's doubles of the warp's rows into buffer buf: copy i of lane
     * tx is (row, kk) = (tx % 4, tx / 4 + 8 i) where rows are contiguous,
     * else (i / 2, tx + 32 (i % 2)); zeros past the operand. Its place,
     * oz2_rt_place(row, kk), is T ^ K_i: T of the lane, K_i of the copy
     * (kk's bits 0-2 and 3 are the lane's and i's, or bits 0-4 the lane's
     * alone, so the swizzle's XOR splits between them; oz2_rt_T and
     * oz2_rt_K, checked at compile time). */
    const int T = oz2_rt_T(RC, tx);
    /* the lane's source: RC, row r0 + tx % 4 from k = tx / 4 (steps of 8 ks);
     * else row r0 from k = tx (rows rs apart, the second half 32 on) */
    const int64_t lrow = RC ? r0 + (tx & 3) : r0, lk = RC ? (tx >> 2) : tx;
    const double *src0 = x + lrow * v.rs + lk * v.ks;
    auto fetch = [&](int kt, int buf) {
        const int64_t k0 = (int64_t)kt * OZ2_RT_K;
        const uint32_t dst = sbase + (uint32_t)buf * BUF_BYTES;
        const double *p = src0 + k0 * v.ks;
#pragma unroll
        for (int i = 0; i < OZ2_RT_LOADS; i++) {
            const int drow = RC ? 0 : i / 2, dk = RC ? 8 * i : 32 * (i % 2);
            const bool in = lrow + drow < v.rows && k0 + lk + dk < v.k;
            const double *s = RC ? p + dk * v.ks : p + drow * v.rs + dk;
            const uint32_t d = dst + 8u * (uint32_t)(T ^ oz2_rt_K(RC, i));
            oz_cp_async8(d, in ? s : x, in);
        }
        oz_cp_async_commit();
    };
    const int g = tx >> 2;
    const bool mine = (tx & 3) == (g >> 1); /* B column g's slot is this lane's */
    /* K group kg: the tiles kg, kg + kgroups, ... (oz2_res_grid.h) */
    for (int kg = kg_first; kg < kgroups; kg += kg_step) {
        fetch(kg, 0);
        /* the row's scale after the first copies are out (its load's latency under theirs) */
        const int sc = w.scale(b)[r];
        const bool live = (CX && RC ? 2 * r : r) < v.rows && sc != OZ_SCALE_SPECIAL;
        const oz2_shift shift = oz2_make_shift(live ? wbits - sc : 0);
        int kt = kg;
        for (int j = 0; j < OZ2_RT_TILES && kt < ktiles; j++, kt += kgroups) {
            const int buf = j & 1;
            if (j + 1 < OZ2_RT_TILES && kt + kgroups < ktiles) { /* the next tile's copies in flight under this one's work */
                fetch(kt + kgroups, buf ^ 1);
                oz_cp_async_wait<1>();
            } else {
                oz_cp_async_wait<0>();
            }
            __syncwarp(); /* every lane's copies of this tile have landed */
            const int64_t k0 = (int64_t)kt * OZ2_RT_K;
            const uint32_t rbb = rb + (uint32_t)buf * BUF_BYTES;

            oz2_frag_elems<NW> el;
#pragma unroll
            for (int e = 0; e < OZ2_RT_E; e++) {
                double xe; /* kq + e's place: e is kk's bits 0-2 */
                const uint32_t at = CX && RC ? cplace(e) + (uint32_t)buf * BUF_BYTES : rbb ^ (8u * e);
                asm volatile("ld.shared.f64 %0, [%1];\n" : "=d"(xe) : "r"(at));
                xe = live ? xe : 0.0;
                uint64_t lo, hi = 0;
                if constexpr (NW == 1)
                    lo = oz2_biased_u64(xe, shift, wbits);
                else
                    oz2_biased_u128(xe, shift, wbits, &lo, &hi);
                const int f = e / 2, h = e % 2;
                el.a[f][0][h] = (uint32_t)lo;
                el.a[f][0][2 + h] = (uint32_t)(lo >> 32);
                if constexpr (NW == 2) {
                    el.a[f][1][h] = (uint32_t)hi;
                    el.a[f][1][2 + h] = (uint32_t)(hi >> 32);
                }
            }
            __syncwarp(); /* this buffer is read: the fetch two tiles on may overwrite it */
            uint32_t d0[OZ2_RT_E / 2][4];
            if constexpr (CX) {
                oz2z_mod_sums<NW, 0>(el, bias, mine, g & 1, d0);
                int8_t *out = w.plane(b, 0) + r * w.kpad + (RC ? k0 + kq4 : (k0 + kq) / 2);
                oz2z_residue_mods<NW, 0>(el, bias, nmod, mine, g & 1, d0, out, w.plane_rows * w.kpad, conj);
            } else {
                oz2_pair_sums<NW, 0>(el, bias, mine, g & 1, d0);
                oz2_residue_pairs<NW, 0>(el, bias, nmod, mine, g & 1, d0, w.plane(b, 0) + r * w.kpad + k0 + kq,
                                         w.plane_rows * w.kpad);
            }
        }
    }
}

/* One launch of the kernel's instantiation for the layout and word count. */
template <bool AUTO, bool CX>
static void oz2_residues_go(const oz_view &v, const oz_operand_ws &w, int nmod, int wbits, int nw, dim3 grid,
                            cudaStream_t s, const oz2_bias_of<CX> &bias, const oz2a_dev_plan *plan, int conj = 0)
{
    const bool rc = v.rs == 1;
    if (nw == 1) {
        if (rc)
            oz2_residues_kernel<1, true, AUTO, CX><<<grid, 256, 0, s>>>(v, w, nmod, wbits, bias, plan, conj);
        else
            oz2_residues_kernel<1, false, AUTO, CX><<<grid, 256, 0, s>>>(v, w, nmod, wbits, bias, plan, conj);
    } else {
        if (rc)
            oz2_residues_kernel<2, true, AUTO, CX><<<grid, 256, 0, s>>>(v, w, nmod, wbits, bias, plan, conj);
        else
            oz2_residues_kernel<2, false, AUTO, CX><<<grid, 256, 0, s>>>(v, w, nmod, wbits, bias, plan, conj);
    }
}

/* The grid over the planes' rows and the view's K tiles (kx doubles of the
 * view's K per k of the planes). */
static bool oz2_residues_grid(const oz_operand_ws &w, int64_t group, int64_t kx, dim3 *grid)
{
    const int64_t ktiles = kx * w.kpad / OZ2_RT_K;
    if (ktiles > INT32_MAX / 2) /* kt + kgroups stays an int */
        return false;
    const int64_t kgroups = oz2_res_kgroups((int)ktiles, OZ2_RT_TILES);
    *grid = dim3((unsigned)(w.rows_pad / OZ2_RT_ROWS), (unsigned)(kgroups < 65535 ? (kgroups > 0 ? kgroups : 1) : 65535),
                 (unsigned)group);
    return true;
}

cudaError_t oz2_launch_residues(const oz_view &v, const oz_operand_ws &w, int nmod, int wbits, int64_t group,
                                cudaStream_t s, const oz2a_dev_plan *plan)
{
    dim3 grid;
    if (!oz2_residues_grid(w, group, 1, &grid))
        return cudaErrorInvalidValue;
    oz2_bias bias = {};
    for (int q = 0; q < nmod && q < OZ_ENGINE_NMODULI; q++)
        bias.c[q] = oz2_bias_bits(wbits, oz2_modulus(q));
    if (plan) { /* both word counts: the plan's w picks one on the device */
        oz2_residues_go<true, false>(v, w, nmod, wbits, 1, grid, s, bias, plan);
        oz2_residues_go<true, false>(v, w, nmod, wbits, 2, grid, s, bias, plan);
    } else {
        oz2_residues_go<false, false>(v, w, nmod, wbits, wbits <= 62 ? 1 : 2, grid, s, bias, nullptr); /* z = a'' + 2^(w+1) < 2^64 */
    }
    return cudaGetLastError();
}

cudaError_t oz2z_launch_residues(const oz_view &v, const oz_operand_ws &w, int nsplit, int wbits, bool conj,
                                 int64_t group, cudaStream_t s, const oz2a_dev_plan *plan)
{
    if (nsplit < 1 || nsplit > OZ2Z_SPLIT_NMODULI)
        return cudaErrorInvalidValue;
    const bool rc = v.rs == 1;
    if (rc ? v.rows > 2 * w.rows_pad : v.k > 2 * w.kpad) /* the view is the operand's doubles (oz2z_real_view) */
        return cudaErrorInvalidValue;
    dim3 grid;
    if (!oz2_residues_grid(w, group, rc ? 1 : 2, &grid))
        return cudaErrorInvalidValue;
    if (rc)
        grid.x = (unsigned)(2 * w.rows_pad / OZ2_RT_ROWS);
    oz2z_bias bias = {};
    for (int q = 0; q < nsplit && !plan; q++) {
        const oz2z_split_modulus sm = oz2z_split_mod(q);
        bias.c[q] = oz2_bias_bits(wbits, sm.p);
        bias.cr[q] = oz2z_bias_r_bits(wbits, &sm);
    }
    if (plan) { /* both word counts: the plan's w picks one on the device */
        oz2_residues_go<true, true>(v, w, nsplit, wbits, 1, grid, s, bias, plan, conj ? 1 : 0);
        oz2_residues_go<true, true>(v, w, nsplit, wbits, 2, grid, s, bias, plan, conj ? 1 : 0);
    } else {
        oz2_residues_go<false, true>(v, w, nsplit, wbits, wbits <= 62 ? 1 : 2, grid, s, bias, nullptr, conj ? 1 : 0);
    }
    return cudaGetLastError();
}
