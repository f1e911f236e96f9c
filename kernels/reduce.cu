/* Reductions along the last dimension, and cumulative sums and products.
 *
 * CPU reference: src/cpu/cpu_reduce.c and src/cpu/cpu_cumsum.c. Semantics
 * follow them: float inputs accumulate in double (sums, products,
 * centers), integer sums and products in int64 with wrap-around; extremes
 * keep the first occurrence and a NaN counts as the extreme; VAR and STD
 * are two-pass (the mean, then squared deviations) with NaN when
 * n - ddof <= 0; LOGSUMEXP shifts by the row's maximum. No floating-point
 * atomics anywhere: every result is a fixed tree of partial results, so it
 * is the same bits on every run (and on every GPU: no launch shape depends
 * on the device).
 *
 * Shapes. `rows` outputs, each reducing `len` input elements `s` apart.
 * A block of 256 threads is RX groups of RY threads; each group reduces a
 * row (RY lanes interleaved along the row, then a tree in shared memory).
 * - inner (the row is contiguous, or nothing better): RY lanes are
 *   consecutive threads, RY = the power of two <= min(len / 4V, 256) (at
 *   least 1), V the elements of a 16-byte load, so that every lane has
 *   four loads or more before the tree: a block per long row, a warp or
 *   less per medium row, several rows per warp for short ones. A
 *   contiguous row is read with 16-byte loads.
 * - outer (rows are adjacent in memory, the reduced dimension strided, as
 *   in a column sum): consecutive threads take consecutive rows (RX = 32,
 *   RY = 8), so every load instruction reads consecutive addresses; with
 *   OUTER_ALONE rows or more, enough to fill the GPU, a thread reduces a
 *   row alone (RX = 256, RY = 1) and no tree runs: the mixture's E-step
 *   norms down the columns of 10 x 49 x 60000 doubles, 16 of them with
 *   their squares and sums, in 1.7 ms on an H200 instead of 2.4.
 * - short (contiguous rows of SHORT_BYTES or less, one after another in
 *   memory): a block copies the span of its rows into shared memory with
 *   16-byte loads, rows an odd number of words apart, then each thread
 *   reduces one row alone, in index order. The inner path read such rows
 *   a few 16-byte pieces a row and reduced them by a tree: 16 norms over
 *   the last dimension of 60000 x 10 x 51 doubles, with their squares and
 *   sums, took 3.1 ms on an H200, and 1.8 ms this way.
 * Long rows are cut into chunks reduced by separate blocks (the grid's y),
 * whose partial results a second pass folds, in a fixed order, per row. */
#include <cub/block/block_scan.cuh>

#include <type_traits>

#include "map.cuh"
#include "scan.cuh"
#include "scratch.cuh"

#define BLOCK 256
#define MAX_CHUNKS 1024
#define TARGET_BLOCKS 2048
#define OUTER_ALONE (1 << 18)
#define SHORT_BYTES 1024
#define SHORT_THREADS 128
#define SHORT_SMEM 49152
#define SHORT_LOADS 8

/* ---- reducers ----
 * Each has In (element type), Acc (partial result), Out, and
 * init(), load(x, j, center), combine(a, b), finish(acc, len, center).
 * combine must be associative and commutative: the tree's order is fixed
 * but not the index order. */

enum xform { X_ID, X_SQ, X_ABS, X_EXP };

/* Float sums in double: SUM MEAN VAR STD NORM1 NORM2 LOGSUMEXP (and MEAN
 * into the double centers of VAR and STD). */
template <class T, class O> struct FSum {
  using In = T;
  using Acc = double;
  using Out = O;
  ml_redop op;
  int x;
  int64_t ddof;
  __device__ __forceinline__ Acc init() const { return 0; }
  __device__ __forceinline__ Acc load(T v, int64_t, double c) const {
    double d = v;
    switch (x) {
      case X_SQ: d -= c; return d * d;
      case X_ABS: return fabs(d);
      case X_EXP: return exp(d - c);
      default: return d;
    }
  }
  __device__ __forceinline__ Acc combine(Acc a, Acc b) const { return a + b; }
  __device__ __forceinline__ Out finish(Acc s, int64_t len, double c) const {
    double n = (double)len, dof = n - (double)ddof;
    switch (op) {
      case ML_MEAN: return (Out)(s / n);
      case ML_VAR: return (Out)(dof > 0 ? s / dof : NAN);
      case ML_STD: return (Out)(dof > 0 ? sqrt(s / dof) : NAN);
      case ML_NORM2: return (Out)sqrt(s);
      case ML_LOGSUMEXP: return (Out)(isfinite(c) ? c + log(s) : c);
      default: return (Out)s; /* SUM, NORM1 */
    }
  }
};

