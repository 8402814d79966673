#ifndef PTXJIT_LOWER_REWRITEFUNCACCESSES_H
#define PTXJIT_LOWER_REWRITEFUNCACCESSES_H

// Passes that change where a Func's storage lives (each thread's slice, each block's slice, a
// folded window) rewrite the coordinates of every access of it the same way: a subclass says how.

#include "ir/IRMutator.h"

#include <string>
#include <vector>

namespace ptxjit::lower {

/// Rewrites the coordinates of every write (Provide) and read (Call) of one Func; a Realize of
/// the same name inside is another Func's storage and is left alone.
class RewriteFuncAccesses : public ir::IRMutator {
public:
  explicit RewriteFuncAccesses(std::string func) : Func(std::move(func)) {}

protected:
  /// The coordinates an access takes instead of `args` (whose own accesses are rewritten already).
  virtual std::vector<ir::Expr> coordinates(std::vector<ir::Expr> args) = 0;

  using ir::IRMutator::visit;
  ir::Stmt visit(const ir::Provide *op) override;
  ir::Expr visit(const ir::Call *op) override;
  ir::Stmt visit(const ir::Realize *op) override;

  const std::string Func;

private:
  std::vector<ir::Expr> rewritten(const std::vector<ir::Expr> &args);
};

} // namespace ptxjit::lower

#endif
