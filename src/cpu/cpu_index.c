/* Indexing on the CPU: index_select, gather, scatter, masked_select.
 *
 * These only move elements, so the loops copy 1, 4 or 8 bytes per element
 * whatever the dtype. index_select and gather share one kernel run by
 * cpu_foreach over out's shape: the input is seen through a view whose
 * stride along dim is 0, and each element adds as many steps along dim as
 * its index's 0-based position (ml_index_base0: negatives count from the
 * end).
 * Scatter walks the index in C order on each thread, with the threads
 * splitting a dimension other than dim, so that duplicate indices always
 * resolve the same way: the last one along dim wins. Out-of-range indices
 * are skipped and flagged; the first one in C order is then looked up for
 * the error message. */
#include <stdlib.h>
#include <string.h>

#include "../core/scalar_math.h"
#include "../core/status.h"
#include "cpu.h"
#include "strided.h"

static inline void move_element(char *dst, const char *src, size_t size) {
  switch (size) {
    case 1: *(uint8_t *)dst = *(const uint8_t *)src; break;
    case 4: *(uint32_t *)dst = *(const uint32_t *)src; break;
    default: *(uint64_t *)dst = *(const uint64_t *)src; break;
  }
}

/* Serial C-order walk over ops[0]'s shape, in runs along the last
 * dimension (the order cpu_foreach cannot promise once it goes parallel). */
static void walk(int nops, const ml_array *const *ops, cpu_run_fn fn,
                 void *ctx) {
  const ml_array *a0 = ops[0];
  int nd = a0->ndim;
  if (ml_array_numel(a0) == 0) return;
  char *base[CPU_MAX_OPERANDS], *ptrs[CPU_MAX_OPERANDS];
  int64_t bs[CPU_MAX_OPERANDS], idx[ML_MAX_DIMS] = {0};
  for (int k = 0; k < nops; k++) {
    base[k] = ml_array_data(ops[k]);
    bs[k] = nd ? ops[k]->strides[nd - 1] * (int64_t)ml_dtype_size(ops[k]->dtype) : 0;
  }
  int64_t inner = nd ? a0->shape[nd - 1] : 1;
  for (;;) {
    for (int k = 0; k < nops; k++) {
      ptrs[k] = base[k];
      for (int d = 0; d + 1 < nd; d++)
        ptrs[k] += idx[d] * ops[k]->strides[d] * (int64_t)ml_dtype_size(ops[k]->dtype);
    }
    fn(ctx, inner, ptrs, bs);
    int d = nd - 2;
    while (d >= 0 && ++idx[d] == a0->shape[d]) idx[d--] = 0;
    if (d < 0) return;
  }
}

/* Reports the first index (C order) out of range for size. Runs only once
 * a kernel has flagged one, so it may take its time. */
static int bad_index(const char *op, const ml_array *index, int dim,
                     int64_t size) {
  int64_t n = ml_array_numel(index);
  int64_t *host = malloc((size_t)(n ? n : 1) * sizeof *host);
  if (!host) return ml_fail(ML_ENOMEM, "%s: out of memory checking indices", op);
  int rc = cpu_download(host, index);
  if (rc) {
    free(host);
    return rc;
  }
  int64_t v = 0;
  for (int64_t i = 0; i < n; i++)
    if (ml_index_base0(host[i], size) >= (uint64_t)size) {
      v = host[i];
      break;
    }
  free(host);
  return ml_fail(ML_EINVAL, "%s: index %lld is out of bounds for dimension %d with size %lld",
                 op, (long long)v, dim + 1, (long long)size);
}

typedef struct {
  size_t esize;
  int64_t size, step; /* size of dim, and its stride in bytes */
  int bad;
} gather_ctx;

/* The int64 index at p, 0-based; out of range: >= size. */
static inline uint64_t zero_based(const char *p, int64_t size) {
  return ml_index_base0(*(const int64_t *)p, size);
}

/* ptrs: out, in at dim index 0, index. */
static void gather_run(void *vctx, int64_t n, char *const *p,
                       const int64_t *bs) {
  gather_ctx *c = vctx;
  if (bs[2] == 0) { /* one index for the whole run (index_select rows) */
    uint64_t k = zero_based(p[2], c->size);
    if (k >= (uint64_t)c->size) {
#pragma omp atomic write
      c->bad = 1;
      return;
    }
    const char *src = p[1] + (int64_t)k * c->step;
    if (bs[0] == (int64_t)c->esize && bs[1] == (int64_t)c->esize) {
      memcpy(p[0], src, (size_t)n * c->esize);
      return;
    }
    for (int64_t i = 0; i < n; i++)
      move_element(p[0] + i * bs[0], src + i * bs[1], c->esize);
    return;
  }
  for (int64_t i = 0; i < n; i++) {
    uint64_t k = zero_based(p[2] + i * bs[2], c->size);
    if (k >= (uint64_t)c->size) {
#pragma omp atomic write
      c->bad = 1;
      continue;
    }
    move_element(p[0] + i * bs[0], p[1] + i * bs[1] + (int64_t)k * c->step,
                 c->esize);
  }
}

