/* IDX files (the MNIST format), read through zlib so that gzip-compressed
 * and plain files both work. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "io.h"
#include "status.h"

#define OP "load_idx"

/* Reads up to n bytes into buf; *got is how many arrived (fewer only at
 * the end of the data). Fails on a read or decompression error. */
static int read_bytes(gzFile f, const char *path, void *buf, size_t n,
                      size_t *got) {
  char *p = buf;
  *got = 0;
  while (*got < n) {
    size_t want = n - *got < INT_MAX / 2 ? n - *got : INT_MAX / 2;
    int r = gzread(f, p + *got, (unsigned)want);
    if (r < 0) {
      int code;
      const char *msg = gzerror(f, &code), *colon = strstr(msg, ": ");
      if (strncmp(msg, "<fd:", 4) == 0 && colon) msg = colon + 2;
      return ml_fail(ML_EIO, OP ": cannot read '%s': %s", path, msg);
    }
    if (r == 0) break;
    *got += (size_t)r;
  }
  return ML_OK;
}

static uint32_t be32(const unsigned char *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 |
         p[3];
}

/* The dtype and the size in the file of an IDX type code, or 0. */
static size_t idx_type(int code, ml_dtype *t) {
  switch (code) {
    case 0x08: *t = ML_UINT8; return 1;
    case 0x09: *t = ML_INT32; return 1;
    case 0x0B: *t = ML_INT32; return 2;
    case 0x0C: *t = ML_INT32; return 4;
    case 0x0D: *t = ML_FLOAT32; return 4;
    case 0x0E: *t = ML_FLOAT64; return 8;
    default: return 0;
  }
}

/* Big-endian file values of type code into dst (n elements). */
static void convert(void *dst, const unsigned char *src, int64_t n, int code) {
  int32_t *i32 = dst;
  switch (code) {
    case 0x08:
      if (dst != src) memcpy(dst, src, (size_t)n);
      break;
    case 0x09: for (int64_t i = 0; i < n; i++) i32[i] = (int8_t)src[i]; break;
    case 0x0B:
      for (int64_t i = 0; i < n; i++)
        i32[i] = (int16_t)(src[2 * i] << 8 | src[2 * i + 1]);
      break;
    case 0x0C: case 0x0D:
      for (int64_t i = 0; i < n; i++) {
        uint32_t v = be32(src + 4 * i);
        memcpy((char *)dst + 4 * i, &v, 4);
      }
      break;
    default:
      for (int64_t i = 0; i < n; i++) {
        uint64_t v = (uint64_t)be32(src + 8 * i) << 32 | be32(src + 8 * i + 4);
        memcpy((char *)dst + 8 * i, &v, 8);
      }
      break;
  }
}

/* The header: type code, dtype, shape and data size. */
static int read_header(gzFile f, const char *path, int *code, ml_dtype *t,
                       size_t *elsize, int *ndim, int64_t *shape,
                       size_t *nbytes) {
  unsigned char magic[4], dims[4 * ML_MAX_DIMS];
  size_t got;
  int rc = read_bytes(f, path, magic, 4, &got);
  if (rc) return rc;
  if (got < 4 || magic[0] != 0 || magic[1] != 0)
    return ml_fail(ML_EIO, OP ": '%s' is not an IDX file (bad magic)", path);
  *code = magic[2];
  *elsize = idx_type(*code, t);
  if (!*elsize)
    return ml_fail(ML_EIO, OP ": '%s' has unknown data type 0x%02x", path,
                   *code);
  *ndim = magic[3];
  if (*ndim > ML_MAX_DIMS)
    return ml_fail(ML_EIO, OP ": '%s' has %d dimensions (at most %d)", path,
                   *ndim, ML_MAX_DIMS);
  rc = read_bytes(f, path, dims, 4 * (size_t)*ndim, &got);
  if (rc) return rc;
  if (got < 4 * (size_t)*ndim)
    return ml_fail(ML_EIO, OP ": truncated header in '%s'", path);
  uint64_t count = 1;
  for (int d = 0; d < *ndim; d++) {
    shape[d] = be32(dims + 4 * d);
    if (shape[d] > 0 && count > (UINT64_C(1) << 40) / (uint64_t)shape[d])
      return ml_fail(ML_EIO, OP ": '%s' announces too many elements", path);
    count *= (uint64_t)shape[d];
  }
  *nbytes = (size_t)count * *elsize;
  return ML_OK;
}

