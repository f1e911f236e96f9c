/* ml.dist's core (dist.h): MPI's process group, the check that every
 * rank calls the same collective on the same shapes, and dispatch to the
 * device's collectives table.
 *
 * Each collective first gathers every rank's header (which collective,
 * its op or root, dtype, device kind, shape) with one MPI_Allgather of a
 * few integers, so that a mismatch is an error raised on every rank with
 * the same message rather than a hang or garbage; send and recv exchange
 * the sender's header and the receiver's verdict. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "copy.h"
#include "dist.h"
#include "status.h"

static const char *const dist_entries[] = {
    "unique_id", "comm_init", "all_reduce", "broadcast", "all_gather",
    "reduce_scatter", "send", "recv"};
#define NENTRIES (sizeof dist_entries / sizeof *dist_entries)
_Static_assert(offsetof(ml_dist_backend, unique_id) +
                       NENTRIES * sizeof(void (*)(void)) ==
                   sizeof(ml_dist_backend),
               "dist_entries names every function of ml_dist_backend");

static ml_backend_area dist_area = {"dist", dist_entries, NENTRIES,
                                    offsetof(ml_dist_backend, unique_id),
                                    {NULL}};

int ml_dist_backend_register(ml_device_kind kind, const ml_dist_backend *t) {
  return ml_backend_area_register(&dist_area, kind, t);
}

int ml_dist_backend_get(ml_device device, const ml_dist_backend **out) {
  return ml_backend_area_get(&dist_area, device, (const void **)out);
}

static int active, rank, size = 1, local_rank;
/* The device whose NCCL communicator this rank joined; kind ML_CPU for
 * none yet. */
static ml_device comm_device;

static int launched(void) {
  return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMI_SIZE") ||
         getenv("PMIX_RANK");
}

static int mpi_fail(int rc, const char *op) {
  char s[MPI_MAX_ERROR_STRING];
  int n = 0;
  if (MPI_Error_string(rc, s, &n) != MPI_SUCCESS) snprintf(s, sizeof s, "?");
  return ml_fail(ML_EDEVICE, "%s: MPI: %s", op, s);
}

static void finalize(void) {
  int done = 0;
  MPI_Finalized(&done);
  if (!done) MPI_Finalize();
}

int ml_dist_init(void) {
  if (active || !launched()) return ML_OK;
  int provided, rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED,
                                     &provided);
  if (rc != MPI_SUCCESS) return mpi_fail(rc, "dist.init");
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm node;
  rc = MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank,
                           MPI_INFO_NULL, &node);
  if (rc != MPI_SUCCESS) return mpi_fail(rc, "dist.init");
  MPI_Comm_rank(node, &local_rank);
  MPI_Comm_free(&node);
  atexit(finalize);
  active = 1;
  return ML_OK;
}

int ml_dist_active(void) { return active; }
int ml_dist_rank(void) { return rank; }
int ml_dist_size(void) { return size; }
int ml_dist_local_rank(void) { return local_rank; }

void ml_dist_abort(int code) {
  if (active && size > 1) MPI_Abort(MPI_COMM_WORLD, code);
}

int ml_dist_op_parse(const char *name, ml_dist_op *out) {
  for (int i = 0; i <= ML_DIST_PROD; i++)
    if (strcmp(name, ml_dist_op_name((ml_dist_op)i)) == 0) {
      *out = (ml_dist_op)i;
      return 1;
    }
  return 0;
}

const char *ml_dist_op_name(ml_dist_op op) {
  static const char *const names[] = {"sum", "max", "min", "prod"};
  return names[op];
}

int ml_dist_barrier(void) {
  if (!active) return ML_OK;
  int rc = MPI_Barrier(MPI_COMM_WORLD);
  return rc == MPI_SUCCESS ? ML_OK : mpi_fail(rc, "barrier");
}