template <class T> struct FProd {
  using In = T;
  using Acc = double;
  using Out = T;
  __device__ __forceinline__ Acc init() const { return 1; }
  __device__ __forceinline__ Acc load(T v, int64_t, double) const { return v; }
  __device__ __forceinline__ Acc combine(Acc a, Acc b) const { return a * b; }
  __device__ __forceinline__ Out finish(Acc s, int64_t, double) const { return (Out)s; }
};

/* Integer SUM and PROD in int64, wrapping. */
template <class T> struct ISum {
  using In = T;
  using Acc = uint64_t;
  using Out = int64_t;
  int prod;
  __device__ __forceinline__ Acc init() const { return prod ? 1 : 0; }
  __device__ __forceinline__ Acc load(T v, int64_t, double) const {
    return (uint64_t)(int64_t)v;
  }
  __device__ __forceinline__ Acc combine(Acc a, Acc b) const {
    return prod ? a * b : a + b;
  }
  __device__ __forceinline__ Out finish(Acc s, int64_t, double) const { return (Out)s; }
};

/* ANY and ALL: counts the nonzero elements (NaN is nonzero). */
template <class T> struct Count {
  using In = T;
  using Acc = int64_t;
  using Out = uint8_t;
  int all;
  __device__ __forceinline__ Acc init() const { return 0; }
  __device__ __forceinline__ Acc load(T v, int64_t, double) const { return v != 0; }
  __device__ __forceinline__ Acc combine(Acc a, Acc b) const { return a + b; }
  __device__ __forceinline__ Out finish(Acc s, int64_t len, double) const {
    return all ? s == len : s > 0;
  }
};

/* An extreme and its index (at == INT64_MAX: none yet). */
template <class V> struct Extreme {
  V v;
  int64_t at;
};

/* MIN MAX ARGMIN ARGMAX NORMINF (|x|), and MAX into the double centers of
 * LOGSUMEXP. The order: a NaN beats every number, then the larger (MAX)
 * or smaller value, then the lower index; so the result is the first
 * occurrence whatever the order of combination. */
template <class T, class O> struct Ext {
  using In = T;
  using V = typename std::conditional<std::is_integral<T>::value, int64_t, double>::type;
  using Acc = Extreme<V>;
  using Out = O;
  int min;   /* MIN, ARGMIN */
  int arg;   /* result: the 1-based index */
  int mag;   /* NORMINF: compare |x| */
  __device__ __forceinline__ Acc init() const {
    Acc a;
    if constexpr (std::is_integral<T>::value)
      a.v = min ? INT64_MAX : INT64_MIN;
    else
      a.v = mag ? 0 : min ? INFINITY : -INFINITY; /* NORMINF of nothing: 0 */
    a.at = INT64_MAX;
    return a;
  }
  __device__ __forceinline__ Acc load(T x, int64_t j, double) const {
    Acc a;
    a.v = (V)x;
    if constexpr (!std::is_integral<T>::value)
      if (mag) a.v = fabs(a.v);
    a.at = j;
    return a;
  }
  __device__ __forceinline__ bool better(const Acc &a, const Acc &b) const {
    if constexpr (!std::is_integral<T>::value) {
      bool an = a.v != a.v, bn = b.v != b.v;
      if (an || bn) return an && (!bn || a.at < b.at);
    }
    if (a.v != b.v) return min ? a.v < b.v : a.v > b.v;
    return a.at < b.at;
  }
  __device__ __forceinline__ Acc combine(Acc a, Acc b) const {
    return better(b, a) ? b : a;
  }
  __device__ __forceinline__ Out finish(Acc a, int64_t, double) const {
    if (arg) return (Out)(a.at + 1);
    return (Out)a.v;
  }
};

/* The second pass over the chunks' partial results of R. */
template <class R> struct Fold {
  using In = typename R::Acc;
  using Acc = typename R::Acc;
  using Out = typename R::Out;
  R r;
  int64_t len; /* of the original rows */
  __device__ __forceinline__ Acc init() const { return r.init(); }
  __device__ __forceinline__ Acc load(In v, int64_t, double) const { return v; }
  __device__ __forceinline__ Acc combine(Acc a, Acc b) const { return r.combine(a, b); }
  __device__ __forceinline__ Out finish(Acc a, int64_t, double c) const {
    return r.finish(a, len, c);
  }
};

/* ---- the kernel ---- */

typedef struct {
  int rx, ry, jfast;
} group_shape;

/* Reduces chunk blockIdx.y of rows blockIdx.x * RX + [0, RX) (and further
 * rows, grid-stride): into out when there is one chunk, else into
 * part[row * nchunk + chunk]. center: per-row doubles (or NULL: 0). */
