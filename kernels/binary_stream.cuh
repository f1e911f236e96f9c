/* The kNN's filter for codes of 256 bits or fewer (w = 8: one k-step),
 * for binary.cu (included there once, after binary_mm.cuh). A warp holds
 * the A fragments of 64 queries and their limits in registers for all
 * its work, and streams its CTA's chunk of references 32 at a time (a
 * step), loading the next step's B fragments (a lane's 8 bytes of a
 * code: its words 2 t and 2 t + 1 in k-slots t and t + 4, for A alike)
 * and least popcount while the tensor cores take this one. The 16 warps of
 * a CTA (1024 queries) walk the same references, so the chunk comes from
 * L2 once a CTA and from L1 for the rest; the CTAs stay resident and take
 * work items (a block of queries, a chunk of references) in turn.
 *
 * The test a pair must pass, distance pa + pb - 2 acc below the query's
 * bound th, costs the CUDA cores most of the time, as the tensor cores
 * make 128 products an instruction. The references come sorted by
 * popcount within the round (binary_order.cuh), so a step's are all
 * about equal, and the products start from zero: where T is the least
 * floor(pb / 2) of the step, pb - 2 acc >= 2 (T - acc), and a row's
 * pairs pass only if the largest of its accumulators exceeds floor((pa -
 * th) / 2) + T: one three-way maximum for two new products, and no pair
 * below the bound is missed (pairs at it, or of a larger popcount, pass
 * too). The step's T changes the rows' limits only where it differs from
 * the last step's. The products start from zero rather than from each
 * reference's -floor(pb / 2) in registers (no sort) because mma.sync
 * pays for reading a C operand from registers, and not for zero.
 *
 * A step where some row passes is only noted: a record (the step, the
 * lane and its rows) in the warp's buffer in shared memory, with no
 * atomic and no wait. The warp settles its records between its work
 * items: the flagged rows' exact distances to the lane's 8 references
 * of the step, on the CUDA cores, and the pairs below the bound appended
 * to the rows' candidates. Tested in the loop instead (the products
 * again, and an atomic a pair, while the warp waits), they took half of
 * the search's time.
 *
 * In the first rounds about one reference in a thousand passes, and the
 * settles' popcounts took most of a round. There (H = 2) a step is
 * tested, and noted, in two halves of 16 references: a flagged row's
 * exact distances to the lane's 4 references of its half, for one more
 * vote a step; in the first round, where one in a hundred passes, in
 * quarters of 8 (H = 4: 2 references a flagged row). In the last rounds,
 * where one reference in tens of thousands passes, the votes cost more
 * than the settles: there (D = 2) a row's maxima run on through two
 * steps and are voted on once, and a flagged row's exact distances are
 * to the lane's 16 references of both; its pairs below the bound wait
 * in the warp's stage in shared memory until all its records are
 * tested, and then go to the candidates together, so that a lane's
 * tests do not wait on an atomic each. */
#ifndef ML_CUDA_BINARY_STREAM_CUH
#define ML_CUDA_BINARY_STREAM_CUH

#include "binary_mm.cuh"
#include "warp.cuh"

#define KS_TILES 4 /* row tiles a warp: 64 queries */
#define KS_WARPS 16
#define KS_ROWS (KS_WARPS * KS_TILES * 16)
#define KS_STEP (NJ * 8)  /* references a step */
#define KS_ITEMS 16       /* work items a resident CTA, about */
#define KS_MIN_CHUNK 256  /* references an item, at least */
#define KS_RECORDS 512    /* a warp's buffer of records */
#define KS_STAGE 256      /* a warp's staged pairs (D = 2) */
#define KS_SETTLE 32      /* records a warp settles after an item, at least */
/* the limit of a row past the end: no accumulator passes */
#define KS_NO_ROW (1 << 20)

static_assert(2 * KS_TILES <= 8, "a record's rows fit its low byte");

/* A step's operands: the B fragments (lane's row g of each tile, words
 * 2 t and 2 t + 1) and the step's least floor(pb / 2), its first
 * reference's (pq: its popcount). */
struct StreamFrags {
  uint2 b[NJ];
  int least;
};

__device__ __forceinline__ void stream_fetch(StreamFrags &f, const uint2 *bq, const int *pq) {
#pragma unroll
  for (int j = 0; j < NJ; j++) f.b[j] = __ldg(bq + j * 8 * 4);
  f.least = __ldg(pq) >> 1;
}

