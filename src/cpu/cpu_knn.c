/* k nearest neighbours on the CPU (contracts in core/backend.h, algorithm
 * in core/knn.c).
 *
 * knn_tile: a GEMM (OpenBLAS, threaded by itself) puts the dot products of
 * a chunk of the tile's query rows in the work block; then OpenMP splits
 * the chunk's rows. Chunks of about CHUNK_BYTES leave the rest of a large
 * work block untouched, so never faulted in, and keep the dot products in
 * the outer caches on their way from the GEMM to the selection. Each row
 * turns its dot products into keys in place and gathers those that beat
 * the worst of its c candidates (a threshold) into a buffer of 3c + BLOCK
 * pairs, a block at a time without branches; when the buffer is nearly
 * full, a quickselect keeps the c best and tightens the threshold. Blocks of keys with nothing under the threshold are
 * skipped by one vectorised test, so that a row of a large tile costs
 * little more than reading it.
 *
 * knn_refine: OpenMP over query rows; each computes its candidates' exact
 * keys (double, coordinates in order; -std=c11 keeps the compiler from
 * fusing multiply-adds), selects the k best and sorts them.
 *
 * knn_filter and knn_sample (the filtered search, which the CPU runs only
 * when asked: its GEMM tiles are faster here) take their dot products from
 * the GEMM too, in blocks, then filter or keep block minima row by row. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/status.h"
#include "cpu.h"
#include "select.h"
#include "strided.h"

#ifdef _OPENMP
#include <omp.h>
#endif

/* Keys tested at once against the threshold. */
#define BLOCK 32
/* Dot products computed at once: about CHUNK_BYTES of them, but at least
 * CHUNK_ROWS rows (the GEMM repacks the references for every chunk). */
#define CHUNK_BYTES ((int64_t)64 << 20)
#define CHUNK_ROWS 64

/* A candidate: the order key (select.h) of its key as a double, and its
 * 1-based index. */
static inline cpu_pair candidate(double key, int64_t idx) {
  return (cpu_pair){ml_order_key_f64(key), idx};
}

