/* The stream filter's references in order of popcount within each round
 * of the search, for binary.cu (included there once): a counting sort of
 * codes of 8 words. Sorted, the 32 references of a step share their
 * popcount but where it changes, so the filter's products start from
 * zero and the step's least popcount goes into the queries' limits
 * (binary_stream.cuh says why).
 *
 * A block takes a tile of ORD_TILE references of one round: order_count
 * adds the tile's popcounts to the round's histogram, order_scan turns
 * each round's histogram into the places where its popcounts start (from
 * the round's first place on, so rounds keep their places), and
 * order_place sorts the tile in shared memory, reserves each popcount's
 * places with one atomic and writes each popcount's run of the tile
 * there in one piece. Within a popcount the references end up in any
 * order: the lists break ties by index, so no result depends on it. (A
 * sort within each tile alone left steps of mixed popcounts, whose looser
 * limits cost the filter more than the sort saved.) */
#ifndef ML_CUDA_BINARY_ORDER_CUH
#define ML_CUDA_BINARY_ORDER_CUH

#include "launch.cuh"
#include "warp.cuh"

#define ORD_THREADS 256
#define ORD_EACH 4 /* references a thread */
#define ORD_TILE (ORD_THREADS * ORD_EACH)
#define ORD_BINS 257 /* popcounts of 256 bits */
/* Each round is at least twice as long as all before it (binary.cu's
 * cuda_binary_knn), so 2^32 references from the first 1024 on take at
 * most 14 rounds. */
#define ORD_ROUNDS 24

struct OrderArgs {
  const uint4 *codes; /* the references, two uint4 each */
  const int *pops;    /* their popcounts */
  int rounds;
  int64_t start[ORD_ROUNDS + 1]; /* round q: references start[q] .. start[q + 1] - 1 */
  int64_t tiles[ORD_ROUNDS + 1]; /* its tiles: tiles[q] .. tiles[q + 1] - 1 */
  uint32_t *bins;                /* rounds x ORD_BINS */
  uint4 *out_codes;              /* the sorted references, at the same places */
  uint32_t *out_index;           /* the index of each */
  int *out_pops;                 /* and its popcount */
};

/* The block's tile: round q's references lo .. lo + len - 1; and its
 * histogram h, cleared. */
__device__ __forceinline__ int order_tile(const OrderArgs &o, uint32_t *h, int &q, int64_t &lo) {
  const int64_t t = blockIdx.x;
  q = 0;
  while (q + 1 < o.rounds && o.tiles[q + 1] <= t) q++;
  lo = o.start[q] + (t - o.tiles[q]) * ORD_TILE;
  for (int b = threadIdx.x; b < ORD_BINS; b += ORD_THREADS) h[b] = 0;
  __syncthreads();
  return (int)(lo + ORD_TILE < o.start[q + 1] ? ORD_TILE : o.start[q + 1] - lo);
}

__global__ void __launch_bounds__(ORD_THREADS) order_count(OrderArgs o) {
  __shared__ uint32_t h[ORD_BINS];
  int q;
  int64_t lo;
  const int len = order_tile(o, h, q, lo);
  for (int j = threadIdx.x; j < len; j += ORD_THREADS) atomicAdd(h + __ldg(o.pops + lo + j), 1u);
  __syncthreads();
  for (int b = threadIdx.x; b < ORD_BINS; b += ORD_THREADS)
    if (h[b]) atomicAdd(o.bins + q * ORD_BINS + b, h[b]);
}

/* A warp's lanes turn n counts c into the sums before each, from run on. */
__device__ __forceinline__ void order_sums(uint32_t *c, int n, uint32_t run, int lane) {
  for (int b0 = 0; b0 < n; b0 += 32) {
    const int b = b0 + lane;
    const uint32_t v = b < n ? c[b] : 0;
    uint32_t s = v;
    for (int d = 1; d < 32; d <<= 1) {
      const uint32_t u = __shfl_up_sync(FULL, s, d);
      if (lane >= d) s += u;
    }
    if (b < n) c[b] = run + s - v;
    run += __shfl_sync(FULL, s, 31);
  }
}

