/* Sort and top-k of each row (the last dimension) of a contiguous array.
 *
 * CPU reference: src/cpu/cpu_sort.c, whose order this is: every value
 * becomes an unsigned key in the order of the values (integers with the
 * sign bit flipped; floats by their bits with negatives inverted, -0 as +0
 * and NaN as the largest key), descending order and the k largest invert
 * the keys, and entries are ordered by (key, position). That order is
 * strict and total, so results are exact and the same on both backends;
 * values are then read back from the input at the chosen positions (so
 * -0 and NaN payloads survive).
 *
 * Sort: keys (32 bits for 1- and 4-byte dtypes, 64 for 8-byte ones) and
 * positions go through CUB's stable radix sorts: DeviceRadixSort for a
 * single row, DeviceSegmentedSort for many (stable: equal keys keep their
 * positions' order). Top-k with k <= 32: see the WarpSelect comment below;
 * larger k (or rows of 2^32 elements or more) sort the rows and keep the
 * first k. */
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_segmented_sort.cuh>

#include "common.cuh"

/* ---- sort ---- */

/* keys[i] = key(in[i]) ^ flip and pos[i] = i's position in its row. */
template <class T>
__global__ void sort_prepare(const T *in, int64_t n, int64_t len, key_type<T> flip,
                             key_type<T> *keys, int64_t *pos) {
  int64_t step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
    keys[i] = sort_key(in[i]) ^ flip;
    pos[i] = i % len;
  }
}

__global__ void row_offsets(int64_t *off, int64_t rows, int64_t len) {
  int64_t step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; r <= rows; r += step)
    off[r] = r * len;
}

/* values[i] = the row's element at pos[i]; idx[i] = pos[i] + 1 (1-based),
 * where idx may be pos itself. Rows of len in, k results per row out. */
template <class T>
__global__ void gather_rows(const T *in, int64_t len, const int64_t *pos, int64_t n, int64_t k,
                            T *values, int64_t *idx) {
  int64_t step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
    int64_t p = pos[i];
    values[i] = in[i / k * len + p];
    idx[i] = p + 1;
  }
}

/* Sorts the rows of in into values and (1-based) indices. */
template <class T>
static int sort_rows(cuda_dev *d, const T *in, int64_t rows, int64_t len, int descending,
                     T *values, int64_t *indices) {
  using K = key_type<T>;
  const char *op = "sort";
  int64_t n = rows * len;
  cuda_scratch keys, sorted, pos, offsets, temp;
  int rc = keys.get(d->index, (size_t)n * sizeof(K), op);
  if (!rc) rc = sorted.get(d->index, (size_t)n * sizeof(K), op);
  if (!rc) rc = pos.get(d->index, (size_t)n * sizeof(int64_t), op);
  if (rc) return rc;
  sort_prepare<T><<<grid_for(n, 256, d), 256, 0, d->stream>>>(
      in, n, len, descending ? (K)~(K)0 : (K)0, keys.as<K>(), pos.as<int64_t>());
  rc = cuda_launched(op);
  if (rc) return rc;
  size_t bytes = 0;
  if (rows == 1) {
    rc = cuda_check(cub::DeviceRadixSort::SortPairs(nullptr, bytes, keys.as<K>(), sorted.as<K>(),
                                                    pos.as<int64_t>(), indices, n, 0,
                                                    (int)sizeof(K) * 8, d->stream),
                    op);
    if (!rc) rc = temp.get(d->index, bytes, op);
    if (!rc)
      rc = cuda_check(cub::DeviceRadixSort::SortPairs(temp.ptr, bytes, keys.as<K>(),
                                                      sorted.as<K>(), pos.as<int64_t>(), indices,
                                                      n, 0, (int)sizeof(K) * 8, d->stream),
                      op);
  } else {
    rc = offsets.get(d->index, (size_t)(rows + 1) * sizeof(int64_t), op);
    if (rc) return rc;
    row_offsets<<<grid_for(rows + 1, 256, d), 256, 0, d->stream>>>(offsets.as<int64_t>(), rows,
                                                                   len);
    rc = cuda_launched(op);
    const int64_t *begin = offsets.as<int64_t>(), *end = begin + 1;
    if (!rc)
      rc = cuda_check(cub::DeviceSegmentedSort::StableSortPairs(
                          nullptr, bytes, keys.as<K>(), sorted.as<K>(), pos.as<int64_t>(),
                          indices, n, rows, begin, end, d->stream),
                      op);
    if (!rc) rc = temp.get(d->index, bytes, op);
    if (!rc)
      rc = cuda_check(cub::DeviceSegmentedSort::StableSortPairs(
                          temp.ptr, bytes, keys.as<K>(), sorted.as<K>(), pos.as<int64_t>(),
                          indices, n, rows, begin, end, d->stream),
                      op);
  }
  if (rc) return rc;
  gather_rows<T><<<grid_for(n, 256, d), 256, 0, d->stream>>>(in, len, indices, n, len, values,
                                                             indices);
  return cuda_launched(op);
}

