#include <stdlib.h>
#include <string.h>

#include "../core/status.h"
#include "cpu.h"
#include "strided.h"

/* 64-byte alignment: whole cache lines, and aligned AVX-512 loads. */
int cpu_alloc(int device_index, size_t nbytes, void **ptr) {
  (void)device_index;
  size_t rounded = (nbytes + 63) & ~(size_t)63;
  *ptr = aligned_alloc(64, rounded);
  return *ptr ? ML_OK : ML_ENOMEM;
}

void cpu_free(int device_index, void *ptr, size_t nbytes) {
  (void)device_index;
  (void)nbytes;
  free(ptr);
}

static void copy_bytes_run(void *ctx, int64_t n, char *const *ptrs,
                           const int64_t *bs) {
  size_t size = *(const size_t *)ctx;
  if (bs[0] == (int64_t)size && bs[1] == (int64_t)size) {
    memcpy(ptrs[0], ptrs[1], (size_t)n * size);
    return;
  }
  for (int64_t i = 0; i < n; i++)
    memcpy(ptrs[0] + i * bs[0], ptrs[1] + i * bs[1], size);
}

/* Copies between a strided view and a C-order host buffer by pairing the
 * view with a contiguous view of the host bytes. */
static int host_transfer(const ml_array *view, void *host, int to_host) {
  ml_storage s = {1, ml_cpu(), ml_array_nbytes(view), host};
  ml_array flat = *view;
  flat.storage = &s;
  flat.offset = 0;
  ml_contiguous_strides(flat.ndim, flat.shape, flat.strides);
  size_t size = ml_dtype_size(view->dtype);
  const ml_array *ops[2] = {to_host ? &flat : view, to_host ? view : &flat};
  return cpu_foreach(2, ops, copy_bytes_run, &size);
}

int cpu_upload(const ml_array *dst, const void *host) {
  return host_transfer(dst, (void *)host, 0);
}

int cpu_download(void *host, const ml_array *src) {
  return host_transfer(src, host, 1);
}

int cpu_synchronize(int device_index) {
  (void)device_index;
  return ML_OK;
}