/* Data of nbytes into the new array r: read in place when the file's
 * element is the array's, else through a buffer. */
static int read_data(gzFile f, const char *path, int code, size_t nbytes,
                     const ml_array *r) {
  int64_t n = ml_array_numel(r);
  int in_place = nbytes > 0 && nbytes == ml_array_nbytes(r);
  unsigned char *buf =
      in_place ? ml_array_data(r) : malloc(nbytes ? nbytes : 1);
  if (!buf)
    return ml_fail(ML_ENOMEM, OP ": out of memory reading '%s'", path);
  size_t got;
  int rc = read_bytes(f, path, buf, nbytes, &got);
  if (!rc && got < nbytes)
    rc = ml_fail(ML_EIO, OP ": truncated file (expected %zu bytes of data, "
                 "found %zu)", nbytes, got);
  unsigned char extra;
  if (!rc) rc = read_bytes(f, path, &extra, 1, &got);
  if (!rc && got)
    rc = ml_fail(ML_EIO, OP ": '%s' has bytes after the %zu bytes of data "
                 "its header announces", path, nbytes);
  if (!rc) convert(ml_array_data(r), buf, n, code);
  if (!in_place) free(buf);
  return rc;
}

/* Deflate's densest code: 258 bytes from a match of about two bits, so a
 * gzip file of n bytes holds at most 1032 n bytes (zlib's FAQ). */
#define GZIP_MAX_RATIO 1032

/* Whether a regular file of size bytes can hold the nbytes of data its
 * header announces (after the header's hlen bytes), checked before
 * allocating them: exactly for a plain file, by deflate's limit for a
 * compressed one. */
static int check_size(gzFile f, const char *path, const struct stat *st,
                      size_t hlen, size_t nbytes) {
  if (!S_ISREG(st->st_mode)) return ML_OK;
  size_t size = (size_t)st->st_size;
  if (gzdirect(f)) {
    size_t found = size > hlen ? size - hlen : 0;
    return found >= nbytes ? ML_OK
           : ml_fail(ML_EIO, OP ": truncated file (expected %zu bytes of "
                     "data, found %zu)", nbytes, found);
  }
  if (nbytes / GZIP_MAX_RATIO <= size) return ML_OK;
  return ml_fail(ML_EIO, OP ": '%s' is truncated or corrupt: its header "
                 "announces %zu bytes of data, more than its %zu compressed "
                 "bytes can hold", path, nbytes, size);
}

int ml_load_idx(ml_array *out, const char *path) {
  int fd;
  int rc = ml_io_open_read(OP, path, &fd);
  if (rc) return rc;
  struct stat st;
  if (fstat(fd, &st) != 0) st.st_mode = 0; /* not checked */
  gzFile f = gzdopen(fd, "rb");
  if (!f) {
    close(fd);
    return ml_fail(ML_ENOMEM, OP ": out of memory opening '%s'", path);
  }
  int code = 0, ndim = 0;
  ml_dtype t = ML_UINT8;
  size_t elsize = 0, nbytes = 0;
  int64_t shape[ML_MAX_DIMS];
  ml_array r = {0};
  rc = read_header(f, path, &code, &t, &elsize, &ndim, shape, &nbytes);
  if (!rc) rc = check_size(f, path, &st, 4 + 4 * (size_t)ndim, nbytes);
  if (!rc) rc = ml_array_empty(&r, t, ndim, shape, ml_cpu());
  if (!rc) rc = read_data(f, path, code, nbytes, &r);
  gzclose(f);
  return ml_array_commit(out, &r, rc);
}
