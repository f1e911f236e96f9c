/* Correlations of float32 rows with one row of K taps known at compile
 * time (3, 5, 7, 9, 15, 31 or 33), over outputs of few, long rows: the
 * one-dimensional signals, which filter.cu's two-dimensional tiles do
 * not fill. Summed as filter.cu's (float32 fused multiply-adds, taps in
 * order).
 *
 * A block of 256 threads takes segments of S = 4096 outputs of one row,
 * one after the other (grid-stride, as many blocks as the SMs hold), and
 * keeps two buffers in shared memory: while it computes on one segment,
 * the input of its next one (S + K - 1 samples and up to 3 before, from
 * the 16-byte boundary at or before the first) is on its way into the
 * other through cp.async, 16 bytes a copy: three blocks an SM (48 to 64
 * registers, 41 KB of shared memory for K = 33) keep some 50 KB of loads
 * in flight on every SM all the time. Segments whose window reaches past
 * the row (or a row that folds to nothing) are read sample by sample
 * through the fold instead.
 *
 * Each thread computes RF = 16 consecutive outputs from a window of RF +
 * K - 1 samples read with 16-byte loads into registers, each weight a
 * constant-memory operand at a fixed offset. The window starts OFF = 0..3
 * samples into its first 16 bytes (the row's alignment), a template
 * parameter so that every operand stays in a register. Buffers hold 4
 * unused samples after every RF, so that the windows of the 8 threads of
 * a quarter warp, (RF + 4) 4 = 80 bytes apart, fall on different banks.
 * The outputs go back through the buffer, so that the stores of a warp
 * are 512 contiguous bytes. About 31 multiply-adds and 3 other
 * instructions an output for K = 31: bound by the memory's bandwidth. */
#include "filter.cuh"
#include "filter_mask.cuh"
#include "stream.cuh"

constexpr int LINE_THREADS = 256, RF = 16, SEG = LINE_THREADS * RF;
/* What the registers of corr_line leave room for. */
constexpr int LINE_BLOCKS_PER_SM = 3;

struct line_args : plane_args {
  int64_t segs, rows; /* segments a row; rows, o0 o1 */
};

/* The samples a segment loads (the most, OFF = 3), and a buffer's size
 * with the gaps. */
template <int K> struct line_sizes {
  static constexpr int L = (3 + SEG + K - 1 + 3) / 4 * 4;
  static constexpr int BUF = L + 4 * (L / RF);
};

/* Sample i of a buffer: after every RF, 4 unused. */
__device__ __forceinline__ int gap(int i) { return i + 4 * (i / RF); }

/* A block's next segment: segment seg of row row (of plane z, row y of
 * it), blockIdx.x + i gridDim.x of rows blockIdx.y + j gridDim.y in turn,
 * so that only a new row costs divisions. */
struct line_pos {
  int64_t seg, row, z, y;
  __device__ void set_row(const line_args &a, int64_t r) {
    row = r, z = r / a.o1, y = r % a.o1;
  }
  __device__ void next(const line_args &a) {
    seg += gridDim.x;
    if (seg < a.segs) return;
    seg = blockIdx.x;
    set_row(a, row + gridDim.y);
  }
};

/* Where a segment reads and writes: the input row (NULL when it folds to
 * nothing: cval throughout), the position of the buffer's first sample,
 * the window offset, and the output row and first column. */
struct line_seg {
  const float *src;
  float *dst;
  int64_t a0, x0;
  int off;
};

__device__ __forceinline__ line_seg segment(const line_args &a, const line_pos &at) {
  const ml_filter_mode mode = (ml_filter_mode)a.mode;
  const int64_t q0 = ml_filter_fold(at.z + a.s0, a.n0, mode);
  const int64_t q1 = q0 < 0 ? -1 : ml_filter_fold(at.y + a.s1, a.n1, mode);
  line_seg s;
  s.x0 = at.seg * SEG;
  s.src = q1 < 0 ? nullptr : a.in + (q0 * a.n1 + q1) * a.n2;
  s.dst = a.out + at.row * a.o2;
  const int64_t p0 = s.x0 + a.s2;
  /* samples from the 16-byte boundary at or before p0 */
  s.off = s.src ? (int)(((uint64_t)(uintptr_t)s.src / 4 + (uint64_t)p0) & 3) : 0;
  s.a0 = p0 - s.off;
  return s;
}

/* The input of segment s into buf: cp.async where it lies inside its row,
 * else through the fold (plain stores). One group of copies either way. */
template <int K>
__device__ void load_segment(float *buf, const line_args &a, const line_seg &s) {
  constexpr int L = line_sizes<K>::L;
  if (s.src && s.a0 >= 0 && s.a0 + L <= a.n2) {
    for (int c = threadIdx.x; c < L / 4; c += LINE_THREADS)
      cp_async16(buf + gap(4 * c), s.src + s.a0 + 4 * c);
  } else {
    const ml_filter_mode mode = (ml_filter_mode)a.mode;
    for (int i = threadIdx.x; i < L; i += LINE_THREADS) {
      const int64_t q = s.src ? ml_filter_fold(s.a0 + i, a.n2, mode) : -1;
      buf[gap(i)] = q < 0 ? a.cval : s.src[q];
    }
  }
  cp_async_commit();
}
/* acc = the thread's RF outputs from buf, whose window starts OFF samples
 * into the thread's first 16 bytes. */
