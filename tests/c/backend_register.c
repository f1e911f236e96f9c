/* Registers backend tables with one entry left empty, and complete ones,
 * and prints what registration answered, a line each, for
 * tests/backend_spec.lua: an incomplete table must fail at start-up with a
 * message naming its missing entry. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "../../src/core/conv_backend.h"
#include "../../src/core/filter_backend.h"
#include "../../src/core/knn_backend.h"
#include "../../src/core/linalg_backend.h"

static int stub(void) { return ML_OK; }

/* Every function pointer of a table, from offset first to its end, set to
 * stub (never called: registration only reads them). */
static void fill(void *table, size_t first, size_t size) {
  int (*fn)(void) = stub;
  for (size_t at = first; at < size; at += sizeof fn)
    memcpy((char *)table + at, &fn, sizeof fn);
}

static void report(const char *what, int rc) {
  printf("%s: %s\n", what, rc ? ml_last_error() : "ok");
}

int main(void) {
  ml_backend b;
  memset(&b, 0, sizeof b);
  b.name = "cpu";
  fill(&b, offsetof(ml_backend, alloc), sizeof b);
  b.gather = NULL;
  report("general without gather", ml_backend_register(ML_CPU, &b, 1, NULL));
  fill(&b, offsetof(ml_backend, alloc), sizeof b);
  b.random = NULL;
  report("general without random", ml_backend_register(ML_CPU, &b, 1, NULL));
  fill(&b, offsetof(ml_backend, alloc), sizeof b);
  report("general complete", ml_backend_register(ML_CPU, &b, 1, NULL));

  ml_knn_backend k;
  memset(&k, 0, sizeof k);
  fill(&k, offsetof(ml_knn_backend, tile), sizeof k);
  k.refine = NULL;
  report("knn without refine", ml_knn_backend_register(ML_CPU, &k));
  fill(&k, offsetof(ml_knn_backend, tile), sizeof k);
  report("knn complete", ml_knn_backend_register(ML_CPU, &k));

  ml_linalg_backend l;
  memset(&l, 0, sizeof l);
  fill(&l, offsetof(ml_linalg_backend, potrf), sizeof l);
  l.gesvd = NULL;
  report("linalg without gesvd", ml_linalg_backend_register(ML_CPU, &l));
  fill(&l, offsetof(ml_linalg_backend, potrf), sizeof l);
  report("linalg complete", ml_linalg_backend_register(ML_CPU, &l));

  ml_conv_backend cv;
  memset(&cv, 0, sizeof cv);
  report("conv without forward", ml_conv_backend_register(ML_CPU, &cv));
  fill(&cv, offsetof(ml_conv_backend, forward), sizeof cv);
  report("conv complete", ml_conv_backend_register(ML_CPU, &cv));
  ml_filter_backend f;
  memset(&f, 0, sizeof f);
  fill(&f, offsetof(ml_filter_backend, correlate), sizeof f);
  f.box = NULL;
  report("filter without box", ml_filter_backend_register(ML_CPU, &f));
  fill(&f, offsetof(ml_filter_backend, correlate), sizeof f);
  report("filter complete", ml_filter_backend_register(ML_CPU, &f));
  return 0;
}
