/* NumPy .npy files: a magic string, a version, a header that is a Python
 * dict literal {'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }
 * padded with spaces to a multiple of 64 bytes, then the raw data. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "copy.h"
#include "io.h"
#include "status.h"

#define MAGIC "\x93NUMPY"
#define MAGIC_LEN 6
#define MAX_HEADER (1 << 20)

typedef struct {
  ml_dtype dtype;
  int swap; /* big-endian data */
  int boolean; /* |b1: bytes other than 0 read as 1 */
  int fortran;
  int structured; /* descr is a list of fields */
  int ndim; /* may exceed ML_MAX_DIMS, then shape holds the first ones */
  int64_t shape[ML_MAX_DIMS];
  size_t nbytes; /* of the data */
} npy_header;

/* ---- reading ---- */

static void skip_space(const char **p) {
  while (**p == ' ' || **p == '\t' || **p == '\n' || **p == '\r') (*p)++;
}

/* A quoted string ('...' or "...") into buf; 0 if there is none. */
static int parse_string(const char **p, char *buf, size_t n) {
  char q = **p;
  if (q != '\'' && q != '"') return 0;
  const char *end = strchr(*p + 1, q);
  if (!end || (size_t)(end - *p - 1) >= n) return 0;
  memcpy(buf, *p + 1, (size_t)(end - *p - 1));
  buf[end - *p - 1] = '\0';
  *p = end + 1;
  return 1;
}

static int parse_descr(const char *d, npy_header *h) {
  static const struct { const char *code; ml_dtype t; } types[] = {
      {"f4", ML_FLOAT32}, {"f8", ML_FLOAT64}, {"i4", ML_INT32},
      {"i8", ML_INT64},   {"u1", ML_UINT8},   {"b1", ML_UINT8}};
  if (d[0] == '\0' || !strchr("<>|=", d[0])) return 0;
  for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
    if (strcmp(d + 1, types[i].code) == 0) {
      h->dtype = types[i].t;
      h->swap = d[0] == '>' && ml_dtype_size(types[i].t) > 1;
      h->boolean = strcmp(d + 1, "b1") == 0;
      return 1;
    }
  return 0;
}

/* A list of fields, [('a', '<f8'), ...]: skipped to its closing bracket
 * (brackets and parentheses nest; quoted text is skipped whole). */
static int skip_fields(const char **p) {
  int depth = 0;
  do {
    char c = **p;
    if (c == '\0') return 0;
    if (c == '\'' || c == '"') {
      const char *end = strchr(*p + 1, c);
      if (!end) return 0;
      *p = end;
    } else if (c == '[' || c == '(') {
      depth++;
    } else if (c == ']' || c == ')') {
      depth--;
    }
    (*p)++;
  } while (depth > 0);
  return 1;
}

/* A tuple of non-negative integers: (), (3,), (2, 3). Counts every
 * dimension; shape keeps the first ML_MAX_DIMS. */
static int parse_shape(const char **p, npy_header *h) {
  if (**p != '(') return 0;
  (*p)++;
  h->ndim = 0;
  for (;;) {
    skip_space(p);
    if (**p == ')') break;
    if (**p < '0' || **p > '9') return 0;
    char *end;
    errno = 0;
    long long v = strtoll(*p, &end, 10);
    if (errno) return 0;
    if (h->ndim < ML_MAX_DIMS) h->shape[h->ndim] = v;
    h->ndim++;
    *p = end;
    skip_space(p);
    if (**p == ',')
      (*p)++;
    else if (**p != ')')
      return 0;
  }
  (*p)++;
  return 1;
}

/* The dict; the three keys must each appear once, in any order. */
static int parse_dict(const char *s, npy_header *h, char *descr, size_t n) {
  int seen = 0;
  const char *p = s;
  skip_space(&p);
  if (*p++ != '{') return 0;
  for (;;) {
    char key[16];
    skip_space(&p);
    if (*p == '}') break;
    if (!parse_string(&p, key, sizeof key)) return 0;
    skip_space(&p);
    if (*p++ != ':') return 0;
    skip_space(&p);
    if (strcmp(key, "descr") == 0 && !(seen & 1)) {
      if (*p == '[') {
        if (!skip_fields(&p)) return 0;
        h->structured = 1;
      } else if (!parse_string(&p, descr, n)) {
        return 0;
      }
      seen |= 1;
    } else if (strcmp(key, "fortran_order") == 0 && !(seen & 2)) {
      if (strncmp(p, "True", 4) == 0) {
        h->fortran = 1;
        p += 4;
      } else if (strncmp(p, "False", 5) == 0) {
        h->fortran = 0;
        p += 5;
      } else {
        return 0;
      }
      seen |= 2;
    } else if (strcmp(key, "shape") == 0 && !(seen & 4)) {
      if (!parse_shape(&p, h)) return 0;
      seen |= 4;
    } else {
      return 0;
    }
    skip_space(&p);
    if (*p == ',')
      p++;
    else if (*p != '}')
      return 0;
  }
  return seen == 7;
}