template <class R>
__global__ void __launch_bounds__(BLOCK)
    reduce_rows(Iter<2> rows, int64_t nrows, const typename R::In *in, int64_t s,
                int64_t len, typename R::Out *out, typename R::Acc *part,
                int64_t chunk, int nchunk, const double *center, group_shape g,
                R r) {
  using In = typename R::In;
  using Acc = typename R::Acc;
  constexpr int V = sizeof(In) <= 16 ? 16 / (int)sizeof(In) : 1;
  __shared__ Acc buf[BLOCK];
  const int t = threadIdx.x;
  const int tx = g.jfast ? t / g.ry : t % g.rx, ty = g.jfast ? t % g.ry : t / g.rx;
  auto slot = [&](int y) { return g.jfast ? tx * g.ry + y : y * g.rx + tx; };
  const int c = blockIdx.y;
  const int64_t jb = (int64_t)c * chunk, je = jb + chunk < len ? jb + chunk : len;
  for (int64_t rb = blockIdx.x; rb * g.rx < nrows; rb += gridDim.x) {
    const int64_t row = rb * g.rx + tx;
    Acc acc = r.init();
    double ctr = 0;
    int64_t ooff = 0;
    if (row < nrows) {
      int64_t off[2];
      iter_offsets<2, uint64_t>(rows, (uint64_t)row, off);
      ooff = off[0];
      const In *p = in + off[1];
      if (center) ctr = center[row];
      if (s == 1 && g.jfast && V > 1) {
        const In *q = p + jb;
        int64_t cnt = je - jb, head = (16 - ((uintptr_t)q & 15)) % 16 / sizeof(In);
        if (head > cnt) head = cnt;
        for (int64_t j = ty; j < head; j += g.ry)
          acc = r.combine(acc, r.load(q[j], jb + j, ctr));
        int64_t nv = (cnt - head) / V, v = ty;
        const Vec<In, V> *qv = reinterpret_cast<const Vec<In, V> *>(q + head);
        for (; v + g.ry < nv; v += 2 * g.ry) { /* two loads in flight */
          Vec<In, V> x = qv[v], y = qv[v + g.ry];
#pragma unroll
          for (int e = 0; e < V; e++)
            acc = r.combine(acc, r.load(x.v[e], jb + head + v * V + e, ctr));
#pragma unroll
          for (int e = 0; e < V; e++)
            acc = r.combine(acc, r.load(y.v[e], jb + head + (v + g.ry) * V + e, ctr));
        }
        for (; v < nv; v += g.ry) {
          Vec<In, V> x = qv[v];
#pragma unroll
          for (int e = 0; e < V; e++)
            acc = r.combine(acc, r.load(x.v[e], jb + head + v * V + e, ctr));
        }
        for (int64_t j = head + nv * V + ty; j < cnt; j += g.ry)
          acc = r.combine(acc, r.load(q[j], jb + j, ctr));
      } else {
        int64_t j = jb + ty;
        for (; j + 3 * g.ry < je; j += 4 * g.ry) { /* four loads in flight */
          In x0 = p[j * s], x1 = p[(j + g.ry) * s], x2 = p[(j + 2 * g.ry) * s],
             x3 = p[(j + 3 * g.ry) * s];
          acc = r.combine(acc, r.load(x0, j, ctr));
          acc = r.combine(acc, r.load(x1, j + g.ry, ctr));
          acc = r.combine(acc, r.load(x2, j + 2 * g.ry, ctr));
          acc = r.combine(acc, r.load(x3, j + 3 * g.ry, ctr));
        }
        for (; j < je; j += g.ry) acc = r.combine(acc, r.load(p[j * s], j, ctr));
      }
    }
    buf[t] = acc;
    __syncthreads();
    for (int half = g.ry / 2; half > 0; half /= 2) {
      if (ty < half) buf[slot(ty)] = r.combine(buf[slot(ty)], buf[slot(ty + half)]);
      __syncthreads();
    }
    if (ty == 0 && row < nrows) {
      if (part)
        part[row * nchunk + c] = buf[slot(0)];
      else
        out[ooff] = r.finish(buf[slot(0)], len, ctr);
    }
    __syncthreads();
  }
}

/* The short path: rows r0 .. r0 + nr - 1 of a block are the span
 * in + r0 len .. of nr len elements. Row t of the span goes to buf[t ps ..]
 * (ps = len, or len + 1 to make it odd for 4- and 8-byte types, so that
 * the threads, a row each, read distinct banks); fl divides by len. */
