/* The row and column layout, loading and storing, and work space shared by
 * the CPU reductions (cpu_reduce.c) and cumulative sums (cpu_cumsum.c).
 *
 * Layout. The core puts the reduced (or scanned) dimension last; the
 * dimensions before it index the outputs. A group is one unit of work: in
 * row mode up to ROWS neighbouring outputs, whose rows are read in turn
 * along the reduced dimension, chunk by chunk; in column mode (an outer
 * reduction, where the outputs' last dimension is contiguous in the input
 * and the reduced one is not) up to COLS neighbouring outputs, whose values
 * for one index of the reduced dimension are contiguous: memory is read in
 * long runs in order instead of with a large stride per element.
 *
 * Values are read as double (float dtypes) or int64 (integer dtypes) into a
 * thread's work space, a chunk (row mode) or a row of the group (column
 * mode) at a time, and results are stored back from there. */
#ifndef ML_CPU_REDUCE_ROWS_H
#define ML_CPU_REDUCE_ROWS_H

#include <stddef.h>
#include <stdint.h>

#include "../core/array.h"

#define CHUNK 256        /* row mode: elements per chunk */
#define COLS 1024        /* column mode: outputs per group */
#define ROWS 64          /* row mode: outputs per group */
#define LEVELS 12        /* pairwise levels within a segment */
#define LOCAL_WORK 2048  /* doubles of work space on the stack */

/* The partial result of one output over a range of the reduced dimension. */
typedef struct {
  double f;   /* float sum, product or extreme */
  int64_t i;  /* integer sum, product or extreme; count of nonzeros */
  int64_t at; /* 0-based index of the extreme */
} part;

/* ---- layout ---- */

typedef struct {
  const ml_array *in, *out;
  int nd;           /* dimensions before the reduced one */
  int64_t n;        /* length of the reduced dimension */
  int64_t js;       /* in's byte stride along it */
  int cols;         /* column mode */
  int64_t ncol;     /* length of the group dimension, nd - 1 */
  int64_t W;        /* outputs per group */
  int64_t nblk;     /* groups per index of the other outer dimensions */
  int64_t ngroups;
  int64_t ws, ows;  /* byte strides along the group dimension: in, out */
} layout;

/* Fills *l for reducing or scanning in's last dimension into out, choosing
 * row or column mode. out's first in->ndim - 1 dimensions are in's (a
 * reduction's out has just those; a scan's has the scanned one too). */
void cpu_rows_layout(layout *l, const ml_array *out, const ml_array *in);

/* The input and output addresses of group gi (0 <= gi < l->ngroups), and
 * how many outputs it has (*wg, at most l->W). */
void cpu_rows_group(const layout *l, int64_t gi, const char **ip, char **op,
                    int *wg);

/* ---- loading and storing ---- */

/* m values at p (byte stride s) of dtype t as doubles: p itself when they
 * already are contiguous doubles, else converted into buf. */
static inline const double *load_f(double *restrict buf,
                                   const char *restrict p, int64_t s,
                                   int64_t m, ml_dtype t) {
  switch (t) {
    case ML_FLOAT64:
      if (s == sizeof(double)) return (const double *)p;
      for (int64_t j = 0; j < m; j++) buf[j] = *(const double *)(p + j * s);
      break;
    case ML_FLOAT32:
      if (s == sizeof(float)) {
        const float *q = (const float *)p;
        int64_t j = 0;
        for (; j + 8 <= m; j += 8)
          for (int k = 0; k < 8; k++) buf[j + k] = q[j + k];
        for (; j < m; j++) buf[j] = q[j];
      } else {
        for (int64_t j = 0; j < m; j++) buf[j] = *(const float *)(p + j * s);
      }
      break;
    case ML_INT64:
      for (int64_t j = 0; j < m; j++)
        buf[j] = (double)*(const int64_t *)(p + j * s);
      break;
    case ML_INT32:
      for (int64_t j = 0; j < m; j++) buf[j] = *(const int32_t *)(p + j * s);
      break;
    default:
      for (int64_t j = 0; j < m; j++) buf[j] = *(const uint8_t *)(p + j * s);
      break;
  }
  return buf;
}

/* The same as int64 (integer dtypes only). */
static inline const int64_t *load_i(int64_t *restrict buf,
                                    const char *restrict p, int64_t s,
                                    int64_t m, ml_dtype t) {
  switch (t) {
    case ML_INT64:
      if (s == sizeof(int64_t)) return (const int64_t *)p;
      for (int64_t j = 0; j < m; j++) buf[j] = *(const int64_t *)(p + j * s);
      break;
    case ML_INT32:
      for (int64_t j = 0; j < m; j++) buf[j] = *(const int32_t *)(p + j * s);
      break;
    default:
      for (int64_t j = 0; j < m; j++) buf[j] = *(const uint8_t *)(p + j * s);
      break;
  }
  return buf;
}

/* Stores m doubles v at p (byte stride s) as dtype t (a float dtype). */
static inline void store_f(char *restrict p, int64_t s,
                           const double *restrict v, int64_t m, ml_dtype t) {
  if (t == ML_FLOAT32)
    for (int64_t j = 0; j < m; j++) *(float *)(p + j * s) = (float)v[j];
  else
    for (int64_t j = 0; j < m; j++) *(double *)(p + j * s) = v[j];
}

/* Stores m int64 values v at p (byte stride s) as dtype t (an integer
 * dtype), truncating to its width. */
static inline void store_i(char *restrict p, int64_t s,
                           const int64_t *restrict v, int64_t m, ml_dtype t) {
  for (int64_t j = 0; j < m; j++, p += s)
    switch (t) {
      case ML_UINT8: *(uint8_t *)p = (uint8_t)v[j]; break;
      case ML_INT32: *(int32_t *)p = (int32_t)v[j]; break;
      default: *(int64_t *)p = v[j]; break;
    }
}

/* ---- work space ---- */

/* One thread's buffers for a group of up to W outputs. */
typedef struct {
  part *acc, *st;   /* W partial results each */
  double *c, *sums; /* W centers; W sums of the current chunk (column mode) */
  double *lv;       /* LEVELS x W pairwise levels */
  double *f, *fo;   /* max(CHUNK, W) doubles: loaded values, results */
  int64_t *i, *io;  /* the same as int64 */
} scratch;

/* The work space of `threads` threads for groups of up to W outputs into
 * *base: local, the caller's LOCAL_WORK doubles, when large enough (small
 * calls allocate nothing), else allocated. ML_OK, or ML_ENOMEM with the
 * error set (naming op). Release it with cpu_scratch_free. */
int cpu_scratch_new(const char *op, int threads, int64_t W, double *local,
                    char **base);

/* Frees the work space at base unless it is local, the caller's array. */
void cpu_scratch_free(char *base, double *local);

/* The calling OpenMP thread's buffers in the work space at base (made by
 * cpu_scratch_new with the same W). */
scratch cpu_scratch_get(char *base, int64_t W);

#endif
