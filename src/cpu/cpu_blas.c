/* PLACEHOLDER: replaced by the area owner. */
#include "../core/status.h"
#include "cpu.h"

int cpu_gemm(const ml_gemm *g) {
  (void)g;
  return ml_fail(ML_EINVAL, "cpu_gemm: not implemented");
}

