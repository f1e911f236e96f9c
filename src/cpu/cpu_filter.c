/* Filters on the CPU (contracts in core/filter_backend.h).
 *
 * correlate and separable share one loop: each output row (i0, i1) sums,
 * for each mask row (j0, j1), the correlation of one input row with that
 * mask row. The input row is first extended along axis 2 into a buffer of
 * doubles through a table of folded positions (filter_fold.h), so the
 * inner loop is a plain product over contiguous doubles; rows that lie
 * outside the input in constant mode are cval throughout. Sums run in
 * double in the mask's C order, as scipy.ndimage's, and round once. The
 * separable passes run one after the other, the first into a scratch
 * array of the dtype. box keeps a running sum per line, restarted at
 * every CHUNK outputs (or every window, for longer ones) so that one long
 * line splits across threads the same way whatever their number. OpenMP
 * over rows, lines or chunks; a row's result never depends on the thread
 * that computes it. */
#include <stdlib.h>
#include <string.h>

#include "../core/filter_backend.h"
#include "cpu.h"
#include "strided.h"

#define CHUNK 65536

/* One correlation over raw data: out (o0 x o1 x o2) from in (n0 x n1 x
 * n2) and the mask w (k0 x k1 x k2), with a mode per axis. */
typedef struct {
  const char *in;
  char *out;
  int f32, flip;
  int64_t n[3], o[3], k[3], start[3];
  const double *w;
  ml_filter_mode mode[3];
  double cval;
} plan;

/* Folded positions of axis a: tab[e] for position start + e, e = 0 ..
 * o + k - 2. */
static int64_t *fold_table(const plan *p, int a) {
  int64_t len = p->o[a] + p->k[a] - 1;
  int64_t *tab = malloc((size_t)len * sizeof *tab);
  for (int64_t e = 0; tab && e < len; e++)
    tab[e] = ml_filter_fold(p->start[a] + e, p->n[a], p->mode[a]);
  return tab;
}

/* buf[e] = row[tab[e]] as double, or cval where tab[e] < 0. */
static void load_row(double *buf, const char *row, const int64_t *tab,
                     int64_t len, int f32, double cval) {
  if (f32) {
    const float *x = (const float *)row;
    for (int64_t e = 0; e < len; e++) buf[e] = tab[e] < 0 ? cval : x[tab[e]];
  } else {
    const double *x = (const double *)row;
    for (int64_t e = 0; e < len; e++) buf[e] = tab[e] < 0 ? cval : x[tab[e]];
  }
}

static void store_row(char *row, const double *acc, int64_t len, int f32) {
  if (f32) {
    float *y = (float *)row;
    for (int64_t e = 0; e < len; e++) y[e] = (float)acc[e];
  } else {
    memcpy(row, acc, (size_t)len * sizeof *acc);
  }
}

typedef struct {
  const plan *p;
  int64_t *tab[3];
  int ident; /* tab[2] runs tab[2][0], tab[2][0] + 1, ...: rows read in place */
} corr_job;

/* Output row r = i0 o1 + i1. */
static void corr_row(const corr_job *j, int64_t r, double *buf, double *acc) {
  const plan *p = j->p;
  int64_t o2 = p->o[2], len = o2 + p->k[2] - 1;
  int64_t i0 = r / p->o[1], i1 = r % p->o[1];
  size_t esize = p->f32 ? 4 : 8;
  for (int64_t x = 0; x < o2; x++) acc[x] = 0;
  for (int64_t j0 = 0; j0 < p->k[0]; j0++) {
    int64_t q0 = j->tab[0][i0 + j0], w0 = p->flip ? p->k[0] - 1 - j0 : j0;
    for (int64_t j1 = 0; j1 < p->k[1]; j1++) {
      int64_t q1 = j->tab[1][i1 + j1], w1 = p->flip ? p->k[1] - 1 - j1 : j1;
      const double *w = p->w + (w0 * p->k[1] + w1) * p->k[2];
      const double *src = buf;
      if (q0 < 0 || q1 < 0) {
        for (int64_t e = 0; e < len; e++) buf[e] = p->cval;
      } else {
        int64_t at = (q0 * p->n[1] + q1) * p->n[2];
        const char *row = p->in + at * (int64_t)esize;
        if (j->ident && !p->f32)
          src = (const double *)row + j->tab[2][0];
        else
          load_row(buf, row, j->tab[2], len, p->f32, p->cval);
      }
      for (int64_t j2 = 0; j2 < p->k[2]; j2++) {
        double wv = w[p->flip ? p->k[2] - 1 - j2 : j2];
        const double *s = src + j2;
        for (int64_t x = 0; x < o2; x++) acc[x] += wv * s[x];
      }
    }
  }
  store_row(p->out + r * o2 * (int64_t)esize, acc, o2, p->f32);
}

