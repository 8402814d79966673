#include "Handlers.h"

#include <cstdio>
#include <mutex>

namespace ptxjit {

namespace {
std::mutex DefaultsMutex; // guards Defaults
JITHandlers Defaults;

template <typename F> F pick(F call, F pipeline, F defaults) { return call ? call : pipeline ? pipeline : defaults; }
} // namespace

JITHandlers JIT::set_default_handlers(const JITHandlers &handlers) {
  std::lock_guard<std::mutex> lock(DefaultsMutex);
  JITHandlers previous = Defaults;
  Defaults = handlers;
  return previous;
}

namespace jit {

JITHandlers default_handlers() {
  std::lock_guard<std::mutex> lock(DefaultsMutex);
  return Defaults;
}

RealizeCall::RealizeCall(JITUserContext *user, const JITHandlers &pipeline) : User(user) {
  JITHandlers defaults = default_handlers();
  JITHandlers call = user ? user->handlers : JITHandlers{};
  Handlers.print = pick(call.print, pipeline.print, defaults.print);
  Handlers.error = pick(call.error, pipeline.error, defaults.error);
  Host.user_context = this;
  Host.error = [](void *self, const char *message) {
    auto *r = static_cast<RealizeCall *>(self);
    if (r->ErrorMessage.empty())
      r->ErrorMessage = message;
    if (r->Handlers.error)
      r->Handlers.error(r->User, message);
  };
  Host.print = [](void *self, const char *message) {
    auto *r = static_cast<RealizeCall *>(self);
    if (r->Handlers.print)
      r->Handlers.print(r->User, message);
    else
      std::fputs(message, stderr);
  };
}

} // namespace jit
} // namespace ptxjit
