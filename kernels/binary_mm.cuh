/* The product of packed ±1 rows on the tensor cores, for binary.cu
 * (included there once): out = bits - 2 popc(a XOR b) or the Hamming
 * distance popc(a XOR b), from popc(a AND b) and the rows' popcounts;
 * with FILTER, the pairs below a row's bound appended to its candidates
 * (the kNN's filter for codes longer than 256 bits).
 *
 * mma.m16n8k256 b1 with AND and popcount: a CTA of 16 warps computes
 * a 128 x 256 block of out, each warp 64 x 32 (4 x 4 tiles of 16 x 8;
 * 64 accumulators, so that 16 warps fit and hide each other's
 * latencies, where 8 warps of 64 x 64 left the tensor pipe idle as
 * often), stepping k by 512 bits through shared memory filled by
 * cp.async, three stages in flight. A stage holds two planes, the first
 * 256 bits of each of the block's rows one after another, then the
 * second 256 (each row's two 16-byte halves swapped on every other four
 * rows, so that ldmatrix reads free of bank conflicts); each plane feeds
 * one mma a tile (the second is skipped when it is all padding). The
 * fragments come by ldmatrix.x4, in the registers the mma takes. The
 * main loop counts its tiles and k-steps without division and keeps its
 * addresses in registers: at 8192^3 the mma were 1 instruction of 12
 * (64-bit division of the counters), then of 8 (addresses recomputed a
 * stage), now of 5.6. The epilogue turns popc(a AND b) into the dot
 * product or the distance with the rows' popcounts (binary_popc_rows,
 * staged in shared memory), and streams out (it is read once, after).
 * Nothing is loaded past the last row or column (their results are not
 * stored) or word (a plane of padding is skipped).
 *
 * The grid runs row tiles fastest, so the CTAs at work at once hold
 * different rows (the filter's counters are a row's) and share column
 * tiles. A CTA runs tpc column tiles through one pipeline when k is
 * short (one stage a tile), so that loads of the next tiles overlap the
 * epilogue of the last. */
#ifndef ML_CUDA_BINARY_MM_CUH
#define ML_CUDA_BINARY_MM_CUH

#include <climits>

#include "launch.cuh"
#include "stream.cuh"

#define BM 128
#define BN 256
#define BKW 16 /* words of a row a stage: 512 bits */
#define STAGES 3
#define WM 64 /* a warp's rows and columns */
#define WN 32
#define MI (WM / 16) /* its mma tiles */
#define NJ (WN / 8)
#define MM_THREADS (BM / WM * BN / WN * 32)
/* a stage: A's two planes, B's two planes, B's popcounts */
#define STAGE_WORDS ((BM + BN) * BKW + BN)
#define MM_SMEM (((size_t)STAGES * STAGE_WORDS + 2 * BM) * sizeof(uint32_t))

/* One launch of the product: batch item z of a at a + z sa, and so on.
 * The grid is row tiles (x) by groups of tpc consecutive column tiles
 * (y) by batch items (z); a CTA runs its group's tiles through one
 * pipeline (short k: the stages of the next tiles load while the last
 * one's epilogue runs). */
struct MmArgs {
  const uint32_t *a, *b; /* m x w, n x w packed rows a batch item */
  const int *pa, *pb;    /* their popcounts */
  int32_t *out;          /* m x n, rows ldo apart */
  int64_t m, n, w, ldo, bits;
  int steps, tiles, tpc; /* k-steps of BKW words; column tiles, a CTA's */
  int64_t sa, sb, spa, spb, so; /* batch strides, in elements */
  int hamming;
  /* The filter (FILTER below): the pairs whose distance is below
   * thr[r * thr_stride] go to row r's candidates, base + the column
   * (binary_stream.cuh's: perm[the column]). */
  const uint32_t *thr;
  int64_t thr_stride, base, cap;
  uint32_t *cand_d, *cand_i; /* m x cap */
  int *count;                /* m */
  /* binary_stream.cuh's filter: b's rows sorted by popcount (pb
   * likewise), and each one's index among all references */
  const uint32_t *perm;
};

__device__ __forceinline__ unsigned smem_addr(const void *p) {
  return (unsigned)__cvta_generic_to_shared(p);
}

