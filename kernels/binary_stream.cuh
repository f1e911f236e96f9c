/* The kNN's filter for codes of 256 bits or fewer (w = 8: one k-step),
 * for binary.cu (included there once, after binary_mm.cuh), with no
 * shared memory and no barrier: a warp holds the A fragments of 32
 * queries and their limits in registers for all its work, and streams
 * its CTA's chunk of references 32 at a time, loading the next 32's B
 * fragments (a lane's 8 bytes of a code: its words 2 t and 2 t + 1 in
 * k-slots t and t + 4, for A alike) and column terms while the tensor
 * cores take these. The 16 warps of a CTA (512 queries) walk the same
 * references, so the chunk comes from L2 once a CTA and from L1 for the
 * rest; the CTAs stay resident and take work items (a block of queries,
 * a chunk of references) in turn.
 *
 * The test a pair must pass, distance pa + pb - 2 acc below the query's
 * bound th, costs the CUDA cores most of the time, as the tensor cores
 * make 128 products an instruction. The products start from the column
 * term -floor(pb / 2) (the mma's C operand, from column_halves) instead
 * of zero, so that pb - 2 acc >= -2 acc', and a row's pairs pass only if
 * the largest of its accumulators acc' exceeds floor((pa - th) / 2):
 * one three-way maximum for two new products, and no pair below the
 * bound is missed (pairs at it pass too where pb is odd). A step whose
 * warp has such a row runs the exact test of binary_mm.cuh's filter on
 * the flagged rows. Against the exact test of every product (pb - 2 acc
 * and a minimum, 64 queries a warp) the filter of 10^4 queries over
 * 594496 references took 0.86 ms instead of 1.48. */
#ifndef ML_CUDA_BINARY_STREAM_CUH
#define ML_CUDA_BINARY_STREAM_CUH

#include "binary_mm.cuh"
#include "warp.cuh"

#define KS_TILES 2 /* row tiles a warp: 32 queries */
#define KS_WARPS 16
#define KS_ROWS (KS_WARPS * KS_TILES * 16)
#define KS_ITEMS 16      /* work items a resident CTA, about */
#define KS_MIN_CHUNK 256 /* references an item, at least */
/* the column term of a column past the end: no accumulator passes */
#define KS_NO_COLUMN (-65536)

/* halves[i] = {-floor(pb[2 i] / 2), -floor(pb[2 i + 1] / 2)}, the column
 * terms of column pairs i < pairs (KS_NO_COLUMN past n). */
__global__ void column_halves(const int *pb, int64_t n, int2 *halves, int64_t pairs) {
  const int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < pairs; i += stride)
    halves[i] = make_int2(2 * i < n ? -(pb[2 * i] >> 1) : KS_NO_COLUMN,
                          2 * i + 1 < n ? -(pb[2 * i + 1] >> 1) : KS_NO_COLUMN);
}

/* d = c + popc(a AND b) over one m16n8k256 tile, c the columns' terms
 * (a lane's columns 2 t and 2 t + 1, in both of its rows). */
__device__ __forceinline__ void mma_and_popc_from(int (&d)[4], const uint32_t (&a)[4], uint2 b,
                                                  int2 c) {
  asm("mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.and.popc "
      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %10, %11};\n"
      : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b.x), "r"(b.y), "r"(c.x), "r"(c.y));
}

/* The B fragments of the 32 references from column c (of tiles j), in
 * a partial tile (past n) the columns past n clamped to the last (their
 * pairs are not kept). */
__device__ __forceinline__ void stream_load(uint2 (&b)[NJ], const MmArgs &p, int64_t c, int g,
                                            int t) {
  if (c + NJ * 8 <= p.n) {
    const uint2 *row = (const uint2 *)(p.b + (c + g) * 8) + t;
#pragma unroll
    for (int j = 0; j < NJ; j++) b[j] = __ldg(row + j * 8 * 4);
    return;
  }
#pragma unroll
  for (int j = 0; j < NJ; j++) {
    const int64_t col = c + j * 8 + g;
    b[j] = __ldg((const uint2 *)(p.b + (col < p.n ? col : p.n - 1) * 8) + t);
  }
}

/* The exact test of the warp's rows flagged in hit (bit 2 i + h) against
 * the 32 references from column c: their products again, from zero, and
 * each flagged row's distances against its bound (its popcount and
 * threshold read again) through mm_filter_row. The whole warp runs the
 * mma. */
