/* The two passes of a separable filter (filter_backend.h's separable)
 * in one kernel, for float32 and masks of one size K for both, 3, 5, 9,
 * 17, 25 or 33 taps (sobel's, and the Gaussians of sigma 0.5 to 4 at
 * truncate 4). Summed as filter.cu's: float32 fused multiply-adds, taps
 * in order, the first pass's result rounded to float32.
 *
 * A block of 256 threads walks down a strip of the image: TX = 256 - (K -
 * 1), rounded down to a multiple of 4, output columns (224 for K = 33)
 * and the rows of a chunk, sized so that the blocks of all strips fill
 * the SMs once. Thread t owns the strip's column t of the first pass (the
 * TX + K - 1 columns that the second pass reads; a column past the
 * edges is the pass over the column it folds to, or cval in constant
 * mode) and keeps its sums in registers: K partial sums, one for each
 * of the next K outputs of the column, to which every input sample adds
 * its K terms as it arrives, so that each sample is read once and no
 * window of samples is held; after every sample one sum is complete and
 * goes to shared memory, and its register starts the next output. The
 * loop runs R = K (or a multiple of K from 16 on) rows a step, unrolled,
 * so that every register index is fixed; K - 1 rows before the first
 * step only start sums.
 *
 * The samples of a step come into shared memory by cp.async, 4 bytes a
 * copy (a warp's are 128 contiguous bytes of a row), each thread copying
 * its own column, so that no barrier guards them: each row of the next
 * step goes into the buffer's row as soon as this step has read it, and
 * is on its way while the block finishes the first pass and does the
 * second. A step's R rows of the first pass go to one of two buffers in
 * turn; after one barrier the block does the second pass on them, SRX = 4
 * outputs an item from windows read with 16-byte loads, while the first
 * pass of the next step fills the other buffer. Two blocks an SM (96
 * registers, 101 KB of shared memory for K = 33). Each output costs K +
 * K (TX + K - 1) / TX multiply-adds (70.7 for K = 33), and the image is
 * read once (its halo columns twice, from L2): bound by instruction
 * issue, not by the memory. */
#include "filter.cuh"
#include "map.cuh"
#include "stream.cuh"

constexpr int STRIP_THREADS = 256, SRX = 4, STRIP_KMAX = 33;
/* What the registers of sep_strip leave room for. */
constexpr int STRIP_BLOCKS_PER_SM = 2;

struct strip_args {
  const float *in;
  float *out;
  int64_t n0, n1, n2, sy, sx;
  int mode_y, mode_x, vec_out;
  float cval;
  /* strips across a plane, in all; rows a block; blocks' work items */
  int64_t strips_x, strips, chunk, items;
  /* the two masks (reversed under flip), as float32: kernel arguments
   * live in constant memory, so a multiply-add reads its weight there as
   * from a __constant__ array, and no copy to the device precedes the
   * launch (the masks come from the host, filter_backend.h) */
  float wy[STRIP_KMAX], wx[STRIP_KMAX];
};

template <int K> struct strip_sizes {
  static constexpr int R = K * ((16 + K - 1) / K);
  static constexpr int TX = (STRIP_THREADS + 1 - K) / SRX * SRX, G = TX / SRX;
  static constexpr int WN = (SRX + K - 1 + 3) / 4 * 4;
  /* a row of the buffers: one column a thread */
  static constexpr int P = STRIP_THREADS;
  static_assert(TX - SRX + WN <= P, "the second pass's windows lie in a row");
  /* one buffer of input rows, two of the first pass's */
  static constexpr size_t SMEM = 3 * (size_t)R * P * sizeof(float);
};

/* Rows row0 .. row0 + N - 1 of the thread's column (col: NULL when it
 * folds to nothing) into its column of inb, folded by the mode along
 * rows; one group of copies. */
template <int N, int P>
__device__ __forceinline__ void issue_rows(float *inb, const float *col, int64_t row0,
                                           const strip_args &a) {
  float *dst = inb + threadIdx.x;
  if (col && row0 >= 0 && row0 + N <= a.n1) {
    const float *src = col + row0 * a.n2;
#pragma unroll 8
    for (int j = 0; j < N; j++) cp_async4(dst + j * P, src + j * a.n2);
  } else {
    const ml_filter_mode my = (ml_filter_mode)a.mode_y;
    for (int j = 0; j < N; j++) {
      const int64_t q1 = col ? ml_filter_fold(row0 + j, a.n1, my) : -1;
      if (q1 < 0)
        dst[j * P] = a.cval;
      else
        cp_async4(dst + j * P, col + q1 * a.n2);
    }
  }
  cp_async_commit();
}

