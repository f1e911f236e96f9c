#include "random.h"

#include <math.h>
#include <stdlib.h>

#include "backend.h"
#include "copy.h"
#include "philox.h"
#include "status.h"

#define MAX_EXACT_INT 9007199254740992LL /* 2^53 */

static uint64_t state_seed = ML_DEFAULT_SEED;
static uint64_t state_offset;

void ml_random_seed(uint64_t seed) {
  state_seed = seed;
  state_offset = 0;
}

void ml_random_get_state(uint64_t *seed, uint64_t *offset) {
  *seed = state_seed;
  *offset = state_offset;
}

void ml_random_set_state(uint64_t seed, uint64_t offset) {
  state_seed = seed;
  state_offset = offset;
}

static uint64_t blocks_for(int64_t n, int per_block) {
  return (uint64_t)((n + per_block - 1) / per_block);
}

/* Allocates the result, fills it from the stream at the current offset and
 * advances the offset past the blocks used. */
static int generate(ml_array *out, ml_randkind kind, ml_dtype t, int ndim,
                    const int64_t *shape, ml_device device, double p1,
                    double p2) {
  const ml_backend *be;
  int rc = ml_backend_get(device, &be);
  if (rc) return rc;
  ml_array r;
  rc = ml_array_empty(&r, t, ndim, shape, device);
  if (rc) return rc;
  rc = be->random(kind, &r, state_seed, state_offset, p1, p2);
  if (!rc) {
    int per_block = kind != ML_RAND_INT && t == ML_FLOAT32 ? 4 : 2;
    state_offset += blocks_for(ml_array_numel(&r), per_block);
  }
  return ml_array_commit(out, &r, rc);
}

static int check_float_dtype(const char *op, ml_dtype t) {
  if (ml_dtype_is_float(t)) return ML_OK;
  return ml_fail(ML_EINVAL, "%s: dtype %s is not a float dtype", op,
                 ml_dtype_name(t));
}

/* Whether v is finite once rounded to the float dtype t. */
static int finite_in(double v, ml_dtype t) {
  return t == ML_FLOAT32 ? isfinite((float)v) : isfinite(v);
}

int ml_rand_uniform(const char *op, ml_array *out, ml_dtype t, int ndim,
                    const int64_t *shape, ml_device device, double low,
                    double high) {
  int rc = check_float_dtype(op, t);
  if (rc) return rc;
  if (!finite_in(low, t) || !finite_in(high, t))
    return ml_fail(ML_EINVAL, "%s: bounds %g and %g are not finite in %s", op,
                   low, high, ml_dtype_name(t));
  if (low > high)
    return ml_fail(ML_EINVAL, "%s: low (%g) must not exceed high (%g)", op,
                   low, high);
  double span = t == ML_FLOAT32 ? (double)((float)high - (float)low)
                                : high - low;
  if (!isfinite(span))
    return ml_fail(ML_EINVAL, "%s: range [%g, %g) is too wide for %s", op,
                   low, high, ml_dtype_name(t));
  return generate(out, ML_RAND_UNIFORM, t, ndim, shape, device, low, high);
}

int ml_rand_normal(const char *op, ml_array *out, ml_dtype t, int ndim,
                   const int64_t *shape, ml_device device, double mean,
                   double std) {
  int rc = check_float_dtype(op, t);
  if (rc) return rc;
  if (!finite_in(mean, t))
    return ml_fail(ML_EINVAL, "%s: mean %g is not finite in %s", op, mean,
                   ml_dtype_name(t));
  if (!finite_in(std, t) || !(std >= 0))
    return ml_fail(ML_EINVAL,
                   "%s: std must be finite and non-negative (got %g)", op, std);
  return generate(out, ML_RAND_NORMAL, t, ndim, shape, device, mean, std);
}

int ml_randint(ml_array *out, ml_dtype t, int ndim, const int64_t *shape,
               ml_device device, int64_t low, int64_t high) {
  if (ml_dtype_is_float(t))
    return ml_fail(ML_EINVAL, "randint: dtype %s is not an integer dtype",
                   ml_dtype_name(t));
  if (high <= low)
    return ml_fail(ML_EINVAL,
                   "randint: high (%lld) must be greater than low (%lld)",
                   (long long)high, (long long)low);
  if (low < -MAX_EXACT_INT || high > MAX_EXACT_INT)
    return ml_fail(ML_EINVAL,
                   "randint: low and high must lie within -2^53..2^53");
  if (!ml_scalar_fits(ml_scalar_int(low), t) ||
      !ml_scalar_fits(ml_scalar_int(high - 1), t))
    return ml_fail(ML_EINVAL, "randint: range [%lld, %lld) does not fit %s",
                   (long long)low, (long long)high, ml_dtype_name(t));
  return generate(out, ML_RAND_INT, t, ndim, shape, device, (double)low,
                  (double)high);
}

int ml_randperm(ml_array *out, ml_dtype t, int64_t n, ml_device device) {
  if (ml_dtype_is_float(t))
    return ml_fail(ML_EINVAL, "randperm: dtype %s is not an integer dtype",
                   ml_dtype_name(t));
  if (n < 0)
    return ml_fail(ML_EINVAL, "randperm: n must be non-negative (got %lld)",
                   (long long)n);
  if (!ml_scalar_fits(ml_scalar_int(n), t))
    return ml_fail(ML_EINVAL, "randperm: n = %lld does not fit %s",
                   (long long)n, ml_dtype_name(t));
  if ((uint64_t)n > SIZE_MAX / sizeof(int64_t))
    return ml_fail(ML_EINVAL, "randperm: n = %lld is too large", (long long)n);
  int64_t *p = malloc(n ? (size_t)n * sizeof *p : 1);
  if (!p)
    return ml_fail(ML_ENOMEM, "randperm: out of host memory for %lld elements",
                   (long long)n);
  for (int64_t i = 0; i < n; i++) p[i] = i + 1;
  ml_philox4 b = {{0, 0, 0, 0}};
  ml_philox_keys keys = ml_philox_seed_keys(state_seed);
  for (int64_t i = n - 1; i >= 1; i--) {
    int k = (int)(i % 2); /* block i/2 serves i = 2m + 1, then 2m */
    if (k == 1 || i == n - 1)
      b = ml_philox_block(&keys, state_offset + (uint64_t)(i / 2));
    uint64_t v = ml_philox_u64(b.w[2 * k], b.w[2 * k + 1]);
    int64_t j = (int64_t)(v % (uint64_t)(i + 1)), tmp = p[i];
    p[i] = p[j];
    p[j] = tmp;
  }
  int64_t shape[1] = {n};
  ml_array r = {0};
  int rc = ml_from_host(&r, ML_INT64, 1, shape, device, p);
  free(p);
  if (!rc && t != ML_INT64) {
    ml_array narrow = {0};
    rc = ml_astype(&narrow, &r, t);
    ml_array_release(&r);
    ml_array_move(&r, &narrow);
  }
  if (!rc) state_offset += blocks_for(n, 2);
  return ml_array_commit(out, &r, rc);
}
