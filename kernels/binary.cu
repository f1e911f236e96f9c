/* ±1 matrices packed into words on the GPU: the binary area's table
 * (contracts and the packed rows' layout in core/binary_backend.h).
 *
 * CPU reference: src/cpu/cpu_binary.c; the results are the CPU's, bit for
 * bit (integers throughout, and ties in the kNN lists go to the lower
 * index on both).
 *
 * pack: a warp a group of 8 words of a row (rows are whole groups), each
 * lane reading one value of each of the 8 words' 32 (coalesced 128-byte
 * reads, 8 in flight a lane) and 8 ballots making the words, which lanes
 * 0..7 store together; one pass over x, which is the memory floor.
 *
 * mm: tensor cores, mma.m16n8k256 b1 with AND and popcount: a CTA of 8
 * warps computes a 128 x 256 block of out, each warp 64 x 64 (4 x 8
 * tiles of 16 x 8), stepping k by 512 bits through shared memory filled
 * by cp.async, three stages in flight. A stage holds two planes, the
 * first 256 bits of each of the block's rows one after another, then the
 * second 256; each plane feeds one mma a tile (the second is skipped
 * when it is all padding, as for 256-bit codes). Fragments are read as 8
 * bytes a thread, no ldmatrix: the four threads of a quad read the four
 * 8-byte pieces of a row's 32 bytes, so a half warp reads four whole
 * rows, 128 contiguous bytes, free of bank conflicts. The k order of the
 * mma is free as long as A and B agree: thread t's words 2t and 2t + 1
 * go to the mma's k-slots t and t + 4, for A and B alike. The epilogue
 * turns popc(a AND b) into the dot product or the distance with the rows'
 * popcounts (binary_popc_rows). Nothing is loaded past the last row or
 * column (their results are not stored) or word (a plane of padding is
 * skipped).
 *
 * A CTA runs tpc column tiles through one pipeline when k is short (the
 * 256-bit codes of a search: one stage a tile), so that loads of the next
 * tiles overlap the epilogue of the last.
 *
 * knn: a query chunk meets the first references through a work block
 * of distances (mm's kernel) and a warp a query (a block for k > WARP_L)
 * selects with select.cuh's engine, keys the distances themselves; that
 * fills every list, and its k-th distance bounds the query's answer.
 * The rest of the references go through mm's kernel with the filter
 * epilogue: a pair below its query's bound is appended to the query's
 * candidates (an atomic counter; no m x n matrix), and a last selection
 * merges each list with its candidates, or, where they overflowed,
 * recomputes that query's distances to the rest on the CUDA cores. */
#include "launch.cuh"
#include "map.cuh"
#include "scratch.cuh"
#include "select.cuh"

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

static int cuda_binary_pack(const ml_array *out, const ml_array *in) {
  cuda_dev *d;
  int rc = cuda_enter(array_device(in), &d);
  if (rc) return rc;
  int64_t rows = in->shape[0], len = in->shape[1], w = out->shape[1];
  unsigned grid = grid_for(rows * (w / PACK_WORDS) * 32, 256, d, 16);
  uint32_t *o = array_ptr<uint32_t>(out);
  if (in->dtype == ML_FLOAT32)
    return cuda_launch<binary_pack_kernel<float>>(d, grid, 256, 0, "binary.pack",
                                                  array_ptr<const float>(in), o, rows, len, w);
  return cuda_launch<binary_pack_kernel<double>>(d, grid, 256, 0, "binary.pack",
                                                 array_ptr<const double>(in), o, rows, len, w);
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

/* out[r]: the popcount of row r (w words, a multiple of 8), a thread a
 * row. */
__global__ void binary_popc_rows(const uint4 *a, int *out, int64_t rows, int64_t w4) {
  const int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; r < rows; r += stride) {
    int s = 0;
    for (int64_t i = 0; i < w4; i++) {
      uint4 v = __ldg(a + r * w4 + i);
      s += __popc(v.x) + __popc(v.y) + __popc(v.z) + __popc(v.w);
    }
    out[r] = s;
  }
}

static int popc_rows(cuda_dev *d, const uint32_t *a, int64_t rows, int64_t w, int *out,
                     const char *op) {
  if (rows == 0) return ML_OK;
  return cuda_launch<binary_popc_rows>(d, grid_for(rows, 128, d), 128, 0, op, (const uint4 *)a,
                                       out, rows, w / 4);
}

/* ---- mm on the tensor cores ---- */

