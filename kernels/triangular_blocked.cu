/* Blocked Cholesky factorisations of a batch of matrices (the batched
 * potrf of linalg.cu) and inverses of triangular matrices (the trtri
 * entry; contracts in core/linalg_backend.h).
 *
 * CPU reference: src/cpu/cpu_linalg.c (LAPACK's potrf and trtri).
 *
 * cuSOLVER has no batched trtri, and its potrfBatched is slower than
 * these kernels on what the mixture's M-step asks: K covariances of a few
 * hundred rows to factor and invert, latency-bound work that these
 * kernels spread over the whole GPU. Both algorithms go right-
 * looking over block columns of NB, two launches a step for the whole
 * batch, each matrix seen as a lower triangle (element (i, j) at i rs +
 * j cs: a column-major lower matrix is rs = 1, cs = ld; an upper one is
 * its transpose, rs = ld, cs = 1):
 *
 * potrf, step j0: every CTA of the panel kernel factors the diagonal block
 * in one warp's registers (lane i holds row i); the first writes it back,
 * the others solve 128 rows below it, X L_jj^T = A_j, a thread a row.
 * Then the trailing lower triangle takes the rank-NB update A22 -= L21
 * L21^T, a CTA a 64 x 64 tile.
 *
 * trtri (X = L^-1, written to a zeroed x), step j0: the row kernel solves
 * the block row X_j = L_jj^-1 (I_j - sum of the earlier steps' terms),
 * which x holds at that point, a thread a column; then every later row
 * block takes its term, X_r,c -= L_rj X_j,c for c < j0 + NB, by the same
 * update kernel. */
#include <cuda_runtime.h>
#include <limits.h>

#include "cuda_ops.h"
#include "launch.cuh"

