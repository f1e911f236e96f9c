/* Filters on the GPU (contracts in core/filter_backend.h): correlation
 * with a mask over an extended input, separable passes and moving sums.
 *
 * CPU reference: src/cpu/cpu_filter.c. Both fold positions past the edges
 * with core/filter_fold.h. float32 sums in float32 with fused
 * multiply-adds (the mask rounded to float32), float64 in double; moving
 * sums run in double.
 *
 * correlate (corr_tile): the mask, reversed under flip and converted to
 * T, goes to constant memory (its rows padded to a multiple of KC). A
 * block of 256 threads computes a tile of TY x TX outputs of one plane:
 * 8 rows of 32 threads, each thread RY = 4 rows of
 * RX = 4 consecutive outputs (TY = 32, TX = 128), or for outputs of few
 * rows one row of 256 threads of RX outputs (TY = 1, TX = 1024). For each
 * plane of the mask the block loads the input tile with its halo into
 * shared memory, straight from memory when the window lies inside the
 * input (interior tiles) and through the fold at the borders; then each
 * thread, for every tile row it needs and every chunk of KC taps (the
 * last one shorter), reads a window of RX + KC - 1 samples with 16-byte
 * loads into registers and adds it, weight by weight, to every one of its
 * RY rows that this tile row reaches. Where the 2-D tiles of a mask
 * take too much shared memory, tiles of 8 rows (RY = 1, TY = 8); a mask
 * too large for constant memory or for those goes through corr_direct
 * (one output a thread, from global memory). float32 masks that
 * filter_reg.cu takes (filter.cuh) go through its register-blocked
 * kernels; the other float32 masks of one plane that are rows of 3, 5, 7,
 * 9, 15, 31 or 33 taps go, for outputs of fewer than ROWS_2D rows (the
 * one-dimensional signals), through filter_line.cu's segments of long
 * rows, else, like squares of 3 to 9, through corr_fixed: corr_tile's 2-D
 * tiles with the taps known at compile time, so that each multiply-add
 * takes its weight from constant memory at a fixed offset, and 8 outputs
 * a thread, so that a window read into registers serves more taps. From
 * FILTER_FFT_MIN_TAPS_F32 or _F64 taps, or when the caller asks for it, a
 * correlation goes through cuFFT (filter_fft.cu).
 *
 * separable: one pass is a correlation with a 1 x k x 1 or 1 x 1 x k
 * mask; two go, for float32 masks on the CPU of one size of 3, 5, 9, 17,
 * 25 or 33 taps (sobel's, Gaussians of sigma up to 4), through
 * filter_strip.cu's strips, which keep the first pass's sums in
 * registers down each column; otherwise through sep_fused when their masks and tiles fit:
 * the input tile with the halos of both passes in shared memory, the
 * first pass (along rows) into a second tile rounded to T (the halo
 * columns too: the second pass reads them), then the second pass as
 * corr_tile's; in constant mode the first pass's result past the edges
 * is cval, as the extension of SciPy's intermediate array. Otherwise two
 * passes through a scratch array.
 *
 * box: moving sums, in filter_box.cu. */
#include <string.h>

#include "filter.cuh"
#include "filter_mask.cuh"
#include "launch.cuh"
#include "scratch.cuh"

#define THREADS 256
#define RX 4
/* The shared memory a tile may take, so that several blocks share an SM. */
#define TILE_SMEM_MAX (96 * 1024)
/* Outputs with fewer rows take the one-row tiles. */
#define ROWS_2D 16

/* The taps a kernel takes in one chunk for mask rows of k: 1, 3 or 5
 * for the rows that short, else 8. */
static inline int taps_for(int64_t k) { return k == 1 ? 1 : k <= 3 ? 3 : k <= 5 ? 5 : 8; }

/* ---- correlate: tiles in shared memory ---- */

struct corr_args {
  const void *in;
  void *out;
  int64_t n0, n1, n2, o0, o1, o2, s0, s1, s2;
  int k0, k1, k2, kp, pitch, mode;
  double cval;
  int64_t tiles_x, tiles_y, tiles;
};

/* tile (rows x pitch) [r][c] = ext(plane)[r0 + r][c0 + c] for r < real
 * and c < width, rows folded by my and columns by mx (a position folded to
 * -1, or a plane given as NULL, reads cval), and zeros elsewhere; straight
 * from memory when the window lies inside the plane. Consecutive threads
 * take consecutive elements, four loads in flight each. */