__device__ __forceinline__ void stream_exact(const MmArgs &p, const FilterSink &sink,
                                             const uint32_t (&fa)[KS_TILES][4], unsigned hit,
                                             int64_t c, int64_t r0, int g, int t) {
  uint2 b[NJ];
  stream_load(b, p, c, g, t);
#pragma unroll
  for (int i = 0; i < KS_TILES; i++) {
    int acc[NJ][4];
#pragma unroll
    for (int j = 0; j < NJ; j++) mma_and_popc<true>(acc[j], fa[i], b[j].x, b[j].y);
#pragma unroll
    for (int h = 0; h < 2; h++) {
      if (!(hit >> (2 * i + h) & 1)) continue;
      const int lr = i * 16 + g + h * 8;
      const int64_t row = r0 + lr;
      const int ra = p.pa[row], bound = (int)p.thr[row * p.thr_stride] - ra;
      int e[2 * NJ];
#pragma unroll
      for (int v = 0; v < 2 * NJ; v++) {
        const int64_t col = c + v / 2 * 8 + t * 2 + v % 2;
        e[v] = p.pb[col < p.n ? col : p.n - 1] - 2 * acc[v / 2][h * 2 + v % 2];
      }
      mm_filter_row(sink, lr, c + t * 2, bound, ra, e);
    }
  }
}

/* A step's operands: the B fragments (lane's row g of each tile, words
 * 2 t and 2 t + 1) and the column terms (lane's pair t of each tile). */
struct StreamFrags {
  uint2 b[NJ];
  int2 h[NJ];
};

__device__ __forceinline__ void stream_fetch(StreamFrags &f, const uint2 *bq, const int2 *hq) {
#pragma unroll
  for (int j = 0; j < NJ; j++) {
    f.b[j] = __ldg(bq + j * 8 * 4);
    f.h[j] = __ldg(hq + j * 4);
  }
}

/* The 32 references of f against the warp's 32 queries (limits lim: a
 * row passes if an accumulator exceeds its limit; INT_MAX for a row past
 * the end): the lane's rows that pass, bit 2 i + h. */
__device__ __forceinline__ unsigned stream_test(const uint32_t (&fa)[KS_TILES][4],
                                                const int (&lim)[KS_TILES][2],
                                                const StreamFrags &f) {
  int top[KS_TILES][2];
#pragma unroll
  for (int j = 0; j < NJ; j++)
#pragma unroll
    for (int i = 0; i < KS_TILES; i++) {
      int acc[4];
      mma_and_popc_from(acc, fa[i], f.b[j], f.h[j]);
#pragma unroll
      for (int r = 0; r < 2; r++)
        top[i][r] = j == 0 ? max(acc[2 * r], acc[2 * r + 1])
                           : __vimax3_s32(top[i][r], acc[2 * r], acc[2 * r + 1]);
    }
  unsigned hit = 0;
#pragma unroll
  for (int i = 0; i < KS_TILES; i++)
#pragma unroll
    for (int r = 0; r < 2; r++) hit |= (unsigned)(top[i][r] > lim[i][r]) << (2 * i + r);
  return hit;
}

/* The exact tests of the steps at c (hx) and c + 32 (hy) that some lane
 * flagged. */
__device__ __forceinline__ void stream_settle(const MmArgs &p, const FilterSink &sink,
                                              const uint32_t (&fa)[KS_TILES][4], unsigned hx,
                                              unsigned hy, int64_t c, int64_t r0, int g, int t) {
  if (__any_sync(FULL, hx != 0)) stream_exact(p, sink, fa, hx, c, r0, g, t);
  if (__any_sync(FULL, hy != 0)) stream_exact(p, sink, fa, hy, c + NJ * 8, r0, g, t);
}

/* A warp's 32 queries from r0 against references c .. end - 1 (c even).
 * The A fragments load a word at a time, so that each quad can sit in
 * four registers in the mma's order: a paired load fills two registers
 * in a row with words 2 t and 2 t + 1, which the quad wants two apart,
 * and ptxas copied the quads before every mma. Two steps of 32 make a
 * round with one vote, so that the second's products overlap the
 * first's maxima; each step's operands load while the other computes,
 * through pointers (64-bit index arithmetic took a third of the
 * instructions). The last, partial step clamps its columns. */