template <class T>
static int sort_typed(cuda_dev *d, const ml_array *values, const ml_array *indices,
                      const ml_array *in, int descending) {
  int64_t len = in->ndim ? in->shape[in->ndim - 1] : 1, n = ml_array_numel(in);
  return sort_rows<T>(d, array_ptr<const T>(in), n / len, len, descending,
                      array_ptr<T>(values), array_ptr<int64_t>(indices));
}

extern "C" int cuda_sort(const ml_array *values, const ml_array *indices, const ml_array *in,
                         int descending) {
  cuda_dev *d;
  int rc = cuda_enter(array_device(in), &d);
  if (rc || ml_array_numel(in) == 0) return rc;
  switch (in->dtype) {
    case ML_UINT8: return sort_typed<uint8_t>(d, values, indices, in, descending);
    case ML_INT32: return sort_typed<int32_t>(d, values, indices, in, descending);
    case ML_INT64: return sort_typed<int64_t>(d, values, indices, in, descending);
    case ML_FLOAT32: return sort_typed<float>(d, values, indices, in, descending);
    default: return sort_typed<double>(d, values, indices, in, descending);
  }
}

/* ---- top-k ----
 * WarpSelect, in the spirit of FAISS's (Johnson et al., "Billion-scale
 * similarity search with GPUs"): a warp scans a segment of a row, lane l
 * taking elements l, l + 32, ... (16 bytes at a time where aligned), and
 * keeps
 * - a warp queue: the 32 best (key, position) entries seen so far, one per
 *   lane, sorted across the lanes (lane 0 the best);
 * - per lane, a thread queue of up to TQ new entries that beat the warp
 *   queue's k-th entry (most elements fail that one comparison).
 * When some lane's thread queue is full, the warp merges every thread
 * queue into the warp queue, slot by slot: a bitonic sort of the 32 new
 * entries across the lanes, then a bitonic merge with the warp queue that
 * keeps the best 32, all with shuffles. The k best of the segment are then
 * lanes 0..k-1. A row long against the number of rows is cut into
 * segments, each scanned by its own warp; a second pass selects the k best
 * of the segments' k-lists the same way. Shapes: any row length under
 * 2^32 - 1, k <= 32; a warp per (row, segment), 4 warps per block. */

#define TQ 4
#define WARPS 4
#define FULL 0xFFFFFFFFu

template <class K> struct WarpSelect {
  static constexpr K WORST = (K)~(K)0;
  K wk;
  uint32_t wp;
  K tk[TQ];
  uint32_t tp[TQ];
  int count, k, lane;
  K thk;
  uint32_t thp;

  __device__ static bool before(K ak, uint32_t ap, K bk, uint32_t bp) {
    return ak < bk || (ak == bk && ap < bp);
  }

  __device__ void init(int k_) {
    k = k_;
    lane = threadIdx.x & 31;
    wk = thk = WORST;
    wp = thp = 0xFFFFFFFFu;
    count = 0;
  }

  /* Offers an entry (valid: a real one); every lane of the warp calls it
   * the same number of times. */
  __device__ __forceinline__ void add(K key, uint32_t pos, bool valid) {
    if (valid && before(key, pos, thk, thp)) {
#pragma unroll
      for (int s = 0; s < TQ; s++)
        if (s == count) {
          tk[s] = key;
          tp[s] = pos;
        }
      count++;
    }
    if (__any_sync(FULL, count == TQ)) merge();
  }

  __device__ void merge_one(K ck, uint32_t cp) {
#pragma unroll
    for (int size = 2; size <= 32; size *= 2)
#pragma unroll
      for (int stride = size / 2; stride > 0; stride /= 2) {
        K ok = __shfl_xor_sync(FULL, ck, stride);
        uint32_t op = __shfl_xor_sync(FULL, cp, stride);
        bool first = before(ok, op, ck, cp);
        bool keep_min = ((lane & stride) == 0) == ((lane & size) == 0);
        if (keep_min ? first : !first) {
          ck = ok;
          cp = op;
        }
      }
    K rk = __shfl_sync(FULL, ck, 31 - lane);
    uint32_t rp = __shfl_sync(FULL, cp, 31 - lane);
    if (before(rk, rp, wk, wp)) {
      wk = rk;
      wp = rp;
    }
#pragma unroll
    for (int stride = 16; stride > 0; stride /= 2) {
      K ok = __shfl_xor_sync(FULL, wk, stride);
      uint32_t op = __shfl_xor_sync(FULL, wp, stride);
      bool first = before(ok, op, wk, wp);
      if ((lane & stride) == 0 ? first : !first) {
        wk = ok;
        wp = op;
      }
    }
  }

  __device__ void merge() {
#pragma unroll
    for (int s = 0; s < TQ; s++) {
      if (!__any_sync(FULL, s < count)) break;
      merge_one(s < count ? tk[s] : WORST, s < count ? tp[s] : 0xFFFFFFFFu);
    }
    count = 0;
    thk = __shfl_sync(FULL, wk, k - 1);
    thp = __shfl_sync(FULL, wp, k - 1);
  }

  __device__ void flush() {
    if (__any_sync(FULL, count > 0)) merge();
  }
};

