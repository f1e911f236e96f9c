/* Indexing: index_select, gather, scatter, masked_select, and index_add.
 *
 * CPU reference: src/cpu/cpu_index.c and cpu_index_add.c. All but index_add
 * move elements, so their kernels copy 1, 4 or 8 bytes whatever the dtype. Indices are 1-based int64,
 * negative ones counting from the end (ml_index_base0). A bad index (0,
 * above size or below -size) is skipped and its position in the index array
 * (C order) goes into the device's flag word by atomicMin; the launcher
 * reads the flag back (a synchronization, accepted for these operations)
 * and reports the first bad index in C order, with the CPU's message:
 * "gather: index 11 is out of bounds for dimension 2 with size 10". */
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>

#include <type_traits>

#include "launch.cuh"
#include "iter.cuh"
#include "scratch.cuh"

#define NO_BAD_INDEX 0xFFFFFFFFFFFFFFFFull

/* f(offsets, i) for every element i (C order) of the iteration. Shapes:
 * any, up to 8 coalesced dimensions. */
template <int N, class Idx, class F>
__global__ void each_element(Iter<N> it, Idx n, F f) {
  Idx step = (Idx)gridDim.x * blockDim.x;
  for (Idx i = (Idx)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
    int64_t off[N];
    iter_offsets<N, Idx>(it, i, off);
    f(off, (int64_t)i);
  }
}

template <int N, class F>
static int each_launch(cuda_dev *d, const Iter<N> &it, int64_t n, const F &f, const char *op) {
  if (n <= 0) return ML_OK;
  if (n < INT32_MAX)
    return cuda_launch<each_element<N, uint32_t, F>>(d, grid_for(n, 256, d), 256, 0, op, it,
                                                     (uint32_t)n, f);
  return cuda_launch<each_element<N, uint64_t, F>>(d, grid_for(n, 256, d), 256, 0, op, it,
                                                   (uint64_t)n, f);
}

static int flag_reset(cuda_dev *d, const char *op) {
  return cuda_check(cudaMemsetAsync(d->flag, 0xFF, sizeof *d->flag, d->stream), op);
}

/* Waits for the stream; then the error for the first bad index, if any. */
static int flag_report(cuda_dev *d, const char *op, const ml_array *index, int dim,
                       int64_t size) {
  int rc = cuda_check(cudaMemcpyAsync(d->flag_host, d->flag, sizeof *d->flag,
                                      cudaMemcpyDeviceToHost, d->stream),
                      op);
  if (!rc) rc = cuda_check(cudaStreamSynchronize(d->stream), op);
  if (rc || *d->flag_host == NO_BAD_INDEX) return rc;
  int64_t at = index->offset, rest = (int64_t)*d->flag_host;
  for (int k = index->ndim - 1; k >= 0; k--) {
    at += rest % index->shape[k] * index->strides[k];
    rest /= index->shape[k];
  }
  int64_t bad;
  rc = cuda_check(cudaMemcpy(&bad, (const int64_t *)index->storage->data + at, sizeof bad,
                             cudaMemcpyDeviceToHost),
                  op);
  if (rc) return rc;
  return ml_fail(ML_EINVAL, "%s: index %lld is out of bounds for dimension %d with size %lld",
                 op, (long long)bad, dim + 1, (long long)size);
}

/* ---- index_select and gather ---- */

/* out[off0] = in[off1 + k * step], k the 0-based index[off2], in seen at
 * out's shape
 * with stride 0 along dim. check: flag bad indices (gather; index_select
 * checks its 1-D index beforehand). */
template <class U> struct Gather {
  U *o;
  const U *in;
  const int64_t *index;
  int64_t size, step;
  unsigned long long *flag;
  int check;
  __device__ __forceinline__ void operator()(const int64_t (&off)[3], int64_t i) const {
    uint64_t k = ml_index_base0(index[off[2]], size);
    if (k >= (uint64_t)size) {
      if (check) atomicMin(flag, (unsigned long long)i);
      return;
    }
    o[off[0]] = in[off[1] + (int64_t)k * step];
  }
};

