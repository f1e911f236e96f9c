/* The kNN's filter for codes of 256 bits or fewer (w = 8: one k-step),
 * for binary.cu (included there once, after binary_mm.cuh), with no
 * shared memory and no barrier: a warp holds the A fragments of 64
 * queries and the bounds of its lane's 8 rows in registers for all its
 * work, and streams its CTA's chunk of references 32 at a time, loading
 * the next 32's B fragments (a lane's 8 bytes of a code: its words 2 t
 * and 2 t + 1 in k-slots t and t + 4, for A alike) while the tensor
 * cores take these. The warps of a CTA (512 queries) walk the same
 * references, so the chunk comes from L2 once a CTA and from L1 for the
 * rest; the CTAs stay resident and take work items (a block of queries,
 * a chunk of references) in turn. In the tiled kernel a 256-bit tile was
 * one stage and one barrier; its 16 warps waited there 3.5 cycles of
 * 7.5. */
#ifndef ML_CUDA_BINARY_STREAM_CUH
#define ML_CUDA_BINARY_STREAM_CUH

#include "binary_mm.cuh"

#define KS_WARPS 8
#define KS_ROWS (KS_WARPS * 64)
#define KS_ITEMS 16      /* work items a resident CTA, about */
#define KS_MIN_CHUNK 256 /* references an item, at least */

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

/* The 32 references from column c (B fragments b) against the warp's 64
 * queries: their pairs below the bounds to the candidates. The columns'
 * popcounts load first and arrive during the mma (kept for a second
 * tile, they took registers that ptxas then spilled). */
__device__ __forceinline__ void stream_step(const MmArgs &p, const FilterSink &sink,
                                            const uint32_t (&fa)[MI][4], const int (&bound)[MI][2],
                                            const uint2 (&b)[NJ], int64_t c, int64_t r0, int g,
                                            int t) {
  const bool full = c + NJ * 8 <= p.n;
  int pc[NJ][2];
#pragma unroll
  for (int j = 0; j < NJ; j++) {
    const int64_t col = c + j * 8 + t * 2;
    if (full) {
      const int2 v = __ldg((const int2 *)(p.pb + col));
      pc[j][0] = v.x;
      pc[j][1] = v.y;
    } else {
      pc[j][0] = p.pb[col < p.n ? col : p.n - 1];
      pc[j][1] = p.pb[col + 1 < p.n ? col + 1 : p.n - 1];
    }
  }
  int acc[MI][NJ][4];
#pragma unroll
  for (int j = 0; j < NJ; j++)
#pragma unroll
    for (int i = 0; i < MI; i++) mma_and_popc<true>(acc[i][j], fa[i], b[j].x, b[j].y);
  filter_block(sink, acc, pc, bound, full, g, c + t * 2, [&](int lr) { return p.pa[r0 + lr]; });
}

/* A warp's 64 queries from r0 against references c .. end - 1. The A
 * fragments load a word at a time, so that each quad can sit in four
 * registers in the mma's order: a paired load fills two registers in a
 * row with words 2 t and 2 t + 1, which the quad wants two apart, and
 * ptxas copied the quads before every mma. */
__device__ __forceinline__ void stream_rows(const MmArgs &p, int64_t r0, int64_t c, int64_t end,
                                            int g, int t) {
  const FilterSink sink = {p.count, p.cand_d, p.cand_i, p.cap, p.base, p.n, r0};
  uint32_t fa[MI][4];
  int bound[MI][2];
#pragma unroll
  for (int i = 0; i < MI; i++)
#pragma unroll
    for (int h = 0; h < 2; h++) {
      const int64_t row = r0 + i * 16 + g + h * 8;
      const bool ok = row < p.m;
      const uint32_t *a = p.a + (ok ? row : r0) * 8 + t * 2;
      fa[i][h] = __ldg(a);
      fa[i][2 + h] = __ldg(a + 1);
      bound[i][h] = ok ? (int)p.thr[row * p.thr_stride] - p.pa[row] : INT_MIN;
    }
  /* two tiles in turn, the next loading while this one computes */
  uint2 x[NJ], y[NJ];
  stream_load(x, p, c, g, t);
  for (; c < end; c += 2 * NJ * 8) {
    if (c + NJ * 8 < end) stream_load(y, p, c + NJ * 8, g, t);
    stream_step(p, sink, fa, bound, x, c, r0, g, t);
    if (c + NJ * 8 >= end) break;
    if (c + 2 * NJ * 8 < end) stream_load(x, p, c + 2 * NJ * 8, g, t);
    stream_step(p, sink, fa, bound, y, c + NJ * 8, r0, g, t);
  }
}

/* Work items in turn: query block item % qblocks (KS_ROWS queries)
 * against chunk item / qblocks of the references. */
__global__ void __launch_bounds__(KS_WARPS * 32, 2)
    binary_knn_stream(MmArgs p, int64_t chunk, int64_t qblocks, int64_t items) {
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  for (int64_t item = blockIdx.x; item < items; item += gridDim.x) {
    const int64_t r0 = item % qblocks * KS_ROWS + warp * 64, c = item / qblocks * chunk;
    if (r0 < p.m)
      stream_rows(p, r0, c, c + chunk < p.n ? c + chunk : p.n, lane >> 2, lane & 3);
  }
}

/* The filter over p (a round of the search: p.m queries, p.n references
 * of w = 8 words) by as many CTAs as fit at once (two a multiprocessor),
 * each taking about KS_ITEMS work items (a block of KS_ROWS queries, a
 * chunk of references) in turn: one CTA an item left a last wave mostly
 * empty (4.02 waves at 10^4 x 10^6). */
static int knn_stream(cuda_dev *d, const MmArgs &p, const char *op) {
  const int64_t qblocks = (p.m + KS_ROWS - 1) / KS_ROWS, slots = (int64_t)d->sms * 2;
  const int64_t parts = (slots * KS_ITEMS + qblocks - 1) / qblocks;
  int64_t chunk = (p.n + parts - 1) / parts;
  chunk = chunk < KS_MIN_CHUNK ? KS_MIN_CHUNK : (chunk + NJ * 8 - 1) / (NJ * 8) * (NJ * 8);
  const int64_t items = qblocks * ((p.n + chunk - 1) / chunk);
  return cuda_launch<binary_knn_stream>(d, (unsigned)(items < slots ? items : slots),
                                        KS_WARPS * 32, 0, op, p, chunk, qblocks, items);
}

#endif
