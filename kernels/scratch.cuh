/* Scratch device memory for the length of one launcher, and contiguous
 * copies of strided operands made in it. */
#ifndef ML_CUDA_SCRATCH_CUH
#define ML_CUDA_SCRATCH_CUH

#include "device.cuh"

/* Device memory for the length of one launcher, from the caching
 * allocator; given back when it goes out of scope. Stream order makes the
 * early return safe: later work on the stream runs after the kernels that
 * use it. */
struct cuda_scratch {
  int device = 0;
  void *ptr = nullptr;
  size_t nbytes = 0;
  cuda_scratch() = default;
  cuda_scratch(const cuda_scratch &) = delete;
  cuda_scratch &operator=(const cuda_scratch &) = delete;
  ~cuda_scratch() {
    if (ptr) cuda_free(device, ptr, nbytes);
  }
  int get(int dev, size_t n, const char *op) {
    device = dev;
    nbytes = n;
    if (n == 0) return ML_OK;
    if (cuda_alloc(dev, n, &ptr) == ML_OK) return ML_OK;
    ptr = nullptr;
    return ml_fail(ML_ENOMEM, "cuda: out of memory allocating %zu bytes of scratch for %s on cuda:%d",
                   n, op, dev);
  }
  template <class T> T *as() const { return (T *)ptr; }
};

/* a's data when a is contiguous, else a contiguous copy of a made in tmp
 * (copy.cu). */
int cuda_contiguous(cuda_dev *d, const ml_array *a, cuda_scratch &tmp, const void **data);

/* The n rows of x (cols doubles each, contiguous) as rows of an even
 * number of doubles, 16-byte aligned, for kernels that copy 16 bytes at a
 * time: x itself (*ld = cols), or a copy in pad with a zero column (copy.cu). */
int cuda_aligned_rows(cuda_dev *d, const double *x, int64_t n, int64_t cols, cuda_scratch &pad,
                      const double **rows, int64_t *ld, const char *op);

#endif
