/* Transfers between the host and a device, strided copies with dtype
 * conversion, fills and ranges.
 *
 * CPU reference: src/cpu/cpu_memory.c and src/cpu/cpu_copy.c, whose
 * conversion rules these kernels follow bit for bit: integer to integer
 * through int64 (wrapping), float to integer through double truncated
 * toward zero with NaN as 0 and saturation at the int64 limits, then
 * wrapping; anything to float through double. */
#include <string.h>

#include <type_traits>

#include "map.cuh"
#include "scratch.cuh"

/* ---- host <-> device through pinned staging ---- */

/* The two pinned buffers and their events, made on the first transfer. */
static int stage_setup(cuda_dev *d) {
  if (d->stage[0]) return ML_OK;
  for (int k = 0; k < 2; k++) {
    int rc = cuda_check(cudaHostAlloc((void **)&d->stage[k], CUDA_STAGE_BYTES,
                                      cudaHostAllocDefault),
                        "allocating pinned staging");
    if (!rc)
      rc = cuda_check(cudaEventCreateWithFlags(&d->stage_done[k], cudaEventDisableTiming),
                      "allocating pinned staging");
    if (rc) {
      for (int j = 0; j <= k; j++)
        if (d->stage[j]) cudaFreeHost(d->stage[j]);
      d->stage[0] = d->stage[1] = nullptr;
      return rc;
    }
  }
  return ML_OK;
}

/* Host bytes to device memory: each chunk is copied into a staging buffer
 * (once the copy that last read it is done) and queued; the host buffer
 * may be reused as soon as this returns, without waiting for the device. */
static int staged_upload(cuda_dev *d, char *dst, const char *host, size_t n) {
  int rc = stage_setup(d);
  for (size_t off = 0, k = 0; !rc && off < n; off += CUDA_STAGE_BYTES, k ^= 1) {
    size_t len = n - off;
    if (len > CUDA_STAGE_BYTES) len = CUDA_STAGE_BYTES;
    rc = cuda_check(cudaEventSynchronize(d->stage_done[k]), "upload");
    if (rc) break;
    memcpy(d->stage[k], host + off, len);
    rc = cuda_check(cudaMemcpyAsync(dst + off, d->stage[k], len, cudaMemcpyHostToDevice,
                                    d->stream),
                    "upload");
    if (!rc) rc = cuda_check(cudaEventRecord(d->stage_done[k], d->stream), "upload");
  }
  return rc;
}

/* Device memory to host bytes: chunk c + 1 is queued before chunk c
 * leaves its staging buffer, so the transfer and the host copy overlap.
 * Waits for everything queued before it on the stream. */
static int staged_download(cuda_dev *d, char *host, const char *src, size_t n) {
  int rc = stage_setup(d);
  size_t chunks = (n + CUDA_STAGE_BYTES - 1) / CUDA_STAGE_BYTES;
  for (size_t c = 0; !rc && c <= chunks; c++) {
    if (c < chunks) {
      size_t off = c * CUDA_STAGE_BYTES, len = n - off;
      if (len > CUDA_STAGE_BYTES) len = CUDA_STAGE_BYTES;
      rc = cuda_check(cudaMemcpyAsync(d->stage[c & 1], src + off, len,
                                      cudaMemcpyDeviceToHost, d->stream),
                      "download");
      if (!rc) rc = cuda_check(cudaEventRecord(d->stage_done[c & 1], d->stream), "download");
    }
    if (!rc && c > 0) {
      size_t off = (c - 1) * CUDA_STAGE_BYTES, len = n - off;
      if (len > CUDA_STAGE_BYTES) len = CUDA_STAGE_BYTES;
      rc = cuda_check(cudaEventSynchronize(d->stage_done[(c - 1) & 1]), "download");
      if (!rc) memcpy(host + off, d->stage[(c - 1) & 1], len);
    }
  }
  return rc;
}

/* A contiguous view of a's shape over the scratch bytes. */
static ml_array contiguous_view(const ml_array *a, ml_storage *s, void *data) {
  s->refcount = 1;
  s->device = a->storage->device;
  s->nbytes = ml_array_nbytes(a);
  s->data = data;
  ml_array v = *a;
  v.storage = s;
  v.offset = 0;
  ml_contiguous_strides(v.ndim, v.shape, v.strides);
  return v;
}

