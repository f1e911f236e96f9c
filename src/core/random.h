/* The global random generator: a seed and a 64-bit counter offset into the
 * Philox4x32-10 stream defined in philox.h.
 *
 * At start-up the seed is ML_DEFAULT_SEED (0) and the offset 0, so a fresh
 * process draws the same numbers every run. Each successful call consumes
 * ceil(n / k) counter blocks (philox.h) and advances the offset by as many;
 * a call that fails consumes nothing. Because offsets advance in whole
 * blocks, rand(3) followed by rand(3) is not rand(6): each call starts on a
 * fresh block. The state is process-wide and not thread-safe (Lua drives it
 * from one thread). */
#ifndef ML_RANDOM_H
#define ML_RANDOM_H

#include "array.h"

#define ML_DEFAULT_SEED 0

/* Sets the seed and resets the offset to 0. */
void ml_random_seed(uint64_t seed);
void ml_random_get_state(uint64_t *seed, uint64_t *offset);
void ml_random_set_state(uint64_t seed, uint64_t offset);

/* out: a new array of the shape on device, dtype t (float), uniform in
 * [low, high); low <= high, and low, high and high - low finite in t.
 * op names the operation in errors ("rand", "uniform"). */
int ml_rand_uniform(const char *op, ml_array *out, ml_dtype t, int ndim,
                    const int64_t *shape, ml_device device, double low,
                    double high);
/* out: normal(mean, std) of dtype t (float); mean finite, std finite and
 * >= 0 (in t). */
int ml_rand_normal(const char *op, ml_array *out, ml_dtype t, int ndim,
                   const int64_t *shape, ml_device device, double mean,
                   double std);
/* out: integers in [low, high) of integer dtype t; high > low, the range
 * must fit t, and |low|, |high| <= 2^53 (the backend takes doubles). */
int ml_randint(ml_array *out, ml_dtype t, int ndim, const int64_t *shape,
               ml_device device, int64_t low, int64_t high);
/* out: 1-D of integer dtype t (holding n), a permutation of 1..n made on
 * the host by Fisher-Yates: starting from 1..n, for i = n-1 down to 1 swap
 * (0-based) positions i and v_i mod (i + 1), where v_i is element i's
 * 64-bit value in the randint stream; then uploaded, so it is the same on
 * every device. Consumes ceil(n / 2) blocks, like randint of n elements. */
int ml_randperm(ml_array *out, ml_dtype t, int64_t n, ml_device device);

#endif