template <class R>
__global__ void __launch_bounds__(SHORT_THREADS)
    reduce_short(Iter<2> rows, int64_t nrows, const typename R::In *in, int len, int ps,
                 FastDiv fl, int per_block, typename R::Out *out, const double *center, R r) {
  using In = typename R::In;
  constexpr int V = 16 / (int)sizeof(In);
  extern __shared__ __align__(16) unsigned char short_smem[];
  In *buf = reinterpret_cast<In *>(short_smem);
  const int t = threadIdx.x;
  auto put = [&](int i, In x) { /* span element i */
    const int row = len == 1 ? i : (int)fl.div((uint32_t)i);
    buf[row * ps + i - row * len] = x;
  };
  for (int64_t r0 = (int64_t)blockIdx.x * per_block; r0 < nrows;
       r0 += (int64_t)gridDim.x * per_block) {
    const int nr = nrows - r0 < per_block ? (int)(nrows - r0) : per_block, cnt = nr * len;
    const In *src = in + r0 * len;
    int head = (int)((16 - ((uintptr_t)src & 15)) % 16 / sizeof(In));
    if (head > cnt) head = cnt;
    const int nv = (cnt - head) / V;
    const Vec<In, V> *sv = reinterpret_cast<const Vec<In, V> *>(src + head);
    /* SHORT_LOADS loads a thread in flight before their stores */
    for (int v0 = t; v0 < nv; v0 += SHORT_LOADS * SHORT_THREADS) {
      Vec<In, V> x[SHORT_LOADS];
#pragma unroll
      for (int u = 0; u < SHORT_LOADS; u++)
        if (v0 + u * SHORT_THREADS < nv) x[u] = sv[v0 + u * SHORT_THREADS];
#pragma unroll
      for (int u = 0; u < SHORT_LOADS; u++)
        if (v0 + u * SHORT_THREADS < nv)
#pragma unroll
          for (int e = 0; e < V; e++) put(head + (v0 + u * SHORT_THREADS) * V + e, x[u].v[e]);
    }
    if (t < head) put(t, src[t]);
    for (int i = head + nv * V + t; i < cnt; i += SHORT_THREADS) put(i, src[i]);
    __syncthreads();
    if (t < nr) {
      const int64_t row = r0 + t;
      int64_t off[2];
      iter_offsets<2, uint64_t>(rows, (uint64_t)row, off);
      const double ctr = center ? center[row] : 0;
      typename R::Acc acc = r.init();
      for (int j = 0; j < len; j++) acc = r.combine(acc, r.load(buf[t * ps + j], j, ctr));
      out[off[0]] = r.finish(acc, len, ctr);
    }
    __syncthreads();
  }
}

/* ---- launching ---- */

static int pow2_floor(int64_t n, int cap) {
  int p = 1;
  while (p * 2 <= n && p * 2 <= cap) p *= 2;
  return p;
}

/* A reduction: nrows rows (iterated by `rows`: stride[0] into out,
 * stride[1] into in) of len elements s apart. */
typedef struct {
  Iter<2> rows;
  int64_t nrows, len, s;
} reduction;

/* rows's output strides replaced by those of a contiguous array of the
 * rows (in the order of the row index). */
static Iter<2> packed_rows(const Iter<2> &rows, int64_t per_row) {
  Iter<2> p = rows;
  int64_t step = per_row;
  for (int d = p.ndim - 1; d >= 0; d--) {
    p.stride[0][d] = step;
    step *= p.size[d];
  }
  return p;
}

/* Whether row i of `rows` starts at input element i * len. */
static bool rows_packed(const Iter<2> &rows, int64_t len) {
  const Iter<2> p = packed_rows(rows, len);
  for (int k = 0; k < rows.ndim; k++)
    if (rows.stride[1][k] != p.stride[0][k]) return false;
  return true;
}

/* Whether rows of elements of `size` bytes take the short path (see the
 * top). */
static bool takes_short(const reduction &rd, const Iter<2> &rows, int64_t size) {
  return rd.s == 1 && rd.len >= 1 && rd.len * size <= SHORT_BYTES && rows_packed(rows, rd.len);
}

template <class R>
static int launch_short(cuda_dev *d, const reduction &rd, const Iter<2> &rows,
                        const typename R::In *in, typename R::Out *out, const double *center,
                        R r, const char *op) {
  const int64_t size = sizeof(typename R::In);
  const int len = (int)rd.len, ps = size >= 4 && len % 2 == 0 ? len + 1 : len;
  const int fit = (int)(SHORT_SMEM / (ps * size));
  const int per_block = fit < SHORT_THREADS ? fit : SHORT_THREADS;
  return cuda_launch<reduce_short<R>>(d, dim3(blocks_for(rd.nrows, per_block)), SHORT_THREADS,
                                      (size_t)per_block * ps * size, op, rows, rd.nrows, in, len,
                                      ps, fast_div(len), per_block, out, center, r);
}

