/* ±1 matrices packed into words on the GPU: the binary area's table
 * (contracts and the packed rows' layout in core/binary_backend.h).
 *
 * CPU reference: src/cpu/cpu_binary.c; the results are the CPU's, bit for
 * bit (integers throughout, and ties in the kNN lists go to the lower
 * index on both).
 *
 * pack: one pass over x, which is the memory floor: 16-byte loads and
 * shuffles where rows start 16-byte aligned (binary_pack_wide), else a
 * warp a group of 8 words of a row (rows are whole groups), each lane
 * reading one value of each of the 8 words' 32 (coalesced 128-byte
 * reads, 8 in flight a lane) and 8 ballots making the words, which lanes
 * 0..7 store together.
 *
 * mm: the tensor cores' AND-popcount product, binary_mm.cuh (its tiling
 * there).
 *
 * knn: a query chunk meets the first references through a work block
 * of distances (mm's kernel) and a warp a query selects, by counting for
 * k <= CS_KMAX (binary_select.cuh), else with select.cuh's engine (a
 * block a query for k > WARP_L), keys the distances themselves; that
 * fills every list, and its k-th distance bounds the query's answer.
 * The rest of the references go through the filter in rounds of growing
 * length: a pair below its query's bound is appended to the query's
 * candidates (an atomic counter; no m x n matrix), and a selection
 * merges each list with its candidates, or, where they overflowed,
 * recomputes that query's distances to the round's references on the
 * CUDA cores; the next round filters with the tighter bounds. The filter
 * is binary_knn_stream for codes of 256 bits or fewer (no barrier; the
 * exact tests out of its loop; each round's references sorted by
 * popcount first, binary_order.cuh) and mm's kernel with the filter
 * epilogue for longer ones.
 * At 10^4 x 10^6 x 256 bits one filter over all references with the
 * first chunk's bounds took 29 ms, most of it in atomics on the same
 * rows' counters. */
#include "launch.cuh"
#include "map.cuh"
#include "scratch.cuh"
#include "select.cuh"

#include "binary_mm.cuh"
#include "binary_order.cuh"
#include "binary_stream.cuh"

extern "C" {
#include "../src/core/binary_backend.h"
}

/* ---- pack and unpack ---- */

#define PACK_WORDS 8

template <class T>
__global__ void __launch_bounds__(256)
    binary_pack_kernel(const T *x, uint32_t *out, int64_t rows, int64_t len, int64_t w) {
  const int lane = threadIdx.x & 31;
  const int64_t per_row = w / PACK_WORDS, groups = rows * per_row;
  const int64_t stride = ((int64_t)gridDim.x * blockDim.x) >> 5;
  for (int64_t g = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5; g < groups;
       g += stride) {
    const int64_t r = g / per_row, j0 = g % per_row * PACK_WORDS;
    const T *row = x + r * len;
    bool pos[PACK_WORDS];
#pragma unroll
    for (int u = 0; u < PACK_WORDS; u++) {
      int64_t i = (j0 + u) * 32 + lane;
      pos[u] = i < len && __ldcs(row + i) >= T(0);
    }
    uint32_t mine = 0;
#pragma unroll
    for (int u = 0; u < PACK_WORDS; u++) {
      uint32_t b = __ballot_sync(FULL, pos[u]);
      if (lane == u) mine = b;
    }
    if (lane < PACK_WORDS) out[r * w + j0 + lane] = mine;
  }
}

/* pack with 16-byte loads, where rows start 16-byte aligned (len a
 * multiple of V = 16 / sizeof(T)): a warp a task of PACK_LOADS chunks of
 * a row, a chunk 32 V values (V words), all loads in flight at once.
 * Lane L's V values of a chunk are bits V (L % (32 / V)) onwards of the
 * chunk's word L / (32 / V); xor-shuffles gather each word onto its 32 /
 * V lanes, and lane j takes the task's word j, so a warp stores its
 * words in one coalesced piece. The scalar kernel above read 4 bytes a
 * lane and ran at 73% of the copy bandwidth's floor. */
#define PACK_LOADS 8

