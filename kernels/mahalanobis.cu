/* The squared Mahalanobis distances |x_i P_k - c_k|^2 (contract in
 * core/linalg_backend.h, its mahalanobis entry).
 *
 * CPU reference: src/cpu/cpu_mahalanobis.c.
 *
 * On compute capability 9.0 and up, for d >= FUSED_MIN_D, one kernel
 * computes the products x P_k on the float64 tensor cores (mma.sync
 * m16n8k16) and squares and sums them in registers: the n x K d products
 * never reach memory. The K factors' columns are stacked (each padded to
 * dp, a multiple of 16) and laid out by a first kernel in the order the
 * MMA's A fragments want them, so that a thread's four values of a
 * fragment are 32 contiguous bytes; the samples, whose rows are the B
 * fragments, come 16 bytes at a time (k-slots q and q + 4 of a fragment
 * hold the consecutive k = 2 q, 2 q + 1, on both sides). A CTA computes
 * 64 factor columns by 128 samples, over k up to its columns' triangle
 * (P_k is upper triangular: column j needs rows 0..j), in stages of 16
 * through a 3-deep cp.async pipeline; its epilogue writes one sum of
 * squares per 16 columns and sample, and a last kernel adds each
 * factor's, in a fixed order: the result is the same every run. The
 * samples go through in chunks whose partial sums fit PART_DOUBLES. Elsewhere
 * each factor is a cuBLAS product of a block of rows, then each row's sum. */
#include <cuda_runtime.h>

#include "blas.cuh"
#include "launch.cuh"
#include "scratch.cuh"
#include "stream.cuh"
#include "warp.cuh"

namespace {

constexpr int FM = 64;        /* factor columns a CTA */
constexpr int XN = 128;       /* samples a CTA */
constexpr int STAGES = 3;     /* stages in flight */
constexpr int THREADS = 128;  /* 2 x 2 warps of 32 columns by 64 samples */
constexpr int FUSED_MIN_D = 32;
constexpr int64_t FALLBACK_ROWS = 8192;
constexpr int64_t PART_DOUBLES = (int64_t)1 << 25; /* 256 MiB of partial sums */

struct Tiles {
  const double *x;  /* n x ldx, ldx even, rows 16-byte aligned */
  const double *f;  /* factor tiles: [mtiles][kp / 8][128] */
  const double *c;  /* K dp: c_k's entries, zero past d */
  double *part;     /* mtiles x n: each 16 columns' sums of squares */
  int64_t n, ldx;
  int d, dp, kp, mtiles, tiles_x, tiles_f;
};

/* The factors P (K x d x d) as 16-column tiles in fragment order: the
 * entry of stacked column col = k dp + j and row r (of kp) at
 * ((col / 16 * kp / 8 + r / 8) * 64 + U) * 2 + (col % 16) / 8, U = 2 (4 g
 * + q) + s for g = col % 8, q = r % 8 / 2, s = r % 2; zero past d and
 * below the diagonal. */
__global__ void factor_tiles(const double *p, const double *c, int64_t d, int64_t dp, int64_t kp,
                             int64_t cols, int64_t k, double *f, double *cpad) {
  const int64_t total = cols * kp;
  for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < total;
       e += (int64_t)gridDim.x * blockDim.x) {
    const int64_t col = e / kp, r = e % kp, comp = col / dp, j = col % dp;
    const bool in = comp < k && j < d;
    const double v = in && r <= j ? p[(comp * d + r) * d + j] : 0.0;
    const int64_t g = col & 7, which = (col >> 3) & 1, q = (r & 7) >> 1, s = r & 1;
    f[(((col >> 4) * (kp / 8) + (r >> 3)) * 64 + 2 * (4 * g + q) + s) * 2 + which] = v;
    if (r == 0) cpad[col] = in ? c[comp * d + j] : 0.0;
  }
}

/* The fused kernel's pieces exist where its MMA does (and in the host
 * pass, which compiles no device code). */
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
constexpr int GROUP = 8; /* sample tiles that take every column tile in turn */
constexpr int BK = 16;   /* k a stage */

