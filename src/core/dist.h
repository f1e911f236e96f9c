/* ml.dist's core: the process group of a job launched by MPI (mpirun),
 * and collectives on arrays, checked across ranks, then dispatched to the
 * device's collectives table (dist_backend.h: MPI for CPU arrays, NCCL for
 * GPU arrays).
 *
 * A process that no MPI launcher started is a job of one rank: MPI is not
 * initialised at all (start-up stays fast, and no mpirun is needed), the
 * collectives return their input's values and send/recv have no peer.
 * Under a launcher (Open MPI's OMPI_COMM_WORLD_SIZE, or PMI_SIZE,
 * PMIX_RANK in the environment), ml_dist_init() initialises MPI; the
 * bindings call it when the module opens. */
#ifndef ML_DIST_H
#define ML_DIST_H

#include "array.h"
#include "dist_backend.h"

/* Initialises MPI when a launcher started this process (once; later calls
 * return at once). */
int ml_dist_init(void);
/* Whether MPI is initialised (a launched job). */
int ml_dist_active(void);
/* This process's rank, the number of ranks, and its rank among the ranks
 * of its machine (0, 1, 0 for a process without a launcher). */
int ml_dist_rank(void);
int ml_dist_size(void);
int ml_dist_local_rank(void);
/* Joins the NCCL communicator of device (a collective: every rank calls
 * it); the first collective on GPU arrays does it otherwise. */
int ml_dist_device_init(ml_device device);

/* "sum", "max", "min", "prod"; 0 for another name. */
int ml_dist_op_parse(const char *name, ml_dist_op *out);
const char *ml_dist_op_name(ml_dist_op op);

int ml_dist_barrier(void);
/* x becomes the op of the ranks' x, in place (a non-contiguous x through
 * a contiguous copy). */
int ml_dist_all_reduce(const ml_array *x, ml_dist_op op);
/* x becomes rank root's x, in place. */
int ml_dist_broadcast(const ml_array *x, int root);
/* out: a new array, the ranks' x concatenated along the first dimension
 * in rank order (their first dimensions may differ; a scalar counts as
 * one element). */
int ml_dist_all_gather(ml_array *out, const ml_array *x);
/* out: a new array, block r (of size equal blocks of x's first dimension)
 * of the op of the ranks' x on rank r. */
int ml_dist_reduce_scatter(ml_array *out, const ml_array *x, ml_dist_op op);
/* send: x to rank peer; recv: into x from peer when x is not empty, else
 * into a new array on device of the shape and dtype that peer sends. The
 * two ranks check shapes and dtypes against each other first. */
int ml_dist_send(const ml_array *x, int peer);
int ml_dist_recv(ml_array *x, int peer, ml_device device);

/* Ends the whole job with status code when this is a launched job of
 * more than one rank (MPI_Abort); returns otherwise. */
void ml_dist_abort(int code);

#endif
