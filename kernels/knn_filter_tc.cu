/* The filtered kNN search's kernel on tensor cores: float32 queries and
 * references, dot products in split TF32 (backend.h, knn_filter). Each
 * input x is split into hi = x truncated to TF32 and lo = x - hi (exact
 * in float32) truncated to TF32; a product is hi hi' + hi lo' + lo hi',
 * three TF32 mma.sync products accumulated in float32, which errs by
 * less than 2^-18 of |x x'| before the sums (core/knn.c's bound covers
 * both). Most of its instructions are the limit tests, the few pairs kept
 * and the references' loads and splits, not the products: keys are formed
 * inside the products and tiles addressed in 32 bits to keep them few.
 *
 * A block of 8 warps takes WQ x (8 / WQ) warp tiles of 32 queries by 32
 * references; a warp's tile is 2 x 4 mma tiles of 16 x 8. The queries'
 * fragments come straight from global memory and stay in registers when
 * d <= FD; the references go through shared memory FD coordinates at a
 * time, already split and laid out so that one 16-byte load gives a lane
 * both k-halves of its fragment, hi and lo. The filter (WQ = 4) queues
 * the pairs under the limit as knn_filter.cu's kernel does, and reads the
 * next references while the tensor cores work; the sample (WQ = 2, 128
 * references a step) keeps each lane's smallest keys per reference
 * column, the column being the block of ML_KNN_SAMPLE_BLOCKS. */
#include "knn_filter.cuh"

/* A tile row: for k-step s (8 coordinates) and t < 4, the 4 floats
 * hi(8s + t), hi(8s + t + 4), lo(8s + t), lo(8s + t + 4) at 16 s + 4 t;
 * rows 48 floats apart, so that the 8 lanes of a 16-byte load phase (two
 * rows) fall on distinct banks. */
#define TC_ROW 48

/* x with the 13 low bits of its mantissa cleared: a TF32 number, x
 * truncated (one LOP3, where cvt.rna takes five). */
__device__ __forceinline__ float tf32_head(float x) {
  return __uint_as_float(__float_as_uint(x) & 0xffffe000u);
}

/* A thread's share of a tile of ROWS references: rows r0 .. r0 + ROWS - 1
 * of x (those below rows; row r at x + r * stride), coordinates k0 ..
 * k0 + FD - 1 (those below d), zeros outside; consecutive threads read
 * consecutive coordinates, thread t row t / FD + STEP e of the tile for
 * e < PER. */
template <int ROWS> struct TileShare {
  static constexpr int PER = FD * ROWS / FILTER_THREADS, STEP = FILTER_THREADS / FD;
  float v[PER];

  __device__ __forceinline__ void fetch(const float *x, int64_t r0, int64_t rows, int64_t d,
                                        int64_t k0, int64_t stride) {
    const int kk = threadIdx.x % FD, r = threadIdx.x / FD;
    const int live = rows - r0 < ROWS ? (int)(rows - r0) : ROWS;
    const bool inside = kk < d - k0;
    const float *p = x + (r0 + r) * stride + k0 + kk;
#pragma unroll
    for (int e = 0; e < PER; e++) {
      v[e] = inside && r + STEP * e < live ? *p : 0.f;
      p += STEP * stride;
    }
  }

  /* Into the tile s, split. */
  __device__ __forceinline__ void stash(float *s) const {
    const int kk = threadIdx.x % FD, r = threadIdx.x / FD;
    float *at = s + r * TC_ROW + 16 * (kk / 8) + 4 * (kk % 4) + (kk % 8) / 4;
#pragma unroll
    for (int e = 0; e < PER; e++) {
      const float hi = tf32_head(v[e]);
      at[STEP * TC_ROW * e] = hi;
      at[STEP * TC_ROW * e + 2] = tf32_head(v[e] - hi);
    }
  }
};

/* An operand fragment: the hi and lo registers of mma's a or b. */
struct Frag {
  uint32_t hi[2], lo[2];
};

