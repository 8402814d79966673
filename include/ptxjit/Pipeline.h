#ifndef PTXJIT_PIPELINE_H
#define PTXJIT_PIPELINE_H

// A pipeline ending at one output Func (of one value or a Tuple's), or at several computed in one
// call: compiled once per target, realized many times.

#include "ptxjit/Buffer.h"
#include "ptxjit/Func.h"
#include "ptxjit/JIT.h"
#include "ptxjit/Target.h"

#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

namespace ptxjit {
struct PipelineContents;
} // namespace ptxjit

#pragma GCC visibility push(default)
namespace ptxjit {

/// An input of a pipeline: a Param, an ImageParam or a Buffer its definitions read.
struct Argument {
  std::string name;
  bool is_buffer = false;
  Type type;
  int dimensions = 0;
  /// An input buffer's bound buffer (ImageParam::set, or the Buffer read directly); undefined
  /// where none is bound yet.
  RawBuffer buffer;
};

/// The buffers a realize makes when given sizes but no element type, as Halide's Realization:
/// one for each value of each output, of the values' types. `Buffer<float> out = f.realize({w,
/// h})` takes the only one; `Buffer<int> i = r[0]` one of several. A type that differs throws
/// std::invalid_argument naming both.
class Realization {
public:
  /// A buffer of the realization, convertible to the Buffer<T> of its element type.
  class Element : public RawBuffer {
  public:
    explicit Element(const RawBuffer &buffer) : RawBuffer(buffer) {}
    template <typename T> operator Buffer<T>() const { return Buffer<T>(static_cast<const RawBuffer &>(*this)); }
  };

  explicit Realization(const std::vector<RawBuffer> &buffers);
  size_t size() const { return Buffers.size(); }
  const Element &operator[](size_t i) const { return Buffers.at(i); }
  std::vector<Element>::const_iterator begin() const { return Buffers.begin(); }
  std::vector<Element>::const_iterator end() const { return Buffers.end(); }
  /// The only buffer; std::invalid_argument where there are several.
  template <typename T> operator Buffer<T>() const { return only(); }

private:
  const Element &only() const;
  std::vector<Element> Buffers;
};

class Pipeline {
public:
  explicit Pipeline(const Func &output);
  /// Several outputs, each computed at root over its own buffers (an output another reads is
  /// computed first and read from its buffer, which must cover what is read).
  explicit Pipeline(const std::vector<Func> &outputs);

  /// Lowers and compiles for `target`; identical pipelines share compiled code. Thread-safe.
  void compile_jit(const Target &target = get_jit_target_from_environment());

  /// Computes the output over `output`'s region. Throws RuntimeError when the buffers are
  /// wrong or a check fails. Safe to call from several threads at once. On a CUDA target the
  /// kernels run on the call's context and stream. Host buffers are copied to the device and the
  /// output back before realize returns; buffers with a device copy (Buffer::set_device) are used
  /// in place, and then realize returns without waiting for the kernels.
  void realize(JITUserContext *context, RawBuffer &output);
  void realize(RawBuffer &output) { realize(nullptr, output); }
  /// Computes the outputs into one buffer for each value of each output, in order: realize({a, b})
  /// for f(x) = Tuple(..., ...) (a Tuple's buffers cover one region) or for Pipeline({f, g}).
  void realize(JITUserContext *context, const std::vector<RawBuffer> &outputs);
  void realize(const std::vector<RawBuffer> &outputs) { realize(nullptr, outputs); }
  template <typename T> Buffer<T> realize(const std::vector<int> &sizes) {
    Buffer<T> output(sizes);
    realize(nullptr, output);
    return output;
  }
  /// New buffers over [0, sizes), one for each value of each output, of its type, computed.
  Realization realize(const std::vector<int> &sizes);
  /// realize({w, h}): the sizes, not a vector of buffers made from an integer.
  Realization realize(std::initializer_list<int> sizes) { return realize(std::vector<int>(sizes)); }

  /// The PTX of the kernels for a target with a fixed capability (e.g. ...-cuda_capability_80),
  /// with the kernels' names; made offline, without a driver.
  std::string compile_to_ptx(const Target &target, int ptxVersion = 78);

  /// The lowered statement, as PTXJIT_DEBUG=2 prints it last.
  std::string lowered_stmt(const Target &target = get_jit_target_from_environment()) const;
  /// Writes lowered_stmt(target) to `filename`; throws RuntimeError when it cannot.
  void compile_to_lowered_stmt(const std::string &filename,
                               const Target &target = get_jit_target_from_environment()) const;
  /// The loops the schedules make: each Func's produce, then its loops, outermost first, with
  /// their kinds (for, parallel, vectorized, unrolled, gpu_block, gpu_thread) and the branches of
  /// specializations.
  std::string loop_nest() const;

  /// The Params and buffer inputs the definitions use, in name order.
  std::vector<Argument> infer_arguments() const;

  /// Handlers used by this pipeline's realizes unless the call overrides them.
  JITHandlers &jit_handlers();

private:
  std::shared_ptr<PipelineContents> Contents;
};

template <typename T> Buffer<T> Func::realize(const std::vector<int> &sizes, const Target &target) const {
  Pipeline pipeline(*this);
  pipeline.compile_jit(target);
  return pipeline.realize<T>(sizes);
}

inline Realization Func::realize(const std::vector<int> &sizes, const Target &target) const {
  Pipeline pipeline(*this);
  pipeline.compile_jit(target);
  return pipeline.realize(sizes);
}

} // namespace ptxjit

#pragma GCC visibility pop

#endif
