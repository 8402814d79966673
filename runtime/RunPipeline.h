#ifndef PTXJIT_RUNTIME_RUNPIPELINE_H
#define PTXJIT_RUNTIME_RUNPIPELINE_H

// What the JIT asks of the runtime for one realize: run this compiled pipeline with these
// buffers on this call. For a pipeline with kernels that means one GPU session (cuda/Session.h)
// around everything: inputs whose host data is newer go up, buffers without device memory get
// a device copy for the call (BufferStaging), the host code runs (as a CUDA graph where asked),
// staged outputs come back, and each buffer descriptor's dirty flags end as the caller's buffer
// must take them.

#include "CallContext.h"
#include "ptxjit/BufferABI.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace ptxjit::runtime {

namespace cuda {
class DeviceCode;
}

/// How one argument of the compiled pipeline is used.
struct PipelineArgument {
  enum class Kind : uint8_t { InputBuffer, OutputBuffer, Scalar };
  Kind kind = Kind::Scalar;
  bool on_host = false;   ///< host code reads or writes its host memory
  bool on_device = false; ///< kernels read or write its device memory
  std::string name;
};

struct PipelineRun {
  int32_t (*function)(void *context, void **args) = nullptr;
  cuda::DeviceCode *device_code = nullptr; ///< null for host-only pipelines
  bool cuda_graphs = false;                ///< the target's cuda_graphs feature
  const PipelineArgument *arguments = nullptr;
  ptxjit_buffer_t *buffers = nullptr; ///< one per argument; a scalar's is unused
  void **args = nullptr;              ///< what the function receives: each buffer's descriptor, each scalar's value
  size_t count = 0;
};

/// Runs `run` on `call`. Throws RuntimeError (the runtime has reported its errors through the
/// call's error handler first); "error code N" when generated code failed after reporting.
void run_pipeline(ptxjit_call_context *call, const PipelineRun &run);

} // namespace ptxjit::runtime

#endif
