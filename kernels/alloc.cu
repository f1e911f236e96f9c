/* The caching allocator of device memory (DESIGN.md, "Memory and the Lua
 * GC").
 *
 * Requests are rounded to size classes: multiples of 512 bytes up to
 * 1 MiB, of 2 MiB above. A freed block goes to its device's cache instead
 * of cudaFree: a small one to the free list of its class (a request of
 * that class takes it back in O(1), with no map: the core passes the
 * requested size to free, and so the class), a large one to a map from
 * size to blocks, where a request takes the smallest cached block that
 * fits if it wastes at most a quarter of the request. Otherwise cudaMalloc
 * makes a new block. Work runs on one stream per device, so a block freed
 * by the host may be handed out at once: kernels queued later on that
 * stream run after those that used it.
 *
 * When cudaMalloc fails, the cache is given back to the driver (after the
 * stream drains) and cudaMalloc is tried once more; if that fails too the
 * allocation returns ML_ENOMEM without a message, so that the core can
 * run a full Lua collection (freeing unreachable arrays into the cache)
 * and try again, and format the final "out of memory" error itself.
 *
 * The host side is single-threaded, as the Lua state that drives it. */
#include <map>
#include <new>
#include <unordered_map>
#include <vector>

#include "launch.cuh"

namespace {

const size_t SMALL = (size_t)1 << 20, QUANTUM = 512, BIG = (size_t)2 << 20;

struct pool {
  std::vector<void *> small[SMALL / QUANTUM]; /* class k: (k + 1) * 512 B */
  std::multimap<size_t, void *> cache;        /* large blocks */
  std::unordered_map<void *, size_t> live;    /* large blocks handed out */
  size_t allocated = 0, cached = 0, peak = 0;
};

pool *pools;

size_t size_class(size_t n) {
  if (n <= SMALL) return n > 0 ? (n + QUANTUM - 1) / QUANTUM * QUANTUM : QUANTUM;
  return (n + BIG - 1) / BIG * BIG;
}

/* cudaFree of every cached block, once the device's work is done. */
int release_cache(int device) {
  pool &p = pools[device];
  if (p.cached == 0) return ML_OK;
  cuda_dev *d;
  int rc = cuda_enter(device, &d);
  if (rc) return rc;
  rc = cuda_check(cudaStreamSynchronize(d->stream), "empty_cache");
  for (auto &list : p.small) {
    for (void *block : list) {
      int e = cuda_check(cudaFree(block), "empty_cache");
      if (!rc) rc = e;
    }
    list.clear();
  }
  for (auto &block : p.cache) {
    int e = cuda_check(cudaFree(block.second), "empty_cache");
    if (!rc) rc = e;
  }
  p.cache.clear();
  p.cached = 0;
  return rc;
}

/* A new block from the driver, the cache given back first if it must. */
int fresh_block(int device, size_t size, void **block) {
  cuda_dev *d;
  int rc = cuda_enter(device, &d);
  if (rc) return rc;
  if (cudaMalloc(block, size) == cudaSuccess) return ML_OK;
  cudaGetLastError(); /* not sticky: clear it for later checks */
  rc = release_cache(device);
  if (rc) return rc;
  if (cudaMalloc(block, size) == cudaSuccess) return ML_OK;
  cudaGetLastError();
  return ML_ENOMEM;
}

} // namespace

int cuda_pools_init(int n) {
  pools = new (std::nothrow) pool[n > 0 ? n : 1];
  return pools ? ML_OK : ml_fail(ML_ENOMEM, "cuda: out of host memory");
}

extern "C" int cuda_alloc(int device, size_t nbytes, void **ptr) {
  pool &p = pools[device];
  size_t size = size_class(nbytes);
  void *block = nullptr;
  if (size <= SMALL) {
    std::vector<void *> &list = p.small[size / QUANTUM - 1];
    if (!list.empty()) {
      block = list.back();
      list.pop_back();
      p.cached -= size;
    } else {
      int rc = fresh_block(device, size, &block);
      if (rc) return rc;
    }
  } else {
    auto it = p.cache.lower_bound(size);
    if (it != p.cache.end() && it->first - size <= size / 4) {
      size = it->first;
      block = it->second;
      p.cache.erase(it);
      p.cached -= size;
    } else {
      int rc = fresh_block(device, size, &block);
      if (rc) return rc;
    }
    p.live[block] = size;
  }
  p.allocated += size;
  if (p.allocated > p.peak) p.peak = p.allocated;
  *ptr = block;
  return ML_OK;
}

extern "C" void cuda_free(int device, void *ptr, size_t nbytes) {
  pool &p = pools[device];
  size_t size = size_class(nbytes);
  if (size <= SMALL) {
    p.small[size / QUANTUM - 1].push_back(ptr);
  } else {
    auto it = p.live.find(ptr);
    if (it == p.live.end()) return;
    size = it->second;
    p.live.erase(it);
    p.cache.emplace(size, ptr);
  }
  p.allocated -= size;
  p.cached += size;
}

extern "C" int cuda_memory(int device, ml_device_memory *out) {
  cuda_dev *d;
  int rc = cuda_enter(device, &d);
  if (rc) return rc;
  size_t free_bytes = 0, total = 0;
  rc = cuda_check(cudaMemGetInfo(&free_bytes, &total), "memory");
  if (rc) return rc;
  const pool &p = pools[device];
  out->allocated = p.allocated;
  out->cached = p.cached;
  out->peak = p.peak;
  out->total = total;
  return ML_OK;
}

extern "C" int cuda_empty_cache(int device) { return release_cache(device); }
