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
 * (their results are not stored). */
#include "binary_mm.cuh"

/* warpgroups a CTA, 64 rows of out each */
#define WG_GROUPS 3
#define WG_BM (64 * WG_GROUPS)
#define WG_BN 256
#define WG_STAGES 4
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

/* d += popc(A AND B) over 256 bits for the warpgroup's 64 x 256 block: thread l of warp w holds rows 16 w +
 * l / 4 (+ 8 for d[4 j + 2], d[4 j + 3]) and columns 8 j + 2 (l % 4)
 * (+ 1 for d[4 j + 1], d[4 j + 3]). */
__device__ __forceinline__ void wg_mma(int (&d)[128], uint64_t da, uint64_t db) {
  asm volatile(
      "wgmma.mma_async.sync.aligned.m64n256k256.s32.b1.b1.and.popc {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, "
      "%17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, "
      "%47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, "
      "%62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, "
      "%77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, "
      "%92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, "
      "%106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, "
      "%119, %120, %121, %122, %123, %124, %125, %126, %127"
      "}, %128, %129, 1;\n"
      : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]), "+r"(d[4]), "+r"(d[5]), "+r"(d[6]),
      "+r"(d[7]), "+r"(d[8]), "+r"(d[9]), "+r"(d[10]), "+r"(d[11]), "+r"(d[12]),
      "+r"(d[13]), "+r"(d[14]), "+r"(d[15]), "+r"(d[16]), "+r"(d[17]), "+r"(d[18]),
      "+r"(d[19]), "+r"(d[20]), "+r"(d[21]), "+r"(d[22]), "+r"(d[23]), "+r"(d[24]),
      "+r"(d[25]), "+r"(d[26]), "+r"(d[27]), "+r"(d[28]), "+r"(d[29]), "+r"(d[30]),
      "+r"(d[31]), "+r"(d[32]), "+r"(d[33]), "+r"(d[34]), "+r"(d[35]), "+r"(d[36]),
      "+r"(d[37]), "+r"(d[38]), "+r"(d[39]), "+r"(d[40]), "+r"(d[41]), "+r"(d[42]),
      "+r"(d[43]), "+r"(d[44]), "+r"(d[45]), "+r"(d[46]), "+r"(d[47]), "+r"(d[48]),
      "+r"(d[49]), "+r"(d[50]), "+r"(d[51]), "+r"(d[52]), "+r"(d[53]), "+r"(d[54]),
      "+r"(d[55]), "+r"(d[56]), "+r"(d[57]), "+r"(d[58]), "+r"(d[59]), "+r"(d[60]),
      "+r"(d[61]), "+r"(d[62]), "+r"(d[63]), "+r"(d[64]), "+r"(d[65]), "+r"(d[66]),
      "+r"(d[67]), "+r"(d[68]), "+r"(d[69]), "+r"(d[70]), "+r"(d[71]), "+r"(d[72]),
      "+r"(d[73]), "+r"(d[74]), "+r"(d[75]), "+r"(d[76]), "+r"(d[77]), "+r"(d[78]),
      "+r"(d[79]), "+r"(d[80]), "+r"(d[81]), "+r"(d[82]), "+r"(d[83]), "+r"(d[84]),
      "+r"(d[85]), "+r"(d[86]), "+r"(d[87]), "+r"(d[88]), "+r"(d[89]), "+r"(d[90]),
      "+r"(d[91]), "+r"(d[92]), "+r"(d[93]), "+r"(d[94]), "+r"(d[95]), "+r"(d[96]),
      "+r"(d[97]), "+r"(d[98]), "+r"(d[99]), "+r"(d[100]), "+r"(d[101]), "+r"(d[102]),
      "+r"(d[103]), "+r"(d[104]), "+r"(d[105]), "+r"(d[106]), "+r"(d[107]), "+r"(d[108]),
      "+r"(d[109]), "+r"(d[110]), "+r"(d[111]), "+r"(d[112]), "+r"(d[113]), "+r"(d[114]),
      "+r"(d[115]), "+r"(d[116]), "+r"(d[117]), "+r"(d[118]), "+r"(d[119]), "+r"(d[120]),
      "+r"(d[121]), "+r"(d[122]), "+r"(d[123]), "+r"(d[124]), "+r"(d[125]), "+r"(d[126]),
      "+r"(d[127])
      : "l"(da), "l"(db));
}

