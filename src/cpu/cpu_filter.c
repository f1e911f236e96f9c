/* Filters on the CPU (contracts in core/filter_backend.h).
 *
 * correlate and separable share one loop: each work item, SEG outputs of
 * one output row (i0, i1), sums for each mask row (j0, j1) the correlation
 * of one input row with that mask row. The stretch of the input row it
 * reads is first extended along axis 2 into a buffer of doubles
 * (filter_fold.h; read in place when it is double and lies inside the
 * row), so the inner loop is a plain product over contiguous doubles;
 * rows that lie outside the input in constant mode are cval throughout.
 * Sums run in double in the mask's C order, as scipy.ndimage's, and round
 * once. The separable passes run one after the other, the first into a
 * scratch array of the dtype. box keeps a running sum per line, restarted
 * at every CHUNK outputs (or every window, for longer ones), so that one
 * long line splits across threads the same way whatever their number.
 * OpenMP over work items; an output never depends on the thread that
 * computes it. */
#include <stdlib.h>
#include <string.h>

#include "../core/filter_backend.h"
#include "cpu.h"
#include "strided.h"

#define SEG 4096
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

/* buf[e] = the extension of row at positions p0 + e, e < len, as double. */
static void load_row(const plan *p, double *buf, const char *row, int64_t p0,
                     int64_t len) {
  int64_t n = p->n[2];
  for (int64_t e = 0; e < len; e++) {
    int64_t q = ml_filter_fold(p0 + e, n, p->mode[2]);
    buf[e] = q < 0        ? p->cval
             : p->f32 ? ((const float *)row)[q]
                      : ((const double *)row)[q];
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

/* Work item u: outputs x0 .. x0 + m - 1 of output row r = i0 o1 + i1,
 * x0 = (u mod segs) SEG. */
static void corr_item(const plan *p, int64_t u, double *buf, double *acc) {
  int64_t segs = (p->o[2] + SEG - 1) / SEG, r = u / segs;
  int64_t x0 = u % segs * SEG;
  int64_t m = p->o[2] - x0 < SEG ? p->o[2] - x0 : SEG, len = m + p->k[2] - 1;
  int64_t i0 = r / p->o[1], i1 = r % p->o[1], p0 = x0 + p->start[2];
  int in_place = !p->f32 && p0 >= 0 && p0 + len <= p->n[2];
  size_t esize = p->f32 ? 4 : 8;
  for (int64_t x = 0; x < m; x++) acc[x] = 0;
  for (int64_t j0 = 0; j0 < p->k[0]; j0++) {
    int64_t q0 = ml_filter_fold(i0 + j0 + p->start[0], p->n[0], p->mode[0]);
    int64_t w0 = p->flip ? p->k[0] - 1 - j0 : j0;
    for (int64_t j1 = 0; j1 < p->k[1]; j1++) {
      int64_t q1 = ml_filter_fold(i1 + j1 + p->start[1], p->n[1], p->mode[1]);
      int64_t w1 = p->flip ? p->k[1] - 1 - j1 : j1;
      const double *w = p->w + (w0 * p->k[1] + w1) * p->k[2];
      const double *src = buf;
      if (q0 < 0 || q1 < 0) {
        for (int64_t e = 0; e < len; e++) buf[e] = p->cval;
      } else {
        int64_t at = (q0 * p->n[1] + q1) * p->n[2];
        const char *row = p->in + at * (int64_t)esize;
        if (in_place)
          src = (const double *)row + p0;
        else
          load_row(p, buf, row, p0, len);
      }
      for (int64_t j2 = 0; j2 < p->k[2]; j2++) {
        double wv = w[p->flip ? p->k[2] - 1 - j2 : j2];
        const double *s = src + j2;
        for (int64_t x = 0; x < m; x++) acc[x] += wv * s[x];
      }
    }
  }
  store_row(p->out + (r * p->o[2] + x0) * (int64_t)esize, acc, m, p->f32);
}

static int run_plan(const plan *p) {
  int64_t segs = (p->o[2] + SEG - 1) / SEG, items = p->o[0] * p->o[1] * segs;
  if (items == 0) return ML_OK;
  int64_t len = SEG + p->k[2] - 1, taps = p->k[0] * p->k[1] * p->k[2];
  int64_t work = p->o[0] * p->o[1] * p->o[2] * taps;
  int threads = cpu_threads_for(work, CPU_PARALLEL_MIN), failed = 0;
  if (threads > items) threads = (int)items;
#pragma omp parallel num_threads(threads)
  {
    double *buf = malloc((size_t)(len + SEG) * sizeof *buf);
    if (!buf) {
#pragma omp atomic write
      failed = 1;
    }
#pragma omp for schedule(static)
    for (int64_t u = 0; u < items; u++)
      if (buf && !ml_interrupt_pending()) corr_item(p, u, buf, buf + len);
    free(buf);
  }
  if (failed)
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
} box_job;

/* The extension of a line (samples inner apart) at index e of the
 * window's positions, start + e. */
static double value(const box_job *b, const char *line, int64_t e) {
  int64_t q = ml_filter_fold(b->f->start + e, b->n, b->f->mode);
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

/* Work item u of contiguous lines (inner = 1): outputs c0 .. c0 + chunk
 * - 1 of one line. */
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

/* Work item u of strided lines (inner > 1): COLS of a line's columns
 * side by side. */
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
  int64_t lines = f->in->shape[0], n = f->in->shape[1];
  int64_t inner = f->in->shape[2], L = f->length;
  box_job b = {f, ml_array_data(f->in), ml_array_data(f->out),
               f->in->dtype == ML_FLOAT32, n, inner, L > CHUNK ? L : CHUNK};
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
  if (ml_interrupt_take()) return ml_fail(ML_EINTR, "interrupted");
  return ML_OK;
}

const ml_filter_backend cpu_filter_backend = {
    .correlate = cpu_filter_correlate,
    .separable = cpu_filter_separable,
    .box = cpu_filter_box,
};
