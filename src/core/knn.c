/* The k-nearest-neighbour search: validation, tiling, and the argument
 * that makes it exact; the backend's knn_tile, knn_refine, knn_filter and
 * knn_sample compute. The first pass may filter (below, before
 * filter_step: by default on a GPU for small d and k); otherwise, and in
 * every retry, the general search:
 *
 * Each query keeps a list of c candidates, c = 2k + 16 at first (at most
 * the references it may have). Tiles of queries and references go through
 * knn_tile, which ranks the references by a fast key computed in the input
 * dtype from the dot products q.r (a GEMM): the squared distance expanded
 * as |q|^2 + |r|^2 - 2 q.r, or 1 - cos, or -q.r. knn_refine recomputes the
 * candidates' keys exactly, keeps the k best, and checks that no reference
 * outside the list can belong to them:
 *
 * Error bound: knn_bound.c's comment. The fast keys err by at most a
 * per-query bound, which knn_refine's test takes into account.
 *
 * Completeness. knn_tile keeps the c smallest fast keys, so a reference
 * left out of the list has a fast key at least w, the largest in the list,
 * and an exact key at least w - bound. The k-th exact key in the list, x,
 * is at least the true k-th. If w - bound > x, every reference left out is
 * strictly farther than x: neither it nor a tie with a lower index can be
 * among the k nearest, and the list's k best are the answer. Queries that
 * fail the test (cancellation: points far from the origin and close
 * together; many equal distances; NaN) go round again with 8 times as many
 * candidates; once the list holds every reference the answer is exact by
 * construction. */
#include "knn.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "copy.h"
#include "elementwise.h"
#include "index.h"
#include "knn_bound.h"
#include "reduce.h"
#include "status.h"
#include "view.h"

/* The bounded pass takes at least this many queries a tile (or all of
 * them), and tiles of the GEMM pass at least this many references. */
#define MIN_ROWS 256
#define MIN_COLS 256
/* Tiles that split the references take a multiple of this many, so that
 * the work block's rows start on 16-byte boundaries: cuBLAS runs its
 * Hopper GEMM kernels only on such leading dimensions. */
#define ALIGN_COLS 64
/* Candidates per query: 2k + SLACK at first (SLACK_TF32 with TF32), times
 * GROWTH at each retry. */
#define SLACK 16
#define SLACK_TF32 24
#define GROWTH 8

int ml_knn_method_parse(const char *name, ml_knn_method *out) {
  static const char *const names[] = {"auto", "filter", "tile", "bounded"};
  for (int i = 0; i < 4; i++)
    if (strcmp(name, names[i]) == 0) {
      *out = (ml_knn_method)i;
      return 1;
    }
  return 0;
}

static const char *const knn_entries[] = {"tile", "refine", "filter", "sample",
                                          "bounded", "bounded_work"};
_Static_assert(offsetof(ml_knn_backend, tile) +
                       sizeof knn_entries / sizeof *knn_entries * sizeof(void (*)(void)) ==
                   sizeof(ml_knn_backend),
               "knn_entries names every function of ml_knn_backend");

static ml_backend_area knn_area = {"knn", knn_entries,
                                   sizeof knn_entries / sizeof *knn_entries,
                                   offsetof(ml_knn_backend, tile), {NULL}};

int ml_knn_backend_register(ml_device_kind kind, const ml_knn_backend *t) {
  return ml_backend_area_register(&knn_area, kind, t);
}

int ml_knn_backend_get(ml_device device, const ml_knn_backend **out) {
  return ml_backend_area_get(&knn_area, device, (const void **)out);
}

int ml_knn_metric_parse(const char *name, ml_knn_metric *out) {
  static const char *const names[] = {"euclidean", "sqeuclidean", "cosine",
                                      "ip"};
  for (int i = 0; i < 4; i++)
    if (strcmp(name, names[i]) == 0) {
      *out = (ml_knn_metric)i;
      return 1;
    }
  return 0;
}

/* What every pass shares. */
typedef struct {
  const ml_backend *be;
  const ml_knn_backend *kb;
  ml_knn_metric metric;
  const ml_array *refs, *raux; /* n x d; n (NULL for IP) */
  int64_t k, avail;            /* avail: references one query may have */
  int64_t budget;
} search;

/* The queries of one pass (all, or those that failed the test) and its
 * results, m rows each; qaux and self may be NULL. */
typedef struct {
  const ml_array *q, *qaux, *self, *bound;
  const ml_array *dist, *nearest, *ok;
  int tf32; /* rank with TF32 (split TF32 when filtered); bound is then its */
} batch;