template <class R>
static int launch_rows(cuda_dev *d, const reduction &rd, const Iter<2> &rows,
                       const typename R::In *in, typename R::Out *out,
                       const double *center, R r, const char *op) {
  if (takes_short(rd, rows, sizeof(typename R::In)))
    return launch_short(d, rd, rows, in, out, center, r, op);
  group_shape g;
  bool adjacent = rows.ndim > 0 && rows.stride[1][rows.ndim - 1] == 1;
  if (rd.s != 1 && rd.len > 1 && adjacent) {
    g.jfast = 0;
    g.ry = rd.len < 8 || rd.nrows >= OUTER_ALONE ? 1 : 8;
    g.rx = BLOCK / g.ry;
  } else {
    const int64_t v = sizeof(typename R::In) <= 16 ? 16 / sizeof(typename R::In) : 1;
    g.jfast = 1;
    g.ry = pow2_floor(rd.len / (4 * v), BLOCK);
    g.rx = BLOCK / g.ry;
  }
  int64_t row_blocks = (rd.nrows + g.rx - 1) / g.rx;
  int64_t want = (rd.len + g.ry * 16 - 1) / (g.ry * 16);
  int64_t fill = (TARGET_BLOCKS + row_blocks - 1) / row_blocks;
  int64_t nchunk = want < fill ? want : fill;
  if (nchunk > MAX_CHUNKS) nchunk = MAX_CHUNKS;
  if (nchunk < 1) nchunk = 1;
  int64_t chunk = (rd.len + nchunk - 1) / nchunk;
  chunk = (chunk + 63) / 64 * 64;
  if (chunk < 1) chunk = 1;
  nchunk = rd.len > 0 ? (rd.len + chunk - 1) / chunk : 1;
  dim3 grid((unsigned)(row_blocks < (1 << 20) ? row_blocks : (1 << 20)), (unsigned)nchunk);
  if (nchunk == 1)
    return cuda_launch<reduce_rows<R>>(d, grid, BLOCK, 0, op, rows, rd.nrows, in, rd.s, rd.len,
                                       out, nullptr, chunk, 1, center, g, r);
  using Acc = typename R::Acc;
  cuda_scratch part;
  int rc = part.get(d->index, (size_t)(rd.nrows * nchunk) * sizeof(Acc), op);
  if (rc) return rc;
  rc = cuda_launch<reduce_rows<R>>(d, grid, BLOCK, 0, op, rows, rd.nrows, in, rd.s, rd.len,
                                   nullptr, part.as<Acc>(), chunk, (int)nchunk, center, g, r);
  if (rc) return rc;
  Iter<2> prow = rows;
  Iter<2> packed = packed_rows(rows, nchunk);
  for (int k = 0; k < prow.ndim; k++) prow.stride[1][k] = packed.stride[0][k];
  group_shape g2;
  g2.jfast = 1;
  g2.ry = pow2_floor(nchunk, BLOCK);
  g2.rx = BLOCK / g2.ry;
  int64_t blocks2 = (rd.nrows + g2.rx - 1) / g2.rx;
  dim3 grid2((unsigned)(blocks2 < (1 << 20) ? blocks2 : (1 << 20)), 1);
  Fold<R> f{r, rd.len};
  return cuda_launch<reduce_rows<Fold<R>>>(d, grid2, BLOCK, 0, op, prow, rd.nrows,
                                            part.as<Acc>(), 1, nchunk, out, nullptr, nchunk, 1,
                                            center, g2, f);
}

/* The rows of in (every dimension but the last) with out's matching
 * strides: out has in's dimensions but the last (a reduction) or all of
 * them (a scan). */
static reduction make_reduction(const ml_array *out, const ml_array *in) {
  reduction rd;
  const int64_t *strides[2] = {out->strides, in->strides};
  int nd = in->ndim - 1;
  rd.rows = iter_make<2>(nd, in->shape, strides);
  rd.nrows = 1;
  for (int k = 0; k < nd; k++) rd.nrows *= in->shape[k];
  rd.len = in->shape[nd];
  rd.s = in->strides[nd];
  return rd;
}

/* Per-row double centers (the mean or the maximum) into scratch. */
template <class R>
static int centers(cuda_dev *d, const reduction &rd, const ml_array *in, R r,
                   cuda_scratch &c, const char *op) {
  int rc = c.get(d->index, (size_t)rd.nrows * sizeof(double), op);
  if (rc) return rc;
  return launch_rows<R>(d, rd, packed_rows(rd.rows, 1), array_ptr<typename R::In>(in),
                        c.as<double>(), nullptr, r, op);
}

