/* The binary area of the backend interface: the sub-table that each
 * backend fills for core/binary.c (±1 matrices packed into words, their
 * products, Hamming distances and the Hamming kNN search), and the
 * descriptors its entries take. Arrays passed in follow backend.h's
 * conventions and are contiguous.
 *
 * Packed rows: a row of `bits` signs is ML_BINARY_WORDS(bits) int32
 * words, sign j (0-based) in bit j % 32 of word j / 32, 1 for +1 (x >= 0)
 * and 0 for -1; the bits past `bits`, up to the next multiple of
 * ML_BINARY_ALIGN, are 0. Read as uint64 words, a row is the same bits in
 * the same order (little-endian), and a row starts 32 bytes after the
 * previous one, so both backends read it in whole 64- or 256-bit units
 * with no tail. */
#ifndef ML_BINARY_BACKEND_H
#define ML_BINARY_BACKEND_H

#include "backend.h"

/* Bits a packed row is padded to: the k of the tensor cores'
 * mma.m16n8k256 b1 (and four 64-bit words). */
#define ML_BINARY_ALIGN 256
#define ML_BINARY_WORDS(bits) \
  (((bits) + ML_BINARY_ALIGN - 1) / ML_BINARY_ALIGN * (ML_BINARY_ALIGN / 32))

/* A batch of products or distance matrices (mm below). */
typedef struct {
  const ml_array *a;   /* batch x m x w int32 packed rows */
  const ml_array *b;   /* batch x n x w int32 packed rows */
  const ml_array *out; /* batch x m x n int32 out */
  int64_t bits;        /* logical length of the rows, <= 32 w */
  int hamming;         /* distances instead of ±1 dot products */
} ml_binary_mm_desc;

/* The Hamming kNN search (knn below). */
typedef struct {
  const ml_array *queries; /* m x w int32 packed rows */
  const ml_array *refs;    /* n x w int32 packed rows */
  int64_t k;               /* 1 .. n */
  const ml_array *dist;    /* m x k int32 out */
  const ml_array *index;   /* m x k int64 out, 1-based */
} ml_binary_knn_desc;

typedef struct ml_binary_backend {
  /* pack: in is rows x len, float32 or float64; out is rows x
   * ML_BINARY_WORDS(len) int32, the packed rows of the signs of in's rows
   * (x >= 0 is +1, anything else, NaN included, -1), padding bits 0.
   *
   * unpack: in is rows x w int32 packed rows, out rows x bits of any
   * dtype: +1 for a set bit, -1 for a clear one.
   *
   * mm: for batch i, row r of a and row c of b, with pa and pb the
   * popcounts of the rows and p = popc(a_r AND b_c), out[i][r][c] is
   *   bits - 2 (pa + pb - 2 p)   (the dot product of the ±1 rows)
   *   pa + pb - 2 p              (with hamming: their Hamming distance)
   * exactly (padding bits are 0 in both, so they add to none of the
   * counts).
   *
   * knn: for query row i, the k reference rows with the smallest Hamming
   * distance, nearest first, ties to the lower index: dist[i][j] the
   * distance, index[i][j] the 1-based row. The whole m x n matrix of
   * distances need not be formed.
   *
   * peak: *ops, the rate of the bare AND-popcount arithmetic of the
   * device in ops a second (2 m n k for an m x n x k product), measured
   * now on data that stays on the chip (registers or the L1 cache, and
   * shared memory for Hopper's warpgroup MMA), with the fastest
   * instruction the device has: the ceiling the benchmarks compare mm
   * and knn with. */
  int (*pack)(const ml_array *out, const ml_array *in);
  int (*unpack)(const ml_array *out, const ml_array *in);
  int (*mm)(const ml_binary_mm_desc *p);
  int (*knn)(const ml_binary_knn_desc *p);
  int (*peak)(ml_device device, double *ops);
} ml_binary_backend;

int ml_binary_backend_register(ml_device_kind kind,
                               const ml_binary_backend *t);
int ml_binary_backend_get(ml_device device, const ml_binary_backend **out);

#endif