/* Stage kt of the factor tiles from column f0: 4 tiles of 2 KB, the 16
 * bytes of unit u at u ^ (u / 8 % 2) of their kilobyte, so that a
 * quarter warp's reads (units 2 L + s of lanes L) fall on distinct banks. */
__device__ __forceinline__ void load_factors(double *s, const Tiles &t, int f0, int kt, int tid) {
#pragma unroll
  for (int j = 0; j < FM / 16; j++) {
    const double *src = t.f + ((int64_t)(f0 / 16 + j) * (t.kp / 8) + 2 * kt) * 128 + 2 * tid;
    const int u = tid & 63;
    cp_async16(s + j * 256 + (tid & 64) * 2 + 2 * (u ^ ((u >> 3) & 1)), src);
  }
}

/* Stage kt of samples x0 ..: 8 units of 16 bytes a row, unit u at u ^ 4
 * in odd rows; rows past n and k past ldx zero. */
__device__ __forceinline__ void load_samples(double *s, const Tiles &t, int64_t x0, int kt,
                                             int tid) {
  const int r = tid >> 3, u = tid & 7, k = kt * BK + 2 * u;
  const double *src = t.x + (x0 + r) * t.ldx + k;
  double *dst = s + r * 16 + 2 * (u ^ ((r & 1) << 2));
#pragma unroll
  for (int j = 0; j < XN / 16; j++) {
    const bool ok = k < t.ldx && x0 + r + 16 * j < t.n;
    cp_async16_or_zero(dst + j * 16 * 16, ok ? src + j * 16 * t.ldx : t.x, ok);
  }
}

#endif

/* One CTA: columns f0 .. f0 + 63 of the stacked factors by samples x0 ..
 * x0 + 127; tiles taken by groups of GROUP sample tiles, all column
 * tiles of a group in turn, so that its samples stay in L2. */
__global__ void __launch_bounds__(THREADS, 2) distance_tiles(Tiles t) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  extern __shared__ double smem[];
  double *sf = smem, *sx = smem + STAGES * FM * 16;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int g = lane >> 2, q = lane & 3, wm = warp & 1, wn = warp >> 1;
  const int64_t per = (int64_t)GROUP * t.tiles_f;
  const int64_t grp = blockIdx.x / per, r = blockIdx.x % per;
  const int64_t gm = min((int64_t)GROUP, t.tiles_x - grp * GROUP);
  const int f0 = (int)(r / gm) * FM;
  const int64_t x0 = (grp * GROUP + r % gm) * XN;
  int ke = 0; /* the tile's rows: the largest j + 1 of its columns */
  for (int c = f0; c < f0 + FM && c < t.mtiles * 16; c += 16)
    if (c % t.dp < t.d) ke = max(ke, min(c % t.dp + 15, t.d - 1) + 1);
  const int nk = (ke + BK - 1) / BK;

  double acc[2][8][4] = {};
