/* The weighted scatters x^T diag(w_k) x (contract in core/linalg_backend.h,
 * its weighted_gram entry).
 *
 * CPU reference: src/cpu/cpu_gram_weighted.c.
 *
 * On compute capability 9.0 and up, for d >= FUSED_MIN_D, one kernel
 * computes the lower triangle's 64 x 64 tiles on the float64 tensor cores
 * (mma.sync m16n8k16), the weights applied to the A fragments in registers:
 * no weighted copy of x is ever written. It takes only the samples whose
 * weight is not zero, whose terms are exactly zero: a mixture's
 * responsibilities mostly are (83% of them on Fashion-MNIST after one
 * iteration from k-means). Three small kernels first list each
 * component's such samples in ascending order with their weights, and
 * their count; the launch is sized for the dense case (nothing is read
 * back), and the CTAs of chunks past a component's count return at once.
 * A CTA takes one tile of one component over one chunk of its listed
 * samples; both operands are the same rows of x (the samples are the
 * MMA's k), 16 a stage through a 4-deep cp.async pipeline, their indices
 * read one stage ahead, a diagonal tile reading its one block of columns
 * once. The A fragment's rows g and g + 8 are the tile's consecutive
 * features 2 g and 2 g + 1, so that a thread reads each pair of them in
 * one 16-byte load. Each chunk's tiles go to a buffer of partial sums; a
 * last kernel adds the chunks in a fixed order and writes both triangles:
 * the result is symmetric to the bit and the same every run.
 * Elsewhere each component is a weighted copy of a block of rows and
 * cuBLAS's syrkx, then its triangle mirrored. */
#include <cuda_runtime.h>
#include <limits.h>

#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

#include "blas.cuh"
#include "launch.cuh"
#include "scratch.cuh"
#include "stream.cuh"
#include "warp.cuh"

