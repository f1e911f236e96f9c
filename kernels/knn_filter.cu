/* k nearest neighbours, the filtered search: the kNN area's entries
 * filter and sample (contracts in core/knn_backend.h, the argument in
 * core/knn.c). One register-tiled kernel computes the dot products itself
 * and keeps no distance matrix, only the pairs under each query's limit
 * (or each query's block minima over the sample); float32 with split TF32
 * goes to knn_filter_tc.cu's kernel instead.
 *
 * CPU reference: src/cpu/cpu_knn.c (knn_filter, knn_sample). The
 * fast keys differ from the CPU's in their last bits (other summation
 * orders), which only changes which candidates are kept, never the
 * answer. */
#include "knn_filter.cuh"

/* One kernel does both (float32 with split TF32 has its own,
 * knn_filter_tc.cu): a block of FILTER_THREADS computes the dot
 * products of 16 TM queries with 16 TM references at a time, FD
 * coordinates a step through shared memory, each thread a TM x TM block
 * of them in registers (a small GEMM; the query tile is loaded once when
 * d <= FD). The keys never leave the registers. The filter queues the
 * few under a query's limit in shared memory and, when the queue is half
 * full and at the end, ranks them per query, takes each query's places in
 * its list with one atomic on its count, and writes them out; the sample
 * keeps each thread's minimum per (query, reference position modulo
 * ML_KNN_SAMPLE_BLOCKS), which knn_sample_rank then ranks. The filter's
 * grid is query blocks by slices of the references, about FILTER_WAVES
 * waves of blocks; the sample's has one slice, so that each block sees its
 * queries' whole sample. */
#define FILTER_WAVES 16 /* many, so that the last one is a small part */
#define FILTER_TM 4 /* the filter's; the sample's is 8 (ML_KNN_SAMPLE_BLOCKS) */
static_assert(16 * 8 == ML_KNN_SAMPLE_BLOCKS, "a sample block per column of a step");

/* A tile in shared memory: FD coordinates of W rows, transposed, each
 * line padded so that the transposing stores spread over the banks while
 * 4 consecutive rows stay one aligned vector. */
template <class T, int W> using FilterTile = T[FD][W + 16 / sizeof(float)];

/* Rows r0 .. r0 + W - 1 (those below rows) of x, row r at x + r * stride,
 * coordinates k0 .. k0 + FD - 1 (those below d), into s (zeros outside);
 * consecutive threads read consecutive coordinates. */
template <class T, int W>
__device__ __forceinline__ void filter_load(FilterTile<T, W> &s, const T *x, int64_t r0,
                                            int64_t rows, int64_t d, int64_t k0,
                                            int64_t stride) {
  const T *base = x + r0 * stride + k0;
  const int64_t left = rows - r0;
  const int kk = threadIdx.x % FD, width = d - k0 < FD ? (int)(d - k0) : FD;
#pragma unroll
  for (int e0 = 0; e0 < FD * W; e0 += FILTER_THREADS) {
    int r = (e0 + threadIdx.x) / FD;
    s[kk][r] = r < left && kk < width ? base[r * stride + kk] : T(0);
  }
}

/* Four consecutive values of a tile line, in vector loads. */
__device__ __forceinline__ void load4(const float *p, float *v) {
  float4 t = *reinterpret_cast<const float4 *>(p);
  v[0] = t.x, v[1] = t.y, v[2] = t.z, v[3] = t.w;
}
__device__ __forceinline__ void load4(const double *p, double *v) {
  double2 t0 = reinterpret_cast<const double2 *>(p)[0], t1 = reinterpret_cast<const double2 *>(p)[1];
  v[0] = t0.x, v[1] = t0.y, v[2] = t1.x, v[3] = t1.y;
}

