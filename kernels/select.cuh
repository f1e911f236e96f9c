/* Selection of the L best (key, index) pairs of a row, for lists of any
 * length: the kNN candidate lists and refinement (knn.cu) and topk for
 * 32 < k <= WARP_L (sort.cu; smaller k go to WarpSelect there, which is
 * faster on such short lists).
 *
 * A group of threads, a warp or (for lists longer than WARP_L) a block,
 * keeps the L best pairs of a row as a sorted list, two copies used in
 * turn (in shared memory for a warp, in global scratch for a block), and
 * a buffer of new candidates in shared memory. A candidate enters the
 * buffer only when it beats the list's last pair, the threshold: one
 * comparison and one vote of the group rule out most candidates of a long
 * row (the caller makes that quick test, on values or on keys), and the
 * few that pass are placed by ballots. When the buffer holds BB pairs it
 * is sorted (bitonic, over the power of two it fills) and merged with the
 * list into the other copy, each pair's new rank found by a binary search
 * in the other sequence; that tightens the threshold. Merges are out of
 * line, so that the hot loops keep their registers. Pairs are ordered by
 * (order key, index), keys as in core/order_key.h: a strict total order,
 * so the result does not depend on how a row was split. Lists of any
 * length work. */
#ifndef ML_CUDA_SELECT_CUH
#define ML_CUDA_SELECT_CUH

#include <stdint.h>

#include <type_traits>

#include "warp.cuh"

/* A warp's selection: its buffer, and the longest list given to a warp
 * (kept in shared memory). */
#define WARP_BB 128
#define WARP_L 256
/* A block's selection: its threads and its buffer (its list is in global
 * scratch). */
#define BLOCK_G 256
#define BLOCK_BB 2048
/* Warps a block of the kernels that give each warp a row. */
#define SEL_WARPS 4

/* The order key type of a dtype: 32 bits for 4-byte and smaller dtypes. */
template <class T>
using key_type = typename std::conditional<sizeof(T) == 8, uint64_t, uint32_t>::type;

/* A candidate's order key: a value's, or a key as it is. */
__device__ __forceinline__ uint32_t sel_key(float x) { return ml_order_key(x); }
__device__ __forceinline__ uint64_t sel_key(double x) { return ml_order_key(x); }
__device__ __forceinline__ uint32_t sel_key(uint32_t k) { return k; }
__device__ __forceinline__ uint64_t sel_key(uint64_t k) { return k; }

/* The state of a row's selection, in shared memory: the threshold (the
 * list's last pair), the buffer's fill and the copy of the list in use. */
template <class K> struct SelState {
  K thk;
  int64_t thi;
  int count, cur;
};

/* Where a row's selection lives. */
template <class K> struct Lists {
  K *bk;           /* shared: the buffer's keys and indices */
  int64_t *bi;
  SelState<K> *st; /* shared */
  K *lk;           /* shared or global: two copies of the list, L each */
  int64_t *li;
  int64_t L;
};

/* Shared bytes of a group's selection: a buffer of cap pairs, the state,
 * and the two copies of a list of ls pairs when the list lives there too
 * (ls = 0 when it does not); a multiple of 16. */
template <class K> __host__ __device__ constexpr size_t sel_bytes(int64_t ls, int cap) {
  return ((size_t)(cap + 2 * ls) * (sizeof(int64_t) + sizeof(K)) + sizeof(SelState<K>) + 15) /
         16 * 16;
}

/* The selection laid out at p (sel_bytes(L or 0, cap) bytes): its list of
 * L pairs there too when shared, else at glk and gli. */
template <class K>
__device__ __forceinline__ Lists<K> sel_carve(unsigned char *p, int64_t L, int cap, bool shared,
                                              K *glk, int64_t *gli) {
  int64_t ls = shared ? 2 * L : 0;
  int64_t *bi = (int64_t *)p;
  K *bk = (K *)(bi + cap + ls);
  SelState<K> *st = (SelState<K> *)(bk + cap + ls);
  return Lists<K>{bk, bi, st, shared ? bk + cap : glk, shared ? bi + cap : gli, L};
}

/* The pair of an empty place: after every candidate. */
template <class K> __device__ __forceinline__ K none_key() { return (K)~(K)0; }

template <class K>
__device__ __forceinline__ bool before(K ak, int64_t ai, K bk, int64_t bi) {
  return ak < bk || (ak == bk && ai < bi);
}

/* The number of pairs of the sorted a[0, n) before (k, i), or with LE
 * not after it. */