extern "C" int cuda_upload(const ml_array *dst, const void *host) {
  cuda_dev *d;
  int rc = cuda_enter(array_device(dst), &d);
  size_t n = ml_array_nbytes(dst);
  if (rc || n == 0) return rc;
  if (ml_array_is_contiguous(dst))
    return staged_upload(d, (char *)ml_array_data(dst), (const char *)host, n);
  cuda_scratch tmp;
  rc = tmp.get(d->index, n, "upload");
  if (!rc) rc = staged_upload(d, tmp.as<char>(), (const char *)host, n);
  if (rc) return rc;
  ml_storage s;
  ml_array src = contiguous_view(dst, &s, tmp.ptr);
  return cuda_copy(dst, &src);
}

int cuda_contiguous(cuda_dev *d, const ml_array *a, cuda_scratch &tmp, const void **data) {
  if (ml_array_is_contiguous(a)) {
    *data = ml_array_data(a);
    return ML_OK;
  }
  int rc = tmp.get(d->index, ml_array_nbytes(a), "copy");
  if (rc) return rc;
  ml_storage s;
  ml_array dst = contiguous_view(a, &s, tmp.ptr);
  *data = tmp.ptr;
  return cuda_copy(&dst, a);
}

int cuda_aligned_rows(cuda_dev *d, const double *x, int64_t n, int64_t cols, cuda_scratch &pad,
                      const double **rows, int64_t *ld, const char *op) {
  if (cols % 2 == 0 && (uintptr_t)x % 16 == 0) {
    *rows = x;
    *ld = cols;
    return ML_OK;
  }
  *ld = cols + cols % 2;
  int rc = pad.get(d->index, (size_t)(n * *ld) * sizeof(double), op);
  if (!rc) rc = cuda_check(cudaMemsetAsync(pad.ptr, 0, pad.nbytes, d->stream), op);
  if (!rc)
    rc = cuda_check(cudaMemcpy2DAsync(pad.ptr, (size_t)*ld * sizeof(double), x,
                                      (size_t)cols * sizeof(double), (size_t)cols * sizeof(double),
                                      (size_t)n, cudaMemcpyDeviceToDevice, d->stream),
                    op);
  *rows = pad.as<const double>();
  return rc;
}

extern "C" int cuda_download(void *host, const ml_array *src) {
  cuda_dev *d;
  int rc = cuda_enter(array_device(src), &d);
  size_t n = ml_array_nbytes(src);
  if (rc || n == 0) return rc;
  cuda_scratch tmp;
  const void *data;
  rc = cuda_contiguous(d, src, tmp, &data);
  return rc ? rc : staged_download(d, (char *)host, (const char *)data, n);
}

/* ---- conversions ---- */

/* ml_scalar_to_int64's rule: NaN to 0, saturating, else truncation. */
__device__ __forceinline__ int64_t float_to_int64(double v) {
  if (v != v) return 0;
  if (v >= 9223372036854775807.0) return INT64_MAX;
  if (v <= -9223372036854775808.0) return INT64_MIN;
  return (int64_t)v;
}

/* C's conversion as the CPU backend applies it (see the file comment). */
template <class To, class From> struct Convert {
  __device__ __forceinline__ To operator()(From x) const {
    if constexpr (std::is_floating_point<To>::value)
      return (To)(double)x;
    else if constexpr (std::is_integral<From>::value)
      return (To)(int64_t)x;
    else
      return (To)float_to_int64((double)x);
  }
};

/* Moves elements of one size unchanged (same-dtype copies and fills). */
template <class U> struct Same {
  __device__ __forceinline__ U operator()(U x) const { return x; }
};

template <class To, class From>
static int convert(cuda_dev *d, const ml_array *dst, const ml_array *src) {
  const ml_array *ops[2] = {dst, src};
  Iter<2> it = iter_of<2>(ops);
  Map1<Convert<To, From>, To, From> m;
  m.o = array_ptr<To>(dst);
  m.a = in_array<From>(src, iter_step(it, 1));
  return map_launch(d, it, ml_array_numel(dst), m, "copy");
}

template <class U>
static int move(cuda_dev *d, const ml_array *dst, const ml_array *src) {
  const ml_array *ops[2] = {dst, src};
  Iter<2> it = iter_of<2>(ops);
  Map1<Same<U>, U, U> m;
  m.o = array_ptr<U>(dst);
  m.a = in_array<U>(src, iter_step(it, 1));
  return map_launch(d, it, ml_array_numel(dst), m, "copy");
}

template <class To>
static int convert_from(cuda_dev *d, const ml_array *dst, const ml_array *src) {
  switch (src->dtype) {
    case ML_UINT8: return convert<To, uint8_t>(d, dst, src);
    case ML_INT32: return convert<To, int32_t>(d, dst, src);
    case ML_INT64: return convert<To, int64_t>(d, dst, src);
    case ML_FLOAT32: return convert<To, float>(d, dst, src);
    default: return convert<To, double>(d, dst, src);
  }
}

