/* cumsum and cumprod of long contiguous float rows in one pass: each
 * element is read once and written once (reduce.cu's chunked scan reads
 * the input twice). CPU reference: src/cpu/cpu_cumsum.c (in double, in
 * order; here in double, in the fixed association below).
 *
 * A block scans one tile of TILE_BYTES: it takes the next tile number
 * from a counter (so every tile it waits for belongs to a block that
 * started before it, and the grid cannot deadlock), copies the tile into
 * shared memory by cp.async, and scans it as reduce.cu's cumsum_tiles
 * does: each thread's consecutive elements in order, in double, then a
 * block-wide exclusive scan of the threads' totals. The block's first
 * warp then finds the prefix of everything before the tile by looking
 * back at what earlier tiles published (look_back), and the block writes
 * element i as prefix op (the threads' before op the thread's running
 * value), the association of cumsum_tiles.
 *
 * Decoupled look-back as CUB does it combines the totals it finds
 * backward from the tile, so the rounding depends on how far back it had
 * to go, which changes run to run. Here every combination has an order
 * fixed by the tile's position alone (look_back), so results are the same
 * every run. What a tile waits for is read in one round: each value
 * travels with its state in one 16-byte slot, and a warp reads its
 * group's tiles, then a window of 32 groups, each in one load a lane. */
#include <cub/block/block_scan.cuh>

#include "launch.cuh"
#include "map.cuh"
#include "scan.cuh"
#include "scratch.cuh"
#include "stream.cuh"

namespace {

/* Six blocks an SM: their tiles fill the shared memory, and the
 * registers allow six (with a few spilled) */
constexpr int THREADS = 256, TILE_BYTES = 32768, BLOCKS_PER_SM = 6, GROUP = 32;
constexpr long long EMPTY = 0, AGGREGATE = 1, INCLUSIVE = 2;

/* A published value and its state (EMPTY until set), written and read
 * as one 16-byte access, as CUB's tile states are: a reader that sees the
 * state sees its value, with no fence between them. */
struct __align__(16) slot {
  long long v, state; /* v: a double's bits */
};

/* Where tiles and groups of tiles publish: a tile's total in tile; a
 * group's sum in gagg, its inclusive prefix in gincl. counter hands out
 * tile numbers. */
struct scan_state {
  slot *tile, *gagg, *gincl;
  int *counter;
};

__device__ __forceinline__ void put(slot *p, double v, long long state) {
  asm volatile("st.relaxed.gpu.global.v2.b64 [%0], {%1, %2};" ::"l"(p),
               "l"(__double_as_longlong(v)), "l"(state)
               : "memory");
}

__device__ __forceinline__ slot get(const slot *p) {
  slot r;
  asm volatile("ld.relaxed.gpu.global.v2.b64 {%0, %1}, [%2];"
               : "=l"(r.v), "=l"(r.state)
               : "l"(p)
               : "memory");
  return r;
}

__device__ __forceinline__ double value(const slot &s) { return __longlong_as_double(s.v); }

template <bool P> __device__ __forceinline__ double op(double a, double b) {
  return P ? a * b : a + b;
}

template <class T> struct tile_of {
  static constexpr int N = TILE_BYTES / sizeof(T); /* elements */
  static constexpr int ITEMS = N / THREADS;        /* a thread's, consecutive */
  static constexpr int V = 16 / sizeof(T);         /* elements a 16-byte chunk */
  static constexpr int CHUNKS = N / V;
};

/* Where chunk c of a tile lies in its buffer: each run of 8 chunks in an
 * order of its own, so that the quarter-warp that reads chunk j of 8
 * threads' consecutive runs meets 8 different banks, as does one that
 * copies 8 consecutive chunks. */
__device__ __forceinline__ int swizzled(int c) { return c ^ ((c >> 3) & 7); }

/* Element e of the tile in shared memory. */
template <class T> __device__ __forceinline__ T &at(T *s, int e) {
  constexpr int V = tile_of<T>::V;
  return s[swizzled(e / V) * V + e % V];
}

/* a_0 op ... op a_l in lane l, where lane l holds a_l: a warp's
 * inclusive scan in five steps, whose association in lane l depends on l
 * alone. */
template <bool P> __device__ __forceinline__ double warp_scan(double a) {
  const int lane = threadIdx.x & 31;
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) {
    const double y = __shfl_up_sync(0xffffffffu, a, o);
    if (lane >= o) a = op<P>(y, a);
  }
  return a;
}

/* before(g), the left fold of the sums of the groups before g in its
 * row, whose first is row_first; warp 0. The nearest group j with an
 * inclusive prefix (before(j) op sum(j)) gives it with the sums of the
 * groups after j: the same value whichever j a look-back finds. The
 * window of the 32 groups before g is read at once, prefixes and sums,
 * until it holds a prefix and the sums after it; a window of sums alone
 * sends the search further back. */