template <class T>
static int reduce_float(cuda_dev *d, ml_redop op, const ml_array *out, const ml_array *in,
                        const reduction &rd, int64_t ddof) {
  const char *name = ml_redop_name(op);
  const T *p = array_ptr<T>(in);
  T *o = array_ptr<T>(out);
  int64_t *oi = array_ptr<int64_t>(out);
  switch (op) {
    case ML_PROD: return launch_rows(d, rd, rd.rows, p, o, nullptr, FProd<T>{}, name);
    case ML_MIN: return launch_rows(d, rd, rd.rows, p, o, nullptr, Ext<T, T>{1, 0, 0}, name);
    case ML_MAX: return launch_rows(d, rd, rd.rows, p, o, nullptr, Ext<T, T>{0, 0, 0}, name);
    case ML_NORMINF:
      return launch_rows(d, rd, rd.rows, p, o, nullptr, Ext<T, T>{0, 0, 1}, name);
    case ML_ARGMIN:
      return launch_rows(d, rd, rd.rows, p, oi, nullptr, Ext<T, int64_t>{1, 1, 0}, name);
    case ML_ARGMAX:
      return launch_rows(d, rd, rd.rows, p, oi, nullptr, Ext<T, int64_t>{0, 1, 0}, name);
    case ML_ANY: case ML_ALL:
      return launch_rows(d, rd, rd.rows, p, array_ptr<uint8_t>(out), nullptr,
                         Count<T>{op == ML_ALL}, name);
    case ML_VAR: case ML_STD: {
      cuda_scratch c;
      int rc = centers(d, rd, in, FSum<T, double>{ML_MEAN, X_ID, 0}, c, name);
      if (rc) return rc;
      return launch_rows(d, rd, rd.rows, p, o, c.as<double>(), FSum<T, T>{op, X_SQ, ddof},
                         name);
    }
    case ML_LOGSUMEXP: {
      cuda_scratch c;
      int rc = centers(d, rd, in, Ext<T, double>{0, 0, 0}, c, name);
      if (rc) return rc;
      return launch_rows(d, rd, rd.rows, p, o, c.as<double>(), FSum<T, T>{op, X_EXP, 0},
                         name);
    }
    default: {
      int x = op == ML_NORM2 ? X_SQ : op == ML_NORM1 ? X_ABS : X_ID;
      return launch_rows(d, rd, rd.rows, p, o, nullptr, FSum<T, T>{op, x, 0}, name);
    }
  }
}

template <class T>
static int reduce_int(cuda_dev *d, ml_redop op, const ml_array *out, const ml_array *in,
                      const reduction &rd) {
  const char *name = ml_redop_name(op);
  const T *p = array_ptr<T>(in);
  T *o = array_ptr<T>(out);
  int64_t *oi = array_ptr<int64_t>(out);
  switch (op) {
    case ML_SUM: case ML_PROD:
      return launch_rows(d, rd, rd.rows, p, oi, nullptr, ISum<T>{op == ML_PROD}, name);
    case ML_MIN: return launch_rows(d, rd, rd.rows, p, o, nullptr, Ext<T, T>{1, 0, 0}, name);
    case ML_MAX: return launch_rows(d, rd, rd.rows, p, o, nullptr, Ext<T, T>{0, 0, 0}, name);
    case ML_ARGMIN:
      return launch_rows(d, rd, rd.rows, p, oi, nullptr, Ext<T, int64_t>{1, 1, 0}, name);
    case ML_ARGMAX:
      return launch_rows(d, rd, rd.rows, p, oi, nullptr, Ext<T, int64_t>{0, 1, 0}, name);
    case ML_ANY: case ML_ALL:
      return launch_rows(d, rd, rd.rows, p, array_ptr<uint8_t>(out), nullptr,
                         Count<T>{op == ML_ALL}, name);
    default:
      return ml_fail(ML_EINVAL, "%s: does not take %s input", name, ml_dtype_name(in->dtype));
  }
}

extern "C" int cuda_reduce(ml_redop op, const ml_array *out, const ml_array *in,
                           int64_t ddof) {
  cuda_dev *d;
  int rc = cuda_enter(array_device(in), &d);
  if (rc) return rc;
  reduction rd = make_reduction(out, in);
  if (rd.nrows == 0) return ML_OK;
  switch (in->dtype) {
    case ML_UINT8: return reduce_int<uint8_t>(d, op, out, in, rd);
    case ML_INT32: return reduce_int<int32_t>(d, op, out, in, rd);
    case ML_INT64: return reduce_int<int64_t>(d, op, out, in, rd);
    case ML_FLOAT32: return reduce_float<float>(d, op, out, in, rd, ddof);
    default: return reduce_float<double>(d, op, out, in, rd, ddof);
  }
}

/* ---- cumulative sums and products ----
 * Rows of up to SHORT_ROW elements: one thread each, in order (as the CPU
 * does). Longer rows: blocks scan tiles of TILE elements (8 consecutive per
 * thread, then a block-wide exclusive scan of the threads' totals) and
 * carry the running total from tile to tile. A row too long for one block
 * is cut into chunks (up to SCAN_BLOCKS blocks in all): first their totals
 * (the reduction kernel), then a prefix of the totals per row (a block
 * scan), then every chunk scans with its prefix as the starting carry.
 * Every sum has a fixed order. Accumulation in double (floats) or wrapping
 * int64, as on the CPU. The same kernels make products, P a template
 * flag: identity 1 and * for + (the sums keep CUB's ExclusiveSum). Long
 * contiguous float rows take scan_lookback.cu's one pass instead. */

#define SHORT_ROW 16
#define ITEMS 8
#define TILE (BLOCK * ITEMS)
#define SCAN_BLOCKS 8192

template <class T>
using scan_acc = typename std::conditional<std::is_integral<T>::value, uint64_t, double>::type;

