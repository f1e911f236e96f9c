/* The CUDA backend's general table, its devices and their streams.
 *
 * Each device gets one stream (created with the device's state on first
 * use) on which every entry queues its work asynchronously; only
 * downloads, reads of values and synchronize wait for it. Small
 * elementwise operations wait on the host in a batch until another entry
 * (cuda_enter) or a full batch launches them. The current device is
 * remembered so that a run of work on one device calls cudaSetDevice
 * once. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_backend.h"
#include "launch.cuh"

/* binary.cu: the binary area's table. */
extern "C" {
#include "../src/core/binary_backend.h"
extern const ml_binary_backend cuda_binary_backend;
}

int cuda_ndevices;
int cuda_batched_devices;
PFN_cuLaunchKernel_v4000 cuda_driver_launch;
static PFN_cuGetErrorString_v6000 driver_error_string;

static cuda_dev *devices;
static int current = -1;
static char (*names)[256];

static ml_backend cuda_backend;

int cuda_error(cudaError_t e, const char *op) {
  cudaGetLastError(); /* clears the error unless it is sticky */
  if (e == cudaErrorMemoryAllocation)
    return ml_fail(ML_ENOMEM, "cuda: out of memory in %s", op);
  return ml_fail(ML_EDEVICE, "cuda: %s in %s", cudaGetErrorString(e), op);
}

int cuda_driver_error(CUresult r, const char *op) {
  const char *s = NULL;
  if (r == CUDA_ERROR_OUT_OF_MEMORY) return ml_fail(ML_ENOMEM, "cuda: out of memory in %s", op);
  if (driver_error_string(r, &s) != CUDA_SUCCESS || !s) s = "unknown driver error";
  return ml_fail(ML_EDEVICE, "cuda: %s in %s", s, op);
}

/* The driver function of that name and ABI version, from the runtime. */
static bool driver_function(const char *name, unsigned version, void **fn) {
  cudaDriverEntryPointQueryResult found;
  if (cudaGetDriverEntryPointByVersion(name, fn, version, cudaEnableDefault, &found) ==
          cudaSuccess &&
      found == cudaDriverEntryPointSuccess)
    return true;
  cudaGetLastError();
  return false;
}

static int device_setup(cuda_dev *d, int index) {
  int rc = cuda_check(cudaStreamCreateWithFlags(&d->stream, cudaStreamNonBlocking),
                      "creating a stream");
  int major = 0, minor = 0;
  if (!rc)
    rc = cuda_check(cudaDeviceGetAttribute(&d->sms, cudaDevAttrMultiProcessorCount, index),
                    "reading the device's attributes");
  if (!rc)
    rc = cuda_check(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, index),
                    "reading the device's attributes");
  if (!rc)
    rc = cuda_check(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, index),
                    "reading the device's attributes");
  d->cc = 10 * major + minor;
  if (!rc) rc = cuda_check(cudaMalloc((void **)&d->flag, sizeof *d->flag), "device setup");
  if (!rc)
    rc = cuda_check(cudaHostAlloc((void **)&d->flag_host, sizeof *d->flag_host,
                                  cudaHostAllocDefault),
                    "device setup");
  if (rc) return rc;
  d->index = index;
  d->ready = 1;
  return ML_OK;
}

int cuda_select(int device, cuda_dev **out) {
  cuda_dev *d = &devices[device];
  if (device != current) {
    int rc = cuda_check(cudaSetDevice(device), "selecting the device");
    if (rc) return rc;
    current = device;
  }
  if (!d->ready) {
    int rc = device_setup(d, device);
    if (rc) return rc;
  }
  *out = d;
  return ML_OK;
}

int cuda_enter(int device, cuda_dev **out) {
  for (int i = 0; cuda_batched_devices > 0 && i < cuda_ndevices; i++) {
    if (!devices[i].queued) continue;
    cuda_dev *d;
    int rc = cuda_select(i, &d);
    if (!rc) rc = cuda_batch_flush(d);
    if (rc) return rc;
  }
  return cuda_select(device, out);
}

