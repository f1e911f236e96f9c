/* k nearest neighbours: the kNN area's table, and its entries tile and
 * refine (filter and sample are in knn_filter.cu; contracts in
 * core/knn_backend.h; the algorithm, its tiling, its retries and its error
 * bound in core/knn.c).
 *
 * CPU reference: src/cpu/cpu_knn.c. The results are the CPU's, bit for
 * bit: the exact keys are computed in the same operations in the same
 * order (double, coordinates in order, no fused multiply-adds: the
 * __d*_rn intrinsics), and candidates are ordered by (key, index) with
 * keys compared as the order keys of core/order_key.h (-0 as +0, NaN
 * last), a strict total order, so the selected pairs do not depend on how
 * the search was split. Only the fast keys, which merely choose candidates,
 * differ in their last bits (cuBLAS sums in its own order).
 *
 * Selection: the engine of select.cuh, a warp (or for long lists a block)
 * a row, with a quick test of candidate keys against the threshold as
 * values.
 *
 * tile: cuBLAS (FP32, TF32 when the core asks, or FP64, through
 * cuda_gemm) writes the dot products to the work block, and
 * knn_select_* scans its rows, a warp (or a block) a row, turning dot
 * products into keys on the way.
 *
 * refine: a warp (a block when k > WARP_L) a query row; each thread
 * computes the exact keys of its candidates, and the group selects the k
 * best and checks the error bound; short filtered lists go through
 * knn_refine_short's warp minima instead.
 *
 * bounded: below, and for k = 1 on tensor cores knn_nearest_tc.cu. */
#include <math.h>

#include <type_traits>

#include "launch.cuh"
#include "map.cuh"
#include "scratch.cuh"
#include "knn_bounded.cuh"
#include "select.cuh"

/* The threshold's value for the float test: NaN (everything passes)
 * while the list has empty places. Read after a sync of the group. */
template <class T> __device__ __forceinline__ T sel_threshold(const Lists<key_type<T>> &w) {
  return ml_order_key_value(w.st->thk);
}

/* Offers U candidates a thread (a NaN key is taken as it is); thv is the
 * caller's copy of the threshold's value. Every thread of the group calls
 * it alike. */
template <class T, int G, int BB, int U>
__device__ __forceinline__ void sel_add(const Lists<key_type<T>> &w, int tid, T &thv,
                                        Cands<T, U> &c) {
  bool any = false;
#pragma unroll
  for (int u = 0; u < U; u++) {
    c.ok[u] = c.ok[u] && !(c.key[u] > thv);
    any |= c.ok[u];
  }
  if (G == 32 ? __any_sync(FULL, any) : __syncthreads_or(any)) {
    sel_offer<T, G, BB, U>(w, tid, c);
    thv = sel_threshold<T>(w);
  }
}

/* ---- knn_tile ---- */

template <class T> struct TileArgs {
  ml_knn_metric metric;
  int64_t mt, nt, d, c, base;
  const T *q, *refs, *work, *qaux, *raux;
  const int64_t *self;
  T *keys;
  int64_t *index;
  key_type<T> *lk; /* scratch: mt x 2c pairs, the lists of a block a row */
  int64_t *li;
};

/* The fast key (backend.h) from the dot product p; NaN counts as +inf. */
template <class T>
__device__ __forceinline__ T fast_key(ml_knn_metric metric, T p, T qa, T ra) {
  T x = metric == ML_KNN_COSINE ? 1 - p * qa * ra : metric == ML_KNN_IP ? -p : (qa + ra) - 2 * p;
  return x != x ? (T)INFINITY : x;
}

/* Starts row i's selection with its old list (empty places left out). */
template <class T, int G, int BB>
__device__ void tile_start(const TileArgs<T> &a, const Lists<key_type<T>> &w, int tid, int64_t i,
                           T &thv) {
  sel_start<key_type<T>, G>(w, tid);
  thv = sel_threshold<T>(w);
  for (int64_t p0 = 0; p0 < a.c; p0 += G) {
    int64_t p = p0 + tid;
    Cands<T, 1> c;
    c.ok[0] = p < a.c;
    c.key[0] = c.ok[0] ? a.keys[i * a.c + p] : T(0);
    c.id[0] = c.ok[0] ? a.index[i * a.c + p] : 0;
    c.ok[0] = c.ok[0] && c.id[0] != INT64_MAX;
    if (c.key[0] != c.key[0]) c.key[0] = (T)INFINITY;
    sel_add<T, G, BB, 1>(w, tid, thv, c);
  }
}

/* Row i's final list into keys and index, empty places as (+inf,
 * INT64_MAX). */
template <class T, int G, int BB>
__device__ void tile_store(const TileArgs<T> &a, const Lists<key_type<T>> &w, int tid, int64_t i) {
  sel_finish<key_type<T>, G, BB>(w, tid);
  int64_t off = w.st->cur * w.L;
  for (int64_t p = tid; p < a.c; p += G) {
    int64_t id = w.li[off + p];
    a.keys[i * a.c + p] = id == INT64_MAX ? (T)INFINITY : ml_order_key_value(w.lk[off + p]);
    a.index[i * a.c + p] = id;
  }
  group_sync<G>();
}

