#ifndef PTXJIT_PARAM_H
#define PTXJIT_PARAM_H

// Scalar and image inputs whose values are given at realize time, not baked into the code.

#include "ptxjit/Buffer.h"
#include "ptxjit/Error.h"
#include "ptxjit/Expr.h"

#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace ptxjit {
struct ParameterContents;
} // namespace ptxjit

#pragma GCC visibility push(default)
namespace ptxjit {

class Func;

namespace detail {
std::shared_ptr<ParameterContents> make_scalar_parameter(Type type, const std::string &name);
void set_scalar_parameter(ParameterContents &p, const void *value, size_t bytes);
void get_scalar_parameter(const ParameterContents &p, void *value, size_t bytes);
Expr parameter_expr(const std::shared_ptr<ParameterContents> &p);
const std::string &parameter_name(const ParameterContents &p);
} // namespace detail

template <typename T> class Param {
public:
  explicit Param(const std::string &name = "") : Contents(detail::make_scalar_parameter(type_of<T>(), name)) {}
  Param(const std::string &name, T value) : Param(name) { set(value); }
  void set(T value) { detail::set_scalar_parameter(*Contents, &value, sizeof(T)); }
  /// A value for Halide's autoschedulers to plan for; ptxjit has none and does not use it.
  Param &set_estimate(T) { return *this; }
  T get() const {
    T value;
    detail::get_scalar_parameter(*Contents, &value, sizeof(T));
    return value;
  }
  const std::string &name() const { return detail::parameter_name(*Contents); }
  operator Expr() const { return detail::parameter_expr(Contents); }
  const std::shared_ptr<ParameterContents> &contents() const { return Contents; }

private:
  std::shared_ptr<ParameterContents> Contents;
};

/// One dimension of an ImageParam or of an output's buffer (Halide's Dimension): its values at
/// realize as expressions, and constraints on them. A constraint (an integer expression of
/// Params and constants) is checked at realize, a RuntimeError naming the buffer, the dimension
/// and both values where the buffer does not meet it, and is then known to the compiler: a
/// constant stride or min makes index arithmetic constant, constant bounds of an output make its
/// loops constant.
class Dimension {
public:
  Expr min() const;
  Expr extent() const;
  Expr max() const;
  Expr stride() const;
  Dimension &set_min(Expr min);
  Dimension &set_extent(Expr extent);
  Dimension &set_bounds(Expr min, Expr extent);
  /// Dimension 0 must have stride 1 unless set here; an undefined Expr() lifts any constraint
  /// (the stride of dimension 0 is then free too), as in Halide.
  Dimension &set_stride(Expr stride);
  /// A size for Halide's autoschedulers to plan for; ptxjit has none and does not use it.
  Dimension &set_estimate(Expr min, Expr extent);
  /// Another dimension of the same input, for chaining.
  Dimension dim(int d) const;

private:
  friend class ImageParam;
  friend class OutputImageParam;
  Dimension(std::shared_ptr<ParameterContents> contents, int d) : Contents(std::move(contents)), D(d) {}
  Expr field(const char *name) const;
  Dimension &constrain(const char *field, Expr value);
  std::shared_ptr<ParameterContents> Contents;
  int D;
};

/// A buffer input of a fixed element type and dimensionality.
class ImageParam {
public:
  ImageParam() = default;
  ImageParam(Type type, int dimensions, const std::string &name = "");

  /// Binds the buffer read by the next realize. Checked against type and dimensions.
  void set(const RawBuffer &buffer);
  const RawBuffer &get() const;

  const std::string &name() const;
  int dimensions() const;
  Type type() const;
  /// The bound buffer's min and extent in dimension `d`, as expressions evaluated at realize.
  Expr min(int d) const;
  Expr extent(int d) const;
  Expr width() const { return extent(0); }
  Expr height() const { return extent(1); }
  /// Dimension `d`, to read or constrain (dim(1).set_stride(width), dim(0).set_bounds(0, n)).
  Dimension dim(int d) const;
  /// The host pointer of the buffer bound must be a multiple of `bytes` (a power of two), checked
  /// when it is bound with set().
  ImageParam &set_host_alignment(int bytes);
  /// dim(d).set_estimate of each dimension d in order: as many ranges as dimensions.
  ImageParam &set_estimates(const Region &estimates);

  Expr operator()(std::vector<Expr> args) const;
  template <typename... Args> Expr operator()(Args &&...args) const {
    return (*this)(std::vector<Expr>{Expr(args)...});
  }
  /// A Func w(x, ...) = in(x, ...) that `consumer` (in(): every Func without a wrapper of its own)
  /// reads instead of the input, with a schedule of its own: stage a tile of the input in GPU
  /// shared memory, say. Asking again returns the same wrapper.
  Func in(const Func &consumer);
  /// One wrapper that all of `consumers` read (`in.in({f, g})`).
  Func in(const std::vector<Func> &consumers);
  Func in();
  /// A Func reading the input at its arguments, inlined unless scheduled (as in Halide, where an
  /// ImageParam passes for a Func): a fresh one each time.
  operator Func() const;
  const std::shared_ptr<ParameterContents> &contents() const { return Contents; }

private:
  std::shared_ptr<ParameterContents> Contents;
};

/// The buffer of an output Func's value, as a realize is given it (Func::output_buffer, Halide's
/// OutputImageParam): its fields as expressions, and constraints the realize checks, as an
/// ImageParam's. Interleaved output: out.output_buffer().dim(0).set_stride(3).dim(2).set_stride(1).
/// Constraints apply where the Func is an output of the Pipeline realized; its fields may be used
/// only there.
class OutputImageParam {
public:
  const std::string &name() const;
  int dimensions() const;
  Type type() const;
  Dimension dim(int d) const;
  Expr width() const { return dim(0).extent(); }
  Expr height() const { return dim(1).extent(); }
  Expr channels() const { return dim(2).extent(); }
  const std::shared_ptr<ParameterContents> &contents() const { return Contents; }

private:
  friend class Func;
  explicit OutputImageParam(std::shared_ptr<ParameterContents> contents) : Contents(std::move(contents)) {}
  std::shared_ptr<ParameterContents> Contents;
};

} // namespace ptxjit

#pragma GCC visibility pop

#endif