/* Pass 1: warp w takes (row, segment) = (w / nseg, w % nseg). With one
 * segment it writes the results; else its k best (key, position) into
 * ck/cp[w * k ..]. */
template <class T>
__global__ void __launch_bounds__(WARPS * 32)
    topk_scan(const T *in, int64_t rows, int64_t len, int64_t seg, int64_t nseg, int k,
              key_type<T> flip, T *values, int64_t *indices, key_type<T> *ck, uint32_t *cp) {
  using K = key_type<T>;
  constexpr int V = 16 / sizeof(T);
  const int lane = threadIdx.x & 31;
  const int64_t nwarps = rows * nseg, step = (int64_t)gridDim.x * WARPS;
  for (int64_t w = (int64_t)blockIdx.x * WARPS + threadIdx.x / 32; w < nwarps; w += step) {
    const int64_t r = w / nseg, sb = w % nseg * seg, se = sb + seg < len ? sb + seg : len;
    const T *row = in + r * len;
    WarpSelect<K> ws;
    ws.init(k);
    if ((uintptr_t)(row + sb) % 16 == 0) {
      for (int64_t base = sb + (int64_t)lane * V; base - lane * V < se; base += 32 * V) {
        T x[V];
        if (base + V <= se) {
          Vec<T, V> v = *reinterpret_cast<const Vec<T, V> *>(row + base);
#pragma unroll
          for (int e = 0; e < V; e++) x[e] = v.v[e];
        } else {
#pragma unroll
          for (int e = 0; e < V; e++) x[e] = base + e < se ? row[base + e] : T(0);
        }
        /* every lane offers V entries: add() synchronizes the warp */
#pragma unroll
        for (int e = 0; e < V; e++)
          ws.add(sort_key(x[e]) ^ flip, (uint32_t)(base + e), base + e < se);
      }
    } else {
      for (int64_t j = sb + lane; j - lane < se; j += 32) {
        bool ok = j < se;
        ws.add(ok ? sort_key(row[j]) ^ flip : K(0), (uint32_t)j, ok);
      }
    }
    ws.flush();
    if (lane < k) {
      if (nseg == 1) {
        values[r * k + lane] = row[ws.wp];
        indices[r * k + lane] = (int64_t)ws.wp + 1;
      } else {
        ck[w * k + lane] = ws.wk;
        cp[w * k + lane] = ws.wp;
      }
    }
  }
}

/* Pass 2: a warp per row selects from its nseg * k candidates. */
template <class T>
__global__ void __launch_bounds__(WARPS * 32)
    topk_merge(const T *in, int64_t rows, int64_t len, int64_t ncand, int k,
               const key_type<T> *ck, const uint32_t *cp, T *values, int64_t *indices) {
  using K = key_type<T>;
  const int lane = threadIdx.x & 31;
  const int64_t step = (int64_t)gridDim.x * WARPS;
  for (int64_t r = (int64_t)blockIdx.x * WARPS + threadIdx.x / 32; r < rows; r += step) {
    WarpSelect<K> ws;
    ws.init(k);
    for (int64_t c = lane; c - lane < ncand; c += 32) {
      bool ok = c < ncand;
      ws.add(ok ? ck[r * ncand + c] : K(0), ok ? cp[r * ncand + c] : 0u, ok);
    }
    ws.flush();
    if (lane < k) {
      values[r * k + lane] = in[r * len + ws.wp];
      indices[r * k + lane] = (int64_t)ws.wp + 1;
    }
  }
}