/* The second pass over the R rows of mid: outputs of rows y .. (those
 * before y1) of plane z, columns x0 ..; SRX an item. */
template <int K>
__device__ __forceinline__ void second_pass(const float *mid, const strip_args &a, int64_t z,
                                            int64_t x0, int64_t y, int64_t y1) {
  using S = strip_sizes<K>;
  constexpr int G = S::G, WN = S::WN, P = S::P;
  const int64_t rows = y1 - y, cols = a.n2 - x0;
  float *out = a.out + (z * a.n1 + y) * a.n2 + x0;
  for (int i = threadIdx.x; i < S::R * G; i += STRIP_THREADS) {
    const int r = i / G, x = SRX * (i % G);
    if (r >= rows || x >= cols) continue;
    float win[WN], o[SRX];
#pragma unroll
    for (int j = 0; j < WN / 4; j++) {
      const Vec<float, 4> v = *reinterpret_cast<const Vec<float, 4> *>(mid + r * P + x + 4 * j);
#pragma unroll
      for (int e = 0; e < 4; e++) win[4 * j + e] = v.v[e];
    }
#pragma unroll
    for (int q = 0; q < SRX; q++) o[q] = 0.0f;
#pragma unroll
    for (int k = 0; k < K; k++) {
      const float w = a.wx[k];
#pragma unroll
      for (int q = 0; q < SRX; q++) o[q] = fmaf(w, win[q + k], o[q]);
    }
    float *dst = out + r * a.n2 + x;
    if (a.vec_out && x + SRX <= cols) {
#pragma unroll
      for (int q = 0; q < SRX / 4; q++) {
        Vec<float, 4> v;
#pragma unroll
        for (int e = 0; e < 4; e++) v.v[e] = o[4 * q + e];
        reinterpret_cast<Vec<float, 4> *>(dst)[q] = v;
      }
    } else {
      for (int q = 0; q < SRX && x + q < cols; q++) dst[q] = o[q];
    }
  }
}

template <int K>
__global__ void __launch_bounds__(STRIP_THREADS, STRIP_BLOCKS_PER_SM) sep_strip(strip_args a) {
  using S = strip_sizes<K>;
  constexpr int R = S::R, P = S::P;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  float *inb = reinterpret_cast<float *>(smem_raw);
  float *mids = inb + R * P;
  const int tid = threadIdx.x;
  const ml_filter_mode mx = (ml_filter_mode)a.mode_x;
  for (int64_t t = blockIdx.x; t < a.items; t += gridDim.x) {
    const int64_t s = t % a.strips, y0 = t / a.strips * a.chunk;
    const int64_t z = s / a.strips_x, x0 = s % a.strips_x * S::TX;
    const int64_t y1 = y0 + a.chunk < a.n1 ? y0 + a.chunk : a.n1;
    const int steps = (int)((y1 - y0 + R - 1) / R);
    const int64_t q2 = ml_filter_fold(x0 + a.sx + tid, a.n2, mx);
    const float *col = q2 < 0 ? nullptr : a.in + z * a.n1 * a.n2 + q2;
    const int64_t row0 = y0 + a.sy;
    /* the K - 1 rows that only start sums: sum r holds the terms of
     * output row y0 + r so far (terms k <= r of it) */
    float acc[K];
#pragma unroll
    for (int r = 0; r < K; r++) acc[r] = 0.0f;
    issue_rows<K - 1, P>(inb, col, row0, a);
    cp_async_wait<0>();
#pragma unroll
    for (int r = 0; r < K - 1; r++) {
      const float v = inb[r * P + tid];
#pragma unroll
      for (int k = 0; k <= r; k++)
        acc[r - k] = k == 0 ? fmaf(a.wy[0], v, 0.0f) : fmaf(a.wy[k], v, acc[r - k]);
    }
    issue_rows<R, P>(inb, col, row0 + K - 1, a);
    for (int step = 0; step < steps; step++) {
      float *mid = mids + (step & 1) * R * P;
      cp_async_wait<0>();
      /* the next step's rows: copied into each row of inb as soon as this
       * step has read it where they lie inside the plane, else after */
      const int64_t next0 = row0 + K - 1 + (step + 1) * R;
      const bool more = step + 1 < steps;
      const bool inside = more && col && next0 >= 0 && next0 + R <= a.n1;
      const float *next = inside ? col + next0 * a.n2 : nullptr;
      /* input row K - 1 + step R + j: term k of output row step R + j + K
       * - 1 - k (sum (j + K - 1 - k) mod K); output row step R + j is
       * then complete, in sum j mod K */
#pragma unroll
      for (int j = 0; j < R; j++) {
        const float v = inb[j * P + tid];
#pragma unroll
        for (int k = 0; k < K; k++) {
          const int u = (j + K - 1 - k) % K;
          acc[u] = k == 0 ? fmaf(a.wy[0], v, 0.0f) : fmaf(a.wy[k], v, acc[u]);
        }
        if (inside) cp_async4(inb + j * P + tid, next + j * a.n2);
        mid[j * P + tid] = acc[j % K];
      }
      /* constant mode: the first pass's result past the edges is cval */
      if (!col)
        for (int j = 0; j < R; j++) mid[j * P + tid] = a.cval;
      if (inside)
        cp_async_commit();
      else if (more)
        issue_rows<R, P>(inb, col, next0, a);
      __syncthreads();
      second_pass<K>(mid, a, z, x0, y0 + step * R, y1);
    }
    /* the next item's first step writes the buffer the last one read */
    __syncthreads();
  }
}

