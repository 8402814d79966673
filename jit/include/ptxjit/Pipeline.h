#ifndef PTXJIT_PIPELINE_H
#define PTXJIT_PIPELINE_H

// A pipeline ending at one output Func: compiled once per target, realized many times.

#include "ptxjit/Buffer.h"
#include "ptxjit/Func.h"
#include "ptxjit/JIT.h"
#include "ptxjit/Target.h"

#include <memory>
#include <string>
#include <vector>

namespace ptxjit {

struct PipelineContents;

class Pipeline {
public:
  explicit Pipeline(const Func &output);

  /// Lowers and compiles for `target`; identical pipelines share compiled code. Thread-safe.
  void compile_jit(const Target &target = get_jit_target_from_environment());

  /// Computes the output over `output`'s region. Throws RuntimeError when the buffers are
  /// wrong or a check fails. Safe to call from several threads at once.
  void realize(JITUserContext *context, RawBuffer &output);
  void realize(RawBuffer &output) { realize(nullptr, output); }
  template <typename T> Buffer<T> realize(const std::vector<int> &sizes) {
    Buffer<T> output(sizes);
    realize(nullptr, output);
    return output;
  }

  /// The lowered statement, as PTXJIT_DEBUG=2 prints it last.
  std::string lowered_stmt(const Target &target = get_jit_target_from_environment()) const;

  /// Handlers used by this pipeline's realizes unless the call overrides them.
  JITHandlers &jit_handlers();

private:
  std::shared_ptr<PipelineContents> Contents;
};

} // namespace ptxjit

#endif