/* The positions of the bad entries of a 1-D index. */
__global__ void check_index(const int64_t *index, int64_t n, int64_t stride, int64_t size,
                            unsigned long long *flag) {
  int64_t step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step)
    if (ml_index_base0(index[i * stride], size) >= (uint64_t)size)
      atomicMin(flag, (unsigned long long)i);
}

template <class U>
static int gather_sized(cuda_dev *d, const ml_array *out, const ml_array *in, int dim,
                        const ml_array *index_view, int check, const char *op) {
  ml_array src = *in; /* borrowed: in at dim index 0, at out's shape */
  for (int k = 0; k < out->ndim; k++) src.shape[k] = out->shape[k];
  src.strides[dim] = 0;
  const ml_array *ops[3] = {out, &src, index_view};
  Iter<3> it = iter_of<3>(ops);
  Gather<U> f{array_ptr<U>(out), array_ptr<const U>(in), array_ptr<const int64_t>(index_view),
              in->shape[dim], in->strides[dim], d->flag, check};
  return each_launch(d, it, ml_array_numel(out), f, op);
}

static int gather_any(cuda_dev *d, const ml_array *out, const ml_array *in, int dim,
                      const ml_array *index_view, int check, const char *op) {
  switch (ml_dtype_size(out->dtype)) {
    case 1: return gather_sized<uint8_t>(d, out, in, dim, index_view, check, op);
    case 4: return gather_sized<uint32_t>(d, out, in, dim, index_view, check, op);
    default: return gather_sized<uint64_t>(d, out, in, dim, index_view, check, op);
  }
}

extern "C" int cuda_index_select(const ml_array *out, const ml_array *in, int dim,
                                 const ml_array *index) {
  cuda_dev *d;
  int rc = cuda_enter(array_device(out), &d);
  int64_t n = ml_array_numel(index), size = in->shape[dim];
  if (rc || n == 0) return rc;
  rc = flag_reset(d, "index_select");
  if (rc) return rc;
  rc = cuda_launch<check_index>(d, grid_for(n, 256, d), 256, 0, "index_select",
                                array_ptr<const int64_t>(index), n, index->strides[0], size,
                                d->flag);
  if (rc) return rc;
  ml_array iv = *index; /* borrowed: the 1-D index laid along dim */
  iv.ndim = out->ndim;
  for (int k = 0; k < out->ndim; k++) {
    iv.shape[k] = out->shape[k];
    iv.strides[k] = k == dim ? index->strides[0] : 0;
  }
  if (ml_array_numel(out) > 0) rc = gather_any(d, out, in, dim, &iv, 0, "index_select");
  return rc ? rc : flag_report(d, "index_select", index, dim, size);
}

extern "C" int cuda_gather(const ml_array *out, const ml_array *in, int dim,
                           const ml_array *index) {
  cuda_dev *d;
  int rc = cuda_enter(array_device(out), &d);
  if (rc || ml_array_numel(out) == 0) return rc;
  rc = flag_reset(d, "gather");
  if (!rc) rc = gather_any(d, out, in, dim, index, 1, "gather");
  return rc ? rc : flag_report(d, "gather", index, dim, in->shape[dim]);
}

/* ---- scatter ----
 * One thread per line of the index along dim, walking it in order, so that
 * of duplicate indices the last one wins, as on the CPU, with no atomics.
 * Operands of the iteration (the index's shape without dim): out at dim
 * index 0, index, src, and the index's C-order positions. */
template <class U> struct Scatter {
  U *o;
  const int64_t *index;
  const U *src;
  int64_t size, len, ostep, istep, sstep, pstep;
  unsigned long long *flag;
  __device__ __forceinline__ void operator()(const int64_t (&off)[4], int64_t) const {
    for (int64_t j = 0; j < len; j++) {
      uint64_t k = ml_index_base0(index[off[1] + j * istep], size);
      if (k >= (uint64_t)size) {
        atomicMin(flag, (unsigned long long)(off[3] + j * pstep));
        continue;
      }
      o[off[0] + (int64_t)k * ostep] = src[off[2] + j * sstep];
    }
  }
};