namespace {

const char *const OP = "linalg.gram";

constexpr int TILE = 64;     /* a CTA's tile of the result */
constexpr int BK = 16;       /* samples a stage */
constexpr int STAGES = 4;    /* stages in flight */
constexpr int THREADS = 128; /* 2 x 2 warps of 32 x 32 */
constexpr int CTAS_PER_SM = 3;
constexpr int WAVES = 16;    /* CTAs a launch aims at, in waves of the GPU */
constexpr int64_t CHUNK_MIN = 1024;
constexpr int FUSED_MIN_D = 32;
constexpr int64_t FALLBACK_ROWS = 8192;
constexpr int64_t PART_DOUBLES = (int64_t)1 << 25; /* 256 MiB of partial sums */
constexpr int SEG_THREADS = 256, PER_THREAD = 8;   /* the listing's blocks */
constexpr int64_t SEG = SEG_THREADS * PER_THREAD; /* samples a block */

struct Scatter {
  const double *x;  /* n x ldx, ldx even, rows 16-byte aligned */
  const double *w;  /* k x n: each component's listed weights, */
  const int *idx;   /* k x n: and their samples, */
  const int *count; /* k: how many, for this launch's components */
  double *part;     /* [chunk][component][tile][64][64] */
  int64_t n, ldx, rows; /* rows: samples a chunk, a multiple of BK */
  int d, k, tiles;      /* tiles: 64 x 64 tiles of the lower triangle */
};

/* Block s of component comp (blockIdx.x = comp * segs + s): the number of
 * its samples whose weight is not zero (NaN is not). */
__global__ void __launch_bounds__(SEG_THREADS)
    count_nonzero(const double *w, int64_t n, int64_t segs, int *seg) {
  using Reduce = cub::BlockReduce<int, SEG_THREADS>;
  __shared__ typename Reduce::TempStorage tmp;
  const int64_t comp = blockIdx.x / segs, s = blockIdx.x % segs;
  const int64_t i0 = s * SEG + threadIdx.x * PER_THREAD;
  int c = 0;
#pragma unroll
  for (int j = 0; j < PER_THREAD; j++) c += i0 + j < n && w[comp * n + i0 + j] != 0;
  c = Reduce(tmp).Sum(c);
  if (threadIdx.x == 0) seg[blockIdx.x] = c;
}

/* Each component's block counts become their offsets in its list (sums
 * of the blocks before, in order), and its count. */
__global__ void __launch_bounds__(SEG_THREADS) list_offsets(int *seg, int64_t segs, int *count) {
  using Scan = cub::BlockScan<int, SEG_THREADS>;
  __shared__ typename Scan::TempStorage tmp;
  int *s = seg + blockIdx.x * segs;
  int carry = 0;
  for (int64_t b = 0; b < segs; b += SEG_THREADS) {
    const int64_t i = b + threadIdx.x;
    int v = i < segs ? s[i] : 0, off, total;
    Scan(tmp).ExclusiveSum(v, off, total);
    if (i < segs) s[i] = carry + off;
    carry += total;
    __syncthreads();
  }
  if (threadIdx.x == 0) count[blockIdx.x] = carry;
}

/* Block s of component comp lists its samples of nonzero weight, and the
 * weights, in ascending order from the block's offset. */
__global__ void __launch_bounds__(SEG_THREADS)
    list_nonzero(const double *w, int64_t n, int64_t segs, const int *seg, int *idx,
                 double *wl) {
  using Scan = cub::BlockScan<int, SEG_THREADS>;
  __shared__ typename Scan::TempStorage tmp;
  const int64_t comp = blockIdx.x / segs, s = blockIdx.x % segs;
  const int64_t i0 = s * SEG + threadIdx.x * PER_THREAD;
  double v[PER_THREAD];
  int c = 0;
#pragma unroll
  for (int j = 0; j < PER_THREAD; j++) {
    v[j] = i0 + j < n ? w[comp * n + i0 + j] : 0;
    c += v[j] != 0;
  }
  int off;
  Scan(tmp).ExclusiveSum(c, off);
  int64_t o = comp * n + seg[blockIdx.x] + off;
#pragma unroll
  for (int j = 0; j < PER_THREAD; j++)
    if (v[j] != 0) {
      idx[o] = (int)(i0 + j);
      wl[o++] = v[j];
    }
}

/* The fused kernel's pieces exist where its MMA does (and in the host
 * pass, which compiles no device code). */
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
/* A thread's share of a stage's BK rows x 64 columns from column c0: the
 * 16-byte unit u of the stage's rows r0, r0 + 4, .. (u ^ (r % 4 * 2) in
 * smem, so that the fragments' reads fall on distinct banks), those rows
 * at the element offsets off (-1: past the chunk, zeros); columns past ldx
 * are zeros. */
struct Loader {
  static constexpr int UNITS = TILE / 2, RSTEP = THREADS / UNITS, UPT = BK / RSTEP;
  const double *src;
  int dst;
  bool colok;
  __device__ Loader(const Scatter &t, int c0, int tid) {
    const int r0 = tid / UNITS, u = tid % UNITS, col = c0 + 2 * u;
    colok = col < t.ldx;
    src = t.x + (colok ? col : 0);
    dst = r0 * TILE + 2 * (u ^ ((r0 & 3) << 1)); /* RSTEP % 4 == 0: one swizzle */
  }
  __device__ __forceinline__ void load(double *s, const double *x,
                                       const int64_t (&off)[UPT]) const {
#pragma unroll
    for (int j = 0; j < UPT; j++) {
      const bool ok = colok && off[j] >= 0;
      cp_async16_or_zero(s + dst + j * RSTEP * TILE, ok ? src + off[j] : x, ok);
    }
  }
};

/* One stage of a warp's 32 x 32: one MMA a 16 x 8 block, whose k is the
 * stage's 16 samples in order. */
__device__ __forceinline__ void stage(double (&acc)[2][4][4], const double *A, const double *B,
                                      const double *W, int wm, int wn, int g, int q) {
  const int sw = q << 2;
  double a[2][8], b[4][4];
#pragma unroll
  for (int h = 0; h < 2; h++) {
    const int r0 = 8 * h + q, r1 = r0 + 4;
    const double w0 = W[r0], w1 = W[r1];
#pragma unroll
    for (int i = 0; i < 2; i++) {
      const int c = wm * 32 + 16 * i + 2 * g;
      const double2 lo = *(const double2 *)(A + r0 * TILE + (c ^ sw));
      const double2 hi = *(const double2 *)(A + r1 * TILE + (c ^ sw));
      a[i][4 * h] = lo.x * w0;
      a[i][4 * h + 1] = lo.y * w0;
      a[i][4 * h + 2] = hi.x * w1;
      a[i][4 * h + 3] = hi.y * w1;
    }
#pragma unroll
    for (int j = 0; j < 4; j++) {
      const int c = wn * 32 + 8 * j + g;
      b[j][2 * h] = B[r0 * TILE + (c ^ sw)];
      b[j][2 * h + 1] = B[r1 * TILE + (c ^ sw)];
    }
  }
#pragma unroll
  for (int i = 0; i < 2; i++)
#pragma unroll
    for (int j = 0; j < 4; j++) tc_mma_f64(acc[i][j], a[i], b[j]);
}
#endif

/* One CTA: tile (I, J), I >= J, of component comp over one chunk of the
 * samples; blocks ordered chunk, component, tile, so that the CTAs in
 * flight read the same rows. */
__global__ void __launch_bounds__(THREADS, CTAS_PER_SM) scatter_tiles(Scatter t) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  constexpr int STAGE = 2 * BK * TILE + BK;
  extern __shared__ double smem[];
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int g = lane >> 2, q = lane & 3, wm = warp & 1, wn = warp >> 1;
  const int tile = (int)(blockIdx.x % t.tiles);
  const int64_t cc = blockIdx.x / t.tiles, chunk = cc / t.k;
  const int comp = (int)(cc % t.k);
  int I = (int)((sqrt(8.0 * tile + 1) - 1) / 2);
  while (I * (I + 1) / 2 > tile) I--;
  while ((I + 1) * (I + 2) / 2 <= tile) I++;
  const int J = tile - I * (I + 1) / 2;
  const bool diag = I == J;
  const int64_t s0 = chunk * t.rows, listed = t.count[comp];
  if (s0 >= listed) return;
  const int len = (int)min(t.rows, listed - s0), nk = (len + BK - 1) / BK;
  const double *w = t.w + comp * t.n + s0;
  const int *rows = t.idx + comp * t.n + s0;
  /* a warp whose 32 x 32 has a row below d and a column at or below a
   * row; its blocks past them, zeros or above the diagonal, cost no more
   * than skipping them (measured) */
  const int rb = I * TILE + wm * 32, cb = J * TILE + wn * 32;
  const bool live = rb < t.d && cb <= rb + 31;
  const Loader la(t, I * TILE, tid), lb(t, J * TILE, tid);
  constexpr int UPT = Loader::UPT;
  /* the samples of this thread's rows of stage kt (-1 past the chunk) */
  auto samples = [&](int kt, int (&ids)[UPT]) {
#pragma unroll
    for (int j = 0; j < UPT; j++) {
      const int r = kt * BK + tid / Loader::UNITS + Loader::RSTEP * j;
      ids[j] = r < len ? rows[r] : -1;
    }
  };
  auto load = [&](int kt, int st, const int (&ids)[UPT]) {
    double *s = smem + st * STAGE;
    int64_t off[UPT];
#pragma unroll
    for (int j = 0; j < UPT; j++) off[j] = ids[j] < 0 ? -1 : (int64_t)ids[j] * t.ldx;
    la.load(s, t.x, off);
    if (!diag) lb.load(s + BK * TILE, t.x, off);
    if (tid < BK) {
      const bool ok = kt * BK + tid < len;
      cp_async8_or_zero(s + 2 * BK * TILE + tid, ok ? w + kt * BK + tid : t.w, ok);
    }
  };
  double acc[2][4][4] = {};
  int ids[UPT];
#pragma unroll
  for (int s = 0; s < STAGES - 1; s++) {
    if (s < nk) {
      samples(s, ids);
      load(s, s, ids);
    }
    cp_async_commit();
  }
  samples(STAGES - 1, ids);
  for (int kt = 0; kt < nk; kt++) {
    cp_async_wait<STAGES - 2>();
    __syncthreads();
    const int next = kt + STAGES - 1;
    if (next < nk) load(next, next % STAGES, ids);
    int ahead[UPT];
    samples(next + 1, ahead);
    cp_async_commit();
    const double *A = smem + kt % STAGES * STAGE;
    const double *B = diag ? A : A + BK * TILE;
    const double *W = A + 2 * BK * TILE;
    if (live) stage(acc, A, B, W, wm, wn, g, q);
#pragma unroll
    for (int j = 0; j < UPT; j++) ids[j] = ahead[j];
  }
  cp_async_wait<0>();
  /* rows g and g + 8 of m-block i are the features 2 g and 2 g + 1 */
  double *out = t.part + (cc * t.tiles + tile) * (int64_t)(TILE * TILE);
#pragma unroll
  for (int i = 0; i < 2; i++)
#pragma unroll
    for (int j = 0; j < 4; j++) {
      const int r = wm * 32 + 16 * i + 2 * g, c = wn * 32 + 8 * j + 2 * q;
      *(double2 *)(out + r * TILE + c) = make_double2(acc[i][j][0], acc[i][j][1]);
      *(double2 *)(out + (r + 1) * TILE + c) = make_double2(acc[i][j][2], acc[i][j][3]);
    }
#endif
}

