#ifndef PTXJIT_JIT_H
#define PTXJIT_JIT_H

// Handlers: how a realize reports, and which GPU context, stream and memory it uses. Each call
// may carry its own handlers in a JITUserContext; for each handler the call's wins, then the
// Pipeline's, then the defaults (JIT::set_default_handlers), then the built-in. Every handler
// receives the call's JITUserContext: nothing reads a global or thread-local current context.
// GPU handlers return 0 on success; a non-zero return fails the realize with a clear error.

#include "ptxjit/Target.h"

#include <cstddef>
#include <cstdint>
#include <string>

// The CUDA driver's handle types, declared exactly as cuda.h declares them (a repeated identical
// typedef is valid C++), so that the public headers need no CUDA SDK.
typedef struct CUctx_st *CUcontext;
typedef struct CUstream_st *CUstream;
#if defined(_WIN64) || defined(__LP64__)
typedef unsigned long long CUdeviceptr_v2;
#else
typedef unsigned int CUdeviceptr_v2;
#endif
typedef CUdeviceptr_v2 CUdeviceptr;

#pragma GCC visibility push(default)
namespace ptxjit {

struct JITUserContext;

struct JITHandlers {
  /// nullptr means "not overridden".
  void (*print)(JITUserContext *context, const char *message) = nullptr;
  /// Called with the error message before realize throws RuntimeError with it.
  void (*error)(JITUserContext *context, const char *message) = nullptr;
  /// Built-in: the primary context of the call's device, retained once per device. The device is
  /// the first of: JITUserContext::device; the device of the call's device buffers (a tensor's);
  /// the device of the context current on the calling thread (cudart's and PyTorch's set_device
  /// make one); PTXJIT_DEVICE; the local rank (LOCAL_RANK from torchrun,
  /// OMPI_COMM_WORLD_LOCAL_RANK, SLURM_LOCALID); 0. Refusing makes the realize fail before any
  /// context is created.
  int (*acquire_context)(JITUserContext *context, CUcontext *out, bool create) = nullptr;
  /// Paired with every successful acquire_context, on every path. Built-in: nothing.
  int (*release_context)(JITUserContext *context) = nullptr;
  /// Built-in: the context's legacy default stream (null).
  int (*get_stream)(JITUserContext *context, CUcontext cuda, CUstream *out) = nullptr;
  /// Built-in: stream-ordered allocation from ptxjit's pools for the device (no cuMemAlloc in
  /// steady state); out of memory trims the pool and retries once. Override both or neither:
  /// they serve a pipeline's intermediates and the device copies Buffers own (copy_to_device).
  /// Memory a Buffer owns is freed with a null JITUserContext, in the context it was allocated
  /// in and on its legacy stream, after that context is done with its work: the last Buffer
  /// holding it may go in a destructor, long after the call.
  int (*device_malloc)(JITUserContext *context, CUcontext cuda, CUstream stream, size_t bytes,
                       CUdeviceptr *out) = nullptr;
  int (*device_free)(JITUserContext *context, CUcontext cuda, CUstream stream, CUdeviceptr pointer) = nullptr;
};

/// Passed to realize; derive from it to carry your own state (context, stream) to your handlers.
struct JITUserContext {
  JITHandlers handlers;
  /// The CUDA device the built-in acquire_context uses; -1: chosen as acquire_context says.
  int device = -1;
};

/// The built-in device memory of one device: a pool for pipelines' intermediates, and one for the
/// device copies Buffers own, which live longer.
enum class DeviceMemory { Intermediates, Buffers };

/// One of the built-in pools of one device.
struct DeviceMemoryStatistics {
  uint64_t reserved_bytes = 0;   ///< held by the pool, in use or kept for reuse
  uint64_t used_bytes = 0;       ///< allocated and not yet freed
  uint64_t high_water_bytes = 0; ///< the most ever used at once
  uint64_t allocations = 0, frees = 0, failed_allocations = 0;
  bool pooled = false; ///< false until first used, or where the device has no pool support
};

/// What realizes on cuda_graphs targets did, process-wide, since the process started.
struct CudaGraphStatistics {
  uint64_t built = 0;            ///< graphs recorded from a realize's operations
  uint64_t instantiated = 0;     ///< executable graphs made (one for each graph built)
  uint64_t replayed = 0;         ///< realizes that launched a cached executable graph again
  uint64_t updated_nodes = 0;    ///< kernel nodes given new arguments before a replay
  uint64_t stream_fallbacks = 0; ///< realizes that ran on the stream: the pipeline's host code
                                 ///< did what a graph cannot hold (see the README)
};

/// What the on-disk compile cache did in this process (PTXJIT_CACHE_DIR; see the README). Each
/// compile looks up its host code, and each new capability and device its PTX and binary.
struct CompileCacheStatistics {
  uint64_t hits = 0, misses = 0;      ///< entries found whole, and not found (or damaged)
  uint64_t stores = 0;                ///< entries written
  uint64_t bytes_read = 0, bytes_written = 0;
  uint64_t evictions = 0;             ///< least recently used entries deleted under the size cap
  uint64_t rejected = 0;              ///< entries found truncated or corrupted (and compiled again)
};

namespace JIT {
/// Sets the process-wide default handlers, used from the next realize on. Returns the previous.
JITHandlers set_default_handlers(const JITHandlers &handlers);
/// Unloads every pipeline's kernels from `context` and frees the device memory ptxjit keeps
/// cached for it; call it before destroying a context you created. Later realizes on a context
/// with that handle load them again.
void forget_context(CUcontext context);
DeviceMemoryStatistics device_memory_statistics(int device, DeviceMemory pool = DeviceMemory::Intermediates);
/// Gives memory each pool keeps for reuse back to the device, down to `keep_bytes` per pool, and
/// the memory cached for CUDA graphs' intermediates that no graph launched or running uses.
void trim_device_memory(int device, size_t keep_bytes = 0);
/// Memory a pool keeps for reuse above `bytes` is released when streams synchronize (default:
/// keep all). Applies to both pools.
void set_device_memory_release_threshold(int device, uint64_t bytes);
CudaGraphStatistics cuda_graph_statistics();
CompileCacheStatistics compile_cache_statistics();
} // namespace JIT

/// Whether this process can run `target`'s device code: a CUDA driver, at least one device, and
/// for a fixed capability a device that has it. Creates no context. `why` says what is missing.
bool host_supports_target_device(const Target &target, std::string *why = nullptr);

} // namespace ptxjit

#pragma GCC visibility pop

#endif
