/* The bounded pass for k = 1 in TF32 on tensor cores (k-means'
 * assignment), without the work block: the dot products stay in
 * registers, so the pass costs the products and no trip of mt x n keys
 * through memory (cuBLAS writing them, knn.cu's scan reading them back).
 *
 * A block takes NT_ROWS queries, held in shared memory for the
 * whole pass (d <= NEAREST_TC_MAX_D), and walks every reference in tiles
 * of NT_REFS, NT_KC coordinates a stage, the next stage on its way by
 * cp.async while the tensor cores work on this one. Eight warps take
 * 2 x 4 warp tiles of 64 queries by 32 references, 4 x 4 mma tiles of
 * 16 x 8. A product's sum over k does not depend on which coordinate
 * each of the mma's k places holds, so lane t gives places t and t + 4
 * the adjacent coordinates 2t and 2t + 1 of both operands: one 8-byte
 * load a fragment pair. The float bits go to the tensor cores as they
 * are, which read them as TF32 (the low 13 bits of the mantissa dropped:
 * truncation, which core/knn.c's TF32 bound covers).
 *
 * After each tile of references the block folds the tile's fast keys into
 * each query's running minimum M (an atomic minimum on order keys in
 * shared memory), derives the limit L(M) as knn.cu's scan does, and
 * appends the pairs at or under it to the query's list (its count an
 * atomic in shared memory). M only falls, and L with it, so every pair
 * under the final limit is appended when its tile is done; those appended
 * under an earlier, higher limit are dropped when the limit falls and at
 * the end, which leaves exactly the pairs under the final limit: knn.cu's
 * lists up to order. A list that overflows the room c stays marked (its
 * count above c) and its query goes round again, as there. */
#include "knn_bounded.cuh"
#include "knn_filter.cuh"
#include "stream.cuh"

#define NT_THREADS 256
#define NT_ROWS 128
#define NT_REFS 128
#define NT_KC 32
/* Row strides of 8 floats past a multiple of 32: the 8-byte loads of a
 * half warp (rows g < 4, coordinates 2t) fall on distinct banks. */
#define NT_PAD 8
#define NT_BS (NT_KC + NT_PAD)

/* The per-query state of a block. */
struct NearestRows {
  unsigned least[NT_ROWS]; /* order key of the running minimum */
  float limit[NT_ROWS];
  float qa[NT_ROWS];
  int count[NT_ROWS];
  int64_t self[NT_ROWS];
};

/* The queries' row stride in shared memory for d coordinates. */
__host__ __device__ __forceinline__ int nearest_stride(int64_t d) {
  return (int)((d + NT_KC - 1) / NT_KC * NT_KC) + NT_PAD;
}

/* The shared bytes of a block: the rows' state, two stages of
 * references, the queries. */
static size_t nearest_smem(int64_t d) {
  return sizeof(NearestRows) + (2 * NT_REFS * NT_BS + NT_ROWS * nearest_stride(d)) * sizeof(float);
}

/* The stage of references j0 .. j0 + NT_REFS - 1, coordinates k0 ..
 * k0 + NT_KC - 1, into bs: VEC, 16 bytes a copy (d a multiple of 4, rows
 * 16-byte aligned). A thread copies the same coordinates of rows
 * NT_THREADS / PER apart. */
template <bool VEC>
__device__ __forceinline__ void stage_load(const BoundedArgs<float> &a, float *bs, int j0,
                                           int k0) {
  constexpr int W = VEC ? 4 : 1, PER = NT_KC / W, STEP = NT_THREADS / PER;
  const int r = threadIdx.x / PER, k = W * (threadIdx.x % PER);
  const bool k_in = k0 + k < a.d;
  const float *src = a.refs + (int64_t)(j0 + r) * a.d + k0 + k;
  float *dst = bs + r * NT_BS + k;
#pragma unroll 4
  for (int e = 0; e < NT_REFS / STEP; e++) {
    const bool ok = k_in && j0 + r + STEP * e < a.n;
    if (VEC)
      cp_async16_or_zero(dst + STEP * NT_BS * e, ok ? src : a.refs, ok);
    else
      cp_async4_or_zero(dst + STEP * NT_BS * e, ok ? src : a.refs, ok);
    src += STEP * a.d;
  }
}

/* Keeps the pairs of row r's list (query i) at or under the row's limit,
 * unless the list overflowed; one thread a row. */
__device__ __forceinline__ void nearest_compact(const BoundedArgs<float> &a, NearestRows &rows,
                                                int r, int64_t i) {
  const int n = rows.count[r];
  if (n > a.c) return;
  const float lim = rows.limit[r];
  float *keys = a.keys + i * a.c;
  int64_t *index = a.index + i * a.c;
  int w = 0;
  for (int p = 0; p < n; p++)
    if (keys[p] <= lim) {
      keys[w] = keys[p];
      index[w++] = index[p];
    }
  rows.count[r] = w;
}

