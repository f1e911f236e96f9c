/* The CUDA backend's devices (cuda_backend.cu): per-device state, and
 * entering a device before queueing work on it.
 *
 * Every array an entry receives lives on one device (the core checked);
 * its work is queued on that device's one stream and nothing waits for it
 * except downloads, reads of values, and the launchers that must learn a
 * result on the host (index bounds, selection counts). Small elementwise
 * operations wait on the host in a per-device batch (elementwise_batch.cuh)
 * until another entry flushes it. */
#ifndef ML_CUDA_DEVICE_CUH
#define ML_CUDA_DEVICE_CUH

#include <cuda_runtime.h>
#include <stdint.h>

#include "check.cuh"

typedef struct cuda_dev {
  int ready, index;
  cudaStream_t stream;
  int sms;
  int cc; /* compute capability, 10 major + minor */
  /* Two pinned staging buffers used in turn by uploads and downloads;
   * an event marks when the copy that last used each one is done. */
  char *stage[2];
  cudaEvent_t stage_done[2];
  /* A device word the index kernels set on a bad index, and its pinned
   * host mirror. */
  unsigned long long *flag, *flag_host;
  void *blas;   /* cublasHandle_t, made on first use (blas.cu) */
  void *solver; /* cusolverDnHandle_t, likewise (linalg.cu) */
  void *dnn;    /* cudnnHandle_t, likewise (conv.cu) */
  /* Small elementwise operations queued on the host and how many: they
   * reach the stream as one launch. */
  struct cuda_batch *batch;
  int queued;
} cuda_dev;

#define CUDA_STAGE_BYTES ((size_t)8 << 20)

/* Devices of this machine (set once by cuda_backend_init). */
extern int cuda_ndevices;

/* Makes device i current and returns its state, set up on first use, after
 * launching the operations that wait in any device's batch, which keeps the
 * order of work as the host issued it. Every entry calls it before it
 * queues work, except the elementwise ones (cuda_select). */
int cuda_enter(int device, cuda_dev **out);

/* cuda_enter without flushing the batches: for the elementwise entries,
 * which add to their device's batch, or flush it themselves before they
 * launch (cuda_batch_flush). */
int cuda_select(int device, cuda_dev **out);

/* Launches the operations waiting in d's batch (d current), if any. */
int cuda_batch_flush(cuda_dev *d);

/* The number of devices whose batch holds operations. */
extern int cuda_batched_devices;

/* The caching allocator's setup for n devices (alloc.cu). */
int cuda_pools_init(int n);

static inline int array_device(const ml_array *a) {
  return a->storage->device.index;
}

template <class T> static inline T *array_ptr(const ml_array *a) {
  return (T *)ml_array_data(a);
}

#endif
