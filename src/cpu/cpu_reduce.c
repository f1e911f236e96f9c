/* Reductions along the last dimension, on the CPU. The layout (rows or
 * columns of outputs per group), loading and storing, and the work space
 * are in reduce_rows.h, shared with the cumulative sums (cpu_cumsum.c).
 *
 * Determinism. The reduced dimension is cut into segments of a fixed length
 * (by mode). A result is always the in-order fold of its segments' partial
 * results, and one thread reduces a segment in a fixed order, so the bits do
 * not depend on the thread count or on the schedule: many groups run in
 * parallel, each whole; a few long ones run segment by segment in parallel
 * and are folded afterwards.
 *
 * Accuracy. Values are read as double (float inputs) or int64 (integer
 * sums, products and extremes). A float sum adds chunks (CHUNK elements
 * with eight accumulators in row mode, CROWS rows per output in column
 * mode), combines a segment's chunk sums pairwise and adds segment sums in
 * order. Variance is two-pass (mean, then squared deviations); logsumexp
 * shifts by the maximum. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/status.h"
#include "cpu.h"
#include "reduce_rows.h"
#include "strided.h"

#define CROWS 64                      /* column mode: rows per chunk */
#define ROW_SEG ((int64_t)1 << 16)    /* row mode: elements per segment */
#define COL_SEG ((int64_t)1 << 13)    /* column mode: rows per segment */

_Static_assert(ROW_SEG % CHUNK == 0 && ROW_SEG / CHUNK < (1 << (LEVELS - 1)) &&
                   COL_SEG % CROWS == 0 && COL_SEG / CROWS < (1 << (LEVELS - 1)),
               "a segment's chunk count must fit the pairwise levels");

/* What one pass over the data computes per output. */
typedef enum {
  K_FSUM, K_ISUM, K_FPROD, K_IPROD,
  K_FMIN, K_FMAX,               /* float extremes and their indices */
  K_FMINV, K_FMAXV, K_FMAXABS,  /* float extremes only (of |x| for ABS) */
  K_IMIN, K_IMAX, K_COUNT
} kind;

/* Transforms of the terms of a float sum: x, (x - c)^2, |x|, exp(x - c). */
typedef enum { X_ID, X_SQ, X_ABS, X_EXP } xform;

typedef struct {
  kind k;
  xform x;
} pass;

/* ---- kernels ----
 * The inline kernels take their kind or transform as a constant from the
 * dispatchers below, which also pass W == 1 literally for row mode, so that
 * every instance compiles to a plain loop. */

static inline double term(double v, xform x, double c) {
  switch (x) {
    case X_SQ: v -= c; return v * v;
    case X_ABS: return fabs(v);
    case X_EXP: return exp(v - c);
    default: return v;
  }
}

/* The sum of the terms of m contiguous values, with eight accumulators
 * (separate variables, which the compiler keeps in vector registers). */
static inline double row_sum(const double *x, int64_t m, xform xf, double c) {
  double r0 = 0, r1 = 0, r2 = 0, r3 = 0, r4 = 0, r5 = 0, r6 = 0, r7 = 0;
  int64_t j = 0;
  for (; j + 8 <= m; j += 8) {
    r0 += term(x[j], xf, c);
    r1 += term(x[j + 1], xf, c);
    r2 += term(x[j + 2], xf, c);
    r3 += term(x[j + 3], xf, c);
    r4 += term(x[j + 4], xf, c);
    r5 += term(x[j + 5], xf, c);
    r6 += term(x[j + 6], xf, c);
    r7 += term(x[j + 7], xf, c);
  }
  double s = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7));
  for (; j < m; j++) s += term(x[j], xf, c);
  return s;
}

static double row_sum_of(const double *x, int64_t m, xform xf, double c) {
  switch (xf) {
    case X_SQ: return row_sum(x, m, X_SQ, c);
    case X_ABS: return row_sum(x, m, X_ABS, c);
    case X_EXP: return row_sum(x, m, X_EXP, c);
    default: return row_sum(x, m, X_ID, c);
  }
}

/* acc[w] += term(x[w]) for one row of W outputs (in blocks of eight, a
 * fixed count that -O2 vectorises). */
static inline void col_add(double *restrict acc, const double *restrict x,
                           int W, xform xf, const double *restrict c) {
  int w = 0;
  for (; w + 8 <= W; w += 8)
    for (int k = 0; k < 8; k++) acc[w + k] += term(x[w + k], xf, c[w + k]);
  for (; w < W; w++) acc[w] += term(x[w], xf, c[w]);
}