template <class T>
__device__ void load_tile(T *tile, const T *plane, int64_t n1, int64_t n2, int64_t r0,
                          int64_t c0, int real, int rows, int width, int pitch,
                          ml_filter_mode my, ml_filter_mode mx, T cval) {
  const bool inside = plane && r0 >= 0 && r0 + real <= n1 && c0 >= 0 && c0 + width <= n2;
  const int total = rows * pitch;
  int r = threadIdx.x / pitch, c = threadIdx.x % pitch;
  for (int e = threadIdx.x; e < total; e += 4 * THREADS) {
    T v[4];
#pragma unroll
    for (int u = 0; u < 4; u++) {
      v[u] = T(0);
      if (r < real && c < width) {
        if (inside) {
          v[u] = plane[(r0 + r) * n2 + c0 + c];
        } else {
          const int64_t q1 = plane ? ml_filter_fold(r0 + r, n1, my) : -1;
          const int64_t q2 = ml_filter_fold(c0 + c, n2, mx);
          v[u] = q1 < 0 || q2 < 0 ? cval : plane[q1 * n2 + q2];
        }
      }
      c += THREADS;
      while (c >= pitch) c -= pitch, r++;
    }
#pragma unroll
    for (int u = 0; u < 4; u++)
      if (e + u * THREADS < total) tile[e + u * THREADS] = v[u];
  }
}

/* acc[q] += n <= KC weights from constant element w on (n = KC unless
 * TAIL) times the window win (RX + KC - 1 samples). */
template <class T, int KC, bool TAIL>
__device__ __forceinline__ void add_taps(T *acc, const T *win, int w, int n) {
#pragma unroll
  for (int kk = 0; kk < KC; kk++) {
    if (TAIL && kk >= n) break;
    const T wv = cmask<T>(w + kk);
#pragma unroll
    for (int q = 0; q < RX; q++) acc[q] = fma(wv, win[q + kk], acc[q]);
  }
}

/* The WN samples from row (16-byte aligned) into registers. */
template <class T, int WN>
__device__ __forceinline__ void load_window(T *win, const T *row) {
  using V = vec16<T>;
  const typename V::type *v = reinterpret_cast<const typename V::type *>(row);
#pragma unroll
  for (int i = 0; i < WN / V::n; i++) V::split(v[i], win + i * V::n);
}

/* One chunk of n taps of corr_tile: the window at row (tile row s of
 * the thread) into registers, added to each output row r that it reaches,
 * through mask row s - r, whose weights start at constant element w +
 * (s - r) kp. */
template <class T, int RY, int KC, int WN, bool TAIL>
__device__ __forceinline__ void rows_chunk(T (&acc)[RY][RX], const T *row, int s, int k1,
                                           int w, int kp, int n) {
  T win[WN];
  load_window<T, WN>(win, row);
#pragma unroll
  for (int r = 0; r < RY; r++) {
    const int j1 = s - r;
    if (j1 >= 0 && j1 < k1) add_taps<T, KC, TAIL>(acc[r], win, w + j1 * kp, n);
  }
}

/* One chunk of n taps of sep_fused's first pass: acc[r] (rows row0 + r
 * of column c) += weights j .. j + n - 1 times the column's samples. */
template <class T, int RY, int KC, bool TAIL>
__device__ __forceinline__ void column_chunk(T *acc, const T *tile, int row0, int c, int pitch,
                                             int j, int n) {
  T col[RY + KC - 1];
#pragma unroll
  for (int e = 0; e < RY + KC - 1; e++) col[e] = tile[(row0 + j + e) * pitch + c];
#pragma unroll
  for (int kk = 0; kk < KC; kk++) {
    if (TAIL && kk >= n) break;
    const T wv = cmask<T>(j + kk);
#pragma unroll
    for (int r = 0; r < RY; r++) acc[r] = fma(wv, col[r + kk], acc[r]);
  }
}

/* N outputs from acc to o (row offset x, a multiple of N, of a row of
 * len), 16-byte stores where the row allows. */