template <bool LE, class K>
__device__ __forceinline__ int64_t rank_in(const K *ak, const int64_t *ai, int64_t n, K k,
                                           int64_t i) {
  int64_t lo = 0, hi = n;
  while (lo < hi) {
    int64_t mid = (lo + hi) >> 1;
    bool left = LE ? !before(k, i, ak[mid], ai[mid]) : before(ak[mid], ai[mid], k, i);
    if (left)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* An empty list, threshold and buffer. Thread tid of the group of G. */
template <class K, int G> __device__ void sel_start(const Lists<K> &w, int tid) {
  for (int64_t p = tid; p < w.L; p += G) {
    w.lk[p] = none_key<K>();
    w.li[p] = INT64_MAX;
  }
  if (tid == 0) *w.st = SelState<K>{none_key<K>(), INT64_MAX, 0, 0};
  group_sync<G>();
}

/* Sorts the count (>= 1) buffered pairs, the first BB of them if more,
 * merges them with the list into its other copy and moves the rest to the
 * front of the buffer; returns their number. The state is updated. Out of
 * line: it is rare, and its callers keep little alive across it. */
template <class K, int G, int BB>
__device__ __noinline__ int sel_merge(const Lists<K> &w, int tid, int count) {
  /* locals: stores through the pointers cannot change them */
  K *const bk = w.bk;
  int64_t *const bi = w.bi;
  SelState<K> *const st = w.st;
  const int64_t L = w.L;
  group_sync<G>();
  const int nb = count < BB ? count : BB, cur = st->cur;
  int n = 2;
  while (n < nb) n <<= 1;
  for (int p = nb + tid; p < n; p += G) {
    bk[p] = none_key<K>();
    bi[p] = INT64_MAX;
  }
  group_sync<G>();
  for (int size = 2; size <= n; size <<= 1)
    for (int stride = size >> 1; stride > 0; stride >>= 1) {
      for (int t = tid; t < n / 2; t += G) {
        int i = 2 * t - (t & (stride - 1)), j = i + stride;
        K ki = bk[i], kj = bk[j];
        int64_t ii = bi[i], ij = bi[j];
        bool up = (i & size) == 0;
        if (up ? before(kj, ij, ki, ii) : before(ki, ii, kj, ij)) {
          bk[i] = kj;
          bk[j] = ki;
          bi[i] = ij;
          bi[j] = ii;
        }
      }
      group_sync<G>();
    }
  const K *const sk = w.lk + cur * L;
  const int64_t *const si = w.li + cur * L;
  K *const dk = w.lk + (cur ^ 1) * L;
  int64_t *const di = w.li + (cur ^ 1) * L;
  /* ranks in the merged sequence, the list's pair first among equals */
  for (int64_t p = tid; p < L; p += G) {
    K k = sk[p];
    int64_t i = si[p], r = p + rank_in<false>(bk, bi, (int64_t)nb, k, i);
    if (r < L) {
      dk[r] = k;
      di[r] = i;
    }
  }
  for (int q = tid; q < nb; q += G) {
    K k = bk[q];
    int64_t i = bi[q], r = q + rank_in<true>(sk, si, L, k, i);
    if (r < L) {
      dk[r] = k;
      di[r] = i;
    }
  }
  group_sync<G>();
  const int left = count - nb;
  for (int p = tid; p < left; p += G) {
    bk[p] = bk[BB + p];
    bi[p] = bi[BB + p];
  }
  if (tid == 0) *st = SelState<K>{dk[L - 1], di[L - 1], left, cur ^ 1};
  group_sync<G>();
  return left;
}

/* U candidates a thread: a value (float or double) or already an order
 * key (uint32_t or uint64_t), its index, and ok: a real candidate (and,
 * once tested, one that passed the caller's quick test against the
 * threshold). */
template <class T, int U> struct Cands {
  T key[U];
  int64_t id[U];
  bool ok[U];
};

/* Buffers the candidates that beat the threshold, merging when the buffer
 * holds BB: a warp's buffer has room for BB + 32 pairs, a block's for
 * BB + G * U. A warp places its pairs by ballots, a block by a shared
 * counter. */
template <class T, int G, int BB, int U>
__device__ __forceinline__ void sel_offer(const Lists<key_type<T>> &w, int tid,
                                          const Cands<T, U> &c) {
  using K = key_type<T>;
  static_assert(BB >= G * U || G == 32, "the buffer's overflow must fit before it");
  K thk = w.st->thk;
  int64_t thi = w.st->thi;
  if (G == 32) {
    int count = w.st->count;
#pragma unroll
    for (int u = 0; u < U; u++) {
      if (!__any_sync(FULL, c.ok[u])) continue;
      K k = sel_key(c.key[u]);
      bool in = c.ok[u] && before(k, c.id[u], thk, thi);
      unsigned b = __ballot_sync(FULL, in);
      if (in) {
        int pos = count + __popc(b & ((1u << tid) - 1));
        w.bk[pos] = k;
        w.bi[pos] = c.id[u];
      }
      count += __popc(b);
      if (count >= BB) {
        count = sel_merge<K, G, BB>(w, tid, count);
        thk = w.st->thk;
        thi = w.st->thi;
      }
    }
    __syncwarp();
    if (tid == 0) w.st->count = count;
    __syncwarp();
  } else {
#pragma unroll
    for (int u = 0; u < U; u++) {
      K k = sel_key(c.key[u]);
      if (c.ok[u] && before(k, c.id[u], thk, thi)) {
        int pos = atomicAdd(&w.st->count, 1);
        w.bk[pos] = k;
        w.bi[pos] = c.id[u];
      }
    }
    __syncthreads();
    int count = w.st->count;
    __syncthreads();
    if (count >= BB) sel_merge<K, G, BB>(w, tid, count);
  }
}

/* Merges what the buffer still holds; the list is then final. */
template <class K, int G, int BB> __device__ void sel_finish(const Lists<K> &w, int tid) {
  group_sync<G>();
  int count = w.st->count;
  group_sync<G>();
  while (count > 0) count = sel_merge<K, G, BB>(w, tid, count);
}

#endif
