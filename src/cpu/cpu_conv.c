/* Convolution on the CPU (contract in core/conv_backend.h): im2col and
 * OpenBLAS's GEMM.
 *
 * For image i and group g, the o' x P block of y (P = oh ow, the output
 * positions) is the product of w's o' x K block (K = c' kh kw, w's rows as
 * they lie) with the K x P window matrix of x: row (j, a, b), column
 * (p, r) holds x[i][g c' + j][p s0 - pad0 + a d0][r s1 - pad1 + b d1], or
 * zero in the padding. The window matrix is built CHUNK_BYTES of columns
 * at a time into a buffer, so that memory stays bounded for any batch and
 * image; a 1 x 1 kernel with stride 1 and no padding needs none (x's
 * block is its window matrix). y's block starts as the bias and the
 * product adds to it.
 *
 * Threads: with at least as many (image, group) pairs as threads, each
 * thread takes whole pairs with OpenBLAS held to one thread; otherwise the
 * pairs go in turn, OpenBLAS threading each product and OpenMP each window
 * matrix. A product is the same either way (OpenBLAS splits its rows and
 * columns, never the sums), so results do not depend on the thread
 * count. */
#include <cblas.h>
#include <stdlib.h>
#include <string.h>

#include "../core/status.h"
#include "cpu.h"
#include "strided.h"

#ifdef _OPENMP
#include <omp.h>
#endif

/* The window matrix's buffer a thread, at most (and columns at least). */
#define CHUNK_BYTES ((int64_t)8 << 20)
#define MIN_COLS 64

/* A convolution's sizes, read once. */
typedef struct {
  const ml_conv_desc *c;
  size_t es;                   /* element size */
  int64_t n, ch, h, w;         /* x */
  int64_t o, og, cg, kh, kw;   /* w; og = o / groups */
  int64_t oh, ow, p, k;        /* y; p = oh ow, k = cg kh kw */
  int64_t cols;                /* columns of the window matrix a chunk */
  int direct;                  /* 1 x 1, stride 1, no padding */
} geom;

static geom geometry(const ml_conv_desc *c) {
  geom g;
  g.c = c;
  g.es = ml_dtype_size(c->x->dtype);
  g.n = c->x->shape[0];
  g.ch = c->x->shape[1];
  g.h = c->x->shape[2];
  g.w = c->x->shape[3];
  g.o = c->w->shape[0];
  g.og = g.o / c->groups;
  g.cg = c->w->shape[1];
  g.kh = c->w->shape[2];
  g.kw = c->w->shape[3];
  g.oh = c->y->shape[2];
  g.ow = c->y->shape[3];
  g.p = g.oh * g.ow;
  g.k = g.cg * g.kh * g.kw;
  int64_t cols = CHUNK_BYTES / (g.k * (int64_t)g.es);
  g.cols = cols < MIN_COLS ? MIN_COLS : cols;
  if (g.cols > g.p) g.cols = g.p;
  g.direct = g.kh == 1 && g.kw == 1 && c->stride[0] == 1 &&
             c->stride[1] == 1 && c->pad[0] == 0 && c->pad[1] == 0;
  return g;
}

/* The first output column r >= 0 whose input column r s + off is >= 0,
 * and the first whose input column is >= w (r s + off < w before it). */
static int64_t first_in(int64_t off, int64_t s) {
  return off >= 0 ? 0 : (-off + s - 1) / s;
}
static int64_t first_past(int64_t off, int64_t s, int64_t w) {
  return w - off <= 0 ? 0 : (w - off + s - 1) / s;
}

/* count elements of size es from src, step elements apart, to dst. */
static void gather(char *dst, const char *src, int64_t count, int64_t step,
                   size_t es) {
  if (step == 1) {
    memcpy(dst, src, (size_t)count * es);
  } else if (es == 4) {
    uint32_t *d = (uint32_t *)dst;
    const uint32_t *s = (const uint32_t *)src;
    for (int64_t i = 0; i < count; i++) d[i] = s[i * step];
  } else {
    uint64_t *d = (uint64_t *)dst;
    const uint64_t *s = (const uint64_t *)src;
    for (int64_t i = 0; i < count; i++) d[i] = s[i * step];
  }
}

/* Row (j, a, b) of the window matrix, columns q0 .. q0 + nq - 1, into
 * dst, from plane, x's channel j of the image and group. */
static void window_row(const geom *g, const char *plane, int64_t a,
                       int64_t b, char *dst, int64_t q0, int64_t nq) {
  const ml_conv_desc *c = g->c;
  size_t es = g->es;
  int64_t off = b * c->dilation[1] - c->pad[1];
  int64_t r_in = first_in(off, c->stride[1]);
  int64_t r_past = first_past(off, c->stride[1], g->w);
  int64_t p = q0 / g->ow, r = q0 % g->ow;
  for (int64_t left = nq; left > 0; p++, r = 0) {
    int64_t run = g->ow - r < left ? g->ow - r : left;
    int64_t ih = p * c->stride[0] - c->pad[0] + a * c->dilation[0];
    int64_t lo = r > r_in ? r : r_in;
    int64_t hi = r + run < r_past ? r + run : r_past;
    if (ih < 0 || ih >= g->h || hi <= lo) {
      memset(dst, 0, (size_t)run * es);
    } else {
      const char *src = plane + (ih * g->w + lo * c->stride[1] + off) * es;
      memset(dst, 0, (size_t)(lo - r) * es);
      gather(dst + (lo - r) * es, src, hi - lo, c->stride[1], es);
      memset(dst + (hi - r) * es, 0, (size_t)(r + run - hi) * es);
    }
    dst += run * es;
    left -= run;
  }
}