template <class T>
using scan_out = typename std::conditional<std::is_integral<T>::value, int64_t, T>::type;

template <class T>
__device__ __forceinline__ scan_acc<T> widen(T v) {
  if constexpr (std::is_integral<T>::value)
    return (uint64_t)(int64_t)v;
  else
    return (double)v;
}

/* The scan's operation on accumulators: a * b (P) or a + b. */
template <bool P> struct ScanOp {
  template <class A>
  __device__ __forceinline__ A operator()(const A &a, const A &b) const {
    return P ? a * b : a + b;
  }
};

template <bool P, class A> __device__ __forceinline__ A scan_id() { return A(P ? 1 : 0); }

template <bool P, class T>
__global__ void cumsum_short(Iter<2> rows, int64_t nrows, const T *in, int64_t si,
                             scan_out<T> *out, int64_t so, int64_t len) {
  ScanOp<P> op;
  int64_t step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t row = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; row < nrows;
       row += step) {
    int64_t off[2];
    iter_offsets<2, uint64_t>(rows, (uint64_t)row, off);
    scan_acc<T> run = scan_id<P, scan_acc<T>>();
    for (int64_t j = 0; j < len; j++) {
      run = op(run, widen(in[off[1] + j * si]));
      out[off[0] + j * so] = (scan_out<T>)run;
    }
  }
}

/* Inclusive prefix, per row, of the chunk totals (in place): a block per
 * row, BLOCK totals at a time. */
template <bool P, class A>
__global__ void __launch_bounds__(BLOCK) prefix_totals(A *tot, int64_t nrows, int nchunk) {
  using Scan = cub::BlockScan<A, BLOCK>;
  __shared__ typename Scan::TempStorage tmp;
  ScanOp<P> op;
  for (int64_t row = blockIdx.x; row < nrows; row += gridDim.x) {
    A run = scan_id<P, A>();
    for (int c0 = 0; c0 < nchunk; c0 += BLOCK) {
      int c = c0 + threadIdx.x;
      A v = c < nchunk ? tot[row * nchunk + c] : scan_id<P, A>(), incl, total;
      if constexpr (P)
        Scan(tmp).InclusiveScan(v, incl, op, total);
      else
        Scan(tmp).InclusiveSum(v, incl, total);
      if (c < nchunk) tot[row * nchunk + c] = op(run, incl);
      run = op(run, total);
      __syncthreads();
    }
  }
}

/* A tile goes through shared memory: read with consecutive threads on
 * consecutive elements, scanned as 8 consecutive elements per thread plus
 * a block-wide exclusive scan of the threads' totals, written back
 * consecutively. One pad slot per 8 elements keeps the per-thread accesses
 * free of bank conflicts. */
__device__ __forceinline__ int pad(int e) { return e + e / ITEMS; }

template <bool P, class T>
__global__ void __launch_bounds__(BLOCK)
    cumsum_tiles(Iter<2> rows, int64_t nrows, const T *in, int64_t si, scan_out<T> *out,
                 int64_t so, int64_t len, int64_t chunk, int nchunk,
                 const scan_acc<T> *carry) {
  using A = scan_acc<T>;
  using Scan = cub::BlockScan<A, BLOCK>;
  __shared__ typename Scan::TempStorage tmp;
  __shared__ A tile_v[TILE + TILE / ITEMS];
  ScanOp<P> op;
  const A id = scan_id<P, A>();
  const int c = blockIdx.y, t = threadIdx.x;
  const int64_t jb = (int64_t)c * chunk, je = jb + chunk < len ? jb + chunk : len;
  for (int64_t row = blockIdx.x; row < nrows; row += gridDim.x) {
    int64_t off[2];
    iter_offsets<2, uint64_t>(rows, (uint64_t)row, off);
    A run = c > 0 ? carry[row * nchunk + c - 1] : id;
    for (int64_t tile = jb; tile < je; tile += TILE) {
#pragma unroll
      for (int i = 0; i < ITEMS; i++) {
        int64_t j = tile + i * BLOCK + t;
        tile_v[pad(i * BLOCK + t)] = j < je ? widen(in[off[1] + j * si]) : id;
      }
      __syncthreads();
      A v[ITEMS];
#pragma unroll
      for (int i = 0; i < ITEMS; i++) {
        v[i] = tile_v[pad(t * ITEMS + i)];
        if (i > 0) v[i] = op(v[i - 1], v[i]);
      }
      A before, total;
      if constexpr (P)
        Scan(tmp).ExclusiveScan(v[ITEMS - 1], before, id, op, total);
      else
        Scan(tmp).ExclusiveSum(v[ITEMS - 1], before, total);
#pragma unroll
      for (int i = 0; i < ITEMS; i++)
        tile_v[pad(t * ITEMS + i)] = op(run, op(before, v[i]));
      __syncthreads();
#pragma unroll
      for (int i = 0; i < ITEMS; i++) {
        int64_t j = tile + i * BLOCK + t;
        if (j < je) out[off[0] + j * so] = (scan_out<T>)tile_v[pad(i * BLOCK + t)];
      }
      run = op(run, total);
      __syncthreads();
    }
  }
}