template <class T, ml_knn_metric M, bool SAMPLE, int TM>
__global__ void __launch_bounds__(FILTER_THREADS) knn_filter_kernel(FilterArgs<T> a) {
  constexpr int W = 16 * TM;
  __shared__ __align__(16) FilterTile<T, W> qs;
  __shared__ __align__(16) FilterTile<T, W> rs;
  __shared__ FilterQueue<T, SAMPLE ? 1 : W> fq;
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const int64_t i0 = (int64_t)blockIdx.x * W;
  const int64_t j_begin = (int64_t)blockIdx.y * a.slice;
  const int64_t j_end = j_begin + a.slice < a.n ? j_begin + a.slice : a.n;
  const bool q_once = a.d <= FD;
  T qa[TM], lim[TM], low[SAMPLE ? TM : 1][TM];
#pragma unroll
  for (int u = 0; u < TM; u++) {
    int64_t i = i0 + TM * ty + u;
    bool in = i < a.mt;
    qa[u] = in && M != ML_KNN_IP ? a.qaux[i] : T(0);
    lim[u] = in && !SAMPLE ? a.limit[i] : (T)0;
    if (SAMPLE)
#pragma unroll
      for (int v = 0; v < TM; v++) low[u][v] = (T)INFINITY;
  }
  if constexpr (!SAMPLE) filter_queue_init(fq);
  if (q_once) filter_load<T, W>(qs, a.q, i0, a.mt, a.d, 0, a.d);
  for (int64_t j0 = j_begin; j0 < j_end; j0 += W) {
    T acc[TM][TM] = {};
    for (int64_t k0 = 0; k0 < a.d; k0 += FD) {
      if (!q_once) filter_load<T, W>(qs, a.q, i0, a.mt, a.d, k0, a.d);
      filter_load<T, W>(rs, a.refs, j0, j_end, a.d, k0, a.step * a.d);
      __syncthreads();
#pragma unroll
      for (int kk = 0; kk < FD; kk++) {
        T x[TM], y[TM];
#pragma unroll
        for (int h = 0; h < TM; h += 4) {
          load4(&qs[kk][TM * ty + h], x + h);
          load4(&rs[kk][TM * tx + h], y + h);
        }
#pragma unroll
        for (int u = 0; u < TM; u++)
#pragma unroll
          for (int v = 0; v < TM; v++) acc[u][v] = fma(x[u], y[v], acc[u][v]);
      }
      __syncthreads();
    }
    /* the keys replace the dot products; pass marks the filter's pairs
     * (under the limit, or NaN), without branches */
    uint64_t pass = 0;
#pragma unroll
    for (int v = 0; v < TM; v++) {
      const int64_t j = j0 + TM * tx + v;
      const bool in = j < j_end;
      const T ra = M != ML_KNN_IP && in ? a.raux[j * a.step] : T(0);
#pragma unroll
      for (int u = 0; u < TM; u++) {
        T key = metric_key<M>(acc[u][v], qa[u], ra);
        acc[u][v] = key;
        if (SAMPLE) {
          if (in && key < low[u][v]) low[u][v] = key; /* a NaN never is */
        } else {
          pass |= (uint64_t)(in && !(key > lim[u])) << (u * TM + v);
        }
      }
    }
    if constexpr (!SAMPLE) {
      while (pass) { /* rare */
        const int b = __ffsll((long long)pass) - 1;
        pass &= pass - 1;
        T key = T(0);
#pragma unroll
        for (int t = 0; t < TM * TM; t++) /* no dynamic index into registers */
          if (t == b) key = acc[t / TM][t % TM];
        filter_keep(fq, a, i0, TM * ty + b / TM, j0 + TM * tx + b % TM, key);
      }
      filter_step_end(fq, a, i0, j0 + W >= j_end);
    }
  }
  if (SAMPLE)
#pragma unroll
    for (int u = 0; u < TM; u++) {
      int64_t i = i0 + TM * ty + u;
      if (i < a.mt)
#pragma unroll
        for (int v = 0; v < TM; v++) a.keys[i * FB + TM * tx + v] = low[u][v];
    }
}

/* out[i]: the kk-th smallest of row i's FB sample minima, a warp a row;
 * each lane holds FB / 32 of them and ranks them against the row's (ties
 * by place), which the warp passes round by shuffles. */
template <class T>
__global__ void knn_sample_rank(const T *low, int64_t mt, int64_t kk, T *out) {
  constexpr int PER = FB / 32;
  const int lane = threadIdx.x & 31;
  for (int64_t i = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32; i < mt;
       i += (int64_t)gridDim.x * blockDim.x / 32) {
    T v[PER];
    int rank[PER];
#pragma unroll
    for (int s = 0; s < PER; s++) v[s] = low[i * FB + 32 * s + lane], rank[s] = 0;
#pragma unroll
    for (int o = 0; o < FB; o++) {
      const T x = __shfl_sync(FULL, v[o / 32], o % 32);
#pragma unroll
      for (int s = 0; s < PER; s++) rank[s] += x < v[s] || (x == v[s] && o < 32 * s + lane);
    }
#pragma unroll
    for (int s = 0; s < PER; s++)
      if (rank[s] == kk - 1) out[i] = v[s];
  }
}

template <class T>
static void filter_args(FilterArgs<T> &a, const ml_array *q, const ml_array *refs,
                        const ml_array *qaux, const ml_array *raux) {
  a.mt = q->shape[0];
  a.n = refs->shape[0];
  a.d = q->shape[1];
  a.c = 0;
  a.q = array_ptr<const T>(q);
  a.refs = array_ptr<const T>(refs);
  a.qaux = qaux ? array_ptr<const T>(qaux) : nullptr;
  a.raux = raux ? array_ptr<const T>(raux) : nullptr;
  a.limit = nullptr;
  a.self = nullptr;
  a.index = nullptr;
  a.count = nullptr;
}