#pragma unroll
  for (int s = 0; s < STAGES - 1; s++) {
    if (s < nk) {
      load_factors(sf + s * FM * 16, t, f0, s, tid);
      load_samples(sx + s * XN * 16, t, x0, s, tid);
    }
    cp_async_commit();
  }
  const int swf = g & 1, swx = (g & 1) << 2;
  for (int kt = 0; kt < nk; kt++) {
    cp_async_wait<STAGES - 2>();
    __syncthreads();
    const int next = kt + STAGES - 1;
    if (next < nk) {
      load_factors(sf + next % STAGES * FM * 16, t, f0, next, tid);
      load_samples(sx + next % STAGES * XN * 16, t, x0, next, tid);
    }
    cp_async_commit();
    const double *F = sf + kt % STAGES * FM * 16 + wm * 2 * 256;
    const double *X = sx + kt % STAGES * XN * 16 + (wn * 64 + g) * 16;
    /* one m16n8k16 a block: its halves are the stage's two groups of 8 */
    double a[2][8], b[8][4];
#pragma unroll
    for (int h = 0; h < 2; h++) {
#pragma unroll
      for (int i = 0; i < 2; i++) {
        const double *blk = F + i * 256 + h * 128;
        const double2 lo = *(const double2 *)(blk + 2 * ((2 * lane) ^ swf));
        const double2 hi = *(const double2 *)(blk + 2 * ((2 * lane + 1) ^ swf));
        a[i][4 * h] = lo.x;
        a[i][4 * h + 1] = lo.y;
        a[i][4 * h + 2] = hi.x;
        a[i][4 * h + 3] = hi.y;
      }
#pragma unroll
      for (int j = 0; j < 8; j++) {
        const double2 v = *(const double2 *)(X + j * 8 * 16 + 2 * ((4 * h + q) ^ swx));
        b[j][2 * h] = v.x;
        b[j][2 * h + 1] = v.y;
      }
    }
#pragma unroll
    for (int i = 0; i < 2; i++)
#pragma unroll
      for (int j = 0; j < 8; j++) tc_mma_f64(acc[i][j], a[i], b[j]);
  }
  cp_async_wait<0>();
  /* rows g and g + 8 of m-tile i are columns col and col + 8; lanes of
   * one q hold one pair of samples: their sums meet across g */
#pragma unroll
  for (int i = 0; i < 2; i++) {
    const int mt = f0 / 16 + wm * 2 + i, col = mt * 16 + g;
    if (mt >= t.mtiles) continue;
    const double c0 = t.c[col], c8 = t.c[col + 8];
#pragma unroll
    for (int j = 0; j < 8; j++)
#pragma unroll
      for (int e = 0; e < 2; e++) {
        const double u = acc[i][j][e] - c0, v = acc[i][j][2 + e] - c8;
        double s = u * u + v * v;
        s += __shfl_xor_sync(0xffffffffu, s, 4);
        s += __shfl_xor_sync(0xffffffffu, s, 8);
        s += __shfl_xor_sync(0xffffffffu, s, 16);
        const int64_t row = x0 + wn * 64 + j * 8 + 2 * q + e;
        if (g == 0 && row < t.n) t.part[mt * t.n + row] = s;
      }
  }
#endif
}

/* out[i][k] = the sum of factor k's 16-column sums, in order. */
__global__ void factor_sums(const double *part, double *out, int64_t n, int64_t k, int64_t per,
                            int64_t used) {
  const int64_t total = n * k;
  for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < total;
       e += (int64_t)gridDim.x * blockDim.x) {
    const int64_t i = e % n, comp = e / n;
    double s = 0;
    for (int64_t m = 0; m < used; m++) s += part[(comp * per + m) * n + i];
    out[i * k + comp] = s;
  }
}

/* out[(i0 + i) k + comp] = |y_i - c|^2 for the m rows y_i of y (d apart). */
__global__ void row_distances(const double *y, const double *c, double *out, int64_t m,
                              int64_t d, int64_t k, int64_t comp, int64_t i0) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < m;
       i += (int64_t)gridDim.x * blockDim.x) {
    double s = 0;
    for (int64_t e = 0; e < d; e++) {
      const double v = y[i * d + e] - c[e];
      s += v * v;
    }
    out[(i0 + i) * k + comp] = s;
  }
}

const char *const OP = "linalg.mahalanobis";

/* The samples go through in chunks whose partial sums take at most
 * PART_DOUBLES. */
