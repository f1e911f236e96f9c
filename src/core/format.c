/* Printing arrays in the Torch7 style: one number format shared by every
 * printed element, right-aligned columns, the middle of long dimensions cut
 * out, and a footer naming dtype, shape and device (see format.h). */
#include "format.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "status.h"

/* The longest element text: a double's 309 integer digits in the fixed
 * format, its sign, the point and the decimals. */
#define ELEMENT_MAX (320 + ML_FORMAT_PRECISION_MAX)

/* A growable string; a failed allocation sticks and is reported once. */
typedef struct {
  char *s;
  size_t len, cap;
  int oom;
} strbuf;

static void sb_add(strbuf *b, const char *s, size_t n) {
  if (b->oom) return;
  if (b->len + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + n + 1) cap *= 2;
    char *p = realloc(b->s, cap);
    if (!p) {
      b->oom = 1;
      return;
    }
    b->s = p;
    b->cap = cap;
  }
  memcpy(b->s + b->len, s, n);
  b->len += n;
  b->s[b->len] = '\0';
}

static void sb_str(strbuf *b, const char *s) { sb_add(b, s, strlen(s)); }

static void sb_spaces(strbuf *b, int n) {
  static const char spaces[] = "                                ";
  while (n > 0) {
    int k = n < (int)sizeof spaces - 1 ? n : (int)sizeof spaces - 1;
    sb_add(b, spaces, (size_t)k);
    n -= k;
  }
}

typedef enum { NUM_INTEGER, NUM_FIXED, NUM_SCIENTIFIC } num_style;

typedef struct {
  const ml_array *a;
  const ml_print_options *opt;
  const char *base; /* address of element 0 */
  size_t esize;
  int cut;          /* whether dimensions longer than 2 * edgeitems are cut */
  /* statistics of the printed finite values, then the format they give */
  int integral;
  double maxabs, minabs; /* minabs: smallest nonzero magnitude */
  num_style style;
  int width;
  strbuf out;
} printer;

static int is_cut(const printer *p, int d) {
  return p->cut && p->a->shape[d] > 2 * p->opt->edgeitems;
}

/* Number of positions printed along dimension d, the "..." included. */
static int64_t shown_count(const printer *p, int d) {
  return is_cut(p, d) ? 2 * p->opt->edgeitems + 1 : p->a->shape[d];
}

/* The index at position k of dimension d, or -1 for the "...". */
static int64_t shown_index(const printer *p, int d, int64_t k) {
  int64_t edge = p->opt->edgeitems;
  if (!is_cut(p, d) || k < edge) return k;
  if (k == edge) return -1;
  return p->a->shape[d] - 2 * edge - 1 + k;
}

/* The width of position k of dimension d: an element's or the "...". */
static int64_t shown_width(const printer *p, int d, int64_t k) {
  return shown_index(p, d, k) < 0 ? 3 : p->width;
}

/* The end of the line of positions of dimension d that starts at k0: as
 * many as fit in the line width, at least one, and a "..." always goes
 * with the positions before it. */
static int64_t line_end(const printer *p, int d, int64_t k0) {
  int64_t n = shown_count(p, d), len = shown_width(p, d, k0), k = k0 + 1;
  for (; k < n; k++) {
    int64_t w = shown_width(p, d, k);
    if (shown_index(p, d, k) >= 0 && len + 1 + w > p->opt->linewidth) break;
    len += 1 + w;
  }
  return k;
}

static ml_scalar element(const printer *p, int64_t off) {
  return ml_scalar_load(p->base + off * (int64_t)p->esize, p->a->dtype);
}

/* The text of the element at off (in elements from element 0) in the
 * chosen style; returns its length. */
static int element_text(const printer *p, int64_t off, char *buf, size_t n) {
  ml_scalar v = element(p, off);
  if (v.is_int) return snprintf(buf, n, "%lld", (long long)v.i);
  if (isnan(v.f)) return snprintf(buf, n, "nan");
  if (isinf(v.f)) return snprintf(buf, n, v.f > 0 ? "inf" : "-inf");
  switch (p->style) {
    case NUM_INTEGER: return snprintf(buf, n, "%.0f", v.f);
    case NUM_FIXED: return snprintf(buf, n, "%.*f", p->opt->precision, v.f);
    default: return snprintf(buf, n, "%.*e", p->opt->precision, v.f);
  }
}

typedef void (*element_fn)(printer *p, int64_t off);

/* Calls fn on every printed element of dimensions d and beyond. */
static void visit(printer *p, int d, int64_t off, element_fn fn) {
  if (d == p->a->ndim) {
    fn(p, off);
    return;
  }
  int64_t n = shown_count(p, d);
  for (int64_t k = 0; k < n; k++) {
    int64_t i = shown_index(p, d, k);
    if (i >= 0) visit(p, d + 1, off + i * p->a->strides[d], fn);
  }
}

static void gather_stats(printer *p, int64_t off) {
  ml_scalar v = element(p, off);
  if (v.is_int || !isfinite(v.f)) return;
  double m = fabs(v.f);
  if (floor(v.f) != v.f || m >= 1e8) p->integral = 0;
  if (m > p->maxabs) p->maxabs = m;
  if (m > 0 && m < p->minabs) p->minabs = m;
}

/* Every column leaves one place for a minus sign. */
static void gather_width(printer *p, int64_t off) {
  char buf[ELEMENT_MAX];
  int n = element_text(p, off, buf, sizeof buf);
  if (buf[0] != '-') n++;
  if (n > p->width) p->width = n;
}

