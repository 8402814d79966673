#include "Session.h"

#include "CudaDriver.h"
#include "ReportError.h"
#include "ptxjit/RuntimeError.h"

namespace ptxjit::runtime::cuda {

Session::Session(ptxjit_call_context *call) : Call(call), Scoped(call), Opener(std::this_thread::get_id()) {
  if (call->gpu_session)
    throw RuntimeError("a realize opened a second GPU session while one was open");
  call->gpu_session = this;
}

Session::~Session() { Call->gpu_session = nullptr; }

SessionUse::SessionUse(ptxjit_call_context *call) : Open(static_cast<Session *>(call->gpu_session)) {
  if (!Open)
    throw RuntimeError("a GPU runtime function was called outside a realize (no session is open)");
  if (!Open->on_opening_thread()) {
    if (CUresult r = driver().cuCtxPushCurrent(Open->context()); r != CUDA_SUCCESS)
      fail("cuCtxPushCurrent", r, "the realize's context, on a parallel task's thread");
    Pushed = true;
  }
}

SessionUse::~SessionUse() {
  if (!Pushed)
    return;
  CUcontext popped = nullptr;
  if (CUresult r = driver().cuCtxPopCurrent(&popped); r != CUDA_SUCCESS)
    report_error(Open->call(), "cuCtxPopCurrent failed with " + describe(r));
}

} // namespace ptxjit::runtime::cuda
