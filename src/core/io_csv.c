/* CSV files of numbers, streamed: read in chunks, each complete line split
 * into fields and parsed in the result's dtype as it arrives, so that
 * memory holds the values and one line, whatever the input (a device such
 * as /dev/zero, a file that is not text). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "copy.h"
#include "io.h"
#include "status.h"

/* A growing buffer of elements of one size. */
typedef struct {
  char *data;
  size_t size, count, cap;
} values;

static int push_value(values *v, const void *x) {
  if (v->count == v->cap) {
    size_t cap = v->cap ? 2 * v->cap : 1024;
    char *p = realloc(v->data, cap * v->size);
    if (!p) return ml_fail(ML_ENOMEM, "load_csv: out of memory");
    v->data = p;
    v->cap = cap;
  }
  memcpy(v->data + v->count * v->size, x, v->size);
  v->count++;
  return ML_OK;
}

static int is_blank(char c) { return c == ' ' || c == '\t'; }

typedef struct {
  const char *path;
  long long line;
  int column;
} where;

/* The NUL-terminated field s parsed as dtype t into out. */
static int parse_field(const char *s, ml_dtype t, void *out, where w) {
  char *end;
  if (*s == '\0')
    return ml_fail(ML_EIO, "load_csv: '%s' line %lld, column %d: empty field",
                   w.path, w.line, w.column);
  errno = 0;
  if (t == ML_FLOAT64) {
    double v = strtod(s, &end);
    memcpy(out, &v, sizeof v);
  } else if (t == ML_FLOAT32) {
    float v = strtof(s, &end);
    memcpy(out, &v, sizeof v);
  } else {
    long long v = strtoll(s, &end, 10);
    if (*end == '\0' && (errno == ERANGE ||
                         !ml_scalar_fits(ml_scalar_int(v), t)))
      return ml_fail(ML_EIO, "load_csv: '%s' line %lld, column %d: %s is out "
                     "of range for %s", w.path, w.line, w.column, s,
                     ml_dtype_name(t));
    if (*end != '\0')
      return ml_fail(ML_EIO, "load_csv: '%s' line %lld, column %d: '%.40s' is "
                     "not an integer", w.path, w.line, w.column, s);
    ml_scalar_store(out, t, ml_scalar_int(v));
  }
  if (*end != '\0')
    return ml_fail(ML_EIO, "load_csv: '%s' line %lld, column %d: '%.40s' is "
                   "not a number", w.path, w.line, w.column, s);
  return ML_OK;
}

/* Parses one line [s, e) (e points at its end, which may be overwritten)
 * into v; *ncols is the number of fields (set by the first line). */
static int parse_line(char *s, char *e, const ml_csv_options *opt, values *v,
                      int *ncols, where w) {
  char buf[8];
  int col = 0;
  for (char *f = s;; ) {
    char *fe = f;
    while (fe < e && *fe != opt->delimiter) fe++;
    char *a = f, *b = fe;
    while (a < b && is_blank(*a)) a++;
    while (b > a && is_blank(b[-1])) b--;
    char saved = *b;
    *b = '\0';
    w.column = ++col;
    int rc = parse_field(a, opt->dtype, buf, w);
    *b = saved;
    if (!rc) rc = push_value(v, buf);
    if (rc) return rc;
    if (fe == e) break;
    f = fe + 1;
  }
  if (*ncols < 0) *ncols = col;
  if (col != *ncols)
    return ml_fail(ML_EIO, "load_csv: '%s' line %lld has %d fields, expected "
                   "%d", w.path, w.line, col, *ncols);
  return ML_OK;
}

/* The longest line read: past it the input is not a CSV file of numbers
 * (a line of a million float64 fields takes about 24 MiB). */
#define LINE_MAX_BYTES ((size_t)64 << 20)
#define CHUNK ((size_t)1 << 16)

typedef struct {
  const ml_csv_options *opt;
  values *v;
  int ncols;
  where w;
} reader;

/* One line [p, e) (e may be overwritten): counted, skipped when blank or
 * among the first opt->skip, else parsed. */
static int take_line(reader *r, char *p, char *e) {
  r->w.line++;
  if (e > p && e[-1] == '\r') e--;
  char *q = p;
  while (q < e && is_blank(*q)) q++;
  if (r->w.line <= r->opt->skip || q == e) return ML_OK;
  return parse_line(p, e, r->opt, r->v, &r->ncols, r->w);
}

/* Parses the complete lines of buf[0, *len) and moves what is left (the
 * start of a line) to the front; at the end of the input (eof), that too
 * is a line. buf has room for one more byte than *len. */
static int take_lines(reader *r, char *buf, size_t *len, int eof) {
  char *p = buf, *end = buf + *len;
  for (;;) {
    char *nl = memchr(p, '\n', (size_t)(end - p));
    if (!nl) break;
    int rc = take_line(r, p, nl);
    if (rc) return rc;
    p = nl + 1;
  }
  if (eof && p < end) {
    int rc = take_line(r, p, end);
    if (rc) return rc;
    p = end;
  }
  *len = (size_t)(end - p);
  memmove(buf, p, *len);
  return ML_OK;
}

