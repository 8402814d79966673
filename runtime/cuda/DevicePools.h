#ifndef PTXJIT_RUNTIME_CUDA_DEVICEPOOLS_H
#define PTXJIT_RUNTIME_CUDA_DEVICEPOOLS_H

// The built-in device memory: two stream-ordered pools per device, of ptxjit's own (not the
// device's default pool, which other libraries share). The transient pool holds a pipeline's
// intermediates, allocated and freed on the call's stream without cuMemAlloc or a device
// synchronization; the buffer pool holds the device copies Buffers own, which live across
// realizes, so that long-lived blocks never fragment the transient pool. Memory freed stays
// reserved for reuse (release threshold: keep) until trimmed. Out of memory trims the pool and
// retries once. Devices without pool support use a CachingAllocator over cuMemAlloc/cuMemFree per
// context (a free waits for its stream before the block can be reused); their statistics are
// summed over contexts. The driver makes a process's first pool allocation on a device in about
// 7 ms: a thread makes it while the first allocations come from those caches (bridged; 0.08 ms),
// so that a process's first realize does not wait for it; a bridged block freed after that goes
// back to cuMemFree. Allocations on a stream being captured into a graph are never bridged.

#include <cuda.h>

#include <cstddef>
#include <cstdint>

namespace ptxjit::runtime::cuda {

enum class PoolKind { Transient, Buffer };

struct PoolStatistics {
  uint64_t reserved_bytes = 0;   ///< held by the pool, in use or kept for reuse
  uint64_t used_bytes = 0;       ///< allocated and not yet freed (frees complete in stream order)
  uint64_t high_water_bytes = 0; ///< the most ever used at once
  uint64_t allocations = 0, frees = 0, failed_allocations = 0;
  uint64_t bridged_allocations = 0; ///< served by cuMemAlloc while the pool warmed
  bool pooled = false; ///< false until first use, or where the device has no pool support
};

/// Allocation and free in the pool of the device of the context current on this thread.
/// Return 0 or a CUresult.
int pool_malloc(PoolKind kind, CUstream stream, size_t bytes, CUdeviceptr *out);
int pool_free(PoolKind kind, CUstream stream, CUdeviceptr pointer);

PoolStatistics pool_statistics(PoolKind kind, int device);
/// Releases reserved memory beyond `keep` bytes back to the device.
void trim_pool(PoolKind kind, int device, size_t keep);
/// Gives the memory the driver keeps for CUDA graphs' allocation nodes on `device`, where no
/// graph launched or running uses it, back to the device.
void trim_graph_memory(int device);
/// Reserved memory above `bytes` is released at the next synchronization (default: keep all).
void set_pool_release_threshold(PoolKind kind, int device, uint64_t bytes);
/// Makes the device's first pool allocations in the current context, if no allocation has yet,
/// and waits until the pools serve allocations themselves.
void warm_pools(int device);
/// Frees the blocks the fallback caches keep for `context` (before it is destroyed), after the
/// device's warming thread, where it runs in `context`, has finished.
void forget_pool_context(CUcontext context);

} // namespace ptxjit::runtime::cuda

#endif
