#include "cpu.h"

static const ml_backend cpu_backend = {
    .name = "cpu",
    .tf32 = 0,
    .alloc = cpu_alloc,
    .free = cpu_free,
    .memory = cpu_memory,
    .empty_cache = cpu_empty_cache,
    .device_name = cpu_device_name,
    .upload = cpu_upload,
    .download = cpu_download,
    .synchronize = cpu_synchronize,
    .copy = cpu_copy,
    .fill = cpu_fill,
    .iota = cpu_iota,
    .unary = cpu_unary,
    .binary = cpu_binary,
    .binary_scalar = cpu_binary_scalar,
    .where = cpu_where,
    .reduce = cpu_reduce,
    .cumsum = cpu_cumsum,
    .cumprod = cpu_cumprod,
    .softmax = cpu_softmax,
    .gemm = cpu_gemm,
    .index_select = cpu_index_select,
    .index_add = cpu_index_add,
    .gather = cpu_gather,
    .scatter = cpu_scatter,
    .masked_select = cpu_masked_select,
    .sort = cpu_sort,
    .topk = cpu_topk,
    .searchsorted = cpu_searchsorted,
    .histogram = cpu_histogram,
    .bincount = cpu_bincount,
    .random = cpu_random,
};

int cpu_backend_init(void) {
  int rc = ml_backend_register(ML_CPU, &cpu_backend, 1, NULL);
  if (!rc) rc = ml_knn_backend_register(ML_CPU, &cpu_knn_backend);
  if (!rc) rc = ml_linalg_backend_register(ML_CPU, &cpu_linalg_backend);
  if (!rc) rc = ml_conv_backend_register(ML_CPU, &cpu_conv_backend);
  if (!rc) rc = ml_filter_backend_register(ML_CPU, &cpu_filter_backend);
  if (!rc) rc = ml_binary_backend_register(ML_CPU, &cpu_binary_backend);
  if (!rc) rc = ml_dist_backend_register(ML_CPU, &cpu_dist_backend);
  return rc;
}