extern "C" int cuda_copy(const ml_array *dst, const ml_array *src) {
  cuda_dev *d;
  int rc = cuda_enter(array_device(dst), &d);
  if (rc || ml_array_numel(dst) == 0) return rc;
  if (dst->dtype == src->dtype) {
    if (ml_array_is_contiguous(dst) && ml_array_is_contiguous(src))
      return cuda_check(cudaMemcpyAsync(ml_array_data(dst), ml_array_data(src),
                                        ml_array_nbytes(dst), cudaMemcpyDeviceToDevice,
                                        d->stream),
                        "copy");
    switch (ml_dtype_size(dst->dtype)) {
      case 1: return move<uint8_t>(d, dst, src);
      case 4: return move<uint32_t>(d, dst, src);
      default: return move<uint64_t>(d, dst, src);
    }
  }
  switch (dst->dtype) {
    case ML_UINT8: return convert_from<uint8_t>(d, dst, src);
    case ML_INT32: return convert_from<int32_t>(d, dst, src);
    case ML_INT64: return convert_from<int64_t>(d, dst, src);
    case ML_FLOAT32: return convert_from<float>(d, dst, src);
    default: return convert_from<double>(d, dst, src);
  }
}

/* ---- fill ---- */

template <class U>
static int fill_bits(cuda_dev *d, const ml_array *dst, const unsigned char *bytes) {
  U bits;
  memcpy(&bits, bytes, sizeof bits);
  const ml_array *ops[2] = {dst, dst};
  Iter<2> it = iter_of<2>(ops);
  Map1<Same<U>, U, U> m;
  m.o = array_ptr<U>(dst);
  m.a = in_value<U>(bits);
  return map_launch(d, it, ml_array_numel(dst), m, "fill");
}

extern "C" int cuda_fill(const ml_array *dst, ml_scalar value) {
  cuda_dev *d;
  int rc = cuda_enter(array_device(dst), &d);
  if (rc || ml_array_numel(dst) == 0) return rc;
  unsigned char bytes[8];
  size_t size = ml_dtype_size(dst->dtype);
  ml_scalar_store(bytes, dst->dtype, value);
  int same = 1;
  for (size_t i = 1; i < size; i++) same &= bytes[i] == bytes[0];
  if (same && ml_array_is_contiguous(dst))
    return cuda_check(cudaMemsetAsync(ml_array_data(dst), bytes[0], ml_array_nbytes(dst),
                                      d->stream),
                      "fill");
  switch (size) {
    case 1: return fill_bits<uint8_t>(d, dst, bytes);
    case 4: return fill_bits<uint32_t>(d, dst, bytes);
    default: return fill_bits<uint64_t>(d, dst, bytes);
  }
}

/* ---- iota ---- */

/* dst[i] = start + i * step, as the CPU computes it: in double (no fused
 * multiply-add, which would round differently) for float dtypes, in int64
 * then wrapped for integer ones. Shape: contiguous 1-D. */
template <class T>
__global__ void iota_kernel(T *p, int64_t n, double a, double h, int64_t ia,
                            int64_t ih, int is_float) {
  int64_t step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
    if (is_float)
      p[i] = (T)__dadd_rn(a, __dmul_rn((double)i, h));
    else
      p[i] = (T)(int64_t)((uint64_t)ia + (uint64_t)i * (uint64_t)ih);
  }
}

template <class T>
static int iota_typed(cuda_dev *d, const ml_array *dst, ml_scalar start, ml_scalar step) {
  int64_t n = ml_array_numel(dst);
  int is_float = ml_dtype_is_float(dst->dtype);
  return cuda_launch<iota_kernel<T>>(d, grid_for(n, 256, d), 256, 0, "iota", array_ptr<T>(dst), n,
                                     ml_scalar_to_double(start), ml_scalar_to_double(step),
                                     ml_scalar_to_int64(start), ml_scalar_to_int64(step),
                                     is_float);
}

extern "C" int cuda_iota(const ml_array *dst, ml_scalar start, ml_scalar step) {
  cuda_dev *d;
  int rc = cuda_enter(array_device(dst), &d);
  if (rc || ml_array_numel(dst) == 0) return rc;
  switch (dst->dtype) {
    case ML_UINT8: return iota_typed<uint8_t>(d, dst, start, step);
    case ML_INT32: return iota_typed<int32_t>(d, dst, start, step);
    case ML_INT64: return iota_typed<int64_t>(d, dst, start, step);
    case ML_FLOAT32: return iota_typed<float>(d, dst, start, step);
    default: return iota_typed<double>(d, dst, start, step);
  }
}