/* The device's communicator, joined on first use (collectively). */
static int join(const char *op, ml_device device) {
  if (device.kind == ML_CPU) return ML_OK;
  if (comm_device.kind != ML_CPU) {
    if (ml_device_equal(comm_device, device)) return ML_OK;
    char a[ML_DEVICE_NAME_MAX], b[ML_DEVICE_NAME_MAX];
    return ml_fail(ML_EINVAL, "%s: this rank's communicator is on %s, the "
                   "array on %s", op, ml_device_name(comm_device, a),
                   ml_device_name(device, b));
  }
  const ml_dist_backend *db;
  unsigned char id[ML_DIST_ID_BYTES];
  int rc = ml_dist_backend_get(device, &db);
  if (!rc && rank == 0) rc = db->unique_id(id);
  /* rank 0 sends a zero length on failure, so that no rank waits. */
  int ok = rc == ML_OK, all = 0;
  int mrc = MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (mrc != MPI_SUCCESS) return mpi_fail(mrc, op);
  if (rc) return rc;
  if (!all)
    return ml_fail(ML_EDEVICE, "%s: another rank failed to set up its "
                   "communicator", op);
  mrc = MPI_Bcast(id, ML_DIST_ID_BYTES, MPI_BYTE, 0, MPI_COMM_WORLD);
  if (mrc != MPI_SUCCESS) return mpi_fail(mrc, op);
  rc = db->comm_init(device.index, rank, size, id);
  if (!rc) comm_device = device;
  return rc;
}

int ml_dist_device_init(ml_device device) {
  if (!active) return ML_OK;
  return join("dist.init", device);
}

/* The header of a collective: what each rank says it calls. */
enum { H_KIND, H_ARG, H_DTYPE, H_DEVICE, H_NDIM, H_SHAPE,
       H_LEN = H_SHAPE + ML_MAX_DIMS };

static void header(int64_t *h, int kind, int arg, const ml_array *x) {
  memset(h, 0, H_LEN * sizeof *h);
  h[H_KIND] = kind;
  h[H_ARG] = arg;
  h[H_DTYPE] = x->dtype;
  h[H_DEVICE] = x->storage ? ml_array_device(x).kind : -1;
  h[H_NDIM] = x->ndim;
  for (int i = 0; i < x->ndim; i++) h[H_SHAPE + i] = x->shape[i];
}

/* "3x4 float64 on cpu". */
static const char *describe_array(const int64_t *h, char *buf, size_t n) {
  char shape[ML_SHAPE_STR_MAX];
  int64_t dims[ML_MAX_DIMS];
  for (int i = 0; i < h[H_NDIM]; i++) dims[i] = h[H_SHAPE + i];
  ml_shape_str((int)h[H_NDIM], dims, shape, sizeof shape);
  snprintf(buf, n, "%s %s on %s", shape, ml_dtype_name((ml_dtype)h[H_DTYPE]),
           h[H_DEVICE] == ML_CPU ? "cpu" : "cuda");
  return buf;
}

/* "all_reduce (op sum) of 3x4 float64 on cpu". */
static const char *describe(const int64_t *h, char *buf, size_t n) {
  static const char *const kinds[] = {"all_reduce", "broadcast",
                                      "all_gather", "reduce_scatter"};
  char a[256], arg[32] = "";
  if (h[H_KIND] == 0 || h[H_KIND] == 3)
    snprintf(arg, sizeof arg, " (op %s)",
             ml_dist_op_name((ml_dist_op)h[H_ARG]));
  else if (h[H_KIND] == 1)
    snprintf(arg, sizeof arg, " (root %d)", (int)h[H_ARG]);
  snprintf(buf, n, "%s%s of %s", kinds[h[H_KIND]], arg,
           describe_array(h, a, sizeof a));
  return buf;
}

/* Whether headers a and b agree (all_gather's first dimensions may
 * differ). */
static int agree(const int64_t *a, const int64_t *b) {
  for (int i = 0; i < H_LEN; i++) {
    if (i == H_SHAPE && a[H_KIND] == 2) continue;
    if (a[i] != b[i]) return 0;
  }
  return 1;
}

/* Gathers every rank's header into all (size x H_LEN) and fails, alike
 * on every rank, when one differs from rank 0's. */
static int check(const char *op, const int64_t *h, int64_t *all) {
  int rc = MPI_Allgather(h, H_LEN, MPI_INT64_T, all, H_LEN, MPI_INT64_T,
                         MPI_COMM_WORLD);
  if (rc != MPI_SUCCESS) return mpi_fail(rc, op);
  for (int r = 1; r < size; r++)
    if (!agree(all, all + (size_t)r * H_LEN)) {
      char a[256], b[256];
      return ml_fail(ML_EINVAL, "%s: the ranks' calls differ: rank 0 "
                     "calls %s, rank %d calls %s", op,
                     describe(all, a, sizeof a), r,
                     describe(all + (size_t)r * H_LEN, b, sizeof b));
    }
  return ML_OK;
}