/* Tile sizes: mt queries against nt references, so that the mt x nt block
 * of keys and the mt candidate lists fit the budget. The whole reference
 * set when that leaves the backend's tile_rows queries a tile (or all of
 * them), else tile_rows queries (fewer when the lists alone fill the
 * budget) against as many references as fit (a multiple of ALIGN_COLS
 * where that many fit). */
static void plan_tiles(const search *s, int64_t m, int64_t c, size_t esize,
                       int64_t *mt, int64_t *nt) {
  int64_t n = s->refs->shape[0], e = (int64_t)esize;
  int64_t list = c * (e + 8);
  int64_t want = m < s->kb->tile_rows ? m : s->kb->tile_rows;
  int64_t full = s->budget / (n * e + list);
  if (full >= want) {
    *mt = full < m ? full : m;
    *nt = n;
    return;
  }
  int64_t rows = s->budget / (list + e * (n < MIN_COLS ? n : MIN_COLS));
  *mt = rows >= want ? want : rows > 1 ? rows : 1;
  int64_t cols = (s->budget / *mt - list) / e;
  if (cols >= ALIGN_COLS) cols -= cols % ALIGN_COLS;
  *nt = cols < 1 ? 1 : cols > n ? n : cols;
}

/* Rows start .. start + len - 1 of a; nothing when a is NULL. */
static int rows(ml_array *out, const ml_array *a, int64_t start, int64_t len) {
  return a ? ml_view_narrow("knn", out, a, 0, start, len) : ML_OK;
}

static const ml_array *opt(const ml_array *a) { return a->storage ? a : NULL; }

/* Views of a tile's rows; released together. */
enum { V_Q, V_QAUX, V_SELF, V_BOUND, V_KEYS, V_INDEX, V_DIST, V_NEAR, V_OK,
       V_R, V_RAUX, V_WFLAT, V_WORK, V_COUNT };

static void release_views(ml_array *v, int from, int to) {
  for (int i = from; i < to; i++) ml_array_release(&v[i]);
}

/* Queries i0 .. i0 + mi - 1 of b against every reference, in tiles of nt,
 * then their exact k nearest; keys, index and work are the pass's scratch. */
static int query_tile(const search *s, const batch *b, int64_t i0, int64_t mi,
                      int64_t nt, int all, const ml_array *keys,
                      const ml_array *index, const ml_array *work) {
  ml_array v[V_COUNT];
  memset(v, 0, sizeof v);
  int rc = rows(&v[V_Q], b->q, i0, mi);
  if (!rc) rc = rows(&v[V_QAUX], b->qaux, i0, mi);
  if (!rc) rc = rows(&v[V_SELF], b->self, i0, mi);
  if (!rc) rc = rows(&v[V_BOUND], b->bound, i0, mi);
  if (!rc) rc = rows(&v[V_KEYS], keys, 0, mi);
  if (!rc) rc = rows(&v[V_INDEX], index, 0, mi);
  if (!rc) rc = rows(&v[V_DIST], b->dist, i0, mi);
  if (!rc) rc = rows(&v[V_NEAR], b->nearest, i0, mi);
  if (!rc) rc = rows(&v[V_OK], b->ok, i0, mi);
  if (!rc) rc = ml_fill("knn", &v[V_KEYS], ml_scalar_float(INFINITY));
  if (!rc) rc = ml_fill("knn", &v[V_INDEX], ml_scalar_int(INT64_MAX));
  int64_t n = s->refs->shape[0];
  for (int64_t j0 = 0; !rc && j0 < n; j0 += nt) {
    int64_t nj = n - j0 < nt ? n - j0 : nt;
    int64_t wshape[2] = {mi, nj};
    if (ml_interrupt_pending()) {
      ml_interrupt_take();
      rc = ml_fail(ML_EINTR, "knn: interrupted");
      break;
    }
    rc = rows(&v[V_R], s->refs, j0, nj);
    if (!rc) rc = rows(&v[V_RAUX], s->raux, j0, nj);
    if (!rc) rc = rows(&v[V_WFLAT], work, 0, mi * nj);
    if (!rc) rc = ml_view_reshape("knn", &v[V_WORK], &v[V_WFLAT], 2, wshape);
    ml_knn_tile t = {s->metric, &v[V_Q], &v[V_R], j0, opt(&v[V_QAUX]),
                     opt(&v[V_RAUX]), opt(&v[V_SELF]), &v[V_KEYS],
                     &v[V_INDEX], &v[V_WORK], b->tf32};
    if (!rc) rc = s->kb->tile(&t);
    release_views(v, V_R, V_COUNT);
  }
  ml_knn_refine r = {s->metric, &v[V_Q], s->refs, &v[V_KEYS], &v[V_INDEX],
                     &v[V_BOUND], all, &v[V_DIST], &v[V_NEAR], &v[V_OK],
                     NULL, NULL};
  if (!rc) rc = s->kb->refine(&r);
  release_views(v, 0, V_COUNT);
  return rc;
}