#define BM 128
#define BN 256
#define BKW 16 /* words of a row a stage: 512 bits */
#define STAGES 3
#define MM_THREADS 256
#define MM_SMEM ((size_t)STAGES * (BM + BN) * BKW * sizeof(uint32_t))

/* One launch of the product: batch item z of a at a + z sa, and so on. A
 * CTA computes the blocks of tpc consecutive column tiles of its row tile
 * in one pipeline (short k: the stages of the next tiles load while the
 * last one's epilogue runs). */
struct MmArgs {
  const uint32_t *a, *b; /* m x w, n x w packed rows a batch item */
  const int *pa, *pb;    /* their popcounts */
  int32_t *out;          /* m x n, rows ldo apart */
  int64_t m, n, w, ldo, bits, tpc;
  int64_t sa, sb, spa, spb, so; /* batch strides, in elements */
  int hamming;
  /* The filter (FILTER below): the pairs whose distance is below
   * thr[r * thr_stride] go to row r's candidates, base + the column. */
  const uint32_t *thr;
  int64_t thr_stride, base, cap;
  uint32_t *cand_d, *cand_i; /* m x cap */
  int *count;                /* m */
};

__device__ __forceinline__ void cp_async16(uint32_t *dst, const uint32_t *src) {
  unsigned s = (unsigned)__cvta_generic_to_shared(dst);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(src));
}

__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }

template <int N> __device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

