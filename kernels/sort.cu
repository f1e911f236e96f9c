/* Sort and top-k of each row (the last dimension) of a contiguous array.
 *
 * CPU reference: src/cpu/cpu_sort.c, whose order this is: every value
 * becomes its order key (core/order_key.h), descending order and the k
 * largest invert the keys, and entries are ordered by (key, position).
 * That order is strict and total, so results are exact and the same on
 * both backends; values are then read back from the input at the chosen
 * positions (so -0 and NaN payloads survive).
 *
 * Sort: keys (32 bits for 1- and 4-byte dtypes, 64 for 8-byte ones) and
 * positions go through CUB's stable radix sorts: DeviceRadixSort for a
 * single row, DeviceSegmentedSort for many (stable: equal keys keep their
 * positions' order). Top-k: WarpSelect (below) for k <= 32, the selection
 * engine of select.cuh for k <= WARP_L; larger k (or rows of 2^31
 * elements or more) sort the rows and keep the first k. */
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_segmented_sort.cuh>

#include "launch.cuh"
#include "map.cuh"
#include "scratch.cuh"
#include "select.cuh"

/* ---- sort ---- */

/* keys[i] = key(in[i]) ^ flip and pos[i] = i's position in its row. */
template <class T>
__global__ void sort_prepare(const T *in, int64_t n, int64_t len, key_type<T> flip,
                             key_type<T> *keys, int64_t *pos) {
  int64_t step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
    keys[i] = ml_order_key(in[i]) ^ flip;
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
  rc = cuda_launch<sort_prepare<T>>(d, grid_for(n, 256, d), 256, 0, op, in, n, len,
                                    descending ? (K)~(K)0 : (K)0, keys.as<K>(),
                                    pos.as<int64_t>());
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
    rc = cuda_launch<row_offsets>(d, grid_for(rows + 1, 256, d), 256, 0, op,
                                  offsets.as<int64_t>(), rows, len);
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
  return cuda_launch<gather_rows<T>>(d, grid_for(n, 256, d), 256, 0, op, in, len, indices, n, len,
                                     values, indices);
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

/* ---- top-k, k <= 32: WarpSelect ----
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
 * segments (topk_segments), each scanned by its own warp; a second pass
 * selects the k best of the segments' k-lists the same way. Shapes: any
 * row length under 2^32 - 1, k <= 32; a warp per (row, segment), 4 warps
 * per block. It is the CUDA backend's second top-k engine: the shared one
 * of select.cuh (below) takes a fifth longer on these small lists. */

#define TQ 4
#define WARPS 4

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
    topk_warp_scan(const T *in, int64_t rows, int64_t len, int64_t seg, int64_t nseg, int k,
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
          ws.add(ml_order_key(x[e]) ^ flip, (uint32_t)(base + e), base + e < se);
      }
    } else {
      for (int64_t j = sb + lane; j - lane < se; j += 32) {
        bool ok = j < se;
        ws.add(ok ? ml_order_key(row[j]) ^ flip : K(0), (uint32_t)j, ok);
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
    topk_warp_merge(const T *in, int64_t rows, int64_t len, int64_t ncand, int k,
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

/* ---- top-k, 32 < k <= WARP_L: the selection engine ----
 * The selection engine of select.cuh, a warp a (row, segment): each lane
 * takes U elements a step (lanes interleaved, so every load is
 * coalesced), turns them into order keys (inverted for the k largest) and
 * offers those not above the threshold's key, with their positions. A row
 * long against the number of rows is cut into segments, each scanned by
 * its own warp into a list of k; a second pass selects the k best of a
 * row's segment lists the same way. The order of (key, position) is
 * strict, so the result does not depend on the segments. Shapes: k up to
 * WARP_L, rows under 2^31 elements. */

/* Offers a lane's U candidates (keys) not above thk, the caller's copy of
 * the threshold's key; every lane of the warp calls it alike. */
template <class K, int U>
__device__ __forceinline__ void topk_add(const Lists<K> &w, int lane, K &thk, Cands<K, U> &c) {
  bool any = false;
#pragma unroll
  for (int u = 0; u < U; u++) {
    c.ok[u] = c.ok[u] && c.key[u] <= thk;
    any |= c.ok[u];
  }
  if (__any_sync(FULL, any)) {
    sel_offer<K, 32, WARP_BB, U>(w, lane, c);
    thk = w.st->thk;
  }
}

/* Writes a row's k best: values read back from the row (so -0 and NaN
 * payloads survive) and 1-based positions. */
template <class T, class K>
__device__ void topk_store(const Lists<K> &w, int lane, const T *row, int64_t k, T *values,
                           int64_t *indices) {
  const int64_t off = w.st->cur * w.L;
  for (int64_t p = lane; p < k; p += 32) {
    int64_t pos = w.li[off + p];
    values[p] = row[pos];
    indices[p] = pos + 1;
  }
}

/* A step of the scan covers 32 U consecutive elements of a segment, U a
 * lane. With VEC (the segment 16-byte aligned) lane l takes runs of
 * V = 16 / sizeof(T) elements, run v at j0 + 32 V v + V l, each read by
 * one 16-byte load; else elements j0 + l + 32 u. The lane's u-th element
 * is at topk_pos. */
template <class T> __host__ __device__ constexpr int topk_per_lane() {
  return sizeof(T) == 1 ? 16 : 32 / sizeof(T);
}

template <bool VEC, class T>
__device__ __forceinline__ int64_t topk_pos(int64_t j0, int lane, int u) {
  constexpr int V = 16 / sizeof(T);
  return VEC ? j0 + 32 * V * (u / V) + V * lane + u % V : j0 + lane + 32 * u;
}

/* The lane's elements of the step at j0, those at or past se as zeros. */
template <bool VEC, class T, int U>
__device__ __forceinline__ void topk_load(const T *row, int64_t j0, int64_t se, int lane,
                                          T (&x)[U]) {
  constexpr int V = 16 / sizeof(T);
#pragma unroll
  for (int u = 0; u < U; u += VEC ? V : 1) {
    const int64_t j = topk_pos<VEC, T>(j0, lane, u);
    if (VEC && j + V <= se) {
      Vec<T, V> v = *reinterpret_cast<const Vec<T, V> *>(row + j);
#pragma unroll
      for (int e = 0; e < V; e++) x[u + e] = v.v[e];
    } else {
#pragma unroll
      for (int e = 0; e < (VEC ? V : 1); e++) x[u + e] = j + e < se ? row[j + e] : T(0);
    }
  }
}

/* Offers every element of [sb, se) of row, one step ahead in its loads. */
template <bool VEC, class T>
__device__ __forceinline__ void topk_segment(const Lists<key_type<T>> &w, int lane, const T *row,
                                             int64_t sb, int64_t se, key_type<T> flip) {
  using K = key_type<T>;
  constexpr int U = topk_per_lane<T>();
  K thk = w.st->thk;
  T x[U], next[U];
  topk_load<VEC, T, U>(row, sb, se, lane, x);
  for (int64_t j0 = sb; j0 < se; j0 += 32 * U) {
    /* the next step's loads go out before this step's selection */
    if (j0 + 32 * U < se) topk_load<VEC, T, U>(row, j0 + 32 * U, se, lane, next);
    Cands<K, U> c;
#pragma unroll
    for (int u = 0; u < U; u++) {
      c.id[u] = topk_pos<VEC, T>(j0, lane, u);
      c.ok[u] = c.id[u] < se;
      c.key[u] = ml_order_key(x[u]) ^ flip;
    }
    topk_add<K, U>(w, lane, thk, c);
#pragma unroll
    for (int u = 0; u < U; u++) x[u] = next[u];
  }
}

/* Pass 1: warp w takes (row, segment) = (w / nseg, w % nseg). With one
 * segment it writes the results; else its k best (key, position) into
 * ck/cp[w * k ..]. */
template <class T>
__global__ void __launch_bounds__(SEL_WARPS * 32)
    topk_list_scan(const T *in, int64_t rows, int64_t len, int64_t seg, int64_t nseg, int64_t k,
              key_type<T> flip, T *values, int64_t *indices, key_type<T> *ck, int64_t *cp) {
  using K = key_type<T>;
  extern __shared__ __align__(16) unsigned char smem[];
  const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
  Lists<K> w = sel_carve<K>(smem + wid * sel_bytes<K>(k, WARP_BB + 32), k, WARP_BB + 32, true,
                            nullptr, nullptr);
  const int64_t nwarps = rows * nseg;
  for (int64_t v = (int64_t)blockIdx.x * SEL_WARPS + wid; v < nwarps;
       v += (int64_t)gridDim.x * SEL_WARPS) {
    const int64_t r = v / nseg, sb = v % nseg * seg, se = sb + seg < len ? sb + seg : len;
    const T *row = in + r * len;
    sel_start<K, 32>(w, lane);
    if ((uintptr_t)(row + sb) % 16 == 0)
      topk_segment<true, T>(w, lane, row, sb, se, flip);
    else
      topk_segment<false, T>(w, lane, row, sb, se, flip);
    sel_finish<K, 32, WARP_BB>(w, lane);
    if (nseg == 1) {
      topk_store<T, K>(w, lane, row, k, values + r * k, indices + r * k);
    } else {
      const int64_t off = w.st->cur * w.L;
      for (int64_t p = lane; p < k; p += 32) {
        ck[v * k + p] = w.lk[off + p];
        cp[v * k + p] = w.li[off + p];
      }
    }
    __syncwarp();
  }
}

/* Pass 2: a warp a row selects from its nseg * k candidates. */
template <class T>
__global__ void __launch_bounds__(SEL_WARPS * 32)
    topk_list_merge(const T *in, int64_t rows, int64_t len, int64_t ncand, int64_t k,
               const key_type<T> *ck, const int64_t *cp, T *values, int64_t *indices) {
  using K = key_type<T>;
  extern __shared__ __align__(16) unsigned char smem[];
  const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
  Lists<K> w = sel_carve<K>(smem + wid * sel_bytes<K>(k, WARP_BB + 32), k, WARP_BB + 32, true,
                            nullptr, nullptr);
  for (int64_t r = (int64_t)blockIdx.x * SEL_WARPS + wid; r < rows;
       r += (int64_t)gridDim.x * SEL_WARPS) {
    sel_start<K, 32>(w, lane);
    K thk = w.st->thk;
    for (int64_t c0 = 0; c0 < ncand; c0 += 32) {
      Cands<K, 1> c;
      int64_t at = c0 + lane;
      c.ok[0] = at < ncand;
      c.key[0] = c.ok[0] ? ck[r * ncand + at] : K(0);
      c.id[0] = c.ok[0] ? cp[r * ncand + at] : 0;
      topk_add<K, 1>(w, lane, thk, c);
    }
    sel_finish<K, 32, WARP_BB>(w, lane);
    topk_store<T, K>(w, lane, in + r * len, k, values + r * k, indices + r * k);
    __syncwarp();
  }
}

/* Rows beyond the selection's reach: sort them, keep the first k columns. */
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

/* Segments of a row for a warp each: enough warps for the whole GPU, at
 * least 1024 elements each, starting 128-element aligned. The results do
 * not depend on them. */
static void topk_segments(const cuda_dev *d, int64_t rows, int64_t len, int64_t *seg,
                          int64_t *nseg) {
  int64_t want = (int64_t)d->sms * 32, n = 1;
  if (rows < want) {
    n = (want + rows - 1) / rows;
    int64_t most = (len + 1023) / 1024;
    if (n > most) n = most;
    if (n < 1) n = 1;
  }
  *seg = ((len + n - 1) / n + 127) / 128 * 128;
  *nseg = (len + *seg - 1) / *seg;
}

template <class T>
static int topk_warp_select(cuda_dev *d, const T *p, int64_t rows, int64_t len, int64_t k,
                            key_type<T> flip, T *v, int64_t *ix) {
  using K = key_type<T>;
  int64_t seg, nseg;
  topk_segments(d, rows, len, &seg, &nseg);
  unsigned grid = blocks_for(rows * nseg, WARPS);
  if (nseg == 1)
    return cuda_launch<topk_warp_scan<T>>(d, grid, WARPS * 32, 0, "topk", p, rows, len, seg,
                                          (int64_t)1, (int)k, flip, v, ix, nullptr, nullptr);
  cuda_scratch ck, cp;
  int rc = ck.get(d->index, (size_t)(rows * nseg * k) * sizeof(K), "topk");
  if (!rc) rc = cp.get(d->index, (size_t)(rows * nseg * k) * sizeof(uint32_t), "topk");
  if (!rc)
    rc = cuda_launch<topk_warp_scan<T>>(d, grid, WARPS * 32, 0, "topk", p, rows, len, seg, nseg,
                                        (int)k, flip, nullptr, nullptr, ck.as<K>(),
                                        cp.as<uint32_t>());
  if (rc) return rc;
  return cuda_launch<topk_warp_merge<T>>(d, blocks_for(rows, WARPS), WARPS * 32, 0, "topk", p,
                                         rows, len, nseg * k, (int)k, ck.as<K>(),
                                         cp.as<uint32_t>(), v, ix);
}

template <class T>
static int topk_list_select(cuda_dev *d, const T *p, int64_t rows, int64_t len, int64_t k,
                            key_type<T> flip, T *v, int64_t *ix) {
  using K = key_type<T>;
  int64_t seg, nseg;
  topk_segments(d, rows, len, &seg, &nseg);
  size_t smem = SEL_WARPS * sel_bytes<K>(k, WARP_BB + 32);
  unsigned grid = blocks_for(rows * nseg, SEL_WARPS);
  if (nseg == 1)
    return cuda_launch<topk_list_scan<T>>(d, grid, SEL_WARPS * 32, smem, "topk", p, rows, len,
                                          seg, (int64_t)1, k, flip, v, ix, nullptr, nullptr);
  cuda_scratch ck, cp;
  int rc = ck.get(d->index, (size_t)(rows * nseg * k) * sizeof(K), "topk");
  if (!rc) rc = cp.get(d->index, (size_t)(rows * nseg * k) * sizeof(int64_t), "topk");
  if (!rc)
    rc = cuda_launch<topk_list_scan<T>>(d, grid, SEL_WARPS * 32, smem, "topk", p, rows, len, seg,
                                        nseg, k, flip, nullptr, nullptr, ck.as<K>(),
                                        cp.as<int64_t>());
  if (rc) return rc;
  return cuda_launch<topk_list_merge<T>>(d, blocks_for(rows, SEL_WARPS), SEL_WARPS * 32, smem,
                                         "topk", p, rows, len, nseg * k, k, ck.as<K>(),
                                         cp.as<int64_t>(), v, ix);
}

template <class T>
static int topk_typed(cuda_dev *d, const ml_array *values, const ml_array *indices,
                      const ml_array *in, int64_t k, int largest) {
  using K = key_type<T>;
  int64_t len = in->ndim ? in->shape[in->ndim - 1] : 1, rows = ml_array_numel(in) / len;
  const T *p = array_ptr<const T>(in);
  T *v = array_ptr<T>(values);
  int64_t *ix = array_ptr<int64_t>(indices);
  K flip = largest ? (K)~(K)0 : (K)0;
  if (len >= INT32_MAX || k > WARP_L) return topk_by_sort<T>(d, p, rows, len, k, largest, v, ix);
  if (k <= 32) return topk_warp_select<T>(d, p, rows, len, k, flip, v, ix);
  return topk_list_select<T>(d, p, rows, len, k, flip, v, ix);
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
