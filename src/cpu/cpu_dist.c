/* Collectives on host arrays through MPI (contracts in
 * core/dist_backend.h), on MPI_COMM_WORLD, which core/dist.c set to
 * return errors. Counts past MPI's int go in chunks where the collective
 * allows it (all_reduce, broadcast, send, recv). */
#include <limits.h>
#include <mpi.h>
#include <stdlib.h>

#include "../core/status.h"
#include "cpu.h"

#define CHUNK ((int64_t)1 << 30)

static int fail(int rc, const char *op) {
  char s[MPI_MAX_ERROR_STRING];
  int n = 0;
  if (MPI_Error_string(rc, s, &n) != MPI_SUCCESS) s[0] = '\0';
  return ml_fail(ML_EDEVICE, "%s: MPI: %s", op, s);
}

static MPI_Datatype mpi_type(ml_dtype t) {
  switch (t) {
    case ML_FLOAT32: return MPI_FLOAT;
    case ML_FLOAT64: return MPI_DOUBLE;
    case ML_INT32: return MPI_INT32_T;
    case ML_INT64: return MPI_INT64_T;
    default: return MPI_UINT8_T;
  }
}

static MPI_Op mpi_op(ml_dist_op op) {
  static const MPI_Op ops[] = {MPI_SUM, MPI_MAX, MPI_MIN, MPI_PROD};
  return ops[op];
}

static int unique_id(unsigned char *id) {
  (void)id;
  return ML_OK;
}

static int comm_init(int device, int rank, int size, const unsigned char *id) {
  (void)device, (void)rank, (void)size, (void)id;
  return ML_OK;
}

/* The calls that go in chunks of CHUNK elements. */
enum { ALL_REDUCE, BROADCAST, SEND, RECV };

/* The tag of send's data (core/dist.c uses 1 and 2 for its header and
 * the verdict). */
#define TAG_DATA 3

/* Runs call what on each chunk of x's elements; arg is the op, the root
 * or the peer. */
static int chunked(int what, const ml_array *x, int arg, const char *op) {
  char *p = ml_array_data(x);
  size_t es = ml_dtype_size(x->dtype);
  MPI_Datatype t = mpi_type(x->dtype);
  for (int64_t s = 0, n = ml_array_numel(x); s < n; s += CHUNK) {
    int c = (int)(n - s < CHUNK ? n - s : CHUNK), rc;
    void *q = p + s * es;
    if (what == ALL_REDUCE)
      rc = MPI_Allreduce(MPI_IN_PLACE, q, c, t, mpi_op((ml_dist_op)arg),
                         MPI_COMM_WORLD);
    else if (what == BROADCAST)
      rc = MPI_Bcast(q, c, t, arg, MPI_COMM_WORLD);
    else if (what == SEND)
      rc = MPI_Send(q, c, t, arg, TAG_DATA, MPI_COMM_WORLD);
    else
      rc = MPI_Recv(q, c, t, arg, TAG_DATA, MPI_COMM_WORLD,
                    MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) return fail(rc, op);
  }
  return ML_OK;
}

static int all_reduce(const ml_array *x, ml_dist_op op) {
  return chunked(ALL_REDUCE, x, op, "all_reduce");
}

static int broadcast(const ml_array *x, int root) {
  return chunked(BROADCAST, x, root, "broadcast");
}

static int send(const ml_array *x, int peer) {
  return chunked(SEND, x, peer, "send");
}

static int recv(const ml_array *x, int peer) {
  return chunked(RECV, x, peer, "recv");
}

static int all_gather(const ml_array *out, const ml_array *in,
                      const int64_t *counts) {
  int size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int *cnt = malloc(2 * (size_t)size * sizeof *cnt), *displ = cnt + size;
  if (!cnt) return ml_fail(ML_ENOMEM, "all_gather: out of memory");
  int64_t at = 0;
  for (int r = 0; r < size; r++) {
    displ[r] = (int)at;
    cnt[r] = (int)counts[r];
    at += counts[r];
  }
  int rc = MPI_SUCCESS;
  if (at > INT_MAX) {
    free(cnt);
    return ml_fail(ML_EINVAL, "all_gather: %lld elements in all exceed "
                   "MPI's count limit on the CPU", (long long)at);
  }
  rc = MPI_Allgatherv(ml_array_data(in), (int)ml_array_numel(in),
                      mpi_type(in->dtype), ml_array_data(out), cnt, displ,
                      mpi_type(in->dtype), MPI_COMM_WORLD);
  free(cnt);
  return rc == MPI_SUCCESS ? ML_OK : fail(rc, "all_gather");
}

static int reduce_scatter(const ml_array *out, const ml_array *in,
                          ml_dist_op op) {
  int64_t n = ml_array_numel(out);
  if (n > INT_MAX)
    return ml_fail(ML_EINVAL, "reduce_scatter: blocks of %lld elements "
                   "exceed MPI's count limit on the CPU", (long long)n);
  int rc = MPI_Reduce_scatter_block(ml_array_data(in), ml_array_data(out),
                                    (int)n, mpi_type(in->dtype), mpi_op(op),
                                    MPI_COMM_WORLD);
  return rc == MPI_SUCCESS ? ML_OK : fail(rc, "reduce_scatter");
}

const ml_dist_backend cpu_dist_backend = {
    .unique_id = unique_id,
    .comm_init = comm_init,
    .all_reduce = all_reduce,
    .broadcast = broadcast,
    .all_gather = all_gather,
    .reduce_scatter = reduce_scatter,
    .send = send,
    .recv = recv,
};
