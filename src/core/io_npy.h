/* The .npy format's reader and header writer (io_npy.c), over any source
 * of bytes: a file (ml_load_npy) or a member of a .npz archive
 * (io_npz.c). Internal to the core. */
#ifndef ML_IO_NPY_H
#define ML_IO_NPY_H

#include <stddef.h>

#include "array.h"

/* Room for a quoted name in messages, and for the header of any array. */
#define ML_NPY_NAME_MAX 4608
#define ML_NPY_HEADER_MAX 512

/* Where a .npy's bytes come from. read returns up to n bytes, fewer only
 * at the end or on an error; messages say "op: ... name ..." (name as it
 * should read, quoted: "'a.npy'", "'x.npy' in 'a.npz'"); left is how
 * many bytes remain when known (so that a short source fails before the
 * data is allocated), else -1. */
typedef struct {
  size_t (*read)(void *ctx, void *buf, size_t n);
  void *ctx;
  const char *op;
  const char *name;
  int64_t left;
} ml_npy_source;

/* A .npy (header and data) from src into a new C-contiguous CPU array;
 * the formats and dtypes of ml_load_npy (io.h). */
int ml_npy_read(ml_npy_source *src, ml_array *out);

/* The version 1.0 preamble and header of a C-order array a, padded so the
 * data starts at a multiple of 64 bytes, as NumPy writes it, into buf of
 * n >= ML_NPY_HEADER_MAX bytes. Returns its length. */
size_t ml_npy_header(char *buf, size_t n, const ml_array *a);

#endif
