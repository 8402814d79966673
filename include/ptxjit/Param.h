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

  Expr operator()(std::vector<Expr> args) const;
  template <typename... Args> Expr operator()(Args &&...args) const {
    return (*this)(std::vector<Expr>{Expr(args)...});
  }
  /// A Func w(x, ...) = in(x, ...) that `consumer` (in(): every Func without a wrapper of its own)
  /// reads instead of the input, with a schedule of its own: stage a tile of the input in GPU
  /// shared memory, say. Asking again returns the same wrapper.
  Func in(const Func &consumer);
  Func in();
  const std::shared_ptr<ParameterContents> &contents() const { return Contents; }

private:
  std::shared_ptr<ParameterContents> Contents;
};

} // namespace ptxjit

#pragma GCC visibility pop

#endif
