/* The cuBLAS handle of each device (blas.cu), for the entries that call
 * cuBLAS: made on first use, on the device's stream, in the default math
 * mode (full FP32, no TF32). */
#ifndef ML_CUDA_BLAS_CUH
#define ML_CUDA_BLAS_CUH

#include <cublas_v2.h>

#include "device.cuh"

/* A cuBLAS status as the core's: ML_ENOMEM for an allocation, else
 * ML_EDEVICE, "cuda: <status> in <op>". */
int cuda_blas_check(cublasStatus_t st, const char *op);

/* d's handle (d current). */
int cuda_blas_handle(cuda_dev *d, cublasHandle_t *out);

#endif