/* Row i of the work block through the selection w, U keys a thread at a
 * time. */
template <class T, int G, int BB, int U>
__device__ void tile_row(const TileArgs<T> &a, const Lists<key_type<T>> &w, int tid, int64_t i) {
  T thv;
  tile_start<T, G, BB>(a, w, tid, i, thv);
  const T *row = a.work + i * a.nt;
  const T qa = a.qaux ? a.qaux[i] : T(0);
  const int64_t self = a.self ? a.self[i] : 0;
  for (int64_t j0 = 0; j0 < a.nt; j0 += (int64_t)G * U) {
    Cands<T, U> c;
    T p[U], ra[U];
#pragma unroll
    for (int u = 0; u < U; u++) {
      int64_t j = j0 + tid + (int64_t)G * u;
      c.ok[u] = j < a.nt;
      p[u] = c.ok[u] ? __ldcs(row + j) : T(0); /* read once: keep raux in L1 */
      ra[u] = c.ok[u] && a.raux ? __ldg(a.raux + j) : T(0);
    }
#pragma unroll
    for (int u = 0; u < U; u++) {
      c.key[u] = fast_key(a.metric, p[u], qa, ra[u]);
      c.id[u] = a.base + j0 + tid + (int64_t)G * u + 1;
      c.ok[u] = c.ok[u] && c.id[u] != self;
    }
    sel_add<T, G, BB, U>(w, tid, thv, c);
  }
  tile_store<T, G, BB>(a, w, tid, i);
}

/* The GEMM path's selection, a warp a row of the work block (lists in
 * shared memory, c <= WARP_L), 2 x 16 bytes a lane at a time. */
template <class T>
__global__ void __launch_bounds__(SEL_WARPS * 32) knn_select_warp(TileArgs<T> a) {
  using K = key_type<T>;
  extern __shared__ __align__(16) unsigned char smem[];
  const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
  const size_t per = sel_bytes<K>(a.c, WARP_BB + 32);
  Lists<K> w = sel_carve<K>(smem + wid * per, a.c, WARP_BB + 32, true, nullptr, nullptr);
  for (int64_t i = (int64_t)blockIdx.x * SEL_WARPS + wid; i < a.mt;
       i += (int64_t)gridDim.x * SEL_WARPS)
    tile_row<T, 32, WARP_BB, 32 / sizeof(T)>(a, w, lane, i);
}

/* Likewise a block a row, for lists longer than WARP_L (in global
 * scratch). */
template <class T> __global__ void __launch_bounds__(BLOCK_G) knn_select_block(TileArgs<T> a) {
  using K = key_type<T>;
  __shared__ __align__(16) unsigned char smem[sel_bytes<K>(0, BLOCK_BB + BLOCK_G)];
  for (int64_t i = blockIdx.x; i < a.mt; i += gridDim.x) {
    Lists<K> w = sel_carve<K>(smem, a.c, BLOCK_BB + BLOCK_G, false, a.lk + i * 2 * a.c,
                              a.li + i * 2 * a.c);
    tile_row<T, BLOCK_G, BLOCK_BB, 1>(a, w, threadIdx.x, i);
  }
}

template <class T> static int tile_typed(cuda_dev *d, const ml_knn_tile *t) {
  using K = key_type<T>;
  TileArgs<T> a;
  a.metric = t->metric;
  a.mt = t->queries->shape[0];
  a.nt = t->refs->shape[0];
  a.d = t->queries->shape[1];
  a.c = t->keys->shape[1];
  a.base = t->base;
  a.q = array_ptr<const T>(t->queries);
  a.refs = array_ptr<const T>(t->refs);
  a.work = array_ptr<const T>(t->work);
  a.qaux = t->qaux ? array_ptr<const T>(t->qaux) : nullptr;
  a.raux = t->raux ? array_ptr<const T>(t->raux) : nullptr;
  a.self = t->self ? array_ptr<const int64_t>(t->self) : nullptr;
  a.keys = array_ptr<T>(t->keys);
  a.index = array_ptr<int64_t>(t->index);
  a.lk = nullptr;
  a.li = nullptr;
  cuda_scratch lk, li;
  if (a.c > WARP_L) {
    size_t pairs = (size_t)(a.mt * 2 * a.c);
    int rc = lk.get(d->index, pairs * sizeof(K), "knn");
    if (!rc) rc = li.get(d->index, pairs * sizeof(int64_t), "knn");
    if (rc) return rc;
    a.lk = lk.as<K>();
    a.li = li.as<int64_t>();
  }
  ml_gemm g = {t->queries->dtype, ml_array_device(t->queries), 0, 1, a.mt, a.nt, a.d, 1,
               a.q, a.d, 0, a.refs, a.d, 0, (void *)a.work, a.nt, 0, t->tf32};
  int rc = cuda_gemm(&g);
  if (rc) return rc;
  if (a.c <= WARP_L)
    return cuda_launch<knn_select_warp<T>>(d, blocks_for(a.mt, SEL_WARPS), SEL_WARPS * 32,
                                           SEL_WARPS * sel_bytes<K>(a.c, WARP_BB + 32), "knn",
                                           a);
  return cuda_launch<knn_select_block<T>>(d, blocks_for(a.mt, 1), BLOCK_G, 0, "knn", a);
}