/* 16 bytes at p, streamed (read once). */
__device__ __forceinline__ Vec<float, 4> load_stream16(const float *p) {
  const float4 f = __ldcs(reinterpret_cast<const float4 *>(p));
  return {{f.x, f.y, f.z, f.w}};
}

__device__ __forceinline__ Vec<double, 2> load_stream16(const double *p) {
  const double2 f = __ldcs(reinterpret_cast<const double2 *>(p));
  return {{f.x, f.y}};
}

template <class T>
__global__ void __launch_bounds__(256)
    binary_pack_wide(const T *x, uint32_t *out, int64_t rows, int64_t len, int64_t w) {
  constexpr int V = 16 / sizeof(T), LPW = 32 / V, WPT = PACK_LOADS * V;
  const int lane = threadIdx.x & 31;
  const int64_t per_row = (w + WPT - 1) / WPT, tasks = rows * per_row;
  const int64_t stride = ((int64_t)gridDim.x * blockDim.x) >> 5;
  for (int64_t task = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5; task < tasks;
       task += stride) {
    const int64_t r = task / per_row, j0 = task % per_row * WPT;
    const T *row = x + r * len;
    Vec<T, V> v[PACK_LOADS];
#pragma unroll
    for (int u = 0; u < PACK_LOADS; u++) {
      const int64_t i = (j0 + u * V) * 32 + lane * V;
      if (i < len) v[u] = load_stream16(row + i);
    }
    uint32_t mine = 0;
#pragma unroll
    for (int u = 0; u < PACK_LOADS; u++) {
      const int64_t i = (j0 + u * V) * 32 + lane * V;
      uint32_t bits = 0;
#pragma unroll
      for (int e = 0; e < V; e++) bits |= (uint32_t)(i < len && v[u].v[e] >= T(0)) << e;
      bits <<= V * (lane % LPW);
#pragma unroll
      for (int o = 1; o < LPW; o <<= 1) bits |= __shfl_xor_sync(FULL, bits, o);
      const uint32_t word = __shfl_sync(FULL, bits, lane % V * LPW);
      if (lane / V == u) mine = word;
    }
    if (lane < WPT && j0 + lane < w) out[r * w + j0 + lane] = mine;
  }
}

template <class T>
static int pack_typed(cuda_dev *d, const ml_array *out, const ml_array *in) {
  const int64_t rows = in->shape[0], len = in->shape[1], w = out->shape[1];
  const T *x = array_ptr<const T>(in);
  uint32_t *o = array_ptr<uint32_t>(out);
  constexpr int V = 16 / sizeof(T);
  if (len % V == 0 && (uintptr_t)x % 16 == 0) {
    const int64_t tasks = rows * ((w + PACK_LOADS * V - 1) / (PACK_LOADS * V));
    return cuda_launch<binary_pack_wide<T>>(d, grid_for(tasks * 32, 256, d, 8), 256, 0,
                                            "binary.pack", x, o, rows, len, w);
  }
  return cuda_launch<binary_pack_kernel<T>>(d, grid_for(rows * (w / PACK_WORDS) * 32, 256, d, 16),
                                            256, 0, "binary.pack", x, o, rows, len, w);
}

static int cuda_binary_pack(const ml_array *out, const ml_array *in) {
  cuda_dev *d;
  int rc = cuda_enter(array_device(in), &d);
  if (rc) return rc;
  if (in->dtype == ML_FLOAT32) return pack_typed<float>(d, out, in);
  return pack_typed<double>(d, out, in);
}

template <class T>
__global__ void binary_unpack_kernel(const uint32_t *in, T *out, int64_t rows, int64_t bits,
                                     int64_t w) {
  const int64_t n = rows * bits, stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < n; e += stride) {
    int64_t r = e / bits, i = e % bits;
    out[e] = (in[r * w + i / 32] >> (i % 32) & 1) ? T(1) : T(-1);
  }
}

