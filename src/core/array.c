#include "array.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "status.h"

/* Collect once the bytes allocated since the last collection, less those
 * freed since, reach this many or as many as were live after it, whichever
 * is more: memory stays within about twice what is reachable, and the work
 * of collecting stays proportional to allocation. A loop whose arrays are
 * freed as it goes (x:free(), <close>, or Lua's own collection steps)
 * triggers no full collection. */
#define ML_COLLECT_MIN_BYTES ((size_t)256 << 20)

static ml_pressure_hook pressure_hook;
static void *pressure_ud;
static size_t since_collect, live_after_collect; /* since_collect: net of frees */
static ml_memory_stats stats[ML_NDEVICE_KINDS];

static size_t live_bytes(void) {
  size_t n = 0;
  for (int k = 0; k < ML_NDEVICE_KINDS; k++) n += stats[k].allocated;
  return n;
}

void ml_set_pressure_hook(ml_pressure_hook hook, void *ud) {
  pressure_hook = hook;
  pressure_ud = ud;
}

static void relieve_pressure(void) {
  if (pressure_hook) pressure_hook(pressure_ud);
  since_collect = 0;
  live_after_collect = live_bytes();
}

static void format_bytes(size_t n, char *buf, size_t len) {
  if (n >= ((size_t)1 << 40))
    snprintf(buf, len, "%.1f TiB", (double)n / ((size_t)1 << 40));
  else if (n >= ((size_t)1 << 30))
    snprintf(buf, len, "%.1f GiB", (double)n / (1 << 30));
  else if (n >= ((size_t)1 << 20))
    snprintf(buf, len, "%.1f MiB", (double)n / (1 << 20));
  else
    snprintf(buf, len, "%zu bytes", n);
}

/* Small CPU arrays keep their data in the header's block, right after it:
 * one malloc instead of two is a sixth of the cost of a tiny operation. */
#define ML_INLINE_BYTES 256

_Static_assert(sizeof(ml_storage) % 16 == 0, "inline data must stay 16-byte aligned");

static int has_inline_data(const ml_storage *s) { return s->data == (void *)(s + 1); }

/* Every header has room for inline data, so that freed headers can be kept
 * and handed out again: the garbage collector frees arrays by the hundred,
 * more than malloc's per-thread cache holds, and malloc then costs a tenth
 * of a tiny GPU operation. The spares take 300 KiB at most. */
#define ML_HEADER_BYTES (sizeof(ml_storage) + ML_INLINE_BYTES)
#define ML_SPARE_HEADERS 1024

static ml_storage *spare_headers[ML_SPARE_HEADERS];
static int nspare;

static ml_storage *header_new(void) {
  return nspare > 0 ? spare_headers[--nspare] : malloc(ML_HEADER_BYTES);
}

static void header_free(ml_storage *s) {
  if (nspare < ML_SPARE_HEADERS)
    spare_headers[nspare++] = s;
  else
    free(s);
}

int ml_storage_new(ml_device device, size_t nbytes, ml_storage **out) {
  const ml_backend *be;
  int rc = ml_backend_get(device, &be);
  if (rc) return rc;
  int inline_data = device.kind == ML_CPU && nbytes <= ML_INLINE_BYTES;
  ml_storage *s = header_new();
  if (!s) return ml_fail(ML_ENOMEM, "out of memory allocating an array header");
  if (since_collect > ML_COLLECT_MIN_BYTES && since_collect > live_after_collect)
    relieve_pressure();
  void *data = inline_data ? (void *)(s + 1) : NULL;
  if (nbytes > 0 && !inline_data) {
    rc = be->alloc(device.index, nbytes, &data);
    if (rc == ML_ENOMEM) {
      relieve_pressure();
      rc = be->alloc(device.index, nbytes, &data);
    }
    if (rc) {
      char dev[ML_DEVICE_NAME_MAX], want[32], used[32];
      header_free(s);
      if (rc != ML_ENOMEM) return rc;
      format_bytes(nbytes, want, sizeof want);
      format_bytes(stats[device.kind].allocated, used, sizeof used);
      /* no operation named: the binding names the one the user called */
      return ml_fail(ML_ENOMEM, "out of memory allocating %s on %s (in use %s)",
                     want, ml_device_name(device, dev), used);
    }
  }
  s->refcount = 1;
  s->device = device;
  s->nbytes = nbytes;
  s->data = data;
  since_collect += nbytes;
  ml_memory_stats *st = &stats[device.kind];
  st->allocated += nbytes;
  st->count++;
  if (st->allocated > st->peak) st->peak = st->allocated;
  *out = s;
  return ML_OK;
}

void ml_storage_release(ml_storage *s) {
  if (!s || --s->refcount > 0) return;
  const ml_backend *be;
  if (s->nbytes > 0 && !has_inline_data(s) && ml_backend_get(s->device, &be) == ML_OK)
    be->free(s->device.index, s->data, s->nbytes);
  stats[s->device.kind].allocated -= s->nbytes;
  stats[s->device.kind].count--;
  since_collect -= since_collect < s->nbytes ? since_collect : s->nbytes;
  header_free(s);
}