static void col_add_of(double *acc, const double *x, int W, xform xf,
                       const double *c) {
  switch (xf) {
    case X_SQ: col_add(acc, x, W, X_SQ, c); break;
    case X_ABS: col_add(acc, x, W, X_ABS, c); break;
    case X_EXP: col_add(acc, x, W, X_EXP, c); break;
    default: col_add(acc, x, W, X_ID, c); break;
  }
}

/* Updates st[0..W) with m x W values x: row mode has W == 1 (m values of
 * one row), column mode m == 1 (one row of W outputs); x's first row is
 * index j0 of the reduced dimension. Float products, nonzero counts and
 * (column mode) extremes with their indices: an extreme moves only to a
 * strictly greater (smaller) value or to the first NaN. */
static inline void ftile(kind k, part *st, const double *x, int64_t m, int W,
                         int64_t j0) {
  for (int64_t j = 0; j < m; j++)
    for (int w = 0; w < W; w++) {
      double v = x[j * W + w];
      part *s = &st[w];
      switch (k) {
        case K_FPROD: s->f *= v; break;
        case K_COUNT: s->i += v != 0; break;
        case K_FMIN:
          if (v < s->f || (v != v && s->f == s->f)) {
            s->f = v;
            s->at = j0 + j;
          }
          break;
        default: /* K_FMAX */
          if (v > s->f || (v != v && s->f == s->f)) {
            s->f = v;
            s->at = j0 + j;
          }
          break;
      }
    }
}

static void ftile_of(kind k, part *st, const double *x, int64_t m, int W,
                     int64_t j0) {
  switch (k) {
    case K_FPROD:
      if (W == 1)
        ftile(K_FPROD, st, x, m, 1, j0);
      else
        ftile(K_FPROD, st, x, m, W, j0);
      break;
    case K_COUNT:
      if (W == 1)
        ftile(K_COUNT, st, x, m, 1, j0);
      else
        ftile(K_COUNT, st, x, m, W, j0);
      break;
    case K_FMIN: ftile(K_FMIN, st, x, m, W, j0); break;
    default: ftile(K_FMAX, st, x, m, W, j0); break;
  }
}

/* The extreme of m contiguous values for K_FMINV, K_FMAXV and K_FMAXABS
 * (NaN if one is NaN), in eight lanes without branches, which -O2
 * vectorises. */
static inline double row_extreme(kind k, const double *x, int64_t m,
                                 double init) {
  double r[8];
  for (int l = 0; l < 8; l++) r[l] = init;
  int64_t j = 0;
  for (; j + 8 <= m; j += 8)
    for (int l = 0; l < 8; l++) {
      double v = k == K_FMAXABS ? fabs(x[j + l]) : x[j + l];
      r[l] = (k == K_FMINV ? v < r[l] : v > r[l]) || v != v ? v : r[l];
    }
  double e = init;
  for (int l = 0; l < 8; l++)
    e = (k == K_FMINV ? r[l] < e : r[l] > e) || r[l] != r[l] ? r[l] : e;
  for (; j < m; j++) {
    double v = k == K_FMAXABS ? fabs(x[j]) : x[j];
    e = (k == K_FMINV ? v < e : v > e) || v != v ? v : e;
  }
  return e;
}

static double row_extreme_of(kind k, const double *x, int64_t m, double init) {
  switch (k) {
    case K_FMINV: return row_extreme(K_FMINV, x, m, init);
    case K_FMAXV: return row_extreme(K_FMAXV, x, m, init);
    default: return row_extreme(K_FMAXABS, x, m, init);
  }
}

/* e[w] = the extreme of e[w] and the row x[w] (or |x[w]|), NaN winning. */
static inline void col_extreme(kind k, double *restrict e,
                               const double *restrict x, int W) {
  int w = 0;
  for (; w + 8 <= W; w += 8)
    for (int l = 0; l < 8; l++) {
      double v = k == K_FMAXABS ? fabs(x[w + l]) : x[w + l];
      double *d = &e[w + l];
      *d = (k == K_FMINV ? v < *d : v > *d) || v != v ? v : *d;
    }
  for (; w < W; w++) {
    double v = k == K_FMAXABS ? fabs(x[w]) : x[w];
    e[w] = (k == K_FMINV ? v < e[w] : v > e[w]) || v != v ? v : e[w];
  }
}

