/* Moving sums on the GPU (filter_backend.h's box entry; CPU reference
 * src/cpu/cpu_filter.c, positions past the edges folded by
 * core/filter_fold.h as there), in double. Lines of one sample stride
 * (inner = 1) and windows of at most BOX_HALO + 1 samples go through
 * box_tile: a block takes the
 * BOX_TILE + BOX_HALO - (length - 1) outputs of a line whose samples fill
 * its buffer, loads those samples into shared memory as doubles (two
 * loads in flight a thread), scans them (16 a thread, then a block scan
 * of the threads' totals) and takes differences of the prefix sums,
 * divided by the divisor unless it is 1 (window_sum's).
 * Other lines (and longer windows) go through box_runs: a thread keeps a
 * running sum along BOX_RUN (or length) outputs of one column; adjacent
 * threads take adjacent columns. */
#include <cub/block/block_scan.cuh>

#include "filter.cuh"
#include "launch.cuh"

#define BOX_THREADS 256
#define BOX_TILE 2048
#define BOX_HALO 2048
#define BOX_ITEMS 16 /* (BOX_TILE + BOX_HALO) / BOX_THREADS */
#define BOX_RUN 256

struct box_args {
  const void *in;
  void *out;
  int64_t n0, n, n2, length, start;
  double divisor, cval;
  int mode;
};

__device__ __forceinline__ int bpad(int e) { return e + e / BOX_ITEMS; }

/* Contiguous lines, length - 1 <= BOX_HALO; tiles_per_line tiles of
 * step = BOX_TILE + BOX_HALO - (length - 1) outputs a line (the samples a
 * tile reads fill its buffer). */
template <class T>
__global__ void __launch_bounds__(BOX_THREADS) box_tile(box_args a, int64_t tiles_per_line,
                                                    int step) {
  constexpr int S = BOX_TILE + BOX_HALO;
  using Scan = cub::BlockScan<double, BOX_THREADS>;
  __shared__ typename Scan::TempStorage tmp;
  __shared__ double v[S + S / BOX_ITEMS];
  const T *in = (const T *)a.in;
  T *out = (T *)a.out;
  const ml_filter_mode mode = (ml_filter_mode)a.mode;
  const int L = (int)a.length;
  for (int64_t t = blockIdx.x; t < a.n0 * tiles_per_line; t += gridDim.x) {
    const int64_t line = t / tiles_per_line, i0 = t % tiles_per_line * step;
    const int cnt = (int)(a.n - i0 < step ? a.n - i0 : step), span = cnt + L - 1;
    const T *src = in + line * a.n;
    const int64_t p0 = i0 + a.start;
    const bool inside = p0 >= 0 && p0 + span <= a.n;
#pragma unroll 2
    for (int u = 0; u < BOX_ITEMS; u++) {
      const int e = threadIdx.x + u * BOX_THREADS;
      double x = 0;
      if (e < span) {
        if (inside) {
          x = (double)src[p0 + e];
        } else {
          const int64_t q = ml_filter_fold(p0 + e, a.n, mode);
          x = q < 0 ? a.cval : (double)src[q];
        }
      }
      v[bpad(e)] = x;
    }
    __syncthreads();
    double part[BOX_ITEMS];
#pragma unroll
    for (int i = 0; i < BOX_ITEMS; i++)
      part[i] = v[bpad(threadIdx.x * BOX_ITEMS + i)] + (i > 0 ? part[i - 1] : 0.0);
    double before;
    Scan(tmp).ExclusiveSum(part[BOX_ITEMS - 1], before);
#pragma unroll
    for (int i = 0; i < BOX_ITEMS; i++) v[bpad(threadIdx.x * BOX_ITEMS + i)] = before + part[i];
    __syncthreads();
    for (int i = threadIdx.x; i < cnt; i += BOX_THREADS) {
      const double s = v[bpad(i + L - 1)] - (i > 0 ? v[bpad(i - 1)] : 0.0);
      out[line * a.n + i0 + i] = (T)(a.divisor == 1 ? s : s / a.divisor);
    }
    __syncthreads();
  }
}

/* Any lines: a thread keeps the running sum of chunk outputs of one
 * column (line, c), adjacent threads on adjacent columns. */
template <class T>
__global__ void box_runs(box_args a, int64_t chunk, int64_t chunks) {
  const T *in = (const T *)a.in;
  T *out = (T *)a.out;
  const ml_filter_mode mode = (ml_filter_mode)a.mode;
  const int64_t total = a.n0 * chunks * a.n2, L = a.length;
  for (int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; idx < total;
       idx += (int64_t)gridDim.x * blockDim.x) {
    const int64_t c = idx % a.n2, ch = idx / a.n2 % chunks, line = idx / a.n2 / chunks;
    const int64_t b = ch * chunk, e = b + chunk < a.n ? b + chunk : a.n;
    const T *src = in + line * a.n * a.n2 + c;
    T *dst = out + line * a.n * a.n2 + c;
    const int64_t p0 = b + a.start;
    const bool inside = p0 >= 0 && p0 + (e - b) + L - 1 <= a.n;
    auto val = [&](int64_t p) -> double {
      if (inside) return (double)src[p * a.n2];
      const int64_t q = ml_filter_fold(p, a.n, mode);
      return q < 0 ? a.cval : (double)src[q * a.n2];
    };
    double s = 0;
    for (int64_t k = 0; k < L; k++) s += val(p0 + k);
    dst[b * a.n2] = (T)(s / a.divisor);
    for (int64_t i = b + 1; i < e; i++) {
      s += val(i + a.start + L - 1) - val(i - 1 + a.start);
      dst[i * a.n2] = (T)(s / a.divisor);
    }
  }
}

template <class T>
static int box_plan(cuda_dev *d, const ml_filter_box *f) {
  box_args a;
  a.in = ml_array_data(f->in);
  a.out = ml_array_data(f->out);
  a.n0 = f->in->shape[0], a.n = f->in->shape[1], a.n2 = f->in->shape[2];
  a.length = f->length, a.start = f->start;
  a.divisor = f->divisor, a.cval = f->cval;
  a.mode = (int)f->mode;
  if (a.n0 * a.n * a.n2 == 0) return ML_OK;
  if (a.n2 == 1 && a.length - 1 <= BOX_HALO) {
    const int step = (int)(BOX_TILE + BOX_HALO - (a.length - 1));
    const int64_t per_line = (a.n + step - 1) / step;
    return cuda_launch<box_tile<T>>(d, blocks_for(a.n0 * per_line, 1), BOX_THREADS, 0, "window sum",
                                    a, per_line, step);
  }
  const int64_t chunk = a.length > BOX_RUN ? a.length : BOX_RUN;
  const int64_t chunks = (a.n + chunk - 1) / chunk, total = a.n0 * chunks * a.n2;
  return cuda_launch<box_runs<T>>(d, grid_for(total, BOX_THREADS, d), BOX_THREADS, 0,
                                  "window sum", a,
                                  chunk, chunks);
}

int cuda_filter_box(const ml_filter_box *f) {
  cuda_dev *d;
  int rc = cuda_enter(array_device(f->in), &d);
  if (rc) return rc;
  return f->in->dtype == ML_FLOAT32 ? box_plan<float>(d, f) : box_plan<double>(d, f);
}