extern "C" int cuda_synchronize(int device) {
  cuda_dev *d;
  int rc = cuda_enter(device, &d);
  return rc ? rc : cuda_check(cudaStreamSynchronize(d->stream), "synchronize");
}

extern "C" int cuda_device_name(int device, char *buf, size_t n) {
  if (!names[device][0]) {
    cudaDeviceProp prop;
    int rc = cuda_check(cudaGetDeviceProperties(&prop, device), "device_name");
    if (rc) return rc;
    snprintf(names[device], sizeof names[device], "%s", prop.name);
  }
  snprintf(buf, n, "%s", names[device]);
  return ML_OK;
}

/* The number of usable devices, or 0 and why not. */
static int count_devices(const char **why) {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    cudaGetLastError();
    *why = cudaGetErrorString(e);
    return 0;
  }
  if (n == 0) *why = "the driver reports no device";
  if (n > 0 && !(driver_function("cuLaunchKernel", 4000, (void **)&cuda_driver_launch) &&
                 driver_function("cuGetErrorString", 6000, (void **)&driver_error_string))) {
    *why = "the driver lacks cuLaunchKernel or cuGetErrorString";
    return 0;
  }
  devices = (cuda_dev *)calloc(n > 0 ? n : 1, sizeof *devices);
  names = (char (*)[256])calloc(n > 0 ? n : 1, sizeof *names);
  if (!devices || !names || cuda_pools_init(n) != ML_OK) {
    *why = "out of host memory for the devices' state";
    return 0;
  }
  return n;
}

extern "C" int cuda_backend_init(void) {
  const char *why = NULL;
  int n = count_devices(&why);
  cuda_ndevices = n;

  ml_backend *b = &cuda_backend;
  b->name = "cuda";
  b->tf32 = 1;
  b->alloc = cuda_alloc;
  b->free = cuda_free;
  b->memory = cuda_memory;
  b->empty_cache = cuda_empty_cache;
  b->device_name = cuda_device_name;
  b->upload = cuda_upload;
  b->download = cuda_download;
  b->synchronize = cuda_synchronize;
  b->copy = cuda_copy;
  b->fill = cuda_fill;
  b->iota = cuda_iota;
  b->unary = cuda_unary;
  b->binary = cuda_binary;
  b->binary_scalar = cuda_binary_scalar;
  b->where = cuda_where;
  b->reduce = cuda_reduce;
  b->cumsum = cuda_cumsum;
  b->cumprod = cuda_cumprod;
  b->softmax = cuda_softmax;
  b->gemm = cuda_gemm;
  b->index_select = cuda_index_select;
  b->index_add = cuda_index_add;
  b->gather = cuda_gather;
  b->scatter = cuda_scatter;
  b->masked_select = cuda_masked_select;
  b->sort = cuda_sort;
  b->topk = cuda_topk;
  b->searchsorted = cuda_searchsorted;
  b->histogram = cuda_histogram;
  b->bincount = cuda_bincount;
  b->random = cuda_random;
  int rc = ml_backend_register(ML_CUDA, b, n, n > 0 ? NULL : why);
  if (!rc) rc = ml_knn_backend_register(ML_CUDA, &cuda_knn_backend);
  if (!rc) rc = ml_linalg_backend_register(ML_CUDA, &cuda_linalg_backend);
  if (!rc) rc = ml_conv_backend_register(ML_CUDA, &cuda_conv_backend);
  if (!rc) rc = ml_filter_backend_register(ML_CUDA, &cuda_filter_backend);
  if (!rc) rc = ml_binary_backend_register(ML_CUDA, &cuda_binary_backend);
  if (!rc) rc = ml_dist_backend_register(ML_CUDA, &cuda_dist_backend);
  return rc;
}
