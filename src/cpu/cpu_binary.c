/* ±1 matrices packed into words on the CPU (contracts in
 * core/binary_backend.h).
 *
 * A packed row is read as uint64 words (ML_BINARY_WORDS(bits) / 2 of
 * them, a multiple of 4 with no tail), counted 256 bits at a time by
 * AVX-512's vector popcount where the processor has it, else by popcnt,
 * else in C: the hot loops are compiled three times (target attributes)
 * and each call picks one.
 *
 * mm: threads over blocks of ROWS rows of a; each block meets b in blocks
 * of COLS rows (COLS x 8 w bytes, which stay in the cache while the ROWS
 * rows go over them), and out[r][c] follows from the popcount of a_r AND
 * b_c and the rows' own popcounts (binary_backend.h).
 *
 * knn: threads over blocks of queries; a query's candidates gather in a
 * buffer of CAND pairs (distance, index) that is cut back to the k best
 * when full (select.c), and a reference enters it only when it beats the
 * k-th best so far (equal distances lose to the earlier index, which the
 * references' order makes the lower one). References go by in blocks of
 * COLS rows for each block of queries, as in mm. */
#include <immintrin.h>
#include <stdlib.h>

#include "../core/status.h"
#include "cpu.h"
#include "select.h"
#include "strided.h"

#ifdef _OPENMP
#include <omp.h>
#endif

#define ROWS 8
#define COLS 256
#define QROWS 16

/* pack ------------------------------------------------------------------ */

static void pack_rows(const ml_array *out, const ml_array *in) {
  int64_t rows = in->shape[0], len = in->shape[1], w = out->shape[1];
  int f32 = in->dtype == ML_FLOAT32;
  const float *xf = ml_array_data(in);
  const double *xd = ml_array_data(in);
  uint32_t *o = ml_array_data(out);
  int threads = cpu_threads_for(rows * len, CPU_PARALLEL_MIN);
#pragma omp parallel for num_threads(threads) if (threads > 1) schedule(static)
  for (int64_t r = 0; r < rows; r++)
    for (int64_t j = 0; j < w; j++) {
      uint32_t word = 0;
      int64_t lo = j * 32, hi = lo + 32 < len ? lo + 32 : len;
      for (int64_t i = lo; i < hi; i++) {
        int pos = f32 ? xf[r * len + i] >= 0 : xd[r * len + i] >= 0;
        word |= (uint32_t)pos << (i - lo);
      }
      o[r * w + j] = word;
    }
}

static int cpu_binary_pack(const ml_array *out, const ml_array *in) {
  pack_rows(out, in);
  return ML_OK;
}

static int cpu_binary_unpack(const ml_array *out, const ml_array *in) {
  int64_t rows = out->shape[0], bits = out->shape[1], w = in->shape[1];
  const uint32_t *x = ml_array_data(in);
  char *o = ml_array_data(out);
  ml_dtype t = out->dtype;
  size_t es = ml_dtype_size(t);
  int threads = cpu_threads_for(rows * bits, CPU_PARALLEL_MIN);
#pragma omp parallel for num_threads(threads) if (threads > 1) schedule(static)
  for (int64_t r = 0; r < rows; r++)
    for (int64_t i = 0; i < bits; i++) {
      int v = (x[r * w + i / 32] >> (i % 32) & 1) ? 1 : -1;
      ml_scalar_store(o + (size_t)(r * bits + i) * es, t, ml_scalar_int(v));
    }
  return ML_OK;
}

/* Popcounts ------------------------------------------------------------- */

/* popc(a AND b) over q uint64 words (q a multiple of 4). */
static inline int and_popc(const uint64_t *a, const uint64_t *b, int64_t q) {
  int64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  for (int64_t i = 0; i < q; i += 4) {
    s0 += __builtin_popcountll(a[i] & b[i]);
    s1 += __builtin_popcountll(a[i + 1] & b[i + 1]);
    s2 += __builtin_popcountll(a[i + 2] & b[i + 2]);
    s3 += __builtin_popcountll(a[i + 3] & b[i + 3]);
  }
  return (int)(s0 + s1 + s2 + s3);
}

/* The same, and popc(a XOR b), 256 bits at a time with AVX-512's vector
 * popcount (callers compiled for it only). */
#define VPOPCNT "avx512f,avx512vl,avx512vpopcntdq,popcnt"

