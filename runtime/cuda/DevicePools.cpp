#include "DevicePools.h"

#include "CachingAllocator.h"
#include "CudaDriver.h"
#include "ptxjit/RuntimeError.h"

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <system_error>
#include <thread>

namespace ptxjit::runtime::cuda {

namespace {

struct DevicePool {
  CUmemoryPool Pool = nullptr; // null where the device has no pool support...
  // ...and blocks are cached per context instead: memory from cuMemAlloc belongs to the context
  // that allocated it and goes with it (JIT::forget_context drops that context's cache).
  std::mutex CachesMutex; // guards Caches
  std::map<CUcontext, std::unique_ptr<CachingAllocator>> Caches;
  std::atomic<uint64_t> Allocations{0}, Frees{0}, Failed{0};
  // The driver makes a process's first stream-ordered allocation on a device in about 7 ms (then
  // 0.01 ms; cuMemAlloc's first takes 0.08 ms). Until a warming thread has made it (Warm), Pool's
  // allocations come from the caches over cuMemAlloc (bridged) instead, so that a process's first
  // realize does not wait for it; Bridged counts those blocks not yet freed.
  std::atomic<bool> Warm{false};
  std::atomic<uint64_t> Bridged{0}, BridgedAllocations{0};
};

constexpr int MaxDevices = 64;
std::mutex CreateMutex; // guards creating pools; lookups read Pools without it
std::array<std::array<std::atomic<DevicePool *>, MaxDevices>, 2> Pools{};

const char *nameOf(PoolKind kind) { return kind == PoolKind::Transient ? "transient" : "buffer"; }

std::string describePool(PoolKind kind, int device) {
  return std::string("the ") + nameOf(kind) + " pool of device " + std::to_string(device);
}

std::atomic<DevicePool *> &slot(PoolKind kind, int device) { return Pools[static_cast<int>(kind)][device]; }

DevicePool *poolFor(PoolKind kind, int device) {
  if (device < 0 || device >= MaxDevices)
    throw RuntimeError("CUDA device " + std::to_string(device) + " is beyond the " + std::to_string(MaxDevices) +
                       " devices ptxjit keeps pools for");
  if (DevicePool *p = slot(kind, device).load(std::memory_order_acquire))
    return p;
  std::lock_guard<std::mutex> lock(CreateMutex);
  if (DevicePool *p = slot(kind, device).load(std::memory_order_acquire))
    return p;
  const DriverApi &api = driver();
  auto owned = std::make_unique<DevicePool>(); // lives as long as the process, like the pool it names
  DevicePool *p = owned.get();
  CUdevice handle;
  int supported = 0;
  // PTXJIT_NO_MEMORY_POOLS=1 takes the fallback on any device (to test it, or to compare).
  const char *noPools = std::getenv("PTXJIT_NO_MEMORY_POOLS");
  if (api.cuDeviceGet(&handle, device) == CUDA_SUCCESS &&
      api.cuDeviceGetAttribute(&supported, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, handle) == CUDA_SUCCESS &&
      supported && !(noPools && std::string(noPools) == "1")) {
    CUmemPoolProps props{};
    props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    props.location.id = device;
    PTXJIT_CUDA_CALL(cuMemPoolCreate(&p->Pool, &props), describePool(kind, device));
    cuuint64_t keep = UINT64_MAX;
    PTXJIT_CUDA_CALL(cuMemPoolSetAttribute(p->Pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keep),
                     describePool(kind, device));
  }
  slot(kind, device).store(owned.release(), std::memory_order_release);
  return p;
}

int currentDevice(CUdevice *device) { return driver().cuCtxGetDevice(device); }

// The cache of the context current on this thread, or null where it has none.
CachingAllocator *findCurrentCache(DevicePool &p) {
  CUcontext context = nullptr;
  driver().cuCtxGetCurrent(&context);
  std::lock_guard<std::mutex> lock(p.CachesMutex);
  auto it = p.Caches.find(context);
  return it == p.Caches.end() ? nullptr : it->second.get();
}

// The cache of the context current on this thread, made on first use.
CachingAllocator &currentCache(DevicePool &p) {
  CUcontext context = nullptr;
  driver().cuCtxGetCurrent(&context);
  std::lock_guard<std::mutex> lock(p.CachesMutex);
  std::unique_ptr<CachingAllocator> &cache = p.Caches[context];
  if (!cache)
    cache = std::make_unique<CachingAllocator>(CachingAllocator::Backend{
        [](size_t bytes, uint64_t *out) {
          CUdeviceptr d = 0;
          CUresult r = driver().cuMemAlloc(&d, bytes);
          *out = d;
          return int(r);
        },
        [](uint64_t pointer) { return int(driver().cuMemFree(pointer)); }});
  return *cache;
}

// The threads that make each device's first pool allocations, one per device, started by the
// first allocation on it. Contexts they run in are listed so that forgetting a context waits for
// them; exit waits a little, for a process that ends right after its first realize.
struct Warmers {
  std::mutex Mutex; // guards all below
  std::condition_variable Finished;
  std::array<bool, MaxDevices> Started{}, Done{};
  std::multiset<CUcontext> Running;
};
Warmers &warmers() {
  static Warmers *w = new Warmers; // leaked: a warming thread may outlive static destruction
  return *w;
}

void waitForWarmersAtExit() {
  Warmers &w = warmers();
  std::unique_lock<std::mutex> lock(w.Mutex);
  // Bounded: a thread held up in a context that faulted must not hold up the exit.
  w.Finished.wait_for(lock, std::chrono::seconds(1), [&] { return w.Running.empty(); });
}

// Makes and frees one block in each of the device's pools on a stream of its own, then lets the
// pools serve allocations. A failure leaves the pool to report it on the caller's own allocation.
void warmPools(CUcontext context, int device) {
  const DriverApi &api = driver();
  if (api.cuCtxPushCurrent(context) == CUDA_SUCCESS) {
    CUstream stream = nullptr;
    bool ownStream = api.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING) == CUDA_SUCCESS;
    for (PoolKind kind : {PoolKind::Transient, PoolKind::Buffer}) {
      try {
        DevicePool *p = poolFor(kind, device);
        CUdeviceptr block = 0;
        if (p->Pool && api.cuMemAllocFromPoolAsync(&block, 1, p->Pool, stream) == CUDA_SUCCESS)
          api.cuMemFreeAsync(block, stream);
        p->Warm.store(true, std::memory_order_release);
        // Bridged blocks already freed go back to the device; those still in use go when freed.
        if (CachingAllocator *cache = findCurrentCache(*p); cache && p->Pool)
          cache->trim(0);
      } catch (const RuntimeError &) {
        // The pool could not be made: the caller's next allocation tries again and says why.
      }
    }
    if (ownStream)
      api.cuStreamDestroy(stream);
    CUcontext popped;
    api.cuCtxPopCurrent(&popped);
  }
  for (PoolKind kind : {PoolKind::Transient, PoolKind::Buffer})
    if (DevicePool *p = slot(kind, device).load(std::memory_order_acquire))
      p->Warm.store(true, std::memory_order_release);
  Warmers &w = warmers();
  std::lock_guard<std::mutex> lock(w.Mutex);
  w.Running.erase(w.Running.find(context));
  w.Done[device] = true;
  w.Finished.notify_all();
}

// Starts the device's warming thread in the current context, once per device.
void startWarming(int device) {
  Warmers &w = warmers();
  std::lock_guard<std::mutex> lock(w.Mutex);
  if (w.Started[device])
    return;
  w.Started[device] = true;
  CUcontext context = nullptr;
  driver().cuCtxGetCurrent(&context);
  static bool exitHook = std::atexit(waitForWarmersAtExit) == 0;
  (void)exitHook;
  w.Running.insert(context);
  try {
    std::thread(warmPools, context, device).detach();
  } catch (const std::system_error &) {
    // No thread: the pools warm on the caller's first allocation instead.
    w.Running.erase(w.Running.find(context));
    w.Done[device] = true;
    for (PoolKind kind : {PoolKind::Transient, PoolKind::Buffer})
      poolFor(kind, device)->Warm.store(true, std::memory_order_release);
  }
}

// Whether `stream` is being captured into a graph: a capture records pool allocations as graph
// nodes, which a bridged cuMemAlloc would not be. An error (the legacy stream while another
// stream captures) counts as capturing.
bool isCapturing(CUstream stream) {
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  return driver().cuStreamIsCapturing(stream, &status) != CUDA_SUCCESS || status != CU_STREAM_CAPTURE_STATUS_NONE;
}

// Runs `work` with `context` current: a cache's blocks are freed in their own context.
template <typename Work> void inContext(CUcontext context, Work work) {
  const DriverApi &api = driver();
  if (api.cuCtxPushCurrent(context) != CUDA_SUCCESS)
    return;
  work();
  CUcontext popped;
  api.cuCtxPopCurrent(&popped);
}

} // namespace