/* Four 8 x 16-byte matrices from shared memory (at shared address a),
 * lanes 8 j .. 8 j + 7 giving matrix j's rows: register j of lane l is
 * word l % 4 of row l / 4 of matrix j. */
__device__ __forceinline__ void ldmatrix4(uint32_t (&r)[4], unsigned a) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(a));
}

/* x, which the compiler may no longer recompute from its sources: the
 * main loop's addresses are kept in registers. ptxas rematerialised
 * them at every stage (160 instructions a stage and warp, for 32 mma). */
__device__ __forceinline__ unsigned opaque(unsigned x) {
  asm volatile("mov.b32 %0, %0;" : "+r"(x));
  return x;
}

__device__ __forceinline__ const uint32_t *opaque(const uint32_t *p) {
  asm volatile("mov.b64 %0, %0;" : "+l"(p));
  return p;
}

/* c += popc(a AND b) over one m16n8k256 tile; with FIRST, c = that
 * (a tile's first k-step: no zeroing of the accumulators). */
template <bool FIRST = false>
__device__ __forceinline__ void mma_and_popc(int *c, const uint32_t (&a)[4], uint32_t b0,
                                             uint32_t b1) {
  if (FIRST)
    asm("mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.and.popc "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %10, %10, %10};\n"
        : "=r"(c[0]), "=r"(c[1]), "=r"(c[2]), "=r"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1), "r"(0));
  else
    asm("mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.and.popc "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+r"(c[0]), "+r"(c[1]), "+r"(c[2]), "+r"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

/* A plane of R rows in shared memory: row r's 8 words (256 bits) at 8 r,
 * its two 16-byte halves swapped where bit 2 of r is set, so that the 8
 * rows of an ldmatrix (32 bytes apart) hit 32 different banks. */
__device__ __forceinline__ int plane_at(int row, int half) {
  return row * 8 + ((half ^ (row >> 2)) & 1) * 4;
}

/* The loader's part of a thread: quarter q = tid % 4 of the stage's 16
 * words (plane q / 2, half q % 2) of A's row tid / 4 and B's rows tid / 4
 * + 128 u, 16 bytes a cp.async. Nothing is loaded past the last row
 * (those rows' results are not stored, and each result depends on its
 * own row and column only) or past the last word (a plane of padding,
 * which the mma skip). */
struct MmLoader {
  const uint32_t *ar, *br; /* the rows' quarters at k-step 0 (B's row u at br + 128 u w) */
  unsigned sa, sb, sc;     /* shared addresses in stage 0: A's, B's, B's popcount */
  int qw;                  /* the quarter's first word in a row */
  unsigned valid;          /* bit 0: A's row; bit 1 + u: B's */

  __device__ void start(const MmArgs &p, const uint32_t *smem, const uint32_t *a, int64_t r0) {
    const int lrow = threadIdx.x >> 2, q = threadIdx.x & 3;
    const unsigned base = smem_addr(smem);
    qw = opaque(q * 4);
    sa = opaque(base + 4 * ((q >> 1) * BM * 8 + plane_at(lrow, q)));
    sb = opaque(base + 4 * (BM * BKW + (q >> 1) * BN * 8 + plane_at(lrow, q)));
    sc = opaque(base + 4 * ((BM + BN) * BKW + threadIdx.x));
    valid = r0 + lrow < p.m;
    ar = opaque(a + (r0 + lrow < p.m ? r0 + lrow : 0) * p.w + qw);
  }

  __device__ void tile(const MmArgs &p, const uint32_t *b, int64_t c0) {
    const int64_t row = c0 + (threadIdx.x >> 2);
    valid = (valid & 1) | (unsigned)(row < p.n) << 1 | (unsigned)(row + 128 < p.n) << 2;
    br = opaque(b + (row < p.n ? row : 0) * p.w + qw);
  }

  /* k-step ks of the tile into stage slot; the last k-step also brings
   * the tile's column popcounts (pbz: the batch item's). */
  __device__ void stage(int slot, const MmArgs &p, int ks, bool last, const int *pbz,
                        int64_t c0) {
    const unsigned off = slot * STAGE_WORDS * 4;
    const int kw = ks * BKW;
    if (kw + qw < p.w) {
      if (valid & 1) cp_async16(sa + off, ar + kw);
      if (valid & 2) cp_async16(sb + off, br + kw);
      if (valid & 4) cp_async16(sb + off + 128 * 8 * 4, br + 128 * p.w + kw);
    }
    if (last && threadIdx.x < BN && c0 + threadIdx.x < p.n)
      cp_async4(sc + off, pbz + c0 + threadIdx.x);
  }
};

/* A lane's ldmatrix addresses in stage 0 (plane 0): lane l addresses
 * row l % 8 of matrix l / 8: for A, rows 16 i + 8 (l / 8 % 2) of the
 * warp's and half l / 16, which are registers a0..a3 of the mma (rows g
 * and g + 8, words t and t + 4); for B, columns 8 (j + l / 16) of the
 * warp's and half l / 8 % 2, which are b0 and b1 of tiles j and j + 1. */
struct MmFrags {
  unsigned a[MI], b[NJ / 2];

  __device__ void start(const uint32_t *smem, int wr, int wc, int lane) {
    const int r = lane & 7, mi = lane >> 3;
    const unsigned base = smem_addr(smem);
#pragma unroll
    for (int i = 0; i < MI; i++)
      a[i] = opaque(base + 4 * plane_at(wr + i * 16 + (mi & 1) * 8 + r, mi >> 1));
#pragma unroll
    for (int j = 0; j < NJ / 2; j++)
      b[j] = opaque(base + 4 * (BM * BKW + plane_at(wc + (2 * j + (mi >> 1)) * 8 + r, mi & 1)));
  }
};

/* acc += one plane (256 bits of the warp's WM rows and WN columns) of
 * the stage at byte offset off; plane 1 is at BM * 8 words for A and
 * BN * 8 for B. */
template <bool FIRST>
__device__ __forceinline__ void mm_plane(int (&acc)[MI][NJ][4], const MmFrags &f, unsigned off,
                                         int plane) {
  uint32_t fa[MI][4], fb[NJ / 2][4];
#pragma unroll
  for (int i = 0; i < MI; i++) ldmatrix4(fa[i], f.a[i] + off + plane * BM * 8 * 4);
#pragma unroll
  for (int j = 0; j < NJ / 2; j++) ldmatrix4(fb[j], f.b[j] + off + plane * BN * 8 * 4);
#pragma unroll
  for (int j = 0; j < NJ; j++)
#pragma unroll
    for (int i = 0; i < MI; i++)
      mma_and_popc<FIRST>(acc[i][j], fa[i], fb[j / 2][(j % 2) * 2], fb[j / 2][(j % 2) * 2 + 1]);
}

/* Where the filter's pairs go: the rows' candidates (MmArgs' fields, by
 * value for a call; rows counted from r0). */
struct FilterSink {
  int *count;
  uint32_t *cand_d, *cand_i;
  int64_t cap, base, n, r0;
};

/* Appends the pair (row, column col: base + col) at distance dist to
 * the row's candidates (counted past cap, where the selection recomputes
 * the round). */
__device__ __forceinline__ void sink_append(const FilterSink &f, int64_t row, uint32_t dist,
                                            int64_t col) {
  const int pos = atomicAdd(f.count + row, 1);
  if (pos < f.cap) {
    f.cand_d[row * f.cap + pos] = dist;
    f.cand_i[row * f.cap + pos] = (uint32_t)(f.base + col);
  }
}

/* The filter's rare path, out of line: local row lr's 2 NJ values e =
 * pb - 2 acc (column col0 + 8 (v / 2) + v % 2 for e[v]); those below
 * bound = th - pa (and within n) are appended to the row's candidates
 * with their distance pa + e. */
static __device__ __noinline__ void mm_filter_row(FilterSink f, int lr, int64_t col0, int bound,
                                                  int ra, const int *e) {
  for (int v = 0; v < 2 * NJ; v++) {
    const int64_t col = col0 + v / 2 * 8 + v % 2;
    if (col < f.n && e[v] < bound) sink_append(f, f.r0 + lr, (uint32_t)(ra + e[v]), col);
  }
}

/* The filter's test of a warp's block: rows lr0 + 16 i + 8 h (local;
 * bounds bound[i][h] = th - pa, INT_MIN for a row past the end) and
 * columns col0 + 8 j + e (popcounts pc[j][e], partial unless full). The
 * test dist < th is pb - 2 acc < th - pa: its minimum over a row's
 * columns for each of the lane's rows first, with no branch between
 * them, then the rare rows that pass (all of a partial block's) out of
 * line, with the rows' popcounts ra (local rows). */
__device__ __forceinline__ void filter_block(const FilterSink &sink, const int (&acc)[MI][NJ][4],
                                             const int (&pc)[NJ][2], const int (&bound)[MI][2],
                                             bool full, int lr0, int64_t col0, const int *ra) {
  unsigned hit = 0;
#pragma unroll
  for (int i = 0; i < MI; i++)
#pragma unroll
    for (int h = 0; h < 2; h++) {
      int lo = INT_MAX;
#pragma unroll
      for (int j = 0; j < NJ; j += 2)
        lo = __vimin3_s32(lo, __vimin3_s32(pc[j][0] - 2 * acc[i][j][h * 2],
                                           pc[j][1] - 2 * acc[i][j][h * 2 + 1],
                                           pc[j + 1][0] - 2 * acc[i][j + 1][h * 2]),
                          pc[j + 1][1] - 2 * acc[i][j + 1][h * 2 + 1]);
      hit |= (unsigned)(bound[i][h] != INT_MIN && (!full || lo < bound[i][h])) << (i * 2 + h);
    }
  if (hit == 0) return;
#pragma unroll
  for (int i = 0; i < MI; i++)
#pragma unroll
    for (int h = 0; h < 2; h++)
      if (hit >> (i * 2 + h) & 1) {
        const int lr = lr0 + i * 16 + h * 8;
        int e[2 * NJ];
#pragma unroll
        for (int v = 0; v < 2 * NJ; v++) e[v] = pc[v / 2][v % 2] - 2 * acc[i][v / 2][h * 2 + v % 2];
        mm_filter_row(sink, lr, col0, bound[i][h], ra[lr], e);
      }
}

/* The block at (r0, c0) from its accumulators: out's values, or with
 * FILTER the candidates. A lane's results are rows r0 + wr + 16 i + g +
 * 8 h and columns c0 + wc + 8 j + 2 t + e. The rows' popcounts (and the
 * filter's bounds th - pa) are in shared memory from the start (rows),
 * the columns' came with the tile's last stage (cols). */
template <bool FILTER>
__device__ __forceinline__ void mm_epilogue(const MmArgs &p, const FilterSink &sink,
                                            int (&acc)[MI][NJ][4], int64_t z, const int *rows,
                                            const int *cols, int64_t r0, int64_t c0, int wr,
                                            int wc, int g, int t) {
  const int64_t col0 = c0 + wc + t * 2;
  const bool full = c0 + BN <= p.n;
  int pc[NJ][2];
#pragma unroll
  for (int j = 0; j < NJ; j++) {
    const int2 v = *(const int2 *)(cols + wc + j * 8 + t * 2);
    pc[j][0] = v.x;
    pc[j][1] = v.y;
  }
  if (FILTER) {
    int bound[MI][2];
#pragma unroll
    for (int i = 0; i < MI; i++)
#pragma unroll
      for (int h = 0; h < 2; h++) {
        const int lr = wr + i * 16 + g + h * 8;
        bound[i][h] = r0 + lr < p.m ? rows[BM + lr] : INT_MIN;
      }
    filter_block(sink, acc, pc, bound, full, wr + g, col0, rows);
    return;
  }
  int32_t *out = p.out + z * p.so;
  /* col is even: pairs are 8-byte aligned when the rows and the block
   * are */
  const bool pair = full && (p.ldo & 1) == 0 && ((uintptr_t)out & 7) == 0;
#pragma unroll
  for (int i = 0; i < MI; i++)
#pragma unroll
    for (int h = 0; h < 2; h++) {
      const int lr = wr + i * 16 + g + h * 8;
      const int64_t row = r0 + lr;
      if (row >= p.m) continue;
      const int ra = rows[lr];
      int32_t *orow = out + row * p.ldo;
#pragma unroll
      for (int j = 0; j < NJ; j++) {
        int d[2];
#pragma unroll
        for (int e = 0; e < 2; e++) {
          d[e] = ra + pc[j][e] - 2 * acc[i][j][h * 2 + e];
          if (!p.hamming) d[e] = (int)(p.bits - 2 * d[e]);
        }
        const int64_t col = col0 + j * 8;
        if (pair) {
          __stcs((int2 *)(orow + col), make_int2(d[0], d[1]));
        } else {
#pragma unroll
          for (int e = 0; e < 2; e++)
            if (col + e < p.n) orow[col + e] = d[e];
        }
      }
    }
}

template <bool FILTER> __global__ void __launch_bounds__(MM_THREADS, 1) binary_mm_tc(MmArgs p) {
  extern __shared__ __align__(16) uint32_t mm_smem[];
  uint32_t *smem = mm_smem;
  int *rows = (int *)(smem + STAGES * STAGE_WORDS); /* popcounts, then th - popcount */
  const FilterSink sink = {p.count, p.cand_d, p.cand_i, p.cap, p.base, p.n,
                           (int64_t)blockIdx.x * BM};
  const int64_t z = blockIdx.z;
  const uint32_t *a = p.a + z * p.sa, *b = p.b + z * p.sb;
  const int *pbz = p.pb + z * p.spb;
  const int64_t r0 = (int64_t)blockIdx.x * BM;
  const int tile0 = blockIdx.y * p.tpc;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  const int wr = warp / (BN / WN) * WM, wc = warp % (BN / WN) * WN; /* the warp's block */
  const int iters = min(p.tiles - tile0, p.tpc) * p.steps;
  const bool odd = (p.w & (BKW - 1)) != 0; /* the last stage's second plane is padding */
  if (threadIdx.x < BM && r0 + threadIdx.x < p.m) {
    const int ra = p.pa[z * p.spa + r0 + threadIdx.x];
    rows[threadIdx.x] = ra;
    if (FILTER) rows[BM + threadIdx.x] = (int)p.thr[(r0 + threadIdx.x) * p.thr_stride] - ra;
  }
  int acc[MI][NJ][4]; /* set by each tile's first k-step */

  /* The loader runs STAGES - 1 stages ahead: (ld_tile, ld_ks) and
   * (tile, ks) count column tiles and k-steps without division. */
  MmLoader ld;
  ld.start(p, smem, a, r0);
  MmFrags fr;
  fr.start(smem, wr, wc, lane);
  ld.tile(p, b, (int64_t)tile0 * BN);
  int ld_tile = 0, ld_ks = 0, ld_slot = 0;
  auto load_next = [&]() {
    const bool last = ld_ks == p.steps - 1;
    ld.stage(ld_slot, p, ld_ks, last, pbz, (int64_t)(tile0 + ld_tile) * BN);
    if (last) {
      ld_ks = 0, ld_tile++;
      ld.tile(p, b, (int64_t)(tile0 + ld_tile) * BN);
    } else {
      ld_ks++;
    }
    ld_slot = ld_slot == STAGES - 1 ? 0 : ld_slot + 1;
  };
#pragma unroll
  for (int s = 0; s < STAGES - 1; s++) {
    if (s < iters) load_next();
    cp_async_commit();
  }
  int tile = 0, ks = 0, slot = 0;
  for (int it = 0; it < iters; it++) {
    cp_async_wait<STAGES - 2>();
    __syncthreads(); /* stage it is in; stage it - 1 is read by all */
    if (it + STAGES - 1 < iters) load_next();
    cp_async_commit();
    const uint32_t *st = smem + slot * STAGE_WORDS;
    const unsigned off = slot * STAGE_WORDS * 4;
    if (ks == 0)
      mm_plane<true>(acc, fr, off, 0);
    else
      mm_plane<false>(acc, fr, off, 0);
    const bool last = ks == p.steps - 1;
    if (!(last && odd)) mm_plane<false>(acc, fr, off, 1);
    if (last) {
      mm_epilogue<FILTER>(p, sink, acc, z, rows, (const int *)st + (BM + BN) * BKW, r0,
                          (int64_t)(tile0 + tile) * BN, wr, wc, g, t);
      ks = 0, tile++;
    } else {
      ks++;
    }
    slot = slot == STAGES - 1 ? 0 : slot + 1;
  }
  cp_async_wait<0>();
}

/* Calls launch(q, nz) for each piece of p's product within the grid's
 * limits: nz batch items at a time, at most 65535, and columns c0 ..
 * c0 + cmax - 1 (q's pointers, n and base moved there; out too unless
 * filter). */
template <class F>
static int mm_pieces(const MmArgs &p, int64_t batch, int64_t cmax, bool filter, F launch) {
  const int64_t lim = 65535;
  for (int64_t z0 = 0; z0 < batch; z0 += lim)
    for (int64_t c0 = 0; c0 < p.n; c0 += cmax) {
      MmArgs q = p;
      q.a += z0 * p.sa;
      q.pa += z0 * p.spa;
      q.b += z0 * p.sb + c0 * p.w;
      q.pb += z0 * p.spb + c0;
      if (!filter) q.out += z0 * p.so + c0;
      q.base += c0;
      q.n = p.n - c0 < cmax ? p.n - c0 : cmax;
      int rc = launch(q, batch - z0 < lim ? batch - z0 : lim);
      if (rc) return rc;
    }
  return ML_OK;
}

/* The product on Hopper's warpgroup MMA (binary_wgmma.cu, built for
 * sm_90a alone), which mm_launch takes on devices of compute capability
 * 9.0 for k of WG_MIN_STEPS k-steps or more. */
int mm_launch_wgmma(cuda_dev *d, const MmArgs &p, int64_t batch, const char *op);
#define WG_MIN_STEPS 8

/* The warpgroup MMA's bare AND-popcount rate (binary_wgmma.cu), ops a
 * second as binary.cu's peak counts them. */
int peak_wgmma(cuda_dev *d, double *ops, const char *op);

/* *ms, the time of launch() run a second time (the first warms up). */
template <class Launch> static int time_second_run(cuda_dev *d, Launch launch, float *ms,
                                                   const char *op) {
  cudaEvent_t e0 = nullptr, e1 = nullptr;
  *ms = 0;
  int rc = cuda_check(cudaEventCreate(&e0), op);
  if (!rc) rc = cuda_check(cudaEventCreate(&e1), op);
  if (!rc) rc = launch();
  if (!rc) rc = cuda_check(cudaEventRecord(e0, d->stream), op);
  if (!rc) rc = launch();
  if (!rc) rc = cuda_check(cudaEventRecord(e1, d->stream), op);
  if (!rc) rc = cuda_check(cudaEventSynchronize(e1), op);
  if (!rc) rc = cuda_check(cudaEventElapsedTime(ms, e0, e1), op);
  if (e0) cudaEventDestroy(e0);
  if (e1) cudaEventDestroy(e1);
  return rc;
}

/* The launches of p over `batch` items (mm_pieces); tpc column tiles a
 * CTA where k is short. */
template <bool FILTER> static int mm_launch(cuda_dev *d, MmArgs p, int64_t batch, const char *op) {
  const int64_t steps = (p.w + BKW - 1) / BKW;
  if (!FILTER && d->cc == 90 && steps >= WG_MIN_STEPS) return mm_launch_wgmma(d, p, batch, op);
  const int64_t tpc = steps >= 8 ? 1 : 8 / steps;
  p.steps = (int)steps;
  p.tpc = (int)tpc;
  return mm_pieces(p, batch, 65535 * tpc * BN, FILTER, [&](MmArgs q, int64_t nz) {
    q.tiles = (int)((q.n + BN - 1) / BN);
    dim3 grid((unsigned)((q.m + BM - 1) / BM), (unsigned)((q.tiles + tpc - 1) / tpc),
              (unsigned)nz);
    return cuda_launch<binary_mm_tc<FILTER>>(d, grid, MM_THREADS, MM_SMEM, op, q);
  });
}

#endif
