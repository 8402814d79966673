#ifndef PTXJIT_RUNTIME_CUDA_SCOPEDCONTEXT_H
#define PTXJIT_RUNTIME_CUDA_SCOPEDCONTEXT_H

// Brackets driver work in one call: acquires a context through the call's handler, makes it
// current (push, unless it is current already), gets the call's stream, and on scope exit pops
// (restoring the caller's current context exactly) and releases, errors included.

#include "CallContext.h"

namespace ptxjit::runtime::cuda {

class ScopedContext {
public:
  /// Throws RuntimeError when the handler refuses or the driver fails.
  explicit ScopedContext(ptxjit_call_context *call);
  ~ScopedContext();
  ScopedContext(const ScopedContext &) = delete;
  ScopedContext &operator=(const ScopedContext &) = delete;

  CUcontext context() const { return Context; }
  CUstream stream() const { return Stream; }

private:
  void cleanup();
  ptxjit_call_context *Call;
  CUcontext Context = nullptr;
  CUstream Stream = nullptr;
  bool Acquired = false, Pushed = false;
};

} // namespace ptxjit::runtime::cuda

#endif