/* Row r's fragment for k-step s and lane group t. */
__device__ __forceinline__ Frag tc_frag(const float *s, int r, int ks, int t) {
  const float4 v = *reinterpret_cast<const float4 *>(s + r * TC_ROW + 16 * ks + 4 * t);
  return Frag{{__float_as_uint(v.x), __float_as_uint(v.y)},
              {__float_as_uint(v.z), __float_as_uint(v.w)}};
}

/* The split product of one tile: hi hi', then the two cross terms. */
__device__ __forceinline__ void tc_mma3(float *acc, const Frag &a0, const Frag &a1, const Frag &b) {
  tc_mma(acc, a0.lo, a1.lo, b.hi);
  tc_mma(acc, a0.hi, a1.hi, b.lo);
  tc_mma(acc, a0.hi, a1.hi, b.hi);
}

/* The split fragment of rows i and i + 8 of x (mt x d), coordinates
 * k and k + 4, for the lane's mma operand a (zeros outside). */
__device__ __forceinline__ void query_frag(Frag &f0, Frag &f1, const float *x, int64_t i,
                                           int64_t mt, int64_t d, int64_t k) {
  Frag *f[2] = {&f0, &f1};
#pragma unroll
  for (int h = 0; h < 2; h++)
#pragma unroll
    for (int s = 0; s < 2; s++) {
      const int64_t r = i + 8 * h, c = k + 4 * s;
      const float v = r < mt && c < d ? x[r * d + c] : 0.f, hi = tf32_head(v);
      f[h]->hi[s] = __float_as_uint(hi);
      f[h]->lo[s] = __float_as_uint(tf32_head(v - hi));
    }
}

/* The accumulator v of a pair and its fast key: key = SCALE v. The
 * Euclidean accumulator starts at -(|q|^2 + |r|^2) / 2 and adds q.r, so the
 * tensor cores do the key's sum (core/knn.c's bound covers that order);
 * the inner product's is q.r; the cosine's epilogue sets v = -(its key).
 * A key passes a limit L where !(key > L), that is !(v < L / SCALE) with
 * the quotient (L times -1/2 or -1) rounded up: it is inexact only for a
 * subnormal L, and rounded up the two tests agree for every float v. */
template <ml_knn_metric M> struct TcKey {
  static constexpr float SCALE = M == ML_KNN_EUCLIDEAN ? -2.f : -1.f;
  /* a query's or a reference's term as the kernel keeps it */
  static __device__ __forceinline__ float term(float aux) {
    return M == ML_KNN_EUCLIDEAN ? aux / SCALE : aux;
  }
};

