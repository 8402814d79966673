#ifndef PTXJIT_JIT_HANDLERS_H
#define PTXJIT_JIT_HANDLERS_H

// Resolving a call's handlers: call > pipeline > defaults > built-in.

#include "CallContext.h"
#include "ptxjit/JIT.h"

#include <mutex>
#include <string>

namespace ptxjit::jit {

/// The process-wide defaults as they are now (lock-free).
JITHandlers default_handlers();

/// The runtime's view of one realize: generated code and the runtime report and reach the GPU
/// through it. Lives on the realize's stack.
struct RealizeCall {
  RealizeCall(JITUserContext *user, const JITHandlers &pipeline);
  ptxjit_call_context Runtime{};
  JITUserContext *User;
  JITHandlers Handlers; // merged; null entries use the built-ins
  /// A device address among the call's buffers (0: none): the built-in acquire_context runs the
  /// call on its device when the call names none (runtime::cuda::choose_device).
  CUdeviceptr BufferOnDevice = 0;
  /// The first error reported; parallel tasks may report at once.
  std::string first_error() const;
  void record_error(const char *message);

private:
  mutable std::mutex ErrorMutex; // guards ErrorMessage
  std::string ErrorMessage;
};

} // namespace ptxjit::jit

#endif