/* Appends the pair (row r, reference j) to the row's list. */
__device__ __forceinline__ void nearest_keep(const BoundedArgs<float> &a, NearestRows &rows,
                                             int64_t i0, int r, int j, float key) {
  const int p = atomicAdd(&rows.count[r], 1);
  if (p < a.c) {
    const int64_t i = i0 + r;
    a.keys[i * a.c + p] = key;
    a.index[i * a.c + p] = j + 1;
  }
}

/* Whether the pair (row r, reference j) counts: both inside, not the
 * query itself. */
__device__ __forceinline__ bool nearest_pair(const BoundedArgs<float> &a, const NearestRows &rows,
                                             int64_t i0, int r, int j) {
  return i0 + r < a.mt && j < a.n && j + 1 != rows.self[r];
}

template <ml_knn_metric M, bool VEC>
__global__ void __launch_bounds__(NT_THREADS, 2) knn_nearest_tc_kernel(BoundedArgs<float> a) {
  extern __shared__ __align__(16) unsigned char smem[];
  NearestRows &rows = *reinterpret_cast<NearestRows *>(smem);
  float *bs = reinterpret_cast<float *>(smem + sizeof(NearestRows));
  const int sa = nearest_stride(a.d), dp = sa - NT_PAD;
  float *as = bs + 2 * NT_REFS * NT_BS;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, g = lane / 4, t = lane % 4;
  const int wm = 64 * (warp % 2), wn = 32 * (warp / 2); /* the warp tile's corner */
  const int64_t i0 = (int64_t)blockIdx.x * NT_ROWS;
  const int n = (int)a.n;
  /* pairs that may not count (past the ends, the query itself) are only
   * looked for in blocks that have them */
  const bool edge_rows = i0 + NT_ROWS > a.mt || a.self;

  stage_load<VEC>(a, bs, 0, 0);
  cp_async_commit();
  for (int r = warp; r < NT_ROWS; r += NT_THREADS / 32) {
    const bool in = i0 + r < a.mt;
    for (int k = lane; k < dp; k += 32)
      as[r * sa + k] = in && k < a.d ? a.q[(i0 + r) * a.d + k] : 0.f;
  }
  if (threadIdx.x < NT_ROWS) {
    const int r = threadIdx.x;
    const bool in = i0 + r < a.mt;
    rows.least[r] = ml_order_key_f32(INFINITY);
    rows.limit[r] = INFINITY;
    rows.count[r] = 0;
    rows.qa[r] = in && a.qaux ? a.qaux[i0 + r] : 0.f;
    rows.self[r] = in && a.self ? a.self[i0 + r] : 0;
  }

  float acc[4][4][4]; /* [mi][ni][2 h + c]: row wm + 16 mi + 8 h + g, column wn + 8 ni + 2 t + c */
  int stage = 0;
  for (int j0 = 0; j0 < n; j0 += NT_REFS) {
#pragma unroll
    for (int mi = 0; mi < 4; mi++)
#pragma unroll
      for (int ni = 0; ni < 4; ni++)
#pragma unroll
        for (int e = 0; e < 4; e++) acc[mi][ni][e] = 0.f;
    for (int k0 = 0; k0 < dp; k0 += NT_KC, stage ^= 1) {
      /* the next stage's copies first */
      const int k1 = k0 + NT_KC < dp ? k0 + NT_KC : 0, j1 = k1 ? j0 : j0 + NT_REFS;
      if (j1 < n) stage_load<VEC>(a, bs + (stage ^ 1) * NT_REFS * NT_BS, j1, k1);
      cp_async_commit();
      cp_async_wait<1>();
      __syncthreads();
      const float *b = bs + stage * NT_REFS * NT_BS + (wn + g) * NT_BS + 2 * t;
      const float *q = as + (wm + g) * sa + k0 + 2 * t;
#pragma unroll
      for (int ks = 0; ks < NT_KC / 8; ks++) {
        uint32_t bf[4][2];
#pragma unroll
        for (int ni = 0; ni < 4; ni++) {
          const float2 v = *reinterpret_cast<const float2 *>(b + 8 * ni * NT_BS + 8 * ks);
          bf[ni][0] = __float_as_uint(v.x);
          bf[ni][1] = __float_as_uint(v.y);
        }
#pragma unroll
        for (int mi = 0; mi < 4; mi++) {
          const float2 v0 = *reinterpret_cast<const float2 *>(q + 16 * mi * sa + 8 * ks);
          const float2 v1 = *reinterpret_cast<const float2 *>(q + (16 * mi + 8) * sa + 8 * ks);
          const uint32_t a0[2] = {__float_as_uint(v0.x), __float_as_uint(v0.y)};
          const uint32_t a1[2] = {__float_as_uint(v1.x), __float_as_uint(v1.y)};
#pragma unroll
          for (int ni = 0; ni < 4; ni++) tc_mma(acc[mi][ni], a0, a1, bf[ni]);
        }
      }
      __syncthreads(); /* the stage is free for the next copies */
    }

    /* the tile's fast keys (NaN for pairs that do not count), folded
     * into the rows' minima */
    const bool edge = edge_rows || j0 + NT_REFS > n;
    float ra[4][2];
#pragma unroll
    for (int ni = 0; ni < 4; ni++)
#pragma unroll
      for (int c = 0; c < 2; c++) {
        const int j = j0 + wn + 8 * ni + 2 * t + c;
        ra[ni][c] = M != ML_KNN_IP && j < n ? a.raux[j] : 0.f;
      }
#pragma unroll
    for (int mi = 0; mi < 4; mi++)
#pragma unroll
      for (int h = 0; h < 2; h++) {
        const int r = wm + 16 * mi + 8 * h + g;
        const float qa = rows.qa[r];
        float least = INFINITY;
#pragma unroll
        for (int ni = 0; ni < 4; ni++)
#pragma unroll
          for (int c = 0; c < 2; c++) {
            float &v = acc[mi][ni][2 * h + c];
            v = metric_key<M>(v, qa, ra[ni][c]);
            if (edge && !nearest_pair(a, rows, i0, r, j0 + wn + 8 * ni + 2 * t + c)) v = NAN;
            least = fminf(least, v);
          }
        least = fminf(least, __shfl_xor_sync(FULL, least, 1));
        least = fminf(least, __shfl_xor_sync(FULL, least, 2));
        if (t == 0 && least < INFINITY) atomicMin(&rows.least[r], ml_order_key_f32(least));
      }
    __syncthreads();
    if (threadIdx.x < NT_ROWS && i0 + threadIdx.x < a.mt) {
      const int r = threadIdx.x;
      const float lim =
          bounded_limit<float>(ml_order_key_value_f32(rows.least[r]), a.bound[i0 + r]);
      if (lim < rows.limit[r]) {
        rows.limit[r] = lim;
        nearest_compact(a, rows, r, i0 + r);
      }
    }
    __syncthreads();
    /* the pairs at or under the limits; a NaN key counts as +inf (knn.cu's
     * fast_key): it passes only a limit of +inf */
#pragma unroll
    for (int mi = 0; mi < 4; mi++)
#pragma unroll
      for (int h = 0; h < 2; h++) {
        const int r = wm + 16 * mi + 8 * h + g;
        const float lim = rows.limit[r];
#pragma unroll
        for (int ni = 0; ni < 4; ni++)
#pragma unroll
          for (int c = 0; c < 2; c++) {
            const float v = acc[mi][ni][2 * h + c];
            if (v <= lim) nearest_keep(a, rows, i0, r, j0 + wn + 8 * ni + 2 * t + c, v);
          }
        if (lim == INFINITY) /* rare */
#pragma unroll
          for (int ni = 0; ni < 4; ni++)
#pragma unroll
            for (int c = 0; c < 2; c++) {
              const int j = j0 + wn + 8 * ni + 2 * t + c;
              if (acc[mi][ni][2 * h + c] != acc[mi][ni][2 * h + c] && nearest_pair(a, rows, i0, r, j))
                nearest_keep(a, rows, i0, r, j, INFINITY);
            }
      }
  }
  __syncthreads();
  if (threadIdx.x < NT_ROWS && i0 + threadIdx.x < a.mt) {
    const int r = threadIdx.x;
    const int64_t i = i0 + r;
    nearest_compact(a, rows, r, i);
    a.count[i] = rows.count[r];
    a.limit[i] = rows.limit[r];
  }
}

