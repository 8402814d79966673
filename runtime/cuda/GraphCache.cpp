#include "GraphCache.h"

#include "CudaDriver.h"

#include <algorithm>

namespace ptxjit::runtime::cuda {

CachedGraph::~CachedGraph() {
  std::string why;
  const DriverApi *api = try_driver(&why);
  if (!api)
    return;
  if (exec)
    api->cuGraphExecDestroy(exec);
  if (graph)
    api->cuGraphDestroy(graph);
}

std::unique_ptr<CachedGraph> GraphCache::checkout(const std::string &shapeKey) {
  std::lock_guard<std::mutex> lock(Mutex);
  for (auto it = Entries.begin(); it != Entries.end(); ++it)
    if (it->key == shapeKey) {
      std::unique_ptr<CachedGraph> graph = std::move(it->graph);
      Entries.erase(it);
      return graph;
    }
  return nullptr;
}

void GraphCache::checkin(const std::string &shapeKey, std::unique_ptr<CachedGraph> graph) {
  std::unique_ptr<CachedGraph> evicted; // destroyed outside the lock
  std::lock_guard<std::mutex> lock(Mutex);
  if (Entries.size() >= MaxGraphs) {
    auto oldest = std::min_element(Entries.begin(), Entries.end(),
                                   [](const Entry &a, const Entry &b) { return a.last_use < b.last_use; });
    evicted = std::move(oldest->graph);
    Entries.erase(oldest);
  }
  Entries.push_back({shapeKey, std::move(graph), ++Clock});
}

GraphCounters &graph_counters() {
  static GraphCounters counters;
  return counters;
}

} // namespace ptxjit::runtime::cuda
