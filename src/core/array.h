/* The strided array: a view (dtype, shape, strides, offset) over a
 * refcounted storage that knows its device.
 *
 * Strides and the offset count elements, not bytes. An ml_array is a plain
 * struct owned by whoever holds it (a Lua userdata, or a local in a core
 * function); it owns one reference to its storage. An ml_array without
 * storage (a zeroed one, or one released) is "empty", and releasing it is
 * a no-op. */
#ifndef ML_ARRAY_H
#define ML_ARRAY_H

#include <stddef.h>
#include <stdint.h>

#include "device.h"
#include "dtype.h"

#define ML_MAX_DIMS 8

typedef struct ml_storage {
  int refcount;
  ml_device device;
  size_t nbytes;
  void *data; /* 16-byte aligned at least; 64 for large CPU arrays */
} ml_storage;

typedef struct ml_array {
  ml_storage *storage;
  int64_t offset;
  ml_dtype dtype;
  int ndim;
  int64_t shape[ML_MAX_DIMS];
  int64_t strides[ML_MAX_DIMS];
} ml_array;

/* A new contiguous (C order) array with uninitialised contents. */
int ml_array_empty(ml_array *out, ml_dtype dtype, int ndim,
                   const int64_t *shape, ml_device device);
/* The same, shaped like a. */
int ml_array_empty_like(ml_array *out, const ml_array *a, ml_dtype dtype);
/* Drops a's storage reference and leaves it empty. */
void ml_array_release(ml_array *a);
/* out becomes another view of src's storage (one more reference). */
void ml_array_share(ml_array *out, const ml_array *src);
/* Moves src into out; src is left empty. */
void ml_array_move(ml_array *out, ml_array *src);
/* The end of a core operation that built its result in *r: when rc is
 * ML_OK, out's old contents are released and out takes r; otherwise r is
 * released and out is untouched. Returns rc. */
int ml_array_commit(ml_array *out, ml_array *r, int rc);

int64_t ml_array_numel(const ml_array *a);
size_t ml_array_nbytes(const ml_array *a);
int ml_array_is_contiguous(const ml_array *a);
ml_device ml_array_device(const ml_array *a);
/* Address of the first element (storage data + offset). */
void *ml_array_data(const ml_array *a);
/* Fills strides for C order. */
void ml_contiguous_strides(int ndim, const int64_t *shape, int64_t *strides);

/* "2x3", "5", or "scalar" for 0-d; into buf of size n. */
const char *ml_shape_str(int ndim, const int64_t *shape, char *buf, size_t n);
#define ML_SHAPE_STR_MAX 192

/* Storage allocation with memory accounting. Every allocation adds to a
 * counter; when the bytes allocated since the last collection pass a
 * threshold, and once more before an allocation gives up, the pressure hook
 * runs (the Lua binding makes it a full garbage collection, which frees
 * arrays nobody references any more). */
typedef void (*ml_pressure_hook)(void *ud);
void ml_set_pressure_hook(ml_pressure_hook hook, void *ud);
int ml_storage_new(ml_device device, size_t nbytes, ml_storage **out);
void ml_storage_release(ml_storage *s);

typedef struct {
  size_t allocated; /* bytes held by live storages */
  size_t peak;      /* largest value of allocated since the last reset */
  size_t count;     /* live storages */
} ml_memory_stats;
ml_memory_stats ml_memory(ml_device_kind kind);
void ml_memory_reset_peak(ml_device_kind kind);

/* ML_OK when a and b live on one device, else an error naming the
 * operation and both devices. */
int ml_check_same_device(const char *op, const ml_array *a, const ml_array *b);

#endif