/* out[comp][r][c] = the sums of entry (max(r, c), min(r, c)) over the
 * component's chunks that hold listed samples, in chunk order. */
__global__ void scatter_sums(const double *part, const int *count, double *out, int64_t d,
                             int64_t k, int64_t tiles, int64_t rows) {
  const int64_t total = k * d * d;
  for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < total;
       e += (int64_t)gridDim.x * blockDim.x) {
    const int64_t comp = e / (d * d), rc = e % (d * d);
    const int64_t a = rc / d, b = rc % d, r = a > b ? a : b, c = a > b ? b : a;
    const int64_t I = r / TILE, tile = I * (I + 1) / 2 + c / TILE;
    const int64_t off = (r % TILE) * TILE + c % TILE;
    double s = 0;
    const int64_t chunks = (count[comp] + rows - 1) / rows;
    for (int64_t ch = 0; ch < chunks; ch++)
      s += part[((ch * k + comp) * tiles + tile) * TILE * TILE + off];
    out[e] = s;
  }
}

/* y = the m rows of x (d apart), each times its weight */
__global__ void weigh_rows(const double *x, const double *w, double *y, int64_t m, int64_t d) {
  for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < m * d;
       e += (int64_t)gridDim.x * blockDim.x)
    y[e] = x[e] * w[e / d];
}

