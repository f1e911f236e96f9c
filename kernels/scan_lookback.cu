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
 * every run. Flags and values are read past L1 (another SM wrote them). */
#include <cub/block/block_scan.cuh>

#include "launch.cuh"
#include "map.cuh"
#include "scan.cuh"
#include "scratch.cuh"
#include "stream.cuh"

namespace {

constexpr int THREADS = 256, TILE_BYTES = 32768;
constexpr int EMPTY = 0, AGGREGATE = 1, INCLUSIVE = 2;

/* Where tiles and groups of tiles publish: flags (EMPTY until set) and
 * values, a tile's total in agg; a group's sum in gagg, its inclusive
 * prefix in gincl. counter hands out tile numbers. */
struct scan_state {
  int *flag, *gflag, *counter;
  double *agg, *gagg, *gincl;
};

template <bool P> __device__ __forceinline__ double op(double a, double b) {
  return P ? a * b : a + b;
}

template <class T> struct tile_of {
  static constexpr int N = TILE_BYTES / sizeof(T); /* elements */
  static constexpr int ITEMS = N / THREADS;        /* a thread's, consecutive */
  static constexpr int V = 16 / sizeof(T);         /* elements a 16-byte chunk */
  static constexpr int CHUNKS = N / V;
  /* one pad chunk after every 8: the quarter-warp that reads chunk j of
   * 8 threads' consecutive chunks then meets 8 different banks */
  static constexpr int PADDED = CHUNKS + CHUNKS / 8;
};

__device__ __forceinline__ int padded(int chunk) { return chunk + chunk / 8; }

/* Element e of the tile in shared memory. */
template <class T> __device__ __forceinline__ T &at(T *s, int e) {
  constexpr int V = tile_of<T>::V;
  return s[padded(e / V) * V + e % V];
}

/* Waits until flag[q] leaves EMPTY; returns it. */
__device__ __forceinline__ int wait_flag(const int *flag, int64_t q) {
  const volatile int *vf = flag;
  int f;
  do f = vf[q];
  while (f == EMPTY);
  return f;
}

/* Publishes v in slot q of value, then state in flag[q]. */
__device__ __forceinline__ void publish(int *flag, double *value, int64_t q, double v,
                                        int state) {
  value[q] = v;
  __threadfence();
  *(volatile int *)(flag + q) = state;
}

/* e op a_0 op ... op a_(m-1), left to right, where lane l holds a_l. */
template <bool P> __device__ __forceinline__ double fold(double e, double a, int m) {
  for (int l = 0; l < m; l++) e = op<P>(e, __shfl_sync(0xffffffffu, a, l));
  return e;
}

/* The exclusive prefix of tile id, the k-th of its row, whose total is
 * total; warp 0. Tiles form groups of 32 within a row; the prefix is
 *   before(group) op (total(first) op ... op total(id - 1))
 * (a left fold over the group's earlier tiles), where before(g) is the
 * left fold of the groups' sums (each the left fold of its 32 tiles)
 * from the row's start. The last tile of a group publishes the group's
 * sum and then the group's inclusive prefix; a group's first tile looks
 * back over the groups for the nearest inclusive prefix and folds
 * forward from it, which gives the same before(g) wherever it starts.
 * So the critical path is one step a group, not a tile. */
template <bool P>
__device__ double look_back(int64_t id, int64_t k, int64_t tiles_per_row, double total,
                            const scan_state &st) {
  const int lane = threadIdx.x;
  const double id_v = P ? 1.0 : 0.0;
  if (lane == 0) publish(st.flag, st.agg, id, total, AGGREGATE);
  const int64_t first = id - k % 32, m = id - first;
  double a = id_v;
  if (lane < m) {
    wait_flag(st.flag, first + lane);
    __threadfence();
    a = __ldcg(st.agg + first + lane);
  }
  const double within = fold<P>(id_v, a, (int)m);
  const int64_t groups = (tiles_per_row + 31) / 32;
  const int64_t g = id / tiles_per_row * groups + k / 32, gk = k / 32;
  const bool last = k % 32 == 31 || k == tiles_per_row - 1;
  const double sum = op<P>(within, total);
  /* a row's first group goes from EMPTY to INCLUSIVE at once, so that a
   * look-back that reaches it always stops there */
  if (last && lane == 0 && gk > 0) publish(st.gflag, st.gagg, g, sum, AGGREGATE);
  double before = id_v;
  if (gk > 0) {
    const int64_t row_first = g - gk;
    int64_t hi = g - 1, j;
    for (;;) {
      const int64_t q = hi - lane;
      const int f = q >= row_first ? wait_flag(st.gflag, q) : EMPTY;
      const unsigned found = __ballot_sync(0xffffffffu, f == INCLUSIVE);
      if (found) {
        j = hi - (__ffs(found) - 1);
        break;
      }
      hi -= 32;
    }
    /* the lanes that saw the flags are not those that read the values */
    __syncwarp();
    __threadfence();
    before = __ldcg(st.gincl + j);
    for (int64_t q0 = j + 1; q0 < g; q0 += 32) {
      const double ga = q0 + lane < g ? __ldcg(st.gagg + q0 + lane) : id_v;
      before = fold<P>(before, ga, g - q0 < 32 ? (int)(g - q0) : 32);
    }
  }
  if (last && lane == 0)
    publish(st.gflag, st.gincl, g, gk > 0 ? op<P>(before, sum) : sum, INCLUSIVE);
  return m ? op<P>(before, within) : before;
}

template <bool P, class T>
__global__ void __launch_bounds__(THREADS)
    scan_lookback(const T *in, T *out, int64_t len, int64_t tiles_per_row, scan_state st) {
  using S = tile_of<T>;
  using Scan = cub::BlockScan<double, THREADS>;
  __shared__ __align__(16) T s[S::PADDED * S::V];
  __shared__ typename Scan::TempStorage tmp;
  __shared__ int64_t s_id;
  __shared__ double s_excl;
  const int t = threadIdx.x;
  if (t == 0) s_id = atomicAdd(st.counter, 1);
  __syncthreads();
  const int64_t id = s_id, k = id % tiles_per_row;
  const int64_t base = id / tiles_per_row * len + k * S::N;
  const int n = len - k * S::N < S::N ? (int)(len - k * S::N) : S::N;
  const double id_v = P ? 1.0 : 0.0;
  if (n == S::N) {
#pragma unroll
    for (int c = t; c < S::CHUNKS; c += THREADS)
      cp_async16(s + padded(c) * S::V, in + base + c * S::V);
    cp_async_commit();
    cp_async_wait<0>();
  } else {
    for (int e = t; e < S::N; e += THREADS) at(s, e) = e < n ? in[base + e] : T(id_v);
  }
  __syncthreads();
  /* the thread's ITEMS elements: CPT chunks, read 16 bytes at a time */
  using V4 = Vec<T, S::V>;
  constexpr int CPT = S::ITEMS / S::V;
  V4 *sv = reinterpret_cast<V4 *>(s);
  double run = 0;
#pragma unroll
  for (int j = 0; j < CPT; j++) {
    const V4 c = sv[padded(t * CPT + j)];
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
    V4 c = sv[padded(t * CPT + j)];
#pragma unroll
    for (int e = 0; e < S::V; e++) {
      v = j || e ? op<P>(v, (double)c.v[e]) : (double)c.v[e];
      c.v[e] = (T)op<P>(excl, op<P>(before, v));
    }
    sv[padded(t * CPT + j)] = c;
  }
  __syncthreads();
  if (n == S::N) {
#pragma unroll
    for (int c = t; c < S::CHUNKS; c += THREADS)
      reinterpret_cast<V4 *>(out + base)[c] = sv[padded(c)];
  } else {
    for (int e = t; e < n; e += THREADS) out[base + e] = at(s, e);
  }
}

template <bool P, class T>
int run(cuda_dev *d, const T *in, T *out, int64_t nrows, int64_t len, const char *name) {
  const int64_t per_row = (len + tile_of<T>::N - 1) / tile_of<T>::N, tiles = nrows * per_row;
  const int64_t groups = nrows * ((per_row + 31) / 32);
  if (tiles > INT32_MAX)
    return ml_fail(ML_EINVAL, "%s: %lld tiles are more than one launch holds", name,
                   (long long)tiles);
  /* the flags and the counter (zeroed), then the values */
  const size_t flags = (size_t)(tiles + groups + 1) * sizeof(int);
  const size_t at = (flags + 15) / 16 * 16;
  cuda_scratch scratch;
  int rc = scratch.get(d->index, at + (size_t)(tiles + 2 * groups) * sizeof(double), name);
  if (rc) return rc;
  char *p = scratch.as<char>();
  scan_state st;
  st.flag = (int *)p;
  st.gflag = st.flag + tiles;
  st.counter = st.gflag + groups;
  st.agg = (double *)(p + at);
  st.gagg = st.agg + tiles;
  st.gincl = st.gagg + groups;
  rc = cuda_check(cudaMemsetAsync(p, 0, flags, d->stream), name);
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
