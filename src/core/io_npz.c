/* NumPy .npz files: a zip archive (libzip) of .npy members, one per named
 * array, stored (numpy.savez) or deflated (numpy.savez_compressed). The
 * members go through the .npy reader and header writer of io_npy.c. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zip.h>

#include "copy.h"
#include "io.h"
#include "io_npy.h"
#include "status.h"

struct ml_npz {
  zip_t *zip;
  const char *op;
  char path[ML_NPY_NAME_MAX];
};

int ml_file_kind(const char *op, const char *path, ml_file_kind_t *kind) {
  int fd;
  int rc = ml_io_open_read(op, path, &fd);
  if (rc) return rc;
  unsigned char m[6] = {0};
  ssize_t got = read(fd, m, sizeof m);
  close(fd);
  if (got < 0)
    return ml_fail(ML_EIO, "%s: cannot read '%s': %s", op, path,
                   strerror(errno));
  if (got == 6 && memcmp(m, "\x93NUMPY", 6) == 0)
    *kind = ML_FILE_NPY;
  else if (got >= 4 && m[0] == 'P' && m[1] == 'K' &&
           ((m[2] == 3 && m[3] == 4) || (m[2] == 5 && m[3] == 6)))
    *kind = ML_FILE_NPZ;
  else
    return ml_fail(ML_EIO, "%s: '%s' is neither a .npy nor a .npz file "
                   "(bad magic)", op, path);
  return ML_OK;
}

static int zip_failure(const char *op, const char *what, const char *path,
                       zip_error_t *e) {
  int rc = ml_fail(ML_EIO, "%s: %s '%s': %s", op, what, path,
                   zip_error_strerror(e));
  zip_error_fini(e);
  return rc;
}

int ml_npz_open(const char *op, const char *path, ml_npz **out) {
  int fd;
  int rc = ml_io_open_read(op, path, &fd);
  if (rc) return rc;
  ml_npz *z = calloc(1, sizeof *z);
  if (!z) {
    close(fd);
    return ml_fail(ML_ENOMEM, "%s: out of memory", op);
  }
  int code;
  z->zip = zip_fdopen(fd, ZIP_RDONLY, &code);
  if (!z->zip) {
    close(fd);
    free(z);
    zip_error_t e;
    zip_error_init_with_code(&e, code);
    return zip_failure(op, "cannot read the zip archive", path, &e);
  }
  z->op = op;
  snprintf(z->path, sizeof z->path, "%s", path);
  *out = z;
  return ML_OK;
}

int64_t ml_npz_count(const ml_npz *z) {
  return zip_get_num_entries(z->zip, 0);
}

const char *ml_npz_name(const ml_npz *z, int64_t i) {
  const char *name = zip_get_name(z->zip, (zip_uint64_t)i, ZIP_FL_ENC_GUESS);
  return name ? name : "";
}

static size_t member_read(void *f, void *buf, size_t n) {
  zip_int64_t got = zip_fread(f, buf, n);
  return got < 0 ? 0 : (size_t)got;
}

int ml_npz_read(ml_npz *z, int64_t i, ml_array *out) {
  zip_stat_t st;
  char name[2 * ML_NPY_NAME_MAX];
  snprintf(name, sizeof name, "'%s' in '%s'", ml_npz_name(z, i), z->path);
  zip_file_t *f = NULL;
  if (zip_stat_index(z->zip, (zip_uint64_t)i, 0, &st) == 0)
    f = zip_fopen_index(z->zip, (zip_uint64_t)i, 0);
  if (!f)
    return ml_fail(ML_EIO, "%s: cannot read %s: %s", z->op, name,
                   zip_strerror(z->zip));
  int64_t size = st.valid & ZIP_STAT_SIZE ? (int64_t)st.size : -1;
  ml_npy_source src = {member_read, f, z->op, name, size};
  int rc = ml_npy_read(&src, out);
  zip_error_t *e = zip_file_get_error(f);
  if (!rc && zip_error_code_zip(e) != ZIP_ER_OK) {
    ml_array_release(out);
    rc = ml_fail(ML_EIO, "%s: cannot read %s: %s", z->op, name,
                 zip_error_strerror(e));
  }
  zip_fclose(f);
  return rc;
}

void ml_npz_close(ml_npz *z) {
  if (!z) return;
  zip_discard(z->zip);
  free(z);
}

/* ---- writing ---- */