static int knn_tile(const ml_knn_tile *t) {
  cuda_dev *d;
  int rc = cuda_enter(array_device(t->queries), &d);
  if (rc || t->queries->shape[0] == 0 || t->refs->shape[0] == 0) return rc;
  return t->queries->dtype == ML_FLOAT32 ? tile_typed<float>(d, t) : tile_typed<double>(d, t);
}

/* ---- knn_refine ---- */

template <class T> struct RefineArgs {
  ml_knn_metric metric;
  int all;
  int64_t mt, n, d, c, k;
  const T *q, *refs, *keys;
  const int64_t *index;
  const double *bound;
  T *dist;
  int64_t *nearest;
  uint8_t *ok;
  uint64_t *lk; /* scratch: mt x 2k pairs, the lists of a block a row */
  int64_t *li;
  const int64_t *count; /* or NULL: lists from knn_filter, with limit */
  const T *limit;
};

/* A filtered list's rows are short: at most SHORT pairs go through
 * knn_refine_short instead, a warp a row, SHORT / 32 pairs a lane. */
#define SHORT 512

/* Coordinates t .. t + 3 of the row x as doubles: one 16-byte load for
 * float32 rows when vec (d a multiple of 4 and the rows aligned), which
 * saves the L1 most of a warp's gathers of scattered rows. */
template <class T>
__device__ __forceinline__ void quad(const T *x, int64_t t, bool vec, double *v) {
  if (std::is_same<T, float>::value && vec) {
    const float4 f = *reinterpret_cast<const float4 *>(x + t);
    v[0] = f.x, v[1] = f.y, v[2] = f.z, v[3] = f.w;
  } else {
#pragma unroll
    for (int k = 0; k < 4; k++) v[k] = (double)x[t + k];
  }
}

/* Whether quad may load rows of d floats at x in vectors. */
template <class T> __device__ __forceinline__ bool quad_ok(const T *x, int64_t d) {
  return d % 4 == 0 && (uintptr_t)x % 16 == 0;
}

/* The exact key (backend.h) of q and r, cpu_knn.c's operations in its
 * order; qnorm: |q|, for the cosine. The coordinates come four at a time
 * (quad), the operations stay one coordinate after the other; the loops
 * unroll so that several quads' loads are in flight before their sums. */
template <class T>
__device__ double exact_key(ml_knn_metric metric, const T *q, const T *r, int64_t d,
                            double qnorm) {
  const bool vec = quad_ok(q, d) && quad_ok(r, d);
  const int64_t d4 = d / 4 * 4;
  double s = 0, x[4], y[4];
  if (metric == ML_KNN_IP) {
#pragma unroll 4
    for (int64_t t = 0; t < d4; t += 4) {
      quad(q, t, vec, x), quad(r, t, vec, y);
#pragma unroll
      for (int k = 0; k < 4; k++) s = __dadd_rn(s, __dmul_rn(x[k], y[k]));
    }
    for (int64_t t = d4; t < d; t++) s = __dadd_rn(s, __dmul_rn((double)q[t], (double)r[t]));
    return -s;
  }
  if (metric == ML_KNN_COSINE) {
    double rn = 0;
    for (int64_t t = 0; t < d4; t += 4) {
      quad(r, t, vec, y);
#pragma unroll
      for (int k = 0; k < 4; k++) rn = __dadd_rn(rn, __dmul_rn(y[k], y[k]));
    }
    for (int64_t t = d4; t < d; t++) rn = __dadd_rn(rn, __dmul_rn((double)r[t], (double)r[t]));
    rn = __dsqrt_rn(rn);
    if (qnorm == 0 || rn == 0) return 1;
    for (int64_t t = 0; t < d; t++) {
      double e = __dsub_rn(__ddiv_rn((double)q[t], qnorm), __ddiv_rn((double)r[t], rn));
      s = __dadd_rn(s, __dmul_rn(e, e));
    }
    return __ddiv_rn(s, 2.0);
  }
#pragma unroll 4
  for (int64_t t = 0; t < d4; t += 4) {
    quad(q, t, vec, x), quad(r, t, vec, y);
#pragma unroll
    for (int k = 0; k < 4; k++) {
      double e = __dsub_rn(x[k], y[k]);
      s = __dadd_rn(s, __dmul_rn(e, e));
    }
  }
  for (int64_t t = d4; t < d; t++) {
    double e = __dsub_rn((double)q[t], (double)r[t]);
    s = __dadd_rn(s, __dmul_rn(e, e));
  }
  return s;
}

