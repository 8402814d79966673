#ifndef PTXJIT_RUNTIME_CUDA_GRAPHRECORDING_H
#define PTXJIT_RUNTIME_CUDA_GRAPHRECORDING_H

// One realize's operations recorded for a CUDA graph instead of run on the stream. Building, it
// adds each allocation, launch and free to a new graph as a node depending on the one before
// (the stream's order). Replaying, it checks that the host code makes the operations the cached
// graph was built from (same kernels, shapes and sizes), hands out the graph's own addresses for
// the allocations, and notes which kernels' arguments changed. When the host code does something
// else (diverges), the recording says so and the realize runs again: as a new graph when only the
// operations changed, on the stream when the host code did what a graph cannot hold.

#include "DeviceCode.h"
#include "GraphCache.h"

#include <atomic>
#include <memory>

namespace ptxjit::runtime::cuda {

class Session;

class GraphRecording {
public:
  enum class Divergence { None, Operations, NotGraphable };

  /// Replays `cached`, or builds a new graph when it is null. Throws RuntimeError.
  GraphRecording(Session &session, DeviceCode &code, std::unique_ptr<CachedGraph> cached);

  /// An intermediate's device address; 0 once the recording diverged.
  CUdeviceptr allocate(uint64_t bytes);
  /// False once the recording diverged.
  bool launch(int32_t kernel, CUfunction function, const uint32_t grid[3], const uint32_t block[3],
              uint32_t sharedBytes, void **args);
  void free(CUdeviceptr pointer);
  /// What a graph cannot hold; may come from any thread.
  void diverge(Divergence why);
  Divergence divergence() const { return Diverged.load(std::memory_order_acquire); }

  /// After the host code ran without diverging: instantiates the new graph, or updates the cached
  /// one's changed kernel nodes; then launches it on the session's stream. Throws RuntimeError.
  void launch_graph();
  /// The graph, for the cache, once launch_graph succeeded (a failed realize may have left a
  /// replayed graph's recorded arguments ahead of its executable: it is dropped).
  std::unique_ptr<CachedGraph> release() { return std::move(Graph); }
  bool replaying() const { return Replaying; }

private:
  /// The next operation of a replay, or null (and diverged) when it is not of `kind`.
  GraphOperation *expect(GraphOperation::Kind kind);
  /// The last node added, as the dependency of the next.
  size_t dependencies(CUgraphNode *out) const;

  Session &Open;
  DeviceCode &Code;
  std::unique_ptr<CachedGraph> Graph;
  bool Replaying;
  size_t Next = 0; // the next operation expected in a replay
  std::vector<size_t> Changed; // operations whose arguments a replay must update
  std::vector<uint8_t> Scratch; // a replayed launch's arguments, packed
  std::atomic<Divergence> Diverged{Divergence::None};
  CUdevice Device = 0;
};

} // namespace ptxjit::runtime::cuda

#endif
