#include "select.h"

#include <string.h>

/* Insertion-sorted runs before the merge passes. */
#define RUN 16

static void merge(const cpu_pair *a, int64_t na, const cpu_pair *b, int64_t nb,
                  cpu_pair *out) {
  int64_t i = 0, j = 0, k = 0;
  while (i < na && j < nb)
    out[k++] = cpu_pair_before(b[j], a[i]) ? b[j++] : a[i++];
  while (i < na) out[k++] = a[i++];
  while (j < nb) out[k++] = b[j++];
}

void cpu_pairs_sort(cpu_pair *p, cpu_pair *tmp, int64_t n) {
  for (int64_t lo = 0; lo < n; lo += RUN) {
    int64_t hi = lo + RUN < n ? lo + RUN : n;
    for (int64_t i = lo + 1; i < hi; i++) {
      cpu_pair x = p[i];
      int64_t j = i;
      for (; j > lo && cpu_pair_before(x, p[j - 1]); j--) p[j] = p[j - 1];
      p[j] = x;
    }
  }
  cpu_pair *src = p, *dst = tmp;
  for (int64_t w = RUN; w < n; w *= 2) {
    for (int64_t lo = 0; lo < n; lo += 2 * w) {
      int64_t mid = lo + w < n ? lo + w : n;
      int64_t hi = lo + 2 * w < n ? lo + 2 * w : n;
      merge(src + lo, mid - lo, src + mid, hi - mid, dst + lo);
    }
    cpu_pair *t = src;
    src = dst;
    dst = t;
  }
  if (src != p) memcpy(p, src, (size_t)n * sizeof *p);
}

/* Quickselect with median-of-three pivots: p[c - 1] ends as the c-th
 * smallest, with the smaller ones before it. */
uint64_t cpu_pairs_keep(cpu_pair *p, int64_t n, int64_t c) {
  int64_t lo = 0, hi = n - 1, nth = c - 1;
  while (hi > lo) {
    int64_t mid = lo + (hi - lo) / 2;
    cpu_pair t;
    if (cpu_pair_before(p[mid], p[lo])) t = p[mid], p[mid] = p[lo], p[lo] = t;
    if (cpu_pair_before(p[hi], p[lo])) t = p[hi], p[hi] = p[lo], p[lo] = t;
    if (cpu_pair_before(p[hi], p[mid])) t = p[hi], p[hi] = p[mid], p[mid] = t;
    cpu_pair pivot = p[mid];
    int64_t i = lo, j = hi;
    while (i <= j) {
      while (cpu_pair_before(p[i], pivot)) i++;
      while (cpu_pair_before(pivot, p[j])) j--;
      if (i <= j) {
        t = p[i], p[i] = p[j], p[j] = t;
        i++;
        j--;
      }
    }
    if (nth <= j)
      hi = j;
    else if (nth >= i)
      lo = i;
    else
      break;
  }
  return p[nth].key;
}

void cpu_pairs_smallest(cpu_pair *p, cpu_pair *tmp, int64_t n, int64_t k) {
  if (k < n) cpu_pairs_keep(p, n, k);
  cpu_pairs_sort(p, tmp, k);
}
