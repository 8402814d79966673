#ifndef PTXJIT_JIT_H
#define PTXJIT_JIT_H

// Handlers: how a realize reports errors and prints. Each call may carry its own handlers in a
// JITUserContext; for each handler the call's wins, then the Pipeline's, then the defaults,
// then the built-in (print to stderr; errors become the RuntimeError that realize throws).

namespace ptxjit {

struct JITUserContext;

struct JITHandlers {
  /// nullptr means "not overridden".
  void (*print)(JITUserContext *context, const char *message) = nullptr;
  /// Called with the error message before realize throws RuntimeError with it.
  void (*error)(JITUserContext *context, const char *message) = nullptr;
};

/// Passed to realize; extend it to carry your own state to your handlers.
struct JITUserContext {
  JITHandlers handlers;
};

namespace JIT {
/// Sets the process-wide default handlers, used from the next realize on. Returns the previous.
JITHandlers set_default_handlers(const JITHandlers &handlers);
} // namespace JIT

} // namespace ptxjit

#endif
