/* The weighted scatters on the CPU (contract in core/linalg_backend.h, its
 * weighted_gram entry): for each component, the rows whose weight is not
 * zero (a zero weight's term is exactly zero, and a mixture's
 * responsibilities are mostly zeros) gathered into blocks, each also times
 * its weights, then OpenBLAS's dgemm of each block of 64 columns with the
 * columns from there on (the lower block triangle's work alone); the
 * upper triangle is then copied from the lower one. */
#include <cblas.h>
#include <stdlib.h>
#include <string.h>

#include "../core/status.h"
#include "cpu.h"

#define ROWS 2048 /* rows a product, which bound its scratch */
#define COLS 64   /* columns a product */

/* c += the lower block triangle of y^T z for m rows of d. */
static void add_block(double *c, const double *y, const double *z, int64_t m, int64_t d) {
  /* rows c0.. of columns c0..c0+b-1: y[:, c0:]^T z[:, c0:c0+b] */
  for (int64_t c0 = 0; c0 < d; c0 += COLS) {
    int64_t b = d - c0 < COLS ? d - c0 : COLS;
    cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)(d - c0), (int)b, (int)m, 1,
                y + c0, (int)d, z + c0, (int)d, 1, c + c0 * d + c0, (int)d);
  }
}

int cpu_weighted_gram(const ml_array *out, const ml_array *x, const ml_array *w) {
  const int64_t n = x->shape[0], d = x->shape[1], k = w->shape[0];
  const double *xs = ml_array_data(x), *ws = ml_array_data(w);
  double *o = ml_array_data(out);
  int64_t rows = n < ROWS ? n : ROWS;
  double *y = malloc((size_t)(2 * rows * d) * sizeof *y), *z = y + rows * d;
  if (!y) return ml_fail(ML_ENOMEM, "linalg.gram: out of memory");
  memset(o, 0, (size_t)(k * d * d) * sizeof *o);
  for (int64_t j = 0; j < k; j++) {
    double *c = o + j * d * d;
    const double *wj = ws + j * n;
    int64_t m = 0;
    for (int64_t i = 0; i < n; i++) {
      if (wj[i] == 0) continue;
      memcpy(z + m * d, xs + i * d, (size_t)d * sizeof *z);
      for (int64_t e = 0; e < d; e++) y[m * d + e] = xs[i * d + e] * wj[i];
      if (++m == rows) {
        add_block(c, y, z, m, d);
        m = 0;
      }
    }
    if (m > 0) add_block(c, y, z, m, d);
    for (int64_t r = 0; r < d; r++)
      for (int64_t s = r + 1; s < d; s++) c[r * d + s] = c[s * d + r];
  }
  free(y);
  return ML_OK;
}