ml_memory_stats ml_memory(ml_device_kind kind) { return stats[kind]; }

void ml_memory_reset_peak(ml_device_kind kind) {
  stats[kind].peak = stats[kind].allocated;
}

void ml_contiguous_strides(int ndim, const int64_t *shape, int64_t *strides) {
  int64_t s = 1;
  for (int d = ndim - 1; d >= 0; d--) {
    strides[d] = s;
    s *= shape[d] > 0 ? shape[d] : 1;
  }
}

int ml_array_empty(ml_array *out, ml_dtype dtype, int ndim,
                   const int64_t *shape, ml_device device) {
  char buf[ML_SHAPE_STR_MAX];
  if (ndim < 0 || ndim > ML_MAX_DIMS)
    return ml_fail(ML_EINVAL, "arrays have at most %d dimensions, not %d",
                   ML_MAX_DIMS, ndim);
  /* span: the product of the nonzero sizes, which bounds the strides even
   * when n is 0 */
  size_t n = 1, span = 1;
  for (int d = 0; d < ndim; d++) {
    if (shape[d] < 0)
      return ml_fail(ML_EINVAL, "negative dimension in shape %s",
                     ml_shape_str(ndim, shape, buf, sizeof buf));
    if (shape[d] > 0 && span > (SIZE_MAX >> 4) / (size_t)shape[d])
      return ml_fail(ML_EINVAL, "shape %s is too large",
                     ml_shape_str(ndim, shape, buf, sizeof buf));
    if (shape[d] > 0) span *= (size_t)shape[d];
    n *= (size_t)shape[d];
  }
  ml_storage *s;
  int rc = ml_storage_new(device, n * ml_dtype_size(dtype), &s);
  if (rc) return rc;
  out->storage = s;
  out->offset = 0;
  out->dtype = dtype;
  out->ndim = ndim;
  if (ndim > 0) memcpy(out->shape, shape, (size_t)ndim * sizeof *shape);
  ml_contiguous_strides(ndim, shape, out->strides);
  return ML_OK;
}

int ml_array_empty_like(ml_array *out, const ml_array *a, ml_dtype dtype) {
  return ml_array_empty(out, dtype, a->ndim, a->shape, ml_array_device(a));
}

/* Clears only what marks the array empty: the full struct is 152 bytes and
 * this runs for every temporary. */
static void make_empty(ml_array *a) {
  a->storage = NULL;
  a->offset = 0;
  a->ndim = 0;
}

void ml_array_release(ml_array *a) {
  ml_storage_release(a->storage);
  make_empty(a);
}

void ml_array_share(ml_array *out, const ml_array *src) {
  if (out == src) return;
  *out = *src;
  if (out->storage) out->storage->refcount++;
}

void ml_array_move(ml_array *out, ml_array *src) {
  *out = *src;
  make_empty(src);
}

int ml_array_commit(ml_array *out, ml_array *r, int rc) {
  if (rc) {
    ml_array_release(r);
    return rc;
  }
  ml_array_release(out);
  ml_array_move(out, r);
  return ML_OK;
}

int64_t ml_array_numel(const ml_array *a) {
  int64_t n = 1;
  for (int d = 0; d < a->ndim; d++) n *= a->shape[d];
  return n;
}

size_t ml_array_nbytes(const ml_array *a) {
  return (size_t)ml_array_numel(a) * ml_dtype_size(a->dtype);
}

int ml_array_is_contiguous(const ml_array *a) {
  int64_t expect = 1;
  for (int d = a->ndim - 1; d >= 0; d--) {
    if (a->shape[d] == 0) return 1;
    if (a->shape[d] != 1 && a->strides[d] != expect) return 0;
    expect *= a->shape[d];
  }
  return 1;
}

ml_device ml_array_device(const ml_array *a) {
  return a->storage ? a->storage->device : ml_cpu();
}

void *ml_array_data(const ml_array *a) {
  return (char *)a->storage->data + a->offset * (int64_t)ml_dtype_size(a->dtype);
}

const char *ml_shape_str(int ndim, const int64_t *shape, char *buf, size_t n) {
  if (ndim == 0) {
    snprintf(buf, n, "scalar");
    return buf;
  }
  size_t used = 0;
  buf[0] = '\0';
  for (int d = 0; d < ndim && used < n; d++)
    used += (size_t)snprintf(buf + used, n - used, d ? "x%lld" : "%lld",
                             (long long)shape[d]);
  return buf;
}

int ml_check_same_device(const char *op, const ml_array *a, const ml_array *b) {
  ml_device da = ml_array_device(a), db = ml_array_device(b);
  if (ml_device_equal(da, db)) return ML_OK;
  char na[ML_DEVICE_NAME_MAX], nb[ML_DEVICE_NAME_MAX];
  return ml_fail(ML_EINVAL, "%s: arrays on different devices (%s and %s); move one with :to()",
                 op, ml_device_name(da, na), ml_device_name(db, nb));
}
