/* Collectives on GPU arrays through NCCL (contracts in
 * core/dist_backend.h; the CPU backend's MPI version, src/cpu/cpu_dist.c,
 * is the reference). One communicator per process, on the device of the
 * process's local rank, made by comm_init from rank 0's unique id, which
 * core/dist.c broadcasts through MPI. Every call is queued on the
 * device's stream, as every other entry's work; nothing waits on the
 * host. NVLink multicast (NVLS) stays off unless NCCL_NVLS_ENABLE says
 * otherwise, as the GPU hosts require. */
#include <nccl.h>
#include <stdlib.h>
#include <string.h>

#include "device.cuh"

static_assert(sizeof(ncclUniqueId) <= ML_DIST_ID_BYTES,
              "ML_DIST_ID_BYTES holds an ncclUniqueId");

static ncclComm_t comm;

static int nccl_check(ncclResult_t r, const char *op) {
  if (r == ncclSuccess) return ML_OK;
  return ml_fail(ML_EDEVICE, "%s: NCCL: %s", op, ncclGetErrorString(r));
}

static ncclDataType_t nccl_type(ml_dtype t) {
  switch (t) {
    case ML_FLOAT32: return ncclFloat32;
    case ML_FLOAT64: return ncclFloat64;
    case ML_INT32: return ncclInt32;
    case ML_INT64: return ncclInt64;
    default: return ncclUint8;
  }
}

static ncclRedOp_t nccl_op(ml_dist_op op) {
  static const ncclRedOp_t ops[] = {ncclSum, ncclMax, ncclMin, ncclProd};
  return ops[op];
}

static int unique_id(unsigned char *id) {
  ncclUniqueId u;
  int rc = nccl_check(ncclGetUniqueId(&u), "dist.init");
  if (!rc) memcpy(id, &u, sizeof u);
  return rc;
}

static int comm_init(int device, int rank, int size,
                     const unsigned char *id) {
  cuda_dev *d;
  int rc = cuda_enter(device, &d);
  if (rc) return rc;
  setenv("NCCL_NVLS_ENABLE", "0", 0);
  ncclUniqueId u;
  memcpy(&u, id, sizeof u);
  return nccl_check(ncclCommInitRank(&comm, size, u, rank), "dist.init");
}

/* Enters x's device; its stream in *s. */
static int enter(const ml_array *x, cudaStream_t *s) {
  cuda_dev *d;
  int rc = cuda_enter(ml_array_device(x).index, &d);
  if (!rc) *s = d->stream;
  return rc;
}

static int all_reduce(const ml_array *x, ml_dist_op op) {
  cudaStream_t s;
  int rc = enter(x, &s);
  if (rc) return rc;
  void *p = ml_array_data(x);
  return nccl_check(ncclAllReduce(p, p, (size_t)ml_array_numel(x),
                                  nccl_type(x->dtype), nccl_op(op), comm, s),
                    "all_reduce");
}

static int broadcast(const ml_array *x, int root) {
  cudaStream_t s;
  int rc = enter(x, &s);
  if (rc) return rc;
  void *p = ml_array_data(x);
  return nccl_check(ncclBroadcast(p, p, (size_t)ml_array_numel(x),
                                  nccl_type(x->dtype), root, comm, s),
                    "broadcast");
}

/* Equal counts: one ncclAllGather; otherwise each rank's part is a
 * broadcast from that rank into its place, all in one group. */
static int all_gather(const ml_array *out, const ml_array *in,
                      const int64_t *counts) {
  cudaStream_t s;
  int size, rc = enter(in, &s);
  if (rc) return rc;
  rc = nccl_check(ncclCommCount(comm, &size), "all_gather");
  if (rc) return rc;
  ncclDataType_t t = nccl_type(in->dtype);
  int equal = 1;
  for (int r = 1; r < size; r++) equal &= counts[r] == counts[0];
  if (equal)
    return nccl_check(ncclAllGather(ml_array_data(in), ml_array_data(out),
                                    (size_t)counts[0], t, comm, s),
                      "all_gather");
  char *dst = (char *)ml_array_data(out);
  size_t es = ml_dtype_size(in->dtype);
  rc = nccl_check(ncclGroupStart(), "all_gather");
  for (int r = 0; r < size && !rc; r++) {
    if (counts[r] > 0)
      rc = nccl_check(ncclBroadcast(ml_array_data(in), dst, (size_t)counts[r],
                                    t, r, comm, s),
                      "all_gather");
    dst += (size_t)counts[r] * es;
  }
  int end = nccl_check(ncclGroupEnd(), "all_gather");
  return rc ? rc : end;
}

static int reduce_scatter(const ml_array *out, const ml_array *in,
                          ml_dist_op op) {
  cudaStream_t s;
  int rc = enter(in, &s);
  if (rc) return rc;
  return nccl_check(ncclReduceScatter(ml_array_data(in), ml_array_data(out),
                                      (size_t)ml_array_numel(out),
                                      nccl_type(in->dtype), nccl_op(op), comm,
                                      s),
                    "reduce_scatter");
}

static int send(const ml_array *x, int peer) {
  cudaStream_t s;
  int rc = enter(x, &s);
  if (rc) return rc;
  return nccl_check(ncclSend(ml_array_data(x), (size_t)ml_array_numel(x),
                             nccl_type(x->dtype), peer, comm, s),
                    "send");
}

static int recv(const ml_array *x, int peer) {
  cudaStream_t s;
  int rc = enter(x, &s);
  if (rc) return rc;
  return nccl_check(ncclRecv(ml_array_data(x), (size_t)ml_array_numel(x),
                             nccl_type(x->dtype), peer, comm, s),
                    "recv");
}

const ml_dist_backend cuda_dist_backend = {
    unique_id, comm_init, all_reduce, broadcast, all_gather, reduce_scatter,
    send, recv,
};
