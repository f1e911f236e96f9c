/* PLACEHOLDER: replaced by the area owner. */
#include "../core/status.h"
#include "cpu.h"

int cpu_random(ml_randkind kind, const ml_array *out, uint64_t seed, uint64_t offset, double p1, double p2) {
  (void)kind;
  (void)out;
  (void)seed;
  (void)offset;
  (void)p1;
  (void)p2;
  return ml_fail(ML_EINVAL, "cpu_random: not implemented");
}

