#include "UnrollLoops.h"

#include "ir/Constants.h"
#include "ir/IRMutator.h"
#include "ir/IRPrinter.h"

namespace ptxjit::lower {

using namespace ir;

namespace {

class Unroll : public IRMutator {
  using IRMutator::visit;

  Stmt visit(const For *op) override {
    Stmt body = mutate(op->body);
    if (op->for_type != ForType::Unrolled)
      return body.same_as(op->body) ? Stmt(op) : For::make(op->name, op->min, op->extent, op->for_type, body);
    auto extent = as_const_int(op->extent);
    if (!extent)
      throw CompileError("unrolled loop " + op->name + " has a non-constant extent (" + to_string(op->extent) +
                         "); unroll with a factor, e.g. unroll(x, 4)");
    if (*extent > 256)
      throw CompileError("unrolled loop " + op->name + " has " + std::to_string(*extent) +
                         " iterations; unroll at most 256");
    std::vector<Stmt> copies;
    for (int64_t i = 0; i < *extent; ++i)
      copies.push_back(LetStmt::make(op->name, Add::make(op->min, make_const(op->min.type(), i)), body));
    return copies.empty() ? Evaluate::make(make_zero(Int(32))) : Block::make(copies);
  }
};

} // namespace

Stmt unroll_loops(const Stmt &s) { return Unroll().mutate(s); }

} // namespace ptxjit::lower
