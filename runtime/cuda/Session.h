#ifndef PTXJIT_RUNTIME_CUDA_SESSION_H
#define PTXJIT_RUNTIME_CUDA_SESSION_H

// One realize's hold on the GPU. Opening it acquires the context through the call's handler,
// makes it current on the realizing thread and gets the call's stream, once; every runtime entry
// of that realize (malloc, launch, copy, free) then works inside it, and closing it pops and
// releases once, errors included. An entry called from a parallel task on another thread makes
// the context current on that thread for its own driver calls only. While a graph is recorded
// (cuda_graphs), launches and intermediates go to the recording instead of the stream.

#include "CallContext.h"
#include "ScopedContext.h"

#include <thread>

namespace ptxjit::runtime::cuda {

class GraphRecording;

class Session {
public:
  /// Opens the session and installs it in `call` (call->gpu_session). Throws RuntimeError.
  explicit Session(ptxjit_call_context *call);
  ~Session();
  Session(const Session &) = delete;
  Session &operator=(const Session &) = delete;

  CUcontext context() const { return Scoped.context(); }
  CUstream stream() const { return Scoped.stream(); }
  ptxjit_call_context *call() const { return Call; }
  bool on_opening_thread() const { return std::this_thread::get_id() == Opener; }

  /// The graph being recorded, or null when work goes to the stream. Set by the realizing thread
  /// only, while no parallel task runs.
  GraphRecording *recording() const { return Recording; }
  void set_recording(GraphRecording *recording) { Recording = recording; }

private:
  ptxjit_call_context *Call;
  ScopedContext Scoped;
  std::thread::id Opener;
  GraphRecording *Recording = nullptr;
};

/// A runtime entry's use of the call's open session: on a thread other than the one that opened
/// it, the context is pushed for the entry's lifetime. Throws RuntimeError when the call has no
/// session open (an entry called outside a realize).
class SessionUse {
public:
  explicit SessionUse(ptxjit_call_context *call);
  ~SessionUse();
  SessionUse(const SessionUse &) = delete;
  SessionUse &operator=(const SessionUse &) = delete;

  Session &session() const { return *Open; }
  CUcontext context() const { return Open->context(); }
  CUstream stream() const { return Open->stream(); }

private:
  Session *Open;
  bool Pushed = false;
};

} // namespace ptxjit::runtime::cuda

#endif