template <class T> static int unpack_typed(cuda_dev *d, const ml_array *out, const ml_array *in) {
  int64_t rows = out->shape[0], bits = out->shape[1];
  return cuda_launch<binary_unpack_kernel<T>>(d, grid_for(rows * bits, 256, d), 256, 0,
                                              "binary.unpack", array_ptr<const uint32_t>(in),
                                              array_ptr<T>(out), rows, bits, in->shape[1]);
}

static int cuda_binary_unpack(const ml_array *out, const ml_array *in) {
  cuda_dev *d;
  int rc = cuda_enter(array_device(in), &d);
  if (rc) return rc;
  switch (out->dtype) {
  case ML_FLOAT32: return unpack_typed<float>(d, out, in);
  case ML_FLOAT64: return unpack_typed<double>(d, out, in);
  case ML_INT32: return unpack_typed<int32_t>(d, out, in);
  default: return unpack_typed<int64_t>(d, out, in);
  }
}

/* ---- popcounts of rows ---- */

/* out[r]: the popcount of row r (w words, a multiple of 8), G lanes a
 * row (G a power of 2, at most the row's 16-byte pieces: 8192-bit rows
 * took 60 us a thread a row, their 64 loads one after another). */
__global__ void binary_popc_rows(const uint4 *a, int *out, int64_t rows, int64_t w4, int G) {
  const int lane = threadIdx.x & 31, per = 32 / G; /* rows a warp */
  const int64_t step = ((int64_t)gridDim.x * blockDim.x >> 5) * per;
  for (int64_t rw = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x >> 5) * per; rw < rows;
       rw += step) {
    const int64_t r = rw + lane / G;
    int s = 0;
    if (r < rows)
      for (int64_t i = lane % G; i < w4; i += G) {
        uint4 v = __ldg(a + r * w4 + i);
        s += __popc(v.x) + __popc(v.y) + __popc(v.z) + __popc(v.w);
      }
    for (int o = G / 2; o > 0; o >>= 1) s += __shfl_xor_sync(FULL, s, o);
    if (r < rows && lane % G == 0) out[r] = s;
  }
}

static int popc_rows(cuda_dev *d, const uint32_t *a, int64_t rows, int64_t w, int *out,
                     const char *op) {
  if (rows == 0) return ML_OK;
  int G = 1;
  while (G < 32 && 2 * G <= w / 4) G *= 2;
  return cuda_launch<binary_popc_rows>(d, grid_for(rows * G, 128, d), 128, 0, op,
                                       (const uint4 *)a, out, rows, w / 4, G);
}

/* ---- mm ---- */

static int cuda_binary_mm(const ml_binary_mm_desc *p) {
  cuda_dev *d;
  int rc = cuda_enter(array_device(p->a), &d);
  if (rc) return rc;
  const char *op = p->hamming ? "binary.hamming" : "binary.mm";
  int64_t batch = p->a->shape[0], m = p->a->shape[1], n = p->b->shape[1], w = p->a->shape[2];
  cuda_scratch pa, pb;
  rc = pa.get(d->index, (size_t)(batch * m) * sizeof(int), op);
  if (!rc) rc = pb.get(d->index, (size_t)(batch * n) * sizeof(int), op);
  const uint32_t *a = array_ptr<const uint32_t>(p->a), *b = array_ptr<const uint32_t>(p->b);
  if (!rc) rc = popc_rows(d, a, batch * m, w, pa.as<int>(), op);
  if (!rc) rc = popc_rows(d, b, batch * n, w, pb.as<int>(), op);
  if (rc) return rc;
  MmArgs q = {};
  q.a = a;
  q.b = b;
  q.pa = pa.as<int>();
  q.pb = pb.as<int>();
  q.out = array_ptr<int32_t>(p->out);
  q.m = m;
  q.n = n;
  q.w = w;
  q.ldo = n;
  q.bits = p->bits;
  q.sa = m * w;
  q.sb = n * w;
  q.spa = m;
  q.spb = n;
  q.so = m * n;
  q.hamming = p->hamming;
  return mm_launch<false>(d, q, batch, op);
}

/* ---- knn ---- */

/* The work block's bytes at most (and the filter's candidates'), the
 * queries a chunk, the candidates a query a round of the filter at least
 * (and 8 k), and the first chunk of the filtered search at least (and
 * 16 k). */