/* Rows r0 .. r1 - 1 of a chunk of the window matrix of one image and
 * group (xg: its first channel), columns q0 .. q0 + nq - 1, into col
 * (rows nq apart). */
typedef struct {
  const geom *g;
  const char *xg;
  char *col;
  int64_t q0, nq;
} window_job;

static void window_rows(void *ctx, int64_t r0, int64_t r1) {
  const window_job *j = ctx;
  const geom *g = j->g;
  int64_t area = g->kh * g->kw;
  for (int64_t row = r0; row < r1; row++) {
    const char *plane = j->xg + (row / area) * g->h * g->w * g->es;
    window_row(g, plane, row / g->kw % g->kh, row % g->kw,
               j->col + row * j->nq * g->es, j->q0, j->nq);
  }
}

/* y's rows (m of them, ldc apart, n columns) := bias (NULL: zero) + a b,
 * a m x k (rows k apart), b k x n (rows ldb apart). */
static void product(const geom *g, int64_t m, int64_t n, const void *a,
                    const void *b, int64_t ldb, void *y, int64_t ldc,
                    const void *bias) {
  int mm = (int)m, nn = (int)n, kk = (int)g->k;
  if (g->c->x->dtype == ML_FLOAT32) {
    const float *bs = bias;
    float *yc = y;
    for (int64_t i = 0; bs && i < m; i++)
      for (int64_t q = 0; q < n; q++) yc[i * ldc + q] = bs[i];
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, mm, nn, kk, 1,
                a, kk, b, (int)ldb, bs ? 1 : 0, yc, (int)ldc);
  } else {
    const double *bs = bias;
    double *yc = y;
    for (int64_t i = 0; bs && i < m; i++)
      for (int64_t q = 0; q < n; q++) yc[i * ldc + q] = bs[i];
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, mm, nn, kk, 1,
                a, kk, b, (int)ldb, bs ? 1 : 0, yc, (int)ldc);
  }
}

/* One (image, group) pair, number u = i groups + gi, with col (room for
 * g->k x g->cols) as its window matrix; the window matrix on `threads`
 * threads. */
static void pair(const geom *g, int64_t u, char *col, int threads) {
  const ml_conv_desc *c = g->c;
  int64_t i = u / c->groups, gi = u % c->groups;
  size_t es = g->es;
  const char *xg = (const char *)ml_array_data(c->x) +
                   ((i * g->ch + gi * g->cg) * g->h * g->w) * es;
  const char *wg = (const char *)ml_array_data(c->w) + gi * g->og * g->k * es;
  char *yg = (char *)ml_array_data(c->y) + (i * g->o + gi * g->og) * g->p * es;
  const char *bg = c->bias ? (const char *)ml_array_data(c->bias) +
                                 gi * g->og * es
                           : NULL;
  if (g->direct) {
    product(g, g->og, g->p, wg, xg, g->p, yg, g->p, bg);
    return;
  }
  for (int64_t q0 = 0; q0 < g->p; q0 += g->cols) {
    int64_t nq = g->p - q0 < g->cols ? g->p - q0 : g->cols;
    window_job j = {g, xg, col, q0, nq};
    int t = threads > 1 ? cpu_threads_for(g->k * nq, CPU_PARALLEL_MIN) : 1;
    cpu_split(t < threads ? t : threads, g->k, window_rows, &j);
    product(g, g->og, nq, wg, col, nq, yg + q0 * es, g->p, bg);
  }
}

static int conv_forward(const ml_conv_desc *c) {
  geom g = geometry(c);
  int64_t pairs = g.n * c->groups;
  double macs = (double)g.n * (double)g.o * (double)g.p * (double)g.k;
  int threads = cpu_threads_for(macs < 0x1p62 ? (int64_t)macs : INT64_MAX,
                                CPU_PARALLEL_MIN);
  int by_pair = threads > 1 && pairs >= threads;
  int bufs = by_pair ? threads : 1;
  size_t room = g.direct ? 0 : (size_t)(g.k * g.cols) * g.es;
  char *col = room ? malloc(room * (size_t)bufs) : NULL;
  if (room && !col)
    return ml_fail(ML_ENOMEM, "%s: out of memory for a %zu-byte window "
                   "matrix", c->op, room * (size_t)bufs);
  if (by_pair) {
    int saved = openblas_get_num_threads();
    openblas_set_num_threads(1);
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t u = 0; u < pairs; u++) {
#ifdef _OPENMP
      char *mine = col ? col + room * (size_t)omp_get_thread_num() : NULL;
#else
      char *mine = col;
#endif
      if (!ml_interrupt_pending()) pair(&g, u, mine, 1);
    }
    openblas_set_num_threads(saved);
  } else {
    for (int64_t u = 0; u < pairs && !ml_interrupt_pending(); u++)
      pair(&g, u, col, threads);
  }
  free(col);
  if (ml_interrupt_take()) return ml_fail(ML_EINTR, "%s: interrupted", c->op);
  return ML_OK;
}

const ml_conv_backend cpu_conv_backend = {conv_forward};
