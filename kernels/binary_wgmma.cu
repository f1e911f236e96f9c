/* binary_mm.cuh's product, without the filter, on Hopper's warpgroup
 * MMA: wgmma.mma_async m64n256k256 b1 with AND and popcount, whose
 * operands the tensor cores read from shared memory themselves, where
 * binary_mm_tc's mma.sync must first bring every fragment to registers
 * by ldmatrix. The instruction exists in sm_90a's instruction set alone:
 * the Makefile builds this file for that chip only, and mm_launch calls
 * it on devices of compute capability 9.0 for k of WG_MIN_STEPS of its
 * k-steps or more (for shorter k binary_mm_tc runs several tiles a CTA,
 * overlapping their epilogues with the next loads).
 *
 * A CTA of three warpgroups computes a 192 x 256 block of out, each
 * warpgroup 64 rows (128 accumulators a thread), stepping k by 1024 bits
 * through WG_STAGES stages of shared memory that every thread fills by
 * cp.async, 16 bytes a copy, WG_AHEAD stages ahead; the products of one
 * stage run on while the next is awaited. Three warpgroups rather than
 * two: the block's 448 rows of A and B a stage serve 1.5 times the
 * products of two warpgroups' 384, and L2's reads to shared memory were
 * what bounded the kernel. A stage holds the block's
 * rows of A and B, 128 bytes each, in wgmma's K-major layout with the
 * 128-byte swizzle: a warp copies whole rows, which hit every bank of
 * shared memory once and read each 32-byte sector from L2 in one request
 * (the unswizzled layout, 16-byte chunks of 8 rows together, split a
 * warp's copies by bank, fetched every sector twice and left the kernel
 * bound by L2's tag lookups). Four instructions a stage, 256 bits each;
 * the chunks past the last word are zeros (copied in without reading),
 * so that no branch separates a stage's instructions: a branch there
 * made the compiler wait for each instruction's accumulators before the
 * next (ptxas's C7519 "warpgroup.arrive is injected").
 * The epilogue turns popc(a AND b) into the dot product or the distance,
 * as binary_mm_tc's does. Nothing is loaded past the last row or column
 * (their results are not stored).
 *
 * The CTAs stay resident, one a multiprocessor, and take the tiles in
 * turn through one pipeline, so that the next tile's first stages load
 * while the last one's epilogue writes: at 8192^3, where a CTA a tile
 * waited for its first stages and wrote its results with the tensor
 * cores idle, the product went from 235 to 214 us (kernel time). */
#include "binary_mm.cuh"
#include "scratch.cuh"

/* warpgroups a CTA, 64 rows of out each */
#define WG_GROUPS 3
#define WG_BM (64 * WG_GROUPS)
#define WG_BN 256
#define WG_STAGES 4 /* a power of 2 */
/* stages loading while one is multiplied and one may still be read by
 * the last products */
#define WG_AHEAD (WG_STAGES - 2)
#define WG_THREADS (128 * WG_GROUPS)
#define WG_CHUNKS 8 /* a stage: 8 chunks of 16 bytes a row, 1024 bits */
/* rows a pass of the loader copies (a chunk a thread) */
#define WG_PASS (WG_THREADS / WG_CHUNKS)
#define WG_A_PASSES (WG_BM / WG_PASS)
#define WG_B_PASSES ((WG_BN + WG_PASS - 1) / WG_PASS)
#define WG_A_BYTES (WG_BM * WG_CHUNKS * 16)
#define WG_B_BYTES (WG_BN * WG_CHUNKS * 16)
#define WG_STAGE_BYTES (WG_A_BYTES + WG_B_BYTES)
/* the stages (from the first 1024-byte boundary), then the rows' and the
 * columns' popcounts */
#define WG_SMEM ((size_t)WG_STAGES * WG_STAGE_BYTES + (WG_BM + WG_BN) * sizeof(int) + 1024)
static_assert(WG_A_PASSES * WG_PASS == WG_BM, "the loader's passes cover A's rows exactly");
/* what a CTA may take on sm_90 */
static_assert(WG_SMEM <= 227 * 1024, "the stages fit a CTA's shared memory");

