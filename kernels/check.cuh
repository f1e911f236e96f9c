/* CUDA errors as the core's status codes: "cuda: <error string> in <op>",
 * ML_EDEVICE, or ML_ENOMEM for an allocation. */
#ifndef ML_CUDA_CHECK_CUH
#define ML_CUDA_CHECK_CUH

#include <cuda.h>
#include <cuda_runtime.h>

#include "cuda_ops.h"

/* A runtime error (cleared unless it is sticky). */
int cuda_error(cudaError_t e, const char *op);
static inline int cuda_check(cudaError_t e, const char *op) {
  return e == cudaSuccess ? ML_OK : cuda_error(e, op);
}

/* A driver error. */
int cuda_driver_error(CUresult r, const char *op);

#endif