__attribute__((target(VPOPCNT))) static inline int
vec_popc(const uint64_t *a, const uint64_t *b, int64_t q, int xor) {
  __m256i s = _mm256_setzero_si256();
  for (int64_t i = 0; i < q; i += 4) {
    __m256i x = _mm256_loadu_si256((const __m256i *)(a + i));
    __m256i y = _mm256_loadu_si256((const __m256i *)(b + i));
    __m256i v = xor ? _mm256_xor_si256(x, y) : _mm256_and_si256(x, y);
    s = _mm256_add_epi64(s, _mm256_popcnt_epi64(v));
  }
  return (int)(_mm256_extract_epi64(s, 0) + _mm256_extract_epi64(s, 1) +
               _mm256_extract_epi64(s, 2) + _mm256_extract_epi64(s, 3));
}

static inline int row_popc(const uint64_t *a, int64_t q) {
  int64_t s = 0;
  for (int64_t i = 0; i < q; i++) s += __builtin_popcountll(a[i]);
  return (int)s;
}

/* A block of out: rows r0..r1 of a against rows c0..c1 of b, one batch,
 * their popcounts in pa and pb. */
typedef struct {
  const uint64_t *a, *b;
  const int *pa, *pb;
  int32_t *out;
  int64_t q, n, bits;
  int hamming;
} mm_block;

static inline __attribute__((always_inline)) void
mm_tile(const mm_block *m, int64_t r0, int64_t r1, int64_t c0, int64_t c1,
        int vec) {
  for (int64_t r = r0; r < r1; r++) {
    const uint64_t *ar = m->a + r * m->q;
    int32_t *o = m->out + r * m->n;
    for (int64_t c = c0; c < c1; c++) {
      const uint64_t *bc = m->b + c * m->q;
      int p = vec ? vec_popc(ar, bc, m->q, 0) : and_popc(ar, bc, m->q);
      int h = m->pa[r] + m->pb[c] - 2 * p;
      o[c] = m->hamming ? h : (int32_t)(m->bits - 2 * h);
    }
  }
}

__attribute__((target(VPOPCNT))) static void
mm_tile_vpopcnt(const mm_block *m, int64_t r0, int64_t r1, int64_t c0,
                int64_t c1) {
  mm_tile(m, r0, r1, c0, c1, 1);
}

__attribute__((target("popcnt"))) static void
mm_tile_popcnt(const mm_block *m, int64_t r0, int64_t r1, int64_t c0,
               int64_t c1) {
  mm_tile(m, r0, r1, c0, c1, 0);
}

static void mm_tile_plain(const mm_block *m, int64_t r0, int64_t r1,
                          int64_t c0, int64_t c1) {
  mm_tile(m, r0, r1, c0, c1, 0);
}

__attribute__((target("popcnt"))) static void
popc_rows_popcnt(const uint64_t *a, int64_t rows, int64_t q, int *out) {
  for (int64_t r = 0; r < rows; r++) out[r] = row_popc(a + r * q, q);
}

static void popc_rows_plain(const uint64_t *a, int64_t rows, int64_t q,
                            int *out) {
  for (int64_t r = 0; r < rows; r++) out[r] = row_popc(a + r * q, q);
}

typedef void (*tile_fn)(const mm_block *, int64_t, int64_t, int64_t,
                        int64_t);
typedef void (*popc_fn)(const uint64_t *, int64_t, int64_t, int *);

/* 2 with AVX-512's vector popcount, 1 with popcnt, else 0. */
static int popcount_level(void) {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512vpopcntdq") &&
      __builtin_cpu_supports("avx512vl"))
    return 2;
  return __builtin_cpu_supports("popcnt");
}

static int has_popcnt(void) { return popcount_level() > 0; }

static tile_fn mm_tile_fn(void) {
  int level = popcount_level();
  return level == 2 ? mm_tile_vpopcnt
         : level   ? mm_tile_popcnt
                   : mm_tile_plain;
}

/* The popcounts of rows rows of q uint64 words, threaded; NULL when out
 * of memory. */
static int *popcounts(const uint64_t *a, int64_t rows, int64_t q) {
  int *p = malloc((size_t)(rows > 0 ? rows : 1) * sizeof(int));
  if (!p) return NULL;
  popc_fn fn = has_popcnt() ? popc_rows_popcnt : popc_rows_plain;
  int threads = cpu_threads_for(rows * q, CPU_PARALLEL_MIN);
  int64_t per = (rows + threads - 1) / (threads > 0 ? threads : 1);
#pragma omp parallel for num_threads(threads) if (threads > 1)
  for (int t = 0; t < threads; t++) {
    int64_t r0 = t * per, r1 = r0 + per < rows ? r0 + per : rows;
    if (r0 < r1) fn(a + r0 * q, r1 - r0, q, p + r0);
  }
  return p;
}