/* The checks common to every collective: the headers agree across
 * ranks (all: size x H_LEN, filled), the device's table is there and its
 * communicator joined. */
static int begin(const char *op, int kind, int arg, const ml_array *x,
                 int64_t *all, const ml_dist_backend **db) {
  int64_t h[H_LEN];
  header(h, kind, arg, x);
  int rc = check(op, h, all);
  if (!rc) rc = ml_dist_backend_get(ml_array_device(x), db);
  if (!rc) rc = join(op, ml_array_device(x));
  return rc;
}

static int64_t *headers(const char *op) {
  int64_t *all = malloc((size_t)size * H_LEN * sizeof *all);
  if (!all) ml_fail(ML_ENOMEM, "%s: out of memory", op);
  return all;
}

/* Runs an in-place entry on x through a contiguous copy when x is not
 * contiguous. */
static int in_place(const char *op, const ml_array *x, int kind, int arg) {
  int64_t *all = headers(op);
  if (!all) return ML_ENOMEM;
  const ml_dist_backend *db;
  ml_array c = {0};
  int rc = begin(op, kind, arg, x, all, &db);
  free(all);
  if (!rc) rc = ml_contiguous(&c, x);
  if (!rc && ml_array_numel(x) > 0)
    rc = kind == 0 ? db->all_reduce(&c, (ml_dist_op)arg)
                   : db->broadcast(&c, arg);
  if (!rc && c.storage != x->storage) rc = ml_copy(op, x, &c);
  ml_array_release(&c);
  return rc;
}

int ml_dist_all_reduce(const ml_array *x, ml_dist_op op) {
  return active ? in_place("all_reduce", x, 0, op) : ML_OK;
}

int ml_dist_broadcast(const ml_array *x, int root) {
  if (root < 0 || root >= size)
    return ml_fail(ML_EINVAL, "broadcast: root %d is not a rank (0 to %d)",
                   root, size - 1);
  return active ? in_place("broadcast", x, 1, root) : ML_OK;
}

int ml_dist_all_gather(ml_array *out, const ml_array *x) {
  if (!active) {
    int rc = ml_clone(out, x);
    if (!rc && out->ndim == 0) {
      out->ndim = 1;
      out->shape[0] = out->strides[0] = 1;
    }
    return rc;
  }
  int64_t *all = headers("all_gather"), *counts = NULL;
  if (!all) return ML_ENOMEM;
  const ml_dist_backend *db;
  ml_array c = {0}, r = {0};
  int rc = begin("all_gather", 2, 0, x, all, &db);
  if (!rc && !(counts = malloc((size_t)size * sizeof *counts)))
    rc = ml_fail(ML_ENOMEM, "all_gather: out of memory");
  if (!rc) {
    int64_t shape[ML_MAX_DIMS], rows = 0, inner = 1;
    int ndim = x->ndim > 0 ? x->ndim : 1;
    for (int i = 1; i < x->ndim; i++) inner *= shape[i] = x->shape[i];
    for (int q = 0; q < size; q++) {
      int64_t n = x->ndim > 0 ? all[(size_t)q * H_LEN + H_SHAPE] : 1;
      counts[q] = n * inner;
      rows += n;
    }
    shape[0] = rows;
    rc = ml_array_empty(&r, x->dtype, ndim, shape, ml_array_device(x));
  }
  if (!rc) rc = ml_contiguous(&c, x);
  if (!rc && ml_array_numel(&r) > 0) rc = db->all_gather(&r, &c, counts);
  free(all);
  free(counts);
  ml_array_release(&c);
  return ml_array_commit(out, &r, rc);
}

int ml_dist_reduce_scatter(ml_array *out, const ml_array *x, ml_dist_op op) {
  char s[ML_SHAPE_STR_MAX];
  if (x->ndim == 0 || x->shape[0] % size)
    return ml_fail(ML_EINVAL, "reduce_scatter: the first dimension of %s "
                   "does not split into %d equal blocks",
                   ml_shape_str(x->ndim, x->shape, s, sizeof s), size);
  if (!active) return ml_clone(out, x);
  int64_t *all = headers("reduce_scatter");
  if (!all) return ML_ENOMEM;
  const ml_dist_backend *db;
  ml_array c = {0}, r = {0};
  int64_t shape[ML_MAX_DIMS];
  memcpy(shape, x->shape, sizeof shape);
  shape[0] /= size;
  int rc = begin("reduce_scatter", 3, op, x, all, &db);
  free(all);
  if (!rc) rc = ml_array_empty(&r, x->dtype, x->ndim, shape,
                               ml_array_device(x));
  if (!rc) rc = ml_contiguous(&c, x);
  if (!rc && ml_array_numel(&r) > 0) rc = db->reduce_scatter(&r, &c, op);
  ml_array_release(&c);
  return ml_array_commit(out, &r, rc);
}

