/* The CUDA backend as the rest of moonlab sees it: plain C, no CUDA
 * headers, so that the core and the bindings can include it. Everything
 * else of the backend is reached through the ml_backend table. */
#ifndef ML_CUDA_H
#define ML_CUDA_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Registers the CUDA backend with the core and returns the number of
 * devices. A machine without a GPU or without a driver registers it with
 * no devices (so that cuda:N names a missing device rather than a missing
 * build) and prints nothing. */
int cuda_backend_init(void);

/* Device i's name ("NVIDIA H100 80GB HBM3"), or NULL when it is absent. */
const char *cuda_device_name(int device);

/* The caching allocator of device i: bytes handed out to arrays (rounded
 * up to the allocator's size classes), bytes kept in the cache for reuse,
 * the largest value of `allocated` since start, and the device's total
 * memory. */
typedef struct {
  size_t allocated, cached, peak, total;
} cuda_memory_stats;
int cuda_memory(int device, cuda_memory_stats *out);

/* Returns device i's cached blocks to the driver (cudaFree). */
int cuda_empty_cache(int device);

#ifdef __cplusplus
}
#endif

#endif
