/* Reading and writing arrays in files: IDX (MNIST), NumPy .npy and .npz,
 * and CSV.
 *
 * Loaders read into host memory and return a new contiguous CPU array;
 * savers take an array on any device (they download it first) and any
 * strides. Errors name the operation and the file: missing or unreadable
 * files, bad magic numbers, corrupt headers, truncated data. */
#ifndef ML_IO_H
#define ML_IO_H

#include "array.h"

/* An IDX file, gzip-compressed or plain: magic 0x00 0x00 type ndim, ndim
 * big-endian 32-bit sizes, then the data in C order, big-endian. Types:
 * 0x08 ubyte -> uint8, 0x09 sbyte, 0x0B short and 0x0C int -> int32,
 * 0x0D float -> float32, 0x0E double -> float64. Bytes after the data are
 * an error. A regular file too small for the data its header announces
 * (for a compressed one: more than deflate can pack into its size) fails
 * before the data is allocated. */
int ml_load_idx(ml_array *out, const char *path);

/* A .npy file, format 1.0, 2.0 or 3.0. dtypes <f4 <f8 <i4 <i8 |u1, and |b1
 * as uint8 0 or 1 (any nonzero byte is true, as NumPy reads it); big-endian
 * data (>f4 ...) is byte-swapped. fortran_order True gives the same logical
 * array, made C-contiguous. A well-formed header that asks for what is not
 * supported (another dtype, a structured dtype, more than 8 dimensions)
 * says so; "corrupt header" is for headers that do not parse. */
int ml_load_npy(ml_array *out, const char *path);
/* Writes a as .npy format 1.0, C order, little-endian (uint8 as |u1). */
int ml_save_npy(const char *path, const ml_array *a);

/* What a file holds, by its first bytes: "\x93NUMPY" a .npy, "PK\3\4"
 * or "PK\5\6" (an empty archive) a .npz; anything else is an error that
 * names op and the file. */
typedef enum { ML_FILE_NPY, ML_FILE_NPZ } ml_file_kind_t;
int ml_file_kind(const char *op, const char *path, ml_file_kind_t *kind);

/* A .npz archive open for reading (io_npz.c, over libzip): its members in
 * archive order, each a .npy as ml_load_npy reads it (stored or deflated;
 * member names as NumPy writes them, "x.npy"). Errors name op, the file
 * and the member: not a zip archive, a member that is no .npy or has an
 * unsupported dtype, a corrupt or truncated member. ml_npz_close(NULL) is
 * a no-op. */
typedef struct ml_npz ml_npz;
int ml_npz_open(const char *op, const char *path, ml_npz **z);
int64_t ml_npz_count(const ml_npz *z);
const char *ml_npz_name(const ml_npz *z, int64_t i);
int ml_npz_read(ml_npz *z, int64_t i, ml_array *out);
void ml_npz_close(ml_npz *z);
/* Writes n arrays (any device, any strides) as members names[i] + ".npy"
 * of a new .npz at path, deflated when compressed, else stored (as
 * numpy.savez_compressed and numpy.savez). n >= 1, names distinct. */
int ml_save_npz(const char *path, int64_t n, const char *const *names,
                const ml_array *const *arrays, int compressed);

typedef struct {
  char delimiter; /* ',' by default */
  int64_t skip;   /* lines skipped at the start (e.g. a header) */
  ml_dtype dtype; /* of the result */
} ml_csv_options;

/* A CSV file of numbers as a 2-D array, one row per line (a single column
 * gives n x 1; no rows gives 0 x 0), read as a stream: memory holds the
 * values and one line, at most 64 MiB long; a NUL byte is an error (not a
 * text file). Blank lines are ignored; spaces
 * around fields are allowed; every row must have the first row's number
 * of fields. Float dtypes parse with strtod/strtof (so "nan" and "inf"
 * work); integer dtypes take decimal integers that fit. Errors name the
 * line and column of a bad field. */
int ml_load_csv(ml_array *out, const char *path, const ml_csv_options *opt);
/* Writes a 1-D array one value per line, or a 2-D array one row per line,
 * fields separated by delimiter. Floats are written with enough digits to
 * read back exactly (%.17g for float64, %.9g for float32), integers as
 * integers. */
int ml_save_csv(const char *path, const ml_array *a, char delimiter);

/* For the loaders (io_file.c): opens path for reading as a file
 * descriptor, or fails with "op: cannot open 'path': reason" (a directory
 * too). */
int ml_io_open_read(const char *op, const char *path, int *fd);

#endif