/* One pass over the batch with c candidates per query. */
static int search_pass(const search *s, const batch *b, int64_t c) {
  int64_t m = b->q->shape[0], mt, nt;
  ml_dtype t = b->q->dtype;
  plan_tiles(s, m, c, ml_dtype_size(t), &mt, &nt);
  int64_t lshape[2] = {mt, c}, wsize = mt * nt;
  ml_device dev = ml_array_device(b->q);
  ml_array keys = {0}, index = {0}, work = {0};
  int rc = ml_array_empty(&keys, t, 2, lshape, dev);
  if (!rc) rc = ml_array_empty(&index, ML_INT64, 2, lshape, dev);
  if (!rc) rc = ml_array_empty(&work, t, 1, &wsize, dev);
  for (int64_t i0 = 0; !rc && i0 < m; i0 += mt)
    rc = query_tile(s, b, i0, m - i0 < mt ? m - i0 : mt, nt, c >= s->avail,
                    &keys, &index, &work);
  ml_array_release(&keys);
  ml_array_release(&index);
  ml_array_release(&work);
  return rc;
}

/* The filtered first pass, for small d and k on a backend with
 * knn_filter and knn_sample. knn_sample takes every step-th reference and
 * gives each query M, the k'-th smallest of 128 block minima of its fast
 * keys to them (k' = k, or k + 1 with exclude_self, since the sample may
 * hold the query itself). M is at least the k'-th smallest fast key of
 * the sample, so the true k-th smallest key is at most M + bound, and a
 * reference whose fast key exceeds
 *   limit >= M + 2 bound
 * has an exact key above it and cannot be among the k nearest. knn_filter
 * keeps the pairs under the limit in lists of FILTER_ROOM, without any
 * selection, and knn_refine settles them with w = limit: the completeness
 * test above, which then holds unless a list overflowed (those queries go
 * round again). The sample's step is chosen for about FILTER_TARGET pairs a
 * query: a block of s sample keys has its minimum under the p-quantile of
 * the keys with probability 1 - (1 - p)^s, so M sits near the quantile
 * -ln(1 - k' / 128) 128 / (sample size), which keeps that many times step
 * pairs. */
#define FILTER_MAX_D 64
#define FILTER_TARGET 96
#define FILTER_ROOM 1024

/* The sample's step into *step, or 0 for the general search: method's
 * choice, or by default the backend's where the filtered pass pays (d at
 * most FILTER_MAX_D, a sample of at most half of the references). */
static int filter_step(const search *s, int64_t d, int self,
                       ml_knn_method method, int64_t *step) {
  int64_t kk = s->k + self, most = ML_KNN_SAMPLE_BLOCKS / 2;
  int can = kk <= most;
  double per = -ML_KNN_SAMPLE_BLOCKS *
               log1p(-(double)kk / ML_KNN_SAMPLE_BLOCKS);
  int64_t each = (int64_t)(FILTER_TARGET / per);
  *step = 0;
  if (method == ML_KNN_FILTER && !can)
    return ml_fail(ML_EINVAL,
                   "knn: the filtered search takes k up to %lld (%lld with "
                   "exclude_self), not %lld",
                   (long long)most, (long long)most - 1, (long long)s->k);
  if (method == ML_KNN_FILTER)
    *step = each > 1 ? each : 1;
  else if (method == ML_KNN_AUTO && can && s->kb->filter_first &&
           d <= FILTER_MAX_D && each >= 2)
    *step = each;
  return ML_OK;
}

/* limit = M + 2 bound, raised by (|M| + 2 bound) 2^-20 so that rounding
 * to the dtype t cannot lower it below M + 2 bound. */
static int filter_limit(ml_array *limit, const ml_array *mth,
                        const ml_array *bound, ml_dtype t) {
  ml_array a64 = {0}, b2 = {0}, sum = {0}, mag = {0}, up = {0}, raised = {0},
           margin = {0};
  int rc = ml_astype(&a64, mth, ML_FLOAT64);
  if (!rc) rc = ml_binary_scalar(ML_MUL, &b2, bound, ml_scalar_int(2), 0);
  if (!rc) rc = ml_binary(ML_ADD, &sum, &a64, &b2);
  if (!rc) rc = ml_unary(ML_ABS, &mag, &a64);
  if (!rc) rc = ml_binary(ML_ADD, &up, &mag, &b2);
  if (!rc)
    rc = ml_binary_scalar(ML_MUL, &margin, &up, ml_scalar_float(0x1p-20), 0);
  if (!rc) rc = ml_binary(ML_ADD, &raised, &sum, &margin);
  if (!rc) rc = ml_astype(limit, &raised, t);
  ml_array *tmp[] = {&a64, &b2, &sum, &mag, &up, &raised, &margin};
  for (size_t i = 0; i < sizeof tmp / sizeof *tmp; i++) ml_array_release(tmp[i]);
  return rc;
}