__device__ __forceinline__ void stream_rows(const MmArgs &p, int64_t r0, int64_t c, int64_t end,
                                            int g, int t) {
  const FilterSink sink = {p.count, p.cand_d, p.cand_i, p.cap, p.base, p.n, r0};
  uint32_t fa[KS_TILES][4];
  int lim[KS_TILES][2];
#pragma unroll
  for (int i = 0; i < KS_TILES; i++)
#pragma unroll
    for (int h = 0; h < 2; h++) {
      const int64_t row = r0 + i * 16 + g + h * 8;
      const bool ok = row < p.m;
      const uint32_t *a = p.a + (ok ? row : r0) * 8 + t * 2;
      fa[i][h] = __ldg(a);
      fa[i][2 + h] = __ldg(a + 1);
      lim[i][h] = ok ? (p.pa[row] - (int)p.thr[row * p.thr_stride]) >> 1 : INT_MAX;
    }
  constexpr int S = NJ * 8; /* references a step */
  const int64_t full = c + (end - c) / S * S;
  const uint2 *bq = (const uint2 *)p.b + (c + g) * 4 + t;
  const int2 *hq = p.halves + c / 2 + t;
  StreamFrags x, y;
  if (c < full) stream_fetch(x, bq, hq);
  if (c + S < full) stream_fetch(y, bq + S * 4, hq + S / 2);
  for (; c + 2 * S <= full; c += 2 * S) {
    const unsigned hx = stream_test(fa, lim, x);
    bq += 2 * S * 4;
    hq += S;
    if (c + 2 * S < full) stream_fetch(x, bq, hq);
    const unsigned hy = stream_test(fa, lim, y);
    if (c + 3 * S < full) stream_fetch(y, bq + S * 4, hq + S / 2);
    if (__any_sync(FULL, (hx | hy) != 0)) stream_settle(p, sink, fa, hx, hy, c, r0, g, t);
  }
  if (c < full) {
    const unsigned hx = stream_test(fa, lim, x);
    if (__any_sync(FULL, hx != 0)) stream_exact(p, sink, fa, hx, c, r0, g, t);
    c += S;
  }
  if (c < end) {
    stream_load(x.b, p, c, g, t);
    hq = p.halves + c / 2 + t;
#pragma unroll
    for (int j = 0; j < NJ; j++) x.h[j] = __ldg(hq + j * 4);
    const unsigned hx = stream_test(fa, lim, x);
    if (__any_sync(FULL, hx != 0)) stream_exact(p, sink, fa, hx, c, r0, g, t);
  }
}

/* Work items in turn: query block item % qblocks (KS_ROWS queries)
 * against chunk item / qblocks of the references. */
__global__ void __launch_bounds__(KS_WARPS * 32, 1)
    binary_knn_stream(MmArgs p, int64_t chunk, int64_t qblocks, int64_t items) {
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  for (int64_t item = blockIdx.x; item < items; item += gridDim.x) {
    const int64_t r0 = item % qblocks * KS_ROWS + warp * KS_TILES * 16,
                  c = item / qblocks * chunk;
    if (r0 < p.m)
      stream_rows(p, r0, c, c + chunk < p.n ? c + chunk : p.n, lane >> 2, lane & 3);
  }
}

/* The filter over p (a round of the search: p.m queries, p.n references
 * of w = 8 words, p.halves their column terms) by one CTA a
 * multiprocessor, each taking about KS_ITEMS work items (a block of
 * KS_ROWS queries, a chunk of references) in turn: one CTA an item left
 * a last wave mostly empty (4.02 waves at 10^4 x 10^6). */
static int knn_stream(cuda_dev *d, const MmArgs &p, const char *op) {
  const int64_t qblocks = (p.m + KS_ROWS - 1) / KS_ROWS, slots = d->sms;
  const int64_t parts = (slots * KS_ITEMS + qblocks - 1) / qblocks;
  int64_t chunk = (p.n + parts - 1) / parts;
  chunk = chunk < KS_MIN_CHUNK ? KS_MIN_CHUNK : (chunk + NJ * 8 - 1) / (NJ * 8) * (NJ * 8);
  const int64_t items = qblocks * ((p.n + chunk - 1) / chunk);
  return cuda_launch<binary_knn_stream>(d, (unsigned)(items < slots ? items : slots),
                                        KS_WARPS * 32, 0, op, p, chunk, qblocks, items);
}

#endif