template <int K, int OFF>
__device__ __forceinline__ void line_outputs(float (&acc)[RF], const float *buf) {
  constexpr int WN = (OFF + RF + K - 1 + 3) / 4 * 4;
  const float *base = buf + (RF + 4) * threadIdx.x;
  float win[WN];
#pragma unroll
  for (int j = 0; j < WN / 4; j++)
    vec16<float>::split(*reinterpret_cast<const float4 *>(base + 4 * j + 4 * (4 * j / RF)),
                        win + 4 * j);
#pragma unroll
  for (int k = 0; k < K; k++) {
    const float w = cmask<float>(k);
#pragma unroll
    for (int q = 0; q < RF; q++) acc[q] = fmaf(w, win[OFF + q + k], acc[q]);
  }
}

/* The segment's outputs from buf (where the threads left them, RF each)
 * to its row, 16 bytes a store where the rows allow. */
__device__ __forceinline__ void store_segment(const float *buf, const line_args &a,
                                              const line_seg &s) {
  for (int c = threadIdx.x; c < SEG / 4; c += LINE_THREADS) {
    const int64_t x = s.x0 + 4 * c;
    if (x >= a.o2) break;
    const float4 v = *reinterpret_cast<const float4 *>(buf + gap(4 * c));
    if (a.vec_out && x + 4 <= a.o2) {
      *reinterpret_cast<float4 *>(s.dst + x) = v;
    } else {
      const float e[4] = {v.x, v.y, v.z, v.w};
      for (int q = 0; q < 4 && x + q < a.o2; q++) s.dst[x + q] = e[q];
    }
  }
}

template <int K>
__global__ void __launch_bounds__(LINE_THREADS, LINE_BLOCKS_PER_SM) corr_line(line_args a) {
  constexpr int BUF = line_sizes<K>::BUF;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  float *bufs = reinterpret_cast<float *>(smem_raw);
  line_pos at;
  at.seg = blockIdx.x;
  at.set_row(a, blockIdx.y);
  line_seg s = segment(a, at);
  if (at.row < a.rows) load_segment<K>(bufs, a, s);
  for (int b = 0; at.row < a.rows; b ^= 1) {
    float *buf = bufs + b * BUF;
    /* the next segment's input into the other buffer, then this one's */
    at.next(a);
    const line_seg next = segment(a, at);
    if (at.row < a.rows)
      load_segment<K>(bufs + (b ^ 1) * BUF, a, next);
    else
      cp_async_commit();
    cp_async_wait<1>();
    __syncthreads();
    float acc[RF];
#pragma unroll
    for (int q = 0; q < RF; q++) acc[q] = 0.0f;
    switch (s.off) {
      case 0: line_outputs<K, 0>(acc, buf); break;
      case 1: line_outputs<K, 1>(acc, buf); break;
      case 2: line_outputs<K, 2>(acc, buf); break;
      default: line_outputs<K, 3>(acc, buf); break;
    }
    __syncthreads();
#pragma unroll
    for (int i = 0; i < RF / 4; i++)
      *reinterpret_cast<float4 *>(buf + (RF + 4) * threadIdx.x + 4 * i) =
          vec16<float>::join(acc + 4 * i);
    __syncthreads();
    store_segment(buf, a, s);
    s = next;
    /* this buffer is the one the next iteration loads into */
    __syncthreads();
  }
}

/* Blocks across a row (segments of it in turn) and down the rows, as
 * many as the SMs hold. */
template <int K>
static int launch_line(cuda_dev *d, line_args &a) {
  const size_t smem = 2 * (size_t)line_sizes<K>::BUF * sizeof(float);
  const int64_t slots = (int64_t)d->sms * stream_blocks_per_sm(d, smem, LINE_BLOCKS_PER_SM);
  const int64_t gy = a.rows < 65535 ? a.rows : 65535;
  const int64_t want = (slots + gy - 1) / gy, gx = want < a.segs ? want : a.segs;
  const int rc = prefer_shared<corr_line<K>>(d, "filter");
  return rc ? rc : cuda_launch<corr_line<K>>(d, dim3((unsigned)gx, (unsigned)gy), LINE_THREADS,
                                             smem, "filter", a);
}

int filter_line(cuda_dev *d, const filter_plan *p) {
  cuda_scratch mask;
  int rc = stage_mask<float>(d, p->mask, p->k, p->k[2], p->flip, mask, true, 0);
  if (rc) return rc;
  line_args a;
  static_cast<plane_args &>(a) = plan_args(p);
  a.segs = (p->o[2] + SEG - 1) / SEG;
  a.rows = p->o[0] * p->o[1];
  switch (p->k[2]) {
    case 3: return launch_line<3>(d, a);
    case 5: return launch_line<5>(d, a);
    case 7: return launch_line<7>(d, a);
    case 9: return launch_line<9>(d, a);
    case 15: return launch_line<15>(d, a);
    case 31: return launch_line<31>(d, a);
    default: return launch_line<33>(d, a);
  }
}