/* The lists of a filtered pass, for up to mt queries. */
typedef struct {
  ml_array mth, keys, index, count;
} filter_scratch;

/* The views of a tile of count lists (the filtered and the bounded
 * passes): the batch's rows i0 .. i0 + mi - 1 and the lists' first mi;
 * released together. */
enum { L_Q, L_QAUX, L_SELF, L_BOUND, L_DIST, L_NEAR, L_OK, L_MTH, L_KEYS,
       L_INDEX, L_COUNT, L_LIMIT, L_WFLAT, L_WORK, L_VIEWS };

static int list_views(ml_array *v, const batch *b, const filter_scratch *f,
                      int64_t i0, int64_t mi) {
  memset(v, 0, L_VIEWS * sizeof *v);
  int rc = rows(&v[L_Q], b->q, i0, mi);
  if (!rc) rc = rows(&v[L_QAUX], b->qaux, i0, mi);
  if (!rc) rc = rows(&v[L_SELF], b->self, i0, mi);
  if (!rc) rc = rows(&v[L_BOUND], b->bound, i0, mi);
  if (!rc) rc = rows(&v[L_DIST], b->dist, i0, mi);
  if (!rc) rc = rows(&v[L_NEAR], b->nearest, i0, mi);
  if (!rc) rc = rows(&v[L_OK], b->ok, i0, mi);
  if (!rc) rc = rows(&v[L_MTH], &f->mth, 0, mi);
  if (!rc) rc = rows(&v[L_KEYS], &f->keys, 0, mi);
  if (!rc) rc = rows(&v[L_INDEX], &f->index, 0, mi);
  if (!rc) rc = rows(&v[L_COUNT], &f->count, 0, mi);
  return rc;
}

/* knn_refine over a tile's count lists, whose limits are v[limit]. */
static int refine_lists(const search *s, ml_array *v, int limit) {
  ml_knn_refine r = {s->metric, &v[L_Q], s->refs, &v[L_KEYS], &v[L_INDEX],
                     &v[L_BOUND], 0, &v[L_DIST], &v[L_NEAR], &v[L_OK],
                     &v[L_COUNT], &v[limit]};
  return s->kb->refine(&r);
}

/* Queries i0 .. i0 + mi - 1 of b through the filtered pass. */
static int filter_tile(const search *s, const batch *b, filter_scratch *f,
                       int64_t step, int64_t i0, int64_t mi) {
  ml_array v[L_VIEWS];
  int rc = list_views(v, b, f, i0, mi);
  if (!rc) rc = ml_fill("knn", &v[L_COUNT], ml_scalar_int(0));
  ml_knn_sample sm = {s->metric, &v[L_Q], s->refs, opt(&v[L_QAUX]), s->raux,
                      step, s->k + (b->self != NULL), &v[L_MTH], b->tf32};
  if (!rc) rc = s->kb->sample(&sm);
  if (!rc)
    rc = filter_limit(&v[L_LIMIT], &v[L_MTH], &v[L_BOUND], b->q->dtype);
  ml_knn_filter fl = {s->metric, &v[L_Q], s->refs, opt(&v[L_QAUX]), s->raux,
                      opt(&v[L_SELF]), &v[L_LIMIT], &v[L_KEYS], &v[L_INDEX],
                      &v[L_COUNT], b->tf32};
  if (!rc) rc = s->kb->filter(&fl);
  if (!rc) rc = refine_lists(s, v, L_LIMIT);
  release_views(v, 0, L_VIEWS);
  return rc;
}

/* The filtered pass over the batch, with the sample every step-th
 * reference. */
