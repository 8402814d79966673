#ifndef PTXJIT_RUNTIME_CUDA_GRAPHCACHE_H
#define PTXJIT_RUNTIME_CUDA_GRAPHCACHE_H

// The CUDA graphs of one compiled pipeline in one context (cuda_graphs targets), by shape key:
// the types, mins, extents and strides of the realize's buffers. A realize checks a graph out,
// replays it (updating the kernel nodes whose arguments changed) and checks it back in, so two
// threads never update or launch one executable graph at once; a second concurrent realize of
// the same shapes finds none and builds its own.

#include <cuda.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace ptxjit::runtime::cuda {

/// One operation of a realize, in the order its host code made it.
struct GraphOperation {
  enum class Kind : uint8_t { Allocate, Launch, Free };
  Kind kind = Kind::Launch;
  CUgraphNode node = nullptr;
  /// Allocate: the size and the address the graph gives; Free: the address.
  uint64_t bytes = 0;
  CUdeviceptr pointer = 0;
  /// Launch: the kernel (its index in the DeviceCode), its shape, and its argument values packed
  /// 8-byte aligned, as the executable graph holds them.
  int32_t kernel = -1;
  CUfunction function = nullptr;
  uint32_t grid[3] = {1, 1, 1}, block[3] = {1, 1, 1}, shared_bytes = 0;
  std::vector<uint8_t> arguments;
};

/// A graph, its one executable, and the operations it was built from. Destroying it destroys
/// both (an executable still running is freed by the driver when it completes).
struct CachedGraph {
  CachedGraph() = default;
  ~CachedGraph();
  CachedGraph(const CachedGraph &) = delete;
  CachedGraph &operator=(const CachedGraph &) = delete;

  CUgraph graph = nullptr;
  CUgraphExec exec = nullptr;
  std::vector<GraphOperation> operations;
};

class GraphCache {
public:
  /// A graph built for `shapeKey`, taken out of the cache; null when there is none.
  std::unique_ptr<CachedGraph> checkout(const std::string &shapeKey);
  /// Puts `graph` (back) in; the least recently used goes beyond MaxGraphs.
  void checkin(const std::string &shapeKey, std::unique_ptr<CachedGraph> graph);
  /// False once a realize did what a graph cannot hold (a host-device copy between kernels, a
  /// launch from a parallel task, a debug synchronization): later realizes use the stream.
  bool graphable() const { return Graphable.load(std::memory_order_relaxed); }
  void set_not_graphable() { Graphable.store(false, std::memory_order_relaxed); }

  static constexpr size_t MaxGraphs = 16;

private:
  struct Entry {
    std::string key;
    std::unique_ptr<CachedGraph> graph;
    uint64_t last_use = 0;
  };
  std::mutex Mutex; // guards Entries and Clock
  std::vector<Entry> Entries;
  uint64_t Clock = 0;
  std::atomic<bool> Graphable{true};
};

/// Process-wide counts, for JIT::cuda_graph_statistics().
struct GraphCounters {
  std::atomic<uint64_t> built{0}, instantiated{0}, replayed{0}, updated_nodes{0}, stream_fallbacks{0};
};
GraphCounters &graph_counters();

} // namespace ptxjit::runtime::cuda

#endif