namespace {

constexpr int NB = 32;          /* columns a step */
constexpr int SOLVE = 128;      /* rows (potrf) or columns (trtri) a CTA solves */
constexpr int TILE = 64;        /* the update's tiles */
constexpr int UPDATE_THREADS = 256;
constexpr int64_t BATCH_GRID = 65535; /* grid.y: the batch, strided beyond */
constexpr unsigned FULL = 0xffffffffu;

/* A batch of matrices as lower triangles. */
template <class T> struct Tri {
  T *p;
  int64_t rs, cs, stride;
  __device__ T &at(int64_t b, int64_t i, int64_t j) const {
    return p[b * stride + i * rs + j * cs];
  }
};

template <class T> static Tri<T> tri_of(const ml_matrices *m, int upper) {
  return {(T *)m->data, upper ? m->ld : 1, upper ? 1 : m->ld, m->stride};
}

/* Warp 0 factors the diagonal block at j0 of matrix b into d (lower, zeros
 * above; rows past n padded with the identity's), lane i holding row i in
 * registers. Returns the first column of the block whose pivot is not
 * positive (a NaN is not), or NB. Each pivot is a step of latency: rsqrt
 * and a product rather than sqrt and a division. */
template <class T>
__device__ int factor_diagonal(const Tri<T> &a, int64_t b, int n, int j0, T (*d)[NB + 1]) {
  int lane = threadIdx.x;
  bool inside = j0 + lane < n;
  T r[NB];
#pragma unroll
  for (int k = 0; k < NB; k++) r[k] = inside && k <= lane ? a.at(b, j0 + lane, j0 + k) : T(k == lane);
  int bad = NB;
#pragma unroll
  for (int k = 0; k < NB; k++) {
    T p = __shfl_sync(FULL, r[k], k);
    if (!(p > T(0)) && bad == NB) bad = k;
    T inv = rsqrt(p), s = p * inv;
    if (lane == k) r[k] = s;
    else if (lane > k) r[k] *= inv;
#pragma unroll
    for (int m = k + 1; m < NB; m++) {
      T l = __shfl_sync(FULL, r[k], m);
      if (lane >= m) r[m] -= r[k] * l;
    }
  }
#pragma unroll
  for (int k = 0; k < NB; k++) d[lane][k] = r[k];
  return bad;
}

template <class T>
__global__ void __launch_bounds__(SOLVE)
    potrf_panel(Tri<T> a, int n, int j0, int64_t batch, int *info) {
  __shared__ T d[NB][NB + 1];
  __shared__ T inv[NB];
  int t = threadIdx.x;
  for (int64_t b = blockIdx.y; b < batch; b += gridDim.y) {
    if (t < NB) {
      int bad = factor_diagonal(a, b, n, j0, d);
      inv[t] = T(1) / d[t][t];
      if (blockIdx.x == 0) {
        for (int k = 0; k <= t && j0 + t < n; k++) a.at(b, j0 + t, j0 + k) = d[t][k];
        if (t == 0 && bad < NB && info[b] == 0) info[b] = j0 + bad + 1;
      }
    }
    __syncthreads();
    int64_t i = j0 + NB + (int64_t)(blockIdx.x - 1) * SOLVE + t;
    if (blockIdx.x > 0 && i < n) {
      T x[NB];
#pragma unroll
      for (int k = 0; k < NB; k++) x[k] = a.at(b, i, j0 + k);
#pragma unroll
      for (int k = 0; k < NB; k++) {
        x[k] *= inv[k];
#pragma unroll
        for (int m = k + 1; m < NB; m++) x[m] -= x[k] * d[m][k];
      }
#pragma unroll
      for (int k = 0; k < NB; k++) a.at(b, i, j0 + k) = x[k];
    }
    __syncthreads();
  }
}

template <class T>
__global__ void __launch_bounds__(SOLVE)
    trtri_row(Tri<const T> a, Tri<T> x, int n, int j0, int unit, int64_t batch, int *info) {
  __shared__ T d[NB][NB + 1];
  __shared__ T inv[NB];
  int t = threadIdx.x;
  int cend = min(j0 + NB, n);
  for (int64_t b = blockIdx.y; b < batch; b += gridDim.y) {
    for (int e = t; e < NB * NB; e += SOLVE) {
      int i = e % NB, k = e / NB;
      d[i][k] = j0 + i < n && k <= i ? (unit && i == k ? T(1) : a.at(b, j0 + i, j0 + k))
                                     : T(i == k);
    }
    __syncthreads();
    if (t < NB) inv[t] = T(1) / d[t][t];
    if (blockIdx.x == 0 && t == 0 && info[b] == 0)
      for (int k = 0; k < NB && j0 + k < n; k++)
        if (d[k][k] == T(0)) {
          info[b] = j0 + k + 1;
          break;
        }
    __syncthreads();
    int64_t c = (int64_t)blockIdx.x * SOLVE + t;
    if (c < cend) {
      T y[NB];
#pragma unroll
      for (int k = 0; k < NB; k++) {
        int64_t i = j0 + k;
        y[k] = i < n ? x.at(b, i, c) + T(i == c) : T(0);
      }
#pragma unroll
      for (int k = 0; k < NB; k++) {
        y[k] *= inv[k];
#pragma unroll
        for (int m = k + 1; m < NB; m++) y[m] -= d[m][k] * y[k];
      }
#pragma unroll
      for (int k = 0; k < NB; k++)
        if (j0 + k < n) x.at(b, j0 + k, c) = y[k];
    }
    __syncthreads();
  }
}

/* C[r][c] -= sum over k < NB of U[r][k] V[k][c], for r0 <= r < n and
 * c0 <= c < c1 (only r >= c when lower: then r0 = c0 and the tiles are
 * those of the lower triangle, else a rectangle tcols tiles wide). */
template <class T> struct Update {
  Tri<T> c;
  const T *u, *v;
  int64_t urs, uks, ustride; /* U[r][k] at u + b ustride + r urs + k uks */
  int64_t vks, vcs, vstride; /* V[k][c] at v + b vstride + k vks + c vcs */
  int r0, n, c0, c1, lower, tcols;
};

/* The tile (row, column) of CTA t: the t-th of the lower triangle's
 * tiles row by row, or of the rectangle's. */
__device__ void tile_of(int lower, int tcols, int t, int *tr, int *tc) {
  if (!lower) {
    *tr = t / tcols;
    *tc = t % tcols;
    return;
  }
  int r = (int)((sqrt(8.0 * t + 1) - 1) / 2);
  while ((int64_t)(r + 1) * (r + 2) / 2 <= t) r++;
  while ((int64_t)r * (r + 1) / 2 > t) r--;
  *tr = r;
  *tc = t - r * (r + 1) / 2;
}

/* A CTA a 64 x 64 tile, 16 x 16 threads of 4 x 4 elements each, strided
 * by 16 so that consecutive threads take consecutive rows; the tile of C
 * is read with the operands, before the products. */
template <class T>
__global__ void __launch_bounds__(UPDATE_THREADS, 2) rank_update(Update<T> p, int64_t batch) {
  __shared__ T us[NB][TILE + 1], vs[NB][TILE + 1];
  int tr, tc;
  tile_of(p.lower, p.tcols, blockIdx.x, &tr, &tc);
  int64_t r0 = p.r0 + (int64_t)tr * TILE, c0 = p.c0 + (int64_t)tc * TILE;
  int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  bool vk_fast = p.vks < p.vcs;
  for (int64_t b = blockIdx.y; b < batch; b += gridDim.y) {
    T cv[4][4];
#pragma unroll
    for (int i = 0; i < 4; i++)
#pragma unroll
      for (int j = 0; j < 4; j++) {
        int64_t r = r0 + tx + 16 * i, c = c0 + ty + 16 * j;
        cv[i][j] = r < p.n && c < p.c1 && (!p.lower || r >= c) ? p.c.at(b, r, c) : T(0);
      }
    for (int e = threadIdx.x; e < NB * TILE; e += UPDATE_THREADS) {
      int k = e / TILE, q = e % TILE;
      int64_t r = r0 + q;
      us[k][q] = r < p.n ? p.u[b * p.ustride + r * p.urs + k * p.uks] : T(0);
      int kv = vk_fast ? e % NB : k, qv = vk_fast ? e / NB : q;
      int64_t c = c0 + qv;
      vs[kv][qv] = c < p.c1 ? p.v[b * p.vstride + kv * p.vks + c * p.vcs] : T(0);
    }
    __syncthreads();
#pragma unroll 8
    for (int k = 0; k < NB; k++) {
      T ur[4], vr[4];
#pragma unroll
      for (int i = 0; i < 4; i++) ur[i] = us[k][tx + 16 * i];
#pragma unroll
      for (int j = 0; j < 4; j++) vr[j] = vs[k][ty + 16 * j];
#pragma unroll
      for (int i = 0; i < 4; i++)
#pragma unroll
        for (int j = 0; j < 4; j++) cv[i][j] -= ur[i] * vr[j];
    }
#pragma unroll
    for (int i = 0; i < 4; i++)
#pragma unroll
      for (int j = 0; j < 4; j++) {
        int64_t r = r0 + tx + 16 * i, c = c0 + ty + 16 * j;
        if (r < p.n && c < p.c1 && (!p.lower || r >= c)) p.c.at(b, r, c) = cv[i][j];
      }
    __syncthreads();
  }
}

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

template <class T>
static int update(cuda_dev *d, const Update<T> &p, int64_t batch, const char *op) {
  int64_t rows = ceil_div(p.n - p.r0, TILE);
  int64_t tiles = p.lower ? rows * (rows + 1) / 2 : rows * p.tcols;
  if (tiles > INT_MAX)
    return ml_fail(ML_EINVAL, "%s: order %d is too large for the blocked kernels", op, p.n);
  dim3 grid((unsigned)tiles, (unsigned)(batch < BATCH_GRID ? batch : BATCH_GRID));
  return cuda_launch<rank_update<T>>(d, grid, UPDATE_THREADS, 0, op, p, batch);
}

template <class T>
static int potrf_t(cuda_dev *d, const ml_matrices *m, int upper, int *info) {
  const char *op = "potrf";
  Tri<T> a = tri_of<T>(m, upper);
  int n = (int)m->rows;
  unsigned by = (unsigned)(m->batch < BATCH_GRID ? m->batch : BATCH_GRID);
  int rc = cuda_check(cudaMemsetAsync(info, 0, (size_t)m->batch * sizeof *info, d->stream), op);
  for (int j0 = 0; !rc && j0 < n; j0 += NB) {
    int below = n - j0 - NB > 0 ? n - j0 - NB : 0;
    unsigned parts = 1 + (unsigned)ceil_div(below, SOLVE);
    rc = cuda_launch<potrf_panel<T>>(d, dim3(parts, by), SOLVE, 0, op, a, n, j0, m->batch, info);
    if (rc || below == 0) continue;
    const T *col = a.p + (int64_t)j0 * a.cs;
    Update<T> p = {a,         col,        col,  a.rs,   a.cs, a.stride, a.cs, a.rs,
                   a.stride,  j0 + NB,    n,    j0 + NB, n,   1,        0};
    rc = update(d, p, m->batch, op);
  }
  return rc;
}

template <class T>
static int trtri_t(cuda_dev *d, const ml_matrices *m, const ml_matrices *xm, int upper, int unit,
                   int *info) {
  const char *op = "trtri";
  Tri<const T> a = tri_of<const T>(m, upper);
  Tri<T> x = tri_of<T>(xm, upper);
  int n = (int)m->rows;
  unsigned by = (unsigned)(m->batch < BATCH_GRID ? m->batch : BATCH_GRID);
  size_t bytes = (size_t)(xm->batch * xm->stride) * sizeof(T);
  int rc = cuda_check(cudaMemsetAsync(xm->data, 0, bytes, d->stream), op);
  if (!rc) rc = cuda_check(cudaMemsetAsync(info, 0, (size_t)m->batch * sizeof *info, d->stream), op);
  for (int j0 = 0; !rc && j0 < n; j0 += NB) {
    int cend = j0 + NB < n ? j0 + NB : n;
    unsigned parts = (unsigned)ceil_div(cend, SOLVE);
    rc = cuda_launch<trtri_row<T>>(d, dim3(parts, by), SOLVE, 0, op, a, x, n, j0, unit, m->batch,
                                   info);
    if (rc || cend == n) continue;
    Update<T> p = {x,        a.p + (int64_t)j0 * a.cs, x.p + (int64_t)j0 * x.rs, a.rs, a.cs,
                   a.stride, x.rs,  x.cs,  x.stride,  cend, n,  0,  cend,  0,
                   (int)ceil_div(cend, TILE)};
    rc = update(d, p, m->batch, op);
  }
  return rc;
}

} // namespace