static int filter_pass(const search *s, const batch *b, int64_t step) {
  int64_t m = b->q->shape[0];
  ml_dtype t = b->q->dtype;
  int64_t e = (int64_t)ml_dtype_size(t);
  /* a query's lists, count, M, limit, filter_limit's float64
   * temporaries and a backend's sample minima */
  int64_t per = FILTER_ROOM * (e + 8) + 8 + 2 * e + 7 * 8 +
                ML_KNN_SAMPLE_BLOCKS * e;
  int64_t mt = s->budget / per;
  mt = mt < 1 ? 1 : mt > m ? m : mt;
  int64_t lshape[2] = {mt, FILTER_ROOM};
  ml_device dev = ml_array_device(b->q);
  filter_scratch f = {0};
  int rc = ml_array_empty(&f.mth, t, 1, &mt, dev);
  if (!rc) rc = ml_array_empty(&f.keys, t, 2, lshape, dev);
  if (!rc) rc = ml_array_empty(&f.index, ML_INT64, 2, lshape, dev);
  if (!rc) rc = ml_array_empty(&f.count, ML_INT64, 1, &mt, dev);
  for (int64_t i0 = 0; !rc && i0 < m; i0 += mt) {
    if (ml_interrupt_take()) {
      rc = ml_fail(ML_EINTR, "knn: interrupted");
      break;
    }
    rc = filter_tile(s, b, &f, step, i0, m - i0 < mt ? m - i0 : mt);
  }
  ml_array *tmp[] = {&f.mth, &f.keys, &f.index, &f.count};
  for (size_t i = 0; i < sizeof tmp / sizeof *tmp; i++) ml_array_release(tmp[i]);
  return rc;
}

/* The bounded first pass, for small k when every reference fits one tile
 * with MIN_ROWS queries (or forced by method): knn_bounded gives each
 * query M, the k-th smallest fast key over all the references, and keeps
 * the pairs whose fast key is at most limit >= M + 2 bound; knn_refine
 * settles them with w = limit. The k pairs at or under M have exact keys
 * at most M + bound, so a reference left out, whose fast key exceeds the
 * limit, has an exact key above limit - bound >= M + bound: it cannot be
 * among the k nearest. The lists are complete unless they overflowed
 * BOUNDED_ROOM (those queries go round again). No selection of candidate
 * lists: a GPU's kNN for k = 1 (k-means' assignment) costs its GEMM and
 * one pass over the keys, or one kernel that forms the keys as it goes;
 * then the tiles keep no work block (bounded_work) and hold as many
 * queries as their lists allow (all 2^20 of k-means' at the default
 * budget, where the block made five tiles). */
#define BOUNDED_ROOM 32
/* The backend's default takes the bounded pass up to this many
 * references: beyond, the lists of near-tied clustered data (Fashion-MNIST,
 * 6e4 references, k = 5) overflow into retries, where the tiles' candidate
 * lists do not (H200: 33.9 against 8.2 ms); below, selecting candidate
 * lists costs more than the GEMM (1024 references, k = 1: 13.8 against
 * 28.4 ms). */
#define BOUNDED_AUTO_N 8192

/* Whether the backend's bounded pass over m queries of dtype t takes the
 * work block. */
static int bounded_work(const search *s, int64_t m, ml_dtype t, int tf32) {
  return s->kb->bounded_work(t, tf32, m, s->refs->shape[0], s->refs->shape[1],
                             s->k);
}

/* The bytes of a query in a bounded tile: its keys in the work block
 * where the backend takes one, its list, count and limit. */
static int64_t bounded_bytes(const search *s, int64_t e, int work) {
  return (work ? s->refs->shape[0] * e : 0) + BOUNDED_ROOM * (e + 8) + 8 + e;
}

/* Whether the first pass is the bounded one: method's choice, or by
 * default the backend's where k is small, the references few and MIN_ROWS
 * queries (or all) fit a tile with every reference. */
static int bounded_first(const search *s, int64_t m, ml_dtype t, int tf32,
                         ml_knn_method method, int *bounded) {
  int64_t e = (int64_t)ml_dtype_size(t);
  int64_t want = m < MIN_ROWS ? m : MIN_ROWS;
  *bounded = 0;
  if (method == ML_KNN_BOUNDED && s->k > ML_KNN_BOUNDED_MAX_K)
    return ml_fail(ML_EINVAL,
                   "knn: the bounded search takes k up to %d, not %lld",
                   ML_KNN_BOUNDED_MAX_K, (long long)s->k);
  if (method == ML_KNN_BOUNDED)
    *bounded = 1;
  else if (method == ML_KNN_AUTO && s->kb->bounded_first &&
           s->k <= ML_KNN_BOUNDED_MAX_K &&
           s->refs->shape[0] <= BOUNDED_AUTO_N &&
           s->budget / bounded_bytes(s, e, bounded_work(s, m, t, tf32)) >= want)
    *bounded = 1;
  return ML_OK;
}

/* Queries i0 .. i0 + mi - 1 of b through the bounded pass; f holds the
 * lists (mt rows; its mth the limits), work the keys (NULL where the
 * backend takes none). */
