/* Correlation through cuFFT: the path of kernels/filter.cu for masks of
 * FILTER_FFT_MIN_TAPS_F32 or _F64 taps or more, or when asked for.
 *
 * CPU reference: src/cpu/cpu_filter.c (direct sums). With L = o + k - 1
 * samples a dimension, the input extended from start (core/filter_fold.h)
 * is E, zero-padded to fast sizes P >= L (2^a 3^b 5^c 7^d), so that the
 * circular correlation of E with the mask W (reversed under flip, padded
 * likewise) equals the linear one on the first o samples of each
 * dimension: out = IFFT(FFT(E) conj(FFT(W))) / (P0 P1 P2), cropped. The
 * transforms run in the dtype's precision, so the error is bounded
 * norm-wise (core/filter_backend.h), not elementwise.
 *
 * Plans: a forward (real to complex) and an inverse plan for each size
 * and precision, kept in a small cache across calls (making one takes far
 * longer than a transform) and made without work areas: every call gives
 * them one from the caching allocator. A plan evicted from the cache is
 * destroyed after its device's stream has drained. */
#include <cufft.h>

#include "filter.cuh"
#include "launch.cuh"
#include "scratch.cuh"

#define THREADS 256
#define PLANS 8

struct fft_plan {
  int used, device, rank, f32;
  int dims[3];
  cufftHandle fwd, inv;
  size_t work;
  uint64_t stamp;
};

static fft_plan plans[PLANS];
static uint64_t plan_clock;

static int fft_check(cufftResult r, const char *op) {
  if (r == CUFFT_SUCCESS) return ML_OK;
  if (r == CUFFT_ALLOC_FAILED) return ml_fail(ML_ENOMEM, "cuda: out of memory in %s", op);
  return ml_fail(ML_EDEVICE, "cuda: cuFFT error %d in %s", (int)r, op);
}

/* The smallest 2^a 3^b 5^c 7^d >= n. */
static int64_t fast_size(int64_t n) {
  static const int primes[] = {2, 3, 5, 7};
  for (int64_t m = n > 1 ? n : 1;; m++) {
    int64_t r = m;
    for (int f : primes)
      while (r % f == 0) r /= f;
    if (r == 1) return m;
  }
}

static void plan_destroy(fft_plan *p) {
  cufftDestroy(p->fwd);
  cufftDestroy(p->inv);
  p->used = 0;
}

/* Slot s emptied: its plans destroyed once their device is idle, d made
 * current again. */
static int plan_evict(cuda_dev *d, fft_plan *p) {
  if (!p->used) return ML_OK;
  cuda_dev *od;
  int rc = cuda_select(p->device, &od);
  if (!rc) rc = cuda_check(cudaStreamSynchronize(od->stream), "filter");
  plan_destroy(p);
  int rc2 = cuda_select(d->index, &od);
  return rc ? rc : rc2;
}

/* The plans of rank dims for d (current), from the cache or made. */
static int plan_get(cuda_dev *d, int rank, const int *dims, int f32, fft_plan **out) {
  fft_plan *slot = &plans[0];
  for (int i = 0; i < PLANS; i++) {
    fft_plan *p = &plans[i];
    bool same = p->used && p->device == d->index && p->rank == rank && p->f32 == f32;
    for (int r = 0; same && r < rank; r++) same = p->dims[r] == dims[r];
    if (same) {
      p->stamp = ++plan_clock;
      *out = p;
      return ML_OK;
    }
    if (!p->used ? slot->used : slot->used && p->stamp < slot->stamp) slot = p;
  }
  int rc = plan_evict(d, slot);
  if (rc) return rc;
  fft_plan p = {};
  p.device = d->index, p.rank = rank, p.f32 = f32;
  for (int r = 0; r < rank; r++) p.dims[r] = dims[r];
  const char *op = "making an FFT plan";
  size_t w1 = 0, w2 = 0;
  rc = fft_check(cufftCreate(&p.fwd), op);
  if (rc) return rc;
  rc = fft_check(cufftCreate(&p.inv), op);
  if (rc) {
    cufftDestroy(p.fwd);
    return rc;
  }
  if (!rc) rc = fft_check(cufftSetAutoAllocation(p.fwd, 0), op);
  if (!rc) rc = fft_check(cufftSetAutoAllocation(p.inv, 0), op);
  if (!rc)
    rc = fft_check(cufftMakePlanMany(p.fwd, rank, p.dims, nullptr, 1, 0, nullptr, 1, 0,
                                     f32 ? CUFFT_R2C : CUFFT_D2Z, 1, &w1),
                   op);
  if (!rc)
    rc = fft_check(cufftMakePlanMany(p.inv, rank, p.dims, nullptr, 1, 0, nullptr, 1, 0,
                                     f32 ? CUFFT_C2R : CUFFT_Z2D, 1, &w2),
                   op);
  if (rc) {
    plan_destroy(&p);
    return rc;
  }
  p.work = w1 > w2 ? w1 : w2;
  p.used = 1;
  p.stamp = ++plan_clock;
  *slot = p;
  *out = slot;
  return ML_OK;
}