/* The byte offset of 16-byte chunk c of row r in a stage's operand:
 * rows of 128 bytes, the chunks of row r permuted by XOR with r % 8
 * (wgmma's 128-byte swizzle), so that a warp's copies of a row hit every
 * bank once and each 32-byte sector is read from L2 by one request. */
__device__ __forceinline__ unsigned wg_chunk_at(int r, int c) {
  return r * 128 + ((c ^ (r & 7)) << 4);
}

/* wgmma's descriptor of an operand at shared address addr (1024-byte
 * aligned, plus the k-step's 32 bytes a step), K-major with the 128-byte
 * swizzle: 8-row groups 1024 bytes apart (the stride); the leading
 * offset is unused there. */
__device__ __forceinline__ uint64_t wg_desc(unsigned addr) {
  return (uint64_t)((addr & 0x3FFFF) >> 4) | (uint64_t)1 << 16 | (uint64_t)(1024 >> 4) << 32 |
         (uint64_t)1 << 62;
}

/* Keeps the compiler from moving reads or writes of x across the
 * asynchronous MMA's fences. */
__device__ __forceinline__ void wg_pin(int &x) { asm volatile("" : "+r"(x)::"memory"); }

/* the accumulators' places in the asm text of wg_mma */
#define WG_D_REGS \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16," \
  "%17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31," \
  "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46," \
  "%47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61," \
  "%62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76," \
  "%77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91," \
  "%92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105," \
  "%106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117," \
  "%118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
/* the accumulators as asm operands, each with the constraint C */
#define WG_D_OUT(C) \
  C(d[0]), C(d[1]), C(d[2]), C(d[3]), C(d[4]), C(d[5]), C(d[6]), C(d[7]), C(d[8]), \
  C(d[9]), C(d[10]), C(d[11]), C(d[12]), C(d[13]), C(d[14]), C(d[15]), C(d[16]), \
  C(d[17]), C(d[18]), C(d[19]), C(d[20]), C(d[21]), C(d[22]), C(d[23]), C(d[24]), \
  C(d[25]), C(d[26]), C(d[27]), C(d[28]), C(d[29]), C(d[30]), C(d[31]), C(d[32]), \
  C(d[33]), C(d[34]), C(d[35]), C(d[36]), C(d[37]), C(d[38]), C(d[39]), C(d[40]), \
  C(d[41]), C(d[42]), C(d[43]), C(d[44]), C(d[45]), C(d[46]), C(d[47]), C(d[48]), \
  C(d[49]), C(d[50]), C(d[51]), C(d[52]), C(d[53]), C(d[54]), C(d[55]), C(d[56]), \
  C(d[57]), C(d[58]), C(d[59]), C(d[60]), C(d[61]), C(d[62]), C(d[63]), C(d[64]), \
  C(d[65]), C(d[66]), C(d[67]), C(d[68]), C(d[69]), C(d[70]), C(d[71]), C(d[72]), \
  C(d[73]), C(d[74]), C(d[75]), C(d[76]), C(d[77]), C(d[78]), C(d[79]), C(d[80]), \
  C(d[81]), C(d[82]), C(d[83]), C(d[84]), C(d[85]), C(d[86]), C(d[87]), C(d[88]), \
  C(d[89]), C(d[90]), C(d[91]), C(d[92]), C(d[93]), C(d[94]), C(d[95]), C(d[96]), \
  C(d[97]), C(d[98]), C(d[99]), C(d[100]), C(d[101]), C(d[102]), C(d[103]), \
  C(d[104]), C(d[105]), C(d[106]), C(d[107]), C(d[108]), C(d[109]), C(d[110]), \
  C(d[111]), C(d[112]), C(d[113]), C(d[114]), C(d[115]), C(d[116]), C(d[117]), \
  C(d[118]), C(d[119]), C(d[120]), C(d[121]), C(d[122]), C(d[123]), C(d[124]), \
  C(d[125]), C(d[126]), C(d[127])

/* d = popc(A AND B) over 256 bits for the warpgroup's 64 x 256 block,
 * plus d where add: thread l of warp w holds rows 16 w + l / 4 (+ 8 for
 * d[4 j + 2], d[4 j + 3]) and columns 8 j + 2 (l % 4) (+ 1 for
 * d[4 j + 1], d[4 j + 3]). */