/* |q| in double, coordinates in order (cpu_knn.c's operations). */
template <class T> __device__ double query_norm(const T *q, int64_t d) {
  double s = 0;
  for (int64_t t = 0; t < d; t++) s = __dadd_rn(s, __dmul_rn((double)q[t], (double)q[t]));
  return __dsqrt_rn(s);
}

/* The distance reported for an exact key v, rounded to T. */
template <class T> __device__ __forceinline__ T out_distance(ml_knn_metric metric, double v) {
  return (T)(metric == ML_KNN_EUCLIDEAN ? __dsqrt_rn(v) : metric == ML_KNN_IP ? __dadd_rn(-v, 0.0) : v);
}

/* The larger, a NaN winning. */
__device__ __forceinline__ double nan_max(double a, double b) { return b != b || b > a ? b : a; }

/* The NaN-propagating maximum of v over the group; red: shared room for
 * a value a warp. */
template <int G> __device__ double group_max(double v, double *red) {
  for (int o = 16; o > 0; o >>= 1) v = nan_max(v, __shfl_xor_sync(FULL, v, o));
  if (G == 32) return v;
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  if (lane == 0) red[w] = v;
  __syncthreads();
  v = red[0];
  for (int i = 1; i < G / 32; i++) v = nan_max(v, red[i]);
  __syncthreads();
  return v;
}

/* Row i's refinement through the selection w (a list of k pairs). */
template <class T, int G, int BB>
__device__ void refine_row(const RefineArgs<T> &a, const Lists<uint64_t> &w, int tid, int64_t i,
                           double *red) {
  const T *q = a.q + i * a.d;
  double qnorm = 0, wmax = -INFINITY;
  int64_t c = a.c;
  if (a.count) { /* the same for the whole group */
    c = a.count[i];
    if (c <= SHORT || c < a.k || c > a.c) return; /* knn_refine_short's */
    wmax = (double)a.limit[i];
  }
  if (a.metric == ML_KNN_COSINE) qnorm = query_norm(q, a.d);
  sel_start<uint64_t, G>(w, tid);
  double thv = sel_threshold<double>(w);
  for (int64_t p0 = 0; p0 < c; p0 += G) {
    int64_t p = p0 + tid;
    Cands<double, 1> cand;
    cand.key[0] = 0;
    cand.id[0] = p < c ? a.index[i * a.c + p] : 0;
    cand.ok[0] = p < c && cand.id[0] >= 1 && cand.id[0] <= a.n;
    if (p < c && !a.count) wmax = nan_max(wmax, (double)a.keys[i * a.c + p]);
    if (cand.ok[0])
      cand.key[0] = exact_key<T>(a.metric, q, a.refs + (cand.id[0] - 1) * a.d, a.d, qnorm);
    sel_add<double, G, BB, 1>(w, tid, thv, cand);
  }
  sel_finish<uint64_t, G, BB>(w, tid);
  wmax = group_max<G>(wmax, red);
  const int64_t off = w.st->cur * a.k;
  for (int64_t p = tid; p < a.k; p += G) {
    a.nearest[i * a.k + p] = w.li[off + p];
    a.dist[i * a.k + p] = out_distance<T>(a.metric, ml_order_key_value(w.lk[off + p]));
  }
  if (tid == 0) {
    double e = ml_order_key_value(w.lk[off + a.k - 1]);
    a.ok[i] = a.all || wmax - a.bound[i] > e;
  }
  group_sync<G>();
}

/* A warp a query row (lists in shared memory, k <= WARP_L). */
template <class T>
__global__ void __launch_bounds__(SEL_WARPS * 32) knn_refine_warp(RefineArgs<T> a) {
  extern __shared__ __align__(16) unsigned char smem[];
  const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
  const size_t per = sel_bytes<uint64_t>(a.k, WARP_BB + 32);
  Lists<uint64_t> w = sel_carve<uint64_t>(smem + wid * per, a.k, WARP_BB + 32, true, nullptr,
                                          nullptr);
  for (int64_t i = (int64_t)blockIdx.x * SEL_WARPS + wid; i < a.mt;
       i += (int64_t)gridDim.x * SEL_WARPS)
    refine_row<T, 32, WARP_BB>(a, w, lane, i, nullptr);
}

/* A block a query row, for k > WARP_L (lists in global scratch). */
template <class T> __global__ void __launch_bounds__(BLOCK_G) knn_refine_block(RefineArgs<T> a) {
  __shared__ __align__(16) unsigned char smem[sel_bytes<uint64_t>(0, BLOCK_BB + BLOCK_G)];
  __shared__ double red[BLOCK_G / 32];
  for (int64_t i = blockIdx.x; i < a.mt; i += gridDim.x) {
    Lists<uint64_t> w = sel_carve<uint64_t>(smem, a.k, BLOCK_BB + BLOCK_G, false,
                                            a.lk + i * 2 * a.k, a.li + i * 2 * a.k);
    refine_row<T, BLOCK_G, BLOCK_BB>(a, w, threadIdx.x, i, red);
  }
}

