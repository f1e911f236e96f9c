/* PLACEHOLDER: replaced by the area owner. */
#include "format.h"

#include <stdio.h>
#include <stdlib.h>

#include "status.h"

int ml_format(const ml_array *host, ml_device shown, char **out) {
  char dev[ML_DEVICE_NAME_MAX], shape[ML_SHAPE_STR_MAX];
  *out = malloc(256);
  if (!*out) return ml_fail(ML_ENOMEM, "tostring: out of memory");
  snprintf(*out, 256, "[%s %s %s]", ml_dtype_name(host->dtype),
           ml_shape_str(host->ndim, host->shape, shape, sizeof shape),
           ml_device_name(shown, dev));
  return ML_OK;
}