struct fft_args {
  int64_t n[3], o[3], k[3], len[3], P[3], start[3];
  int mode, flip;
  double cval;
};

/* E (P0 x P1 x P2) = the extended input over len, zeros past it. */
template <class T>
__global__ void fft_extend(fft_args a, const T *in, T *E) {
  const int64_t total = a.P[0] * a.P[1] * a.P[2];
  const ml_filter_mode mode = (ml_filter_mode)a.mode;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total;
       i += (int64_t)gridDim.x * blockDim.x) {
    const int64_t e2 = i % a.P[2], e1 = i / a.P[2] % a.P[1], e0 = i / a.P[2] / a.P[1];
    T v = T(0);
    if (e0 < a.len[0] && e1 < a.len[1] && e2 < a.len[2]) {
      const int64_t q0 = ml_filter_fold(e0 + a.start[0], a.n[0], mode);
      const int64_t q1 = ml_filter_fold(e1 + a.start[1], a.n[1], mode);
      const int64_t q2 = ml_filter_fold(e2 + a.start[2], a.n[2], mode);
      v = q0 < 0 || q1 < 0 || q2 < 0 ? (T)a.cval : in[(q0 * a.n[1] + q1) * a.n[2] + q2];
    }
    E[i] = v;
  }
}

/* W (P0 x P1 x P2) = the mask, reversed under flip, zeros past it. */
template <class T>
__global__ void fft_mask(fft_args a, const double *mask, T *W) {
  const int64_t total = a.P[0] * a.P[1] * a.P[2];
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total;
       i += (int64_t)gridDim.x * blockDim.x) {
    int64_t j2 = i % a.P[2], j1 = i / a.P[2] % a.P[1], j0 = i / a.P[2] / a.P[1];
    T v = T(0);
    if (j0 < a.k[0] && j1 < a.k[1] && j2 < a.k[2]) {
      if (a.flip) j0 = a.k[0] - 1 - j0, j1 = a.k[1] - 1 - j1, j2 = a.k[2] - 1 - j2;
      v = (T)mask[(j0 * a.k[1] + j1) * a.k[2] + j2];
    }
    W[i] = v;
  }
}

/* s = s conj(w) scale, elementwise. */
template <class C, class R>
__global__ void fft_product(C *s, const C *w, int64_t n, R scale) {
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    const C x = s[i], y = w[i];
    C r;
    r.x = (x.x * y.x + x.y * y.y) * scale;
    r.y = (x.y * y.x - x.x * y.y) * scale;
    s[i] = r;
  }
}

/* out (o0 x o1 x o2) = the first o samples of E (P0 x P1 x P2). */
template <class T>
__global__ void fft_crop(fft_args a, const T *E, T *out) {
  const int64_t total = a.o[0] * a.o[1] * a.o[2];
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total;
       i += (int64_t)gridDim.x * blockDim.x) {
    const int64_t x = i % a.o[2], y = i / a.o[2] % a.o[1], z = i / a.o[2] / a.o[1];
    out[i] = E[(z * a.P[1] + y) * a.P[2] + x];
  }
}