static int run_plan(const plan *p) {
  int64_t rows = p->o[0] * p->o[1], o2 = p->o[2];
  if (rows == 0 || o2 == 0) return ML_OK;
  corr_job j = {p, {NULL, NULL, NULL}, 1};
  int rc = ML_OK;
  for (int a = 0; a < 3; a++)
    if (!(j.tab[a] = fold_table(p, a))) rc = ML_ENOMEM;
  int64_t len = o2 + p->k[2] - 1;
  for (int64_t e = 0; !rc && e < len; e++)
    j.ident = j.ident && j.tab[2][0] >= 0 && j.tab[2][e] == j.tab[2][0] + e;
  int64_t taps = p->k[0] * p->k[1] * p->k[2];
  int threads = cpu_threads_for(rows * o2 * taps, CPU_PARALLEL_MIN), failed = 0;
  if (threads > rows) threads = (int)rows;
  if (!rc) {
#pragma omp parallel num_threads(threads)
    {
      double *buf = malloc((size_t)(len + o2) * sizeof *buf);
      if (!buf) {
#pragma omp atomic write
        failed = 1;
      }
#pragma omp for schedule(static)
      for (int64_t r = 0; r < rows; r++)
        if (buf && !ml_interrupt_pending()) corr_row(&j, r, buf, buf + len);
      free(buf);
    }
  }
  for (int a = 0; a < 3; a++) free(j.tab[a]);
  if (rc || failed)
    return ml_fail(ML_ENOMEM, "out of memory for rows of %lld samples",
                   (long long)len);
  if (ml_interrupt_take()) return ml_fail(ML_EINTR, "interrupted");
  return ML_OK;
}

/* A plan over in and out, every other field zero. */
static plan plan_of(const ml_array *out, const ml_array *in) {
  plan p;
  memset(&p, 0, sizeof p);
  p.in = ml_array_data(in);
  p.out = ml_array_data(out);
  p.f32 = in->dtype == ML_FLOAT32;
  for (int a = 0; a < 3; a++) {
    p.n[a] = in->shape[a];
    p.o[a] = out->shape[a];
    p.k[a] = 1;
  }
  return p;
}

static int cpu_filter_correlate(const ml_filter_corr *f) {
  plan p = plan_of(f->out, f->in);
  p.flip = f->flip;
  p.w = ml_array_data(f->mask);
  p.cval = f->cval;
  for (int a = 0; a < 3; a++) {
    p.k[a] = f->mask->shape[a];
    p.start[a] = f->start[a];
    p.mode[a] = f->mode;
  }
  return run_plan(&p);
}

/* One pass of separable: along axis 1 + i with mask m. */
static int sep_pass(const ml_filter_sep *f, int i, const char *in, char *out) {
  plan p = plan_of(f->out, f->in);
  int a = 1 + i;
  p.in = in;
  p.out = out;
  p.flip = f->flip;
  p.w = ml_array_data(f->mask[i]);
  p.cval = f->cval;
  p.k[a] = f->mask[i]->shape[0];
  p.start[a] = f->start[i];
  for (int d = 0; d < 3; d++) p.mode[d] = f->mode[i];
  return run_plan(&p);
}

static int cpu_filter_separable(const ml_filter_sep *f) {
  const char *in = ml_array_data(f->in);
  char *out = ml_array_data(f->out);
  if (!f->mask[0] || !f->mask[1])
    return sep_pass(f, f->mask[0] ? 0 : 1, in, out);
  char *tmp = malloc(ml_array_nbytes(f->out));
  if (!tmp)
    return ml_fail(ML_ENOMEM, "out of memory for %zu bytes of scratch",
                   ml_array_nbytes(f->out));
  int rc = sep_pass(f, 0, in, tmp);
  if (!rc) rc = sep_pass(f, 1, tmp, out);
  free(tmp);
  return rc;
}

/* box ------------------------------------------------------------------- */

typedef struct {
  const ml_filter_box *f;
  const char *in;
  char *out;
  int f32;
  int64_t n, inner, chunk;
  int64_t *tab; /* position start + e, e = 0 .. n + length - 2 */
} box_job;

