#include "backend.h"

#include "status.h"

static const ml_backend *backends[ML_NDEVICE_KINDS];
static int device_counts[ML_NDEVICE_KINDS];

void ml_backend_register(ml_device_kind kind, const ml_backend *backend,
                         int device_count) {
  backends[kind] = backend;
  device_counts[kind] = device_count;
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
    return ml_fail(ML_EDEVICE, "device %s is not present (%d %s device%s)",
                   ml_device_name(device, name), device_counts[device.kind],
                   backends[device.kind]->name,
                   device_counts[device.kind] == 1 ? "" : "s");
  *out = backends[device.kind];
  return ML_OK;
}