/* One member's bytes, alive until the archive is written: the header and
 * a contiguous CPU copy of the array. */
typedef struct {
  char header[ML_NPY_HEADER_MAX];
  ml_array data;
} member;

/* Adds member m as name.npy to zip; the libzip source is the header and
 * the data as two fragments, read when the archive is closed. */
static int add_member(zip_t *zip, const char *name, member *m,
                      int compressed, const char *path) {
  char entry[ML_NPY_NAME_MAX];
  snprintf(entry, sizeof entry, "%s.npy", name);
  static uint8_t none;
  size_t nbytes = ml_array_nbytes(&m->data);
  zip_buffer_fragment_t frag[2] = {
      {(zip_uint8_t *)m->header,
       ml_npy_header(m->header, sizeof m->header, &m->data)},
      {nbytes ? ml_array_data(&m->data) : &none, nbytes}};
  zip_error_t e;
  zip_error_init(&e);
  zip_source_t *src = zip_source_buffer_fragment_create(frag, 2, 0, &e);
  if (!src) return zip_failure("savez", "cannot write", path, &e);
  zip_error_fini(&e);
  zip_int64_t idx = zip_file_add(zip, entry, src, ZIP_FL_ENC_UTF_8);
  if (idx < 0) {
    zip_source_free(src);
    return ml_fail(ML_EIO, "savez: cannot add '%s' to '%s': %s", entry, path,
                   zip_strerror(zip));
  }
  if (zip_set_file_compression(zip, (zip_uint64_t)idx,
                               compressed ? ZIP_CM_DEFLATE : ZIP_CM_STORE,
                               0) < 0)
    return ml_fail(ML_EIO, "savez: cannot compress '%s': %s", entry,
                   zip_strerror(zip));
  return ML_OK;
}

int ml_save_npz(const char *path, int64_t n, const char *const *names,
                const ml_array *const *arrays, int compressed) {
  if (n < 1) return ml_fail(ML_EINVAL, "savez: no arrays to save");
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = 0; j < i; j++)
      if (strcmp(names[i], names[j]) == 0)
        return ml_fail(ML_EINVAL, "savez: name '%s' appears twice", names[i]);
  member *m = calloc((size_t)n, sizeof *m);
  if (!m) return ml_fail(ML_ENOMEM, "savez: out of memory");
  int rc = ML_OK;
  for (int64_t i = 0; i < n && !rc; i++) {
    ml_array host = {0};
    rc = ml_to_device(&host, arrays[i], ml_cpu());
    if (!rc) rc = ml_contiguous(&m[i].data, &host);
    ml_array_release(&host);
  }
  zip_t *zip = NULL;
  if (!rc) {
    int code;
    zip = zip_open(path, ZIP_CREATE | ZIP_TRUNCATE, &code);
    if (!zip) {
      zip_error_t e;
      zip_error_init_with_code(&e, code);
      rc = zip_failure("savez", "cannot open", path, &e);
    }
  }
  for (int64_t i = 0; i < n && !rc; i++)
    rc = add_member(zip, names[i], &m[i], compressed, path);
  if (zip) {
    if (rc)
      zip_discard(zip);
    else if (zip_close(zip) < 0) {
      rc = ml_fail(ML_EIO, "savez: cannot write '%s': %s", path,
                   zip_strerror(zip));
      zip_discard(zip);
    }
  }
  for (int64_t i = 0; i < n; i++) ml_array_release(&m[i].data);
  free(m);
  return rc;
}
