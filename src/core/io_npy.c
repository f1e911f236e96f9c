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
#include "io_npy.h"
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

/* Exactly n bytes from src, or fewer at its end. */
static size_t source_read(ml_npy_source *src, void *buf, size_t n) {
  size_t got = src->read(src->ctx, buf, n);
  if (src->left >= 0) src->left -= (int64_t)got < src->left
                                       ? (int64_t)got : src->left;
  return got;
}

static int read_header(ml_npy_source *src, npy_header *h) {
  const char *op = src->op, *name = src->name;
  unsigned char pre[MAGIC_LEN + 2], len[4];
  if (source_read(src, pre, sizeof pre) != sizeof pre ||
      memcmp(pre, MAGIC, MAGIC_LEN) != 0)
    return ml_fail(ML_EIO, "%s: %s is not a .npy file (bad magic)", op, name);
  int major = pre[MAGIC_LEN], minor = pre[MAGIC_LEN + 1];
  if (major < 1 || major > 3)
    return ml_fail(ML_EIO, "%s: %s has unsupported format version %d.%d", op,
                   name, major, minor);
  size_t lenbytes = major == 1 ? 2 : 4, hlen = 0;
  if (source_read(src, len, lenbytes) != lenbytes)
    return ml_fail(ML_EIO, "%s: truncated header in %s", op, name);
  for (size_t i = lenbytes; i-- > 0;) hlen = hlen << 8 | len[i];
  if (hlen > MAX_HEADER)
    return ml_fail(ML_EIO, "%s: corrupt header in %s (%zu bytes long)", op,
                   name, hlen);
  char *text = malloc(hlen + 1);
  if (!text) return ml_fail(ML_ENOMEM, "%s: out of memory", op);
  int rc = ML_OK;
  char descr[16];
  if (source_read(src, text, hlen) != hlen) {
    rc = ml_fail(ML_EIO, "%s: truncated header in %s", op, name);
  } else {
    text[hlen] = '\0';
    if (!parse_dict(text, h, descr, sizeof descr))
      rc = ml_fail(ML_EIO, "%s: corrupt header in %s", op, name);
    else if (h->structured)
      rc = ml_fail(ML_EIO, "%s: %s has a structured dtype (fields), which is "
                   "not supported", op, name);
    else if (h->ndim > ML_MAX_DIMS)
      rc = ml_fail(ML_EIO, "%s: %s has %d dimensions (at most %d)", op, name,
                   h->ndim, ML_MAX_DIMS);
    else if (!parse_descr(descr, h))
      rc = ml_fail(ML_EIO, "%s: %s has unsupported dtype '%s' (supported: "
                   "<f4 <f8 <i4 <i8 |u1 |b1)", op, name, descr);
  }
  free(text);
  if (rc) return rc;
  uint64_t count = 1;
  for (int d = 0; d < h->ndim; d++) {
    if (h->shape[d] > 0 && count > (UINT64_C(1) << 40) / (uint64_t)h->shape[d])
      return ml_fail(ML_EIO, "%s: corrupt header in %s (too many elements)",
                     op, name);
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

static int truncated(const char *op, size_t expected, size_t found) {
  return ml_fail(ML_EIO, "%s: truncated file (expected %zu bytes of data, "
                 "found %zu)", op, expected, found);
}

/* The data into a new C-order array; for Fortran order the file holds the
 * transpose's C order, read as the reversed shape, then transposed back.
 * A source known to be too short for the data fails before allocating. */
static int read_data(ml_npy_source *src, const npy_header *h,
                     ml_array *out) {
  if (src->left >= 0 && (uint64_t)src->left < h->nbytes)
    return truncated(src->op, h->nbytes, (size_t)src->left);
  int64_t shape[ML_MAX_DIMS];
  for (int d = 0; d < h->ndim; d++)
    shape[d] = h->fortran ? h->shape[h->ndim - 1 - d] : h->shape[d];
  ml_array r = {0};
  int rc = ml_array_empty(&r, h->dtype, h->ndim, shape, ml_cpu());
  if (rc) return rc;
  size_t got = source_read(src, ml_array_data(&r), h->nbytes);
  if (got < h->nbytes) {
    ml_array_release(&r);
    return truncated(src->op, h->nbytes, got);
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

int ml_npy_read(ml_npy_source *src, ml_array *out) {
  npy_header h = {0};
  int rc = read_header(src, &h);
  return rc ? rc : read_data(src, &h, out);
}

static size_t file_read(void *f, void *buf, size_t n) {
  return fread(buf, 1, n, f);
}

int ml_load_npy(ml_array *out, const char *path) {
  int fd;
  int rc = ml_io_open_read("load_npy", path, &fd);
  if (rc) return rc;
  struct stat st;
  int64_t size = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? st.st_size : -1;
  FILE *f = fdopen(fd, "rb");
  if (!f) {
    close(fd);
    return ml_fail(ML_ENOMEM, "load_npy: out of memory opening '%s'", path);
  }
  char name[ML_NPY_NAME_MAX];
  snprintf(name, sizeof name, "'%s'", path);
  ml_npy_source src = {file_read, f, "load_npy", name, size};
  rc = ml_npy_read(&src, out);
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

size_t ml_npy_header(char *buf, size_t n, const ml_array *a) {
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
  char header[ML_NPY_HEADER_MAX];
  size_t hlen = ml_npy_header(header, sizeof header, &c);
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
