/* PLACEHOLDER: replaced by the area owner. */
#include "../core/status.h"
#include "cpu.h"

int cpu_index_select(const ml_array *out, const ml_array *in, int dim, const ml_array *index) {
  (void)out;
  (void)in;
  (void)dim;
  (void)index;
  return ml_fail(ML_EINVAL, "cpu_index_select: not implemented");
}

int cpu_gather(const ml_array *out, const ml_array *in, int dim, const ml_array *index) {
  (void)out;
  (void)in;
  (void)dim;
  (void)index;
  return ml_fail(ML_EINVAL, "cpu_gather: not implemented");
}

int cpu_scatter(const ml_array *out, int dim, const ml_array *index, const ml_array *src) {
  (void)out;
  (void)dim;
  (void)index;
  (void)src;
  return ml_fail(ML_EINVAL, "cpu_scatter: not implemented");
}

int cpu_masked_select(const ml_array *out, const ml_array *in, const ml_array *mask) {
  (void)out;
  (void)in;
  (void)mask;
  return ml_fail(ML_EINVAL, "cpu_masked_select: not implemented");
}