/* c += popc(a AND b) over one m16n8k256 tile. */
__device__ __forceinline__ void mma_and_popc(int *c, uint32_t a0, uint32_t a1, uint32_t a2,
                                             uint32_t a3, uint32_t b0, uint32_t b1) {
  asm("mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.and.popc "
      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
      : "+r"(c[0]), "+r"(c[1]), "+r"(c[2]), "+r"(c[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

/* One stage: words k0 .. k0 + BKW - 1 of the block's BM rows of a and BN
 * rows of b, 16 bytes a cp.async. A stage of R rows is two planes of R x
 * 8 words: words k0 .. k0 + 7 of each row, then words k0 + 8 .. k0 + 15.
 * Nothing is loaded past the last row (those rows' results are not
 * stored, and each result depends on its own row and column only) or
 * past the last word (a plane of padding, which the mma skip). */
__device__ __forceinline__ void mm_stage(uint32_t *sa, uint32_t *sb, const MmArgs &p,
                                         const uint32_t *a, const uint32_t *b, int64_t r0,
                                         int64_t c0, int64_t k0) {
  const int tid = threadIdx.x;
#pragma unroll
  for (int u = 0; u < BM * 4 / MM_THREADS; u++) {
    int c = tid + u * MM_THREADS, row = c >> 2, q = c & 3;
    int64_t gr = r0 + row, gk = k0 + q * 4;
    if (gr < p.m && gk < p.w)
      cp_async16(sa + (q >> 1) * BM * 8 + row * 8 + (q & 1) * 4, a + gr * p.w + gk);
  }
#pragma unroll
  for (int u = 0; u < BN * 4 / MM_THREADS; u++) {
    int c = tid + u * MM_THREADS, row = c >> 2, q = c & 3;
    int64_t gr = c0 + row, gk = k0 + q * 4;
    if (gr < p.n && gk < p.w)
      cp_async16(sb + (q >> 1) * BN * 8 + row * 8 + (q & 1) * 4, b + gr * p.w + gk);
  }
}

/* The block at (r0, c0) from its accumulators: out's values, or with
 * FILTER the candidates. */
template <bool FILTER>
__device__ __forceinline__ void mm_epilogue(const MmArgs &p, int (&acc)[4][8][4], int64_t z,
                                            int64_t r0, int64_t c0, int wm, int wn, int g,
                                            int t) {
  const int *pa = p.pa + z * p.spa, *pb = p.pb + z * p.spb;
  int32_t *out = p.out + z * p.so;
  /* col is even: pairs are 8-byte aligned when the rows and the block
   * are */
  const bool pair = !FILTER && (p.ldo & 1) == 0 && ((uintptr_t)out & 7) == 0;
#pragma unroll
  for (int i = 0; i < 4; i++)
#pragma unroll
    for (int h = 0; h < 2; h++) {
      int64_t row = r0 + wm * 64 + i * 16 + g + h * 8;
      if (row >= p.m) continue;
      int ra = pa[row];
      uint32_t th = FILTER ? p.thr[row * p.thr_stride] : 0;
#pragma unroll
      for (int j = 0; j < 8; j++) {
        int64_t col = c0 + wn * 64 + j * 8 + t * 2;
        if (!FILTER && pair && col + 1 < p.n) { /* both, 8 bytes at once */
          int d0 = ra + pb[col] - 2 * acc[i][j][h * 2];
          int d1 = ra + pb[col + 1] - 2 * acc[i][j][h * 2 + 1];
          if (!p.hamming) {
            d0 = (int)(p.bits - 2 * d0);
            d1 = (int)(p.bits - 2 * d1);
          }
          *(int2 *)(out + row * p.ldo + col) = make_int2(d0, d1);
          continue;
        }
#pragma unroll
        for (int e = 0; e < 2; e++)
          if (col + e < p.n) {
            int dist = ra + pb[col + e] - 2 * acc[i][j][h * 2 + e];
            if (!FILTER) {
              out[row * p.ldo + col + e] = p.hamming ? dist : (int32_t)(p.bits - 2 * dist);
            } else if ((uint32_t)dist < th) {
              int pos = atomicAdd(p.count + row, 1);
              if (pos < p.cap) {
                p.cand_d[row * p.cap + pos] = (uint32_t)dist;
                p.cand_i[row * p.cap + pos] = (uint32_t)(p.base + col + e);
              }
            }
          }
      }
    }
}

template <bool FILTER> __global__ void __launch_bounds__(MM_THREADS, 1) binary_mm_tc(MmArgs p) {
  extern __shared__ __align__(16) uint32_t mm_smem[];
  uint32_t *smem = mm_smem;
  const int64_t z = blockIdx.z;
  const uint32_t *a = p.a + z * p.sa, *b = p.b + z * p.sb;
  const int64_t r0 = (int64_t)blockIdx.y * BM, tile0 = (int64_t)blockIdx.x * p.tpc;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  const int wm = warp >> 2, wn = warp & 3; /* 2 x 4 warps of 64 x 64 */
  const int64_t steps = (p.w + BKW - 1) / BKW, tiles = (p.n + BN - 1) / BN;
  const int64_t iters = (tiles - tile0 < p.tpc ? tiles - tile0 : p.tpc) * steps;
  int acc[4][8][4];
#pragma unroll
  for (int i = 0; i < 4; i++)
#pragma unroll
    for (int j = 0; j < 8; j++)
#pragma unroll
      for (int e = 0; e < 4; e++) acc[i][j][e] = 0;

  /* iteration it: k-step it % steps of column tile tile0 + it / steps */
#pragma unroll
  for (int s = 0; s < STAGES - 1; s++) {
    uint32_t *sa = smem + s * (BM + BN) * BKW;
    if (s < iters)
      mm_stage(sa, sa + BM * BKW, p, a, b, r0, (tile0 + s / steps) * BN, s % steps * BKW);
    cp_async_commit();
  }
  for (int64_t it = 0; it < iters; it++) {
    cp_async_wait<STAGES - 2>();
    __syncthreads(); /* stage it is in; stage it - 1 is read by all */
    int64_t next = it + STAGES - 1;
    if (next < iters) {
      uint32_t *sa = smem + next % STAGES * (BM + BN) * BKW;
      mm_stage(sa, sa + BM * BKW, p, a, b, r0, (tile0 + next / steps) * BN,
               next % steps * BKW);
    }
    cp_async_commit();
    const int64_t ks = it % steps;
    const uint32_t *as = smem + it % STAGES * (BM + BN) * BKW, *bs = as + BM * BKW;
    const bool half = ks * BKW + BKW / 2 >= p.w; /* the second plane is padding */
#pragma unroll
    for (int h = 0; h < 2; h++) {
      if (h == 1 && half) break;
      const uint32_t *ap = as + h * BM * 8, *bp = bs + h * BN * 8;
      uint2 lo[4], hi[4];
#pragma unroll
      for (int i = 0; i < 4; i++) {
        lo[i] = *(const uint2 *)(ap + (wm * 64 + i * 16 + g) * 8 + t * 2);
        hi[i] = *(const uint2 *)(ap + (wm * 64 + i * 16 + g + 8) * 8 + t * 2);
      }
#pragma unroll
      for (int j = 0; j < 8; j++) {
        uint2 bv = *(const uint2 *)(bp + (wn * 64 + j * 8 + g) * 8 + t * 2);
#pragma unroll
        for (int i = 0; i < 4; i++)
          mma_and_popc(acc[i][j], lo[i].x, hi[i].x, lo[i].y, hi[i].y, bv.x, bv.y);
      }
    }
    if (ks == steps - 1) {
      mm_epilogue<FILTER>(p, acc, z, r0, (tile0 + it / steps) * BN, wm, wn, g, t);
#pragma unroll
      for (int i = 0; i < 4; i++)
#pragma unroll
        for (int j = 0; j < 8; j++)
#pragma unroll
          for (int e = 0; e < 4; e++) acc[i][j][e] = 0;
    }
  }
  cp_async_wait<0>();
}

/* The launches of p over `batch` items, within the grid's limits; tpc
 * column tiles a CTA where k is short. */
template <bool FILTER> static int mm_launch(cuda_dev *d, MmArgs p, int64_t batch, const char *op) {
  const int64_t zmax = 65535, rmax = (int64_t)65535 * BM;
  const int64_t m = p.m, steps = (p.w + BKW - 1) / BKW, tiles = (p.n + BN - 1) / BN;
  p.tpc = steps >= 8 ? 1 : 8 / steps;
  for (int64_t z0 = 0; z0 < batch; z0 += zmax)
    for (int64_t i0 = 0; i0 < m; i0 += rmax) {
      MmArgs q = p;
      q.a += z0 * p.sa + i0 * p.w;
      q.pa += z0 * p.spa + i0;
      q.b += z0 * p.sb;
      q.pb += z0 * p.spb;
      q.out += z0 * p.so + i0 * p.ldo;
      if (FILTER) {
        q.thr += i0 * p.thr_stride;
        q.cand_d += i0 * p.cap;
        q.cand_i += i0 * p.cap;
        q.count += i0;
      }
      q.m = m - i0 < rmax ? m - i0 : rmax;
      int64_t nz = batch - z0 < zmax ? batch - z0 : zmax;
      dim3 grid((unsigned)((tiles + p.tpc - 1) / p.tpc), (unsigned)((q.m + BM - 1) / BM),
                (unsigned)nz);
      int rc = cuda_launch<binary_mm_tc<FILTER>>(d, grid, MM_THREADS, MM_SMEM, op, q);
      if (rc) return rc;
    }
  return ML_OK;
}

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
 * queries a chunk, the candidates a query of the filter at least, and the
 * first chunk of the filtered search at least (and 16 k). */
#define KNN_WORK_BYTES ((int64_t)512 << 20)
#define KNN_QUERIES 16384
#define KNN_CAP 2048
#define KNN_SAMPLE 4096

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
  /* SRC_FILTER: the filter's candidates of row i, or where they
   * overflowed (count[i] > cap), every reference from base to n - 1
   * again, its distance computed here */
  const uint32_t *cand_d, *cand_i;
  const int *count;
  int64_t cap;
  const uint32_t *q, *r; /* the chunk's queries, all references */
  int64_t w, n;
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

/* Query row i: its old list and its new candidates through the selection
 * w, then the list back to dist and index. */
template <int SRC, int G, int BB, int U>
__device__ void knn_row(const KnnArgs &a, const Lists<uint32_t> &w, int tid, int64_t i) {
  sel_start<uint32_t, G>(w, tid);
  uint32_t th = w.st->thk;
  if (!a.first)
    knn_offer_all<G, BB, 1>(w, tid, th, a.k, [&](int64_t p, uint32_t &key, int64_t &id) {
      id = a.index[i * a.k + p];
      key = a.dist[i * a.k + p];
      if (id == INT64_MAX) key = none_key<uint32_t>(); /* loses to every pair */
    });
  if (SRC == SRC_TILE) {
    const uint32_t *row = a.work + i * a.nt;
    knn_offer_all<G, BB, U>(w, tid, th, a.nt, [&](int64_t j, uint32_t &key, int64_t &id) {
      key = __ldcs(row + j);
      id = a.base + j + 1;
    });
  } else if (a.count[i] <= a.cap) {
    const uint32_t *cd = a.cand_d + i * a.cap, *ci = a.cand_i + i * a.cap;
    knn_offer_all<G, BB, U>(w, tid, th, a.count[i], [&](int64_t j, uint32_t &key, int64_t &id) {
      key = cd[j];
      id = (int64_t)ci[j] + 1;
    });
  } else {
    const uint4 *qi = (const uint4 *)(a.q + i * a.w);
    knn_offer_all<G, BB, U>(w, tid, th, a.n - a.base,
                            [&](int64_t j, uint32_t &key, int64_t &id) {
                              const uint4 *rj = (const uint4 *)(a.r + (a.base + j) * a.w);
                              int s = 0;
                              for (int64_t v = 0; v < a.w / 4; v++) {
                                uint4 x = __ldg(qi + v), y = __ldg(rj + v);
                                s += __popc(x.x ^ y.x) + __popc(x.y ^ y.y) +
                                     __popc(x.z ^ y.z) + __popc(x.w ^ y.w);
                              }
                              key = (uint32_t)s;
                              id = a.base + j + 1;
                            });
  }
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

template <int SRC> static int knn_select(cuda_dev *d, const KnnArgs &a, const char *op) {
  if (a.k <= WARP_L)
    return cuda_launch<binary_knn_warp<SRC>>(d, blocks_for(a.mt, SEL_WARPS), SEL_WARPS * 32,
                                             SEL_WARPS * sel_bytes<uint32_t>(a.k, WARP_BB + 32),
                                             op, a);
  return cuda_launch<binary_knn_block<SRC>>(d, blocks_for(a.mt, 1), BLOCK_G, 0, op, a);
}

/* A query's candidates for a first chunk of s references: about k (n -
 * s) / s pass the filter on random codes, so thrice that, within the
 * bounds (a query that overflows is recomputed, which is slow but
 * exact). */
static int64_t knn_cap(int64_t k, int64_t n, int64_t s, int64_t mt) {
  int64_t cap = 3 * k * (n - s) / s, most = KNN_WORK_BYTES / 8 / mt;
  cap = cap > KNN_CAP ? cap : KNN_CAP;
  cap = cap > 8 * k ? cap : 8 * k;
  return cap < most ? cap : most > 8 * k ? most : 8 * k;
}

/* A query chunk's search: the first s references through the work block
 * (a tile), which makes every list full (s >= 8 k); then the filter over
 * the rest keeps the pairs below each list's k-th distance (a later
 * reference at that distance loses to the list's, its index being
 * larger), and a merge of each list with its candidates. s is
 * KNN_SAMPLE or 16 k, or nt when the candidates would take more than the
 * work block. Where nt < 8 k, the references go through the work block
 * nt at a time. */
static int cuda_binary_knn(const ml_binary_knn_desc *p) {
  cuda_dev *d;
  int rc = cuda_enter(array_device(p->queries), &d);
  if (rc) return rc;
  const char *op = "knn";
  int64_t m = p->queries->shape[0], n = p->refs->shape[0], w = p->queries->shape[1], k = p->k;
  int64_t mt = m < KNN_QUERIES ? m : KNN_QUERIES;
  int64_t nt = KNN_WORK_BYTES / 4 / mt / BN * BN;
  nt = nt < BN ? BN : nt > n ? n : nt;
  int64_t smp = (16 * k > KNN_SAMPLE ? 16 * k : KNN_SAMPLE) + BN - 1;
  smp = smp / BN * BN;
  if (smp > nt || (double)mt * 3 * k * (n - smp) / smp * 8 > KNN_WORK_BYTES) smp = nt;
  const bool filter = smp < n && 8 * k <= smp;
  const int64_t cap = filter ? knn_cap(k, n, smp, mt) : 0, step = filter ? smp : nt;
  const uint32_t *q = array_ptr<const uint32_t>(p->queries);
  const uint32_t *r = array_ptr<const uint32_t>(p->refs);
  cuda_scratch pq, pr, work, lk, li, cd, ci, count;
  rc = pq.get(d->index, (size_t)m * sizeof(int), op);
  if (!rc) rc = pr.get(d->index, (size_t)n * sizeof(int), op);
  if (!rc) rc = work.get(d->index, (size_t)(mt * step) * sizeof(uint32_t), op);
  if (!rc && k > WARP_L) rc = lk.get(d->index, (size_t)(mt * 2 * k) * sizeof(uint32_t), op);
  if (!rc && k > WARP_L) rc = li.get(d->index, (size_t)(mt * 2 * k) * sizeof(int64_t), op);
  if (!rc && filter) rc = cd.get(d->index, (size_t)(mt * cap) * sizeof(uint32_t), op);
  if (!rc && filter) rc = ci.get(d->index, (size_t)(mt * cap) * sizeof(uint32_t), op);
  if (!rc && filter) rc = count.get(d->index, (size_t)mt * sizeof(int), op);
  if (!rc) rc = popc_rows(d, q, m, w, pq.as<int>(), op);
  if (!rc) rc = popc_rows(d, r, n, w, pr.as<int>(), op);
  for (int64_t i0 = 0; !rc && i0 < m; i0 += mt) {
    int64_t mi = m - i0 < mt ? m - i0 : mt;
    uint32_t *dist = array_ptr<uint32_t>(p->dist) + i0 * k;
    int64_t *index = array_ptr<int64_t>(p->index) + i0 * k;
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
      KnnArgs a = {};
      a.work = work.as<uint32_t>();
      a.mt = mi;
      a.nt = nj;
      a.k = k;
      a.base = j0;
      a.dist = dist;
      a.index = index;
      a.lk = lk.as<uint32_t>();
      a.li = li.as<int64_t>();
      a.first = j0 == 0;
      if (!rc) rc = knn_select<SRC_TILE>(d, a, op);
    }
    if (rc || !filter) continue;
    rc = cuda_check(cudaMemsetAsync(count.ptr, 0, (size_t)mi * sizeof(int), d->stream), op);
    MmArgs g = {};
    g.a = q + i0 * w;
    g.b = r + smp * w;
    g.pa = pq.as<int>() + i0;
    g.pb = pr.as<int>() + smp;
    g.m = mi;
    g.n = n - smp;
    g.w = w;
    g.hamming = 1;
    g.thr = dist + k - 1;
    g.thr_stride = k;
    g.base = smp;
    g.cap = cap;
    g.cand_d = cd.as<uint32_t>();
    g.cand_i = ci.as<uint32_t>();
    g.count = count.as<int>();
    if (!rc) rc = mm_launch<true>(d, g, 1, op);
    KnnArgs a = {};
    a.mt = mi;
    a.k = k;
    a.base = smp;
    a.dist = dist;
    a.index = index;
    a.lk = lk.as<uint32_t>();
    a.li = li.as<int64_t>();
    a.cand_d = cd.as<uint32_t>();
    a.cand_i = ci.as<uint32_t>();
    a.count = count.as<int>();
    a.cap = cap;
    a.q = q + i0 * w;
    a.r = r;
    a.w = w;
    a.n = n;
    if (!rc) rc = knn_select<SRC_FILTER>(d, a, op);
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
  uint32_t x = threadIdx.x * 0x9E3779B9u + blockIdx.x;
  int c[PEAK_CHAINS][4] = {};
  for (int i = 0; i < PEAK_ITERS; i++)
#pragma unroll
    for (int j = 0; j < PEAK_CHAINS; j++)
      mma_and_popc(c[j], x, x ^ 1u, x + 3u, x * 5u, x ^ (uint32_t)j, x + 7u);
  int s = 0;
#pragma unroll
  for (int j = 0; j < PEAK_CHAINS; j++) s += c[j][0] + c[j][1] + c[j][2] + c[j][3];
  if (s == -1) *sink = s;
}

static int cuda_binary_peak(ml_device device, double *ops) {
  cuda_dev *d;
  int rc = cuda_enter(device.index, &d);
  if (rc) return rc;
  const char *op = "binary.peak";
  cuda_scratch sink;
  rc = sink.get(d->index, sizeof(int), op);
  unsigned blocks = (unsigned)d->sms * 8;
  cudaEvent_t e0 = nullptr, e1 = nullptr;
  if (!rc) rc = cuda_check(cudaEventCreate(&e0), op);
  if (!rc) rc = cuda_check(cudaEventCreate(&e1), op);
  if (!rc) rc = cuda_launch<binary_peak_kernel>(d, blocks, 256, 0, op, sink.as<int>());
  if (!rc) rc = cuda_check(cudaEventRecord(e0, d->stream), op);
  if (!rc) rc = cuda_launch<binary_peak_kernel>(d, blocks, 256, 0, op, sink.as<int>());
  if (!rc) rc = cuda_check(cudaEventRecord(e1, d->stream), op);
  if (!rc) rc = cuda_check(cudaEventSynchronize(e1), op);
  float ms = 0;
  if (!rc) rc = cuda_check(cudaEventElapsedTime(&ms, e0, e1), op);
  if (e0) cudaEventDestroy(e0);
  if (e1) cudaEventDestroy(e1);
  double mma = (double)blocks * 8 * PEAK_ITERS * PEAK_CHAINS; /* warps' mma */
  *ops = !rc && ms > 0 ? mma * 2 * 16 * 8 * 256 / (ms * 1e-3) : 0;
  return rc;
}

extern "C" const ml_binary_backend cuda_binary_backend = {
    cuda_binary_pack, cuda_binary_unpack, cuda_binary_mm, cuda_binary_knn, cuda_binary_peak};