#define KNN_WORK_BYTES ((int64_t)512 << 20)
#define KNN_QUERIES 16384
#define KNN_CAP 256
#define KNN_SAMPLE 1024

/* Where a row's candidates come from (knn_row). */
enum { SRC_TILE, SRC_FILTER };

struct KnnArgs {
  const uint32_t *work; /* mt x nt distances (SRC_TILE) */
  int64_t mt, nt, k, base;
  uint32_t *dist;       /* mt x k: the lists (distances as order keys) */
  int64_t *index;       /* mt x k, 1-based; INT64_MAX for an empty place */
  uint32_t *lk;         /* scratch: mt x 2k pairs, a block's lists */
  int64_t *li;
  int first;            /* the lists hold nothing yet */
  /* SRC_FILTER: the round's candidates of row i, or where they
   * overflowed (count[i] > cap), every reference of the round (base to
   * n - 1) again, its distance computed here */
  const uint32_t *cand_d, *cand_i;
  const int *count;
  int64_t cap;
  const uint32_t *q, *r; /* the chunk's queries, all references */
  /* where not null, r is sorted within each round (binary_order.cuh)
   * and perm holds each place's index */
  const uint32_t *perm;
  int64_t n;
  int64_t w; /* words a code (also the counting selection's bins) */
};

/* Offers a thread's U candidates that do not lose to the threshold th
 * (the list's last key; all of them while it has empty places). */
template <int G, int BB, int U>
__device__ __forceinline__ void knn_offer(const Lists<uint32_t> &w, int tid, uint32_t &th,
                                          Cands<uint32_t, U> &c) {
  bool any = false;
#pragma unroll
  for (int u = 0; u < U; u++) {
    c.ok[u] = c.ok[u] && c.key[u] <= th;
    any |= c.ok[u];
  }
  if (G == 32 ? __any_sync(FULL, any) : __syncthreads_or(any)) {
    sel_offer<uint32_t, G, BB, U>(w, tid, c);
    th = w.st->thk;
  }
}

/* Offers pairs j = 0 .. len - 1, get(j, key, id) making pair j, U a
 * thread at a time. */
template <int G, int BB, int U, class Get>
__device__ __forceinline__ void knn_offer_all(const Lists<uint32_t> &w, int tid, uint32_t &th,
                                              int64_t len, Get get) {
  for (int64_t j0 = 0; j0 < len; j0 += (int64_t)G * U) {
    Cands<uint32_t, U> c;
#pragma unroll
    for (int u = 0; u < U; u++) {
      int64_t j = j0 + tid + (int64_t)G * u;
      c.ok[u] = j < len;
      c.key[u] = 0;
      c.id[u] = 0;
      if (c.ok[u]) get(j, c.key[u], c.id[u]);
    }
    knn_offer<G, BB, U>(w, tid, th, c);
  }
}

/* Place p of row i's list: its key (none_key for an empty place, which
 * loses to every pair) and index. */
__device__ __forceinline__ void knn_old(const KnnArgs &a, int64_t i, int64_t p, uint32_t &key,
                                        int64_t &id) {
  id = a.index[i * a.k + p];
  key = a.dist[i * a.k + p];
  if (id == INT64_MAX) key = none_key<uint32_t>();
}

/* Row i's new pairs: pair j of the work block's row, of its candidates,
 * or of the round's references again, its distance computed here (where
 * its candidates overflowed); the index 1-based. */
__device__ __forceinline__ void knn_tile(const KnnArgs &a, int64_t i, int64_t j, uint32_t &key,
                                         int64_t &id) {
  key = __ldg(a.work + i * a.nt + j);
  id = a.base + j + 1;
}

__device__ __forceinline__ void knn_cand(const KnnArgs &a, int64_t i, int64_t j, uint32_t &key,
                                         int64_t &id) {
  key = a.cand_d[i * a.cap + j];
  id = (int64_t)a.cand_i[i * a.cap + j] + 1;
}