template <ml_knn_metric M, bool SAMPLE, int WQ>
__global__ void __launch_bounds__(FILTER_THREADS, 2) knn_filter_tc_kernel(FilterArgs<float> a) {
  constexpr int BQ = 32 * WQ, BR = 32 * (8 / WQ);
  static_assert(!SAMPLE || BR == FB, "a sample block per reference column");
  using K = TcKey<M>;
  __shared__ __align__(16) float rs[BR * TC_ROW];
  __shared__ __align__(8) float ras[2][BR]; /* terms, by the step's parity */
  __shared__ FilterQueue<float, SAMPLE ? 1 : BQ> fq;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, g = lane / 4, t = lane % 4;
  const int wq = 32 * (warp % WQ), wr = 32 * (warp / WQ); /* the warp tile's corner */
  const int64_t i0 = (int64_t)blockIdx.x * BQ;
  const int64_t j_begin = (int64_t)blockIdx.y * a.slice;
  const int64_t j_end = j_begin + a.slice < a.n ? j_begin + a.slice : a.n;
  const bool q_once = a.d <= FD;
  /* the lane's 4 queries (u = 2 mi + h is row wq + 16 mi + 8 h + g): their
   * terms, the filter's thresholds on v, the sample's largest v */
  float qa[4], thr[4], high[SAMPLE ? 4 : 1][SAMPLE ? 8 : 1];
#pragma unroll
  for (int u = 0; u < 4; u++) {
    const int64_t i = i0 + wq + 8 * u + g;
    qa[u] = i < a.mt && M != ML_KNN_IP ? K::term(a.qaux[i]) : 0.f;
    thr[u] = i < a.mt && !SAMPLE ? __fmul_ru(a.limit[i], 1.f / K::SCALE) : 0.f;
    if (SAMPLE)
#pragma unroll
      for (int v = 0; v < 8; v++) high[u][v] = -INFINITY;
  }
  if constexpr (!SAMPLE) filter_queue_init(fq);
  Frag qf[2][2][2]; /* [k-step][mi][h] */
  auto load_queries = [&](int64_t k0) {
#pragma unroll
    for (int ks = 0; ks < 2; ks++)
#pragma unroll
      for (int mi = 0; mi < 2; mi++)
        query_frag(qf[ks][mi][0], qf[ks][mi][1], a.q, i0 + wq + 16 * mi + g, a.mt, a.d,
                   k0 + 8 * ks + t);
  };
  if (q_once) load_queries(0);
  /* the filter reads the next chunk of references (and their terms) into
   * registers while the tensor cores work on this one; the sample, short
   * of registers for it, reads each just before use */
  TileShare<BR> next;
  float next_ra = 0.f;
  auto fetch = [&](int64_t j0, int64_t k0) {
    next.fetch(a.refs, j0, j_end, a.d, k0, a.step * a.d);
    const int64_t j = j0 + threadIdx.x;
    if (k0 == 0 && threadIdx.x < BR)
      next_ra = M != ML_KNN_IP && j < j_end ? K::term(a.raux[j * a.step]) : 0.f;
  };
  if (!SAMPLE && j_begin < j_end) fetch(j_begin, 0);
  int par = 0;
  for (int64_t j0 = j_begin; j0 < j_end; j0 += BR, par ^= 1) {
    /* acc[mi][ni][2 h + c] is query u = 2 mi + h, reference column
     * wr + 8 ni + 2 t + c */
    float acc[2][4][4];
    for (int64_t k0 = 0; k0 < a.d; k0 += FD) { /* d >= 1: see knn_filter.cu */
      if (!q_once) load_queries(k0);
      if (SAMPLE) fetch(j0, k0);
      next.stash(rs);
      if (k0 == 0 && threadIdx.x < BR) ras[par][threadIdx.x] = next_ra;
      __syncthreads();
      if (k0 == 0)
#pragma unroll
        for (int ni = 0; ni < 4; ni++) {
          const float2 ra = *reinterpret_cast<const float2 *>(&ras[par][wr + 8 * ni + 2 * t]);
#pragma unroll
          for (int mi = 0; mi < 2; mi++)
#pragma unroll
            for (int e = 0; e < 4; e++)
              acc[mi][ni][e] =
                  M == ML_KNN_EUCLIDEAN ? qa[2 * mi + e / 2] + (e % 2 ? ra.y : ra.x) : 0.f;
        }
      if (!SAMPLE && k0 + FD < a.d)
        fetch(j0, k0 + FD);
      else if (!SAMPLE && j0 + BR < j_end)
        fetch(j0 + BR, 0);
#pragma unroll
      for (int ks = 0; ks < 2; ks++)
#pragma unroll
        for (int ni = 0; ni < 4; ni++) {
          const Frag rf = tc_frag(rs, wr + 8 * ni + g, ks, t);
#pragma unroll
          for (int mi = 0; mi < 2; mi++) tc_mma3(acc[mi][ni], qf[ks][mi][0], qf[ks][mi][1], rf);
        }
      __syncthreads();
    }
    /* pass marks the filter's pairs (under the limit, or NaN) at bit
     * 8 ni + 4 mi + e */
    const int cols = j_end - j0 < BR ? (int)(j_end - j0) : BR;
    uint32_t pass = 0;
#pragma unroll
    for (int ni = 0; ni < 4; ni++) {
      const int col = wr + 8 * ni + 2 * t;
      const float2 ra = M == ML_KNN_COSINE ? *reinterpret_cast<const float2 *>(&ras[par][col])
                                           : make_float2(0.f, 0.f);
#pragma unroll
      for (int mi = 0; mi < 2; mi++)
#pragma unroll
        for (int e = 0; e < 4; e++) {
          const int u = 2 * mi + e / 2, c = e % 2;
          const bool in = col + c < cols;
          float &v = acc[mi][ni][e];
          if (M == ML_KNN_COSINE) v = -metric_key<M>(v, qa[u], c ? ra.y : ra.x);
          if (SAMPLE) {
            if (in && v > high[u][2 * ni + c]) high[u][2 * ni + c] = v; /* a NaN never is */
          } else {
            pass |= (uint32_t)(in && !(v < thr[u])) << (8 * ni + 4 * mi + e);
          }
        }
    }
    if constexpr (!SAMPLE) {
      while (pass) { /* rare */
        const int b = __ffs(pass) - 1, mi = (b >> 2) & 1, e = b & 3;
        pass &= pass - 1;
        /* acc[.][b >> 3][.] by a tree of selects (no dynamic index into
         * registers) */
        float v[8];
#pragma unroll
        for (int x = 0; x < 8; x++) {
          const float lo = b & 8 ? acc[x / 4][1][x % 4] : acc[x / 4][0][x % 4];
          const float hi = b & 8 ? acc[x / 4][3][x % 4] : acc[x / 4][2][x % 4];
          v[x] = b & 16 ? hi : lo;
        }
#pragma unroll
        for (int x = 0; x < 4; x++) v[x] = b & 4 ? v[4 + x] : v[x];
#pragma unroll
        for (int x = 0; x < 2; x++) v[x] = b & 2 ? v[2 + x] : v[x];
        const float key = K::SCALE * (b & 1 ? v[1] : v[0]);
        filter_keep(fq, a, i0, wq + 16 * mi + 8 * (e / 2) + g,
                    j0 + wr + 8 * (b >> 3) + 2 * t + e % 2, key);
      }
      filter_step_end(fq, a, i0, j0 + BR >= j_end);
    }
  }
  if (SAMPLE)
#pragma unroll
    for (int u = 0; u < 4; u++) {
      const int64_t i = i0 + wq + 8 * u + g;
      if (i < a.mt)
#pragma unroll
        for (int v = 0; v < 8; v++)
          a.keys[i * FB + wr + 8 * (v / 2) + 2 * t + v % 2] = K::SCALE * high[u][v];
    }
}