/* mm -------------------------------------------------------------------- */

static int cpu_binary_mm(const ml_binary_mm_desc *p) {
  int64_t batch = p->a->shape[0], m = p->a->shape[1], n = p->b->shape[1];
  int64_t q = p->a->shape[2] / 2;
  const uint64_t *a = ml_array_data(p->a), *b = ml_array_data(p->b);
  int *pa = popcounts(a, batch * m, q), *pb = popcounts(b, batch * n, q);
  if (!pa || !pb) {
    free(pa);
    free(pb);
    return ml_fail(ML_ENOMEM, "binary.mm: out of memory");
  }
  tile_fn fn = mm_tile_fn();
  int64_t rb = (m + ROWS - 1) / ROWS;
  int threads = cpu_threads_for(batch * m * n * q, CPU_PARALLEL_MIN);
#pragma omp parallel for num_threads(threads) if (threads > 1) \
    schedule(dynamic, 1)
  for (int64_t t = 0; t < batch * rb; t++) {
    int64_t i = t / rb, r0 = t % rb * ROWS;
    int64_t r1 = r0 + ROWS < m ? r0 + ROWS : m;
    mm_block blk = {a + i * m * q, b + i * n * q, pa + i * m, pb + i * n,
                    (int32_t *)ml_array_data(p->out) + i * m * n, q, n,
                    p->bits, p->hamming};
    for (int64_t c0 = 0; c0 < n; c0 += COLS)
      fn(&blk, r0, r1, c0, c0 + COLS < n ? c0 + COLS : n);
  }
  free(pa);
  free(pb);
  return ML_OK;
}

/* knn ------------------------------------------------------------------- */

/* A query's candidates: fill pairs of cap in buf, and the k-th best
 * distance once k are kept (bound: a reference enters only below it). */
typedef struct {
  cpu_pair *buf;
  int64_t fill, cap, k;
  uint64_t bound;
} cand_list;

static inline void cand_add(cand_list *l, uint64_t d, int64_t j) {
  if (d >= l->bound) return;
  l->buf[l->fill].key = d;
  l->buf[l->fill].pos = j;
  if (++l->fill == l->cap) {
    /* the k best kept; an equal distance later loses to them */
    l->bound = cpu_pairs_keep(l->buf, l->fill, l->k);
    l->fill = l->k;
  }
}

typedef struct {
  const uint64_t *q, *r;
  int64_t words, n;
} knn_rows;

static inline __attribute__((always_inline)) void
knn_tile(const knn_rows *s, cand_list *lists, int64_t i0, int64_t i1,
         int64_t c0, int64_t c1, int vec) {
  for (int64_t i = i0; i < i1; i++) {
    const uint64_t *qi = s->q + i * s->words;
    cand_list *l = lists + (i - i0);
    for (int64_t c = c0; c < c1; c++) {
      const uint64_t *rc = s->r + c * s->words;
      int64_t h = 0;
      if (vec)
        h = vec_popc(qi, rc, s->words, 1);
      else
        for (int64_t u = 0; u < s->words; u++)
          h += __builtin_popcountll(qi[u] ^ rc[u]);
      cand_add(l, (uint64_t)h, c);
    }
  }
}

__attribute__((target(VPOPCNT))) static void
knn_tile_vpopcnt(const knn_rows *s, cand_list *lists, int64_t i0, int64_t i1,
                 int64_t c0, int64_t c1) {
  knn_tile(s, lists, i0, i1, c0, c1, 1);
}

__attribute__((target("popcnt"))) static void
knn_tile_popcnt(const knn_rows *s, cand_list *lists, int64_t i0, int64_t i1,
                int64_t c0, int64_t c1) {
  knn_tile(s, lists, i0, i1, c0, c1, 0);
}

static void knn_tile_plain(const knn_rows *s, cand_list *lists, int64_t i0,
                           int64_t i1, int64_t c0, int64_t c1) {
  knn_tile(s, lists, i0, i1, c0, c1, 0);
}