template <bool P> __device__ double groups_before(int64_t g, int64_t row_first, const scan_state &st) {
  const int lane = threadIdx.x;
  const int64_t q = g - 1 - lane;
  const bool in_row = q >= row_first;
  slot pre = {0, EMPTY}, sum = {0, EMPTY};
  for (;;) {
    if (in_row) {
      pre = get(st.gincl + q);
      sum = get(st.gagg + q);
    }
    const unsigned found = __ballot_sync(0xffffffffu, pre.state == INCLUSIVE);
    const int jl = found ? __ffs(found) - 1 : 32;
    /* lanes before jl hold the groups after the prefix */
    if (__ballot_sync(0xffffffffu, lane < jl && in_row && sum.state == EMPTY)) continue;
    if (found) {
      double before = __shfl_sync(0xffffffffu, value(pre), jl);
      for (int l = jl - 1; l >= 0; l--) before = op<P>(before, __shfl_sync(0xffffffffu, value(sum), l));
      return before;
    }
    break;
  }
  /* no prefix in the window, whose sums are all set: the rare long way,
   * the nearest prefix further back, then every sum after it in order */
  int64_t j = g - 33;
  for (;; j -= 32) {
    const int64_t r = j - lane;
    slot w = {0, EMPTY};
    if (r >= row_first) do w = get(st.gincl + r);
      while (w.state == EMPTY && get(st.gagg + r).state == EMPTY);
    const unsigned found = __ballot_sync(0xffffffffu, w.state == INCLUSIVE);
    if (found) {
      j -= __ffs(found) - 1;
      break;
    }
  }
  double before = value(get(st.gincl + j));
  for (int64_t r0 = j + 1; r0 < g; r0 += 32) {
    slot w = {0, EMPTY};
    if (r0 + lane < g) do w = get(st.gagg + r0 + lane);
      while (w.state == EMPTY);
    const int n = g - r0 < 32 ? (int)(g - r0) : 32;
    for (int l = 0; l < n; l++) before = op<P>(before, __shfl_sync(0xffffffffu, value(w), l));
  }
  return before;
}

/* The exclusive prefix of tile id, the k-th of its row, whose total is
 * total; warp 0. Tiles form groups of 32 within a row; the prefix is
 *   before(group) op within(id)
 * where within(id) combines the group's earlier tiles' totals as
 * warp_scan does (an order fixed by id's place in its group), and
 * before(g) the groups' sums (groups_before). The last tile of a group
 * publishes the group's sum and then its inclusive prefix, so the
 * critical path is one step a group, not a tile. */
template <bool P>
__device__ double look_back(int64_t id, int64_t k, int64_t tiles_per_row, double total,
                            const scan_state &st) {
  const int lane = threadIdx.x;
  const double id_v = P ? 1.0 : 0.0;
  if (lane == 0) put(st.tile + id, total, AGGREGATE);
  const int64_t first = id - k % GROUP, m = id - first;
  double a = id_v;
  if (lane < m) {
    slot w;
    do w = get(st.tile + first + lane);
    while (w.state == EMPTY);
    a = value(w);
  }
  const double within = m ? __shfl_sync(0xffffffffu, warp_scan<P>(a), (int)m - 1) : id_v;
  const int64_t groups = (tiles_per_row + GROUP - 1) / GROUP;
  const int64_t g = id / tiles_per_row * groups + k / GROUP, gk = k / GROUP;
  const bool last = k % GROUP == GROUP - 1 || k == tiles_per_row - 1;
  const double sum = op<P>(within, total);
  /* a row's first group publishes its prefix alone, where every
   * look-back in the row ends */
  if (last && lane == 0 && gk > 0) put(st.gagg + g, sum, AGGREGATE);
  const double before = gk > 0 ? groups_before<P>(g, g - gk, st) : id_v;
  if (last && lane == 0) put(st.gincl + g, gk > 0 ? op<P>(before, sum) : sum, INCLUSIVE);
  return m ? op<P>(before, within) : before;
}

