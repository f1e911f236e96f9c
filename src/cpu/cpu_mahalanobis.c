/* The squared Mahalanobis distances on the CPU (contract in
 * core/linalg_backend.h, its mahalanobis entry): for each factor, a block
 * of rows times the triangular factor through OpenBLAS's dtrmm (the
 * triangle's work alone), then each row's distance. */
#include <cblas.h>
#include <stdlib.h>
#include <string.h>

#include "../core/status.h"
#include "cpu.h"

#define ROWS 1024 /* rows a product, which bound its scratch */

int cpu_mahalanobis(const ml_array *out, const ml_array *x, const ml_array *p,
                    const ml_array *c) {
  const int64_t n = x->shape[0], d = x->shape[1], k = p->shape[0];
  const double *xs = ml_array_data(x), *ps = ml_array_data(p), *cs = ml_array_data(c);
  double *o = ml_array_data(out);
  int64_t rows = n < ROWS ? n : ROWS;
  double *y = malloc((size_t)(rows * d) * sizeof *y);
  if (!y) return ml_fail(ML_ENOMEM, "linalg.mahalanobis: out of memory");
  for (int64_t i0 = 0; i0 < n; i0 += ROWS) {
    int64_t m = n - i0 < ROWS ? n - i0 : ROWS;
    for (int64_t j = 0; j < k; j++) {
      memcpy(y, xs + i0 * d, (size_t)(m * d) * sizeof *y);
      cblas_dtrmm(CblasRowMajor, CblasRight, CblasUpper, CblasNoTrans, CblasNonUnit, (int)m,
                  (int)d, 1, ps + j * d * d, (int)d, y, (int)d);
      const double *cj = cs + j * d;
      for (int64_t i = 0; i < m; i++) {
        double s = 0;
        for (int64_t e = 0; e < d; e++) {
          double v = y[i * d + e] - cj[e];
          s += v * v;
        }
        o[(i0 + i) * k + j] = s;
      }
    }
  }
  free(y);
  return ML_OK;
}
