/* Printing arrays in the Torch7 style.
 *
 * All printed elements share one number format, chosen from the printed
 * finite values: integer dtypes print as integers; float arrays whose
 * values are all integral and below 1e8 in magnitude print without
 * decimals ("  1  2", as Torch7); otherwise "%.4f", except that a largest
 * magnitude of 1e5 or more or a smallest nonzero magnitude below 1e-4 gives
 * "%.4e" for every element (no common scale factor line). 4 is the default
 * precision of the print options below, which can also force or forbid the
 * scientific format. nan, inf and -inf print as such. Entries are
 * right-aligned in one width that leaves a place for a minus sign, and
 * separated by one space.
 *
 * A 0-d array prints its value; a 1-D array one row; a 2-D array one line
 * per row; more dimensions print as 2-D blocks headed "(i,j,.,.) =" (1-based
 * leading indices, the last index varying fastest) with a blank line between
 * blocks. Arrays of more than `threshold` elements show only the first and
 * last `edgeitems` entries of each dimension longer than twice that, with a
 * "..." column, a "..." line or a "..." block in place of the rest; the
 * number format then comes from the printed elements only. An empty array
 * prints only the footer, which names dtype, shape and device on the last
 * line: "[float64 2x3 cpu]", "[int64 5 cpu]", "[float64 scalar cpu]".
 *
 * Lines longer than `linewidth` characters are broken: a 1-D row goes on
 * over as many lines as it needs; the columns of a matrix (of each 2-D
 * block) are split into groups that fit, printed one after the other,
 * each headed "Columns a to b" (1-based, as Torch7) and separated by a
 * blank line. A "..." column stays with the columns before it. */
#ifndef ML_FORMAT_H
#define ML_FORMAT_H

#include "array.h"

/* The print options, those of NumPy's set_printoptions with PyTorch's
 * sci_mode: precision, the digits after the decimal point (at most
 * ML_FORMAT_PRECISION_MAX); threshold, edgeitems and linewidth as above
 * (INT64_MAX: no limit); sci_mode ML_SCI_ALWAYS prints every float array
 * in the scientific format, integral ones too, ML_SCI_NEVER never (values
 * of 1e8 or more then print with decimals), ML_SCI_AUTO as above. */
typedef enum { ML_SCI_AUTO, ML_SCI_NEVER, ML_SCI_ALWAYS } ml_sci_mode;

typedef struct {
  int precision;
  int64_t threshold, edgeitems, linewidth;
  ml_sci_mode sci_mode;
} ml_print_options;

#define ML_FORMAT_PRECISION_MAX 50

/* The defaults, an initializer: precision 4, threshold 1000, edgeitems 3,
 * no line limit, automatic scientific format. */
#define ML_PRINT_DEFAULTS                                       \
  {.precision = 4, .threshold = 1000, .edgeitems = 3,           \
   .linewidth = INT64_MAX, .sci_mode = ML_SCI_AUTO}

/* host: a CPU array (the binding copies device arrays first); shown: the
 * device the footer names. *out is malloc'd. */
int ml_format(const ml_array *host, ml_device shown,
              const ml_print_options *opt, char **out);

#endif
