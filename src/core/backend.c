#include "backend.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

static const ml_backend *backends[ML_NDEVICE_KINDS];
static int device_counts[ML_NDEVICE_KINDS];
static char why_none[ML_NDEVICE_KINDS][160];

static const char *const kind_names[ML_NDEVICE_KINDS] = {"cpu", "cuda"};

/* The general table's entries, in the order of ml_backend's members. */
static const char *const entries[] = {
    "alloc",  "free",          "memory",     "empty_cache", "device_name",
    "upload", "download",      "synchronize", "copy",       "fill",
    "iota",   "unary",         "binary",     "binary_scalar", "where",
    "reduce", "cumsum",        "cumprod",    "softmax",    "gemm",       "index_select", "index_add",
    "gather",
    "scatter", "masked_select", "sort",      "topk",        "searchsorted",
    "histogram", "bincount", "random"};

#define NENTRIES (sizeof entries / sizeof *entries)
_Static_assert(offsetof(ml_backend, alloc) + NENTRIES * sizeof(void (*)(void)) ==
                   sizeof(ml_backend),
               "entries[] names every function of ml_backend");

/* An error naming the first of count function pointers, from offset first
 * in table, that is NULL. */
static int check_entries(ml_device_kind kind, const char *area,
                         const void *table, size_t first,
                         const char *const *names, size_t count) {
  for (size_t i = 0; i < count; i++) {
    void (*fn)(void);
    memcpy(&fn, (const char *)table + first + i * sizeof fn, sizeof fn);
    if (!fn)
      return ml_fail(ML_EINVAL, "backend %s: %s entry '%s' is missing",
                     kind_names[kind], area, names[i]);
  }
  return ML_OK;
}

int ml_backend_register(ml_device_kind kind, const ml_backend *backend,
                        int device_count, const char *why) {
  int rc = check_entries(kind, "general", backend, offsetof(ml_backend, alloc),
                         entries, NENTRIES);
  if (rc) return rc;
  backends[kind] = backend;
  device_counts[kind] = device_count;
  snprintf(why_none[kind], sizeof why_none[kind], "%s%s", why ? ": " : "",
           why ? why : "");
  return ML_OK;
}

int ml_device_count(ml_device_kind kind) { return device_counts[kind]; }

int ml_backend_get(ml_device device, const ml_backend **out) {
  char name[ML_DEVICE_NAME_MAX];
  if (device.kind < 0 || device.kind >= ML_NDEVICE_KINDS || !backends[device.kind]) {
    if (device.kind == ML_CUDA)
      return ml_fail(ML_EDEVICE, "device %s: this moonlab was built without CUDA",
                     ml_device_name(device, name));
    return ml_fail(ML_EDEVICE, "unknown device");
  }
  if (device.index < 0 || device.index >= device_counts[device.kind])
    return ml_fail(ML_EDEVICE, "device %s is not present (%d %s device%s%s)",
                   ml_device_name(device, name), device_counts[device.kind],
                   backends[device.kind]->name,
                   device_counts[device.kind] == 1 ? "" : "s",
                   why_none[device.kind]);
  *out = backends[device.kind];
  return ML_OK;
}

int ml_backend_area_register(ml_backend_area *area, ml_device_kind kind,
                             const void *table) {
  int rc = check_entries(kind, area->name, table, area->first, area->entries,
                         area->count);
  if (!rc) area->tables[kind] = table;
  return rc;
}

int ml_backend_area_get(const ml_backend_area *area, ml_device device,
                        const void **out) {
  const ml_backend *be;
  int rc = ml_backend_get(device, &be);
  if (rc) return rc;
  if (!area->tables[device.kind])
    return ml_fail(ML_EDEVICE, "backend %s has no %s table", be->name,
                   area->name);
  *out = area->tables[device.kind];
  return ML_OK;
}

int ml_device_memory_of(ml_device device, ml_device_memory *out) {
  const ml_backend *be;
  int rc = ml_backend_get(device, &be);
  return rc ? rc : be->memory(device.index, out);
}

int ml_device_empty_cache(ml_device device) {
  const ml_backend *be;
  int rc = ml_backend_get(device, &be);
  return rc ? rc : be->empty_cache(device.index);
}

int ml_device_product_name(ml_device device, char *buf, size_t n) {
  const ml_backend *be;
  int rc = ml_backend_get(device, &be);
  return rc ? rc : be->device_name(device.index, buf, n);
}