template <class T, int N>
__device__ __forceinline__ void store_outputs(T *o, const T *acc, int64_t x, int64_t len) {
  using V = vec16<T>;
  if (x + N <= len && len % V::n == 0) {
#pragma unroll
    for (int i = 0; i < N / V::n; i++)
      reinterpret_cast<typename V::type *>(o + x)[i] = V::join(acc + i * V::n);
    return;
  }
#pragma unroll
  for (int q = 0; q < N; q++)
    if (x + q < len) o[x + q] = acc[q];
}

template <class T, int BY, int RY, int KC>
__global__ void __launch_bounds__(THREADS) corr_tile(corr_args a) {
  constexpr int BX = THREADS / BY, TX = BX * RX, TY = BY * RY;
  constexpr int VE = vec16<T>::n, WN = (RX + KC - 1 + VE - 1) / VE * VE;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T *tile = reinterpret_cast<T *>(smem_raw);
  const int tx = threadIdx.x % BX, ty = threadIdx.x / BX, xw = tx * RX;
  const int rows = TY + a.k1 - 1;
  const T *in = (const T *)a.in;
  const ml_filter_mode mode = (ml_filter_mode)a.mode;
  const T cval = (T)a.cval;
  for (int64_t t = blockIdx.x; t < a.tiles; t += gridDim.x) {
    const int64_t bx = t % a.tiles_x, by = t / a.tiles_x % a.tiles_y, z = t / a.tiles_x / a.tiles_y;
    const int64_t x0 = bx * TX, y0 = by * TY;
    T acc[RY][RX];
#pragma unroll
    for (int r = 0; r < RY; r++)
#pragma unroll
      for (int q = 0; q < RX; q++) acc[r][q] = T(0);
    for (int j0 = 0; j0 < a.k0; j0++) {
      const int64_t q0 = ml_filter_fold(z + j0 + a.s0, a.n0, mode);
      load_tile<T>(tile, q0 < 0 ? nullptr : in + q0 * a.n1 * a.n2, a.n1, a.n2, y0 + a.s1,
                   x0 + a.s2, rows, rows, TX + a.k2 - 1, a.pitch, mode, mode, cval);
      __syncthreads();
      /* tile row ty RY + s feeds output row r through mask row s - r */
      for (int s = 0; s < RY + a.k1 - 1; s++) {
        const T *row = tile + (ty * RY + s) * a.pitch + xw;
        const int w = j0 * a.k1 * a.kp;
        int c = 0;
        for (; c + KC <= a.k2; c += KC)
          rows_chunk<T, RY, KC, WN, false>(acc, row + c, s, a.k1, w + c, a.kp, KC);
        if (c < a.k2)
          rows_chunk<T, RY, KC, WN, true>(acc, row + c, s, a.k1, w + c, a.kp, a.k2 - c);
      }
      __syncthreads();
    }
    T *out = (T *)a.out;
#pragma unroll
    for (int r = 0; r < RY; r++) {
      const int64_t y = y0 + ty * RY + r;
      if (y < a.o1) store_outputs<T, RX>(out + (z * a.o1 + y) * a.o2, acc[r], x0 + xw, a.o2);
    }
  }
}

/* corr_tile for one plane of mask (k0 = 1) of K1 x K2 taps known at
 * compile time: every tap is a constant-memory operand at a fixed offset
 * of its multiply-adds, and a thread computes RY rows of RF consecutive
 * outputs, each tile row it needs read once into registers (a window of
 * RF + K2 - 1 samples) and added to every output row it reaches. The
 * mask in constant memory is unpadded (rows of K2). */