int pool_malloc(PoolKind kind, CUstream stream, size_t bytes, CUdeviceptr *out) {
  CUdevice device;
  if (int r = currentDevice(&device); r != CUDA_SUCCESS)
    return r;
  DevicePool *p = poolFor(kind, device);
  const DriverApi &api = driver();
  bytes = bytes ? bytes : 1;
  bool bridged = false;
  if (p->Pool && !p->Warm.load(std::memory_order_acquire)) {
    startWarming(device);
    bridged = !isCapturing(stream);
  }
  if (!p->Pool || bridged) {
    uint64_t pointer = 0;
    int r = currentCache(*p).allocate(bytes, &pointer);
    *out = pointer;
    (r == 0 ? p->Allocations : p->Failed).fetch_add(1, std::memory_order_relaxed);
    if (r == 0 && bridged) {
      p->Bridged.fetch_add(1, std::memory_order_relaxed);
      p->BridgedAllocations.fetch_add(1, std::memory_order_relaxed);
    }
    return r;
  }
  CUresult r = api.cuMemAllocFromPoolAsync(out, bytes, p->Pool, stream);
  if (r == CUDA_ERROR_OUT_OF_MEMORY) {
    // Memory kept for reuse may be what is missing: give it back and try once more.
    api.cuStreamSynchronize(stream);
    api.cuMemPoolTrimTo(p->Pool, 0);
    r = api.cuMemAllocFromPoolAsync(out, bytes, p->Pool, stream);
  }
  (r == CUDA_SUCCESS ? p->Allocations : p->Failed).fetch_add(1, std::memory_order_relaxed);
  return r;
}

