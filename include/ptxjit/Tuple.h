#ifndef PTXJIT_TUPLE_H
#define PTXJIT_TUPLE_H

// Several values of one Func, as Halide's Tuple: `f(x) = Tuple(x, sin(x))` defines a Func with
// two values (stored in two buffers), `f(x)[1]` reads the second.

#include "ptxjit/Error.h"
#include "ptxjit/Expr.h"

#include <string>
#include <utility>
#include <vector>

#pragma GCC visibility push(default)
namespace ptxjit {

class FuncRef;

class Tuple {
public:
  /// At least one value; a Tuple of one is the Func's single value.
  explicit Tuple(std::vector<Expr> values) : Values(std::move(values)) {
    if (Values.empty())
      throw CompileError("a Tuple needs at least one value");
  }
  template <typename... Rest>
  Tuple(const Expr &first, const Expr &second, const Rest &...rest)
      : Values{first, second, Expr(rest)...} {}
  /// The values of a call to a Func of several values (or the one value of any other).
  Tuple(const FuncRef &call);

  size_t size() const { return Values.size(); }
  const Expr &operator[](size_t i) const {
    if (i >= Values.size())
      throw CompileError("Tuple index " + std::to_string(i) + " out of range: it has " +
                         std::to_string(Values.size()) + " values");
    return Values[i];
  }
  const std::vector<Expr> &as_vector() const { return Values; }

private:
  std::vector<Expr> Values;
};

} // namespace ptxjit
#pragma GCC visibility pop

#endif
