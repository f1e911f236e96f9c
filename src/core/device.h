/* Devices: the CPU, or CUDA device N; and the process-wide defaults. */
#ifndef ML_DEVICE_H
#define ML_DEVICE_H

#include "dtype.h"

typedef enum { ML_CPU = 0, ML_CUDA = 1, ML_NDEVICE_KINDS } ml_device_kind;

typedef struct {
  int kind;  /* ml_device_kind */
  int index; /* 0 for the CPU */
} ml_device;

#define ML_DEVICE_NAME_MAX 16

ml_device ml_cpu(void);
int ml_device_equal(ml_device a, ml_device b);
/* "cpu", "cuda" (device 0) or "cuda:N". Returns 0 on a malformed name. */
int ml_device_parse(const char *name, ml_device *out);
/* Writes "cpu" or "cuda:N" into buf (ML_DEVICE_NAME_MAX bytes). */
const char *ml_device_name(ml_device d, char *buf);

ml_device ml_default_device(void);
void ml_set_default_device(ml_device d);
ml_dtype ml_default_dtype(void);
void ml_set_default_dtype(ml_dtype t);

#endif