/* The fast keys (backend.h) of nt dot products w, in place. */
#define CPU_KNN_KEYS(name, T)                                                  \
  static void name(ml_knn_metric metric, T *w, int64_t nt, T qa,               \
                   const T *ra) {                                              \
    switch (metric) {                                                          \
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
  }

CPU_KNN_KEYS(keys_f32, float)
CPU_KNN_KEYS(keys_f64, double)

/* Row i of the tile: keys from its dot products at row wi of work, merged
 * into the row's candidate list with buf (room for cap >= c + BLOCK
 * pairs). */
#define CPU_KNN_ROW(name, T, KEYS_FN)                                          \
  static void name(const ml_knn_tile *t, int64_t i, int64_t wi, cpu_pair *buf, \
                   int64_t cap) {                                              \
    int64_t nt = t->refs->shape[0], c = t->keys->shape[1], n = 0;              \
    T *w = (T *)ml_array_data(t->work) + wi * nt;                              \
    T *key = (T *)ml_array_data(t->keys) + i * c;                              \
    int64_t *idx = (int64_t *)ml_array_data(t->index) + i * c;                 \
    const T *ra = t->raux ? (const T *)ml_array_data(t->raux) : NULL;          \
    T qa = t->qaux ? ((const T *)ml_array_data(t->qaux))[i] : 0;               \
    int64_t self = t->self ? ((const int64_t *)ml_array_data(t->self))[i] : 0; \
    KEYS_FN(t->metric, w, nt, qa, ra);                                         \
    double tau = -INFINITY;                                                    \
    for (int64_t j = 0; j < c; j++)                                            \
      if (idx[j] != INT64_MAX) {                                               \
        buf[n++] = candidate(key[j], idx[j]);                                  \
        if (key[j] > tau) tau = key[j];                                        \
      }                                                                        \
    if (n < c) tau = INFINITY;                                                 \
    for (int64_t j0 = 0; j0 < nt; j0 += BLOCK) {                               \
      int64_t j1 = j0 + BLOCK < nt ? j0 + BLOCK : nt;                          \
      if (j1 - j0 == BLOCK) {                                                  \
        T th = (T)tau; /* exact: tau is a key or an infinity */                \
        int hit = 0;                                                           \
        _Pragma("omp simd reduction(|:hit)") for (int64_t j = 0; j < BLOCK;    \
                                                  j++) hit |= !(w[j0 + j] > th); \
        if (!hit) continue;                                                    \
      }                                                                        \
      if (n > cap - BLOCK) {                                                   \
        tau = ml_order_key_value_f64(cpu_pairs_keep(buf, n, c));               \
        n = c;                                                                 \
      }                                                                        \
      for (int64_t j = j0; j < j1; j++) {                                      \
        double x = w[j];                                                       \
        int64_t id = t->base + j + 1;                                          \
        buf[n] = candidate(x == x ? x : INFINITY, id);                         \
        n += !(x > tau) & (id != self);                                        \
      }                                                                        \
    }                                                                          \
    if (n > c) {                                                               \
      cpu_pairs_keep(buf, n, c);                                               \
      n = c;                                                                   \
    }                                                                          \
    for (int64_t j = 0; j < c; j++) {                                          \
      key[j] = j < n ? (T)ml_order_key_value_f64(buf[j].key) : (T)INFINITY;    \
      idx[j] = j < n ? buf[j].pos : INT64_MAX;                                 \
    }                                                                          \
  }

CPU_KNN_ROW(tile_row_f32, float, keys_f32)
CPU_KNN_ROW(tile_row_f64, double, keys_f64)

/* The dot products of query rows i0 .. i0 + rows - 1 against reference
 * rows j0, j0 + step, ... (cols of them) into work (rows x cols). */
static int dot_products(const ml_array *queries, const ml_array *refs,
                        int64_t i0, int64_t rows, int64_t j0, int64_t cols,
                        int64_t step, void *work) {
  int64_t d = queries->shape[1];
  size_t es = ml_dtype_size(queries->dtype);
  if (d == 0) {
    memset(work, 0, (size_t)(rows * cols) * es);
    return ML_OK;
  }
  ml_gemm g = {queries->dtype, ml_array_device(queries), 0, 1,
               rows, cols, d, 1,
               (const char *)ml_array_data(queries) + i0 * d * (int64_t)es, d,
               0, (const char *)ml_array_data(refs) + j0 * d * (int64_t)es,
               d * step, 0, work, cols, 0, 0};
  return cpu_gemm(&g);
}

static int knn_tile(const ml_knn_tile *t) {
  int64_t mt = t->queries->shape[0], nt = t->refs->shape[0];
  int64_t c = t->keys->shape[1];
  if (mt == 0 || nt == 0) return ML_OK;
  int f32 = t->queries->dtype == ML_FLOAT32;
  int64_t chunk = CHUNK_BYTES / (nt * (int64_t)ml_dtype_size(t->queries->dtype));
  if (chunk < CHUNK_ROWS) chunk = CHUNK_ROWS;
  if (chunk > mt) chunk = mt;
  int64_t cap = 3 * c + BLOCK;
  int threads = cpu_threads_for(chunk * nt, CPU_PARALLEL_MIN), rc = ML_OK;
  if (threads > chunk) threads = (int)chunk;
  cpu_pair *bufs = malloc((size_t)(threads * cap) * sizeof *bufs);
  if (!bufs)
    return ml_fail(ML_ENOMEM, "knn: out of memory for %lld candidates a query",
                   (long long)c);
  for (int64_t i0 = 0; i0 < mt; i0 += chunk) {
    int64_t rows = mt - i0 < chunk ? mt - i0 : chunk;
    rc = dot_products(t->queries, t->refs, i0, rows, 0, nt, 1,
                      ml_array_data(t->work));
    if (rc) break;
#pragma omp parallel num_threads(threads) if (threads > 1)
    {
#ifdef _OPENMP
      cpu_pair *buf = bufs + omp_get_thread_num() * cap;
#else
      cpu_pair *buf = bufs;
#endif
#pragma omp for schedule(dynamic, 16)
      for (int64_t i = i0; i < i0 + rows; i++) {
        if (f32)
          tile_row_f32(t, i, i - i0, buf, cap);
        else
          tile_row_f64(t, i, i - i0, buf, cap);
      }
    }
  }
  free(bufs);
  return rc;
}

/* knn_filter: blocks of about CHUNK_BYTES of dot products (few and large,
 * so that the GEMM's threads and OpenMP's do not take turns often), all
 * the references at once where CHUNK_ROWS query rows allow; OpenMP splits
 * a block's rows, each keeping its pairs in reference order. */
static void filter_row(const ml_knn_filter *f, int64_t i, int64_t j0, void *w,
                       int64_t cols) {
  int f32 = f->queries->dtype == ML_FLOAT32;
  int64_t c = f->keys->shape[1];
  int64_t *count = (int64_t *)ml_array_data(f->count) + i;
  int64_t *idx = (int64_t *)ml_array_data(f->index) + i * c;
  int64_t self = f->self ? ((const int64_t *)ml_array_data(f->self))[i] : 0;
  const void *ra = f->raux ? ml_array_data(f->raux) : NULL;
  double limit;
  if (f32) {
    float qa = f->qaux ? ((const float *)ml_array_data(f->qaux))[i] : 0;
    keys_f32(f->metric, w, cols, qa, ra ? (const float *)ra + j0 : NULL);
    limit = ((const float *)ml_array_data(f->limit))[i];
  } else {
    double qa = f->qaux ? ((const double *)ml_array_data(f->qaux))[i] : 0;
    keys_f64(f->metric, w, cols, qa, ra ? (const double *)ra + j0 : NULL);
    limit = ((const double *)ml_array_data(f->limit))[i];
  }
  for (int64_t j = 0; j < cols; j++) {
    double x = f32 ? ((const float *)w)[j] : ((const double *)w)[j];
    if (x > limit || j0 + j + 1 == self) continue;
    if (*count < c) {
      idx[*count] = j0 + j + 1;
      if (f32)
        ((float *)ml_array_data(f->keys))[i * c + *count] = (float)x;
      else
        ((double *)ml_array_data(f->keys))[i * c + *count] = x;
    }
    (*count)++;
  }
}

static int knn_filter(const ml_knn_filter *f) {
  int64_t mt = f->queries->shape[0], n = f->refs->shape[0];
  if (mt == 0 || n == 0) return ML_OK;
  size_t es = ml_dtype_size(f->queries->dtype);
  int64_t cols_max = CHUNK_BYTES / (CHUNK_ROWS * (int64_t)es);
  cols_max = cols_max < n ? cols_max : n;
  int64_t rows_max = CHUNK_BYTES / (cols_max * (int64_t)es);
  rows_max = rows_max < 1 ? 1 : rows_max < mt ? rows_max : mt;
  char *work = malloc((size_t)(rows_max * cols_max) * es);
  if (!work) return ml_fail(ML_ENOMEM, "knn: out of memory");
  int rc = ML_OK;
  for (int64_t i0 = 0; !rc && i0 < mt; i0 += rows_max) {
    int64_t rows = mt - i0 < rows_max ? mt - i0 : rows_max;
    for (int64_t j0 = 0; !rc && j0 < n; j0 += cols_max) {
      int64_t cols = n - j0 < cols_max ? n - j0 : cols_max;
      rc = dot_products(f->queries, f->refs, i0, rows, j0, cols, 1, work);
      int threads = rc ? 1 : cpu_threads_for(rows * cols, CPU_PARALLEL_MIN);
#pragma omp parallel for num_threads(threads) if (threads > 1) schedule(static)
      for (int64_t i = i0; i < i0 + rows; i++)
        if (!rc)
          filter_row(f, i, j0, work + (size_t)((i - i0) * cols) * es, cols);
    }
  }
  free(work);
  return rc;
}

/* knn_bounded: the tile's dot products at once into work (the core sizes
 * it), then OpenMP over the rows: a row's keys, the k-th smallest by
 * insertion into a sorted array of k, its limit, the pairs under it. */
static void bounded_row(const ml_knn_bounded *b, int64_t i) {
  int f32 = b->queries->dtype == ML_FLOAT32;
  int64_t n = b->refs->shape[0], c = b->keys->shape[1], k = b->k;
  size_t es = ml_dtype_size(b->queries->dtype);
  char *w = (char *)ml_array_data(b->work) + (size_t)(i * n) * es;
  int64_t self = b->self ? ((const int64_t *)ml_array_data(b->self))[i] : 0;
  const void *ra = b->raux ? ml_array_data(b->raux) : NULL;
  const void *qa = b->qaux ? ml_array_data(b->qaux) : NULL;
  if (f32)
    keys_f32(b->metric, (float *)w, n, qa ? ((const float *)qa)[i] : 0, ra);
  else
    keys_f64(b->metric, (double *)w, n, qa ? ((const double *)qa)[i] : 0, ra);
  double best[ML_KNN_BOUNDED_MAX_K];
  for (int64_t s = 0; s < k; s++) best[s] = INFINITY;
  for (int64_t j = 0; j < n; j++) {
    double x = f32 ? ((const float *)w)[j] : ((const double *)w)[j];
    if (x != x) x = INFINITY;
    if (j + 1 == self || !(x < best[k - 1])) continue;
    int64_t s = k - 1;
    for (; s > 0 && best[s - 1] > x; s--) best[s] = best[s - 1];
    best[s] = x;
  }
  double m = best[k - 1];
  double b2 = 2 * ((const double *)ml_array_data(b->bound))[i];
  double limit = m + b2 + (fabs(m) + b2) * 0x1p-20;
  if (f32) {
    ((float *)ml_array_data(b->limit))[i] = (float)limit;
    limit = (float)limit;
  } else {
    ((double *)ml_array_data(b->limit))[i] = limit;
  }
  int64_t *count = (int64_t *)ml_array_data(b->count) + i;
  int64_t *idx = (int64_t *)ml_array_data(b->index) + i * c;
  *count = 0;
  for (int64_t j = 0; j < n; j++) {
    double x = f32 ? ((const float *)w)[j] : ((const double *)w)[j];
    if (x > limit || j + 1 == self) continue;
    if (*count < c) {
      idx[*count] = j + 1;
      if (f32)
        ((float *)ml_array_data(b->keys))[i * c + *count] = (float)x;
      else
        ((double *)ml_array_data(b->keys))[i * c + *count] = x;
    }
    (*count)++;
  }
}

static int knn_bounded(const ml_knn_bounded *b) {
  int64_t mt = b->queries->shape[0], n = b->refs->shape[0];
  if (mt == 0 || n == 0) return ML_OK;
  int rc = dot_products(b->queries, b->refs, 0, mt, 0, n, 1,
                        ml_array_data(b->work));
  if (rc) return rc;
  int threads = cpu_threads_for(mt * n, CPU_PARALLEL_MIN);
#pragma omp parallel for num_threads(threads) if (threads > 1) schedule(static)
  for (int64_t i = 0; i < mt; i++) bounded_row(b, i);
  return ML_OK;
}

/* knn_sample: the sample's dot products for about CHUNK_BYTES of them at
 * a time, then OpenMP over the chunk's rows for their block minima. */
static int by_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static void sample_row(const ml_knn_sample *sm, int64_t i, void *w,
                       int64_t ns) {
  int f32 = sm->queries->dtype == ML_FLOAT32;
  const void *ra = sm->raux ? ml_array_data(sm->raux) : NULL;
  double low[ML_KNN_SAMPLE_BLOCKS];
  for (int b = 0; b < ML_KNN_SAMPLE_BLOCKS; b++) low[b] = INFINITY;
  for (int64_t s = 0; s < ns; s++) {
    double x;
    if (f32) {
      float key = ((float *)w)[s];
      float qa = sm->qaux ? ((const float *)ml_array_data(sm->qaux))[i] : 0;
      float r = ra ? ((const float *)ra)[s * sm->step] : 0;
      keys_f32(sm->metric, &key, 1, qa, &r);
      x = key;
    } else {
      double key = ((double *)w)[s];
      double qa = sm->qaux ? ((const double *)ml_array_data(sm->qaux))[i] : 0;
      double r = ra ? ((const double *)ra)[s * sm->step] : 0;
      keys_f64(sm->metric, &key, 1, qa, &r);
      x = key;
    }
    int b = (int)(s % ML_KNN_SAMPLE_BLOCKS);
    if (x < low[b]) low[b] = x; /* a NaN never is */
  }
  qsort(low, ML_KNN_SAMPLE_BLOCKS, sizeof *low, by_double);
  if (f32)
    ((float *)ml_array_data(sm->out))[i] = (float)low[sm->kk - 1];
  else
    ((double *)ml_array_data(sm->out))[i] = low[sm->kk - 1];
}

static int knn_sample(const ml_knn_sample *sm) {
  int64_t mt = sm->queries->shape[0], n = sm->refs->shape[0];
  int64_t ns = (n + sm->step - 1) / sm->step;
  if (mt == 0) return ML_OK;
  size_t es = ml_dtype_size(sm->queries->dtype);
  int64_t chunk = CHUNK_BYTES / ((ns ? ns : 1) * (int64_t)es);
  chunk = chunk < 1 ? 1 : chunk > mt ? mt : chunk;
  char *work = malloc((size_t)(chunk * (ns ? ns : 1)) * es);
  if (!work) return ml_fail(ML_ENOMEM, "knn: out of memory");
  int rc = ML_OK;
  for (int64_t i0 = 0; !rc && i0 < mt; i0 += chunk) {
    int64_t rows = mt - i0 < chunk ? mt - i0 : chunk;
    rc = dot_products(sm->queries, sm->refs, i0, rows, 0, ns, sm->step, work);
    int threads = rc ? 1 : cpu_threads_for(rows * ns, CPU_PARALLEL_MIN);
#pragma omp parallel for num_threads(threads) if (threads > 1) schedule(static)
    for (int64_t i = i0; i < i0 + rows; i++)
      if (!rc) sample_row(sm, i, work + (size_t)((i - i0) * ns) * es, ns);
  }
  free(work);
  return rc;
}

/* The exact keys (backend.h) of q against the LANES rows r[l], into key[l];
 * qnorm: |q| in double, for the cosine. The lanes are independent sums,
 * each in the order of the coordinates, written out so that their
 * additions overlap. */
#define LANES 4
#define CPU_KNN_EXACT(name, T)                                                 \
  static void name(ml_knn_metric metric, const T *q, const T *const *r,        \
                   int64_t d, double qnorm, double *key) {                     \
    const T *r0 = r[0], *r1 = r[1], *r2 = r[2], *r3 = r[3];                    \
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;                                     \
    if (metric == ML_KNN_IP) {                                                 \
      for (int64_t i = 0; i < d; i++) {                                        \
        double x = q[i];                                                       \
        s0 += x * r0[i];                                                       \
        s1 += x * r1[i];                                                       \
        s2 += x * r2[i];                                                       \
        s3 += x * r3[i];                                                       \
      }                                                                        \
      key[0] = -s0, key[1] = -s1, key[2] = -s2, key[3] = -s3;                  \
      return;                                                                  \
    }                                                                          \
    if (metric == ML_KNN_COSINE) {                                             \
      double n0 = 0, n1 = 0, n2 = 0, n3 = 0;                                   \
      for (int64_t i = 0; i < d; i++) {                                        \
        n0 += (double)r0[i] * r0[i];                                           \
        n1 += (double)r1[i] * r1[i];                                           \
        n2 += (double)r2[i] * r2[i];                                           \
        n3 += (double)r3[i] * r3[i];                                           \
      }                                                                        \
      n0 = sqrt(n0), n1 = sqrt(n1), n2 = sqrt(n2), n3 = sqrt(n3);              \
      for (int64_t i = 0; i < d; i++) {                                        \
        double x = q[i] / qnorm, e0 = x - r0[i] / n0, e1 = x - r1[i] / n1;     \
        double e2 = x - r2[i] / n2, e3 = x - r3[i] / n3;                       \
        s0 += e0 * e0;                                                         \
        s1 += e1 * e1;                                                         \
        s2 += e2 * e2;                                                         \
        s3 += e3 * e3;                                                         \
      }                                                                        \
      key[0] = qnorm == 0 || n0 == 0 ? 1 : s0 / 2;                             \
      key[1] = qnorm == 0 || n1 == 0 ? 1 : s1 / 2;                             \
      key[2] = qnorm == 0 || n2 == 0 ? 1 : s2 / 2;                             \
      key[3] = qnorm == 0 || n3 == 0 ? 1 : s3 / 2;                             \
      return;                                                                  \
    }                                                                          \
    for (int64_t i = 0; i < d; i++) {                                          \
      double x = q[i], e0 = x - r0[i], e1 = x - r1[i], e2 = x - r2[i];         \
      double e3 = x - r3[i];                                                   \
      s0 += e0 * e0;                                                           \
      s1 += e1 * e1;                                                           \
      s2 += e2 * e2;                                                           \
      s3 += e3 * e3;                                                           \
    }                                                                          \
    key[0] = s0, key[1] = s1, key[2] = s2, key[3] = s3;                        \
  }

CPU_KNN_EXACT(exact_f32, float)
CPU_KNN_EXACT(exact_f64, double)

/* The distance reported for an exact key (+0 rather than -0). */
static double out_distance(ml_knn_metric metric, double key) {
  return metric == ML_KNN_EUCLIDEAN ? sqrt(key)
         : metric == ML_KNN_IP      ? -key + 0.0
                                    : key;
}

/* Row i of the refinement, with buf room for the c candidates and k more
 * pairs. */
static void refine_row(const ml_knn_refine *r, int64_t i, cpu_pair *buf) {
  int64_t d = r->queries->shape[1], width = r->keys->shape[1], c = width;
  int64_t k = r->dist->shape[1];
  if (r->count) {
    c = ((const int64_t *)ml_array_data(r->count))[i];
    if (c < k || c > width) {
      ((uint8_t *)ml_array_data(r->ok))[i] = 0;
      return;
    }
  }
  int f32 = r->queries->dtype == ML_FLOAT32;
  size_t es = ml_dtype_size(r->queries->dtype);
  const char *q = (const char *)ml_array_data(r->queries) + i * d * (int64_t)es;
  const void *refs = ml_array_data(r->refs);
  const int64_t *idx = (const int64_t *)ml_array_data(r->index) + i * width;
  double qnorm = 0, w = -INFINITY;
  if (r->metric == ML_KNN_COSINE) {
    for (int64_t j = 0; j < d; j++) {
      double x = f32 ? ((const float *)q)[j] : ((const double *)q)[j];
      qnorm += x * x;
    }
    qnorm = sqrt(qnorm);
  }
  for (int64_t j0 = 0; j0 < c; j0 += LANES) {
    const float *r32[LANES]; /* the last lanes repeat the last candidate */
    const double *r64[LANES];
    double key[LANES];
    for (int l = 0; l < LANES; l++) {
      int64_t row = idx[j0 + l < c ? j0 + l : c - 1] - 1;
      r32[l] = (const float *)refs + row * d;
      r64[l] = (const double *)refs + row * d;
    }
    if (f32)
      exact_f32(r->metric, (const float *)q, r32, d, qnorm, key);
    else
      exact_f64(r->metric, (const double *)q, r64, d, qnorm, key);
    for (int l = 0; l < LANES && j0 + l < c; l++)
      buf[j0 + l] = candidate(key[l], idx[j0 + l]);
  }
  /* w: the limit of a filtered list, else its largest fast key */
  const char *fast =
      r->count ? (const char *)ml_array_data(r->limit) + i * (int64_t)es
               : (const char *)ml_array_data(r->keys) + i * width * (int64_t)es;
  for (int64_t j = 0; j < (r->count ? 1 : c); j++) {
    double x = f32 ? ((const float *)fast)[j] : ((const double *)fast)[j];
    if (!(x <= w)) w = x;
  }
  cpu_pairs_smallest(buf, buf + c, c, k);
  int64_t *near = (int64_t *)ml_array_data(r->nearest) + i * k;
  for (int64_t j = 0; j < k; j++) {
    near[j] = buf[j].pos;
    double v = out_distance(r->metric, ml_order_key_value_f64(buf[j].key));
    if (f32)
      ((float *)ml_array_data(r->dist))[i * k + j] = (float)v;
    else
      ((double *)ml_array_data(r->dist))[i * k + j] = v;
  }
  double bound = ((const double *)ml_array_data(r->bound))[i];
  ((uint8_t *)ml_array_data(r->ok))[i] =
      r->all || w - bound > ml_order_key_value_f64(buf[k - 1].key);
}

static int knn_refine(const ml_knn_refine *r) {
  int64_t mt = r->queries->shape[0], c = r->keys->shape[1];
  int64_t d = r->queries->shape[1], k = r->dist->shape[1];
  if (mt == 0) return ML_OK;
  int threads = cpu_threads_for(mt * c * (d + 1), CPU_PARALLEL_MIN), failed = 0;
  if (threads > mt) threads = (int)mt;
#pragma omp parallel num_threads(threads) if (threads > 1)
  {
    cpu_pair *buf = malloc((size_t)(c + k) * sizeof *buf);
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

/* knn_bounded ranks the keys the GEMM wrote to the work block. */
static int knn_bounded_work(ml_dtype t, int tf32, int64_t m, int64_t n,
                            int64_t d, int64_t k) {
  (void)t, (void)tf32, (void)m, (void)n, (void)d, (void)k;
  return 1;
}

const ml_knn_backend cpu_knn_backend = {
    .filter_first = 0,
    .bounded_first = 0,
    .tile_rows = 256,
    .tile = knn_tile,
    .refine = knn_refine,
    .filter = knn_filter,
    .sample = knn_sample,
    .bounded = knn_bounded,
    .bounded_work = knn_bounded_work,
};