__device__ __forceinline__ void wg_mma(int (&d)[128], uint64_t da, uint64_t db, int add) {
  asm volatile("{\n.reg .pred add;\nsetp.ne.b32 add, %130, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n256k256.s32.b1.b1.and.popc {" WG_D_REGS
               "}, %128, %129, add;\n}\n"
               : WG_D_OUT("+r")
               : "l"(da), "l"(db), "r"(add));
}

/* The accumulators' values from here on undefined (a tile's first
 * product replaces them): no instruction, but the registers are free
 * from their last read on, which the epilogue needs. */
__device__ __forceinline__ void wg_forget(int (&d)[128]) {
  asm volatile("" : WG_D_OUT("=r"));
}

/* The stage at shared address st for warpgroup wg's 64 rows: its four
 * 256-bit planes into acc (plane j: chunks 2 j and 2 j + 1 of every row,
 * 32 bytes on, 2 in the descriptor's units; the hardware applies the
 * swizzle), replacing them first where keep is 0; one commit group. */
__device__ __forceinline__ void wg_stage(int (&acc)[128], unsigned st, int wg, int keep) {
  const uint64_t da = wg_desc(st + wg * 64 * 128), db = wg_desc(st + WG_A_BYTES);
#pragma unroll
  for (int i = 0; i < 128; i++) wg_pin(acc[i]);
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
  for (int j = 0; j < WG_CHUNKS / 2; j++) wg_mma(acc, da + 2 * j, db + 2 * j, keep | j);
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

/* Where tile t of the product lies: batch item z, rows r0 on, columns
 * c0 on (row tiles fastest, so that the CTAs at work at once share
 * column tiles). */
struct WgTile {
  int64_t z, r0, c0;

  __device__ void at(unsigned t, unsigned rtiles, unsigned ctiles) {
    const unsigned u = t / rtiles, zz = u / ctiles;
    r0 = (int64_t)(t - u * rtiles) * WG_BM;
    z = zz;
    c0 = (int64_t)(u - zz * ctiles) * WG_BN;
  }
};

/* Tile t's block of out from its accumulators and popcounts (rows,
 * cols): the warp's rows wr + g + 8 h, columns 8 j + 2 t + e. */
__device__ __forceinline__ void wg_epilogue(const MmArgs &p, const int (&acc)[128],
                                            const WgTile &tile, const int *rows, const int *cols,
                                            int wr, int lane) {
  const int g = lane >> 2, t = lane & 3;
  const int64_t r0 = tile.r0, c0 = tile.c0;
  const bool full = c0 + WG_BN <= p.n;
  int32_t *out = p.out + tile.z * p.so;
  const bool pair = full && (p.ldo & 1) == 0 && ((uintptr_t)out & 7) == 0;
#pragma unroll
  for (int h = 0; h < 2; h++) {
    const int lrow = wr + g + h * 8;
    const int64_t row = r0 + lrow;
    if (row >= p.m) continue;
    const int ra = rows[lrow];
    int32_t *orow = out + row * p.ldo;
#pragma unroll
    for (int j = 0; j < 32; j++) {
      const int lc = j * 8 + t * 2;
      int v[2];
#pragma unroll
      for (int e = 0; e < 2; e++) {
        v[e] = ra + (c0 + lc + e < p.n ? cols[lc + e] : 0) - 2 * acc[j * 4 + h * 2 + e];
        if (!p.hamming) v[e] = (int)(p.bits - 2 * v[e]);
      }
      if (pair) {
        __stcs((int2 *)(orow + c0 + lc), make_int2(v[0], v[1]));
      } else {
#pragma unroll
        for (int e = 0; e < 2; e++)
          if (c0 + lc + e < p.n) orow[c0 + lc + e] = v[e];
      }
    }
  }
}

/* The loader's part of a thread: chunk q of rows lr + WG_PASS i of A and
 * of B (bit i of amask and bmask: the row exists) in a tile. */
struct WgLoader {
  const uint32_t *ap, *bp;
  unsigned amask, bmask;

  __device__ void at(const MmArgs &p, unsigned tile, unsigned rtiles, unsigned ctiles, int lr,
                     int q) {
    WgTile w;
    w.at(tile, rtiles, ctiles);
    const int64_t arow = w.r0 + lr < p.m ? w.r0 + lr : 0, brow = w.c0 + lr < p.n ? w.c0 + lr : 0;
    ap = p.a + w.z * p.sa + arow * p.w + q * 4;
    bp = p.b + w.z * p.sb + brow * p.w + q * 4;
    amask = bmask = 0;
#pragma unroll
    for (int i = 0; i < WG_B_PASSES; i++) {
      amask |= (unsigned)(i < WG_A_PASSES && w.r0 + lr + WG_PASS * i < p.m) << i;
      bmask |= (unsigned)(lr + WG_PASS * i < WG_BN && w.c0 + lr + WG_PASS * i < p.n) << i;
    }
  }

  /* k-step ks of the tile into the stage at byte offset off (the chunks
   * past the last word zeros) */
  __device__ void load(const MmArgs &p, int ks, unsigned adst, unsigned off, int q) {
    const int64_t kw = (int64_t)ks * 4 * WG_CHUNKS, rows_pass = WG_PASS * p.w;
    const bool in = kw + q * 4 < p.w;
    const unsigned bdst = adst + WG_A_BYTES;
#pragma unroll
    for (int i = 0; i < WG_A_PASSES; i++)
      if (amask >> i & 1)
        cp_async16_or_zero(adst + off + i * WG_PASS * 128, in ? ap + i * rows_pass + kw : ap, in);
#pragma unroll
    for (int i = 0; i < WG_B_PASSES; i++)
      if (bmask >> i & 1)
        cp_async16_or_zero(bdst + off + i * WG_PASS * 128, in ? bp + i * rows_pass + kw : bp, in);
  }
};

/* A CTA takes tiles blockIdx.x, blockIdx.x + gridDim.x, ... (of `tiles`,
 * rtiles x ctiles a batch item) through one pipeline: the loader runs
 * WG_AHEAD k-steps ahead across the tiles' edges, so that the next
 * tile's first stages load while the last one's epilogue runs. A tile's
 * popcounts go to shared memory after its first barrier, which the last
 * tile's epilogue has passed, and are read after its second; the loader
 * moves on to the next tile WG_AHEAD k-steps before its end. */
static_assert(WG_MIN_STEPS * BKW / (4 * WG_CHUNKS) > WG_AHEAD,
              "a tile has more k-steps than the loader runs ahead");

__global__ void __launch_bounds__(WG_THREADS, 1)
    binary_mm_wgmma(MmArgs p, unsigned rtiles, unsigned ctiles, unsigned tiles) {
  extern __shared__ __align__(128) unsigned char wg_smem[];
  /* the popcounts of the tile's rows and columns */
  int *rows = (int *)(wg_smem + WG_STAGES * WG_STAGE_BYTES + 1024), *cols = rows + WG_BM;
  const int tid = threadIdx.x, wg = tid >> 7, lr = tid >> 3, q = tid & 7;
  const unsigned base = (smem_addr(wg_smem) + 1023) & ~1023u; /* the swizzle's alignment */
  const unsigned adst = base + wg_chunk_at(lr, q);
  const int steps = (int)((p.w + 4 * WG_CHUNKS - 1) / (4 * WG_CHUNKS)); /* 4 words a chunk */

  WgLoader ld;
  ld.at(p, blockIdx.x, rtiles, ctiles, lr, q);
#pragma unroll
  for (int s = 0; s < WG_AHEAD; s++) {
    ld.load(p, s, adst, s * WG_STAGE_BYTES, q);
    cp_async_commit();
  }

  int acc[128];
  unsigned t = blockIdx.x;
  int ks = 0, slot = 0;
  while (t < tiles) {
    cp_async_wait<WG_AHEAD - 1>();
    /* this thread's copies, seen by the tensor cores' (async) reads */
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    /* stage ks is in; every warpgroup's products of the k-step two
     * before are done, so that its slot takes the one two after */
    __syncthreads();
    if (ks == 0) {
      WgTile w;
      w.at(t, rtiles, ctiles);
      if (tid < WG_BM && w.r0 + tid < p.m) cp_async4(rows + tid, p.pa + w.z * p.spa + w.r0 + tid);
      if (tid < WG_BN && w.c0 + tid < p.n) cp_async4(cols + tid, p.pb + w.z * p.spb + w.c0 + tid);
    }
    const int lks = ks + WG_AHEAD;
    if (lks == steps && t + gridDim.x < tiles) ld.at(p, t + gridDim.x, rtiles, ctiles, lr, q);
    if (lks < steps || t + gridDim.x < tiles)
      ld.load(p, lks < steps ? lks : lks - steps, adst,
              ((slot + WG_AHEAD) & (WG_STAGES - 1)) * WG_STAGE_BYTES, q);
    cp_async_commit();
    /* a tile's first product replaces the accumulators */
    wg_stage(acc, base + slot * WG_STAGE_BYTES, wg, ks);
    slot = (slot + 1) & (WG_STAGES - 1);
    if (++ks < steps) {
      /* the products of this k-step run on while the next is awaited */
      asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
    } else {
      asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
#pragma unroll
      for (int i = 0; i < 128; i++) wg_pin(acc[i]);
      WgTile w;
      w.at(t, rtiles, ctiles);
      wg_epilogue(p, acc, w, rows, cols, wg * 64 + (tid >> 5 & 3) * 16, tid & 31);
      wg_forget(acc);
      ks = 0, t += gridDim.x;
    }
  }
  cp_async_wait<0>();
}

/* One CTA a multiprocessor (or a tile); mm_pieces' batches of 65535
 * items keep the tiles' count within 32 bits, where each tile spans
 * rows of at least WG_MIN_STEPS stages. */
int mm_launch_wgmma(cuda_dev *d, const MmArgs &p, int64_t batch, const char *op) {
  return mm_pieces(p, batch, p.n, false, [&](const MmArgs &q, int64_t nz) {
    const int64_t rtiles = (q.m + WG_BM - 1) / WG_BM, ctiles = (q.n + WG_BN - 1) / WG_BN;
    const int64_t tiles = nz * rtiles * ctiles;
    const unsigned grid = (unsigned)(tiles < d->sms ? tiles : d->sms);
    return cuda_launch<binary_mm_wgmma>(d, grid, WG_THREADS, WG_SMEM, op, q, (unsigned)rtiles,
                                        (unsigned)ctiles, (unsigned)tiles);
  });
}

/* The bare warpgroup MMA: WG_GROUPS warpgroups a CTA, one CTA a
 * multiprocessor, each repeating a stage's four m64n256k256 products on
 * fixed bits in shared memory, the accumulators' sum stored where it
 * cannot be equal, so that the work stays. */
#define WG_PEAK_ITERS 2048

__global__ void __launch_bounds__(WG_THREADS, 1) binary_peak_wgmma(int *sink) {
  extern __shared__ __align__(128) unsigned char wg_smem[];
  const unsigned at = smem_addr(wg_smem), base = (at + 1023) & ~1023u;
  uint32_t *words = (uint32_t *)(wg_smem + (base - at));
  for (int i = threadIdx.x; i < WG_STAGE_BYTES / 4; i += WG_THREADS)
    words[i] = (uint32_t)i * 0x9E3779B9u ^ blockIdx.x;
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  __syncthreads();
  int acc[128];
  for (int it = 0; it < WG_PEAK_ITERS; it++) {
    wg_stage(acc, base, threadIdx.x >> 7, it);
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
  }
#pragma unroll
  for (int i = 0; i < 128; i++) wg_pin(acc[i]);
  int s = 0;
#pragma unroll
  for (int i = 0; i < 128; i++) s += acc[i];
  if (s == -1) *sink = s;
}

int peak_wgmma(cuda_dev *d, double *ops, const char *op) {
  cuda_scratch sink;
  int rc = sink.get(d->index, sizeof(int), op);
  float ms = 0;
  if (!rc)
    rc = time_second_run(
        d,
        [&] {
          return cuda_launch<binary_peak_wgmma>(d, d->sms, WG_THREADS, WG_STAGE_BYTES + 1024, op,
                                                sink.as<int>());
        },
        &ms, op);
  const double products = (double)d->sms * WG_GROUPS * WG_PEAK_ITERS * (WG_CHUNKS / 2);
  *ops = !rc && ms > 0 ? products * 2 * 64 * 256 * 256 / (ms * 1e-3) : 0;
  return rc;
}
