/* ±1 matrices packed into words (ml.binary): packing, unpacking, exact
 * products, Hamming distances and the Hamming kNN search. The packed rows
 * are binary_backend.h's: int32 words, ML_BINARY_WORDS(bits) a row, the
 * padding bits 0. The logical length `bits` is not in the array: the Lua
 * object that holds the words keeps it (moonlab/binary.lua) and passes it
 * here, which checks that the words fit it. op names the operation in
 * messages. */
#ifndef ML_BINARY_H
#define ML_BINARY_H

#include "binary_backend.h"

/* out: the signs of x along dimension dim (0-based) packed, x's other
 * dimensions in order followed by the words. x is any dtype (integers
 * are compared with 0 exactly) and any view, at least 1-D with dim not
 * empty. */
int ml_binary_pack(ml_array *out, const ml_array *x, int dim);

/* out: words (... x w) unpacked to ±1 of dtype t, the bits dimension of
 * length bits at place dim (0-based, of the result's ndim). */
int ml_binary_unpack(ml_array *out, const ml_array *words, int64_t bits,
                     ml_dtype t, int dim);

/* out: batch... x m x n int32, the ±1 dot products (hamming: the Hamming
 * distances) of the rows of a (batch... x m x w) with those of b
 * (batch... x n x w), both packed from rows of bits signs; the batch
 * dimensions must be equal. */
int ml_binary_mm(const char *op, ml_array *out, const ml_array *a,
                 const ml_array *b, int64_t bits, int hamming);

/* dist (m x k int32) and index (m x k int64, 1-based): the k rows of refs
 * (n x w) nearest to each row of queries (m x w) in Hamming distance,
 * nearest first, ties to the lower index; k in 1..n. */
int ml_binary_knn(const char *op, ml_array *dist, ml_array *index,
                  const ml_array *queries, const ml_array *refs,
                  int64_t bits, int64_t k);

/* *ops: the device's AND-popcount rate in ops a second, measured now
 * (binary_backend.h's peak), for the benchmarks. */
int ml_binary_peak(ml_device device, double *ops);

#endif
