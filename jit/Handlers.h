#ifndef PTXJIT_JIT_HANDLERS_H
#define PTXJIT_JIT_HANDLERS_H

// Resolving a call's handlers: call > pipeline > defaults > built-in.

#include "cpu/HostRuntime.h"
#include "ptxjit/JIT.h"

#include <string>

namespace ptxjit::jit {

/// The process-wide defaults, copied under their lock.
JITHandlers default_handlers();

/// The host call context of one realize: generated code reports through it.
struct RealizeCall {
  explicit RealizeCall(JITUserContext *user, const JITHandlers &pipeline);
  ptxjit_host_call_context Host{};
  JITUserContext *User;
  JITHandlers Handlers; // merged
  std::string ErrorMessage;
};

} // namespace ptxjit::jit

#endif