template <class U>
static int scatter_sized(cuda_dev *d, const ml_array *out, int dim, const ml_array *index,
                         const ml_array *src) {
  int nd = index->ndim;
  int64_t shape[ML_MAX_DIMS] = {0}, pos[ML_MAX_DIMS] = {0};
  ml_contiguous_strides(nd, index->shape, pos);
  for (int k = 0; k < nd; k++) shape[k] = k == dim ? 1 : index->shape[k];
  const int64_t *strides[4] = {out->strides, index->strides, src->strides, pos};
  Iter<4> it = iter_make<4>(nd, shape, strides);
  int64_t lines = 1;
  for (int k = 0; k < nd; k++) lines *= shape[k];
  Scatter<U> f{array_ptr<U>(out), array_ptr<const int64_t>(index), array_ptr<const U>(src),
               out->shape[dim], index->shape[dim], out->strides[dim], index->strides[dim],
               src->strides[dim], pos[dim], d->flag};
  return each_launch(d, it, lines, f, "scatter");
}

extern "C" int cuda_scatter(const ml_array *out, int dim, const ml_array *index,
                            const ml_array *src) {
  cuda_dev *d;
  int rc = cuda_enter(array_device(out), &d);
  if (rc || ml_array_numel(index) == 0) return rc;
  rc = flag_reset(d, "scatter");
  if (rc) return rc;
  switch (ml_dtype_size(out->dtype)) {
    case 1: rc = scatter_sized<uint8_t>(d, out, dim, index, src); break;
    case 4: rc = scatter_sized<uint32_t>(d, out, dim, index, src); break;
    default: rc = scatter_sized<uint64_t>(d, out, dim, index, src); break;
  }
  return rc ? rc : flag_report(d, "scatter", index, dim, out->shape[dim]);
}

/* ---- masked_select ----
 * cub::DeviceSelect::Flagged over contiguous copies of in and mask (they
 * are used in place when already contiguous); the order is kept. */
template <class U>
static int select_sized(cuda_dev *d, const ml_array *out, const U *in, const uint8_t *mask,
                        int64_t n) {
  cuda_scratch count, temp;
  int rc = count.get(d->index, sizeof(int64_t), "masked_select");
  if (rc) return rc;
  size_t bytes = 0;
  U *o = array_ptr<U>(out);
  rc = cuda_check(cub::DeviceSelect::Flagged(nullptr, bytes, in, mask, o, count.as<int64_t>(),
                                             n, d->stream),
                  "masked_select");
  if (!rc) rc = temp.get(d->index, bytes, "masked_select");
  if (!rc)
    rc = cuda_check(cub::DeviceSelect::Flagged(temp.ptr, bytes, in, mask, o,
                                               count.as<int64_t>(), n, d->stream),
                    "masked_select");
  return rc;
}

extern "C" int cuda_masked_select(const ml_array *out, const ml_array *in,
                                  const ml_array *mask) {
  cuda_dev *d;
  int rc = cuda_enter(array_device(in), &d);
  int64_t n = ml_array_numel(in);
  if (rc || n == 0 || ml_array_numel(out) == 0) return rc;
  cuda_scratch tin, tmask;
  const void *pin, *pmask;
  rc = cuda_contiguous(d, in, tin, &pin);
  if (!rc) rc = cuda_contiguous(d, mask, tmask, &pmask);
  if (rc) return rc;
  const uint8_t *m = (const uint8_t *)pmask;
  switch (ml_dtype_size(in->dtype)) {
    case 1: return select_sized(d, out, (const uint8_t *)pin, m, n);
    case 4: return select_sized(d, out, (const uint32_t *)pin, m, n);
    default: return select_sized(d, out, (const uint64_t *)pin, m, n);
  }
}