/* The lower triangle of each row-major d x d matrix from its upper one
 * (syrkx's column-major lower triangle). */
__global__ void mirror_upper(double *out, int64_t d, int64_t k) {
  for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < k * d * d;
       e += (int64_t)gridDim.x * blockDim.x) {
    const int64_t m = e / (d * d), r = e % (d * d) / d, c = e % d;
    if (r > c) out[e] = out[(m * d + c) * d + r];
  }
}

/* Chunks of the samples (each at least CHUNK_MIN) enough for WAVES waves
 * of CTAs, and components a launch, so that the partial sums fit
 * PART_DOUBLES (or one component's single chunk, whatever it takes). */
void plan(const cuda_dev *dev, int64_t n, int64_t k, int64_t tiles, int64_t *rows,
          int64_t *group) {
  const int64_t per = tiles * TILE * TILE, want = (int64_t)WAVES * CTAS_PER_SM * dev->sms;
  int64_t chunks = (want + k * tiles - 1) / (k * tiles), most = (n + CHUNK_MIN - 1) / CHUNK_MIN;
  if (chunks > most) chunks = most;
  if (chunks * per > PART_DOUBLES) chunks = PART_DOUBLES / per;
  if (chunks < 1) chunks = 1;
  *rows = ((n + chunks - 1) / chunks + BK - 1) / BK * BK;
  chunks = (n + *rows - 1) / *rows;
  *group = PART_DOUBLES / (chunks * per);
  if (*group < 1) *group = 1;
  if (*group > k) *group = k;
}