static void col_extreme_of(kind k, double *e, const double *x, int W) {
  switch (k) {
    case K_FMINV: col_extreme(K_FMINV, e, x, W); break;
    case K_FMAXV: col_extreme(K_FMAXV, e, x, W); break;
    default: col_extreme(K_FMAXABS, e, x, W); break;
  }
}

/* Row mode K_FMIN, K_FMAX over m values at index j0: the extreme without
 * branches, then, only when it beats st, its first occurrence. */
static void row_arg(kind k, part *st, const double *x, int64_t m, int64_t j0) {
  int is_min = k == K_FMIN;
  double e = row_extreme_of(is_min ? K_FMINV : K_FMAXV, x, m,
                            is_min ? INFINITY : -INFINITY);
  if (!((is_min ? e < st->f : e > st->f) || (e != e && st->f == st->f))) return;
  int64_t j = 0; /* e is one of the values: it beats the initial infinity */
  while (!(x[j] == e || (e != e && x[j] != x[j]))) j++;
  st->f = e;
  st->at = j0 + j;
}

static int extreme_only(kind k) {
  return k == K_FMINV || k == K_FMAXV || k == K_FMAXABS;
}

/* The integer counterpart; sums and products wrap around. */
static inline void itile(kind k, part *st, const int64_t *x, int64_t m, int W,
                         int64_t j0) {
  for (int64_t j = 0; j < m; j++)
    for (int w = 0; w < W; w++) {
      int64_t v = x[j * W + w];
      part *s = &st[w];
      switch (k) {
        case K_ISUM: s->i = (int64_t)((uint64_t)s->i + (uint64_t)v); break;
        case K_IPROD: s->i = (int64_t)((uint64_t)s->i * (uint64_t)v); break;
        case K_IMIN:
          if (v < s->i) {
            s->i = v;
            s->at = j0 + j;
          }
          break;
        default:
          if (v > s->i) {
            s->i = v;
            s->at = j0 + j;
          }
          break;
      }
    }
}

static void itile_of(kind k, part *st, const int64_t *x, int64_t m, int W,
                     int64_t j0) {
  if (W == 1) {
    switch (k) {
      case K_ISUM: itile(K_ISUM, st, x, m, 1, j0); break;
      case K_IPROD: itile(K_IPROD, st, x, m, 1, j0); break;
      case K_IMIN: itile(K_IMIN, st, x, m, 1, j0); break;
      default: itile(K_IMAX, st, x, m, 1, j0); break;
    }
    return;
  }
  switch (k) {
    case K_ISUM: itile(K_ISUM, st, x, m, W, j0); break;
    case K_IPROD: itile(K_IPROD, st, x, m, W, j0); break;
    case K_IMIN: itile(K_IMIN, st, x, m, W, j0); break;
    default: itile(K_IMAX, st, x, m, W, j0); break;
  }
}

static int int_kind(kind k) {
  return k == K_ISUM || k == K_IPROD || k == K_IMIN || k == K_IMAX;
}

/* ---- pairwise sums of chunk sums ----
 * A binary counter of partial sums: level k holds the sum of 2^k chunks, so
 * after 2^L pushes the total is a balanced tree. W sums side by side, level
 * k at lv[k * W]. */

static void pw_push(double *lv, int64_t *count, double *v, int W) {
  int64_t c = (*count)++;
  int k = 0;
  for (; c & 1; c >>= 1, k++)
    for (int w = 0; w < W; w++) v[w] = lv[k * W + w] + v[w];
  memcpy(lv + k * W, v, (size_t)W * sizeof *v);
}

/* The levels' sum, lowest first (a single chunk's sum comes back as is). */
static void pw_total(const double *lv, int64_t count, part *st, int W) {
  int first = 1;
  for (int w = 0; w < W; w++) st[w].f = 0;
  for (int k = 0; count >> k; k++)
    if (count >> k & 1) {
      for (int w = 0; w < W; w++)
        st[w].f = first ? lv[k * W + w] : st[w].f + lv[k * W + w];
      first = 0;
    }
}

/* ---- segments and folds ---- */

typedef struct {
  layout l;
  ml_redop op;
  ml_dtype t; /* the input's */
  pass passes[2];
  int npasses;
  int64_t seg, nseg; /* segment length and count (at least one) */
  int64_t ddof;
} plan;