/* ---- index_add ----
 * The m source slices are ordered by the slice of out they add to (a
 * stable radix sort of (target, position) pairs), the first place of each
 * target found by a binary search, and then each element of out sums its
 * slices in the order of index, in double for floats and int64 for
 * integers, in runs of ML_INDEX_ADD_RUN (backend.h): a thread per element
 * of out (outer x size x inner) sums the first run of its slices and adds
 * the sums of the others, which a thread each computed before (so that a
 * target of thousands of slices, a large k-means cluster, is not one
 * thread's walk), threads of consecutive columns reading consecutive
 * addresses. No atomics: the CPU's bits, on every run. Shapes: size and m
 * under 2^32. */

/* The 0-based targets of the index and the positions 0..m-1; a bad index
 * is flagged and sorts last. */
__global__ void add_targets(const int64_t *index, int64_t m, int64_t size, uint32_t *rows,
                            uint32_t *pos, unsigned long long *flag) {
  int64_t step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < m; i += step) {
    uint64_t r = ml_index_base0(index[i], size);
    if (r >= (uint64_t)size) {
      atomicMin(flag, (unsigned long long)i);
      r = (uint64_t)size;
    }
    rows[i] = (uint32_t)r;
    pos[i] = (uint32_t)i;
  }
}

/* start[r] = the first place of target r in the sorted rows, r <= size. */
__global__ void add_starts(const uint32_t *rows, int64_t m, int64_t size, int64_t *start) {
  int64_t step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; r <= size; r += step) {
    int64_t lo = 0, hi = m;
    while (lo < hi) {
      int64_t mid = (lo + hi) / 2;
      if (rows[mid] < (uint32_t)r)
        lo = mid + 1;
      else
        hi = mid;
    }
    start[r] = lo;
  }
}

/* A thread sums a run of slices in order, but loads ADD_AHEAD of them at
 * once. */
#define ADD_AHEAD 8

template <class T>
using add_acc = typename std::conditional<std::is_floating_point<T>::value, double, uint64_t>::type;

/* acc plus the slices order[t0..t1) of column base (src's at o and c). */
template <class T>
__device__ __forceinline__ add_acc<T> add_run(add_acc<T> acc, const T *base, int64_t inner,
                                             const uint32_t *order, int64_t t0, int64_t t1) {
  using A = add_acc<T>;
  int64_t t = t0;
  for (; t + ADD_AHEAD <= t1; t += ADD_AHEAD) { /* the loads in flight together */
    T x[ADD_AHEAD];
#pragma unroll
    for (int u = 0; u < ADD_AHEAD; u++) x[u] = base[(int64_t)order[t + u] * inner];
#pragma unroll
    for (int u = 0; u < ADD_AHEAD; u++)
      acc += std::is_floating_point<T>::value ? (A)x[u] : (A)(int64_t)x[u];
  }
  for (; t < t1; t++) {
    T x = base[(int64_t)order[t] * inner];
    acc += std::is_floating_point<T>::value ? (A)x : (A)(int64_t)x;
  }
  return acc;
}

/* The runs of target r beyond its first: extra[r], and 0 at r = size. */
__global__ void add_run_counts(const int64_t *start, int64_t size, int64_t *extra) {
  int64_t step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; r <= size; r += step) {
    const int64_t c = r < size ? start[r + 1] - start[r] : 0;
    extra[r] = c > ML_INDEX_ADD_RUN ? (c - 1) / ML_INDEX_ADD_RUN : 0;
  }
}

/* The sums of the runs after the first (xstart: extra's exclusive sums,
 * xstart[size] of them in all, at most xmax): run x of all targets' extra
 * runs, at o and column c, into part[(o xmax + x) inner + c]. */