static void choose_style(printer *p) {
  ml_sci_mode sci = p->opt->sci_mode;
  if (sci == ML_SCI_ALWAYS)
    p->style = NUM_SCIENTIFIC;
  else if (p->integral)
    p->style = NUM_INTEGER;
  else if (sci == ML_SCI_NEVER)
    p->style = NUM_FIXED;
  else if (p->maxabs >= 1e5 || p->minabs < 1e-4)
    p->style = NUM_SCIENTIFIC;
  else
    p->style = NUM_FIXED;
}

static void emit_element(printer *p, int64_t off) {
  char buf[ELEMENT_MAX];
  int n = element_text(p, off, buf, sizeof buf);
  sb_spaces(&p->out, p->width - n);
  sb_add(&p->out, buf, (size_t)n);
}

/* One line: positions [k0, k1) of the last dimension d. */
static void emit_line(printer *p, int d, int64_t off, int64_t k0, int64_t k1) {
  for (int64_t k = k0; k < k1; k++) {
    int64_t i = shown_index(p, d, k);
    if (k > k0) sb_str(&p->out, " ");
    if (i < 0)
      sb_str(&p->out, "...");
    else
      emit_element(p, off + i * p->a->strides[d]);
  }
  sb_str(&p->out, "\n");
}

/* A 1-D array: one row, over as many lines as the line width asks. */
static void emit_vector(printer *p) {
  int64_t n = shown_count(p, 0);
  for (int64_t k = 0, end; k < n; k = end) {
    end = line_end(p, 0, k);
    emit_line(p, 0, 0, k, end);
  }
}

/* "Columns a to b" for the group of positions [k0, k1) of dimension d,
 * which starts with an element: the 1-based indices of its first and last
 * elements. */
static void emit_columns_header(printer *p, int d, int64_t k0, int64_t k1) {
  char buf[64];
  int64_t last = k1 - 1;
  if (shown_index(p, d, last) < 0) last--;
  snprintf(buf, sizeof buf, "Columns %lld to %lld\n",
           (long long)shown_index(p, d, k0) + 1,
           (long long)shown_index(p, d, last) + 1);
  sb_str(&p->out, buf);
}

/* The matrix of the last two dimensions at off, its columns in groups
 * that fit the line width. */
static void emit_matrix(printer *p, int64_t off) {
  int d = p->a->ndim - 2;
  int64_t nrows = shown_count(p, d), ncols = shown_count(p, d + 1);
  for (int64_t c = 0, end; c < ncols; c = end) {
    end = line_end(p, d + 1, c);
    if (c > 0) sb_str(&p->out, "\n");
    if (c > 0 || end < ncols) emit_columns_header(p, d + 1, c, end);
    for (int64_t k = 0; k < nrows; k++) {
      int64_t i = shown_index(p, d, k);
      if (i < 0)
        sb_str(&p->out, "...\n");
      else
        emit_line(p, d + 1, off + i * p->a->strides[d], c, end);
    }
  }
}

/* Arrays of more than two dimensions: one block per matrix, headed by its
 * 1-based leading indices, blocks separated by a blank line. */
static void emit_blocks(printer *p, int d, int64_t off, int64_t *index,
                        int *first) {
  int ndim = p->a->ndim;
  if (d == ndim - 2) {
    char buf[32];
    if (!*first) sb_str(&p->out, "\n");
    *first = 0;
    sb_str(&p->out, "(");
    for (int j = 0; j < d; j++) {
      snprintf(buf, sizeof buf, "%lld,", (long long)index[j] + 1);
      sb_str(&p->out, buf);
    }
    sb_str(&p->out, ".,.) =\n");
    emit_matrix(p, off);
    return;
  }
  int64_t n = shown_count(p, d);
  for (int64_t k = 0; k < n; k++) {
    int64_t i = shown_index(p, d, k);
    if (i < 0) {
      if (!*first) sb_str(&p->out, "\n");
      *first = 0;
      sb_str(&p->out, "...\n");
      continue;
    }
    index[d] = i;
    emit_blocks(p, d + 1, off + i * p->a->strides[d], index, first);
  }
}

static void emit_body(printer *p) {
  const ml_array *a = p->a;
  visit(p, 0, 0, gather_stats);
  choose_style(p);
  if (a->ndim == 0) {
    char buf[ELEMENT_MAX];
    int n = element_text(p, 0, buf, sizeof buf);
    sb_add(&p->out, buf, (size_t)n);
    sb_str(&p->out, "\n");
    return;
  }
  visit(p, 0, 0, gather_width);
  if (a->ndim == 1) {
    emit_vector(p);
  } else if (a->ndim == 2) {
    emit_matrix(p, 0);
  } else {
    int64_t index[ML_MAX_DIMS];
    int first = 1;
    emit_blocks(p, 0, 0, index, &first);
  }
}

int ml_format(const ml_array *host, ml_device shown,
              const ml_print_options *opt, char **out) {
  printer p = {.a = host,
               .opt = opt,
               .base = ml_array_data(host),
               .esize = ml_dtype_size(host->dtype),
               .cut = ml_array_numel(host) > opt->threshold,
               .integral = 1,
               .minabs = HUGE_VAL};
  char dev[ML_DEVICE_NAME_MAX], shape[ML_SHAPE_STR_MAX];
  *out = NULL;
  if (ml_array_numel(host) > 0) emit_body(&p);
  sb_str(&p.out, "[");
  sb_str(&p.out, ml_dtype_name(host->dtype));
  sb_str(&p.out, " ");
  sb_str(&p.out, ml_shape_str(host->ndim, host->shape, shape, sizeof shape));
  sb_str(&p.out, " ");
  sb_str(&p.out, ml_device_name(shown, dev));
  sb_str(&p.out, "]");
  if (p.out.oom) {
    free(p.out.s);
    return ml_fail(ML_ENOMEM, "tostring: out of memory");
  }
  *out = p.out.s;
  return ML_OK;
}