static int read_header(FILE *f, const char *path, npy_header *h) {
  unsigned char pre[MAGIC_LEN + 2], len[4];
  if (fread(pre, 1, sizeof pre, f) != sizeof pre ||
      memcmp(pre, MAGIC, MAGIC_LEN) != 0)
    return ml_fail(ML_EIO, "load_npy: '%s' is not a .npy file (bad magic)",
                   path);
  int major = pre[MAGIC_LEN], minor = pre[MAGIC_LEN + 1];
  if (major < 1 || major > 3)
    return ml_fail(ML_EIO, "load_npy: '%s' has unsupported format version "
                   "%d.%d", path, major, minor);
  size_t lenbytes = major == 1 ? 2 : 4, hlen = 0;
  if (fread(len, 1, lenbytes, f) != lenbytes)
    return ml_fail(ML_EIO, "load_npy: truncated header in '%s'", path);
  for (size_t i = lenbytes; i-- > 0;) hlen = hlen << 8 | len[i];
  if (hlen > MAX_HEADER)
    return ml_fail(ML_EIO, "load_npy: corrupt header in '%s' (%zu bytes "
                   "long)", path, hlen);
  char *text = malloc(hlen + 1);
  if (!text) return ml_fail(ML_ENOMEM, "load_npy: out of memory");
  int rc = ML_OK;
  char descr[16];
  if (fread(text, 1, hlen, f) != hlen) {
    rc = ml_fail(ML_EIO, "load_npy: truncated header in '%s'", path);
  } else {
    text[hlen] = '\0';
    if (!parse_dict(text, h, descr, sizeof descr))
      rc = ml_fail(ML_EIO, "load_npy: corrupt header in '%s'", path);
    else if (h->structured)
      rc = ml_fail(ML_EIO, "load_npy: '%s' has a structured dtype (fields), "
                   "which is not supported", path);
    else if (h->ndim > ML_MAX_DIMS)
      rc = ml_fail(ML_EIO, "load_npy: '%s' has %d dimensions (at most %d)",
                   path, h->ndim, ML_MAX_DIMS);
    else if (!parse_descr(descr, h))
      rc = ml_fail(ML_EIO, "load_npy: '%s' has unsupported dtype '%s' "
                   "(supported: <f4 <f8 <i4 <i8 |u1 |b1)", path, descr);
  }
  free(text);
  if (rc) return rc;
  uint64_t count = 1;
  for (int d = 0; d < h->ndim; d++) {
    if (h->shape[d] > 0 && count > (UINT64_C(1) << 40) / (uint64_t)h->shape[d])
      return ml_fail(ML_EIO, "load_npy: corrupt header in '%s' (too many "
                     "elements)", path);
    count *= (uint64_t)h->shape[d];
  }
  h->nbytes = (size_t)count * ml_dtype_size(h->dtype);
  return ML_OK;
}

static void byteswap(void *data, int64_t n, size_t size) {
  unsigned char *p = data;
  for (int64_t i = 0; i < n; i++, p += size)
    for (size_t a = 0, b = size - 1; a < b; a++, b--) {
      unsigned char t = p[a];
      p[a] = p[b];
      p[b] = t;
    }
}

static int truncated(size_t expected, size_t found) {
  return ml_fail(ML_EIO, "load_npy: truncated file (expected %zu bytes of "
                 "data, found %zu)", expected, found);
}

/* The data into a new C-order array; for Fortran order the file holds the
 * transpose's C order, read as the reversed shape, then transposed back.
 * A regular file too short for the data fails before allocating. */
