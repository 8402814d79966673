#include "ScopedContext.h"

#include "CudaDriver.h"
#include "ReportError.h"
#include "ptxjit/RuntimeError.h"

namespace ptxjit::runtime::cuda {

ScopedContext::ScopedContext(ptxjit_call_context *call) : Call(call) {
  const DriverApi &api = driver();
  if (int r = call->acquire_context(call->user_context, &Context, 1); r != 0 || !Context) {
    if (r == 0)
      call->release_context(call->user_context);
    throw RuntimeError("the acquire_context handler refused (returned " + std::to_string(r) +
                       (Context ? "" : ", no context") + "); no GPU work was done");
  }
  Acquired = true;
  // Where the acquired context is current already (the caller's, as beside PyTorch), pushing and
  // popping it would change nothing.
  CUcontext current = nullptr;
  if (api.cuCtxGetCurrent(&current) != CUDA_SUCCESS || current != Context) {
    if (CUresult r = api.cuCtxPushCurrent(Context); r != CUDA_SUCCESS) {
      cleanup();
      fail("cuCtxPushCurrent", r, "the acquired context");
    }
    Pushed = true;
  }
  if (int r = call->get_stream(call->user_context, Context, &Stream); r != 0) {
    cleanup();
    throw RuntimeError("the get_stream handler failed (returned " + std::to_string(r) + ")");
  }
}

ScopedContext::~ScopedContext() { cleanup(); }

void ScopedContext::cleanup() {
  if (Pushed) {
    CUcontext popped = nullptr;
    if (CUresult r = driver().cuCtxPopCurrent(&popped); r != CUDA_SUCCESS)
      report_error(Call, "cuCtxPopCurrent failed with " + describe(r));
    Pushed = false;
  }
  if (Acquired) {
    Call->release_context(Call->user_context);
    Acquired = false;
  }
}

} // namespace ptxjit::runtime::cuda