/* out[..i..] = in[.., index[..i..], ..] with in seen at out's shape. */
static int gather_common(const char *op, const ml_array *out,
                         const ml_array *in, int dim, const ml_array *index,
                         const ml_array *index_view) {
  gather_ctx c = {ml_dtype_size(in->dtype), in->shape[dim],
                  in->strides[dim] * (int64_t)ml_dtype_size(in->dtype), 0};
  ml_array src = *in; /* borrowed view: the row at dim index 0 */
  memcpy(src.shape, out->shape, sizeof src.shape);
  src.strides[dim] = 0;
  const ml_array *ops[3] = {out, &src, index_view};
  int rc = cpu_foreach(3, ops, gather_run, &c);
  if (!rc && c.bad) rc = bad_index(op, index, dim, c.size);
  return rc;
}

int cpu_index_select(const ml_array *out, const ml_array *in, int dim,
                     const ml_array *index) {
  ml_array iv = *index; /* borrowed: the 1-D index laid along dim */
  iv.ndim = out->ndim;
  memcpy(iv.shape, out->shape, sizeof iv.shape);
  memset(iv.strides, 0, sizeof iv.strides);
  iv.strides[dim] = index->strides[0];
  return gather_common("index_select", out, in, dim, index, &iv);
}

int cpu_gather(const ml_array *out, const ml_array *in, int dim,
               const ml_array *index) {
  return gather_common("gather", out, in, dim, index, index);
}

/* ptrs: out at dim index 0, index, src. */
static void scatter_run(void *vctx, int64_t n, char *const *p,
                        const int64_t *bs) {
  gather_ctx *c = vctx;
  for (int64_t i = 0; i < n; i++) {
    uint64_t k = zero_based(p[1] + i * bs[1], c->size);
    if (k >= (uint64_t)c->size) {
#pragma omp atomic write
      c->bad = 1;
      continue;
    }
    move_element(p[0] + i * bs[0] + (int64_t)k * c->step, p[2] + i * bs[2],
                 c->esize);
  }
}

/* A scatter whose threads split dimension `split` (not dim) into equal
 * ranges. */
typedef struct {
  gather_ctx *c;
  const ml_array *const *ops;
  int split;
} scatter_job;

static void scatter_block(void *job, int64_t begin, int64_t end) {
  const scatter_job *j = job;
  ml_array v[3];
  const ml_array *vp[3];
  for (int k = 0; k < 3; k++) {
    v[k] = *j->ops[k]; /* borrowed */
    v[k].offset += begin * v[k].strides[j->split];
    v[k].shape[j->split] = end - begin;
    vp[k] = &v[k];
  }
  walk(3, vp, scatter_run, j->c);
}

int cpu_scatter(const ml_array *out, int dim, const ml_array *index,
                const ml_array *src) {
  gather_ctx c = {ml_dtype_size(out->dtype), out->shape[dim],
                  out->strides[dim] * (int64_t)ml_dtype_size(out->dtype), 0};
  ml_array dst = *out; /* borrowed view: out at dim index 0 */
  memcpy(dst.shape, index->shape, sizeof dst.shape);
  dst.strides[dim] = 0;
  const ml_array *ops[3] = {&dst, index, src};
  int split = -1;
  for (int d = 0; d < index->ndim && split < 0; d++)
    if (d != dim && index->shape[d] > 1) split = d;
  int64_t parts = split < 0 ? 1 : index->shape[split];
  int threads = cpu_threads_for(ml_array_numel(index), CPU_PARALLEL_MIN);
  if (threads > parts) threads = (int)parts;
  if (threads <= 1) {
    walk(3, ops, scatter_run, &c);
  } else {
    scatter_job j = {&c, ops, split};
    cpu_split(threads, parts, scatter_block, &j);
  }
  return c.bad ? bad_index("scatter", index, dim, c.size) : ML_OK;
}

typedef struct {
  size_t esize;
  char *next;
} select_ctx;

/* ptrs: in, mask. */
static void masked_run(void *vctx, int64_t n, char *const *p,
                       const int64_t *bs) {
  select_ctx *c = vctx;
  for (int64_t i = 0; i < n; i++)
    if (*(const uint8_t *)(p[1] + i * bs[1])) {
      move_element(c->next, p[0] + i * bs[0], c->esize);
      c->next += c->esize;
    }
}

int cpu_masked_select(const ml_array *out, const ml_array *in,
                      const ml_array *mask) {
  select_ctx c = {ml_dtype_size(in->dtype), ml_array_data(out)};
  const ml_array *ops[2] = {in, mask};
  walk(2, ops, masked_run, &c);
  return ML_OK;
}