__device__ __forceinline__ void knn_again(const KnnArgs &a, int64_t i, int64_t j, uint32_t &key,
                                          int64_t &id) {
  const uint4 *qi = (const uint4 *)(a.q + i * a.w), *rj = (const uint4 *)(a.r + (a.base + j) * a.w);
  int s = 0;
  for (int64_t v = 0; v < a.w / 4; v++) {
    const uint4 x = __ldg(qi + v), y = __ldg(rj + v);
    s += __popc(x.x ^ y.x) + __popc(x.y ^ y.y) + __popc(x.z ^ y.z) + __popc(x.w ^ y.w);
  }
  key = (uint32_t)s;
  id = (a.perm ? (int64_t)__ldg(a.perm + a.base + j) : a.base + j) + 1;
}

/* How many new pairs row i has from SRC. */
template <int SRC> __device__ __forceinline__ int64_t knn_new(const KnnArgs &a, int64_t i) {
  return SRC == SRC_TILE ? a.nt : a.count[i] <= a.cap ? a.count[i] : a.n - a.base;
}

/* Query row i: its old list and its new pairs through the selection w,
 * then the list back to dist and index. */
template <int SRC, int G, int BB, int U>
__device__ void knn_row(const KnnArgs &a, const Lists<uint32_t> &w, int tid, int64_t i) {
  sel_start<uint32_t, G>(w, tid);
  uint32_t th = w.st->thk;
  if (!a.first)
    knn_offer_all<G, BB, 1>(w, tid, th, a.k, [&](int64_t p, uint32_t &key, int64_t &id) {
      knn_old(a, i, p, key, id);
    });
  if (SRC == SRC_TILE)
    knn_offer_all<G, BB, U>(w, tid, th, a.nt, [&](int64_t j, uint32_t &key, int64_t &id) {
      knn_tile(a, i, j, key, id);
    });
  else if (a.count[i] <= a.cap)
    knn_offer_all<G, BB, U>(w, tid, th, a.count[i], [&](int64_t j, uint32_t &key, int64_t &id) {
      knn_cand(a, i, j, key, id);
    });
  else
    knn_offer_all<G, BB, U>(w, tid, th, a.n - a.base, [&](int64_t j, uint32_t &key, int64_t &id) {
      knn_again(a, i, j, key, id);
    });
  sel_finish<uint32_t, G, BB>(w, tid);
  int64_t off = w.st->cur * w.L;
  for (int64_t p = tid; p < a.k; p += G) {
    a.dist[i * a.k + p] = w.lk[off + p];
    a.index[i * a.k + p] = w.li[off + p];
  }
  group_sync<G>();
}

/* A warp a query, lists in shared memory (k <= WARP_L). */
template <int SRC> __global__ void __launch_bounds__(SEL_WARPS * 32) binary_knn_warp(KnnArgs a) {
  extern __shared__ __align__(16) unsigned char smem[];
  const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
  const size_t per = sel_bytes<uint32_t>(a.k, WARP_BB + 32);
  Lists<uint32_t> w =
      sel_carve<uint32_t>(smem + wid * per, a.k, WARP_BB + 32, true, nullptr, nullptr);
  for (int64_t i = (int64_t)blockIdx.x * SEL_WARPS + wid; i < a.mt;
       i += (int64_t)gridDim.x * SEL_WARPS)
    knn_row<SRC, 32, WARP_BB, 8>(a, w, lane, i);
}

/* A block a query, lists in global scratch (k > WARP_L). */
template <int SRC> __global__ void __launch_bounds__(BLOCK_G) binary_knn_block(KnnArgs a) {
  __shared__ __align__(16) unsigned char smem[sel_bytes<uint32_t>(0, BLOCK_BB + BLOCK_G)];
  for (int64_t i = blockIdx.x; i < a.mt; i += gridDim.x) {
    Lists<uint32_t> w = sel_carve<uint32_t>(smem, a.k, BLOCK_BB + BLOCK_G, false,
                                            a.lk + i * 2 * a.k, a.li + i * 2 * a.k);
    knn_row<SRC, BLOCK_G, BLOCK_BB, 1>(a, w, threadIdx.x, i);
  }
}

