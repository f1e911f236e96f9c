/* The layout and work space of the CPU reductions and cumulative sums:
 * see reduce_rows.h. */
#include "reduce_rows.h"

#include <stdlib.h>

#include "../core/status.h"

#ifdef _OPENMP
#include <omp.h>
#endif

/* ---- layout ---- */

void cpu_rows_layout(layout *l, const ml_array *out, const ml_array *in) {
  int64_t isz = (int64_t)ml_dtype_size(in->dtype);
  int64_t osz = (int64_t)ml_dtype_size(out->dtype);
  int nd = in->ndim - 1, g = nd - 1;
  l->in = in;
  l->out = out;
  l->nd = nd;
  l->n = in->shape[nd];
  l->js = in->strides[nd] * isz;
  l->ncol = nd > 0 ? in->shape[g] : 1;
  l->ws = nd > 0 ? in->strides[g] * isz : 0;
  l->ows = nd > 0 ? out->strides[g] * osz : 0;
  l->cols = nd > 0 && l->ncol > 1 && l->n > 1 && in->strides[g] == 1 &&
            in->strides[nd] != 1;
  l->W = l->cols ? COLS : ROWS;
  if (l->W > l->ncol) l->W = l->ncol > 0 ? l->ncol : 1;
  l->nblk = (l->ncol + l->W - 1) / l->W;
  l->ngroups = l->nblk;
  for (int d = 0; d < g; d++) l->ngroups *= in->shape[d];
}

void cpu_rows_group(const layout *l, int64_t gi, const char **ip, char **op,
                    int *wg) {
  int64_t isz = (int64_t)ml_dtype_size(l->in->dtype);
  int64_t osz = (int64_t)ml_dtype_size(l->out->dtype);
  int64_t o = gi / l->nblk, c0 = gi % l->nblk * l->W;
  const char *p = ml_array_data(l->in);
  char *q = ml_array_data(l->out);
  for (int d = l->nd - 2; d >= 0; d--) {
    int64_t i = o % l->in->shape[d];
    o /= l->in->shape[d];
    p += i * l->in->strides[d] * isz;
    q += i * l->out->strides[d] * osz;
  }
  *ip = p + c0 * l->ws;
  *op = q + c0 * l->ows;
  *wg = (int)(l->ncol - c0 < l->W ? l->ncol - c0 : l->W);
}

/* ---- work space ---- */

static int64_t scratch_len(int64_t W) { return W > CHUNK ? W : CHUNK; }

static size_t scratch_bytes(int64_t W) {
  return (size_t)(2 * W) * sizeof(part) +
         (size_t)((2 + LEVELS) * W + 4 * scratch_len(W)) * sizeof(double);
}

int cpu_scratch_new(const char *op, int threads, int64_t W, double *local,
                    char **base) {
  size_t n = scratch_bytes(W) * (size_t)threads;
  *base = n <= LOCAL_WORK * sizeof *local ? (char *)local : malloc(n);
  if (!*base)
    return ml_fail(ML_ENOMEM, "%s: out of memory for %zu bytes of work space",
                   op, n);
  return ML_OK;
}

void cpu_scratch_free(char *base, double *local) {
  if (base != (char *)local) free(base);
}

scratch cpu_scratch_get(char *base, int64_t W) {
#ifdef _OPENMP
  base += scratch_bytes(W) * (size_t)omp_get_thread_num();
#endif
  int64_t len = scratch_len(W);
  scratch s;
  s.acc = (part *)base;
  s.st = s.acc + W;
  s.c = (double *)(s.st + W);
  s.sums = s.c + W;
  s.lv = s.sums + W;
  s.f = s.lv + LEVELS * W;
  s.fo = s.f + len;
  s.i = (int64_t *)(s.fo + len);
  s.io = s.i + len;
  return s;
}