template <class T, int BY, int RY, int RF, int K1, int K2>
__global__ void __launch_bounds__(THREADS) corr_fixed(corr_args a) {
  constexpr int BX = THREADS / BY, TX = BX * RF, TY = BY * RY, ROWS = TY + K1 - 1;
  constexpr int VE = vec16<T>::n, WN = (RF + K2 - 1 + VE - 1) / VE * VE;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T *tile = reinterpret_cast<T *>(smem_raw);
  const int tx = threadIdx.x % BX, ty = threadIdx.x / BX, xw = tx * RF;
  const T *in = (const T *)a.in;
  T *out = (T *)a.out;
  const ml_filter_mode mode = (ml_filter_mode)a.mode;
  const T cval = (T)a.cval;
  for (int64_t t = blockIdx.x; t < a.tiles; t += gridDim.x) {
    const int64_t bx = t % a.tiles_x, by = t / a.tiles_x % a.tiles_y, z = t / a.tiles_x / a.tiles_y;
    const int64_t x0 = bx * TX, y0 = by * TY;
    const int64_t q0 = ml_filter_fold(z + a.s0, a.n0, mode);
    load_tile<T>(tile, q0 < 0 ? nullptr : in + q0 * a.n1 * a.n2, a.n1, a.n2, y0 + a.s1,
                 x0 + a.s2, ROWS, ROWS, TX + K2 - 1, a.pitch, mode, mode, cval);
    __syncthreads();
    T acc[RY][RF];
#pragma unroll
    for (int r = 0; r < RY; r++)
#pragma unroll
      for (int q = 0; q < RF; q++) acc[r][q] = T(0);
    /* tile row ty RY + s feeds output row r through mask row s - r */
#pragma unroll
    for (int s = 0; s < RY + K1 - 1; s++) {
      T win[WN];
      load_window<T, WN>(win, tile + (ty * RY + s) * a.pitch + xw);
#pragma unroll
      for (int r = 0; r < RY; r++) {
        if (s - r < 0 || s - r >= K1) continue;
#pragma unroll
        for (int kk = 0; kk < K2; kk++) {
          const T wv = cmask<T>((s - r) * K2 + kk);
#pragma unroll
          for (int q = 0; q < RF; q++) acc[r][q] = fma(wv, win[q + kk], acc[r][q]);
        }
      }
    }
    __syncthreads();
#pragma unroll
    for (int r = 0; r < RY; r++) {
      const int64_t y = y0 + ty * RY + r;
      if (y < a.o1) store_outputs<T, RF>(out + (z * a.o1 + y) * a.o2, acc[r], x0 + xw, a.o2);
    }
  }
}

/* One output a thread, everything from global memory: masks too large
 * for the tiles. w: the mask as T, reversed under flip, unpadded. */
template <class T>
__global__ void corr_direct(corr_args a, const T *w) {
  const T *in = (const T *)a.in;
  T *out = (T *)a.out;
  const ml_filter_mode mode = (ml_filter_mode)a.mode;
  const int64_t n = a.o0 * a.o1 * a.o2;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    const int64_t x = i % a.o2, y = i / a.o2 % a.o1, z = i / a.o2 / a.o1;
    T acc = T(0);
    for (int j0 = 0; j0 < a.k0; j0++) {
      const int64_t q0 = ml_filter_fold(z + j0 + a.s0, a.n0, mode);
      for (int j1 = 0; j1 < a.k1; j1++) {
        const int64_t q1 = q0 < 0 ? -1 : ml_filter_fold(y + j1 + a.s1, a.n1, mode);
        const T *wr = w + ((int64_t)j0 * a.k1 + j1) * a.k2;
        for (int j2 = 0; j2 < a.k2; j2++) {
          const int64_t q2 = ml_filter_fold(x + j2 + a.s2, a.n2, mode);
          const T v = q1 < 0 || q2 < 0 ? (T)a.cval : in[(q0 * a.n1 + q1) * a.n2 + q2];
          acc = fma(wr[j2], v, acc);
        }
      }
    }
    out[i] = acc;
  }
}

static corr_args corr_args_of(const filter_plan *p, int64_t kp, int64_t pitch) {
  corr_args a;
  a.in = p->in;
  a.out = p->out;
  a.n0 = p->n[0], a.n1 = p->n[1], a.n2 = p->n[2];
  a.o0 = p->o[0], a.o1 = p->o[1], a.o2 = p->o[2];
  a.s0 = p->start[0], a.s1 = p->start[1], a.s2 = p->start[2];
  a.k0 = (int)p->k[0], a.k1 = (int)p->k[1], a.k2 = (int)p->k[2];
  a.kp = (int)kp, a.pitch = (int)pitch, a.mode = (int)p->mode;
  a.cval = p->cval;
  a.tiles_x = a.tiles_y = a.tiles = 0;
  return a;
}

template <class T, int BY, int RY, int KC>
static int launch_tile(cuda_dev *d, corr_args &a) {
  constexpr int TX = THREADS / BY * RX, TY = BY * RY;
  a.tiles_x = (a.o2 + TX - 1) / TX;
  a.tiles_y = (a.o1 + TY - 1) / TY;
  a.tiles = a.tiles_x * a.tiles_y * a.o0;
  size_t smem = (size_t)(TY + a.k1 - 1) * a.pitch * sizeof(T);
  return cuda_launch<corr_tile<T, BY, RY, KC>>(d, blocks_for(a.tiles, 1), THREADS, smem,
                                                "filter", a);
}

