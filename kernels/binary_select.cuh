/* The Hamming kNN's selection by counting, for binary.cu (included there
 * once, after the pairs' sources of its knn_row): a warp a query, k <=
 * CS_KMAX and codes of CS_BITS or fewer, so that the keys are small
 * integers. A row's pairs (its list and the new candidates) give the
 * k-th distance T and how many pairs lie below it; those are kept, then
 * the pairs at T by increasing index, and the k kept are ranked into the
 * list. Where the pairs fit in registers (CS_HELD_TILE a lane for a
 * tile of references, which knn_select sends here only where its rows
 * fit, CS_HELD_FILTER for a round's candidates and the list), they are
 * loaded once and T is found by bisection on counts summed over the
 * warp. A round's row whose candidates overflowed (the round's
 * references again) goes through a histogram in shared memory, and a
 * second pass over its pairs keeps those below T (when that path served
 * the first chunk of 1024 references of 10^4 queries it took 61 us; the
 * registers take 42). select.cuh's engine, which inserts the pairs one
 * by one, took 150 us for that chunk and about 65 us a round for the
 * filter's candidates (H200). */
#ifndef ML_CUDA_BINARY_SELECT_CUH
#define ML_CUDA_BINARY_SELECT_CUH

#define CS_KMAX 32
#define CS_BITS 1024
#define CS_BINS (CS_BITS + 1)
#define CS_WARPS 4
#define CS_TIES 128
/* the pairs a lane holds: a round's candidates and list (at most
 * KNN_CAP + CS_KMAX, so that every row that did not overflow fits), a
 * tile's references and list */
#define CS_HELD_FILTER 9
#define CS_HELD_TILE 32
static_assert(8 * CS_KMAX <= KNN_CAP && KNN_CAP + CS_KMAX <= 32 * CS_HELD_FILTER,
              "a round's pairs fit the registers (cap = KNN_CAP for k <= CS_KMAX)");
static_assert(KNN_SAMPLE <= 32 * CS_HELD_TILE, "the first chunk is selected in registers");
/* a distance that no pair has: an empty place of the list (none_key) */
#define CS_NONE 0xFFFFFFFFu

/* Pair e of row i's stream in a round of the filter where its
 * candidates overflowed: its old list (k places), then the round's
 * references again (binary.cu's knn_old, knn_again); d = CS_NONE for an
 * empty place. */
__device__ __forceinline__ void cs_pair(const KnnArgs &a, int64_t i, int64_t old, int64_t e,
                                        uint32_t &d, int64_t &id) {
  if (e < old) knn_old(a, i, e, d, id);
  else knn_again(a, i, e - old, d, id);
}

/* The k-th least distance of a row (CS_NONE where it has fewer than k
 * pairs), from its histogram h of bins 0 .. bins - 1, each lane summing a
 * block of them. */
__device__ __forceinline__ uint32_t cs_threshold(const int *h, int bins, int64_t k, int lane) {
  const int per = (bins + 31) / 32, lo = lane * per, hi = lo + per < bins ? lo + per : bins;
  int sum = 0;
  for (int b = lo; b < hi; b++) sum += h[b];
  int cum = sum;
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) {
    const int v = __shfl_up_sync(FULL, cum, o);
    if (lane >= o) cum += v;
  }
  const unsigned reach = __ballot_sync(FULL, cum >= k);
  if (!reach) return CS_NONE;
  const int src = __ffs(reach) - 1;
  int t = hi;
  if (lane == src)
    for (int b = lo, below = cum - sum; b < hi; b++) {
      below += h[b];
      if (below >= k) {
        t = b;
        break;
      }
    }
  return (uint32_t)__shfl_sync(FULL, t, src);
}

/* The kept pairs (distance << 32 | index - 1, all different) ranked
 * into row i's list, its places past kept empty. */
