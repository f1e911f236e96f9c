/* Correlations of float32 planes with small masks whose size is known at
 * compile time, register-blocked straight from global memory: rows of
 * 3, 5, 7 or 9 taps, columns of 3, 5, 7, 9, 15, 31 or 33, squares of 3, 5
 * or 7. (Longer rows and 9 x 9 squares read too many windows for their
 * outputs through L1: filter.cu's tiles take them faster.)
 *
 * A thread computes RY rows of RF = 4 consecutive outputs, next to those
 * of the next thread, so that a warp's loads and stores are 512
 * contiguous bytes. For each input row that they need it reads a window of
 * WN samples into registers with 16-byte loads (the window starts at the multiple of 4 at or before the
 * first sample, OFF samples earlier: OFF is a template parameter, so that
 * every operand stays in a register) and adds it, tap by tap, to every
 * output row it reaches; each weight is a constant-memory operand at a
 * fixed offset. Neighbouring threads read overlapping windows, which the
 * L1 cache serves: no shared memory, no barrier, and 16-byte loads of
 * many rows in flight, where filter.cu's tiles wait for their loads into
 * shared memory. Windows that reach past the plane (or are not 16-byte
 * aligned) are read sample by sample through the fold. */
#include "filter.cuh"
#include "filter_mask.cuh"

#define REG_THREADS 256

struct reg_args : plane_args {
  int bx;
  int64_t tiles_x, tiles_y, tiles;
};

/* win = the WN samples of input row `row` of plane from column lo on,
 * through the fold (cval past a constant edge, or everywhere when plane
 * is NULL). */
template <int WN>
__device__ __forceinline__ void fold_window(float *win, const float *plane, int64_t row,
                                            int64_t lo, const reg_args &a) {
  const ml_filter_mode mode = (ml_filter_mode)a.mode;
  const int64_t q1 = plane ? ml_filter_fold(row, a.n1, mode) : -1;
#pragma unroll
  for (int i = 0; i < WN; i++) {
    const int64_t q2 = ml_filter_fold(lo + i, a.n2, mode);
    win[i] = q1 < 0 || q2 < 0 ? a.cval : plane[q1 * a.n2 + q2];
  }
}

/* acc += the correlation of the thread's windows (input rows r0 .. r0 +
 * RY + K1 - 2, columns lo ..) with the mask; INSIDE: every window lies in
 * the plane, 16-byte aligned. */
template <int K1, int K2, int RY, int RF, int OFF, bool INSIDE>
__device__ __forceinline__ void accumulate(float (&acc)[RY][RF], const float *plane,
                                           int64_t r0, int64_t lo, const reg_args &a) {
  constexpr int WN = (OFF + RF + K2 - 1 + 3) / 4 * 4;
#pragma unroll
  for (int s = 0; s < RY + K1 - 1; s++) {
    float win[WN];
    if (INSIDE) {
      const float4 *v = reinterpret_cast<const float4 *>(plane + (r0 + s) * a.n2 + lo);
#pragma unroll
      for (int i = 0; i < WN / 4; i++) vec16<float>::split(__ldg(v + i), win + 4 * i);
    } else {
      fold_window<WN>(win, plane, r0 + s, lo, a);
    }
    /* input row s feeds output row r through mask row s - r */
#pragma unroll
    for (int r = 0; r < RY; r++) {
      if (s - r < 0 || s - r >= K1) continue;
#pragma unroll
      for (int kk = 0; kk < K2; kk++) {
        const float w = cmask<float>((s - r) * K2 + kk);
#pragma unroll
        for (int q = 0; q < RF; q++) acc[r][q] = fmaf(w, win[OFF + q + kk], acc[r][q]);
      }
    }
  }
}

/* A block of REG_THREADS threads, a.bx of them across, takes tiles of
 * (REG_THREADS / a.bx) RY rows by a.bx RF columns of one output plane. */
template <int K1, int K2, int RY, int RF, int OFF>
__global__ void __launch_bounds__(REG_THREADS) corr_reg(reg_args a) {
  constexpr int WN = (OFF + RF + K2 - 1 + 3) / 4 * 4;
  const ml_filter_mode mode = (ml_filter_mode)a.mode;
  const int64_t tile_x = (int64_t)a.bx * RF, tile_y = (int64_t)(REG_THREADS / a.bx) * RY;
  for (int64_t t = blockIdx.x; t < a.tiles; t += gridDim.x) {
    const int64_t bx = t % a.tiles_x, by = t / a.tiles_x % a.tiles_y, z = t / a.tiles_x / a.tiles_y;
    const int64_t x = bx * tile_x + threadIdx.x % a.bx * RF;
    const int64_t y = by * tile_y + threadIdx.x / a.bx * RY;
    if (x >= a.o2 || y >= a.o1) continue;
    const int64_t q0 = ml_filter_fold(z + a.s0, a.n0, mode);
    const float *plane = q0 < 0 ? nullptr : a.in + q0 * a.n1 * a.n2;
    const int64_t r0 = y + a.s1, lo = x + a.s2 - OFF;
    float acc[RY][RF];
#pragma unroll
    for (int r = 0; r < RY; r++)
#pragma unroll
      for (int q = 0; q < RF; q++) acc[r][q] = 0.0f;
    if (plane && r0 >= 0 && r0 + RY + K1 - 1 <= a.n1 && lo >= 0 && lo + WN <= a.n2)
      accumulate<K1, K2, RY, RF, OFF, true>(acc, plane, r0, lo, a);
    else
      accumulate<K1, K2, RY, RF, OFF, false>(acc, plane, r0, lo, a);
#pragma unroll
    for (int r = 0; r < RY; r++) {
      if (y + r >= a.o1) break;
      float *o = a.out + (z * a.o1 + y + r) * a.o2 + x;
      if (a.vec_out && x + RF <= a.o2) {
#pragma unroll
        for (int i = 0; i < RF / 4; i++)
          reinterpret_cast<float4 *>(o)[i] = vec16<float>::join(acc[r] + 4 * i);
      } else {
#pragma unroll
        for (int q = 0; q < RF; q++)
          if (x + q < a.o2) o[q] = acc[r][q];
      }
    }
  }
}