template <class T, int BY, int RY>
static int launch_tile_kc(cuda_dev *d, corr_args &a, int kc) {
  switch (kc) {
    case 1: return launch_tile<T, BY, RY, 1>(d, a);
    case 3: return launch_tile<T, BY, RY, 3>(d, a);
    case 5: return launch_tile<T, BY, RY, 5>(d, a);
    default: return launch_tile<T, BY, RY, 8>(d, a);
  }
}

template <class T, int BY, int RY, int RF, int K1, int K2>
static int launch_fixed(cuda_dev *d, corr_args &a) {
  constexpr int TX = THREADS / BY * RF, TY = BY * RY, VE = 16 / sizeof(T);
  a.pitch = (int)round_up(TX + K2 + VE, VE);
  a.tiles_x = (a.o2 + TX - 1) / TX;
  a.tiles_y = (a.o1 + TY - 1) / TY;
  a.tiles = a.tiles_x * a.tiles_y * a.o0;
  size_t smem = (size_t)(TY + K1 - 1) * a.pitch * sizeof(T);
  return cuda_launch<corr_fixed<T, BY, RY, RF, K1, K2>>(d, blocks_for(a.tiles, 1), THREADS,
                                                         smem, "filter", a);
}

/* The masks of corr_fixed (float32, one plane of mask): rows of a line's
 * taps (filter_line.cu's for outputs of fewer than ROWS_2D rows, else 2-D
 * tiles), and square masks of 3 to 9 taps a side on 2-D tiles (8 rows of
 * 32 threads, 4 rows of 8 outputs each). */
static bool line_taps(int64_t k) {
  return k == 3 || k == 5 || k == 7 || k == 9 || k == 15 || k == 31 || k == 33;
}

static bool has_fixed(const filter_plan *p) {
  const int64_t k1 = p->k[1], k2 = p->k[2];
  if (p->k[0] != 1) return false;
  if (k1 == 1) return line_taps(k2);
  return p->o[1] >= ROWS_2D && k1 == k2 && k1 % 2 == 1 && k1 >= 3 && k1 <= 9;
}

/* corr_fixed for rows of k taps (line_taps) on 2-D tiles. */
static int launch_row_fixed(cuda_dev *d, corr_args &a, int64_t k) {
  switch (k) {
    case 3: return launch_fixed<float, 8, 4, 8, 1, 3>(d, a);
    case 5: return launch_fixed<float, 8, 4, 8, 1, 5>(d, a);
    case 7: return launch_fixed<float, 8, 4, 8, 1, 7>(d, a);
    case 9: return launch_fixed<float, 8, 4, 8, 1, 9>(d, a);
    case 15: return launch_fixed<float, 8, 4, 8, 1, 15>(d, a);
    case 31: return launch_fixed<float, 8, 4, 8, 1, 31>(d, a);
    default: return launch_fixed<float, 8, 4, 8, 1, 33>(d, a);
  }
}

/* corr_fixed for p (has_fixed; a row only for outputs of ROWS_2D rows or
 * more), its mask in constant memory. */
static int correlate_fixed(cuda_dev *d, corr_args &a, const filter_plan *p) {
  if (p->k[1] == 1) return launch_row_fixed(d, a, p->k[2]);
  switch (p->k[1]) {
    case 3: return launch_fixed<float, 8, 4, 8, 3, 3>(d, a);
    case 5: return launch_fixed<float, 8, 4, 8, 5, 5>(d, a);
    case 7: return launch_fixed<float, 8, 4, 8, 7, 7>(d, a);
    default: return launch_fixed<float, 8, 4, 8, 9, 9>(d, a);
  }
}

/* The shared memory of corr_tile's tile of TY rows for p (rows of
 * pitch): TX = 128 outputs a row on 2-D tiles, 1024 on one-row tiles. */
template <class T>
static void tile_shape(const filter_plan *p, int64_t kp, int64_t TY, int64_t *pitch,
                       size_t *smem) {
  const int64_t TX = TY > 1 ? 32 * RX : THREADS * RX, ve = 16 / sizeof(T);
  *pitch = round_up(TX + kp + ve, ve);
  *smem = (size_t)((TY + p->k[1] - 1) * *pitch) * sizeof(T);
}

