/* The backend interface: what a device kind's backend implements, as
 * tables of function pointers.
 *
 * The CPU backend (src/cpu) and the CUDA backend (kernels/) fill the same
 * tables; the core validates arguments, works out result shapes and dtypes,
 * allocates results, and then dispatches on the device of the operands
 * (which the core has checked are all on one device). Every entry returns
 * ML_OK or an error code after ml_fail().
 *
 * This header holds the general table (memory, copies, elementwise
 * operations, reductions, GEMM, indexing, sorting, random numbers) and the
 * definitions whose results both backends must reproduce bit for bit: the
 * order keys of sorting (order_key.h), the random stream (philox.h) and the
 * scalar arithmetic of integers (scalar_math.h). Each algorithm area (kNN,
 * linear algebra, ...) declares its own sub-table in its own header,
 * <area>_backend.h, registered through an ml_backend_area (below).
 *
 * Conventions for the entries:
 * - Arrays passed in are views with arbitrary strides (zero strides for
 *   broadcast dimensions) unless an entry says "contiguous".
 * - "Same shape" means the core has already broadcast the operands; the
 *   backend never broadcasts.
 * - `out` is always freshly allocated by the core (or a view the user asked
 *   to write through) and never overlaps an input unless stated.
 * - Indices crossing this interface are 1-based int64, as in the Lua API;
 *   in the index arrays of index_select, gather and scatter a negative
 *   entry counts from the end (scalar_math.h's ml_index_base0). */
#ifndef ML_BACKEND_H
#define ML_BACKEND_H

/* index_add's runs of slices summed on their own (see index_add). */
#define ML_INDEX_ADD_RUN 256

#include "array.h"
#include "ops.h"
#include "histogram_bin.h"
#include "order_key.h"
#include "philox.h"
#include "scalar_math.h"
#include "status.h"

/* C[b] = op(A[b]) op(B[b]) for b < batch, row-major: C is m x n with rows
 * ldc apart; op(A) is m x k, stored as A (rows lda apart) or, with trans_a,
 * as its k x m transpose; likewise B. Batch strides are in elements. */
typedef struct {
  ml_dtype dtype;
  ml_device device;
  int trans_a, trans_b;
  int64_t m, n, k, batch;
  const void *a;
  int64_t lda, stride_a;
  const void *b;
  int64_t ldb, stride_b;
  void *c;
  int64_t ldc, stride_c;
  /* float32 only, and only where the backend has tf32 (below): the
   * products may round their inputs to TF32 (tensor cores). Off for mm. */
  int tf32;
} ml_gemm;

/* What a device's allocator holds, in bytes: handed out (rounded up to
 * its size classes), kept in a cache for reuse, the most ever handed out,
 * and the device's whole memory. */
typedef struct {
  size_t allocated, cached, peak, total;
} ml_device_memory;