template <class T, bool SAMPLE, int TM>
static int filter_launch(cuda_dev *d, ml_knn_metric metric, const FilterArgs<T> &a, dim3 grid) {
  switch (metric) {
    case ML_KNN_COSINE:
      return cuda_launch<knn_filter_kernel<T, ML_KNN_COSINE, SAMPLE, TM>>(d, grid, FILTER_THREADS,
                                                                        0, "knn", a);
    case ML_KNN_IP:
      return cuda_launch<knn_filter_kernel<T, ML_KNN_IP, SAMPLE, TM>>(d, grid, FILTER_THREADS, 0,
                                                                    "knn", a);
    default: /* both Euclidean metrics share their key */
      return cuda_launch<knn_filter_kernel<T, ML_KNN_EUCLIDEAN, SAMPLE, TM>>(
          d, grid, FILTER_THREADS, 0, "knn", a);
  }
}

/* The filter's grid for blocks of bq queries taking br references a
 * step: query blocks by slices (a.slice, set here) of at least 4 steps,
 * for about FILTER_WAVES waves of (at least) 2 blocks an SM. */
template <class T>
static dim3 filter_grid(const cuda_dev *d, FilterArgs<T> &a, int64_t bq, int64_t br) {
  int64_t qblocks = (a.mt + bq - 1) / bq;
  int64_t want = FILTER_WAVES * 2 * (int64_t)d->sms;
  int64_t slices = (want + qblocks - 1) / qblocks, most = (a.n + 4 * br - 1) / (4 * br);
  slices = slices > most ? most : slices < 1 ? 1 : slices;
  a.slice = ((a.n + slices - 1) / slices + br - 1) / br * br;
  slices = (a.n + a.slice - 1) / a.slice;
  return dim3((unsigned)qblocks, (unsigned)slices);
}

/* Whether knn_filter_tc.cu's kernel takes the pass: float32 with split
 * TF32 asked for, and at least one coordinate (its kernel loads the
 * references' terms with the first ones). */
template <class T> static bool on_tensor_cores(int tf32, int64_t d) {
  return std::is_same<T, float>::value && tf32 && d > 0;
}

template <class T> static int filter_typed(cuda_dev *d, const ml_knn_filter *f) {
  FilterArgs<T> a;
  filter_args<T>(a, f->queries, f->refs, f->qaux, f->raux);
  a.c = f->keys->shape[1];
  a.step = 1;
  a.limit = array_ptr<const T>(f->limit);
  a.self = f->self ? array_ptr<const int64_t>(f->self) : nullptr;
  a.keys = array_ptr<T>(f->keys);
  a.index = array_ptr<int64_t>(f->index);
  a.count = array_ptr<unsigned long long>(f->count);
  if constexpr (std::is_same<T, float>::value)
    if (on_tensor_cores<T>(f->tf32, a.d)) {
      dim3 grid = filter_grid(d, a, FILTER_TC_QUERIES, FILTER_TC_REFS);
      return knn_filter_tc(d, f->metric, a, false, grid);
    }
  const int64_t W = 16 * FILTER_TM;
  return filter_launch<T, false, FILTER_TM>(d, f->metric, a, filter_grid(d, a, W, W));
}

template <class T> static int sample_typed(cuda_dev *d, const ml_knn_sample *sm) {
  FilterArgs<T> a;
  filter_args<T>(a, sm->queries, sm->refs, sm->qaux, sm->raux);
  a.step = sm->step;
  a.n = (a.n + a.step - 1) / a.step; /* the sample's rows */
  a.slice = a.n;
  cuda_scratch low;
  int rc = low.get(d->index, (size_t)a.mt * FB * sizeof(T), "knn");
  if (rc) return rc;
  a.keys = low.as<T>();
  bool tc = on_tensor_cores<T>(sm->tf32, a.d);
  if constexpr (std::is_same<T, float>::value)
    if (tc)
      rc = knn_filter_tc(d, sm->metric, a, true,
                         dim3((unsigned)((a.mt + FILTER_TC_SAMPLE_QUERIES - 1) /
                                         FILTER_TC_SAMPLE_QUERIES)));
  if (!tc)
    rc = filter_launch<T, true, 8>(d, sm->metric, a, dim3((unsigned)((a.mt + FB - 1) / FB)));
  if (rc) return rc;
  return cuda_launch<knn_sample_rank<T>>(d, grid_for(a.mt * 32, 256, d), 256, 0, "knn", a.keys,
                                         a.mt, sm->kk, array_ptr<T>(sm->out));
}

extern "C" int cuda_knn_filter(const ml_knn_filter *f) {
  cuda_dev *d;
  int rc = cuda_enter(array_device(f->queries), &d);
  if (rc || f->queries->shape[0] == 0 || f->refs->shape[0] == 0) return rc;
  return f->queries->dtype == ML_FLOAT32 ? filter_typed<float>(d, f) : filter_typed<double>(d, f);
}

extern "C" int cuda_knn_sample(const ml_knn_sample *sm) {
  cuda_dev *d;
  int rc = cuda_enter(array_device(sm->queries), &d);
  if (rc || sm->queries->shape[0] == 0) return rc;
  return sm->queries->dtype == ML_FLOAT32 ? sample_typed<float>(d, sm)
                                          : sample_typed<double>(d, sm);
}