int fused(cuda_dev *dev, double *out, const double *x, const double *w, int64_t n, int64_t d,
          int64_t k) {
  const int64_t t64 = (d + TILE - 1) / TILE, tiles = t64 * (t64 + 1) / 2;
  int64_t rows, group;
  plan(dev, n, k, tiles, &rows, &group);
  const int64_t chunks = (n + rows - 1) / rows, segs = (n + SEG - 1) / SEG;
  cuda_scratch pad, part, wl, idx, seg;
  Scatter t = {};
  int rc = cuda_aligned_rows(dev, x, n, d, pad, &t.x, &t.ldx, OP);
  if (!rc)
    rc = part.get(dev->index, (size_t)(chunks * group * tiles * TILE * TILE) * sizeof(double), OP);
  if (!rc) rc = wl.get(dev->index, (size_t)(k * n) * sizeof(double), OP);
  if (!rc) rc = idx.get(dev->index, (size_t)(k * n) * sizeof(int), OP);
  if (!rc) rc = seg.get(dev->index, (size_t)(k * segs + k) * sizeof(int), OP);
  int *count = seg.as<int>() + k * segs;
  if (!rc)
    rc = cuda_launch<count_nonzero>(dev, dim3((unsigned)(k * segs)), SEG_THREADS, 0, OP, w, n,
                                    segs, seg.as<int>());
  if (!rc)
    rc = cuda_launch<list_offsets>(dev, dim3((unsigned)k), SEG_THREADS, 0, OP, seg.as<int>(),
                                   segs, count);
  if (!rc)
    rc = cuda_launch<list_nonzero>(dev, dim3((unsigned)(k * segs)), SEG_THREADS, 0, OP, w, n,
                                   segs, seg.as<const int>(), idx.as<int>(), wl.as<double>());
  t.part = part.as<double>();
  t.n = n;
  t.rows = rows;
  t.d = (int)d;
  t.tiles = (int)tiles;
  const size_t smem = (size_t)STAGES * (2 * BK * TILE + BK) * sizeof(double);
  for (int64_t c0 = 0; !rc && c0 < k; c0 += group) {
    t.k = (int)(k - c0 < group ? k - c0 : group);
    t.w = wl.as<const double>() + c0 * n;
    t.idx = idx.as<const int>() + c0 * n;
    t.count = count + c0;
    rc = cuda_launch<scatter_tiles>(dev, dim3((unsigned)(chunks * t.k * tiles)), THREADS, smem,
                                    OP, t);
    if (!rc)
      rc = cuda_launch<scatter_sums>(dev, grid_for(t.k * d * d, 256, dev), 256, 0, OP,
                                     part.as<const double>(), t.count, out + c0 * d * d, d,
                                     (int64_t)t.k, tiles, rows);
  }
  return rc;
}

int blocked(cuda_dev *dev, double *out, const double *x, const double *w, int64_t n, int64_t d,
            int64_t k) {
  cublasHandle_t h;
  cuda_scratch y;
  const int64_t rows = n < FALLBACK_ROWS ? n : FALLBACK_ROWS;
  int rc = cuda_blas_handle(dev, &h);
  if (!rc) rc = y.get(dev->index, (size_t)(rows * d) * sizeof(double), OP);
  const double one = 1;
  for (int64_t comp = 0; !rc && comp < k; comp++) {
    for (int64_t i0 = 0; !rc && i0 < n; i0 += rows) {
      const int64_t m = n - i0 < rows ? n - i0 : rows;
      const double beta = i0 == 0 ? 0 : 1;
      rc = cuda_launch<weigh_rows>(dev, grid_for(m * d, 256, dev), 256, 0, OP, x + i0 * d,
                                   w + comp * n + i0, y.as<double>(), m, d);
      /* row-major x^T diag(w) x is column-major X Y^T, X = x^T, Y = y^T
       * (d x m): syrkx's product of a matrix and its weighted copy */
      if (!rc)
        rc = cuda_blas_check(cublasDsyrkx(h, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, (int)d, (int)m,
                                          &one, x + i0 * d, (int)d, y.as<const double>(),
                                          (int)d, &beta, out + comp * d * d, (int)d),
                             OP);
    }
  }
  if (!rc)
    rc = cuda_launch<mirror_upper>(dev, grid_for(k * d * d, 256, dev), 256, 0, OP, out, d, k);
  return rc;
}

}  // namespace

extern "C" int cuda_weighted_gram(const ml_array *out, const ml_array *x, const ml_array *w) {
  cuda_dev *dev;
  int rc = cuda_enter(array_device(x), &dev);
  if (rc) return rc;
  const int64_t n = x->shape[0], d = x->shape[1], k = w->shape[0];
  double *o = array_ptr<double>(out);
  const double *xs = array_ptr<const double>(x), *ws = array_ptr<const double>(w);
  if (dev->cc >= 90 && d >= FUSED_MIN_D && n <= INT_MAX) return fused(dev, o, xs, ws, n, d, k);
  return blocked(dev, o, xs, ws, n, d, k);
}
