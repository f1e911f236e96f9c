/* PLACEHOLDER: replaced by the area owner. */
#include "../core/status.h"
#include "cpu.h"

int cpu_sort(const ml_array *values, const ml_array *indices, const ml_array *in, int descending) {
  (void)values;
  (void)indices;
  (void)in;
  (void)descending;
  return ml_fail(ML_EINVAL, "cpu_sort: not implemented");
}

int cpu_topk(const ml_array *values, const ml_array *indices, const ml_array *in, int64_t k, int largest) {
  (void)values;
  (void)indices;
  (void)in;
  (void)k;
  (void)largest;
  return ml_fail(ML_EINVAL, "cpu_topk: not implemented");
}