/* The last, partial step at c: columns past n clamped to the last (the
 * settle drops them). */
__device__ __forceinline__ void stream_fetch_tail(StreamFrags &f, const MmArgs &p, int64_t c,
                                                  int g, int t) {
#pragma unroll
  for (int j = 0; j < NJ; j++) {
    const int64_t col = c + j * 8 + g;
    f.b[j] = __ldg((const uint2 *)(p.b + (col < p.n ? col : p.n - 1) * 8) + t);
  }
  f.least = __ldg(p.pb + c) >> 1;
}

/* Part `part` of H of the step f (its column groups NJ / H part on)
 * against the warp's 64 queries: each of the lane's rows' largest
 * accumulator, or the larger of that and top where cont. */
template <int H>
__device__ __forceinline__ void stream_tops(int (&top)[KS_TILES][2],
                                            const uint32_t (&fa)[KS_TILES][4],
                                            const StreamFrags &f, int part, bool cont) {
  constexpr int J = NJ / H;
#pragma unroll
  for (int j = 0; j < J; j++) {
#pragma unroll
    for (int i = 0; i < KS_TILES; i++) {
      int acc[4];
      mma_and_popc<true>(acc, fa[i], f.b[part * J + j].x, f.b[part * J + j].y);
#pragma unroll
      for (int r = 0; r < 2; r++)
        top[i][r] = j == 0 && !cont ? max(acc[2 * r], acc[2 * r + 1])
                           : __vimax3_s32(top[i][r], acc[2 * r], acc[2 * r + 1]);
    }
  }
}

/* The rows' limits lt for a step whose least floor(pb / 2) is least:
 * lim + least, where it differs from the last step's cur. */
__device__ __forceinline__ void stream_limits(int (&lt)[KS_TILES][2], const int (&lim)[KS_TILES][2],
                                              int &cur, int least) {
  if (least == cur) return;
  cur = least;
#pragma unroll
  for (int i = 0; i < KS_TILES; i++)
#pragma unroll
    for (int h = 0; h < 2; h++) lt[i][h] = lim[i][h] + least;
}

/* Whether a row of the lane passes (a maximum above its limit lim), and
 * which: bit 2 i + h. */
__device__ __forceinline__ bool stream_any(const int (&top)[KS_TILES][2],
                                           const int (&lim)[KS_TILES][2]) {
  bool any = false;
#pragma unroll
  for (int i = 0; i < KS_TILES; i++)
#pragma unroll
    for (int h = 0; h < 2; h++) any |= top[i][h] > lim[i][h];
  return any;
}

__device__ __forceinline__ unsigned stream_rows_passing(const int (&top)[KS_TILES][2],
                                                        const int (&lim)[KS_TILES][2]) {
  unsigned hit = 0;
#pragma unroll
  for (int i = 0; i < KS_TILES; i++)
#pragma unroll
    for (int h = 0; h < 2; h++) hit |= (unsigned)(top[i][h] > lim[i][h]) << (2 * i + h);
  return hit;
}

/* A warp's buffer of records: {c + d - 1, r0 << 13 | lane << 8 | rows},
 * the d steps (the part of a step where H > 1) from column c (even) of
 * the warp's queries from r0, and the lane's rows that passed (bit 2 i +
 * h: row r0 + 16 i + lane / 4 + 8 h); and where D = 2 its stage of
 * pairs below their bounds, {row << 9 | distance, column}, fill of them
 * (past KS_STAGE, the rest went straight to the candidates). */
struct StreamNotes {
  uint2 *rec;
  int count;
  uint2 *stage;
  int *fill;
};

/* The shared memory of a CTA: its warps' records, then where D = 2 their
 * stages and fills. */
static constexpr size_t stream_smem(int D) {
  return KS_WARPS *
         (KS_RECORDS * sizeof(uint2) + (D == 2 ? KS_STAGE * sizeof(uint2) + sizeof(int) : 0));
}

/* The exact test of the records' rows and columns: each lane settles a
 * record (the distances of its rows to the lane's NV references, all of
 * them before any is appended, so that their loads overlap, and those of
 * the record's steps kept: NV / D a step) and appends the pairs below
 * the rows' bounds, where D = 2 through the stage. Out of line: it is
 * rare. */