template <class T>
__global__ void add_runs(add_acc<T> *part, const T *src, int64_t n, int64_t size, int64_t m,
                         int64_t inner, int64_t xmax, const int64_t *start,
                         const uint32_t *order, const int64_t *xstart) {
  int64_t step = (int64_t)gridDim.x * blockDim.x;
  const int64_t total = xstart[size];
  for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < n; e += step) {
    const int64_t c = e % inner, q = e / inner, x = q % xmax, o = q / xmax;
    if (x >= total) continue;
    /* the target: the last r with xstart[r] <= x */
    int64_t lo = 0, hi = size;
    while (hi - lo > 1) {
      const int64_t mid = (lo + hi) / 2;
      if (xstart[mid] <= x)
        lo = mid;
      else
        hi = mid;
    }
    const int64_t t0 = start[lo] + (x - xstart[lo] + 1) * ML_INDEX_ADD_RUN;
    const int64_t t1 = t0 + ML_INDEX_ADD_RUN < start[lo + 1] ? t0 + ML_INDEX_ADD_RUN : start[lo + 1];
    part[e] = add_run<T>(add_acc<T>(0), src + o * m * inner + c, inner, order, t0, t1);
  }
}

template <class T>
__global__ void add_slices(T *out, const T *src, int64_t n, int64_t size, int64_t m, int64_t inner,
                           const int64_t *start, const uint32_t *order, int64_t xmax,
                           const int64_t *xstart, const add_acc<T> *part) {
  using A = add_acc<T>;
  int64_t step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < n; e += step) {
    const int64_t c = e % inner, q = e / inner, r = q % size, o = q / size;
    const int64_t t0 = start[r], t1 = start[r + 1];
    if (t0 == t1) continue;
    A acc = std::is_floating_point<T>::value ? A(0) : (A)(int64_t)out[e];
    acc = add_run<T>(acc, src + o * m * inner + c, inner, order, t0,
                     t1 - t0 > ML_INDEX_ADD_RUN ? t0 + ML_INDEX_ADD_RUN : t1);
    if (t1 - t0 > ML_INDEX_ADD_RUN)
      for (int64_t x = xstart[r]; x < xstart[r + 1]; x++) acc += part[(o * xmax + x) * inner + c];
    if constexpr (std::is_floating_point<T>::value)
      out[e] = (T)((double)out[e] + acc);
    else
      out[e] = (T)acc;
  }
}