template <int K1, int K2, int RY, int RF, int OFF>
static int launch_reg(cuda_dev *d, reg_args &a) {
  const int64_t tile_x = (int64_t)a.bx * RF, tile_y = (int64_t)(REG_THREADS / a.bx) * RY;
  a.tiles_x = (a.o2 + tile_x - 1) / tile_x;
  a.tiles_y = (a.o1 + tile_y - 1) / tile_y;
  a.tiles *= a.tiles_x * a.tiles_y;
  return cuda_launch<corr_reg<K1, K2, RY, RF, OFF>>(d, blocks_for(a.tiles, 1), REG_THREADS, 0,
                                                     "filter", a);
}

/* Rows of K taps, 4 outputs a thread, at window offset off. */
template <int K>
static int launch_row(cuda_dev *d, reg_args &a, int off) {
  switch (off) {
    case 0: return launch_reg<1, K, 1, 4, 0>(d, a);
    case 1: return launch_reg<1, K, 1, 4, 1>(d, a);
    case 2: return launch_reg<1, K, 1, 4, 2>(d, a);
    default: return launch_reg<1, K, 1, 4, 3>(d, a);
  }
}

/* K x K squares, 8 rows of 4 outputs a thread. */
template <int K>
static int launch_square(cuda_dev *d, reg_args &a, int off) {
  switch (off) {
    case 0: return launch_reg<K, K, 8, 4, 0>(d, a);
    case 1: return launch_reg<K, K, 8, 4, 1>(d, a);
    case 2: return launch_reg<K, K, 8, 4, 2>(d, a);
    default: return launch_reg<K, K, 8, 4, 3>(d, a);
  }
}

static bool column_taps(int64_t k) {
  return k == 3 || k == 5 || k == 7 || k == 9 || k == 15 || k == 31 || k == 33;
}

/* The window offset of p's first output column, 0 .. 3. */
static int reg_offset(const filter_plan *p) { return (int)(((p->start[2] % 4) + 4) % 4); }

bool filter_reg_fits(const filter_plan *p) {
  const int64_t k1 = p->k[1], k2 = p->k[2];
  if (p->k[0] != 1 || p->n[2] % 4 != 0 || (uintptr_t)p->in % 16 != 0) return false;
  if (k1 == 1) return k2 == 3 || k2 == 5 || k2 == 7 || k2 == 9;
  if (k2 == 1) return column_taps(k1) && reg_offset(p) == 0;
  return k1 == k2 && (k1 == 3 || k1 == 5 || k1 == 7);
}

int filter_reg(cuda_dev *d, const filter_plan *p) {
  cuda_scratch mask;
  int rc = stage_mask<float>(d, p->mask, p->k, p->k[2], p->flip, mask, true, 0);
  if (rc) return rc;
  reg_args a;
  static_cast<plane_args &>(a) = plan_args(p);
  a.tiles = p->o[0];
  const int64_t k1 = p->k[1], k2 = p->k[2];
  const int off = reg_offset(p);
  if (k1 == 1) {
    /* one row of 1024 outputs a block for short planes */
    a.bx = p->o[1] >= 8 ? 32 : REG_THREADS;
    switch (k2) {
      case 3: return launch_row<3>(d, a, off);
      case 5: return launch_row<5>(d, a, off);
      case 7: return launch_row<7>(d, a, off);
      default: return launch_row<9>(d, a, off);
    }
  }
  a.bx = 32;
  if (k2 == 1) {
    /* columns: 8 rows of 4 outputs a thread */
    switch (k1) {
      case 3: return launch_reg<3, 1, 8, 4, 0>(d, a);
      case 5: return launch_reg<5, 1, 8, 4, 0>(d, a);
      case 7: return launch_reg<7, 1, 8, 4, 0>(d, a);
      case 9: return launch_reg<9, 1, 8, 4, 0>(d, a);
      case 15: return launch_reg<15, 1, 8, 4, 0>(d, a);
      case 31: return launch_reg<31, 1, 8, 4, 0>(d, a);
      default: return launch_reg<33, 1, 8, 4, 0>(d, a);
    }
  }
  switch (k1) {
    case 3: return launch_square<3>(d, a, off);
    case 5: return launch_square<5>(d, a, off);
    default: return launch_square<7>(d, a, off);
  }
}