/* The short filtered lists (k <= count <= SHORT), a warp a row (and the
 * failures of rows with fewer than k or more than c pairs): the exact
 * keys of a lane's pairs go to shared memory and the lane keeps its best;
 * k rounds of a warp minimum (by key, then index) each take the best
 * left, whose lane then finds its next best. Other rows are left to
 * knn_refine_warp. */
template <class T>
__global__ void __launch_bounds__(SEL_WARPS * 32) knn_refine_short(RefineArgs<T> a) {
  __shared__ uint64_t sk[SEL_WARPS][SHORT];
  __shared__ int64_t si[SEL_WARPS][SHORT];
  const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
  uint64_t *K = sk[wid];
  int64_t *I = si[wid];
  for (int64_t i = (int64_t)blockIdx.x * SEL_WARPS + wid; i < a.mt;
       i += (int64_t)gridDim.x * SEL_WARPS) {
    const int64_t c = a.count[i]; /* the same for the whole warp */
    if (c < a.k || c > a.c) {
      if (lane == 0) a.ok[i] = 0;
      continue;
    }
    if (c > SHORT) continue;
    const T *q = a.q + i * a.d;
    const double qnorm = a.metric == ML_KNN_COSINE ? query_norm(q, a.d) : 0;
    uint64_t bk = ~0ull;
    int64_t bi = INT64_MAX;
    int bp = -1;
    for (int p = lane; p < c; p += 32) {
      int64_t id = a.index[i * a.c + p];
      uint64_t key = ml_order_key(exact_key<T>(a.metric, q, a.refs + (id - 1) * a.d, a.d, qnorm));
      K[p] = key;
      I[p] = id;
      if (key < bk || (key == bk && id < bi)) bk = key, bi = id, bp = p;
    }
    double e = 0;
    for (int64_t t = 0; t < a.k; t++) {
      uint64_t mk = bk;
      int64_t mi = bi;
      for (int o = 16; o > 0; o >>= 1) {
        uint64_t ok = __shfl_xor_sync(FULL, mk, o);
        int64_t oi = __shfl_xor_sync(FULL, mi, o);
        if (ok < mk || (ok == mk && oi < mi)) mk = ok, mi = oi;
      }
      e = ml_order_key_value(mk);
      if (lane == 0) {
        a.nearest[i * a.k + t] = mi;
        a.dist[i * a.k + t] = out_distance<T>(a.metric, e);
      }
      if (mi == bi) { /* this lane's best was taken: its next */
        I[bp] = INT64_MAX;
        bk = ~0ull, bi = INT64_MAX, bp = -1;
        for (int p = lane; p < c; p += 32)
          if (I[p] != INT64_MAX && (K[p] < bk || (K[p] == bk && I[p] < bi)))
            bk = K[p], bi = I[p], bp = p;
      }
    }
    if (lane == 0) a.ok[i] = (double)a.limit[i] - a.bound[i] > e;
    __syncwarp();
  }
}

/* Count lists of at most THREAD_ROOM pairs and k <= ML_KNN_BOUNDED_MAX_K
 * (the bounded pass's), a thread a row: with one or two pairs a query, a
 * warp a row left most lanes idle. The thread keeps its k best (order key,
 * index) pairs sorted in registers (KB places, indexed by constants only;
 * thk, thi copy the k-th), so the order and the bits are knn_refine_short's. */
#define THREAD_ROOM 32
#define THREAD_BLOCK 256

__device__ __forceinline__ bool pair_before(uint64_t ka, int64_t ia, uint64_t kb, int64_t ib) {
  return ka < kb || (ka == kb && ia < ib);
}

template <class T, int KB>
__global__ void __launch_bounds__(THREAD_BLOCK) knn_refine_thread(RefineArgs<T> a) {
  const int k = (int)a.k;
  for (int64_t i = (int64_t)blockIdx.x * THREAD_BLOCK + threadIdx.x; i < a.mt;
       i += (int64_t)gridDim.x * THREAD_BLOCK) {
    const int64_t c = a.count[i];
    if (c < a.k || c > a.c) {
      a.ok[i] = 0;
      continue;
    }
    const T *q = a.q + i * a.d;
    const double qnorm = a.metric == ML_KNN_COSINE ? query_norm(q, a.d) : 0;
    uint64_t bk[KB], thk = ~0ull;
    int64_t bi[KB], thi = INT64_MAX;
#pragma unroll
    for (int s = 0; s < KB; s++) bk[s] = ~0ull, bi[s] = INT64_MAX;
    for (int64_t p = 0; p < c; p++) {
      const int64_t id = a.index[i * a.c + p];
      const uint64_t key =
          ml_order_key(exact_key<T>(a.metric, q, a.refs + (id - 1) * a.d, a.d, qnorm));
      if (!pair_before(key, id, thk, thi)) continue;
#pragma unroll
      for (int s = KB - 1; s >= 0; s--) {
        if (s >= k) continue;
        const int sp = s > 0 ? s - 1 : 0;
        if (s > 0 && pair_before(key, id, bk[sp], bi[sp])) {
          bk[s] = bk[sp];
          bi[s] = bi[sp];
        } else if (pair_before(key, id, bk[s], bi[s])) {
          bk[s] = key;
          bi[s] = id;
        }
        if (s == k - 1) thk = bk[s], thi = bi[s];
      }
    }
#pragma unroll
    for (int s = 0; s < KB; s++) {
      if (s >= k) continue;
      a.nearest[i * a.k + s] = bi[s];
      a.dist[i * a.k + s] = out_distance<T>(a.metric, ml_order_key_value(bk[s]));
    }
    a.ok[i] = (double)a.limit[i] - a.bound[i] > ml_order_key_value(thk);
  }
}