template <int NV, int D>
static __device__ __noinline__ void stream_settle(StreamNotes s, const uint32_t *a,
                                                  const uint32_t *b, const uint32_t *perm,
                                                  const uint32_t *thr, int64_t thr_stride,
                                                  FilterSink sink, int lane) {
  __syncwarp();
  for (int e = lane; e < s.count; e += 32) {
    const uint2 r = s.rec[e];
    const int l = r.y >> 8 & 31;
    const int64_t r0 = r.y >> 13, c0 = (r.x & ~1u) + (l & 3) * 2;
    const int nv = NV / D * (int)((r.x & 1) + 1);
    for (unsigned rows = r.y & 255; rows; rows &= rows - 1) {
      const int bit = __ffs(rows) - 1;
      const int64_t row = r0 + bit / 2 * 16 + (l >> 2) + bit % 2 * 8;
      const uint4 *qa = (const uint4 *)(a + row * 8);
      const uint4 q0 = __ldg(qa), q1 = __ldg(qa + 1);
      const uint32_t th = __ldg(thr + row * thr_stride);
      /* the passing distances (below th <= 256: a byte each) */
      unsigned pass = 0, near[(NV + 3) / 4] = {};
#pragma unroll
      for (int v = 0; v < NV; v++) {
        const int64_t col = c0 + v / 2 * 8 + v % 2;
        /* columns past n, clamped to the last (a partial step's lanes
         * hold its copies there), are read but never kept */
        const uint4 *rb = (const uint4 *)(b + (col < sink.n ? col : sink.n - 1) * 8);
        const uint4 x = __ldg(rb), y = __ldg(rb + 1);
        const uint32_t d = __popc(q0.x ^ x.x) + __popc(q0.y ^ x.y) + __popc(q0.z ^ x.z) +
                           __popc(q0.w ^ x.w) + __popc(q1.x ^ y.x) + __popc(q1.y ^ y.y) +
                           __popc(q1.z ^ y.z) + __popc(q1.w ^ y.w);
        pass |= (unsigned)(v < nv && col < sink.n && d < th) << v;
        near[v / 4] |= (d & 255) << (v % 4 * 8);
      }
      for (; pass; pass &= pass - 1) {
        const int v = __ffs(pass) - 1;
        const uint32_t dist = near[v / 4] >> (v % 4 * 8) & 255;
        const int64_t col = c0 + v / 2 * 8 + v % 2;
        const int slot = D == 2 ? atomicAdd(s.fill, 1) : KS_STAGE;
        if (slot < KS_STAGE) s.stage[slot] = make_uint2((uint32_t)row << 9 | dist, (uint32_t)col);
        else sink_append(sink, row, dist, __ldg(perm + col));
      }
    }
  }
  __syncwarp();
  if (D == 2) {
    const int staged = min(*s.fill, KS_STAGE);
    for (int e = lane; e < staged; e += 32) {
      const uint2 t = s.stage[e];
      sink_append(sink, t.x >> 9, t.x & 511, __ldg(perm + t.y));
    }
    __syncwarp();
    if (lane == 0) *s.fill = 0;
    __syncwarp();
  }
}

template <int H, int D>
__device__ __forceinline__ void stream_settle_all(const MmArgs &p, StreamNotes &s, int lane) {
  /* the candidates' indices are perm's, base 0 */
  const FilterSink sink = {p.count, p.cand_d, p.cand_i, p.cap, 0, p.n, 0};
  stream_settle<2 * NJ * D / H, D>(s, p.a, p.b, p.perm, p.thr, p.thr_stride, sink, lane);
  s.count = 0;
}

/* Notes the step at c where some lane has rows that pass (its maxima
 * top): a record for each such lane; meta = r0 << 13 | lane << 8. */
__device__ __forceinline__ void stream_vote(StreamNotes &s, const int (&top)[KS_TILES][2],
                                            const int (&lim)[KS_TILES][2], int64_t c,
                                            unsigned meta, int lane) {
  if (!__any_sync(FULL, stream_any(top, lim))) return;
  const unsigned rows = stream_rows_passing(top, lim), voted = __ballot_sync(FULL, rows != 0);
  if (rows)
    s.rec[s.count + __popc(voted & ((1u << lane) - 1))] = make_uint2((uint32_t)c, meta | rows);
  s.count += __popc(voted);
}

