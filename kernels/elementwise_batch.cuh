/* Small elementwise operations launched together. A kernel launch costs
 * the host 2-3 us in the driver, far more than the GPU takes for a
 * thousand elements, so an operation on at most BATCH_MAX_ELEMENTS
 * contiguous elements is not launched: its map goes into the device's
 * batch on the host, and the batch is launched as one kernel when it is
 * full or when any other entry queues work on a device (cuda_enter).
 * That kernel runs the operations in the order they came, one after the
 * other in one block, with a barrier between them, so each sees the
 * results of those before it, as on the stream. Nothing can observe an
 * operation before it runs: reads, copies, synchronize and cudaFree all go
 * through cuda_enter.
 *
 * Included by elementwise.cu only: the batch kernel calls each operation
 * through a device function pointer, which must come from the kernel's
 * own module. */
#ifndef ML_CUDA_ELEMENTWISE_BATCH_CUH
#define ML_CUDA_ELEMENTWISE_BATCH_CUH

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <type_traits>

#include "map.cuh"

#define BATCH_RECORDS 32
#define BATCH_MAX_ELEMENTS 1024
#define BATCH_MAP_BYTES 96
#define BATCH_THREADS 256
/* Devices whose function pointers are kept (operations on others launch). */
#define BATCH_DEVICES 16

typedef void (*batch_fn)(const void *map, int64_t n);

struct batch_record {
  batch_fn run;
  int64_t n;
  alignas(16) unsigned char map[BATCH_MAP_BYTES];
};

/* The kernel's parameter: under the 4 KiB that every driver accepts. */
struct cuda_batch {
  batch_record r[BATCH_RECORDS];
};

/* map_flat's work done by one block: the map (any Map1/2/3) copied from
 * the record into registers, V elements a step. */
template <int V, class M> __device__ void map_block(const void *map, int64_t n) {
  const M m = *static_cast<const M *>(map);
  const int64_t nv = n / V;
  for (int64_t v = threadIdx.x; v < nv; v += blockDim.x) m.template vec<V>(v * V);
  if (V > 1 && threadIdx.x < n - nv * V) m.one(nv * V + threadIdx.x);
}

/* The address of map_block<V, M> in device code, read once per device. */
template <int V, class M> __device__ batch_fn map_block_address = map_block<V, M>;

template <int V, class M> static int block_function(const cuda_dev *d, batch_fn *fn) {
  static batch_fn known[BATCH_DEVICES];
  if (!known[d->index]) {
    int rc = cuda_check(cudaMemcpyFromSymbol(&known[d->index], map_block_address<V, M>,
                                             sizeof(batch_fn)),
                        "elementwise batch");
    if (rc) return rc;
  }
  *fn = known[d->index];
  return ML_OK;
}

__global__ void __launch_bounds__(BATCH_THREADS)
    run_batch(const __grid_constant__ cuda_batch b, int count) {
  for (int i = 0; i < count; i++) {
    if (i > 0) __syncthreads();
    b.r[i].run(b.r[i].map, b.r[i].n);
  }
}

/* A failed launch keeps the operations queued, to be launched again by the
 * next entry: until then every entry fails, and none of them reports it as
 * an out-of-memory, which the allocator's callers would take as a reason
 * to collect and retry. */
int cuda_batch_flush(cuda_dev *d) {
  int count = d->queued;
  if (count == 0) return ML_OK;
  if (cuda_launch<run_batch>(d, 1, BATCH_THREADS, 0, "elementwise batch", *d->batch, count)) {
    char why[256];
    snprintf(why, sizeof why, "%s", ml_last_error());
    return ml_fail(ML_EDEVICE, "%s (%d queued elementwise operations on cuda:%d not run)", why,
                   count, d->index);
  }
  d->queued = 0;
  cuda_batched_devices--;
  return ML_OK;
}

/* Adds map m over n contiguous elements to d's batch; launches the batch
 * when it is full. */
template <class M> static int batch_add(cuda_dev *d, int64_t n, const M &m) {
  static_assert(std::is_trivially_copyable<M>::value && alignof(M) <= 16,
                "a map that a batch record holds as bytes");
  constexpr int V = 16 / M::size;
  batch_fn fn;
  int rc = d->queued == BATCH_RECORDS ? cuda_batch_flush(d) : ML_OK;
  if (!rc) rc = V > 1 && m.aligned(V) ? block_function<V, M>(d, &fn) : block_function<1, M>(d, &fn);
  if (rc) return rc;
  if (!d->batch && !(d->batch = (cuda_batch *)malloc(sizeof(cuda_batch))))
    return ml_fail(ML_ENOMEM, "cuda: out of host memory for the elementwise batch");
  batch_record &r = d->batch->r[d->queued];
  r.run = fn;
  r.n = n;
  memcpy(r.map, &m, sizeof m);
  if (d->queued++ == 0) cuda_batched_devices++;
  return d->queued == BATCH_RECORDS ? cuda_batch_flush(d) : ML_OK;
}

/* Runs map m over the iteration it of n elements: through d's batch when
 * it is small and flat, else launched after the batch. */
template <class M>
static int map_queue(cuda_dev *d, const Iter<M::N> &it, int64_t n, const M &m, const char *op) {
  if constexpr (sizeof(M) <= BATCH_MAP_BYTES)
    if (n > 0 && n <= BATCH_MAX_ELEMENTS && d->index < BATCH_DEVICES && iter_all_flat<M::N>(it))
      return batch_add(d, n, m);
  int rc = cuda_batch_flush(d);
  return rc ? rc : map_launch(d, it, n, m, op);
}

#endif