static int bounded_tile(const search *s, const batch *b, filter_scratch *f,
                        const ml_array *work, int64_t i0, int64_t mi) {
  ml_array v[L_VIEWS];
  int64_t wshape[2] = {mi, s->refs->shape[0]};
  int rc = list_views(v, b, f, i0, mi);
  if (!rc && work) rc = rows(&v[L_WFLAT], work, 0, wshape[0] * wshape[1]);
  if (!rc && work)
    rc = ml_view_reshape("knn", &v[L_WORK], &v[L_WFLAT], 2, wshape);
  ml_knn_bounded bd = {s->metric, &v[L_Q], s->refs, opt(&v[L_QAUX]), s->raux,
                       opt(&v[L_SELF]), &v[L_BOUND], s->k, &v[L_MTH],
                       &v[L_KEYS], &v[L_INDEX], &v[L_COUNT],
                       work ? &v[L_WORK] : NULL, b->tf32};
  if (!rc) rc = s->kb->bounded(&bd);
  if (!rc) rc = refine_lists(s, v, L_MTH);
  release_views(v, 0, L_VIEWS);
  return rc;
}

/* The bounded pass over the batch. */
static int bounded_pass(const search *s, const batch *b) {
  int64_t m = b->q->shape[0];
  ml_dtype t = b->q->dtype;
  int has_work = bounded_work(s, m, t, b->tf32);
  int64_t mt = s->budget / bounded_bytes(s, (int64_t)ml_dtype_size(t), has_work);
  mt = mt < 1 ? 1 : mt > m ? m : mt;
  int64_t lshape[2] = {mt, BOUNDED_ROOM}, wsize = mt * s->refs->shape[0];
  ml_device dev = ml_array_device(b->q);
  filter_scratch f = {0};
  ml_array work = {0};
  int rc = ml_array_empty(&f.mth, t, 1, &mt, dev);
  if (!rc) rc = ml_array_empty(&f.keys, t, 2, lshape, dev);
  if (!rc) rc = ml_array_empty(&f.index, ML_INT64, 2, lshape, dev);
  if (!rc) rc = ml_array_empty(&f.count, ML_INT64, 1, &mt, dev);
  if (!rc && has_work) rc = ml_array_empty(&work, t, 1, &wsize, dev);
  for (int64_t i0 = 0; !rc && i0 < m; i0 += mt) {
    if (ml_interrupt_take()) {
      rc = ml_fail(ML_EINTR, "knn: interrupted");
      break;
    }
    rc = bounded_tile(s, b, &f, has_work ? &work : NULL, i0,
                      m - i0 < mt ? m - i0 : mt);
  }
  ml_array *tmp[] = {&f.mth, &f.keys, &f.index, &f.count, &work};
  for (size_t i = 0; i < sizeof tmp / sizeof *tmp; i++) ml_array_release(tmp[i]);
  return rc;
}

/* 1-based positions of the zeros of the m flags in ok, appended to the
 * host array fail (room for m) after mapping them through map (NULL: the
 * identity); returns their count in *nfail. The flags come to the host
 * only when their minimum, read first, says that some query failed:
 * usually none does. */
static int failures(const ml_backend *be, const ml_array *ok,
                    const int64_t *map, int64_t *fail, int64_t *nfail) {
  int64_t m = ok->shape[0];
  *nfail = 0;
  if (m == 0) return ML_OK;
  ml_array least = {0};
  ml_scalar all;
  int rc = ml_reduce(ML_MIN, &least, ok, -1, 0, 0);
  if (!rc) rc = ml_read_element(&least, 0, &all);
  ml_array_release(&least);
  if (rc || ml_scalar_to_double(all) != 0) return rc;
  uint8_t *flags = malloc((size_t)m);
  if (!flags) return ml_fail(ML_ENOMEM, "knn: out of memory");
  rc = be->download(flags, ok);
  int64_t count = 0;
  for (const uint8_t *p = flags; !rc && (p = memchr(p, 0, (size_t)(flags + m - p))); p++) {
    int64_t i = p - flags;
    fail[count++] = map ? map[i] : i + 1;
  }
  free(flags);
  *nfail = count;
  return rc;
}

/* Runs the passes: all queries, filtered (step > 0), bounded or with c
 * candidates, then those that failed with more, writing their rows of
 * dist and nearest, until none fails. The retries compute in the dtype,
 * with its error bound exact_bound; one after a TF32, a filtered or a
 * bounded pass keeps c. */