template <class T> static int refine_typed(cuda_dev *d, const ml_knn_refine *r) {
  RefineArgs<T> a;
  a.metric = r->metric;
  a.all = r->all;
  a.mt = r->queries->shape[0];
  a.n = r->refs->shape[0];
  a.d = r->queries->shape[1];
  a.c = r->keys->shape[1];
  a.k = r->dist->shape[1];
  a.q = array_ptr<const T>(r->queries);
  a.refs = array_ptr<const T>(r->refs);
  a.keys = array_ptr<const T>(r->keys);
  a.index = array_ptr<const int64_t>(r->index);
  a.bound = array_ptr<const double>(r->bound);
  a.dist = array_ptr<T>(r->dist);
  a.nearest = array_ptr<int64_t>(r->nearest);
  a.ok = array_ptr<uint8_t>(r->ok);
  a.lk = nullptr;
  a.li = nullptr;
  a.count = r->count ? array_ptr<const int64_t>(r->count) : nullptr;
  a.limit = r->count ? array_ptr<const T>(r->limit) : nullptr;
  if (a.count && a.c <= THREAD_ROOM && a.k <= ML_KNN_BOUNDED_MAX_K) {
    unsigned grid = blocks_for(a.mt, THREAD_BLOCK);
    return a.k == 1 ? cuda_launch<knn_refine_thread<T, 1>>(d, grid, THREAD_BLOCK, 0, "knn", a)
                    : cuda_launch<knn_refine_thread<T, ML_KNN_BOUNDED_MAX_K>>(
                          d, grid, THREAD_BLOCK, 0, "knn", a);
  }
  if (a.count) {
    int rc = cuda_launch<knn_refine_short<T>>(d, blocks_for(a.mt, SEL_WARPS), SEL_WARPS * 32, 0,
                                             "knn", a);
    if (rc || a.c <= SHORT) return rc; /* lists this short leave nothing */
  }
  if (a.k <= WARP_L)
    return cuda_launch<knn_refine_warp<T>>(d, blocks_for(a.mt, SEL_WARPS), SEL_WARPS * 32,
                                           SEL_WARPS * sel_bytes<uint64_t>(a.k, WARP_BB + 32),
                                           "knn", a);
  cuda_scratch lk, li;
  size_t pairs = (size_t)(a.mt * 2 * a.k);
  int rc = lk.get(d->index, pairs * sizeof(uint64_t), "knn");
  if (!rc) rc = li.get(d->index, pairs * sizeof(int64_t), "knn");
  if (rc) return rc;
  a.lk = lk.as<uint64_t>();
  a.li = li.as<int64_t>();
  return cuda_launch<knn_refine_block<T>>(d, blocks_for(a.mt, 1), BLOCK_G, 0, "knn", a);
}

static int knn_refine(const ml_knn_refine *r) {
  cuda_dev *d;
  int rc = cuda_enter(array_device(r->queries), &d);
  if (rc || r->queries->shape[0] == 0) return rc;
  return r->queries->dtype == ML_FLOAT32 ? refine_typed<float>(d, r) : refine_typed<double>(d, r);
}

/* ---- knn_bounded ----
 * cuBLAS writes the dot products to the work block as for tile; then a
 * warp a row, in chunks of BCH vectors a lane (16-byte loads where the
 * rows allow, all of a chunk's loads in flight at once): each lane keeps
 * the k smallest of its fast keys in registers (sorted, by insertion), k
 * rounds of a warp minimum take the row's k-th smallest M, and a second
 * sweep keeps the pairs under the limit, placed by ballot. A row of one
 * chunk (up to 1024 float32 references) is read once: its keys stay in
 * registers for the second sweep. */

#define BK ML_KNN_BOUNDED_MAX_K
#define BCH 8

/* x into the sorted k smallest of best (k <= KB <= BK); th is best[k -
 * 1], kept apart so that best is only indexed by constants (a register
 * array, not local memory). */