template <ml_knn_metric M> static int nearest_launch(cuda_dev *d, const BoundedArgs<float> &a) {
  const bool vec = a.d % 4 == 0 && (uintptr_t)a.refs % 16 == 0;
  const unsigned grid = (unsigned)((a.mt + NT_ROWS - 1) / NT_ROWS);
  const size_t smem = nearest_smem(a.d);
  constexpr auto K4 = knn_nearest_tc_kernel<M, false>;
  constexpr auto K16 = knn_nearest_tc_kernel<M, true>;
  int rc = prefer_shared<K4>(d, "knn");
  if (!rc) rc = prefer_shared<K16>(d, "knn");
  if (rc) return rc;
  return vec ? cuda_launch<K16>(d, grid, NT_THREADS, smem, "knn", a)
             : cuda_launch<K4>(d, grid, NT_THREADS, smem, "knn", a);
}

int knn_nearest_tc(cuda_dev *d, const BoundedArgs<float> &a) {
  switch (a.metric) {
    case ML_KNN_COSINE:
      return nearest_launch<ML_KNN_COSINE>(d, a);
    case ML_KNN_IP:
      return nearest_launch<ML_KNN_IP>(d, a);
    default: /* both Euclidean metrics share their key */
      return nearest_launch<ML_KNN_EUCLIDEAN>(d, a);
  }
}