template <class T> struct fft_types;
template <> struct fft_types<float> {
  using C = cufftComplex;
  static cufftResult forward(cufftHandle h, float *in, C *out) {
    return cufftExecR2C(h, in, out);
  }
  static cufftResult inverse(cufftHandle h, C *in, float *out) {
    return cufftExecC2R(h, in, out);
  }
};
template <> struct fft_types<double> {
  using C = cufftDoubleComplex;
  static cufftResult forward(cufftHandle h, double *in, C *out) {
    return cufftExecD2Z(h, in, out);
  }
  static cufftResult inverse(cufftHandle h, C *in, double *out) {
    return cufftExecZ2D(h, in, out);
  }
};

template <class T>
static int fft_correlate(cuda_dev *d, const filter_plan *p) {
  using F = fft_types<T>;
  using C = typename F::C;
  const char *op = "filter (FFT)";
  fft_args a;
  int dims[3], rank = 0;
  int64_t total = 1;
  for (int i = 0; i < 3; i++) {
    a.n[i] = p->n[i], a.o[i] = p->o[i], a.k[i] = p->k[i], a.start[i] = p->start[i];
    a.len[i] = p->o[i] + p->k[i] - 1;
    a.P[i] = fast_size(a.len[i]);
    if (a.P[i] > INT32_MAX) return ML_ENOMEM;
    if (a.P[i] > 1) dims[rank++] = (int)a.P[i];
    total *= a.P[i];
  }
  a.mode = (int)p->mode, a.flip = p->flip, a.cval = p->cval;
  if (rank == 0) return ML_ENOMEM;
  const int64_t last = dims[rank - 1], spectrum = total / last * (last / 2 + 1);
  fft_plan *plan;
  int rc = plan_get(d, rank, dims, sizeof(T) == 4, &plan);
  if (rc) return rc;
  cuda_scratch E, W, SE, SW, work;
  if (E.get(d->index, (size_t)total * sizeof(T), op) ||
      W.get(d->index, (size_t)total * sizeof(T), op) ||
      SE.get(d->index, (size_t)spectrum * sizeof(C), op) ||
      SW.get(d->index, (size_t)spectrum * sizeof(C), op) ||
      work.get(d->index, plan->work, op))
    return ML_ENOMEM;
  const unsigned grid = grid_for(total, THREADS, d);
  rc = cuda_launch<fft_extend<T>>(d, grid, THREADS, 0, op, a, (const T *)p->in, E.as<T>());
  if (!rc) rc = cuda_launch<fft_mask<T>>(d, grid, THREADS, 0, op, a, p->mask, W.as<T>());
  for (cufftHandle h : {plan->fwd, plan->inv}) {
    if (!rc) rc = fft_check(cufftSetStream(h, d->stream), op);
    if (!rc) rc = fft_check(cufftSetWorkArea(h, work.ptr), op);
  }
  if (!rc) rc = fft_check(F::forward(plan->fwd, E.as<T>(), SE.as<C>()), op);
  if (!rc) rc = fft_check(F::forward(plan->fwd, W.as<T>(), SW.as<C>()), op);
  if (!rc)
    rc = cuda_launch<fft_product<C, T>>(d, grid_for(spectrum, THREADS, d), THREADS, 0, op,
                                        SE.as<C>(), (const C *)SW.as<C>(), spectrum,
                                        (T)(1.0 / (double)total));
  if (!rc) rc = fft_check(F::inverse(plan->inv, SE.as<C>(), E.as<T>()), op);
  if (!rc)
    rc = cuda_launch<fft_crop<T>>(d, grid_for(p->o[0] * p->o[1] * p->o[2], THREADS, d),
                                  THREADS, 0, op, a, (const T *)E.as<T>(), (T *)p->out);
  return rc;
}

int filter_fft(cuda_dev *d, const filter_plan *p, int f32) {
  return f32 ? fft_correlate<float>(d, p) : fft_correlate<double>(d, p);
}
