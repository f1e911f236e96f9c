/* Printing arrays in the Torch7 style.
 *
 * All printed elements share one number format (integers, fixed or
 * scientific, chosen from the largest and smallest magnitudes); arrays of
 * more than ML_FORMAT_THRESHOLD elements show only the first and last
 * ML_FORMAT_EDGE entries of each dimension around a "..."; arrays of more
 * than two dimensions print as 2-D slices headed "(i,j,.,.) =". The footer
 * names dtype, shape and device: "[float64 2x3 cpu]". */
#ifndef ML_FORMAT_H
#define ML_FORMAT_H

#include "array.h"

#define ML_FORMAT_THRESHOLD 1000
#define ML_FORMAT_EDGE 3

/* host: a CPU array (the binding copies device arrays first); shown: the
 * device the footer names. *out is malloc'd. */
int ml_format(const ml_array *host, ml_device shown, char **out);

#endif