/* The error for a NUL byte at buf[at], buf holding the start of line
 * r->w.line + 1 onwards. */
static int nul_byte(const reader *r, const char *buf, size_t at) {
  long long line = r->w.line + 1;
  for (size_t i = 0; i < at; i++) line += buf[i] == '\n';
  return ml_fail(ML_EIO, "load_csv: '%s' line %lld has a NUL byte (not a "
                 "text file)", r->w.path, line);
}

/* Reads fd to its end in chunks, parsing lines as they complete. */
static int read_all(int fd, reader *r) {
  size_t cap = CHUNK, len = 0;
  char *buf = malloc(cap + 1);
  int rc = buf ? ML_OK : ml_fail(ML_ENOMEM, "load_csv: out of memory");
  while (!rc) {
    if (len == cap) { /* one line fills the buffer */
      if (cap >= LINE_MAX_BYTES) {
        rc = ml_fail(ML_EIO, "load_csv: '%s' line %lld is longer than %zu "
                     "MiB (not a CSV file of numbers?)", r->w.path,
                     r->w.line + 1, LINE_MAX_BYTES >> 20);
        break;
      }
      char *p = realloc(buf, 2 * cap + 1);
      if (!p) {
        rc = ml_fail(ML_ENOMEM, "load_csv: out of memory reading '%s'",
                     r->w.path);
        break;
      }
      buf = p;
      cap *= 2;
    }
    ssize_t n = read(fd, buf + len, cap - len);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      rc = ml_fail(ML_EIO, "load_csv: cannot read '%s': %s", r->w.path,
                   strerror(errno));
      break;
    }
    const char *nul = memchr(buf + len, '\0', (size_t)n);
    if (nul) {
      rc = nul_byte(r, buf, (size_t)(nul - buf));
      break;
    }
    len += (size_t)n;
    rc = take_lines(r, buf, &len, n == 0);
    if (n == 0) break;
  }
  free(buf);
  return rc;
}

int ml_load_csv(ml_array *out, const char *path, const ml_csv_options *opt) {
  if (opt->delimiter == '\n' || opt->delimiter == '\r' ||
      opt->delimiter == '\0')
    return ml_fail(ML_EINVAL, "load_csv: the delimiter cannot be a line end");
  int fd;
  int rc = ml_io_open_read("load_csv", path, &fd);
  if (rc) return rc;
  values v = {NULL, ml_dtype_size(opt->dtype), 0, 0};
  reader r = {opt, &v, -1, {path, 0, 0}};
  rc = read_all(fd, &r);
  close(fd);
  if (!rc) {
    int64_t shape[2] = {r.ncols < 0 ? 0 : (int64_t)(v.count / (size_t)r.ncols),
                        r.ncols < 0 ? 0 : r.ncols};
    rc = ml_from_host(out, opt->dtype, 2, shape, ml_cpu(),
                      v.data ? v.data : "");
  }
  free(v.data);
  return rc;
}

/* ---- writing ---- */

static void write_value(FILE *f, const char *p, ml_dtype t) {
  switch (t) {
    case ML_UINT8: fprintf(f, "%u", (unsigned)*(const uint8_t *)p); break;
    case ML_INT32: fprintf(f, "%d", (int)*(const int32_t *)p); break;
    case ML_INT64: fprintf(f, "%lld", (long long)*(const int64_t *)p); break;
    case ML_FLOAT32: fprintf(f, "%.9g", (double)*(const float *)p); break;
    default: fprintf(f, "%.17g", *(const double *)p); break;
  }
}

int ml_save_csv(const char *path, const ml_array *a, char delimiter) {
  char sbuf[ML_SHAPE_STR_MAX];
  if (a->ndim < 1 || a->ndim > 2)
    return ml_fail(ML_EINVAL, "save_csv: expected a 1-D or 2-D array, got "
                   "shape %s",
                   ml_shape_str(a->ndim, a->shape, sbuf, sizeof sbuf));
  ml_array host = {0}, c = {0};
  int rc = ml_to_device(&host, a, ml_cpu());
  if (!rc) rc = ml_contiguous(&c, &host);
  ml_array_release(&host);
  if (rc) return rc;
  FILE *f = fopen(path, "w");
  if (!f) {
    rc = ml_fail(ML_EIO, "save_csv: cannot open '%s': %s", path,
                 strerror(errno));
  } else {
    int64_t rows = c.shape[0], cols = c.ndim == 2 ? c.shape[1] : 1;
    size_t size = ml_dtype_size(c.dtype);
    const char *p = ml_array_data(&c);
    for (int64_t i = 0; i < rows; i++) {
      for (int64_t j = 0; j < cols; j++, p += size) {
        if (j) fputc(delimiter, f);
        write_value(f, p, c.dtype);
      }
      fputc('\n', f);
    }
    int ok = !ferror(f);
    if (fclose(f) != 0) ok = 0;
    if (!ok)
      rc = ml_fail(ML_EIO, "save_csv: cannot write '%s': %s", path,
                   strerror(errno));
  }
  ml_array_release(&c);
  return rc;
}
