#include "InlineFunctions.h"

#include "ir/IRMutator.h"
#include "ir/Substitute.h"

namespace ptxjit::lower {

using namespace ir;

namespace {

class Inliner : public IRMutator {
public:
  explicit Inliner(const FunctionContents &f) : F(f) {
    if (!f.updates.empty())
      throw CompileError("Func " + f.name + " has update definitions and cannot be computed inline; "
                         "schedule it compute_root() or compute_at()");
  }

private:
  const FunctionContents &F;
  using IRMutator::visit;

  Expr visit(const Call *op) override {
    Expr e = IRMutator::visit(op);
    const auto *call = e.as<Call>();
    if (call->call_type != Call::Halide || call->name != F.name)
      return e;
    std::map<std::string, Expr> replacements;
    for (size_t i = 0; i < F.args.size(); ++i)
      replacements[F.args[i]] = call->args[i];
    return substitute(replacements, F.init.value);
  }
};

} // namespace

Stmt inline_function(const Stmt &s, const FunctionContents &f) { return Inliner(f).mutate(s); }
Expr inline_function(const Expr &e, const FunctionContents &f) { return Inliner(f).mutate(e); }

} // namespace ptxjit::lower
