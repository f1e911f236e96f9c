/* Strided iteration for the CPU backend.
 *
 * cpu_foreach visits every element of up to CPU_MAX_OPERANDS arrays of one
 * shape, in runs along the innermost dimension: fn receives the run length,
 * a pointer to the run's first element in each operand, and each operand's
 * stride in bytes along the run. Dimensions that are contiguous in every
 * operand are merged first, so that a contiguous array is one long run.
 * Large iterations are split into chunks of the flattened index space that
 * run on OpenMP threads; fn must therefore only write elements of its run. */
#ifndef ML_CPU_STRIDED_H
#define ML_CPU_STRIDED_H

#include <stdint.h>

#include "../core/array.h"

#define CPU_MAX_OPERANDS 4
/* Below this many elements a loop runs on the calling thread: starting the
 * OpenMP team costs more than the work. */
#define CPU_PARALLEL_MIN 32768

typedef void (*cpu_run_fn)(void *ctx, int64_t n, char *const *ptrs,
                           const int64_t *bstrides);

/* Visits the elements of ops[0..nops) (all of ops[0]'s shape). */
int cpu_foreach(int nops, const ml_array *const *ops, cpu_run_fn fn, void *ctx);

/* The OpenMP thread count to use for n units of work of the given grain. */
int cpu_threads_for(int64_t n, int64_t grain);

/* Runs part(ctx, begin, end) over [0, count) in equal static ranges, one
 * a thread of `threads` (on the calling thread when threads <= 1): the
 * ranges never depend on timing. Empty ranges are skipped. */
typedef void (*cpu_part_fn)(void *ctx, int64_t begin, int64_t end);
void cpu_split(int threads, int64_t count, cpu_part_fn part, void *ctx);

#endif