template <class T, int KB>
__device__ __forceinline__ void bounded_insert(T (&best)[KB], T &th, int k, T x) {
  if (!(x < th)) return;
#pragma unroll
  for (int s = KB - 1; s >= 0; s--) {
    if (s >= k) continue;
    const T prev = s > 0 ? best[s - 1] : T(-INFINITY);
    if (prev > x)
      best[s] = prev;
    else if (best[s] > x)
      best[s] = x;
    if (s == k - 1) th = best[s];
  }
}

/* The norms of the references of chunk c0 a lane meets, read V at a
 * time where V > 1 (zero where there are none). */
template <class T, int V>
__device__ __forceinline__ void bounded_norms(const BoundedArgs<T> &a, int64_t c0, int lane,
                                              Vec<T, V> (&r)[BCH]) {
#pragma unroll
  for (int q = 0; q < BCH; q++) {
    const int64_t j = c0 + ((int64_t)q * 32 + lane) * V;
    if (V > 1 && a.raux && j < a.n) {
      r[q] = *reinterpret_cast<const Vec<T, V> *>(a.raux + j);
    } else {
#pragma unroll
      for (int e = 0; e < V; e++) r[q].v[e] = a.raux && j + e < a.n ? a.raux[j + e] : T(0);
    }
  }
}

/* The values of chunk c0 of the row that a lane meets into v. */
template <class T, int V>
__device__ __forceinline__ void bounded_load(const BoundedArgs<T> &a, const T *row, int64_t c0,
                                             int lane, Vec<T, V> (&v)[BCH]) {
#pragma unroll
  for (int q = 0; q < BCH; q++) {
    const int64_t j = c0 + ((int64_t)q * 32 + lane) * V;
    if (V > 1 && j < a.n) {
      v[q] = *reinterpret_cast<const Vec<T, V> *>(row + j);
    } else {
#pragma unroll
      for (int e = 0; e < V; e++) v[q].v[e] = j + e < a.n ? row[j + e] : T(0);
    }
  }
}

/* The values v of chunk c0 turned into fast keys (references past n:
 * +inf), r the chunk's norms. */
template <class T, int V>
__device__ __forceinline__ void bounded_keys(const BoundedArgs<T> &a, T qa, int64_t c0,
                                             int lane, const Vec<T, V> (&r)[BCH],
                                             Vec<T, V> (&v)[BCH]) {
#pragma unroll
  for (int q = 0; q < BCH; q++) {
    const int64_t j = c0 + ((int64_t)q * 32 + lane) * V;
#pragma unroll
    for (int e = 0; e < V; e++)
      v[q].v[e] = j + e < a.n ? fast_key<T>(a.metric, v[q].v[e], qa, r[q].v[e]) : (T)INFINITY;
  }
}

/* KB: the room of a lane's list, 1 for k = 1 (a running minimum, and
 * far less code than the general insertion unrolled over a chunk). */
template <class T, int V, int KB>
__global__ void __launch_bounds__(SEL_WARPS * 32) knn_bounded_rows(BoundedArgs<T> a) {
  constexpr int64_t CH = 32 * V * BCH;
  const int lane = threadIdx.x & 31;
  /* rows of one chunk: the norms are every row's, read once a warp */
  const bool one = a.n <= CH;
  Vec<T, V> r[BCH];
  if (one) bounded_norms<T, V>(a, 0, lane, r);
  for (int64_t i = (int64_t)blockIdx.x * SEL_WARPS + (threadIdx.x >> 5); i < a.mt;
       i += (int64_t)gridDim.x * SEL_WARPS) {
    const T *row = a.work + i * a.n;
    const T qa = a.qaux ? a.qaux[i] : T(0);
    const int64_t self = a.self ? a.self[i] : 0;
    T best[KB], th = (T)INFINITY;
#pragma unroll
    for (int s = 0; s < KB; s++) best[s] = (T)INFINITY;
    Vec<T, V> v[BCH];
#pragma unroll 1
    for (int64_t c0 = 0; c0 < a.n; c0 += CH) {
      if (!one) bounded_norms<T, V>(a, c0, lane, r);
      bounded_load<T, V>(a, row, c0, lane, v);
      bounded_keys<T, V>(a, qa, c0, lane, r, v);
#pragma unroll
      for (int q = 0; q < BCH; q++) {
        const int64_t j = c0 + ((int64_t)q * 32 + lane) * V;
#pragma unroll
        for (int e = 0; e < V; e++)
          if (j + e + 1 != self) bounded_insert<T, KB>(best, th, a.k, v[q].v[e]);
      }
    }
    T m = (T)INFINITY;
    for (int t = 0; t < a.k; t++) {
      m = best[0];
      for (int o = 16; o > 0; o >>= 1) {
        const T w = __shfl_xor_sync(FULL, m, o);
        m = w < m ? w : m;
      }
      if (lane == __ffs(__ballot_sync(FULL, best[0] == m)) - 1) {
#pragma unroll
        for (int s = 0; s < KB - 1; s++) best[s] = best[s + 1];
        best[KB - 1] = (T)INFINITY;
      }
    }
    const T lim = bounded_limit<T>(m, a.bound[i]);
    int64_t cnt = 0;
#pragma unroll 1
    for (int64_t c0 = 0; c0 < a.n; c0 += CH) {
      if (!one) {
        bounded_norms<T, V>(a, c0, lane, r);
        bounded_load<T, V>(a, row, c0, lane, v);
        bounded_keys<T, V>(a, qa, c0, lane, r, v);
      }
#pragma unroll
      for (int q = 0; q < BCH; q++) {
        const int64_t j = c0 + ((int64_t)q * 32 + lane) * V;
        bool keep[V], any = false;
#pragma unroll
        for (int e = 0; e < V; e++) {
          keep[e] = j + e < a.n && !(v[q].v[e] > lim) && j + e + 1 != self;
          any |= keep[e];
        }
        /* most of a row is far above the limit: one vote for V keys */
        if (!__any_sync(FULL, any)) continue;
#pragma unroll
        for (int e = 0; e < V; e++) {
          const unsigned mask = __ballot_sync(FULL, keep[e]);
          const int64_t at = cnt + __popc(mask & ((1u << lane) - 1));
          if (keep[e] && at < a.c) {
            a.keys[i * a.c + at] = v[q].v[e];
            a.index[i * a.c + at] = j + e + 1;
          }
          cnt += __popc(mask);
        }
      }
    }
    if (lane == 0) {
      a.count[i] = cnt;
      a.limit[i] = lim;
    }
  }
}