template <int K>
static int launch_strip(cuda_dev *d, strip_args &a) {
  using S = strip_sizes<K>;
  a.strips_x = (a.n2 + S::TX - 1) / S::TX;
  a.strips = a.strips_x * a.n0;
  const int64_t slots = (int64_t)d->sms * stream_blocks_per_sm(d, S::SMEM, STRIP_BLOCKS_PER_SM);
  /* the fewest steps a block that fill the SMs once */
  const int64_t per_strip = slots / a.strips > 1 ? slots / a.strips : 1;
  a.chunk = ((a.n1 + per_strip - 1) / per_strip + S::R - 1) / S::R * S::R;
  a.items = a.strips * ((a.n1 + a.chunk - 1) / a.chunk);
  const int rc = prefer_shared<sep_strip<K>>(d, "filter");
  return rc ? rc : cuda_launch<sep_strip<K>>(d, blocks_for(a.items, 1), STRIP_THREADS, S::SMEM,
                                             "filter", a);
}

bool filter_strip_fits(const ml_filter_sep *f) {
  if (f->in->dtype != ML_FLOAT32 || !f->mask[0] || !f->mask[1]) return false;
  for (int i = 0; i < 2; i++)
    if (ml_array_device(f->mask[i]).kind != ML_CPU) return false;
  const int64_t k = f->mask[0]->shape[0];
  return f->mask[1]->shape[0] == k &&
         (k == 3 || k == 5 || k == 9 || k == 17 || k == 25 || k == 33);
}

int filter_strip(cuda_dev *d, const ml_filter_sep *f) {
  const int64_t k = f->mask[0]->shape[0];
  strip_args a;
  const double *my = (const double *)ml_array_data(f->mask[0]);
  const double *mx = (const double *)ml_array_data(f->mask[1]);
  for (int64_t i = 0; i < k; i++) {
    const int64_t j = f->flip ? k - 1 - i : i;
    a.wy[i] = (float)my[j];
    a.wx[i] = (float)mx[j];
  }
  a.in = (const float *)ml_array_data(f->in);
  a.out = (float *)ml_array_data(f->out);
  a.n0 = f->in->shape[0], a.n1 = f->in->shape[1], a.n2 = f->in->shape[2];
  a.sy = f->start[0], a.sx = f->start[1];
  a.mode_y = (int)f->mode[0], a.mode_x = (int)f->mode[1];
  a.cval = (float)f->cval;
  a.vec_out = (uintptr_t)a.out % 16 == 0 && a.n2 % 4 == 0;
  switch (k) {
    case 3: return launch_strip<3>(d, a);
    case 5: return launch_strip<5>(d, a);
    case 9: return launch_strip<9>(d, a);
    case 17: return launch_strip<17>(d, a);
    case 25: return launch_strip<25>(d, a);
    default: return launch_strip<33>(d, a);
  }
}