/* The correlation of p: FFTs when p->fft asks for them or, left to us,
 * from FILTER_FFT_MIN_TAPS_F32 or _F64 taps; else corr_tile when the
 * mask fits constant memory and the tile shared memory, else
 * corr_direct. */
template <class T>
static int correlate_plan(cuda_dev *d, const filter_plan *p) {
  const int64_t taps = p->k[0] * p->k[1] * p->k[2];
  const int64_t fft_from =
      sizeof(T) == 4 ? FILTER_FFT_MIN_TAPS_F32 : FILTER_FFT_MIN_TAPS_F64;
  if (p->o[0] * p->o[1] * p->o[2] == 0) return ML_OK;
  if (p->fft == 1 || (p->fft < 0 && taps >= fft_from)) {
    int rc = filter_fft(d, p, sizeof(T) == 4);
    if (rc != ML_ENOMEM) return rc;
  }
  if constexpr (sizeof(T) == 4) {
    if (filter_reg_fits(p)) return filter_reg(d, p);
    if (has_fixed(p) && p->k[1] == 1 && p->o[1] < ROWS_2D) return filter_line(d, p);
    if (has_fixed(p)) {
      cuda_scratch mask;
      corr_args a = corr_args_of(p, p->k[2], 0);
      int rc = stage_mask<T>(d, p->mask, p->k, p->k[2], p->flip, mask, true, 0);
      return rc ? rc : correlate_fixed(d, a, p);
    }
  }
  const int kc = taps_for(p->k[2]);
  const int64_t kp = round_up(p->k[2], kc);
  /* 2-D tiles of 8 rows (one output row a thread) where those of 32
   * take too much shared memory */
  const bool two_d = p->o[1] >= ROWS_2D;
  int64_t pitch;
  size_t smem;
  tile_shape<T>(p, kp, two_d ? 32 : 1, &pitch, &smem);
  const bool thin = two_d && smem > TILE_SMEM_MAX;
  if (thin) tile_shape<T>(p, kp, 8, &pitch, &smem);
  const bool fits = smem <= TILE_SMEM_MAX &&
                    p->k[0] * p->k[1] * kp * (int64_t)sizeof(T) <= MASK_CONST_BYTES;
  cuda_scratch mask;
  corr_args a = corr_args_of(p, fits ? kp : p->k[2], pitch);
  int rc = stage_mask<T>(d, p->mask, p->k, a.kp, p->flip, mask, fits, 0);
  if (rc) return rc;
  if (fits && thin) return launch_tile_kc<T, 8, 1>(d, a, kc);
  if (fits && two_d) return launch_tile_kc<T, 8, 4>(d, a, kc);
  if (fits) return launch_tile_kc<T, 1, 1>(d, a, kc);
  const int64_t n = p->o[0] * p->o[1] * p->o[2];
  return cuda_launch<corr_direct<T>>(d, grid_for(n, THREADS, d), THREADS, 0, "filter", a,
                                     mask.as<const T>());
}

static filter_plan plan_of(const ml_array *out, const ml_array *in) {
  filter_plan p;
  memset(&p, 0, sizeof p);
  p.in = ml_array_data(in);
  p.out = ml_array_data(out);
  for (int a = 0; a < 3; a++) {
    p.n[a] = in->shape[a];
    p.o[a] = out->shape[a];
    p.k[a] = 1;
  }
  p.fft = -1;
  return p;
}

static int filter_correlate(const ml_filter_corr *f) {
  cuda_dev *d;
  int rc = cuda_enter(array_device(f->in), &d);
  if (rc) return rc;
  filter_plan p = plan_of(f->out, f->in);
  p.mask = (const double *)ml_array_data(f->mask);
  p.mode = f->mode;
  p.cval = f->cval;
  p.flip = f->flip;
  p.fft = f->fft;
  for (int a = 0; a < 3; a++) {
    p.k[a] = f->mask->shape[a];
    p.start[a] = f->start[a];
  }
  return f->in->dtype == ML_FLOAT32 ? correlate_plan<float>(d, &p)
                                    : correlate_plan<double>(d, &p);
}

/* ---- separable: two passes in one kernel ---- */

struct sep_args {
  const void *in;
  void *out;
  int64_t n0, n1, n2, sy, sx;
  int ky, kyp, kx, kxp, pitch, mode_y, mode_x;
  double cval;
  int64_t tiles_x, tiles_y, tiles;
};

