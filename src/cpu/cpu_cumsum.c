/* Cumulative sums and products along the last dimension, on the CPU.
 *
 * The layout is the reductions' (reduce_rows.h): a group of rows scans each
 * row in turn, chunk by chunk; a group of columns scans its outputs side by
 * side, one index of the scanned dimension at a time. Float dtypes carry
 * the running sum (or product) in double, integer dtypes in int64 with
 * wrap-around. A
 * group runs on one thread in order, so the bits do not depend on the
 * thread count. */
#include "../core/status.h"
#include "cpu.h"
#include "reduce_rows.h"
#include "strided.h"

/* Running sums (prod: products) of one row (row mode), in double or
 * int64. */
static void scan_row(const layout *l, const scratch *s, const char *ip,
                     char *op, int64_t ojs, int prod) {
  ml_dtype t = l->in->dtype, ot = l->out->dtype;
  double f = prod;
  int64_t i = prod;
  for (int64_t j = 0; j < l->n; j += CHUNK) {
    int64_t m = l->n - j < CHUNK ? l->n - j : CHUNK;
    if (ml_dtype_is_float(t)) {
      const double *x = load_f(s->f, ip + j * l->js, l->js, m, t);
      for (int64_t k = 0; k < m; k++) s->fo[k] = f = prod ? f * x[k] : f + x[k];
      store_f(op + j * ojs, ojs, s->fo, m, ot);
    } else {
      const int64_t *x = load_i(s->i, ip + j * l->js, l->js, m, t);
      for (int64_t k = 0; k < m; k++)
        s->io[k] = i = prod ? (int64_t)((uint64_t)i * (uint64_t)x[k])
                            : (int64_t)((uint64_t)i + (uint64_t)x[k]);
      store_i(op + j * ojs, ojs, s->io, m, ot);
    }
  }
}

/* Running sums (prod: products) of one group, in double (float dtypes) or
 * int64. */
static void scan_group(const layout *l, char *work, int64_t ojs, int64_t gi,
                       int prod) {
  scratch s = cpu_scratch_get(work, l->W);
  const char *ip;
  char *op;
  int wg;
  ml_dtype t = l->in->dtype, ot = l->out->dtype;
  cpu_rows_group(l, gi, &ip, &op, &wg);
  if (!l->cols) {
    for (int w = 0; w < wg; w++)
      scan_row(l, &s, ip + w * l->ws, op + w * l->ows, ojs, prod);
    return;
  }
  for (int w = 0; w < wg; w++) {
    s.fo[w] = prod;
    s.io[w] = prod;
  }
  for (int64_t j = 0; j < l->n; j++, ip += l->js, op += ojs) {
    if (ml_dtype_is_float(t)) {
      const double *x = load_f(s.f, ip, l->ws, wg, t);
      for (int w = 0; w < wg; w++)
        s.fo[w] = prod ? s.fo[w] * x[w] : s.fo[w] + x[w];
      store_f(op, l->ows, s.fo, wg, ot);
    } else {
      const int64_t *x = load_i(s.i, ip, l->ws, wg, t);
      for (int w = 0; w < wg; w++)
        s.io[w] = prod ? (int64_t)((uint64_t)s.io[w] * (uint64_t)x[w])
                       : (int64_t)((uint64_t)s.io[w] + (uint64_t)x[w]);
      store_i(op, l->ows, s.io, wg, ot);
    }
  }
}

static int cumulate(const ml_array *out, const ml_array *in, int prod) {
  layout l;
  cpu_rows_layout(&l, out, in);
  int64_t ojs = out->strides[l.nd] * (int64_t)ml_dtype_size(out->dtype);
  if (l.ngroups == 0 || l.n == 0) return ML_OK;
  int threads = cpu_threads_for(ml_array_numel(in), CPU_PARALLEL_MIN);
  if (threads > l.ngroups) threads = (int)l.ngroups;
  double local[LOCAL_WORK];
  char *work;
  int rc = cpu_scratch_new(prod ? "cumprod" : "cumsum", threads, l.W, local,
                           &work);
  if (rc) return rc;
  if (threads == 1) {
    for (int64_t gi = 0; gi < l.ngroups; gi++)
      scan_group(&l, work, ojs, gi, prod);
  } else {
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int64_t gi = 0; gi < l.ngroups; gi++)
      scan_group(&l, work, ojs, gi, prod);
  }
  cpu_scratch_free(work, local);
  return ML_OK;
}

int cpu_cumsum(const ml_array *out, const ml_array *in) {
  return cumulate(out, in, 0);
}

int cpu_cumprod(const ml_array *out, const ml_array *in) {
  return cumulate(out, in, 1);
}