/* The totals of nchunk chunks per row into tot, by the reduction kernel. */
template <bool P, class T>
static int chunk_totals(cuda_dev *d, const reduction &rd, const T *p, int64_t chunk,
                        int64_t nchunk, unsigned gx, scan_acc<T> *tot, const char *name) {
  group_shape g = {1, BLOCK, 1};
  dim3 grid(gx, (unsigned)nchunk);
  if constexpr (std::is_integral<T>::value)
    return cuda_launch<reduce_rows<ISum<T>>>(d, grid, BLOCK, 0, name, rd.rows, rd.nrows, p,
                                             rd.s, rd.len, nullptr, tot, chunk, (int)nchunk,
                                             nullptr, g, ISum<T>{P});
  else if constexpr (P)
    return cuda_launch<reduce_rows<FProd<T>>>(d, grid, BLOCK, 0, name, rd.rows, rd.nrows, p,
                                              rd.s, rd.len, nullptr, tot, chunk, (int)nchunk,
                                              nullptr, g, FProd<T>{});
  else
    return cuda_launch<reduce_rows<FSum<T, T>>>(d, grid, BLOCK, 0, name, rd.rows, rd.nrows, p,
                                                rd.s, rd.len, nullptr, tot, chunk,
                                                (int)nchunk, nullptr, g,
                                                FSum<T, T>{ML_SUM, X_ID, 0});
}

template <bool P, class T>
static int cumsum_typed(cuda_dev *d, const ml_array *out, const ml_array *in) {
  using A = scan_acc<T>;
  const char *name = P ? "cumprod" : "cumsum";
  reduction rd = make_reduction(out, in);
  int nd = in->ndim - 1;
  int64_t so = out->strides[nd];
  const T *p = array_ptr<T>(in);
  scan_out<T> *o = array_ptr<scan_out<T>>(out);
  if (rd.len <= SHORT_ROW) {
    return cuda_launch<cumsum_short<P, T>>(d, grid_for(rd.nrows, BLOCK, d), BLOCK, 0, name,
                                           rd.rows, rd.nrows, p, rd.s, o, so, rd.len);
  }
  int64_t want = (rd.len + TILE - 1) / TILE, fill = (SCAN_BLOCKS + rd.nrows - 1) / rd.nrows;
  int64_t nchunk = want < fill ? want : fill;
  if (nchunk > SCAN_BLOCKS) nchunk = SCAN_BLOCKS;
  if (nchunk < 1) nchunk = 1;
  int64_t chunk = ((rd.len + nchunk - 1) / nchunk + TILE - 1) / TILE * TILE;
  nchunk = (rd.len + chunk - 1) / chunk;
  unsigned gx = (unsigned)(rd.nrows < (1 << 20) ? rd.nrows : (1 << 20));
  cuda_scratch tot;
  if (nchunk > 1) {
    int rc = tot.get(d->index, (size_t)(rd.nrows * nchunk) * sizeof(A), name);
    if (!rc) rc = chunk_totals<P, T>(d, rd, p, chunk, nchunk, gx, tot.as<A>(), name);
    if (!rc)
      rc = cuda_launch<prefix_totals<P, A>>(d, gx, BLOCK, 0, name, tot.as<A>(), rd.nrows,
                                            (int)nchunk);
    if (rc) return rc;
  }
  return cuda_launch<cumsum_tiles<P, T>>(d, dim3(gx, (unsigned)nchunk), BLOCK, 0, name,
                                         rd.rows, rd.nrows, p, rd.s, o, so, rd.len, chunk,
                                         (int)nchunk, tot.as<A>());
}

template <bool P>
static int cumulate(const ml_array *out, const ml_array *in) {
  cuda_dev *d;
  int rc = cuda_enter(array_device(in), &d);
  if (rc) return rc;
  if (ml_array_numel(in) == 0) return ML_OK;
  if (in->ndim == 0) return cuda_copy(out, in);
  if (scan_lookback_fits(out, in)) return scan_lookback(d, P, out, in);
  switch (in->dtype) {
    case ML_UINT8: return cumsum_typed<P, uint8_t>(d, out, in);
    case ML_INT32: return cumsum_typed<P, int32_t>(d, out, in);
    case ML_INT64: return cumsum_typed<P, int64_t>(d, out, in);
    case ML_FLOAT32: return cumsum_typed<P, float>(d, out, in);
    default: return cumsum_typed<P, double>(d, out, in);
  }
}

extern "C" int cuda_cumsum(const ml_array *out, const ml_array *in) {
  return cumulate<false>(out, in);
}

extern "C" int cuda_cumprod(const ml_array *out, const ml_array *in) {
  return cumulate<true>(out, in);
}