template <bool SAMPLE, int WQ>
static int tc_launch(cuda_dev *d, ml_knn_metric metric, const FilterArgs<float> &a, dim3 grid) {
  switch (metric) {
    case ML_KNN_COSINE:
      return cuda_launch<knn_filter_tc_kernel<ML_KNN_COSINE, SAMPLE, WQ>>(d, grid, FILTER_THREADS,
                                                                        0, "knn", a);
    case ML_KNN_IP:
      return cuda_launch<knn_filter_tc_kernel<ML_KNN_IP, SAMPLE, WQ>>(d, grid, FILTER_THREADS, 0,
                                                                    "knn", a);
    default: /* both Euclidean metrics share their key */
      return cuda_launch<knn_filter_tc_kernel<ML_KNN_EUCLIDEAN, SAMPLE, WQ>>(
          d, grid, FILTER_THREADS, 0, "knn", a);
  }
}

int knn_filter_tc(cuda_dev *d, ml_knn_metric metric, const FilterArgs<float> &a, bool sample,
                  dim3 grid) {
  static_assert(32 * 4 == FILTER_TC_QUERIES && 32 * 2 == FILTER_TC_REFS &&
                    32 * 2 == FILTER_TC_SAMPLE_QUERIES,
                "the launch's tiles are the kernel's");
  if (sample) return tc_launch<true, 2>(d, metric, a, grid);
  return tc_launch<false, 4>(d, metric, a, grid);
}