int pool_free(PoolKind kind, CUstream stream, CUdeviceptr pointer) {
  CUdevice device;
  if (int r = currentDevice(&device); r != CUDA_SUCCESS)
    return r;
  DevicePool *p = poolFor(kind, device);
  CachingAllocator *bridge = nullptr;
  if (p->Pool && p->Bridged.load(std::memory_order_acquire))
    if (CachingAllocator *cache = findCurrentCache(*p); cache && cache->holds(pointer))
      bridge = cache;
  int r = CUDA_SUCCESS;
  if (p->Pool && !bridge) {
    r = driver().cuMemFreeAsync(pointer, stream);
  } else if ((r = driver().cuStreamSynchronize(stream)) == CUDA_SUCCESS) {
    CachingAllocator &cache = bridge ? *bridge : currentCache(*p);
    r = cache.release(pointer);
    if (bridge && r == 0) {
      p->Bridged.fetch_sub(1, std::memory_order_relaxed);
      if (p->Warm.load(std::memory_order_acquire))
        cache.trim(0); // the pool serves from now on
    }
  }
  if (r == CUDA_SUCCESS)
    p->Frees.fetch_add(1, std::memory_order_relaxed);
  return r;
}

PoolStatistics pool_statistics(PoolKind kind, int device) {
  PoolStatistics s;
  DevicePool *p = device >= 0 && device < MaxDevices ? slot(kind, device).load(std::memory_order_acquire) : nullptr;
  if (!p)
    return s;
  s.allocations = p->Allocations.load();
  s.frees = p->Frees.load();
  s.failed_allocations = p->Failed.load();
  s.bridged_allocations = p->BridgedAllocations.load();
  {
    std::lock_guard<std::mutex> lock(p->CachesMutex);
    for (const auto &[context, cache] : p->Caches) {
      CachingAllocator::Statistics c = cache->statistics();
      s.reserved_bytes += c.reserved_bytes;
      s.used_bytes += c.used_bytes;
      s.high_water_bytes += c.high_water_bytes;
    }
  }
  if (p->Pool) {
    s.pooled = true;
    const DriverApi &api = driver();
    cuuint64_t v = 0; // added to the bridged blocks' figures
    if (api.cuMemPoolGetAttribute(p->Pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &v) == CUDA_SUCCESS)
      s.reserved_bytes += v;
    if (api.cuMemPoolGetAttribute(p->Pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &v) == CUDA_SUCCESS)
      s.used_bytes += v;
    if (api.cuMemPoolGetAttribute(p->Pool, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &v) == CUDA_SUCCESS)
      s.high_water_bytes += v;
  }
  return s;
}