static int check_peer(const char *op, int peer) {
  if (size == 1)
    return ml_fail(ML_EINVAL, "%s: a job of one rank has no peer", op);
  if (peer < 0 || peer >= size || peer == rank)
    return ml_fail(ML_EINVAL, "%s: peer %d is not another rank (0 to %d, "
                   "this is %d)", op, peer, size - 1, rank);
  return ML_OK;
}

/* The tags of send's messages: its header and the receiver's verdict
 * (cpu_dist.c sends the data of CPU arrays with tag 3). */
enum { TAG_HEADER = 1, TAG_VERDICT };

int ml_dist_send(const ml_array *x, int peer) {
  int rc = check_peer("send", peer);
  if (rc) return rc;
  int64_t h[H_LEN];
  int ok = 0;
  header(h, 4, 0, x);
  int mrc = MPI_Send(h, H_LEN, MPI_INT64_T, peer, TAG_HEADER,
                     MPI_COMM_WORLD);
  if (mrc == MPI_SUCCESS)
    mrc = MPI_Recv(&ok, 1, MPI_INT, peer, TAG_VERDICT, MPI_COMM_WORLD,
                   MPI_STATUS_IGNORE);
  if (mrc != MPI_SUCCESS) return mpi_fail(mrc, "send");
  if (!ok) {
    char a[256];
    return ml_fail(ML_EINVAL, "send: rank %d does not receive the %s that "
                   "rank %d sends", peer, describe_array(h, a, sizeof a),
                   rank);
  }
  const ml_dist_backend *db;
  ml_array c = {0};
  rc = ml_dist_backend_get(ml_array_device(x), &db);
  if (!rc) rc = join("send", ml_array_device(x));
  if (!rc) rc = ml_contiguous(&c, x);
  if (!rc && ml_array_numel(x) > 0) rc = db->send(&c, peer);
  ml_array_release(&c);
  return rc;
}

int ml_dist_recv(ml_array *x, int peer, ml_device device) {
  int rc = check_peer("recv", peer);
  if (rc) return rc;
  int64_t h[H_LEN], want[H_LEN];
  int mrc = MPI_Recv(h, H_LEN, MPI_INT64_T, peer, TAG_HEADER, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
  if (mrc != MPI_SUCCESS) return mpi_fail(mrc, "recv");
  ml_array r = {0};
  if (x->storage) {
    header(want, 4, 0, x);
  } else {
    int64_t shape[ML_MAX_DIMS];
    for (int i = 0; i < h[H_NDIM]; i++) shape[i] = h[H_SHAPE + i];
    rc = ml_array_empty(&r, (ml_dtype)h[H_DTYPE], (int)h[H_NDIM], shape,
                        device);
    header(want, 4, 0, &r);
  }
  int ok = !rc && memcmp(h, want, sizeof h) == 0;
  mrc = MPI_Send(&ok, 1, MPI_INT, peer, TAG_VERDICT, MPI_COMM_WORLD);
  if (!rc && mrc != MPI_SUCCESS) rc = mpi_fail(mrc, "recv");
  if (!rc && !ok) {
    char a[256], b[256];
    rc = ml_fail(ML_EINVAL, "recv: rank %d sends %s, this rank (%d) "
                 "receives into %s", peer, describe_array(h, a, sizeof a),
                 rank, describe_array(want, b, sizeof b));
  }
  const ml_array *dst = x->storage ? x : &r;
  const ml_dist_backend *db;
  ml_array c = {0};
  if (!rc) rc = ml_dist_backend_get(ml_array_device(dst), &db);
  if (!rc) rc = join("recv", ml_array_device(dst));
  if (!rc) rc = ml_contiguous(&c, dst);
  if (!rc && ml_array_numel(dst) > 0) rc = db->recv(&c, peer);
  if (!rc && c.storage != dst->storage) rc = ml_copy("recv", dst, &c);
  ml_array_release(&c);
  if (x->storage) {
    ml_array_release(&r);
    return rc;
  }
  return ml_array_commit(x, &r, rc);
}
