/* Printing arrays in the Torch7 style.
 *
 * All printed elements share one number format, chosen from the printed
 * finite values: integer dtypes print as integers; float arrays whose
 * values are all integral and below 1e8 in magnitude print without
 * decimals ("  1  2", as Torch7); otherwise "%.4f", except that a largest
 * magnitude of 1e5 or more or a smallest nonzero magnitude below 1e-4 gives
 * "%.4e" for every element (no common scale factor line). nan, inf and
 * -inf print as such. Entries are right-aligned in one width that leaves a
 * place for a minus sign, and separated by one space.
 *
 * A 0-d array prints its value; a 1-D array one row; a 2-D array one line
 * per row; more dimensions print as 2-D blocks headed "(i,j,.,.) =" (1-based
 * leading indices, the last index varying fastest) with a blank line between
 * blocks. Arrays of more than ML_FORMAT_THRESHOLD elements show only the
 * first and last ML_FORMAT_EDGE entries of each longer dimension, with a
 * "..." column, a "..." line or a "..." block in place of the rest; the
 * number format then comes from the printed elements only. An empty array
 * prints only the footer, which names dtype, shape and device on the last
 * line: "[float64 2x3 cpu]", "[int64 5 cpu]", "[float64 scalar cpu]". */
#ifndef ML_FORMAT_H
#define ML_FORMAT_H

#include "array.h"

#define ML_FORMAT_THRESHOLD 1000
#define ML_FORMAT_EDGE 3

/* host: a CPU array (the binding copies device arrays first); shown: the
 * device the footer names. *out is malloc'd. */
int ml_format(const ml_array *host, ml_device shown, char **out);

#endif