void trim_graph_memory(int device) {
  CUdevice handle;
  PTXJIT_CUDA_CALL(cuDeviceGet(&handle, device), "the graph memory of device " + std::to_string(device));
  PTXJIT_CUDA_CALL(cuDeviceGraphMemTrim(handle), "the graph memory of device " + std::to_string(device));
}

void trim_pool(PoolKind kind, int device, size_t keep) {
  DevicePool *p = poolFor(kind, device);
  if (p->Pool)
    PTXJIT_CUDA_CALL(cuMemPoolTrimTo(p->Pool, keep), describePool(kind, device));
  std::lock_guard<std::mutex> lock(p->CachesMutex);
  for (const auto &[context, cache] : p->Caches)
    inContext(context, [&, &cache = cache] { cache->trim(keep); });
}

void warm_pools(int device) {
  if (device < 0 || device >= MaxDevices)
    throw RuntimeError("CUDA device " + std::to_string(device) + " is beyond the " + std::to_string(MaxDevices) +
                       " devices ptxjit keeps pools for");
  startWarming(device);
  Warmers &w = warmers();
  std::unique_lock<std::mutex> lock(w.Mutex);
  w.Finished.wait(lock, [&] { return w.Done[device]; });
}

void forget_pool_context(CUcontext context) {
  {
    Warmers &w = warmers();
    std::unique_lock<std::mutex> lock(w.Mutex);
    w.Finished.wait(lock, [&] { return w.Running.count(context) == 0; });
  }
  for (int kind = 0; kind < 2; ++kind)
    for (int device = 0; device < MaxDevices; ++device) {
      DevicePool *p = slot(static_cast<PoolKind>(kind), device).load(std::memory_order_acquire);
      if (!p)
        continue;
      std::lock_guard<std::mutex> lock(p->CachesMutex);
      if (auto it = p->Caches.find(context); it != p->Caches.end()) {
        CachingAllocator::Statistics gone = it->second->statistics();
        if (p->Pool) // bridged blocks that go with the context
          p->Bridged.fetch_sub(gone.allocations - gone.frees, std::memory_order_relaxed);
        inContext(context, [&] { it->second.reset(); });
        p->Caches.erase(it);
      }
    }
}

void set_pool_release_threshold(PoolKind kind, int device, uint64_t bytes) {
  if (DevicePool *p = poolFor(kind, device); p->Pool) {
    cuuint64_t value = bytes;
    PTXJIT_CUDA_CALL(cuMemPoolSetAttribute(p->Pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &value),
                     describePool(kind, device));
  }
}

} // namespace ptxjit::runtime::cuda