typedef struct ml_backend {
  const char *name; /* "cpu", "cuda": prefixes device errors */
  /* gemm and the kNN search can use TF32 for float32 when asked (tensor
   * cores: several times faster than full float32, which the search's
   * ranking exploits since its error bound and re-checks keep the answer
   * exact). */
  int tf32;

  /* Memory. alloc returns ML_ENOMEM (without ml_fail) when the device is
   * full, so that the caller can collect garbage and retry. */
  int (*alloc)(int device_index, size_t nbytes, void **ptr);
  void (*free)(int device_index, void *ptr, size_t nbytes);
  int (*memory)(int device_index, ml_device_memory *out);
  /* Gives the blocks the allocator caches back to the system. */
  int (*empty_cache)(int device_index);
  /* The device's product name ("NVIDIA H200") into buf of n bytes. */
  int (*device_name)(int device_index, char *buf, size_t n);
  /* Host bytes (C order, dst's dtype) into dst, and back. */
  int (*upload)(const ml_array *dst, const void *host);
  int (*download)(void *host, const ml_array *src);
  int (*synchronize)(int device_index);

  /* dst = src, same shape; converts when the dtypes differ (C casts, float
   * to integer truncates toward zero). dst may be any strided view. */
  int (*copy)(const ml_array *dst, const ml_array *src);
  int (*fill)(const ml_array *dst, ml_scalar value);
  /* Contiguous 1-D dst: dst[i] = start + i * step, computed in dst's dtype
   * (int64 exactly for integer dtypes). */
  int (*iota)(const ml_array *dst, ml_scalar start, ml_scalar step);

  /* Elementwise, same shape, out and a of one dtype, except that ML_NOT,
   * ML_ISNAN, ML_ISINF and ML_ISFINITE take a of any dtype to uint8 out.
   * Integer a: only NEG, ABS, FLOOR, CEIL, ROUND and those four. */
  int (*unary)(ml_unop op, const ml_array *out, const ml_array *a);
  /* a and b of one dtype; out of that dtype, or uint8 for comparisons. */
  int (*binary)(ml_binop op, const ml_array *out, const ml_array *a,
                const ml_array *b);
  /* out = a op s (or s op a when reversed), s already representable in
   * a's dtype. Lets backends pass the scalar by value. */
  int (*binary_scalar)(ml_binop op, const ml_array *out, const ml_array *a,
                       ml_scalar s, int reversed);
  /* out = cond ? a : b; cond uint8; a, b and out of one dtype. */
  int (*where)(const ml_array *out, const ml_array *cond, const ml_array *a,
               const ml_array *b);

  /* Reduces the last dimension of in: in has out->ndim + 1 dimensions and
   * out[i...] = R(in[i..., :]). Result dtypes (the core converts inputs
   * first where needed):
   *   SUM, PROD: in float -> same; in integer -> out int64.
   *   MIN, MAX: same dtype (NaN propagates).   ARGMIN, ARGMAX: out int64,
   *   1-based, first occurrence, a NaN counts as the extreme.
   *   MEAN, VAR, STD, NORM1, NORM2, NORMINF, LOGSUMEXP: in and out float,
   *   same dtype; VAR (and STD, its square root) use ddof and a two-pass
   *   algorithm.   ANY, ALL: any in, out uint8.
   * Empty rows give SUM 0, PROD 1, MEAN/VAR/STD NaN (also VAR when
   * n - ddof <= 0), NORM* 0, LOGSUMEXP -inf, ANY 0, ALL 1; the core never
   * passes empty rows to MIN, MAX, ARGMIN, ARGMAX.
   * Results must not depend on thread count or scheduling. */
  int (*reduce)(ml_redop op, const ml_array *out, const ml_array *in,
                int64_t ddof);
  /* Cumulative sum along the last dimension; out same shape as in, dtype
   * of in (float) or int64 (integer in). */
  int (*cumsum)(const ml_array *out, const ml_array *in);
  /* Cumulative product, as cumsum: same layouts and dtypes, the running
   * product in double (floats) or wrapping int64 (integers). */
  int (*cumprod)(const ml_array *out, const ml_array *in);
  /* Along the last dimension of in (float, contiguous; out contiguous of
   * its shape and dtype, lse contiguous of its shape but the last): lse =
   * the row's logsumexp as reduce's LOGSUMEXP computes it (the maximum c,
   * NaN if any element is NaN, then c + log(s) with s the sum in double
   * of exp(x - c), or c when c is not finite), rounded to the dtype; then
   * out = x - lse (logs) or exp(x - lse). The exponentials are taken in
   * the dtype (float32: expf), sums in any fixed order. */
  int (*softmax)(const ml_array *out, const ml_array *lse,
                 const ml_array *in, int logs);

  int (*gemm)(const ml_gemm *g);

  /* out = in with dimension dim (0-based) indexed by the int64 1-D index
   * (1-based); out has in's shape with shape[dim] = numel(index). */
  int (*index_select)(const ml_array *out, const ml_array *in, int dim,
                      const ml_array *index);
  /* In place: the slices of src along dim (0-based) added to those of out
   * at index (1-D int64, 1-based or negative from the end); out, index
   * and src contiguous, src of out's shape but numel(index) along dim and
   * of out's dtype. For each element of out, the slices add in the order
   * of index: integers wrap in int64, floats sum in double and round once
   * into out (out + sum), where sum adds, in order, the sums of runs of
   * ML_INDEX_ADD_RUN slices (each in order), so that a GPU can give the
   * runs of one long list to many threads; results are the same bits on
   * both backends. A bad index is an error naming it, as gather's. */
  int (*index_add)(const ml_array *out, int dim, const ml_array *index,
                   const ml_array *src);
  /* Along dim (0-based): out[..i..] = in[..index[..i..]..]; index int64 of
   * out's shape. */
  int (*gather)(const ml_array *out, const ml_array *in, int dim,
                const ml_array *index);
  /* In place: out[..index[..i..]..] = src[..i..]; index int64 and src of
   * one shape. */
  int (*scatter)(const ml_array *out, int dim, const ml_array *index,
                 const ml_array *src);
  /* out (contiguous 1-D, length = number of nonzero mask elements) takes
   * the elements of in where mask (uint8, in's shape) is nonzero, C order. */
  int (*masked_select)(const ml_array *out, const ml_array *in,
                       const ml_array *mask);

  /* Stable sort of each row (last dimension) of contiguous in into
   * contiguous values and int64 indices (1-based) of in's shape. NaN sorts
   * as larger than every number. */
  int (*sort)(const ml_array *values, const ml_array *indices,
              const ml_array *in, int descending);
  /* The k largest (or smallest) of each row of contiguous in, in order,
   * ties to the lower index; values and indices contiguous rows x k. */
  int (*topk)(const ml_array *values, const ml_array *indices,
              const ml_array *in, int64_t k, int largest);
  /* out (int64, contiguous, v's shape): for each element of contiguous v,
   * 1 + the number of elements of a (contiguous, 1-D, v's dtype, sorted
   * by order keys) whose order key is below its own (right: not above). */
  int (*searchsorted)(const ml_array *out, const ml_array *a,
                      const ml_array *v, int right);
  /* numpy.histogram's counts over nbins equal bins: each element of
   * contiguous in (float32 or float64) goes to the bin of histogram_bin.h
   * over edges (in's dtype, contiguous, nbins + 1 values) and denom (in
   * the dtype), or nowhere. out (contiguous, nbins): int64 counts when
   * weights is NULL, else float64 sums of weights (float64, in's shape,
   * contiguous) in any order. */
  int (*histogram)(const ml_array *out, const ml_array *in,
                   const ml_array *weights, const ml_array *edges,
                   double denom);
  /* numpy.bincount's counts from lo: out (int64, contiguous, nbins)
   * counts the elements v of contiguous in (uint8, int32 or int64) with
   * lo <= v < lo + nbins in bin v - lo; the others go nowhere. */
  int (*bincount)(const ml_array *out, const ml_array *in, int64_t lo);

  /* Fills contiguous out from the Philox4x32-10 stream (core/philox.h)
   * at counter offset; p1, p2: [low, high) for uniform and randint, mean
   * and std for normal. */
  int (*random)(ml_randkind kind, const ml_array *out, uint64_t seed,
                uint64_t offset, double p1, double p2);
} ml_backend;