__global__ void __launch_bounds__(WG_THREADS, 1) binary_mm_wgmma(MmArgs p) {
  extern __shared__ __align__(128) unsigned char wg_smem[];
  int *rows = (int *)(wg_smem + WG_STAGES * WG_STAGE_BYTES + 1024), *cols = rows + WG_BM;
  const int64_t z = blockIdx.z, r0 = (int64_t)blockIdx.x * WG_BM,
                c0 = (int64_t)blockIdx.y * WG_BN;
  const uint32_t *a = p.a + z * p.sa, *b = p.b + z * p.sb;
  const int tid = threadIdx.x, wg = tid >> 7, warp = (tid >> 5) & 3, lane = tid & 31;
  if (tid < WG_BM && r0 + tid < p.m) rows[tid] = p.pa[z * p.spa + r0 + tid];
  if (tid < WG_BN && c0 + tid < p.n) cols[tid] = p.pb[z * p.spb + c0 + tid];
  const unsigned base = (smem_addr(wg_smem) + 1023) & ~1023u; /* the swizzle's alignment */

  /* The loader's part of a thread: chunk q of rows lr + WG_PASS i of A
   * and of B (bit i of amask and bmask: the row exists). */
  const int lr = tid >> 3, q = tid & 7;
  const int64_t arow = r0 + lr < p.m ? r0 + lr : 0, brow = c0 + lr < p.n ? c0 + lr : 0;
  const uint32_t *ap = a + arow * p.w + q * 4, *bp = b + brow * p.w + q * 4;
  const int64_t rows_pass = WG_PASS * p.w;
  unsigned amask = 0, bmask = 0;
#pragma unroll
  for (int i = 0; i < WG_B_PASSES; i++) {
    amask |= (unsigned)(i < WG_A_PASSES && r0 + lr + WG_PASS * i < p.m) << i;
    bmask |= (unsigned)(lr + WG_PASS * i < WG_BN && c0 + lr + WG_PASS * i < p.n) << i;
  }
  const unsigned adst = base + wg_chunk_at(lr, q), bdst = adst + WG_A_BYTES;
  const int steps = (int)((p.w + 4 * WG_CHUNKS - 1) / (4 * WG_CHUNKS)); /* 4 words a chunk */
  auto load = [&](int ks) {
    const unsigned off = (ks % WG_STAGES) * WG_STAGE_BYTES;
    const int64_t kw = (int64_t)ks * 4 * WG_CHUNKS;
    const bool in = kw + q * 4 < p.w;
#pragma unroll
    for (int i = 0; i < WG_A_PASSES; i++)
      if (amask >> i & 1)
        cp_async16_or_zero(adst + off + i * WG_PASS * 128, in ? ap + i * rows_pass + kw : ap, in);
#pragma unroll
    for (int i = 0; i < WG_B_PASSES; i++)
      if (bmask >> i & 1)
        cp_async16_or_zero(bdst + off + i * WG_PASS * 128, in ? bp + i * rows_pass + kw : bp, in);
  };
#pragma unroll
  for (int s = 0; s < WG_AHEAD; s++) {
    if (s < steps) load(s);
    cp_async_commit();
  }
  int acc[128];
#pragma unroll
  for (int i = 0; i < 128; i++) acc[i] = 0;
  for (int ks = 0; ks < steps; ks++) {
    cp_async_wait<WG_AHEAD - 1>();
    /* this thread's copies, seen by the tensor cores' (async) reads */
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    /* stage ks is in; every warpgroup's products of ks - 2 are done, so
     * that its slot takes stage ks + 2 */
    __syncthreads();
    if (ks + WG_AHEAD < steps) load(ks + WG_AHEAD);
    cp_async_commit();
    const unsigned st = base + (ks % WG_STAGES) * WG_STAGE_BYTES;
    const uint64_t da = wg_desc(st + wg * 64 * 128), db = wg_desc(st + WG_A_BYTES);
#pragma unroll
    for (int i = 0; i < 128; i++) wg_pin(acc[i]);
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
    /* plane j: chunks 2 j and 2 j + 1 of every row, 32 bytes on (2 in
     * the descriptor's units; the hardware applies the swizzle) */
#pragma unroll
    for (int j = 0; j < WG_CHUNKS / 2; j++) wg_mma(acc, da + 2 * j, db + 2 * j);
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
    /* the products of ks run on while the next stage is awaited */
    asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
  }
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
#pragma unroll
  for (int i = 0; i < 128; i++) wg_pin(acc[i]);
  cp_async_wait<0>();

  /* the epilogue: rows 64 wg + 16 warp + g + 8 h, columns 8 j + 2 t + e */
  const int g = lane >> 2, t = lane & 3;
  const bool full = c0 + WG_BN <= p.n;
  int32_t *out = p.out + z * p.so;
  const bool pair = full && (p.ldo & 1) == 0 && ((uintptr_t)out & 7) == 0;
#pragma unroll
  for (int h = 0; h < 2; h++) {
    const int lrow = wg * 64 + warp * 16 + g + h * 8;
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

int mm_launch_wgmma(cuda_dev *d, const MmArgs &p, int64_t batch, const char *op) {
  return mm_pieces(p, batch, 65535 * WG_BN, false, [&](const MmArgs &q, int64_t nz) {
    dim3 grid((unsigned)((q.m + WG_BM - 1) / WG_BM), (unsigned)((q.n + WG_BN - 1) / WG_BN),
              (unsigned)nz);
    return cuda_launch<binary_mm_wgmma>(d, grid, WG_THREADS, WG_SMEM, op, q);
  });
}
