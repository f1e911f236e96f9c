/* The Philox stream (core/philox.h) on the CPU. Every block depends only on
 * (seed, offset + block), so the blocks are split into equal static ranges
 * over OpenMP threads and the result does not depend on the thread count. */
#include "../core/philox.h"
#include "../core/status.h"
#include "cpu.h"
#include "strided.h"


typedef struct {
  ml_randkind kind;
  ml_dtype dtype;
  ml_philox_keys keys;
  uint64_t offset;
  double p1, p2;
  void *data;
  int64_t n;
} fill_job;

/* Elements of blocks [b0, b1): 4 per block. */
static void fill_float32(const fill_job *j, int64_t b0, int64_t b1) {
  float *out = j->data;
  float a = (float)j->p1, b = (float)j->p2;
  int standard = a == 0 && b == 1;
  for (int64_t blk = b0; blk < b1; blk++) {
    ml_philox4 w = ml_philox_block(&j->keys, j->offset + (uint64_t)blk);
    float v[4];
    if (j->kind == ML_RAND_UNIFORM) {
      for (int k = 0; k < 4; k++)
        v[k] = ml_philox_uniformf(a, b, ml_philox_u01f(w.w[k]));
    } else {
      ml_philox_normal2f(w.w[0], w.w[1], &v[0], &v[1]);
      ml_philox_normal2f(w.w[2], w.w[3], &v[2], &v[3]);
      if (!standard)
        for (int k = 0; k < 4; k++) v[k] = fmaf(b, v[k], a);
    }
    int64_t i = 4 * blk, m = j->n - i < 4 ? j->n - i : 4;
    for (int k = 0; k < m; k++) out[i + k] = v[k];
  }
}

/* Elements of blocks [b0, b1): 2 per block, double or integer. */
static void fill_pairs(const fill_job *j, int64_t b0, int64_t b1) {
  int is_int = j->kind == ML_RAND_INT;
  int64_t low = is_int ? (int64_t)j->p1 : 0;
  uint64_t range = is_int ? (uint64_t)((int64_t)j->p2 - low) : 1;
  int standard = j->p1 == 0 && j->p2 == 1;
  for (int64_t blk = b0; blk < b1; blk++) {
    ml_philox4 w = ml_philox_block(&j->keys, j->offset + (uint64_t)blk);
    double d[2];
    int64_t r[2];
    if (j->kind == ML_RAND_UNIFORM) {
      for (int k = 0; k < 2; k++)
        d[k] = ml_philox_uniformd(j->p1, j->p2,
                                  ml_philox_u01d(w.w[2 * k], w.w[2 * k + 1]));
    } else if (j->kind == ML_RAND_NORMAL) {
      ml_philox_normal2d(w, &d[0], &d[1]);
      if (!standard)
        for (int k = 0; k < 2; k++) d[k] = fma(j->p2, d[k], j->p1);
    } else {
      for (int k = 0; k < 2; k++)
        r[k] = ml_philox_randint(w.w[2 * k], w.w[2 * k + 1], low, range);
    }
    int64_t i = 2 * blk, m = j->n - i < 2 ? j->n - i : 2;
    for (int k = 0; k < m; k++) switch (j->dtype) {
        case ML_FLOAT64: ((double *)j->data)[i + k] = d[k]; break;
        case ML_UINT8: ((uint8_t *)j->data)[i + k] = (uint8_t)r[k]; break;
        case ML_INT32: ((int32_t *)j->data)[i + k] = (int32_t)r[k]; break;
        default: ((int64_t *)j->data)[i + k] = r[k]; break;
      }
  }
}

static void fill_blocks(void *job, int64_t b0, int64_t b1) {
  const fill_job *j = job;
  if (j->dtype == ML_FLOAT32)
    fill_float32(j, b0, b1);
  else
    fill_pairs(j, b0, b1);
}

int cpu_random(ml_randkind kind, const ml_array *out, uint64_t seed,
               uint64_t offset, double p1, double p2) {
  if (kind == ML_RAND_INT ? ml_dtype_is_float(out->dtype)
                          : !ml_dtype_is_float(out->dtype))
    return ml_fail(ML_EINVAL,
                   "random: dtype %s does not suit this distribution",
                   ml_dtype_name(out->dtype));
  fill_job j = {kind, out->dtype, ml_philox_seed_keys(seed), offset, p1, p2,
                ml_array_data(out), ml_array_numel(out)};
  int per_block = out->dtype == ML_FLOAT32 ? 4 : 2;
  int64_t nblocks = (j.n + per_block - 1) / per_block;
  cpu_split(cpu_threads_for(j.n, CPU_PARALLEL_MIN), nblocks, fill_blocks, &j);
  return ML_OK;
}
