#include "strided.h"

#include <string.h>

#include "../core/status.h"

#ifdef _OPENMP
#include <omp.h>
#endif

typedef struct {
  int nops, ndim;
  int64_t shape[ML_MAX_DIMS];
  int64_t bstrides[CPU_MAX_OPERANDS][ML_MAX_DIMS];
  char *base[CPU_MAX_OPERANDS];
} plan;

/* Drops size-1 dimensions and merges dimension d into d+1 when every
 * operand steps over d exactly as far as over all of d+1. */
static void make_plan(plan *p, int nops, const ml_array *const *ops) {
  p->nops = nops;
  p->ndim = 0;
  for (int i = 0; i < nops; i++) p->base[i] = ml_array_data(ops[i]);
  const ml_array *a0 = ops[0];
  for (int d = 0; d < a0->ndim; d++) {
    if (a0->shape[d] == 1) continue;
    int k = p->ndim++;
    p->shape[k] = a0->shape[d];
    for (int i = 0; i < nops; i++)
      p->bstrides[i][k] = ops[i]->strides[d] * (int64_t)ml_dtype_size(ops[i]->dtype);
  }
  int out = 0;
  for (int d = 0; d < p->ndim; d++) {
    if (out > 0) {
      int merge = 1;
      for (int i = 0; i < nops && merge; i++)
        merge = p->bstrides[i][out - 1] == p->bstrides[i][d] * p->shape[d];
      if (merge) {
        p->shape[out - 1] *= p->shape[d];
        for (int i = 0; i < nops; i++) p->bstrides[i][out - 1] = p->bstrides[i][d];
        continue;
      }
    }
    p->shape[out] = p->shape[d];
    for (int i = 0; i < nops; i++) p->bstrides[i][out] = p->bstrides[i][d];
    out++;
  }
  p->ndim = out;
  if (p->ndim == 0) { /* a single element */
    p->ndim = 1;
    p->shape[0] = 1;
    for (int i = 0; i < nops; i++) p->bstrides[i][0] = 0;
  }
}

/* Visits flattened elements [begin, end) of the plan. */
static void run_range(const plan *p, int64_t begin, int64_t end, cpu_run_fn fn,
                      void *ctx) {
  int nd = p->ndim, inner = nd - 1;
  int64_t idx[ML_MAX_DIMS], rest = begin;
  for (int d = nd - 1; d >= 0; d--) {
    idx[d] = rest % p->shape[d];
    rest /= p->shape[d];
  }
  int64_t istride[CPU_MAX_OPERANDS];
  for (int i = 0; i < p->nops; i++) istride[i] = p->bstrides[i][inner];
  int64_t pos = begin;
  while (pos < end) {
    char *ptrs[CPU_MAX_OPERANDS];
    for (int i = 0; i < p->nops; i++) {
      char *q = p->base[i];
      for (int d = 0; d < nd; d++) q += idx[d] * p->bstrides[i][d];
      ptrs[i] = q;
    }
    int64_t n = p->shape[inner] - idx[inner];
    if (n > end - pos) n = end - pos;
    fn(ctx, n, ptrs, istride);
    pos += n;
    idx[inner] += n;
    for (int d = inner; d > 0 && idx[d] == p->shape[d]; d--) {
      idx[d] = 0;
      idx[d - 1]++;
    }
  }
}

int cpu_threads_for(int64_t n, int64_t grain) {
#ifdef _OPENMP
  if (n < grain) return 1;
  int64_t t = n / grain, max = omp_get_max_threads();
  return (int)(t < max ? t : max);
#else
  (void)n;
  (void)grain;
  return 1;
#endif
}

void cpu_split(int threads, int64_t count, cpu_part_fn part, void *ctx) {
  if (threads <= 1) {
    if (count > 0) part(ctx, 0, count);
    return;
  }
#pragma omp parallel num_threads(threads)
  {
#ifdef _OPENMP
    int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
#else
    int64_t t = 0, nt = 1;
#endif
    int64_t begin = count * t / nt, end = count * (t + 1) / nt;
    if (begin < end) part(ctx, begin, end);
  }
}

/* cpu_foreach's work: its plan and visitor. */
typedef struct {
  const plan *p;
  cpu_run_fn fn;
  void *ctx;
} foreach_job;

static void foreach_part(void *job, int64_t begin, int64_t end) {
  const foreach_job *j = job;
  run_range(j->p, begin, end, j->fn, j->ctx);
}

int cpu_foreach(int nops, const ml_array *const *ops, cpu_run_fn fn, void *ctx) {
  int64_t total = ml_array_numel(ops[0]);
  if (total == 0) return ML_OK;
  plan p;
  make_plan(&p, nops, ops);
  foreach_job j = {&p, fn, ctx};
  cpu_split(cpu_threads_for(total, CPU_PARALLEL_MIN), total, foreach_part, &j);
  return ML_OK;
}