/* Eight blocks an SM at most: warps go through several rows, so that the
 * norms are read once a warp. */
template <class T, int V, int KB> static int bounded_launch(cuda_dev *d, const BoundedArgs<T> &a) {
  constexpr auto K = knn_bounded_rows<T, V, KB>;
  return cuda_launch<K>(d, grid_for(a.mt, SEL_WARPS, d, 8), SEL_WARPS * 32, 0, "knn", a);
}

template <class T> static int bounded_typed(cuda_dev *d, const ml_knn_bounded *b) {
  BoundedArgs<T> a;
  a.metric = b->metric;
  a.mt = b->queries->shape[0];
  a.n = b->refs->shape[0];
  a.c = b->keys->shape[1];
  a.k = (int)b->k;
  a.work = b->work ? array_ptr<const T>(b->work) : nullptr;
  a.qaux = b->qaux ? array_ptr<const T>(b->qaux) : nullptr;
  a.raux = b->raux ? array_ptr<const T>(b->raux) : nullptr;
  a.self = b->self ? array_ptr<const int64_t>(b->self) : nullptr;
  a.bound = array_ptr<const double>(b->bound);
  a.limit = array_ptr<T>(b->limit);
  a.keys = array_ptr<T>(b->keys);
  a.index = array_ptr<int64_t>(b->index);
  a.count = array_ptr<int64_t>(b->count);
  a.d = b->queries->shape[1];
  a.q = array_ptr<const T>(b->queries);
  a.refs = array_ptr<const T>(b->refs);
  if constexpr (std::is_same<T, float>::value)
    if (!b->work) return knn_nearest_tc(d, a);
  ml_gemm g = {b->queries->dtype, ml_array_device(b->queries), 0, 1, a.mt, a.n, a.d, 1,
               a.q, a.d, 0, a.refs, a.d, 0, (void *)a.work, a.n, 0, b->tf32};
  int rc = cuda_gemm(&g);
  if (rc) return rc;
  constexpr int V = 16 / sizeof(T);
  bool vec = a.n % V == 0 && (uintptr_t)a.work % 16 == 0 && (uintptr_t)a.raux % 16 == 0;
  if (a.k == 1)
    return vec ? bounded_launch<T, V, 1>(d, a) : bounded_launch<T, 1, 1>(d, a);
  return vec ? bounded_launch<T, V, BK>(d, a) : bounded_launch<T, 1, BK>(d, a);
}

/* No work block where knn_nearest_tc takes the batch. */
static int knn_bounded_work(ml_dtype t, int tf32, int64_t m, int64_t n, int64_t d,
                            int64_t k) {
  return !(t == ML_FLOAT32 && tf32 && k == 1 && d <= NEAREST_TC_MAX_D &&
           m >= NEAREST_TC_MIN_ROWS && n <= NEAREST_TC_MAX_N);
}

static int knn_bounded(const ml_knn_bounded *b) {
  cuda_dev *d;
  int rc = cuda_enter(array_device(b->queries), &d);
  if (rc || b->queries->shape[0] == 0 || b->refs->shape[0] == 0) return rc;
  return b->queries->dtype == ML_FLOAT32 ? bounded_typed<float>(d, b)
                                         : bounded_typed<double>(d, b);
}

/* A tile holds 4096 queries before the references are split: a warp
 * selects a row of the work block, and streaming it from memory takes
 * thousands of warps in flight. */
const ml_knn_backend cuda_knn_backend = {1, 1, 4096, knn_tile, knn_refine, cuda_knn_filter,
                                         cuda_knn_sample, knn_bounded, knn_bounded_work};
