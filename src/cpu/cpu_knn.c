/* k nearest neighbours on the CPU (contracts in core/backend.h, algorithm
 * in core/knn.c).
 *
 * knn_tile: one GEMM (OpenBLAS, threaded by itself) puts the tile's dot
 * products in the work block; then OpenMP splits the query rows. Each row
 * turns its dot products into keys in place, and merges them into its
 * candidate list, kept as a max-heap by (key, index): blocks of keys that
 * hold nothing better than the worst candidate are skipped by one
 * vectorised test.
 *
 * knn_refine: OpenMP over query rows; each computes its candidates' exact
 * keys (double, coordinates in order; -std=c11 keeps the compiler from
 * fusing multiply-adds) and sorts them by (key, index). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/status.h"
#include "cpu.h"
#include "strided.h"

/* Keys tested at once against the worst candidate. */
#define BLOCK 64

/* Max-heap of c (key, index) pairs in two arrays: after(a, b) when a comes
 * after b in the order of keys then indices. */
#define CPU_KNN_HEAP(T)                                                        \
  static inline int after_##T(T ka, int64_t ia, T kb, int64_t ib) {            \
    return ka > kb || (ka == kb && ia > ib);                                   \
  }                                                                            \
  static void sift_##T(T *key, int64_t *idx, int64_t c, int64_t i) {           \
    T k = key[i];                                                              \
    int64_t x = idx[i];                                                        \
    for (;;) {                                                                 \
      int64_t ch = 2 * i + 1;                                                  \
      if (ch >= c) break;                                                      \
      if (ch + 1 < c && after_##T(key[ch + 1], idx[ch + 1], key[ch], idx[ch])) \
        ch++;                                                                  \
      if (!after_##T(key[ch], idx[ch], k, x)) break;                           \
      key[i] = key[ch];                                                        \
      idx[i] = idx[ch];                                                        \
      i = ch;                                                                  \
    }                                                                          \
    key[i] = k;                                                                \
    idx[i] = x;                                                                \
  }

CPU_KNN_HEAP(float)
CPU_KNN_HEAP(double)

/* Row i of the tile: keys from the dot products in work, merged into the
 * row's candidate list. */
#define CPU_KNN_ROW(name, T)                                                   \
  static void name(const ml_knn_tile *t, int64_t i) {                          \
    int64_t nt = t->refs->shape[0], c = t->keys->shape[1];                     \
    T *w = (T *)ml_array_data(t->work) + i * nt;                               \
    T *key = (T *)ml_array_data(t->keys) + i * c;                              \
    int64_t *idx = (int64_t *)ml_array_data(t->index) + i * c;                 \
    const T *ra = t->raux ? (const T *)ml_array_data(t->raux) : NULL;          \
    T qa = t->qaux ? ((const T *)ml_array_data(t->qaux))[i] : 0;               \
    int64_t self = t->self ? ((const int64_t *)ml_array_data(t->self))[i] : 0; \
    switch (t->metric) {                                                       \
      case ML_KNN_COSINE:                                                      \
        _Pragma("omp simd") for (int64_t j = 0; j < nt; j++)                   \
          w[j] = 1 - w[j] * qa * ra[j];                                        \
        break;                                                                 \
      case ML_KNN_IP:                                                          \
        _Pragma("omp simd") for (int64_t j = 0; j < nt; j++) w[j] = -w[j];     \
        break;                                                                 \
      default:                                                                 \
        _Pragma("omp simd") for (int64_t j = 0; j < nt; j++)                   \
          w[j] = (qa + ra[j]) - 2 * w[j];                                      \
        break;                                                                 \
    }                                                                          \
    for (int64_t j = c / 2; j-- > 0;) sift_##T(key, idx, c, j);                \
    for (int64_t j0 = 0; j0 < nt; j0 += BLOCK) {                               \
      int64_t j1 = j0 + BLOCK < nt ? j0 + BLOCK : nt;                          \
      T top = key[0];                                                          \
      int hit = 0;                                                             \
      if (j1 - j0 == BLOCK) {                                                  \
        _Pragma("omp simd reduction(|:hit)") for (int64_t j = 0; j < BLOCK;    \
                                                  j++) hit |= !(w[j0 + j] > top); \
        if (!hit) continue;                                                    \
      }                                                                        \
      for (int64_t j = j0; j < j1; j++) {                                      \
        T x = w[j];                                                            \
        int64_t id = t->base + j + 1;                                          \
        if (x > key[0] || id == self) continue;                                \
        if (x != x) x = (T)INFINITY;                                           \
        if (!after_##T(key[0], idx[0], x, id)) continue;                       \
        key[0] = x;                                                            \
        idx[0] = id;                                                           \
        sift_##T(key, idx, c, 0);                                              \
      }                                                                        \
    }                                                                          \
  }

CPU_KNN_ROW(tile_row_f32, float)
CPU_KNN_ROW(tile_row_f64, double)

int cpu_knn_tile(const ml_knn_tile *t) {
  int64_t mt = t->queries->shape[0], nt = t->refs->shape[0];
  int64_t d = t->queries->shape[1];
  if (mt == 0 || nt == 0) return ML_OK;
  int f32 = t->queries->dtype == ML_FLOAT32;
  if (d == 0) {
    memset(ml_array_data(t->work), 0, ml_array_nbytes(t->work));
  } else {
    ml_gemm g = {t->queries->dtype, ml_array_device(t->queries), 0, 1,
                 mt, nt, d, 1,
                 ml_array_data(t->queries), d, 0,
                 ml_array_data(t->refs), d, 0,
                 ml_array_data(t->work), nt, 0};
    int rc = cpu_gemm(&g);
    if (rc) return rc;
  }
  int threads = cpu_threads_for(mt * nt, CPU_PARALLEL_MIN);
  if (threads > mt) threads = (int)mt;
#pragma omp parallel for num_threads(threads) if (threads > 1) schedule(dynamic, 16)
  for (int64_t i = 0; i < mt; i++) {
    if (f32)
      tile_row_f32(t, i);
    else
      tile_row_f64(t, i);
  }
  return ML_OK;
}

/* A candidate of the refinement: its exact key, and the key's bits made
 * an unsigned integer in the same order (NaN last), as in cpu_sort.c. */
typedef struct {
  uint64_t order;
  int64_t idx;
  double key;
} exact;

static uint64_t order_key(double v) {
  if (v != v) return UINT64_MAX;
  if (v == 0) v = 0;
  uint64_t u;
  memcpy(&u, &v, sizeof u);
  return u >> 63 ? ~u : u | (uint64_t)1 << 63;
}

static int by_exact(const void *pa, const void *pb) {
  const exact *a = pa, *b = pb;
  if (a->order != b->order) return a->order < b->order ? -1 : 1;
  return (a->idx > b->idx) - (a->idx < b->idx);
}

/* The exact key of q against r (backend.h); qnorm: |q| in double, for the
 * cosine. */
#define CPU_KNN_EXACT(name, T)                                                 \
  static double name(ml_knn_metric metric, const T *q, const T *r, int64_t d,  \
                     double qnorm) {                                           \
    double s = 0;                                                              \
    if (metric == ML_KNN_IP) {                                                 \
      for (int64_t i = 0; i < d; i++) s += (double)q[i] * (double)r[i];        \
      return -s;                                                               \
    }                                                                          \
    if (metric == ML_KNN_COSINE) {                                             \
      double rn = 0;                                                           \
      for (int64_t i = 0; i < d; i++) rn += (double)r[i] * (double)r[i];       \
      rn = sqrt(rn);                                                           \
      if (qnorm == 0 || rn == 0) return 1;                                     \
      for (int64_t i = 0; i < d; i++) {                                        \
        double x = (double)q[i] / qnorm - (double)r[i] / rn;                   \
        s += x * x;                                                            \
      }                                                                        \
      return s / 2;                                                            \
    }                                                                          \
    for (int64_t i = 0; i < d; i++) {                                          \
      double x = (double)q[i] - (double)r[i];                                  \
      s += x * x;                                                              \
    }                                                                          \
    return s;                                                                  \
  }

CPU_KNN_EXACT(exact_f32, float)
CPU_KNN_EXACT(exact_f64, double)

static double out_distance(ml_knn_metric metric, double key) {
  return metric == ML_KNN_EUCLIDEAN ? sqrt(key)
         : metric == ML_KNN_IP      ? -key
                                    : key;
}

/* Row i of the refinement, with buf room for the c candidates. */
static void refine_row(const ml_knn_refine *r, int64_t i, exact *buf) {
  int64_t d = r->queries->shape[1], c = r->keys->shape[1];
  int64_t k = r->dist->shape[1];
  int f32 = r->queries->dtype == ML_FLOAT32;
  size_t es = ml_dtype_size(r->queries->dtype);
  const char *q = (const char *)ml_array_data(r->queries) + i * d * (int64_t)es;
  const char *refs = ml_array_data(r->refs);
  const int64_t *idx = (const int64_t *)ml_array_data(r->index) + i * c;
  double qnorm = 0, w = -INFINITY;
  if (r->metric == ML_KNN_COSINE) {
    for (int64_t j = 0; j < d; j++) {
      double x = f32 ? ((const float *)q)[j] : ((const double *)q)[j];
      qnorm += x * x;
    }
    qnorm = sqrt(qnorm);
  }
  for (int64_t j = 0; j < c; j++) {
    const char *row = refs + (idx[j] - 1) * d * (int64_t)es;
    double key = f32 ? exact_f32(r->metric, (const float *)q, (const float *)row, d, qnorm)
                     : exact_f64(r->metric, (const double *)q, (const double *)row, d, qnorm);
    buf[j] = (exact){order_key(key), idx[j], key};
    double fast = f32 ? ((const float *)ml_array_data(r->keys))[i * c + j]
                      : ((const double *)ml_array_data(r->keys))[i * c + j];
    if (!(fast <= w)) w = fast;
  }
  qsort(buf, (size_t)c, sizeof *buf, by_exact);
  int64_t *near = (int64_t *)ml_array_data(r->nearest) + i * k;
  for (int64_t j = 0; j < k; j++) {
    near[j] = buf[j].idx;
    double v = out_distance(r->metric, buf[j].key);
    if (f32)
      ((float *)ml_array_data(r->dist))[i * k + j] = (float)v;
    else
      ((double *)ml_array_data(r->dist))[i * k + j] = v;
  }
  double bound = ((const double *)ml_array_data(r->bound))[i];
  ((uint8_t *)ml_array_data(r->ok))[i] = r->all || w - bound > buf[k - 1].key;
}

int cpu_knn_refine(const ml_knn_refine *r) {
  int64_t mt = r->queries->shape[0], c = r->keys->shape[1];
  int64_t d = r->queries->shape[1];
  if (mt == 0) return ML_OK;
  int threads = cpu_threads_for(mt * c * (d + 1), CPU_PARALLEL_MIN), failed = 0;
  if (threads > mt) threads = (int)mt;
#pragma omp parallel num_threads(threads) if (threads > 1)
  {
    exact *buf = malloc((size_t)c * sizeof *buf);
    if (!buf) {
#pragma omp atomic write
      failed = 1;
    }
#pragma omp for schedule(dynamic, 16)
    for (int64_t i = 0; i < mt; i++)
      if (buf && !ml_interrupt_pending()) refine_row(r, i, buf);
    free(buf);
  }
  if (failed)
    return ml_fail(ML_ENOMEM, "knn: out of memory for %lld candidates a query",
                   (long long)c);
  if (ml_interrupt_take()) return ml_fail(ML_EINTR, "knn: interrupted");
  return ML_OK;
}
