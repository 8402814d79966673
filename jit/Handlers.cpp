#include "Handlers.h"

#include "DiskCache.h"
#include "cuda/DefaultHandlers.h"
#include "cuda/DeviceCode.h"
#include "cuda/DevicePools.h"
#include "cuda/GraphCache.h"
#include "ptxjit/RuntimeError.h"

#include <atomic>
#include <cstdio>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

namespace ptxjit {

namespace {
// The defaults are immutable snapshots: a realize reads the current one with one atomic load
// (no lock on the realize path); setting them publishes a new snapshot. Snapshots are kept for
// the life of the process, since a realize on another thread may still be reading an old one.
std::mutex SnapshotsMutex; // guards Snapshots (writers only)
std::vector<std::unique_ptr<const JITHandlers>> Snapshots;
std::atomic<const JITHandlers *> Defaults{nullptr};

template <typename F> F pick(F call, F pipeline, F defaults) { return call ? call : pipeline ? pipeline : defaults; }

// device_malloc and device_free come as a pair from one layer, so that memory from one allocator
// never reaches another's free.
void pickMemoryHandlers(JITHandlers &out, const JITHandlers &call, const JITHandlers &pipeline,
                        const JITHandlers &defaults) {
  const std::pair<const JITHandlers *, const char *> layers[] = {
      {&call, "the call's"}, {&pipeline, "the Pipeline's"}, {&defaults, "the default"}};
  for (const auto &[layer, name] : layers) {
    if (!layer->device_malloc && !layer->device_free)
      continue;
    if (!layer->device_malloc || !layer->device_free)
      throw RuntimeError(std::string(name) + " handlers set " + (layer->device_malloc ? "device_malloc" : "device_free") +
                         " without " + (layer->device_malloc ? "device_free" : "device_malloc") +
                         ": override both or neither");
    out.device_malloc = layer->device_malloc;
    out.device_free = layer->device_free;
    return;
  }
}

runtime::cuda::PoolKind poolKind(DeviceMemory pool) {
  return pool == DeviceMemory::Intermediates ? runtime::cuda::PoolKind::Transient : runtime::cuda::PoolKind::Buffer;
}

jit::RealizeCall &self(void *p) { return *static_cast<jit::RealizeCall *>(p); }
} // namespace

JITHandlers JIT::set_default_handlers(const JITHandlers &handlers) {
  std::lock_guard<std::mutex> lock(SnapshotsMutex);
  Snapshots.push_back(std::make_unique<const JITHandlers>(handlers));
  const JITHandlers *previous = Defaults.exchange(Snapshots.back().get(), std::memory_order_acq_rel);
  return previous ? *previous : JITHandlers{};
}

void JIT::forget_context(CUcontext context) {
  runtime::cuda::DeviceCode::forget_everywhere(context);
  runtime::cuda::forget_pool_context(context);
}

DeviceMemoryStatistics JIT::device_memory_statistics(int device, DeviceMemory pool) {
  runtime::cuda::PoolStatistics p = runtime::cuda::pool_statistics(poolKind(pool), device);
  DeviceMemoryStatistics s;
  s.reserved_bytes = p.reserved_bytes;
  s.used_bytes = p.used_bytes;
  s.high_water_bytes = p.high_water_bytes;
  s.allocations = p.allocations;
  s.frees = p.frees;
  s.failed_allocations = p.failed_allocations;
  s.pooled = p.pooled;
  return s;
}

void JIT::trim_device_memory(int device, size_t keep_bytes) {
  for (auto kind : {runtime::cuda::PoolKind::Transient, runtime::cuda::PoolKind::Buffer})
    runtime::cuda::trim_pool(kind, device, keep_bytes);
  runtime::cuda::trim_graph_memory(device);
}

void JIT::set_device_memory_release_threshold(int device, uint64_t bytes) {
  for (auto kind : {runtime::cuda::PoolKind::Transient, runtime::cuda::PoolKind::Buffer})
    runtime::cuda::set_pool_release_threshold(kind, device, bytes);
}

CudaGraphStatistics JIT::cuda_graph_statistics() {
  const runtime::cuda::GraphCounters &c = runtime::cuda::graph_counters();
  CudaGraphStatistics s;
  s.built = c.built.load(std::memory_order_relaxed);
  s.instantiated = c.instantiated.load(std::memory_order_relaxed);
  s.replayed = c.replayed.load(std::memory_order_relaxed);
  s.updated_nodes = c.updated_nodes.load(std::memory_order_relaxed);
  s.stream_fallbacks = c.stream_fallbacks.load(std::memory_order_relaxed);
  return s;
}

CompileCacheStatistics JIT::compile_cache_statistics() {
  const jit::DiskCacheCounters &c = jit::DiskCache::process().counters();
  CompileCacheStatistics s;
  s.hits = c.hits.load(std::memory_order_relaxed);
  s.misses = c.misses.load(std::memory_order_relaxed);
  s.stores = c.stores.load(std::memory_order_relaxed);
  s.bytes_read = c.bytes_read.load(std::memory_order_relaxed);
  s.bytes_written = c.bytes_written.load(std::memory_order_relaxed);
  s.evictions = c.evictions.load(std::memory_order_relaxed);
  s.rejected = c.rejected.load(std::memory_order_relaxed);
  return s;
}

namespace jit {

JITHandlers default_handlers() {
  const JITHandlers *current = Defaults.load(std::memory_order_acquire);
  return current ? *current : JITHandlers{};
}

RealizeCall::RealizeCall(JITUserContext *user, const JITHandlers &pipeline) : User(user) {
  JITHandlers defaults = default_handlers();
  JITHandlers call = user ? user->handlers : JITHandlers{};
  Handlers.print = pick(call.print, pipeline.print, defaults.print);
  Handlers.error = pick(call.error, pipeline.error, defaults.error);
  Handlers.acquire_context = pick(call.acquire_context, pipeline.acquire_context, defaults.acquire_context);
  Handlers.release_context = pick(call.release_context, pipeline.release_context, defaults.release_context);
  Handlers.get_stream = pick(call.get_stream, pipeline.get_stream, defaults.get_stream);
  pickMemoryHandlers(Handlers, call, pipeline, defaults);

  Runtime.user_context = this;
  Runtime.error = [](void *p, const char *message) {
    RealizeCall &r = self(p);
    r.record_error(message);
    if (r.Handlers.error)
      r.Handlers.error(r.User, message);
  };
  Runtime.print = [](void *p, const char *message) {
    RealizeCall &r = self(p);
    if (r.Handlers.print)
      r.Handlers.print(r.User, message);
    else
      std::fputs(message, stderr);
  };
  Runtime.acquire_context = [](void *p, CUcontext *out, int create) {
    RealizeCall &r = self(p);
    if (r.Handlers.acquire_context)
      return r.Handlers.acquire_context(r.User, out, create != 0);
    std::string why;
    int device = runtime::cuda::choose_device(r.User ? r.User->device : -1, r.BufferOnDevice);
    int result = runtime::cuda::default_acquire_context(device, out, create != 0, &why);
    if (result != 0)
      r.record_error(why.c_str());
    return result;
  };
  Runtime.release_context = [](void *p) {
    RealizeCall &r = self(p);
    return r.Handlers.release_context ? r.Handlers.release_context(r.User) : runtime::cuda::default_release_context();
  };
  Runtime.get_stream = [](void *p, CUcontext context, CUstream *out) {
    RealizeCall &r = self(p);
    return r.Handlers.get_stream ? r.Handlers.get_stream(r.User, context, out)
                                 : runtime::cuda::default_get_stream(context, out);
  };
  Runtime.device_malloc = [](void *p, CUcontext context, CUstream stream, size_t bytes, CUdeviceptr *out) {
    RealizeCall &r = self(p);
    return r.Handlers.device_malloc ? r.Handlers.device_malloc(r.User, context, stream, bytes, out)
                                    : runtime::cuda::default_device_malloc(context, stream, bytes, out);
  };
  Runtime.device_free = [](void *p, CUcontext context, CUstream stream, CUdeviceptr pointer) {
    RealizeCall &r = self(p);
    return r.Handlers.device_free ? r.Handlers.device_free(r.User, context, stream, pointer)
                                  : runtime::cuda::default_device_free(context, stream, pointer);
  };
}

std::string RealizeCall::first_error() const {
  std::lock_guard<std::mutex> lock(ErrorMutex);
  return ErrorMessage;
}

void RealizeCall::record_error(const char *message) {
  std::lock_guard<std::mutex> lock(ErrorMutex);
  if (ErrorMessage.empty())
    ErrorMessage = message;
}

} // namespace jit
} // namespace ptxjit
