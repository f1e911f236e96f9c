#include "device.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static ml_device default_device = {ML_CPU, 0};
static ml_dtype default_dtype = ML_FLOAT64;

ml_device ml_cpu(void) {
  ml_device d = {ML_CPU, 0};
  return d;
}

int ml_device_equal(ml_device a, ml_device b) {
  return a.kind == b.kind && a.index == b.index;
}

int ml_device_parse(const char *name, ml_device *out) {
  if (strcmp(name, "cpu") == 0) {
    *out = ml_cpu();
    return 1;
  }
  if (strncmp(name, "cuda", 4) != 0) return 0;
  out->kind = ML_CUDA;
  out->index = 0;
  if (name[4] == '\0') return 1;
  if (name[4] != ':' || name[5] < '0' || name[5] > '9') return 0;
  char *end;
  long index = strtol(name + 5, &end, 10);
  if (*end != '\0' || index > 1024) return 0;
  out->index = (int)index;
  return 1;
}

const char *ml_device_name(ml_device d, char *buf) {
  if (d.kind == ML_CPU)
    snprintf(buf, ML_DEVICE_NAME_MAX, "cpu");
  else
    snprintf(buf, ML_DEVICE_NAME_MAX, "cuda:%d", d.index);
  return buf;
}

ml_device ml_default_device(void) { return default_device; }
void ml_set_default_device(ml_device d) { default_device = d; }
ml_dtype ml_default_dtype(void) { return default_dtype; }
void ml_set_default_dtype(ml_dtype t) { default_dtype = t; }
