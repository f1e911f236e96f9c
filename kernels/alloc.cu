/* The caching allocator of device memory (DESIGN.md, "Memory and the Lua
 * GC").
 *
 * Requests are rounded to size classes: multiples of 512 bytes up to
 * 1 MiB, of 2 MiB above. A freed block goes to its device's cache (a map
 * from size to blocks) instead of cudaFree; a request takes the smallest
 * cached block that fits if it wastes at most a quarter of the request,
 * else cudaMalloc makes a new block. Work runs on one stream per device,
 * so a block freed by the host may be handed out at once: kernels queued
 * later on that stream run after those that used it.
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

#include "common.cuh"

namespace {

struct pool {
  std::multimap<size_t, void *> cache;
  std::unordered_map<void *, size_t> live;
  size_t allocated = 0, cached = 0, peak = 0;
};

pool *pools;

size_t size_class(size_t n) {
  const size_t small = (size_t)1 << 20, big = (size_t)2 << 20;
  if (n <= small) return (n + 511) & ~(size_t)511;
  return (n + big - 1) / big * big;
}

/* cudaFree of every cached block, once the device's work is done. */
int release_cache(int device) {
  pool &p = pools[device];
  if (p.cache.empty()) return ML_OK;
  cuda_dev *d;
  int rc = cuda_enter(device, &d);
  if (rc) return rc;
  rc = cuda_check(cudaStreamSynchronize(d->stream), "empty_cache");
  for (auto &block : p.cache) {
    int e = cuda_check(cudaFree(block.second), "empty_cache");
    if (!rc) rc = e;
  }
  p.cache.clear();
  p.cached = 0;
  return rc;
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
  auto it = p.cache.lower_bound(size);
  if (it != p.cache.end() && it->first - size <= size / 4) {
    size = it->first;
    block = it->second;
    p.cache.erase(it);
    p.cached -= size;
  } else {
    cuda_dev *d;
    int rc = cuda_enter(device, &d);
    if (rc) return rc;
    if (cudaMalloc(&block, size) != cudaSuccess) {
      cudaGetLastError(); /* not sticky: clear it for later checks */
      rc = release_cache(device);
      if (rc) return rc;
      if (cudaMalloc(&block, size) != cudaSuccess) {
        cudaGetLastError();
        return ML_ENOMEM;
      }
    }
  }
  p.live[block] = size;
  p.allocated += size;
  if (p.allocated > p.peak) p.peak = p.allocated;
  *ptr = block;
  return ML_OK;
}

extern "C" void cuda_free(int device, void *ptr, size_t nbytes) {
  (void)nbytes;
  pool &p = pools[device];
  auto it = p.live.find(ptr);
  if (it == p.live.end()) return;
  size_t size = it->second;
  p.live.erase(it);
  p.allocated -= size;
  p.cache.emplace(size, ptr);
  p.cached += size;
}

extern "C" int cuda_memory(int device, cuda_memory_stats *out) {
  if (device < 0 || device >= cuda_ndevices)
    return ml_fail(ML_EDEVICE, "device cuda:%d is not present (%d cuda device%s)",
                   device, cuda_ndevices, cuda_ndevices == 1 ? "" : "s");
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

extern "C" int cuda_empty_cache(int device) {
  if (device < 0 || device >= cuda_ndevices)
    return ml_fail(ML_EDEVICE, "device cuda:%d is not present (%d cuda device%s)",
                   device, cuda_ndevices, cuda_ndevices == 1 ? "" : "s");
  return release_cache(device);
}