static int run(const search *s, const batch *all, int64_t c,
               const ml_array *exact_bound, int64_t step, int bounded) {
  int64_t m = all->q->shape[0], k = s->k, nfail = 0;
  int64_t *fail = malloc((size_t)m * sizeof *fail);
  int64_t *held = malloc((size_t)m * sizeof *held);
  if (!fail || !held) {
    free(fail);
    free(held);
    return ml_fail(ML_ENOMEM, "knn: out of memory");
  }
  int rc = step      ? filter_pass(s, all, step)
           : bounded ? bounded_pass(s, all)
                     : search_pass(s, all, c);
  if (!rc) rc = failures(s->be, all->ok, NULL, fail, &nfail);
  ml_device dev = ml_array_device(all->q);
  int keep = all->tf32 || step || bounded;
  while (!rc && nfail > 0) {
    if (!keep) c = c > s->avail / GROWTH ? s->avail : c * GROWTH;
    keep = 0;
    memcpy(held, fail, (size_t)nfail * sizeof *held);
    ml_array idx = {0}, q = {0}, qaux = {0}, bound = {0}, dist = {0},
             nearest = {0}, ok = {0};
    int64_t shape[2] = {nfail, k};
    rc = ml_from_host(&idx, ML_INT64, 1, &nfail, dev, held);
    if (!rc) rc = ml_index_select(&q, all->q, 0, &idx);
    if (!rc && all->qaux) rc = ml_index_select(&qaux, all->qaux, 0, &idx);
    if (!rc) rc = ml_index_select(&bound, exact_bound, 0, &idx);
    if (!rc) rc = ml_array_empty(&dist, all->dist->dtype, 2, shape, dev);
    if (!rc) rc = ml_array_empty(&nearest, ML_INT64, 2, shape, dev);
    if (!rc) rc = ml_array_empty(&ok, ML_UINT8, 1, &nfail, dev);
    batch b = {&q, opt(&qaux), all->self ? &idx : NULL, &bound,
               &dist, &nearest, &ok, 0};
    if (!rc) rc = search_pass(s, &b, c);
    if (!rc) rc = ml_index_put(all->dist, 0, &idx, &dist);
    if (!rc) rc = ml_index_put(all->nearest, 0, &idx, &nearest);
    if (!rc) rc = failures(s->be, &ok, held, fail, &nfail);
    ml_array *tmp[] = {&idx, &q, &qaux, &bound, &dist, &nearest, &ok};
    for (size_t i = 0; i < sizeof tmp / sizeof *tmp; i++) ml_array_release(tmp[i]);
  }
  free(fail);
  free(held);
  return rc;
}

static int check_args(const ml_array *q, const ml_array *r, int64_t k,
                      const ml_knn_opts *o) {
  char s1[ML_SHAPE_STR_MAX], s2[ML_SHAPE_STR_MAX];
  if (q->ndim != 2 || r->ndim != 2)
    return ml_fail(ML_EINVAL, "knn: queries and references must be matrices (got %s and %s)",
                   ml_shape_str(q->ndim, q->shape, s1, sizeof s1),
                   ml_shape_str(r->ndim, r->shape, s2, sizeof s2));
  int rc = ml_check_same_device("knn", q, r);
  if (rc) return rc;
  if (q->shape[1] != r->shape[1])
    return ml_fail(ML_EINVAL, "knn: queries have %lld columns but references %lld",
                   (long long)q->shape[1], (long long)r->shape[1]);
  if (o->budget < 1)
    return ml_fail(ML_EINVAL, "knn: budget = %lld bytes must be positive",
                   (long long)o->budget);
  int64_t n = r->shape[0];
  if (o->exclude_self && q->shape[0] != n)
    return ml_fail(ML_EINVAL, "knn: exclude_self needs the queries to be the references (got %lld and %lld rows)",
                   (long long)q->shape[0], (long long)n);
  if (k < 1) return ml_fail(ML_EINVAL, "knn: k = %lld must be at least 1", (long long)k);
  if (k > n)
    return ml_fail(ML_EINVAL, "knn: k = %lld exceeds the %lld reference points",
                   (long long)k, (long long)n);
  if (o->exclude_self && k > n - 1)
    return ml_fail(ML_EINVAL, "knn: k = %lld exceeds the %lld reference points other than the query",
                   (long long)k, (long long)(n - 1));
  return ML_OK;
}

/* a in dtype t, contiguous (shared when it already is). */
static int prepare(ml_array *out, const ml_array *a, ml_dtype t) {
  return a->dtype == t ? ml_contiguous(out, a) : ml_astype(out, a, t);
}

/* What the budget leaves for tiles and lists once the results and the
 * per-query and per-reference arrays (norms, terms, bounds, flags) are
 * counted, so that the search's peak stays within it; at least an eighth
 * of it. */
