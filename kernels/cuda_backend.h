/* The CUDA backend as the core sees it: plain C, no CUDA headers. The
 * rest of the backend is reached through the tables it registers. */
#ifndef ML_CUDA_BACKEND_H
#define ML_CUDA_BACKEND_H

#ifdef __cplusplus
extern "C" {
#endif

/* Registers the CUDA backend's tables with the core (core/backends.c
 * calls it). A machine without a GPU or without a driver registers it
 * with no devices, and the reason; an error names a table entry left
 * empty. */
int cuda_backend_init(void);

#ifdef __cplusplus
}
#endif

#endif
