/* The weighted scatters on the CPU (contract in core/linalg_backend.h, its
 * weighted_gram entry): for each component, a block of rows times its
 * weights, then OpenBLAS's dgemm of each block of 64 columns with the
 * columns from there on (the lower block triangle's work alone); the
 * upper triangle is then copied from the lower one. */
#include <cblas.h>
#include <stdlib.h>
#include <string.h>

#include "../core/status.h"
#include "cpu.h"

#define ROWS 2048 /* rows a product, which bound its scratch */
#define COLS 64   /* columns a product */

int cpu_weighted_gram(const ml_array *out, const ml_array *x, const ml_array *w) {
  const int64_t n = x->shape[0], d = x->shape[1], k = w->shape[0];
  const double *xs = ml_array_data(x), *ws = ml_array_data(w);
  double *o = ml_array_data(out);
  int64_t rows = n < ROWS ? n : ROWS;
  double *y = malloc((size_t)(rows * d) * sizeof *y);
  if (!y) return ml_fail(ML_ENOMEM, "linalg.gram: out of memory");
  memset(o, 0, (size_t)(k * d * d) * sizeof *o);
  for (int64_t j = 0; j < k; j++) {
    double *c = o + j * d * d;
    for (int64_t i0 = 0; i0 < n; i0 += ROWS) {
      int64_t m = n - i0 < ROWS ? n - i0 : ROWS;
      const double *xb = xs + i0 * d, *wb = ws + j * n + i0;
      for (int64_t i = 0; i < m; i++)
        for (int64_t e = 0; e < d; e++) y[i * d + e] = xb[i * d + e] * wb[i];
      /* rows c0.. of columns c0..c0+b-1: y[:, c0:]^T x[:, c0:c0+b] */
      for (int64_t c0 = 0; c0 < d; c0 += COLS) {
        int64_t b = d - c0 < COLS ? d - c0 : COLS;
        cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)(d - c0), (int)b, (int)m, 1,
                    y + c0, (int)d, xb + c0, (int)d, 1, c + c0 * d + c0, (int)d);
      }
    }
    for (int64_t r = 0; r < d; r++)
      for (int64_t s = r + 1; s < d; s++) c[r * d + s] = c[s * d + r];
  }
  free(y);
  return ML_OK;
}
