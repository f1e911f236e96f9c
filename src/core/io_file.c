#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io.h"
#include "status.h"

int ml_io_open_read(const char *op, const char *path, int *fd) {
  int f = open(path, O_RDONLY | O_CLOEXEC);
  if (f < 0)
    return ml_fail(ML_EIO, "%s: cannot open '%s': %s", op, path,
                   strerror(errno));
  struct stat st;
  if (fstat(f, &st) == 0 && S_ISDIR(st.st_mode)) {
    close(f);
    return ml_fail(ML_EIO, "%s: cannot open '%s': %s", op, path,
                   strerror(EISDIR));
  }
  *fd = f;
  return ML_OK;
}
