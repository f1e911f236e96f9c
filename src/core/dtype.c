#include "dtype.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "status.h"

static const size_t sizes[ML_NDTYPES] = {1, 4, 8, 4, 8};
static const char *const names[ML_NDTYPES] = {"uint8", "int32", "int64",
                                              "float32", "float64"};

size_t ml_dtype_size(ml_dtype t) { return sizes[t]; }
const char *ml_dtype_name(ml_dtype t) { return names[t]; }

int ml_dtype_parse(const char *name, ml_dtype *out) {
  static const struct { const char *name; ml_dtype t; } aliases[] = {
      {"float", ML_FLOAT32}, {"double", ML_FLOAT64}, {"int", ML_INT32},
      {"long", ML_INT64},    {"bool", ML_UINT8},     {"byte", ML_UINT8}};
  for (int t = 0; t < ML_NDTYPES; t++)
    if (strcmp(name, names[t]) == 0) {
      *out = (ml_dtype)t;
      return 1;
    }
  for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
    if (strcmp(name, aliases[i].name) == 0) {
      *out = aliases[i].t;
      return 1;
    }
  return 0;
}

int ml_dtype_is_float(ml_dtype t) { return t == ML_FLOAT32 || t == ML_FLOAT64; }

/* NumPy 2: integers widen among themselves; float32 holds uint8 exactly but
 * not int32 or int64, which go to float64. */
static const ml_dtype promotion[ML_NDTYPES][ML_NDTYPES] = {
    /*            u8          i32         i64         f32         f64 */
    /* u8  */ {ML_UINT8, ML_INT32, ML_INT64, ML_FLOAT32, ML_FLOAT64},
    /* i32 */ {ML_INT32, ML_INT32, ML_INT64, ML_FLOAT64, ML_FLOAT64},
    /* i64 */ {ML_INT64, ML_INT64, ML_INT64, ML_FLOAT64, ML_FLOAT64},
    /* f32 */ {ML_FLOAT32, ML_FLOAT64, ML_FLOAT64, ML_FLOAT32, ML_FLOAT64},
    /* f64 */ {ML_FLOAT64, ML_FLOAT64, ML_FLOAT64, ML_FLOAT64, ML_FLOAT64},
};

ml_dtype ml_dtype_promote(ml_dtype a, ml_dtype b) { return promotion[a][b]; }

ml_scalar ml_scalar_int(int64_t v) {
  ml_scalar s = {1, v, (double)v};
  return s;
}

ml_scalar ml_scalar_float(double v) {
  ml_scalar s = {0, 0, v};
  return s;
}

double ml_scalar_to_double(ml_scalar s) { return s.is_int ? (double)s.i : s.f; }

int64_t ml_scalar_to_int64(ml_scalar s) {
  if (s.is_int) return s.i;
  if (isnan(s.f)) return 0;
  if (s.f >= 9223372036854775807.0) return INT64_MAX;
  if (s.f <= -9223372036854775808.0) return INT64_MIN;
  return (int64_t)s.f;
}

void ml_scalar_store(void *p, ml_dtype t, ml_scalar s) {
  switch (t) {
    case ML_UINT8: *(uint8_t *)p = (uint8_t)ml_scalar_to_int64(s); break;
    case ML_INT32: *(int32_t *)p = (int32_t)ml_scalar_to_int64(s); break;
    case ML_INT64: *(int64_t *)p = ml_scalar_to_int64(s); break;
    case ML_FLOAT32: *(float *)p = (float)ml_scalar_to_double(s); break;
    default: *(double *)p = ml_scalar_to_double(s); break;
  }
}

ml_scalar ml_scalar_load(const void *p, ml_dtype t) {
  switch (t) {
    case ML_UINT8: return ml_scalar_int(*(const uint8_t *)p);
    case ML_INT32: return ml_scalar_int(*(const int32_t *)p);
    case ML_INT64: return ml_scalar_int(*(const int64_t *)p);
    case ML_FLOAT32: return ml_scalar_float(*(const float *)p);
    default: return ml_scalar_float(*(const double *)p);
  }
}

int ml_scalar_fits(ml_scalar s, ml_dtype t) {
  if (!s.is_int || ml_dtype_is_float(t)) return 1;
  switch (t) {
    case ML_UINT8: return s.i >= 0 && s.i <= 255;
    case ML_INT32: return s.i >= INT32_MIN && s.i <= INT32_MAX;
    default: return 1;
  }
}

int ml_scalar_storable(ml_scalar s, ml_dtype t) {
  if (ml_dtype_is_float(t)) return 1;
  if (!s.is_int) {
    if (!(s.f >= -0x1p63 && s.f < 0x1p63)) return 0; /* NaN too */
    s = ml_scalar_int((int64_t)s.f);
  }
  return ml_scalar_fits(s, t);
}

int ml_scalar_check_store(const char *op, ml_scalar s, ml_dtype t) {
  if (ml_scalar_storable(s, t)) return ML_OK;
  char num[32];
  if (s.is_int)
    snprintf(num, sizeof num, "%lld", (long long)s.i);
  else if (isnan(s.f))
    snprintf(num, sizeof num, "nan");
  else
    snprintf(num, sizeof num, "%.14g", s.f); /* as Lua prints it */
  return ml_fail(ML_EINVAL, "%s%s%s is out of range for %s", op ? op : "",
                 op ? ": " : "", num, ml_dtype_name(t));
}

ml_dtype ml_dtype_with_scalar(ml_dtype t, ml_scalar s) {
  if (!s.is_int && !ml_dtype_is_float(t)) return ML_FLOAT64;
  return t;
}