static void init_parts(kind k, part *st, int W, int64_t j0) {
  for (int w = 0; w < W; w++) {
    part *s = &st[w];
    s->f = k == K_FPROD ? 1
           : k == K_FMIN || k == K_FMINV ? INFINITY
           : k == K_FMAX || k == K_FMAXV ? -INFINITY
           : 0;
    s->i = k == K_IPROD ? 1
           : k == K_IMIN ? INT64_MAX
           : k == K_IMAX ? INT64_MIN
           : 0;
    s->at = j0;
  }
}

/* Row mode: *st (initialised) = pass p over indices [j0, j1) of the row
 * at ip, chunk by chunk; c is the row's center. */
static void reduce_row(const plan *pl, const scratch *s, pass p,
                       const char *ip, int64_t j0, int64_t j1, double c,
                       part *st) {
  const layout *l = &pl->l;
  int64_t count = 0;
  if (p.k == K_FSUM && j1 - j0 <= CHUNK) { /* what one push and total give */
    const double *x = load_f(s->f, ip + j0 * l->js, l->js, j1 - j0, pl->t);
    st->f = row_sum_of(x, j1 - j0, p.x, c);
    return;
  }
  for (int64_t j = j0; j < j1; j += CHUNK) {
    int64_t m = j1 - j < CHUNK ? j1 - j : CHUNK;
    const char *q = ip + j * l->js;
    if (p.k == K_FSUM) {
      s->sums[0] = row_sum_of(load_f(s->f, q, l->js, m, pl->t), m, p.x, c);
      pw_push(s->lv, &count, s->sums, 1);
    } else if (extreme_only(p.k)) {
      st->f = row_extreme_of(p.k, load_f(s->f, q, l->js, m, pl->t), m, st->f);
    } else if (p.k == K_FMIN || p.k == K_FMAX) {
      row_arg(p.k, st, load_f(s->f, q, l->js, m, pl->t), m, j);
    } else if (int_kind(p.k)) {
      itile_of(p.k, st, load_i(s->i, q, l->js, m, pl->t), m, 1, j);
    } else {
      ftile_of(p.k, st, load_f(s->f, q, l->js, m, pl->t), m, 1, j);
    }
  }
  if (p.k == K_FSUM) pw_total(s->lv, count, st, 1);
}

/* st[0..wg) = pass p over indices [j0, j1) of the group at ip; c holds the
 * pass's centers (the mean for squared deviations, the maximum for exp). */
static void reduce_segment(const plan *pl, const scratch *s, pass p,
                           const char *ip, int wg, int64_t j0, int64_t j1,
                           const double *c, part *st) {
  const layout *l = &pl->l;
  int64_t count = 0;
  init_parts(p.k, st, wg, j0);
  if (!l->cols) {
    for (int w = 0; w < wg; w++)
      reduce_row(pl, s, p, ip + w * l->ws, j0, j1, c[w], &st[w]);
  } else {
    int rows = 0;
    for (int w = 0; w < wg; w++) s->sums[w] = extreme_only(p.k) ? st[w].f : 0;
    for (int64_t j = j0; j < j1; j++) {
      const char *q = ip + j * l->js;
      if (extreme_only(p.k)) {
        col_extreme_of(p.k, s->sums, load_f(s->f, q, l->ws, wg, pl->t), wg);
      } else if (p.k == K_FSUM) {
        col_add_of(s->sums, load_f(s->f, q, l->ws, wg, pl->t), wg, p.x, c);
        if (++rows == CROWS || j + 1 == j1) {
          pw_push(s->lv, &count, s->sums, wg);
          memset(s->sums, 0, (size_t)wg * sizeof *s->sums);
          rows = 0;
        }
      } else if (int_kind(p.k)) {
        itile_of(p.k, st, load_i(s->i, q, l->ws, wg, pl->t), 1, wg, j);
      } else {
        ftile_of(p.k, st, load_f(s->f, q, l->ws, wg, pl->t), 1, wg, j);
      }
    }
    if (p.k == K_FSUM) pw_total(s->lv, count, st, wg);
    if (extreme_only(p.k))
      for (int w = 0; w < wg; w++) st[w].f = s->sums[w];
  }
}

/* The end of the segment that starts at index j0. */
static int64_t seg_end(const plan *pl, int64_t j0) {
  return pl->l.n - j0 < pl->seg ? pl->l.n : j0 + pl->seg;
}