/* The kernels take orders as ints (update checks its tile counts). */
static int order_fits(const ml_matrices *a, const char *op) {
  if (a->rows <= INT_MAX) return ML_OK;
  return ml_fail(ML_EINVAL, "%s: order %lld is too large", op, (long long)a->rows);
}

extern "C" int cuda_potrf_blocked(const ml_matrices *a, int upper, const ml_array *info) {
  cuda_dev *d;
  int rc = cuda_enter(a->device.index, &d);
  if (!rc) rc = order_fits(a, "potrf");
  if (rc || a->batch * a->rows == 0) return rc;
  int *dinfo = array_ptr<int>(info);
  return a->dtype == ML_FLOAT32 ? potrf_t<float>(d, a, upper, dinfo)
                                : potrf_t<double>(d, a, upper, dinfo);
}

extern "C" int cuda_trtri(const ml_matrices *a, const ml_matrices *x, int upper, int unit,
                          const ml_array *info) {
  cuda_dev *d;
  int rc = cuda_enter(a->device.index, &d);
  if (!rc) rc = order_fits(a, "trtri");
  if (rc || a->batch * a->rows == 0) return rc;
  int *dinfo = array_ptr<int>(info);
  return a->dtype == ML_FLOAT32 ? trtri_t<float>(d, a, x, upper, unit, dinfo)
                                : trtri_t<double>(d, a, x, upper, unit, dinfo);
}