__device__ __forceinline__ void cs_rank(const KnnArgs &a, int64_t i,
                                        const unsigned long long *keep, int kept, int lane) {
  __syncwarp();
  const unsigned long long mine = lane < kept ? keep[lane] : ~0ull;
  int rank = 0;
  for (int j = 0; j < kept; j++) rank += __shfl_sync(FULL, mine, j) < mine;
  if (lane < kept) {
    a.dist[i * a.k + rank] = (uint32_t)(mine >> 32);
    a.index[i * a.k + rank] = (int64_t)(uint32_t)mine + 1;
  } else if (lane < a.k) {
    a.dist[i * a.k + lane] = CS_NONE;
    a.index[i * a.k + lane] = INT64_MAX;
  }
  __syncwarp();
}

/* How many of the warp's held distances are t or less. */
template <int U>
__device__ __forceinline__ unsigned cs_at_most(const uint32_t (&d)[U], uint32_t t) {
  unsigned c = 0;
#pragma unroll
  for (int u = 0; u < U; u++) c += d[u] <= t;
  return __reduce_add_sync(FULL, c);
}

/* Row i's len pairs (old from its list, then its tile's or its
 * candidates, which did not overflow) held in registers, pair 32 u + lane
 * in d[u] (CS_NONE past len and for an empty place) and ix[u] (its index
 * - 1); keep: the warp's CS_KMAX places. T is the least distance with k
 * pairs at or below it, bisected between the least distance and the
 * largest bin (CS_NONE where fewer than k pairs are not empty). */
template <int SRC, int U>
__device__ void cs_row_held(const KnnArgs &a, int64_t i, int64_t old, int64_t len, int lane,
                            int bins, unsigned long long *keep) {
  uint32_t d[U], ix[U];
#pragma unroll
  for (int u = 0; u < U; u++) {
    const int64_t e = (int64_t)u * 32 + lane;
    int64_t id = 1;
    d[u] = CS_NONE;
    if (e < old) knn_old(a, i, e, d[u], id);
    else if (e < len && SRC == SRC_TILE) knn_tile(a, i, e - old, d[u], id);
    else if (e < len) knn_cand(a, i, e - old, d[u], id);
    ix[u] = (uint32_t)(id - 1);
  }
  uint32_t T = CS_NONE;
  if (cs_at_most(d, (uint32_t)bins - 1) >= a.k) {
    uint32_t lo = CS_NONE, hi = (uint32_t)bins - 1;
#pragma unroll
    for (int u = 0; u < U; u++) lo = min(lo, d[u]);
    lo = __reduce_min_sync(FULL, lo);
    while (lo < hi) {
      const uint32_t mid = (lo + hi) / 2;
      if (cs_at_most(d, mid) >= a.k) hi = mid;
      else lo = mid + 1;
    }
    T = hi;
  }
  /* the pairs below T (fewer than k; all that are not empty where T is
   * CS_NONE), then those at T, least index first */
  const unsigned below = (1u << lane) - 1;
  int kept = 0;
#pragma unroll
  for (int u = 0; u < U; u++) {
    const bool in = d[u] < T;
    const unsigned b = __ballot_sync(FULL, in);
    if (in) keep[kept + __popc(b & below)] = (unsigned long long)d[u] << 32 | ix[u];
    kept += __popc(b);
  }
  for (int64_t last = -1; T != CS_NONE && kept < a.k; kept++) {
    uint32_t least = CS_NONE;
#pragma unroll
    for (int u = 0; u < U; u++)
      if (d[u] == T && (int64_t)ix[u] > last) least = min(least, ix[u]);
    least = __reduce_min_sync(FULL, least);
    if (lane == 0) keep[kept] = (unsigned long long)T << 32 | least;
    last = least;
  }
  cs_rank(a, i, keep, kept, lane);
}

/* Row i of a round of the filter through the histogram, where its pairs
 * do not fit the registers (the round's references again, where its
 * candidates overflowed), lane by lane of its warp; hist: the warp's
 * bins, keep: its CS_KMAX places, each a key distance << 32 | index - 1
 * (indices below 2^32, as the filter's candidates); ties: its CS_TIES
 * indices of pairs at the k-th distance. */