/* A block takes 32 x 128 outputs as corr_tile's 2-D tiles. The weights of
 * the first pass are constant elements 0 .. kyp - 1, the second's follow. */
template <class T, int KC>
__global__ void __launch_bounds__(THREADS) sep_fused(sep_args a) {
  constexpr int BX = 32, BY = 8, RY = 4, TX = BX * RX, TY = BY * RY;
  constexpr int VE = vec16<T>::n, WN = (RX + KC - 1 + VE - 1) / VE * VE;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  const int rows = TY + a.kyp - 1, width = TX + a.kx - 1;
  T *tile = reinterpret_cast<T *>(smem_raw);
  T *mid = tile + (int64_t)rows * a.pitch;
  const T *in = (const T *)a.in;
  T *out = (T *)a.out;
  const T cval = (T)a.cval;
  const ml_filter_mode my = (ml_filter_mode)a.mode_y, mx = (ml_filter_mode)a.mode_x;
  const int tx = threadIdx.x % BX, ty = threadIdx.x / BX, xw = tx * RX, lane = tx;
  for (int64_t t = blockIdx.x; t < a.tiles; t += gridDim.x) {
    const int64_t bx = t % a.tiles_x, by = t / a.tiles_x % a.tiles_y, z = t / a.tiles_x / a.tiles_y;
    const int64_t x0 = bx * TX + a.sx, y0 = by * TY + a.sy;
    const T *plane = in + z * a.n1 * a.n2;
    /* the input tile; the rows of the padding taps are zeros */
    load_tile<T>(tile, plane, a.n1, a.n2, y0, x0, TY + a.ky - 1, rows, width, a.pitch, my, mx,
                 cval);
    __syncthreads();
    /* first pass, along rows: column c of mid, rows ty RY .. + RY - 1 */
    for (int c = lane; c < a.pitch; c += 32) {
      T acc[RY];
#pragma unroll
      for (int r = 0; r < RY; r++) acc[r] = T(0);
      if (c < width) {
        int j = 0;
        for (; j + KC <= a.ky; j += KC)
          column_chunk<T, RY, KC, false>(acc, tile, ty * RY, c, a.pitch, j, KC);
        if (j < a.ky) column_chunk<T, RY, KC, true>(acc, tile, ty * RY, c, a.pitch, j, a.ky - j);
        /* constant mode: the first pass's result past the edges is cval */
        if (mx == ML_FILTER_CONSTANT && (x0 + c < 0 || x0 + c >= a.n2))
#pragma unroll
          for (int r = 0; r < RY; r++) acc[r] = cval;
      }
#pragma unroll
      for (int r = 0; r < RY; r++) mid[(ty * RY + r) * a.pitch + c] = acc[r];
    }
    __syncthreads();
    /* second pass, along columns, as corr_tile's with one mask row */
#pragma unroll
    for (int r = 0; r < RY; r++) {
      T acc[RX];
#pragma unroll
      for (int q = 0; q < RX; q++) acc[q] = T(0);
      const T *row = mid + (ty * RY + r) * a.pitch + xw;
      int c = 0;
      for (; c + KC <= a.kx; c += KC) {
        T win[WN];
        load_window<T, WN>(win, row + c);
        add_taps<T, KC, false>(acc, win, a.kyp + c, KC);
      }
      if (c < a.kx) {
        T win[WN];
        load_window<T, WN>(win, row + c);
        add_taps<T, KC, true>(acc, win, a.kyp + c, a.kx - c);
      }
      const int64_t y = by * TY + ty * RY + r;
      if (y < a.n1) store_outputs<T, RX>(out + (z * a.n1 + y) * a.n2, acc, bx * TX + xw, a.n2);
    }
  }
}

template <class T>
static int launch_fused(cuda_dev *d, sep_args &a, int kc, size_t smem) {
  const unsigned g = blocks_for(a.tiles, 1);
  switch (kc) {
    case 1: return cuda_launch<sep_fused<T, 1>>(d, g, THREADS, smem, "filter", a);
    case 3: return cuda_launch<sep_fused<T, 3>>(d, g, THREADS, smem, "filter", a);
    case 5: return cuda_launch<sep_fused<T, 5>>(d, g, THREADS, smem, "filter", a);
    default: return cuda_launch<sep_fused<T, 8>>(d, g, THREADS, smem, "filter", a);
  }
}