/* Rows beyond WarpSelect's reach: sort them, keep the first k columns. */
template <class T>
static int topk_by_sort(cuda_dev *d, const T *in, int64_t rows, int64_t len, int64_t k,
                        int largest, T *values, int64_t *indices) {
  cuda_scratch sv, si;
  int64_t n = rows * len;
  int rc = sv.get(d->index, (size_t)n * sizeof(T), "topk");
  if (!rc) rc = si.get(d->index, (size_t)n * sizeof(int64_t), "topk");
  if (!rc) rc = sort_rows<T>(d, in, rows, len, largest, sv.as<T>(), si.as<int64_t>());
  if (rc) return rc;
  rc = cuda_check(cudaMemcpy2DAsync(values, (size_t)k * sizeof(T), sv.ptr, (size_t)len * sizeof(T),
                                    (size_t)k * sizeof(T), (size_t)rows,
                                    cudaMemcpyDeviceToDevice, d->stream),
                  "topk");
  if (!rc)
    rc = cuda_check(cudaMemcpy2DAsync(indices, (size_t)k * sizeof(int64_t), si.ptr,
                                      (size_t)len * sizeof(int64_t), (size_t)k * sizeof(int64_t),
                                      (size_t)rows, cudaMemcpyDeviceToDevice, d->stream),
                    "topk");
  return rc;
}

template <class T>
static int topk_typed(cuda_dev *d, const ml_array *values, const ml_array *indices,
                      const ml_array *in, int64_t k, int largest) {
  using K = key_type<T>;
  int64_t len = in->ndim ? in->shape[in->ndim - 1] : 1, rows = ml_array_numel(in) / len;
  const T *p = array_ptr<const T>(in);
  T *v = array_ptr<T>(values);
  int64_t *ix = array_ptr<int64_t>(indices);
  if (k > 32 || len >= (int64_t)0xFFFFFFFF)
    return topk_by_sort<T>(d, p, rows, len, k, largest, v, ix);
  /* Segments: enough warps for the whole GPU, at least 1024 elements each,
   * starting 128-element aligned. The result does not depend on them. */
  int64_t want = (int64_t)d->sms * 32, nseg = 1;
  if (rows < want) {
    nseg = (want + rows - 1) / rows;
    int64_t most = (len + 1023) / 1024;
    if (nseg > most) nseg = most;
    if (nseg < 1) nseg = 1;
  }
  int64_t seg = ((len + nseg - 1) / nseg + 127) / 128 * 128;
  nseg = (len + seg - 1) / seg;
  K flip = largest ? (K)~(K)0 : (K)0;
  int64_t warps = rows * nseg, blocks = (warps + WARPS - 1) / WARPS;
  unsigned grid = (unsigned)(blocks < (1 << 20) ? blocks : (1 << 20));
  if (nseg == 1) {
    topk_scan<T><<<grid, WARPS * 32, 0, d->stream>>>(p, rows, len, seg, 1, (int)k, flip, v, ix,
                                                     nullptr, nullptr);
    return cuda_launched("topk");
  }
  cuda_scratch ck, cp;
  int rc = ck.get(d->index, (size_t)(warps * k) * sizeof(K), "topk");
  if (!rc) rc = cp.get(d->index, (size_t)(warps * k) * sizeof(uint32_t), "topk");
  if (rc) return rc;
  topk_scan<T><<<grid, WARPS * 32, 0, d->stream>>>(p, rows, len, seg, nseg, (int)k, flip,
                                                   nullptr, nullptr, ck.as<K>(),
                                                   cp.as<uint32_t>());
  rc = cuda_launched("topk");
  if (rc) return rc;
  int64_t blocks2 = (rows + WARPS - 1) / WARPS;
  topk_merge<T><<<(unsigned)(blocks2 < (1 << 20) ? blocks2 : (1 << 20)), WARPS * 32, 0,
                  d->stream>>>(p, rows, len, nseg * k, (int)k, ck.as<K>(), cp.as<uint32_t>(),
                               v, ix);
  return cuda_launched("topk");
}

extern "C" int cuda_topk(const ml_array *values, const ml_array *indices, const ml_array *in,
                         int64_t k, int largest) {
  cuda_dev *d;
  int rc = cuda_enter(array_device(in), &d);
  if (rc || k == 0 || ml_array_numel(in) == 0) return rc;
  switch (in->dtype) {
    case ML_UINT8: return topk_typed<uint8_t>(d, values, indices, in, k, largest);
    case ML_INT32: return topk_typed<int32_t>(d, values, indices, in, k, largest);
    case ML_INT64: return topk_typed<int64_t>(d, values, indices, in, k, largest);
    case ML_FLOAT32: return topk_typed<float>(d, values, indices, in, k, largest);
    default: return topk_typed<double>(d, values, indices, in, k, largest);
  }
}