#include "binary_select.cuh"

/* The selection of a's rows: by counting where the keys are small
 * integers (a tile only where its rows fit the registers, as the first
 * chunk's always do; for k <= CS_KMAX the search goes unfiltered only
 * where n <= KNN_SAMPLE, one tile that fits too), else select.cuh's
 * lists. */
template <int SRC> static int knn_select(cuda_dev *d, const KnnArgs &a, const char *op) {
  const bool held = SRC == SRC_FILTER || (a.first ? 0 : a.k) + a.nt <= 32 * CS_HELD_TILE;
  if (a.k <= CS_KMAX && a.w * 32 <= CS_BITS && held)
    return cuda_launch<binary_knn_count<SRC>>(d, blocks_for(a.mt, CS_WARPS), CS_WARPS * 32, 0,
                                              op, a);
  if (a.k <= WARP_L)
    return cuda_launch<binary_knn_warp<SRC>>(d, blocks_for(a.mt, SEL_WARPS), SEL_WARPS * 32,
                                             SEL_WARPS * sel_bytes<uint32_t>(a.k, WARP_BB + 32),
                                             op, a);
  return cuda_launch<binary_knn_block<SRC>>(d, blocks_for(a.mt, 1), BLOCK_G, 0, op, a);
}

/* The length of the filter's round from reference base (the search's
 * below). */
static int64_t round_length(int64_t base, int64_t n, int64_t cap, int64_t k) {
  const int64_t c = base * cap / (4 * k) / BN * BN;
  return c < BN ? BN : c > n - base ? n - base : c;
}

/* A query chunk's search. The first s references go through the work
 * block (a tile), which fills every list (s >= 8 k). Then rounds of the
 * filter: a round over the next c references keeps the pairs below each
 * list's k-th distance (a later reference at that distance loses to the
 * list's, its index being larger) and merges each list with its
 * candidates, which tightens the bounds for the next round. After S
 * references about k c / S of the next c pass on random codes, so a
 * round takes c = S cap / (4 k), a quarter of the room (S grows by
 * 1 + cap / (4 k) a round: 7.4 times for k = 10); a query that
 * overflows is recomputed over the round's references. s is KNN_SAMPLE
 * or 16 k; where the candidates or the first chunk do not fit, the
 * references go through the work block nt at a time. For the stream
 * filter (w = 8) each round's references are sorted by popcount first,
 * once for all query chunks. */