static __device__ void cs_row(const KnnArgs &a, int64_t i, int64_t old, int64_t len, int lane,
                              int bins, int *hist, unsigned long long *keep, int64_t *ties) {
  for (int b = lane; b < bins; b += 32) hist[b] = 0;
  __syncwarp();
  for (int64_t e = lane; e < len; e += 32) {
    uint32_t d;
    int64_t id;
    cs_pair(a, i, old, e, d, id);
    if (d != CS_NONE) atomicAdd(hist + d, 1);
  }
  __syncwarp();
  const uint32_t T = cs_threshold(hist, bins, a.k, lane);
  /* the pairs below T (fewer than k; all of them where T is CS_NONE),
   * and the first CS_TIES pairs at T aside */
  int kept = 0, at_t = 0;
  for (int64_t e0 = 0; e0 < len; e0 += 32) {
    const int64_t e = e0 + lane;
    uint32_t d = CS_NONE;
    int64_t id = 0;
    if (e < len) cs_pair(a, i, old, e, d, id);
    const bool in = d != CS_NONE && d < T, tie = d != CS_NONE && d == T;
    const unsigned below = (1u << lane) - 1, b = __ballot_sync(FULL, in),
                   bt = __ballot_sync(FULL, tie);
    const int slot = at_t + __popc(bt & below);
    if (in) keep[kept + __popc(b & below)] = (unsigned long long)d << 32 | (uint32_t)(id - 1);
    if (tie && slot < CS_TIES) ties[slot] = id;
    kept += __popc(b);
    at_t += __popc(bt);
  }
  __syncwarp();
  /* then the pairs at T, least index first: from those set aside, or
   * where more than CS_TIES tie, a pass over the row for each */
  for (int64_t last = 0; T != CS_NONE && kept < a.k; kept++) {
    int64_t least = INT64_MAX;
    if (at_t <= CS_TIES) {
      for (int j = lane; j < at_t; j += 32)
        if (ties[j] > last && ties[j] < least) least = ties[j];
    } else {
      for (int64_t e = lane; e < len; e += 32) {
        uint32_t d;
        int64_t id;
        cs_pair(a, i, old, e, d, id);
        if (d == T && id > last && id < least) least = id;
      }
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
      const int64_t v = __shfl_xor_sync(FULL, least, o);
      least = v < least ? v : least;
    }
    if (lane == 0) keep[kept] = (unsigned long long)T << 32 | (uint32_t)(least - 1);
    last = least;
  }
  cs_rank(a, i, keep, kept, lane);
}

/* A warp a row: in registers, but for a round's rows whose candidates
 * overflowed (a tile comes here only where its rows fit: knn_select). */
template <int SRC> __global__ void __launch_bounds__(CS_WARPS * 32) binary_knn_count(KnnArgs a) {
  __shared__ int hist[CS_WARPS][CS_BINS];
  __shared__ unsigned long long keep[CS_WARPS][CS_KMAX];
  __shared__ int64_t ties[CS_WARPS][CS_TIES];
  const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
  const int bins = (int)(a.w * 32 + 1);
  for (int64_t i = (int64_t)blockIdx.x * CS_WARPS + wid; i < a.mt;
       i += (int64_t)gridDim.x * CS_WARPS) {
    const int64_t old = a.first ? 0 : a.k, len = old + knn_new<SRC>(a, i);
    if constexpr (SRC == SRC_TILE)
      cs_row_held<SRC, CS_HELD_TILE>(a, i, old, len, lane, bins, keep[wid]);
    else if (a.count[i] <= a.cap)
      cs_row_held<SRC, CS_HELD_FILTER>(a, i, old, len, lane, bins, keep[wid]);
    else
      cs_row(a, i, old, len, lane, bins, hist[wid], keep[wid], ties[wid]);
  }
}

#endif