int fused(cuda_dev *dev, double *out, const double *x, const double *p, const double *c,
          int64_t n, int64_t d, int64_t k) {
  const int64_t dp = (d + 15) / 16 * 16, kp = dp;
  const int64_t mtiles = k * dp / 16, tiles_f = (mtiles + FM / 16 - 1) / (FM / 16);
  const int64_t cols = tiles_f * FM;
  int64_t rows = PART_DOUBLES / mtiles / XN * XN;
  rows = rows < XN ? XN : rows > n ? n : rows;
  cuda_scratch pad, f, cpad, part;
  Tiles t = {};
  const double *xs;
  int rc = cuda_aligned_rows(dev, x, n, d, pad, &xs, &t.ldx, OP);
  if (!rc) rc = f.get(dev->index, (size_t)(cols * kp) * sizeof(double), OP);
  if (!rc) rc = cpad.get(dev->index, (size_t)cols * sizeof(double), OP);
  if (!rc) rc = part.get(dev->index, (size_t)(mtiles * rows) * sizeof(double), OP);
  if (!rc)
    rc = cuda_launch<factor_tiles>(dev, grid_for(cols * kp, 256, dev), 256, 0, OP, p, c, d, dp,
                                   kp, cols, k, f.as<double>(), cpad.as<double>());
  t.f = f.as<const double>();
  t.c = cpad.as<const double>();
  t.part = part.as<double>();
  t.d = (int)d;
  t.dp = (int)dp;
  t.kp = (int)kp;
  t.mtiles = (int)mtiles;
  t.tiles_f = (int)tiles_f;
  const size_t smem = (size_t)STAGES * (FM + XN) * 16 * sizeof(double);
  for (int64_t i0 = 0; !rc && i0 < n; i0 += rows) {
    t.n = n - i0 < rows ? n - i0 : rows;
    t.x = xs + i0 * t.ldx;
    t.tiles_x = (int)((t.n + XN - 1) / XN);
    rc = cuda_launch<distance_tiles>(dev, dim3((unsigned)(t.tiles_x * tiles_f)), THREADS, smem,
                                     OP, t);
    if (!rc)
      rc = cuda_launch<factor_sums>(dev, grid_for(t.n * k, 256, dev), 256, 0, OP,
                                    part.as<const double>(), out + i0 * k, t.n, k, dp / 16,
                                    (d + 15) / 16);
  }
  return rc;
}

int blocked(cuda_dev *dev, double *out, const double *x, const double *p, const double *c,
            int64_t n, int64_t d, int64_t k) {
  cublasHandle_t h;
  cuda_scratch y;
  const int64_t rows = n < FALLBACK_ROWS ? n : FALLBACK_ROWS;
  int rc = cuda_blas_handle(dev, &h);
  if (!rc) rc = y.get(dev->index, (size_t)(rows * d) * sizeof(double), OP);
  const double one = 1, zero = 0;
  for (int64_t i0 = 0; !rc && i0 < n; i0 += rows) {
    const int64_t m = n - i0 < rows ? n - i0 : rows;
    for (int64_t comp = 0; !rc && comp < k; comp++) {
      /* row-major Y = X P is column-major Y^T = P^T X^T */
      rc = cuda_blas_check(cublasDgemm_64(h, CUBLAS_OP_N, CUBLAS_OP_N, d, m, d, &one,
                                          p + comp * d * d, d, x + i0 * d, d, &zero,
                                          y.as<double>(), d),
                           OP);
      if (!rc)
        rc = cuda_launch<row_distances>(dev, grid_for(m, 256, dev), 256, 0, OP,
                                        y.as<const double>(), c + comp * d, out, m, d, k,
                                        comp, i0);
    }
  }
  return rc;
}

}  // namespace

extern "C" int cuda_mahalanobis(const ml_array *out, const ml_array *x, const ml_array *p,
                                const ml_array *c) {
  cuda_dev *dev;
  int rc = cuda_enter(array_device(x), &dev);
  if (rc) return rc;
  const int64_t n = x->shape[0], d = x->shape[1], k = p->shape[0];
  double *o = array_ptr<double>(out);
  const double *xs = array_ptr<const double>(x), *ps = array_ptr<const double>(p),
               *cs = array_ptr<const double>(c);
  if (dev->cc >= 90 && d >= FUSED_MIN_D) return fused(dev, o, xs, ps, cs, n, d, k);
  return blocked(dev, o, xs, ps, cs, n, d, k);
}
