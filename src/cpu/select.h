/* Selection and sorting of (key, position) pairs: the one engine behind
 * the CPU's sort, topk and kNN candidate lists. Keys are order keys
 * (core/order_key.h, widened to 64 bits); pairs are ordered by key, then
 * position, a strict total order, so every path gives the same answer. */
#ifndef ML_CPU_SELECT_H
#define ML_CPU_SELECT_H

#include <stdint.h>

typedef struct {
  uint64_t key;
  int64_t pos;
} cpu_pair;

static inline int cpu_pair_before(cpu_pair a, cpu_pair b) {
  return a.key < b.key || (a.key == b.key && a.pos < b.pos);
}

/* Sorts p[0..n); tmp holds n pairs of scratch. */
void cpu_pairs_sort(cpu_pair *p, cpu_pair *tmp, int64_t n);

/* Keeps the c smallest of p[0..n) in p[0..c), in any order (0 < c <= n),
 * and returns the key of the largest of them. */
uint64_t cpu_pairs_keep(cpu_pair *p, int64_t n, int64_t c);

/* The k smallest of p[0..n) sorted into p[0..k) (0 < k <= n); tmp holds
 * k pairs of scratch. */
void cpu_pairs_smallest(cpu_pair *p, cpu_pair *tmp, int64_t n, int64_t k);

#endif