static int cuda_binary_knn(const ml_binary_knn_desc *p) {
  cuda_dev *d;
  int rc = cuda_enter(array_device(p->queries), &d);
  if (rc) return rc;
  const char *op = "knn";
  int64_t m = p->queries->shape[0], n = p->refs->shape[0], w = p->queries->shape[1], k = p->k;
  /* the candidates and the selections keep a reference's index in 32 bits */
  if (n > (int64_t)UINT32_MAX)
    return ml_fail(ML_EINVAL,
                   "%s: hamming search on the GPU takes at most 2^32 - 1 reference codes, got %lld",
                   op, (long long)n);
  int64_t mt = m < KNN_QUERIES ? m : KNN_QUERIES;
  int64_t nt = KNN_WORK_BYTES / 4 / mt / BN * BN;
  nt = nt < BN ? BN : nt > n ? n : nt;
  int64_t smp = ((16 * k > KNN_SAMPLE ? 16 * k : KNN_SAMPLE) + BN - 1) / BN * BN;
  const int64_t cap = 8 * k > KNN_CAP ? 8 * k : KNN_CAP;
  const bool filter = smp < n && smp <= nt && mt * cap * 8 <= KNN_WORK_BYTES;
  const int64_t step = filter ? smp : nt;
  const uint32_t *q = array_ptr<const uint32_t>(p->queries);
  const uint32_t *r = array_ptr<const uint32_t>(p->refs);
  cuda_scratch pq, pr, work, lk, li, cd, ci, count, sorted, perm, pops, bins;
  const bool stream = filter && w == 8;
  OrderArgs o = {};
  for (int64_t base = smp; stream && base < n; base += round_length(base, n, cap, k)) {
    if (o.rounds == ORD_ROUNDS)
      return ml_fail(ML_EINVAL, "%s: hamming search of %lld references takes more than %d rounds",
                     op, (long long)n, ORD_ROUNDS);
    o.start[o.rounds++] = base;
  }
  o.start[o.rounds] = n;
  rc = pq.get(d->index, (size_t)m * sizeof(int), op);
  if (!rc) rc = pr.get(d->index, (size_t)n * sizeof(int), op);
  if (!rc) rc = work.get(d->index, (size_t)(mt * step) * sizeof(uint32_t), op);
  if (!rc && k > WARP_L) rc = lk.get(d->index, (size_t)(mt * 2 * k) * sizeof(uint32_t), op);
  if (!rc && k > WARP_L) rc = li.get(d->index, (size_t)(mt * 2 * k) * sizeof(int64_t), op);
  if (!rc && filter) rc = cd.get(d->index, (size_t)(mt * cap) * sizeof(uint32_t), op);
  if (!rc && filter) rc = ci.get(d->index, (size_t)(mt * cap) * sizeof(uint32_t), op);
  if (!rc && filter) rc = count.get(d->index, (size_t)mt * sizeof(int), op);
  if (!rc && stream) rc = sorted.get(d->index, (size_t)(n * w) * sizeof(uint32_t), op);
  if (!rc && stream) rc = perm.get(d->index, (size_t)n * sizeof(uint32_t), op);
  if (!rc && stream) rc = pops.get(d->index, (size_t)n * sizeof(int), op);
  if (!rc && stream) rc = bins.get(d->index, (size_t)o.rounds * ORD_BINS * sizeof(uint32_t), op);
  if (!rc) rc = popc_rows(d, q, m, w, pq.as<int>(), op);
  if (!rc) rc = popc_rows(d, r, n, w, pr.as<int>(), op);
  if (!rc && stream) {
    o.codes = (const uint4 *)r;
    o.pops = pr.as<int>();
    o.bins = bins.as<uint32_t>();
    o.out_codes = sorted.as<uint4>();
    o.out_index = perm.as<uint32_t>();
    o.out_pops = pops.as<int>();
    rc = order_rounds(d, o, op);
  }
  /* the rounds' references: sorted where the stream filter takes them */
  const uint32_t *rr = stream ? sorted.as<uint32_t>() : r;
  const int *rp = stream ? pops.as<int>() : pr.as<int>();
  for (int64_t i0 = 0; !rc && i0 < m; i0 += mt) {
    int64_t mi = m - i0 < mt ? m - i0 : mt;
    uint32_t *dist = array_ptr<uint32_t>(p->dist) + i0 * k;
    int64_t *index = array_ptr<int64_t>(p->index) + i0 * k;
    KnnArgs a = {};
    a.mt = mi;
    a.k = k;
    a.w = w;
    a.dist = dist;
    a.index = index;
    a.lk = lk.as<uint32_t>();
    a.li = li.as<int64_t>();
    for (int64_t j0 = 0; !rc && j0 < (filter ? smp : n); j0 += step) {
      int64_t nj = n - j0 < step ? n - j0 : step;
      MmArgs g = {};
      g.a = q + i0 * w;
      g.b = r + j0 * w;
      g.pa = pq.as<int>() + i0;
      g.pb = pr.as<int>() + j0;
      g.out = work.as<int32_t>();
      g.m = mi;
      g.n = nj;
      g.w = w;
      g.ldo = nj;
      g.hamming = 1;
      rc = mm_launch<false>(d, g, 1, op);
      a.work = work.as<uint32_t>();
      a.nt = nj;
      a.base = j0;
      a.first = j0 == 0;
      if (!rc) rc = knn_select<SRC_TILE>(d, a, op);
    }
    a.first = 0;
    a.cand_d = cd.as<uint32_t>();
    a.cand_i = ci.as<uint32_t>();
    a.count = count.as<int>();
    a.cap = cap;
    a.q = q + i0 * w;
    a.r = rr;
    a.perm = stream ? perm.as<uint32_t>() : nullptr;
    for (int64_t base = smp; filter && !rc && base < n; base = a.n) {
      const int64_t c = round_length(base, n, cap, k);
      rc = cuda_check(cudaMemsetAsync(count.ptr, 0, (size_t)mi * sizeof(int), d->stream), op);
      MmArgs g = {};
      g.a = q + i0 * w;
      g.b = rr + base * w;
      g.pa = pq.as<int>() + i0;
      g.pb = rp + base;
      g.m = mi;
      g.n = c;
      g.w = w;
      g.hamming = 1;
      g.thr = dist + k - 1;
      g.thr_stride = k;
      g.base = base;
      g.cap = cap;
      g.cand_d = cd.as<uint32_t>();
      g.cand_i = ci.as<uint32_t>();
      g.count = count.as<int>();
      g.perm = stream ? perm.as<uint32_t>() + base : nullptr;
      /* votes on half steps where about one reference in 1024 or more
       * passes (k / base), on quarter steps where one in 256 or more
       * does: the exact tests of a flagged row take half or a quarter as
       * many; on two steps where one in 16384 or fewer does: there the
       * votes cost more than the exact tests */
      const int span = base < 256 * k    ? KS_STEP / 4
                       : base < 1024 * k  ? KS_STEP / 2
                       : base < 16384 * k ? KS_STEP
                                          : 2 * KS_STEP;
      if (!rc) rc = stream ? knn_stream(d, g, span, op) : mm_launch<true>(d, g, 1, op);
      a.base = base;
      a.n = base + c;
      if (!rc) rc = knn_select<SRC_FILTER>(d, a, op);
    }
  }
  return rc;
}