static int read_data(FILE *f, const npy_header *h, ml_array *out) {
  struct stat st;
  long pos = ftell(f);
  if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && pos >= 0 &&
      (uint64_t)(st.st_size - pos) < h->nbytes)
    return truncated(h->nbytes, (size_t)(st.st_size - pos));
  int64_t shape[ML_MAX_DIMS];
  for (int d = 0; d < h->ndim; d++)
    shape[d] = h->fortran ? h->shape[h->ndim - 1 - d] : h->shape[d];
  ml_array r = {0};
  int rc = ml_array_empty(&r, h->dtype, h->ndim, shape, ml_cpu());
  if (rc) return rc;
  size_t got = fread(ml_array_data(&r), 1, h->nbytes, f);
  if (got < h->nbytes) {
    ml_array_release(&r);
    return truncated(h->nbytes, got);
  }
  if (h->swap) byteswap(ml_array_data(&r), ml_array_numel(&r),
                        ml_dtype_size(h->dtype));
  if (h->boolean) { /* NumPy reads any nonzero byte as True */
    uint8_t *b = ml_array_data(&r);
    for (size_t i = 0; i < h->nbytes; i++) b[i] = b[i] != 0;
  }
  if (!h->fortran) return ml_array_commit(out, &r, ML_OK);
  ml_array t = r;
  for (int d = 0; d < h->ndim; d++) {
    t.shape[d] = r.shape[h->ndim - 1 - d];
    t.strides[d] = r.strides[h->ndim - 1 - d];
  }
  rc = ml_clone(out, &t);
  ml_array_release(&r);
  return rc;
}

int ml_load_npy(ml_array *out, const char *path) {
  int fd;
  int rc = ml_io_open_read("load_npy", path, &fd);
  if (rc) return rc;
  FILE *f = fdopen(fd, "rb");
  if (!f) {
    close(fd);
    return ml_fail(ML_ENOMEM, "load_npy: out of memory opening '%s'", path);
  }
  npy_header h = {0};
  rc = read_header(f, path, &h);
  if (!rc) rc = read_data(f, &h, out);
  if (!rc && ferror(f))
    rc = ml_fail(ML_EIO, "load_npy: cannot read '%s': %s", path,
                 strerror(errno));
  fclose(f);
  return rc;
}

/* ---- writing ---- */

static const char *descr_of(ml_dtype t) {
  switch (t) {
    case ML_UINT8: return "|u1";
    case ML_INT32: return "<i4";
    case ML_INT64: return "<i8";
    case ML_FLOAT32: return "<f4";
    default: return "<f8";
  }
}

/* The version 1.0 preamble and header, padded so the data starts at a
 * multiple of 64 bytes, as NumPy writes it. Returns its length. */
static size_t make_header(char *buf, size_t n, const ml_array *a) {
  char shape[ML_MAX_DIMS * 24 + 4];
  size_t k = 0;
  shape[k++] = '(';
  for (int d = 0; d < a->ndim; d++)
    k += (size_t)snprintf(shape + k, sizeof shape - k, "%s%lld",
                          d ? ", " : "", (long long)a->shape[d]);
  if (a->ndim == 1) shape[k++] = ',';
  shape[k++] = ')';
  shape[k] = '\0';
  size_t pre = MAGIC_LEN + 4;
  int len = snprintf(buf + pre, n - pre,
                     "{'descr': '%s', 'fortran_order': False, 'shape': %s, }",
                     descr_of(a->dtype), shape);
  size_t total = (pre + (size_t)len + 1 + 63) / 64 * 64;
  memset(buf + pre + len, ' ', total - pre - (size_t)len - 1);
  buf[total - 1] = '\n';
  memcpy(buf, MAGIC "\x01\x00", MAGIC_LEN + 2);
  size_t hlen = total - pre;
  buf[MAGIC_LEN + 2] = (char)(hlen & 0xff);
  buf[MAGIC_LEN + 3] = (char)(hlen >> 8);
  return total;
}

int ml_save_npy(const char *path, const ml_array *a) {
  ml_array host = {0}, c = {0};
  int rc = ml_to_device(&host, a, ml_cpu());
  if (!rc) rc = ml_contiguous(&c, &host);
  ml_array_release(&host);
  if (rc) return rc;
  char header[512];
  size_t hlen = make_header(header, sizeof header, &c);
  FILE *f = fopen(path, "wb");
  if (!f) {
    rc = ml_fail(ML_EIO, "save_npy: cannot open '%s': %s", path,
                 strerror(errno));
  } else {
    size_t nbytes = ml_array_nbytes(&c);
    int ok = fwrite(header, 1, hlen, f) == hlen &&
             fwrite(ml_array_data(&c), 1, nbytes, f) == nbytes;
    if (fclose(f) != 0) ok = 0;
    if (!ok)
      rc = ml_fail(ML_EIO, "save_npy: cannot write '%s': %s", path,
                   strerror(errno));
  }
  ml_array_release(&c);
  return rc;
}
