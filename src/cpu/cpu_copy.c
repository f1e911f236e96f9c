/* Strided copies with dtype conversion, fills and ranges on the CPU.
 *
 * A conversion goes through a small buffer: the source run is widened to
 * int64 (integer to integer, exact) or to double (anything involving a
 * float), then narrowed to the destination type with C's conversions. */
#include <math.h>
#include <string.h>

#include "../core/status.h"
#include "cpu.h"
#include "strided.h"

#define CHUNK 256

typedef struct {
  ml_dtype dst, src;
} convert_ctx;

static void widen_int(int64_t *w, const char *p, int64_t s, int64_t n, ml_dtype t) {
  for (int64_t i = 0; i < n; i++, p += s)
    switch (t) {
      case ML_UINT8: w[i] = *(const uint8_t *)p; break;
      case ML_INT32: w[i] = *(const int32_t *)p; break;
      default: w[i] = *(const int64_t *)p; break;
    }
}

static void narrow_int(char *p, int64_t s, const int64_t *w, int64_t n, ml_dtype t) {
  for (int64_t i = 0; i < n; i++, p += s)
    switch (t) {
      case ML_UINT8: *(uint8_t *)p = (uint8_t)w[i]; break;
      case ML_INT32: *(int32_t *)p = (int32_t)w[i]; break;
      default: *(int64_t *)p = w[i]; break;
    }
}

static void widen_float(double *w, const char *p, int64_t s, int64_t n, ml_dtype t) {
  switch (t) {
    case ML_UINT8: for (int64_t i = 0; i < n; i++, p += s) w[i] = *(const uint8_t *)p; break;
    case ML_INT32: for (int64_t i = 0; i < n; i++, p += s) w[i] = *(const int32_t *)p; break;
    case ML_INT64: for (int64_t i = 0; i < n; i++, p += s) w[i] = (double)*(const int64_t *)p; break;
    case ML_FLOAT32: for (int64_t i = 0; i < n; i++, p += s) w[i] = *(const float *)p; break;
    default: for (int64_t i = 0; i < n; i++, p += s) w[i] = *(const double *)p; break;
  }
}

/* Float to integer truncates toward zero; NaN and out-of-range values go
 * through int64 (saturating), then wrap to the narrower type, so the result
 * is defined rather than undefined behaviour. */
static void narrow_float(char *p, int64_t s, const double *w, int64_t n, ml_dtype t) {
  switch (t) {
    case ML_FLOAT32: for (int64_t i = 0; i < n; i++, p += s) *(float *)p = (float)w[i]; break;
    case ML_FLOAT64: for (int64_t i = 0; i < n; i++, p += s) *(double *)p = w[i]; break;
    default:
      for (int64_t i = 0; i < n; i++, p += s) {
        int64_t v = ml_scalar_to_int64(ml_scalar_float(w[i]));
        narrow_int(p, s, &v, 1, t);
      }
      break;
  }
}

static void convert_run(void *vctx, int64_t n, char *const *ptrs, const int64_t *bs) {
  const convert_ctx *c = vctx;
  int via_int = !ml_dtype_is_float(c->dst) && !ml_dtype_is_float(c->src);
  for (int64_t done = 0; done < n; done += CHUNK) {
    int64_t m = n - done < CHUNK ? n - done : CHUNK;
    char *d = ptrs[0] + done * bs[0];
    const char *s = ptrs[1] + done * bs[1];
    if (via_int) {
      int64_t w[CHUNK];
      widen_int(w, s, bs[1], m, c->src);
      narrow_int(d, bs[0], w, m, c->dst);
    } else {
      double w[CHUNK];
      widen_float(w, s, bs[1], m, c->src);
      narrow_float(d, bs[0], w, m, c->dst);
    }
  }
}

static void same_type_run(void *vctx, int64_t n, char *const *ptrs, const int64_t *bs) {
  size_t size = *(const size_t *)vctx;
  if (bs[0] == (int64_t)size && bs[1] == (int64_t)size) {
    memmove(ptrs[0], ptrs[1], (size_t)n * size);
    return;
  }
  for (int64_t i = 0; i < n; i++) memcpy(ptrs[0] + i * bs[0], ptrs[1] + i * bs[1], size);
}

int cpu_copy(const ml_array *dst, const ml_array *src) {
  const ml_array *ops[2] = {dst, src};
  if (dst->dtype == src->dtype) {
    size_t size = ml_dtype_size(dst->dtype);
    return cpu_foreach(2, ops, same_type_run, &size);
  }
  convert_ctx c = {dst->dtype, src->dtype};
  return cpu_foreach(2, ops, convert_run, &c);
}

typedef struct {
  unsigned char bytes[8];
  size_t size;
} fill_ctx;

static void fill_run(void *vctx, int64_t n, char *const *ptrs, const int64_t *bs) {
  const fill_ctx *c = vctx;
  char *p = ptrs[0];
  if (c->size == 1 && bs[0] == 1) {
    memset(p, c->bytes[0], (size_t)n);
    return;
  }
  for (int64_t i = 0; i < n; i++, p += bs[0]) memcpy(p, c->bytes, c->size);
}

int cpu_fill(const ml_array *dst, ml_scalar value) {
  fill_ctx c;
  c.size = ml_dtype_size(dst->dtype);
  ml_scalar_store(c.bytes, dst->dtype, value);
  const ml_array *ops[1] = {dst};
  return cpu_foreach(1, ops, fill_run, &c);
}

int cpu_iota(const ml_array *dst, ml_scalar start, ml_scalar step) {
  int64_t n = ml_array_numel(dst);
  char *p = ml_array_data(dst);
  if (ml_dtype_is_float(dst->dtype)) {
    double a = ml_scalar_to_double(start), h = ml_scalar_to_double(step);
    for (int64_t i = 0; i < n; i++)
      ml_scalar_store(p + i * (int64_t)ml_dtype_size(dst->dtype), dst->dtype,
                      ml_scalar_float(a + (double)i * h));
  } else {
    /* In wrapping arithmetic: over a range wider than INT64_MAX, i * h
     * alone may not fit an int64 although a + i * h does. */
    uint64_t a = (uint64_t)ml_scalar_to_int64(start);
    uint64_t h = (uint64_t)ml_scalar_to_int64(step);
    for (int64_t i = 0; i < n; i++)
      ml_scalar_store(p + i * (int64_t)ml_dtype_size(dst->dtype), dst->dtype,
                      ml_scalar_int((int64_t)(a + (uint64_t)i * h)));
  }
  return ML_OK;
}