/* a = a then b (b covers later indices): ties keep a's index. */
static void fold(kind k, part *a, const part *b) {
  switch (k) {
    case K_FSUM: a->f += b->f; break;
    case K_FPROD: a->f *= b->f; break;
    case K_ISUM: case K_COUNT:
      a->i = (int64_t)((uint64_t)a->i + (uint64_t)b->i);
      break;
    case K_IPROD: a->i = (int64_t)((uint64_t)a->i * (uint64_t)b->i); break;
    case K_IMIN: if (b->i < a->i) *a = *b; break;
    case K_IMAX: if (b->i > a->i) *a = *b; break;
    case K_FMIN: case K_FMINV:
      if (b->f < a->f || (b->f != b->f && a->f == a->f)) *a = *b;
      break;
    default: /* K_FMAX, K_FMAXV, K_FMAXABS */
      if (b->f > a->f || (b->f != b->f && a->f == a->f)) *a = *b;
      break;
  }
}

/* The centers of the second pass from the first pass's results. */
static void set_centers(const plan *pl, const part *st, int wg, double *c) {
  for (int w = 0; w < wg; w++)
    c[w] = pl->op == ML_LOGSUMEXP ? st[w].f : st[w].f / (double)pl->l.n;
}

/* Writes the wg results of a group to op from its last pass (st) and
 * centers (c). */
static void finish(const plan *pl, const scratch *sc, const part *st,
                   const double *c, int wg, char *op) {
  double *f = sc->fo;
  int64_t *v = sc->io;
  double n = (double)pl->l.n, dof = n - (double)pl->ddof;
  int ints = 0;
  for (int w = 0; w < wg; w++) {
    const part *s = &st[w];
    switch (pl->op) {
      case ML_SUM: case ML_PROD: case ML_MIN: case ML_MAX:
        ints = !ml_dtype_is_float(pl->t);
        f[w] = s->f;
        v[w] = s->i;
        break;
      case ML_ARGMIN: case ML_ARGMAX: ints = 1; v[w] = s->at + 1; break;
      case ML_ANY: ints = 1; v[w] = s->i > 0; break;
      case ML_ALL: ints = 1; v[w] = s->i == pl->l.n; break;
      case ML_MEAN: f[w] = s->f / n; break;
      case ML_VAR: f[w] = dof > 0 ? s->f / dof : NAN; break;
      case ML_STD: f[w] = dof > 0 ? sqrt(s->f / dof) : NAN; break;
      case ML_NORM2: f[w] = sqrt(s->f); break;
      case ML_LOGSUMEXP: f[w] = isfinite(c[w]) ? c[w] + log(s->f) : c[w]; break;
      default: f[w] = s->f; break; /* NORM1, NORMINF */
    }
  }
  if (ints)
    store_i(op, pl->l.ows, v, wg, pl->l.out->dtype);
  else
    store_f(op, pl->l.ows, f, wg, pl->l.out->dtype);
}

/* Every pass of group gi, segment after segment, then its results. */
static void reduce_group(const plan *pl, char *work, int64_t gi) {
  scratch s = cpu_scratch_get(work, pl->l.W);
  const char *ip;
  char *op;
  int wg;
  cpu_rows_group(&pl->l, gi, &ip, &op, &wg);
  for (int w = 0; w < wg; w++) s.c[w] = 0;
  for (int q = 0; q < pl->npasses; q++) {
    pass p = pl->passes[q];
    for (int64_t k = 0; k < pl->nseg; k++) {
      int64_t j0 = k * pl->seg, j1 = seg_end(pl, j0);
      reduce_segment(pl, &s, p, ip, wg, j0, j1, s.c, k ? s.st : s.acc);
      if (k)
        for (int w = 0; w < wg; w++) fold(p.k, &s.acc[w], &s.st[w]);
    }
    if (q + 1 < pl->npasses) set_centers(pl, s.acc, wg, s.c);
  }
  finish(pl, &s, s.acc, s.c, wg, op);
}

/* Few groups with many segments: every (group, segment) in parallel into
 * parts, then the in-order folds, as reduce_group does them. */
