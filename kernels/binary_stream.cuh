/* The kNN's filter for codes of 256 bits or fewer (w = 8: one k-step),
 * for binary.cu (included there once, after binary_mm.cuh), with no
 * shared memory and no barrier: a warp holds the A fragments of 64
 * queries and the bounds of its lane's 8 rows in registers for all its
 * work, and streams its CTA's chunk of references 32 at a time, loading
 * the next 32's B fragments (a lane's 8 bytes of a code: its words 2 t
 * and 2 t + 1 in k-slots t and t + 4, for A alike) and popcounts while
 * the tensor cores take these. The warps of a CTA (512 queries) walk the
 * same references, so the chunk comes from L2 once a CTA and from L1
 * for the rest. In the tiled kernel a 256-bit tile was one stage and one
 * barrier; its 16 warps waited there 3.5 cycles of 7.5. */
#ifndef ML_CUDA_BINARY_STREAM_CUH
#define ML_CUDA_BINARY_STREAM_CUH

#include "binary_mm.cuh"

#define KS_WARPS 8
#define KS_ROWS (KS_WARPS * 64)

struct StreamTile {
  uint2 b[NJ]; /* B fragments of tiles j */
  int pc[NJ][2]; /* popcounts of columns 8 j + 2 t + e */
};

/* The 32 references from column c: a lane's pieces; in a partial tile
 * (past n), columns past n clamped to the last (their pairs are not
 * kept). */
__device__ __forceinline__ void stream_load(StreamTile &s, const MmArgs &p, int64_t c, int g,
                                            int t) {
  if (c + NJ * 8 <= p.n) {
    const uint2 *b = (const uint2 *)(p.b + (c + g) * 8) + t;
    const int2 *pc = (const int2 *)(p.pb + c + t * 2);
#pragma unroll
    for (int j = 0; j < NJ; j++) {
      s.b[j] = __ldg(b + j * 8 * 4);
      const int2 v = __ldg(pc + j * 4);
      s.pc[j][0] = v.x;
      s.pc[j][1] = v.y;
    }
    return;
  }
#pragma unroll
  for (int j = 0; j < NJ; j++) {
    const int64_t col = c + j * 8 + g, pcol = c + j * 8 + t * 2;
    s.b[j] = __ldg((const uint2 *)(p.b + (col < p.n ? col : p.n - 1) * 8) + t);
    s.pc[j][0] = p.pb[pcol < p.n ? pcol : p.n - 1];
    s.pc[j][1] = p.pb[pcol + 1 < p.n ? pcol + 1 : p.n - 1];
  }
}

/* The 32 references s from column c against the warp's 64 queries:
 * their pairs below the bounds to the candidates. */
__device__ __forceinline__ void stream_step(const MmArgs &p, const FilterSink &sink,
                                            const uint32_t (&fa)[MI][4], const int (&bound)[MI][2],
                                            const StreamTile &s, int64_t c, int64_t r0, int g,
                                            int t) {
  int acc[MI][NJ][4];
#pragma unroll
  for (int j = 0; j < NJ; j++)
#pragma unroll
    for (int i = 0; i < MI; i++) mma_and_popc<true>(acc[i][j], fa[i], s.b[j].x, s.b[j].y);
  filter_block(sink, acc, s.pc, bound, c + NJ * 8 <= p.n, g, c + t * 2,
               [&](int lr) { return p.pa[r0 + lr]; });
}

__global__ void __launch_bounds__(KS_WARPS * 32, 2) binary_knn_stream(MmArgs p, int64_t chunk) {
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  const int64_t r0 = (int64_t)blockIdx.x * KS_ROWS + warp * 64;
  if (r0 >= p.m) return;
  const FilterSink sink = {p.count, p.cand_d, p.cand_i, p.cap, p.base, p.n, r0};
  uint32_t fa[MI][4];
  int bound[MI][2];
#pragma unroll
  for (int i = 0; i < MI; i++)
#pragma unroll
    for (int h = 0; h < 2; h++) {
      const int64_t row = r0 + i * 16 + g + h * 8;
      const bool ok = row < p.m;
      const uint2 v = __ldg((const uint2 *)(p.a + (ok ? row : r0) * 8) + t);
      fa[i][h] = v.x;
      fa[i][2 + h] = v.y;
      bound[i][h] = ok ? (int)p.thr[row * p.thr_stride] - p.pa[row] : INT_MIN;
    }
  /* two tiles in turn, the next loading while this one computes */
  int64_t c = (int64_t)blockIdx.y * chunk;
  const int64_t end = c + chunk < p.n ? c + chunk : p.n;
  StreamTile x, y;
  stream_load(x, p, c, g, t);
  for (; c < end; c += 2 * NJ * 8) {
    if (c + NJ * 8 < end) stream_load(y, p, c + NJ * 8, g, t);
    stream_step(p, sink, fa, bound, x, c, r0, g, t);
    if (c + NJ * 8 >= end) break;
    if (c + 2 * NJ * 8 < end) stream_load(x, p, c + 2 * NJ * 8, g, t);
    stream_step(p, sink, fa, bound, y, c + NJ * 8, r0, g, t);
  }
}

/* The filter over p (a round of the search: p.m queries, p.n references
 * of w = 8 words) in CTAs of KS_ROWS queries and a chunk of references,
 * about 8 CTAs a multiprocessor in all. */
static int knn_stream(cuda_dev *d, const MmArgs &p, const char *op) {
  const int64_t qb = (p.m + KS_ROWS - 1) / KS_ROWS, want = (int64_t)d->sms * 8;
  const int64_t parts = (want + qb - 1) / qb;
  int64_t chunk = (p.n + parts - 1) / parts;
  chunk = (chunk + NJ * 8 - 1) / (NJ * 8) * (NJ * 8);
  const int64_t ny = (p.n + chunk - 1) / chunk;
  return cuda_launch<binary_knn_stream>(d, dim3((unsigned)qb, (unsigned)ny), KS_WARPS * 32, 0,
                                        op, p, chunk);
}

#endif
