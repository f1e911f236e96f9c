/* The backends of this build, registered once at start-up: the CPU's
 * always, CUDA's when the build has it (with no devices on a machine
 * without a GPU, so that cuda:N names a missing device rather than a
 * missing build). */
#include <stdio.h>

#include "../cpu/cpu.h"
#include "backend.h"

#ifdef ML_HAVE_CUDA
#include "../../kernels/cuda_backend.h"
#endif

int ml_backends_init(void) {
  static int done, status;
  static char message[256];
  if (done)
    return status ? ml_fail(status, "%s", message) : ML_OK;
  status = cpu_backend_init();
#ifdef ML_HAVE_CUDA
  if (!status) status = cuda_backend_init();
#endif
  if (status) snprintf(message, sizeof message, "%s", ml_last_error());
  done = 1;
  return status;
}