static int64_t scratch_budget(int64_t budget, int64_t m, int64_t n, int64_t k,
                              ml_dtype t) {
  int64_t e = (int64_t)ml_dtype_size(t);
  int64_t fixed = m * k * (e + 8) + m * (2 * e + 41) + n * 2 * e;
  return budget - fixed > budget / 8 ? budget - fixed : budget / 8;
}

int ml_knn(ml_array *dist, ml_array *index, const ml_array *queries,
           const ml_array *refs, int64_t k, const ml_knn_opts *opts) {
  int rc = check_args(queries, refs, k, opts);
  if (rc) return rc;
  ml_dtype t = ml_dtype_promote(queries->dtype, refs->dtype);
  if (!ml_dtype_is_float(t)) t = ML_FLOAT64;
  int64_t m = queries->shape[0], d = queries->shape[1], shape[2] = {m, k};
  ml_device dev = ml_array_device(queries);
  search s = {NULL, NULL, opts->metric, NULL, NULL, k,
              refs->shape[0] - (opts->exclude_self != 0),
              scratch_budget(opts->budget, m, refs->shape[0], k, t)};
  ml_array q = {0}, r = {0}, qn = {0}, rn = {0}, qaux = {0}, raux = {0},
           self = {0}, bound = {0}, fast = {0}, ok = {0}, rd = {0}, ri = {0};
  rc = ml_backend_get(dev, &s.be);
  if (!rc) rc = ml_knn_backend_get(dev, &s.kb);
  if (!rc) rc = ml_array_empty(&rd, t, 2, shape, dev);
  if (!rc) rc = ml_array_empty(&ri, ML_INT64, 2, shape, dev);
  if (!rc && m > 0) {
    rc = prepare(&q, queries, t);
    if (!rc) rc = prepare(&r, refs, t);
    if (!rc) rc = ml_reduce(ML_NORM2, &qn, &q, 1, 0, 0);
    if (!rc) rc = ml_reduce(ML_NORM2, &rn, &r, 1, 0, 0);
    if (!rc) rc = ml_knn_aux_terms(&qaux, s.metric, &qn);
    if (!rc) rc = ml_knn_aux_terms(&raux, s.metric, &rn);
    s.refs = &r;
    s.raux = opt(&raux);
    int64_t step = 0;
    int bounded = 0;
    if (!rc)
      rc = filter_step(&s, d, opts->exclude_self != 0, opts->method, &step);
    int tf32 = opts->tf32 && t == ML_FLOAT32 && s.be->tf32;
    if (!rc && !step)
      rc = bounded_first(&s, m, t, tf32, opts->method, &bounded);
    ml_knn_dot dot = !tf32 ? ML_KNN_DOT_DTYPE
                     : step ? ML_KNN_DOT_SPLIT_TF32
                            : ML_KNN_DOT_TF32;
    double rmax, rmin;
    if (!rc) rc = ml_knn_norm_range(&rn, s.metric, &rmax, &rmin);
    if (!rc)
      rc = ml_knn_error_bounds(&bound, s.metric, &qn, rmax, rmin, d,
                               ML_KNN_DOT_DTYPE);
    if (!rc && tf32)
      rc = ml_knn_error_bounds(&fast, s.metric, &qn, rmax, rmin, d, dot);
    if (!rc) rc = ml_array_empty(&ok, ML_UINT8, 1, &m, dev);
    if (!rc && opts->exclude_self) {
      rc = ml_array_empty(&self, ML_INT64, 1, &m, dev);
      if (!rc) rc = s.be->iota(&self, ml_scalar_int(1), ml_scalar_int(1));
    }
    batch b = {&q, opt(&qaux), opt(&self), tf32 ? &fast : &bound, &rd, &ri,
               &ok, tf32};
    int64_t c = 2 * k + (dot == ML_KNN_DOT_TF32 ? SLACK_TF32 : SLACK);
    if (!rc)
      rc = run(&s, &b, c < s.avail ? c : s.avail, &bound, step, bounded);
  }
  ml_array *tmp[] = {&q, &r, &qn, &rn, &qaux, &raux, &self, &bound, &fast,
                     &ok};
  for (size_t i = 0; i < sizeof tmp / sizeof *tmp; i++) ml_array_release(tmp[i]);
  if (rc) {
    ml_array_release(&rd);
    ml_array_release(&ri);
    return rc;
  }
  ml_array_release(dist);
  ml_array_release(index);
  ml_array_move(dist, &rd);
  ml_array_move(index, &ri);
  return ML_OK;
}
