#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../core/status.h"
#include "cpu.h"
#include "strided.h"

/* Blocks of at least this many bytes ask for transparent huge pages, as
 * NumPy's do: first touching fresh memory then faults once per 2 MiB
 * instead of once per 4 KiB, which makes a large result about 3x cheaper. */
#define CPU_HUGEPAGE_MIN ((size_t)4 << 20)

/* Bytes handed out, rounded as allocated, and their peak. Arrays are
 * allocated and freed by the host thread that runs Lua. */
static size_t allocated, peak;

/* 64-byte alignment: whole cache lines, and aligned AVX-512 loads. The
 * block comes from malloc, over-allocated by 64 bytes and aligned by hand
 * with malloc's pointer stored just below it: glibc's aligned_alloc skips
 * its per-thread cache and makes a tiny array several times dearer. */
int cpu_alloc(int device_index, size_t nbytes, void **ptr) {
  (void)device_index;
  size_t rounded = (nbytes + 63) & ~(size_t)63;
  char *raw = malloc(rounded + 64);
  if (!raw) return ML_ENOMEM;
  char *p = (char *)(((uintptr_t)raw + 64) & ~(uintptr_t)63);
  ((void **)p)[-1] = raw;
  *ptr = p;
  allocated += rounded;
  if (allocated > peak) peak = allocated;
#ifdef MADV_HUGEPAGE
  if (rounded >= CPU_HUGEPAGE_MIN) {
    uintptr_t begin = ((uintptr_t)p + 4095) & ~(uintptr_t)4095;
    uintptr_t end = ((uintptr_t)p + rounded) & ~(uintptr_t)4095;
    madvise((void *)begin, end - begin, MADV_HUGEPAGE); /* a hint only */
  }
#endif
  return ML_OK;
}

void cpu_free(int device_index, void *ptr, size_t nbytes) {
  (void)device_index;
  if (!ptr) return;
  free(((void **)ptr)[-1]);
  allocated -= (nbytes + 63) & ~(size_t)63;
}

/* malloc keeps no cache of its own that moonlab could give back. */
int cpu_memory(int device_index, ml_device_memory *out) {
  (void)device_index;
  long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);
  out->allocated = allocated;
  out->cached = 0;
  out->peak = peak;
  out->total = pages > 0 && size > 0 ? (size_t)pages * (size_t)size : 0;
  return ML_OK;
}

int cpu_empty_cache(int device_index) {
  (void)device_index;
  return ML_OK;
}

/* The processor's model name from /proc/cpuinfo, or "cpu". */
int cpu_device_name(int device_index, char *buf, size_t n) {
  (void)device_index;
  snprintf(buf, n, "cpu");
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (!f) return ML_OK;
  char line[512];
  while (fgets(line, sizeof line, f)) {
    char *colon = strchr(line, ':');
    if (strncmp(line, "model name", 10) != 0 || !colon) continue;
    colon += 1 + (colon[1] == ' ');
    colon[strcspn(colon, "\n")] = 0;
    snprintf(buf, n, "%s", colon);
    break;
  }
  fclose(f);
  return ML_OK;
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