static int reduce_by_segment(const plan *pl, char *work, int threads) {
  int64_t W = pl->l.W, ng = pl->l.ngroups, items = ng * pl->nseg;
  part *parts = malloc((size_t)(items * W) * sizeof *parts);
  double *centers = calloc((size_t)(ng * W), sizeof *centers);
  if (!parts || !centers) {
    free(parts);
    free(centers);
    return ml_fail(ML_ENOMEM, "out of memory for %lld partial results",
                   (long long)(items * W));
  }
  scratch s = cpu_scratch_get(work, W);
  for (int q = 0; q < pl->npasses; q++) {
    pass p = pl->passes[q];
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int64_t it = 0; it < items; it++) {
      int64_t gi = it / pl->nseg, k = it % pl->nseg;
      int64_t j0 = k * pl->seg, j1 = seg_end(pl, j0);
      scratch ts = cpu_scratch_get(work, W);
      const char *ip;
      char *op;
      int wg;
      cpu_rows_group(&pl->l, gi, &ip, &op, &wg);
      reduce_segment(pl, &ts, p, ip, wg, j0, j1, centers + gi * W,
                     parts + it * W);
    }
    for (int64_t gi = 0; gi < ng; gi++) {
      const char *ip;
      char *op;
      int wg;
      part *acc = parts + gi * pl->nseg * W;
      cpu_rows_group(&pl->l, gi, &ip, &op, &wg);
      for (int64_t k = 1; k < pl->nseg; k++)
        for (int w = 0; w < wg; w++) fold(p.k, &acc[w], &acc[k * W + w]);
      if (q + 1 < pl->npasses)
        set_centers(pl, acc, wg, centers + gi * W);
      else
        finish(pl, &s, acc, centers + gi * W, wg, op);
    }
  }
  free(parts);
  free(centers);
  return ML_OK;
}

static int make_passes(ml_redop op, ml_dtype t, pass *p) {
  int fl = ml_dtype_is_float(t);
  p[0].x = p[1].x = X_ID;
  switch (op) {
    case ML_SUM: p[0].k = fl ? K_FSUM : K_ISUM; return 1;
    case ML_PROD: p[0].k = fl ? K_FPROD : K_IPROD; return 1;
    case ML_MIN: p[0].k = fl ? K_FMINV : K_IMIN; return 1;
    case ML_MAX: p[0].k = fl ? K_FMAXV : K_IMAX; return 1;
    case ML_ARGMIN: p[0].k = fl ? K_FMIN : K_IMIN; return 1;
    case ML_ARGMAX: p[0].k = fl ? K_FMAX : K_IMAX; return 1;
    case ML_ANY: case ML_ALL: p[0].k = K_COUNT; return 1;
    default: break;
  }
  if (!fl) return 0;
  switch (op) {
    case ML_MEAN: p[0].k = K_FSUM; return 1;
    case ML_NORM1: p[0].k = K_FSUM; p[0].x = X_ABS; return 1;
    case ML_NORM2: p[0].k = K_FSUM; p[0].x = X_SQ; return 1;
    case ML_NORMINF: p[0].k = K_FMAXABS; return 1;
    case ML_VAR: case ML_STD:
      p[0].k = p[1].k = K_FSUM;
      p[1].x = X_SQ;
      return 2;
    case ML_LOGSUMEXP:
      p[0].k = K_FMAXV;
      p[1].k = K_FSUM;
      p[1].x = X_EXP;
      return 2;
    default: return 0;
  }
}

int cpu_reduce(ml_redop op, const ml_array *out, const ml_array *in,
               int64_t ddof) {
  plan pl;
  cpu_rows_layout(&pl.l, out, in);
  pl.op = op;
  pl.t = in->dtype;
  pl.ddof = ddof;
  pl.npasses = make_passes(op, in->dtype, pl.passes);
  if (!pl.npasses)
    return ml_fail(ML_EINVAL, "reduce: operation %d does not take %s input",
                   (int)op, ml_dtype_name(in->dtype));
  if (pl.l.ngroups == 0) return ML_OK;
  pl.seg = pl.l.cols ? COL_SEG : ROW_SEG;
  pl.nseg = pl.l.n > 0 ? (pl.l.n + pl.seg - 1) / pl.seg : 1;
  int threads = cpu_threads_for(ml_array_numel(in), CPU_PARALLEL_MIN);
  int by_segment = threads > 1 && pl.nseg > 1 && pl.l.ngroups < 2 * threads;
  if (!by_segment && threads > pl.l.ngroups) threads = (int)pl.l.ngroups;
  double local[LOCAL_WORK];
  char *work;
  int rc = cpu_scratch_new("reduce", threads, pl.l.W, local, &work);
  if (rc) return rc;
  if (by_segment) {
    rc = reduce_by_segment(&pl, work, threads);
  } else if (threads == 1) { /* no OpenMP team to start */
    for (int64_t gi = 0; gi < pl.l.ngroups; gi++) reduce_group(&pl, work, gi);
  } else {
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int64_t gi = 0; gi < pl.l.ngroups; gi++) reduce_group(&pl, work, gi);
  }
  cpu_scratch_free(work, local);
  return rc;
}