template <class T>
static int add_typed(cuda_dev *d, const ml_array *out, int dim, const ml_array *index,
                     const ml_array *src) {
  int64_t size = out->shape[dim], m = src->shape[dim], inner = 1, n = ml_array_numel(out);
  for (int k = dim + 1; k < out->ndim; k++) inner *= out->shape[k];
  if (size >= (int64_t)UINT32_MAX || m >= (int64_t)UINT32_MAX)
    return ml_fail(ML_EINVAL, "index_add: %lld indices into %lld slices exceed the GPU's 2^32",
                   (long long)m, (long long)size);
  const char *op = "index_add";
  cuda_scratch rows, pos, srows, order, start, temp;
  int rc = rows.get(d->index, (size_t)m * 4, op);
  if (!rc) rc = pos.get(d->index, (size_t)m * 4, op);
  if (!rc) rc = srows.get(d->index, (size_t)m * 4, op);
  if (!rc) rc = order.get(d->index, (size_t)m * 4, op);
  if (!rc) rc = start.get(d->index, (size_t)(size + 1) * sizeof(int64_t), op);
  if (!rc) rc = flag_reset(d, op);
  if (!rc)
    rc = cuda_launch<add_targets>(d, grid_for(m, 256, d), 256, 0, op,
                                  array_ptr<const int64_t>(index), m, size, rows.as<uint32_t>(),
                                  pos.as<uint32_t>(), d->flag);
  int bits = 1;
  while (bits < 32 && ((uint64_t)1 << bits) <= (uint64_t)size) bits++;
  size_t bytes = 0;
  if (!rc)
    rc = cuda_check(cub::DeviceRadixSort::SortPairs(nullptr, bytes, rows.as<uint32_t>(),
                                                    srows.as<uint32_t>(), pos.as<uint32_t>(),
                                                    order.as<uint32_t>(), m, 0, bits, d->stream),
                    op);
  if (!rc) rc = temp.get(d->index, bytes, op);
  if (!rc)
    rc = cuda_check(cub::DeviceRadixSort::SortPairs(temp.ptr, bytes, rows.as<uint32_t>(),
                                                    srows.as<uint32_t>(), pos.as<uint32_t>(),
                                                    order.as<uint32_t>(), m, 0, bits, d->stream),
                    op);
  if (!rc)
    rc = cuda_launch<add_starts>(d, grid_for(size + 1, 256, d), 256, 0, op,
                                 srows.as<const uint32_t>(), m, size, start.as<int64_t>());
  /* the runs after the first: at most m / ML_INDEX_ADD_RUN in all */
  const int64_t xmax = m / ML_INDEX_ADD_RUN, outer = ml_array_numel(src) / (m * inner);
  cuda_scratch extra, xstart, part, scan_temp;
  if (!rc && xmax > 0) {
    rc = extra.get(d->index, (size_t)(size + 1) * sizeof(int64_t), op);
    if (!rc) rc = xstart.get(d->index, (size_t)(size + 1) * sizeof(int64_t), op);
    if (!rc) rc = part.get(d->index, (size_t)(outer * xmax * inner) * sizeof(add_acc<T>), op);
    if (!rc)
      rc = cuda_launch<add_run_counts>(d, grid_for(size + 1, 256, d), 256, 0, op,
                                       start.as<const int64_t>(), size, extra.as<int64_t>());
    size_t scan_bytes = 0;
    if (!rc)
      rc = cuda_check(cub::DeviceScan::ExclusiveSum(nullptr, scan_bytes, extra.as<int64_t>(),
                                                    xstart.as<int64_t>(), size + 1, d->stream),
                      op);
    if (!rc) rc = scan_temp.get(d->index, scan_bytes, op);
    if (!rc)
      rc = cuda_check(cub::DeviceScan::ExclusiveSum(scan_temp.ptr, scan_bytes,
                                                    extra.as<int64_t>(), xstart.as<int64_t>(),
                                                    size + 1, d->stream),
                      op);
    const int64_t runs = outer * xmax * inner;
    if (!rc)
      rc = cuda_launch<add_runs<T>>(d, grid_for(runs, 256, d), 256, 0, op,
                                    part.as<add_acc<T>>(), array_ptr<const T>(src), runs, size,
                                    m, inner, xmax, start.as<const int64_t>(),
                                    order.as<const uint32_t>(), xstart.as<const int64_t>());
  }
  if (!rc)
    rc = cuda_launch<add_slices<T>>(d, grid_for(n, 256, d), 256, 0, op, array_ptr<T>(out),
                                    array_ptr<const T>(src), n, size, m, inner,
                                    start.as<const int64_t>(), order.as<const uint32_t>(), xmax,
                                    xstart.as<const int64_t>(), part.as<const add_acc<T>>());
  return rc ? rc : flag_report(d, op, index, dim, size);
}

extern "C" int cuda_index_add(const ml_array *out, int dim, const ml_array *index,
                              const ml_array *src) {
  cuda_dev *d;
  int rc = cuda_enter(array_device(out), &d);
  if (rc || ml_array_numel(src) == 0) return rc;
  switch (out->dtype) {
    case ML_UINT8: return add_typed<uint8_t>(d, out, dim, index, src);
    case ML_INT32: return add_typed<int32_t>(d, out, dim, index, src);
    case ML_INT64: return add_typed<int64_t>(d, out, dim, index, src);
    case ML_FLOAT32: return add_typed<float>(d, out, dim, index, src);
    default: return add_typed<double>(d, out, dim, index, src);
  }
}