/* Pass i of f alone, with its mask at mask on the device, from in to out
 * (both f's shape). */
template <class T>
static int sep_pass(cuda_dev *d, const ml_filter_sep *f, int i, const double *mask,
                    const void *in, void *out) {
  filter_plan p = plan_of(f->out, f->in);
  p.in = in;
  p.out = out;
  p.mask = mask;
  p.k[1 + i] = f->mask[i]->shape[0];
  p.start[1 + i] = f->start[i];
  p.mode = f->mode[i];
  p.cval = f->cval;
  p.flip = f->flip;
  return correlate_plan<T>(d, &p);
}

/* Two passes in filter_strip.cu's kernel when it takes them (float32,
 * masks on the CPU of one size it knows), else in sep_fused when its
 * masks fit constant memory and its tiles shared memory, else one after
 * the other through scratch; a mask on the CPU is copied up first. */
template <class T>
static int separable_plan(cuda_dev *d, const ml_filter_sep *f) {
  const void *in = ml_array_data(f->in);
  void *out = ml_array_data(f->out);
  if (ml_array_numel(f->out) == 0) return ML_OK;
  if (filter_strip_fits(f)) return filter_strip(d, f);
  cuda_scratch up[2];
  const double *mask[2] = {NULL, NULL};
  for (int i = 0; i < 2; i++) {
    const int rc = f->mask[i] ? mask_on_device(d, f->mask[i], up[i], &mask[i]) : ML_OK;
    if (rc) return rc;
  }
  const int one = f->mask[0] ? 0 : 1;
  if (!f->mask[0] || !f->mask[1]) return sep_pass<T>(d, f, one, mask[one], in, out);
  const int64_t ky = f->mask[0]->shape[0], kx = f->mask[1]->shape[0];
  const int kc = taps_for(ky > kx ? ky : kx);
  const int64_t kyp = round_up(ky, kc), kxp = round_up(kx, kc), ve = 16 / sizeof(T);
  const int64_t pitch = round_up(32 * RX + kxp + ve, ve);
  const size_t smem = (size_t)((32 + kyp - 1 + 32) * pitch) * sizeof(T);
  if (smem > TILE_SMEM_MAX || (kyp + kxp) * (int64_t)sizeof(T) > MASK_CONST_BYTES) {
    cuda_scratch tmp;
    int rc = tmp.get(d->index, ml_array_nbytes(f->out), "filter");
    if (!rc) rc = sep_pass<T>(d, f, 0, mask[0], in, tmp.ptr);
    if (!rc) rc = sep_pass<T>(d, f, 1, mask[1], tmp.ptr, out);
    return rc;
  }
  const int64_t ky3[3] = {1, 1, ky}, kx3[3] = {1, 1, kx};
  cuda_scratch my, mx;
  int rc = stage_mask<T>(d, mask[0], ky3, kyp, f->flip, my, true, 0);
  if (!rc) rc = stage_mask<T>(d, mask[1], kx3, kxp, f->flip, mx, true, kyp);
  if (rc) return rc;
  sep_args a;
  a.in = in;
  a.out = out;
  a.n0 = f->in->shape[0], a.n1 = f->in->shape[1], a.n2 = f->in->shape[2];
  a.sy = f->start[0], a.sx = f->start[1];
  a.ky = (int)ky, a.kyp = (int)kyp, a.kx = (int)kx, a.kxp = (int)kxp, a.pitch = (int)pitch;
  a.mode_y = (int)f->mode[0], a.mode_x = (int)f->mode[1];
  a.cval = f->cval;
  a.tiles_x = (a.n2 + 32 * RX - 1) / (32 * RX);
  a.tiles_y = (a.n1 + 31) / 32;
  a.tiles = a.tiles_x * a.tiles_y * a.n0;
  return launch_fused<T>(d, a, kc, smem);
}

static int filter_separable(const ml_filter_sep *f) {
  cuda_dev *d;
  int rc = cuda_enter(array_device(f->in), &d);
  if (rc) return rc;
  return f->in->dtype == ML_FLOAT32 ? separable_plan<float>(d, f)
                                    : separable_plan<double>(d, f);
}

const ml_filter_backend cuda_filter_backend = {filter_correlate, filter_separable, cuda_filter_box};
