/* CSV files of numbers: read whole into memory, split into lines and
 * fields, each field parsed in the result's dtype. */
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

/* The whole file, NUL-terminated, into *text. */
static int slurp(const char *path, char **text, size_t *len) {
  int fd;
  int rc = ml_io_open_read("load_csv", path, &fd);
  if (rc) return rc;
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  while (buf) {
    if (n + 1 == cap) {
      char *p = realloc(buf, 2 * cap);
      if (!p) break;
      buf = p;
      cap *= 2;
    }
    ssize_t r = read(fd, buf + n, cap - 1 - n);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      rc = ml_fail(ML_EIO, "load_csv: cannot read '%s': %s", path,
                   strerror(errno));
      break;
    }
    if (r == 0) {
      buf[n] = '\0';
      close(fd);
      *text = buf;
      *len = n;
      return ML_OK;
    }
    n += (size_t)r;
  }
  close(fd);
  free(buf);
  return rc ? rc : ml_fail(ML_ENOMEM, "load_csv: out of memory reading '%s'",
                           path);
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

static int parse(char *text, size_t len, const ml_csv_options *opt,
                 values *v, int *ncols, const char *path) {
  where w = {path, 0, 0};
  char *p = text, *end = text + len;
  while (p < end) {
    char *nl = memchr(p, '\n', (size_t)(end - p));
    char *e = nl ? nl : end, *next = nl ? nl + 1 : end;
    w.line++;
    if (e > p && e[-1] == '\r') e--;
    char *q = p;
    while (q < e && is_blank(*q)) q++;
    if (w.line > opt->skip && q < e) {
      int rc = parse_line(p, e, opt, v, ncols, w);
      if (rc) return rc;
    }
    p = next;
  }
  return ML_OK;
}

int ml_load_csv(ml_array *out, const char *path, const ml_csv_options *opt) {
  if (opt->delimiter == '\n' || opt->delimiter == '\r' ||
      opt->delimiter == '\0')
    return ml_fail(ML_EINVAL, "load_csv: the delimiter cannot be a line end");
  char *text = NULL;
  size_t len = 0;
  int rc = slurp(path, &text, &len);
  if (rc) return rc;
  values v = {NULL, ml_dtype_size(opt->dtype), 0, 0};
  int ncols = -1;
  rc = parse(text, len, opt, &v, &ncols, path);
  free(text);
  if (!rc) {
    int64_t shape[2] = {ncols < 0 ? 0 : (int64_t)(v.count / (size_t)ncols),
                        ncols < 0 ? 0 : ncols};
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