static int cpu_binary_knn(const ml_binary_knn_desc *p) {
  int64_t m = p->queries->shape[0], n = p->refs->shape[0], k = p->k;
  knn_rows s = {ml_array_data(p->queries), ml_array_data(p->refs),
                p->queries->shape[1] / 2, n};
  int64_t cap = 2 * k + 256;
  int threads = cpu_threads_for(m * n * s.words, CPU_PARALLEL_MIN);
  int64_t blocks = (m + QROWS - 1) / QROWS;
  if (threads > blocks) threads = (int)blocks;
  size_t per = (size_t)QROWS * (size_t)(cap + k);
  cpu_pair *pairs = malloc((size_t)threads * per * sizeof(cpu_pair));
  if (!pairs) return ml_fail(ML_ENOMEM, "knn: out of memory");
  void (*fn)(const knn_rows *, cand_list *, int64_t, int64_t, int64_t,
             int64_t) = popcount_level() == 2 ? knn_tile_vpopcnt
                        : popcount_level()      ? knn_tile_popcnt
                                                : knn_tile_plain;
  int32_t *dist = ml_array_data(p->dist);
  int64_t *index = ml_array_data(p->index);
#pragma omp parallel num_threads(threads) if (threads > 1)
  {
    int t = 0;
#ifdef _OPENMP
    t = omp_get_thread_num();
#endif
    cpu_pair *mine = pairs + (size_t)t * per, *tmp = mine + QROWS * cap;
    cand_list lists[QROWS];
#pragma omp for schedule(dynamic, 1)
    for (int64_t b = 0; b < blocks; b++) {
      int64_t i0 = b * QROWS, i1 = i0 + QROWS < m ? i0 + QROWS : m;
      for (int64_t i = 0; i < i1 - i0; i++)
        lists[i] = (cand_list){mine + i * cap, 0, cap, k, UINT64_MAX};
      for (int64_t c0 = 0; c0 < n; c0 += COLS)
        fn(&s, lists, i0, i1, c0, c0 + COLS < n ? c0 + COLS : n);
      for (int64_t i = i0; i < i1; i++) {
        cand_list *l = lists + (i - i0);
        cpu_pairs_smallest(l->buf, tmp, l->fill, k);
        for (int64_t j = 0; j < k; j++) {
          dist[i * k + j] = (int32_t)l->buf[j].key;
          index[i * k + j] = l->buf[j].pos + 1;
        }
      }
    }
  }
  free(pairs);
  return ML_OK;
}

/* peak ------------------------------------------------------------------ */

/* Every thread computes a PEAK_ROWS x PEAK_ROWS block of 1024-bit rows
 * (16 KiB, in L1) PEAK_REPS times. */
#define PEAK_ROWS 32
#define PEAK_REPS 256

static int cpu_binary_peak(ml_device device, double *ops) {
  (void)device;
  enum { Q = 16 };
  static uint64_t a[PEAK_ROWS * Q], b[PEAK_ROWS * Q];
  static int pa[PEAK_ROWS], pb[PEAK_ROWS];
  for (int i = 0; i < PEAK_ROWS * Q; i++) {
    a[i] = UINT64_C(0x9E3779B97F4A7C15) * (uint64_t)(i + 1);
    b[i] = UINT64_C(0xC2B2AE3D27D4EB4F) * (uint64_t)(i + 7);
  }
  tile_fn fn = mm_tile_fn();
  int threads = cpu_threads_for(INT64_MAX / 2, 1);
  double t0 = 0, t1 = 0;
#ifdef _OPENMP
  t0 = omp_get_wtime();
#endif
#pragma omp parallel num_threads(threads)
  {
    int32_t out[PEAK_ROWS * PEAK_ROWS];
    mm_block blk = {a, b, pa, pb, out, Q, PEAK_ROWS, Q * 64, 0};
    for (int r = 0; r < PEAK_REPS; r++) fn(&blk, 0, PEAK_ROWS, 0, PEAK_ROWS);
  }
#ifdef _OPENMP
  t1 = omp_get_wtime();
#endif
  double work = 2.0 * PEAK_ROWS * PEAK_ROWS * Q * 64 * PEAK_REPS * threads;
  *ops = t1 > t0 ? work / (t1 - t0) : 0;
  return ML_OK;
}

const ml_binary_backend cpu_binary_backend = {
    cpu_binary_pack, cpu_binary_unpack, cpu_binary_mm, cpu_binary_knn,
    cpu_binary_peak};