template <bool P, class T>
__global__ void __launch_bounds__(THREADS, BLOCKS_PER_SM)
    scan_lookback(const T *in, T *out, int64_t len, int64_t tiles_per_row, scan_state st) {
  using S = tile_of<T>;
  using Scan = cub::BlockScan<double, THREADS>;
  using V4 = Vec<T, S::V>;
  constexpr int CPT = S::ITEMS / S::V; /* the thread's 16-byte chunks */
  __shared__ __align__(16) T s[S::N];
  __shared__ typename Scan::TempStorage tmp;
  __shared__ int64_t s_id;
  __shared__ double s_excl;
  const int t = threadIdx.x;
  const double id_v = P ? 1.0 : 0.0;
  if (t == 0) s_id = atomicAdd(st.counter, 1);
  __syncthreads();
  const int64_t id = s_id, k = id % tiles_per_row;
  const int64_t base = id / tiles_per_row * len + k * S::N;
  const int n = len - k * S::N < S::N ? (int)(len - k * S::N) : S::N;
  if (n == S::N) {
#pragma unroll
    for (int c = t; c < S::CHUNKS; c += THREADS)
      cp_async16(s + swizzled(c) * S::V, in + base + c * S::V);
    cp_async_commit();
    cp_async_wait<0>();
  } else {
    for (int e = t; e < S::N; e += THREADS) at(s, e) = e < n ? in[base + e] : T(id_v);
  }
  __syncthreads();
  V4 *sv = reinterpret_cast<V4 *>(s);
  double run = 0;
#pragma unroll
  for (int j = 0; j < CPT; j++) {
    const V4 c = sv[swizzled(t * CPT + j)];
#pragma unroll
    for (int e = 0; e < S::V; e++) run = j || e ? op<P>(run, (double)c.v[e]) : (double)c.v[e];
  }
  double before, total;
  if constexpr (P)
    Scan(tmp).ExclusiveScan(run, before, id_v, [](double a, double b) { return a * b; },
                            total);
  else
    Scan(tmp).ExclusiveSum(run, before, total);
  if (t < 32) {
    const double e = look_back<P>(id, k, tiles_per_row, total, st);
    if (t == 0) s_excl = e;
  }
  __syncthreads();
  const double excl = s_excl;
  double v = 0;
#pragma unroll
  for (int j = 0; j < CPT; j++) {
    V4 c = sv[swizzled(t * CPT + j)];
#pragma unroll
    for (int e = 0; e < S::V; e++) {
      v = j || e ? op<P>(v, (double)c.v[e]) : (double)c.v[e];
      c.v[e] = (T)op<P>(excl, op<P>(before, v));
    }
    sv[swizzled(t * CPT + j)] = c;
  }
  __syncthreads();
  if (n == S::N) {
#pragma unroll
    for (int c = t; c < S::CHUNKS; c += THREADS)
      reinterpret_cast<V4 *>(out + base)[c] = sv[swizzled(c)];
  } else {
    for (int e = t; e < n; e += THREADS) out[base + e] = at(s, e);
  }
}

template <bool P, class T>
int run(cuda_dev *d, const T *in, T *out, int64_t nrows, int64_t len, const char *name) {
  const int64_t per_row = (len + tile_of<T>::N - 1) / tile_of<T>::N, tiles = nrows * per_row;
  const int64_t groups = nrows * ((per_row + GROUP - 1) / GROUP);
  if (tiles > INT32_MAX)
    return ml_fail(ML_EINVAL, "%s: %lld tiles are more than one launch holds", name,
                   (long long)tiles);
  /* the slots and the counter, all zeroed (EMPTY) */
  const size_t bytes = (size_t)(tiles + 2 * groups) * sizeof(slot) + sizeof(int);
  cuda_scratch scratch;
  int rc = scratch.get(d->index, bytes, name);
  if (rc) return rc;
  scan_state st;
  st.tile = scratch.as<slot>();
  st.gagg = st.tile + tiles;
  st.gincl = st.gagg + groups;
  st.counter = (int *)(st.gincl + groups);
  rc = cuda_check(cudaMemsetAsync(scratch.ptr, 0, bytes, d->stream), name);
  if (!rc) rc = prefer_shared<scan_lookback<P, T>>(d, name);
  if (!rc)
    rc = cuda_launch<scan_lookback<P, T>>(d, (unsigned)tiles, THREADS, 0, name, in, out, len,
                                          per_row, st);
  return rc;
}

} // namespace

bool scan_lookback_fits(const ml_array *out, const ml_array *in) {
  if (in->dtype != ML_FLOAT32 && in->dtype != ML_FLOAT64) return false;
  if (!ml_array_is_contiguous(in) || !ml_array_is_contiguous(out) || in->ndim < 1) return false;
  const int64_t len = in->shape[in->ndim - 1], nrows = ml_array_numel(in) / len;
  const int64_t v = 16 / (int64_t)ml_dtype_size(in->dtype);
  const int64_t tile = TILE_BYTES / (int64_t)ml_dtype_size(in->dtype);
  return len >= 4 * tile && (uintptr_t)ml_array_data(in) % 16 == 0 &&
         (uintptr_t)ml_array_data(out) % 16 == 0 && (nrows == 1 || len % v == 0);
}

int scan_lookback(cuda_dev *d, bool product, const ml_array *out, const ml_array *in) {
  const int64_t len = in->shape[in->ndim - 1], nrows = ml_array_numel(in) / len;
  const char *name = product ? "cumprod" : "cumsum";
  if (in->dtype == ML_FLOAT32) {
    const float *i = (const float *)ml_array_data(in);
    float *o = (float *)ml_array_data(out);
    return product ? run<true>(d, i, o, nrows, len, name) : run<false>(d, i, o, nrows, len, name);
  }
  const double *i = (const double *)ml_array_data(in);
  double *o = (double *)ml_array_data(out);
  return product ? run<true>(d, i, o, nrows, len, name) : run<false>(d, i, o, nrows, len, name);
}