/* ---- peak ---- */

#define PEAK_ITERS 4096
#define PEAK_CHAINS 8

/* Bare mma.and.popc from registers: PEAK_CHAINS independent accumulators
 * a warp, PEAK_ITERS rounds; the sum is stored where it cannot be equal,
 * so the work stays. */
__global__ void __launch_bounds__(256) binary_peak_kernel(int *sink) {
  const uint32_t x = threadIdx.x * 0x9E3779B9u + blockIdx.x;
  const uint32_t a[4] = {x, x ^ 1u, x + 3u, x * 5u};
  int c[PEAK_CHAINS][4] = {};
  for (int i = 0; i < PEAK_ITERS; i++)
#pragma unroll
    for (int j = 0; j < PEAK_CHAINS; j++) mma_and_popc(c[j], a, x ^ (uint32_t)j, x + 7u);
  int s = 0;
#pragma unroll
  for (int j = 0; j < PEAK_CHAINS; j++) s += c[j][0] + c[j][1] + c[j][2] + c[j][3];
  if (s == -1) *sink = s;
}

/* The faster of the two: mma.sync from registers and, on Hopper, the
 * warpgroup MMA from shared memory (15.6 against 9.4 peta-ops a second
 * on an H200). */
static int cuda_binary_peak(ml_device device, double *ops) {
  cuda_dev *d;
  int rc = cuda_enter(device.index, &d);
  if (rc) return rc;
  const char *op = "binary.peak";
  cuda_scratch sink;
  rc = sink.get(d->index, sizeof(int), op);
  const unsigned blocks = (unsigned)d->sms * 8;
  float ms = 0;
  if (!rc)
    rc = time_second_run(
        d,
        [&] { return cuda_launch<binary_peak_kernel>(d, blocks, 256, 0, op, sink.as<int>()); },
        &ms, op);
  const double mma = (double)blocks * 8 * PEAK_ITERS * PEAK_CHAINS; /* warps' mma */
  *ops = !rc && ms > 0 ? mma * 2 * 16 * 8 * 256 / (ms * 1e-3) : 0;
  double wg = 0;
  if (!rc && d->cc == 90) rc = peak_wgmma(d, &wg, op);
  if (wg > *ops) *ops = wg;
  return rc;
}

extern "C" const ml_binary_backend cuda_binary_backend = {
    cuda_binary_pack, cuda_binary_unpack, cuda_binary_mm, cuda_binary_knn, cuda_binary_peak};