/* A step's tests but its last part's vote, which the caller makes once
 * the next step's operands are on their way: the rows' maxima of part 0,
 * the step's limits, then each later part after the vote of the one
 * before it (from column c, KS_STEP / H references a part). Where cont
 * (a vote's second step), the maxima run on from the last step's and
 * the limits stay its: its least popcount is no larger. */
template <int H> struct StreamStep {
  static_assert(NJ % H == 0, "a part is whole column groups");
  StreamNotes &s;
  int (&top)[KS_TILES][2], (&lt)[KS_TILES][2];
  const int (&lim)[KS_TILES][2];
  int &cur;
  const uint32_t (&fa)[KS_TILES][4];
  unsigned meta;
  int lane;

  __device__ __forceinline__ void parts(const StreamFrags &f, int64_t c, bool cont = false) {
    stream_tops<H>(top, fa, f, 0, cont);
    if (!cont) stream_limits(lt, lim, cur, f.least);
#pragma unroll
    for (int part = 1; part < H; part++) {
      stream_vote(s, top, lt, c + (part - 1) * (KS_STEP / H), meta, lane);
      stream_tops<H>(top, fa, f, part, false);
    }
  }
};

/* A warp's 64 queries from r0 against references c .. end - 1 (c a
 * multiple of KS_STEP), until the buffer may not hold two more steps'
 * records (many ties): where it stopped; a vote every D steps of the
 * loop, every step of the tail. The A fragments load a word at a time,
 * so that each quad can sit in four registers in the mma's order: a paired load
 * fills two registers in a row with words 2 t and 2 t + 1, which the
 * quad wants two apart, and ptxas copied the quads before every mma. Each
 * step's operands load while the other computes, through pointers
 * (64-bit index arithmetic took a third of the instructions), and each
 * step has its vote (D = 1; one vote for two steps that kept the first's
 * maxima apart from the second's made ptxas serialize them), or the two
 * steps share their maxima and vote (D = 2). The last, partial step
 * clamps its columns. */
template <int H, int D>
__device__ __forceinline__ int64_t stream_rows(const MmArgs &p, StreamNotes &s, int64_t r0,
                                               int64_t c, int64_t end, int lane) {
  const int g = lane >> 2, t = lane & 3;
  uint32_t fa[KS_TILES][4];
  int lim[KS_TILES][2];
#pragma unroll
  for (int i = 0; i < KS_TILES; i++)
#pragma unroll
    for (int h = 0; h < 2; h++) {
      const int64_t row = r0 + i * 16 + g + h * 8;
      const bool ok = row < p.m;
      const uint32_t *a = p.a + (ok ? row : r0) * 8 + t * 2;
      fa[i][h] = __ldg(a);
      fa[i][2 + h] = __ldg(a + 1);
      lim[i][h] = ok ? (p.pa[row] - (int)p.thr[row * p.thr_stride]) >> 1 : KS_NO_ROW;
    }
  const unsigned meta = (unsigned)r0 << 13 | (unsigned)lane << 8;
  constexpr int S = KS_STEP;
  const int64_t full = c + (end - c) / S * S;
  const uint2 *bq = (const uint2 *)p.b + (c + g) * 4 + t;
  const int *pq = p.pb + c;
  StreamFrags x, y;
  if (c < full) stream_fetch(x, bq, pq);
  if (c + S < full) stream_fetch(y, bq + S * 4, pq + S);
  static_assert(D == 1 || (D == 2 && H == 1), "two steps a vote are whole steps");
  constexpr int ROOM = KS_RECORDS - 2 * H / D * 32, P = S / H;
  int top[KS_TILES][2], lt[KS_TILES][2], cur = INT_MIN;
  StreamStep<H> st = {s, top, lt, lim, cur, fa, meta, lane};
  for (; c + 2 * S <= full && s.count <= ROOM; c += 2 * S) {
    st.parts(x, c);
    bq += 2 * S * 4;
    pq += 2 * S;
    if (c + 2 * S < full) stream_fetch(x, bq, pq);
    if (D == 1) stream_vote(s, top, lt, c + S - P, meta, lane);
    st.parts(y, c + S, D == 2);
    if (c + 3 * S < full) stream_fetch(y, bq + S * 4, pq + S);
    stream_vote(s, top, lt, D == 2 ? c + 1 : c + 2 * S - P, meta, lane);
  }
  for (; c < end && s.count <= ROOM; c += S) {
    if (c == full) stream_fetch_tail(x, p, c, g, t);
    st.parts(x, c);
    stream_vote(s, top, lt, c + S - P, meta, lane);
  }
  return c;
}

