/* The collectives area of the backend interface: the sub-table that each
 * backend fills for ml.dist (core/dist.c). The CPU backend moves host
 * arrays through MPI (src/cpu/cpu_dist.c), the CUDA backend moves device
 * arrays through NCCL (kernels/dist.cu). Arrays passed in are contiguous
 * and live on the backend's device; the core has already checked, through
 * MPI, that every rank of the job calls the same entry with the same
 * dtype, shapes, op and root. Ranks are 0-based, as MPI's. */
#ifndef ML_DIST_BACKEND_H
#define ML_DIST_BACKEND_H

#include "backend.h"

typedef enum {
  ML_DIST_SUM, ML_DIST_MAX, ML_DIST_MIN, ML_DIST_PROD
} ml_dist_op;

/* The bytes of the identifier that ties the ranks' communicators together
 * (NCCL's ncclUniqueId; unused by the CPU backend). */
#define ML_DIST_ID_BYTES 128

typedef struct ml_dist_backend {
  /* unique_id: writes a fresh identifier into id (rank 0 calls it, the
   * core broadcasts it). */
  int (*unique_id)(unsigned char *id);
  /* comm_init: joins the job's communicator of size ranks as rank, on
   * device; every rank calls it with rank 0's id. */
  int (*comm_init)(int device, int rank, int size, const unsigned char *id);
  /* all_reduce: x on every rank becomes the elementwise op of the ranks'
   * x, in place; every rank gets the same values. */
  int (*all_reduce)(const ml_array *x, ml_dist_op op);
  /* broadcast: x on every rank becomes root's x, in place. */
  int (*broadcast)(const ml_array *x, int root);
  /* all_gather: out on every rank is the ranks' in one after the other in
   * rank order; counts[r] is rank r's number of elements (size entries). */
  int (*all_gather)(const ml_array *out, const ml_array *in,
                    const int64_t *counts);
  /* reduce_scatter: in has size blocks of numel(out) elements; out on
   * rank r is the elementwise op of the ranks' block r. */
  int (*reduce_scatter)(const ml_array *out, const ml_array *in,
                        ml_dist_op op);
  /* send, recv: x to rank peer, or x from rank peer (blocking, matched in
   * order between a pair of ranks). */
  int (*send)(const ml_array *x, int peer);
  int (*recv)(const ml_array *x, int peer);
} ml_dist_backend;

/* Registers a backend's table (every entry filled, else an error naming
 * the entry) and gets a device's. */
int ml_dist_backend_register(ml_device_kind kind, const ml_dist_backend *t);
int ml_dist_backend_get(ml_device device, const ml_dist_backend **out);

#endif