static double value(const box_job *b, const char *line, int64_t e) {
  int64_t q = b->tab[e];
  if (q < 0) return b->f->cval;
  return b->f32 ? ((const float *)line)[q * b->inner]
                : ((const double *)line)[q * b->inner];
}

static void put(const box_job *b, char *line, int64_t i, double s) {
  if (b->f32)
    ((float *)line)[i * b->inner] = (float)(s / b->f->divisor);
  else
    ((double *)line)[i * b->inner] = s / b->f->divisor;
}

/* Work item u: outputs c0 .. c0 + chunk - 1 of one line (one column, a
 * column of every inner index when inner > 1, are all done side by side
 * by box_columns). */
static void box_chunk(const box_job *b, int64_t u) {
  int64_t chunks = (b->n + b->chunk - 1) / b->chunk, L = b->f->length;
  int64_t line = u / chunks, c0 = u % chunks * b->chunk;
  int64_t c1 = c0 + b->chunk < b->n ? c0 + b->chunk : b->n;
  size_t esize = b->f32 ? 4 : 8;
  const char *in = b->in + line * b->n * (int64_t)esize;
  char *out = b->out + line * b->n * (int64_t)esize;
  double s = 0;
  for (int64_t e = c0; e < c0 + L; e++) s += value(b, in, e);
  put(b, out, c0, s);
  for (int64_t i = c0 + 1; i < c1; i++) {
    s += value(b, in, i + L - 1) - value(b, in, i - 1);
    put(b, out, i, s);
  }
}

/* Line i0 with inner > 1: columns c0 .. c1 - 1 side by side. */
#define COLS 256
static void box_columns(const box_job *b, int64_t u) {
  int64_t groups = (b->inner + COLS - 1) / COLS, L = b->f->length;
  int64_t line = u / groups, c0 = u % groups * COLS;
  int64_t w = b->inner - c0 < COLS ? b->inner - c0 : COLS;
  size_t esize = b->f32 ? 4 : 8;
  int64_t base = line * b->n * b->inner + c0;
  const char *in = b->in + base * (int64_t)esize;
  char *out = b->out + base * (int64_t)esize;
  double s[COLS];
  for (int64_t c = 0; c < w; c++) s[c] = 0;
  for (int64_t e = 0; e < L; e++)
    for (int64_t c = 0; c < w; c++)
      s[c] += value(b, in + c * (int64_t)esize, e);
  for (int64_t c = 0; c < w; c++) put(b, out + c * (int64_t)esize, 0, s[c]);
  for (int64_t i = 1; i < b->n; i++)
    for (int64_t c = 0; c < w; c++) {
      const char *col = in + c * (int64_t)esize;
      s[c] += value(b, col, i + L - 1) - value(b, col, i - 1);
      put(b, out + c * (int64_t)esize, i, s[c]);
    }
}

static int cpu_filter_box(const ml_filter_box *f) {
  int64_t lines = f->in->shape[0], n = f->in->shape[1], inner = f->in->shape[2];
  int64_t L = f->length, len = n + L - 1;
  box_job b = {f, ml_array_data(f->in), ml_array_data(f->out),
               f->in->dtype == ML_FLOAT32, n, inner, L > CHUNK ? L : CHUNK,
               NULL};
  b.tab = malloc((size_t)len * sizeof *b.tab);
  if (!b.tab)
    return ml_fail(ML_ENOMEM, "out of memory for a window of %lld", (long long)L);
  for (int64_t e = 0; e < len; e++)
    b.tab[e] = ml_filter_fold(f->start + e, n, f->mode);
  int64_t units = inner > 1 ? lines * ((inner + COLS - 1) / COLS)
                            : lines * ((n + b.chunk - 1) / b.chunk);
  int threads = cpu_threads_for(lines * n * inner, CPU_PARALLEL_MIN);
  if (threads > units) threads = (int)units;
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int64_t u = 0; u < units; u++) {
    if (ml_interrupt_pending()) continue;
    if (inner > 1)
      box_columns(&b, u);
    else
      box_chunk(&b, u);
  }
  free(b.tab);
  if (ml_interrupt_take()) return ml_fail(ML_EINTR, "interrupted");
  return ML_OK;
}

const ml_filter_backend cpu_filter_backend = {
    .correlate = cpu_filter_correlate,
    .separable = cpu_filter_separable,
    .box = cpu_filter_box,
};