/* A warp a round: its counts to the places where they start. */
__global__ void order_scan(OrderArgs o) {
  order_sums(o.bins + blockIdx.x * ORD_BINS, ORD_BINS, (uint32_t)o.start[blockIdx.x],
             threadIdx.x);
}

__global__ void __launch_bounds__(ORD_THREADS) order_place(OrderArgs o) {
  __shared__ uint32_t at[ORD_BINS], to[ORD_BINS];
  __shared__ uint4 codes[2 * ORD_TILE];
  __shared__ uint32_t index[ORD_TILE];
  __shared__ int pops[ORD_TILE];
  int q;
  int64_t lo;
  const int len = order_tile(o, at, q, lo);
  int p[ORD_EACH];
  uint32_t rank[ORD_EACH];
  uint4 x[ORD_EACH], y[ORD_EACH];
#pragma unroll
  for (int e = 0; e < ORD_EACH; e++) {
    const int j = threadIdx.x + e * ORD_THREADS;
    const bool in = j < len;
    p[e] = in ? __ldg(o.pops + lo + j) : 0;
    x[e] = in ? __ldg(o.codes + 2 * (lo + j)) : make_uint4(0, 0, 0, 0);
    y[e] = in ? __ldg(o.codes + 2 * (lo + j) + 1) : make_uint4(0, 0, 0, 0);
    rank[e] = in ? atomicAdd(at + p[e], 1u) : 0;
  }
  __syncthreads();
  /* the tile's places for each popcount, then where each starts in the tile */
  for (int b = threadIdx.x; b < ORD_BINS; b += ORD_THREADS)
    if (at[b]) to[b] = atomicAdd(o.bins + q * ORD_BINS + b, at[b]);
  __syncthreads();
  if (threadIdx.x < 32) order_sums(at, ORD_BINS, 0, threadIdx.x);
  __syncthreads();
#pragma unroll
  for (int e = 0; e < ORD_EACH; e++) {
    const int j = threadIdx.x + e * ORD_THREADS;
    if (j < len) {
      const uint32_t i = at[p[e]] + rank[e];
      codes[2 * i] = x[e];
      codes[2 * i + 1] = y[e];
      index[i] = (uint32_t)(lo + j);
      pops[i] = p[e];
    }
  }
  __syncthreads();
  /* each popcount's run to its places: consecutive in both */
  for (int i = threadIdx.x; i < len; i += ORD_THREADS) {
    const int b = pops[i];
    const int64_t dst = (int64_t)to[b] + (i - (int)at[b]);
    o.out_codes[2 * dst] = codes[2 * i];
    o.out_codes[2 * dst + 1] = codes[2 * i + 1];
    o.out_index[dst] = index[i];
    o.out_pops[dst] = b;
  }
}

/* The references from start[0] on, in rounds start[q] .. start[q + 1] -
 * 1 (start[rounds] = n), sorted by popcount within each round into the
 * out_ arrays (at the same places). bins: rounds x ORD_BINS words of
 * scratch. */
static int order_rounds(cuda_dev *d, OrderArgs &o, const char *op) {
  o.tiles[0] = 0;
  for (int q = 0; q < o.rounds; q++)
    o.tiles[q + 1] = o.tiles[q] + (o.start[q + 1] - o.start[q] + ORD_TILE - 1) / ORD_TILE;
  const unsigned tiles = (unsigned)o.tiles[o.rounds];
  int rc = cuda_check(
      cudaMemsetAsync(o.bins, 0, (size_t)o.rounds * ORD_BINS * sizeof(uint32_t), d->stream), op);
  if (!rc) rc = cuda_launch<order_count>(d, tiles, ORD_THREADS, 0, op, o);
  if (!rc) rc = cuda_launch<order_scan>(d, (unsigned)o.rounds, 32, 0, op, o);
  if (!rc) rc = cuda_launch<order_place>(d, tiles, ORD_THREADS, 0, op, o);
  return rc;
}

#endif