/* Registers the backends of this build (the CPU's, and CUDA's when built
 * with it) once; an error names a table entry a backend left empty. */
int ml_backends_init(void);

/* Registers a device kind's general table and its number of devices, with
 * the reason there are none when there are none (NULL otherwise); an
 * error names the first entry left NULL. (ml_backends_init calls it.) */
int ml_backend_register(ml_device_kind kind, const ml_backend *backend,
                        int device_count, const char *why_none);
/* The backend of a device, or an error naming a device this build or this
 * machine does not have. */
int ml_backend_get(ml_device device, const ml_backend **out);
int ml_device_count(ml_device_kind kind);

/* An algorithm area's sub-table, one per device kind. The area's header
 * declares the table type, a struct of properties followed by function
 * pointers only, from the member `first` on; its core file describes it
 * with an ml_backend_area and offers register and get functions over the
 * two below. */
typedef struct {
  const char *name;            /* "knn": names the table in errors */
  const char *const *entries;  /* the entries' names, in order */
  size_t count, first;         /* their number; the offset of the first */
  const void *tables[ML_NDEVICE_KINDS];
} ml_backend_area;

/* An error naming the first entry left NULL, else table becomes kind's. */
int ml_backend_area_register(ml_backend_area *area, ml_device_kind kind,
                             const void *table);
/* kind's table for device (checked to exist, as ml_backend_get does). */
int ml_backend_area_get(const ml_backend_area *area, ml_device device,
                        const void **out);

/* The device's allocator (core functions over the entries above, for the
 * bindings): its memory, its cache given back, its product name. */
int ml_device_memory_of(ml_device device, ml_device_memory *out);
int ml_device_empty_cache(ml_device device);
int ml_device_product_name(ml_device device, char *buf, size_t n);

#endif