/* Work items in turn: query block item % qblocks (KS_ROWS queries)
 * against chunk item / qblocks of the references. A warp settles its
 * records after an item once it holds KS_SETTLE, while the other warps
 * keep the tensor cores busy (settling only after the last item left
 * them idle at the end of the filter), after its last item, and where
 * its buffer filled. The one call is here, where the loop's registers
 * are dead: a call in the loop made ptxas spill around it. */
template <int H, int D>
__global__ void __launch_bounds__(KS_WARPS * 32, 1)
    binary_knn_stream(MmArgs p, int64_t chunk, int64_t qblocks, int64_t items) {
  extern __shared__ uint2 ks_records[];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  uint2 *stages = ks_records + KS_WARPS * KS_RECORDS;
  StreamNotes s = {ks_records + warp * KS_RECORDS, 0, stages + warp * KS_STAGE,
                   (int *)(stages + KS_WARPS * KS_STAGE) + warp};
  if (D == 2 && lane == 0) *s.fill = 0;
  __syncwarp();
  for (int64_t item = blockIdx.x; item < items; item += gridDim.x) {
    const int64_t r0 = item % qblocks * KS_ROWS + warp * KS_TILES * 16,
                  end = (item / qblocks + 1) * chunk < p.n ? (item / qblocks + 1) * chunk : p.n;
    int64_t c = r0 < p.m ? item / qblocks * chunk : end;
    do {
      if (c < end) c = stream_rows<H, D>(p, s, r0, c, end, lane);
      if (s.count >= KS_SETTLE || (s.count && item + gridDim.x >= items))
        stream_settle_all<H, D>(p, s, lane);
    } while (c < end);
  }
}

/* The filter over p (a round of the search: p.m queries, p.n references
 * of w = 8 words sorted by popcount, p.pb their popcounts and p.perm
 * their indices) with a vote every `span` references (KS_STEP / 4 or
 * KS_STEP / 2: quarter or half steps, KS_STEP, or 2 KS_STEP) by one CTA
 * a multiprocessor, each taking about KS_ITEMS work items (a block of
 * KS_ROWS queries, a chunk of references) in turn. The items are a
 * multiple of the CTAs where the chunks allow, so that no CTA takes one
 * more than the others. */
static int64_t gcd64(int64_t a, int64_t b) {
  while (b) {
    const int64_t r = a % b;
    a = b;
    b = r;
  }
  return a;
}

/* binary_knn_stream<H, D> with its shared memory. */
template <int H, int D>
static int knn_stream_as(cuda_dev *d, unsigned grid, const MmArgs &p, int64_t chunk,
                         int64_t qblocks, int64_t items, const char *op) {
  return cuda_launch<binary_knn_stream<H, D>>(d, grid, KS_WARPS * 32, stream_smem(D), op, p,
                                              chunk, qblocks, items);
}

static int knn_stream(cuda_dev *d, const MmArgs &p, int span, const char *op) {
  const int64_t qblocks = (p.m + KS_ROWS - 1) / KS_ROWS, slots = d->sms;
  /* parts a multiple of unit make the items a multiple of the CTAs */
  const int64_t unit = slots / gcd64(slots, qblocks);
  int64_t parts = (slots * KS_ITEMS / qblocks + unit / 2) / unit * unit;
  if (parts < unit) parts = unit;
  int64_t chunk = (p.n + parts - 1) / parts;
  chunk = chunk < KS_MIN_CHUNK ? KS_MIN_CHUNK : (chunk + KS_STEP - 1) / KS_STEP * KS_STEP;
  const int64_t items = qblocks * ((p.n + chunk - 1) / chunk);
  const unsigned grid = (unsigned)(items < slots ? items : slots);
  if (span < KS_STEP / 2) return knn_stream_as<4, 1>(d, grid, p, chunk, qblocks, items, op);
  if (span < KS_STEP) return knn_stream_as<2, 1>(d, grid, p, chunk, qblocks, items, op);
  if (span > KS_STEP) return knn_stream_as<1, 2>(d, grid, p, chunk, qblocks, items, op);
  return knn_stream_as<1, 1>(d, grid, p, chunk, qblocks, items, op);
}

#endif
