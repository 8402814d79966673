#include "UnrollLoops.h"

#include "ir/Constants.h"
#include "ir/IRMutator.h"
#include "ir/IRPrinter.h"
#include "ir/Simplify.h"
#include "ir/Substitute.h"

#include <optional>

namespace ptxjit::lower {

using namespace ir;

namespace {

// A loop whose extent is not constant, but bounded by a constant over the loops around it (a
// tile clipped at the image's edge), unrolls to its bound with each copy guarded, as in Halide,
// or is vectorized where it is full.
class Unroll : public IRMutator {
  using IRMutator::visit;

  // The enclosing lets' values and loops' ranges, in terms of names outside them, to bound extents.
  std::map<std::string, Expr> LetValues;
  Scope LoopRanges;

  template <typename Work> auto shadowing(const std::string &name, std::optional<Expr> value, Work work) {
    auto savedLet = LetValues.count(name) ? std::optional<Expr>(LetValues[name]) : std::nullopt;
    auto savedRange = LoopRanges.count(name) ? std::optional<Interval>(LoopRanges[name]) : std::nullopt;
    LetValues.erase(name);
    LoopRanges.erase(name);
    if (value)
      LetValues[name] = *value;
    auto result = work();
    LetValues.erase(name);
    LoopRanges.erase(name);
    if (savedLet)
      LetValues[name] = *savedLet;
    if (savedRange)
      LoopRanges[name] = *savedRange;
    return result;
  }

  // `e` in terms of names outside the lets around it; none where that grows past a size worth
  // bounding (a let stays a name then, and what depends on it gets no constant bound).
  std::optional<Expr> expanded(const Expr &e) const {
    Expr result = substitute(LetValues, e);
    return has_more_nodes_than(result, MaxExpandedLetNodes) ? std::nullopt : std::optional<Expr>(result);
  }

  Stmt visit(const LetStmt *op) override {
    Stmt body = shadowing(op->name, expanded(op->value), [&] { return mutate(op->body); });
    return body.same_as(op->body) ? Stmt(op) : LetStmt::make(op->name, op->value, body);
  }

  Stmt visit(const For *op) override {
    auto min = expanded(op->min);
    auto last = expanded(Sub::make(Add::make(op->min, op->extent), make_const(op->min.type(), int64_t(1))));
    Stmt body = shadowing(op->name, std::nullopt, [&] {
      if (min && last)
        LoopRanges[op->name] = {bounds_of_expr_in_scope(*min, LoopRanges).min,
                                bounds_of_expr_in_scope(*last, LoopRanges).max};
      return mutate(op->body);
    });
    auto extent = as_const_int(op->extent);
    const bool guarded = !extent;
    if (guarded && (op->for_type == ForType::Unrolled || op->for_type == ForType::Vectorized))
      if (auto e = expanded(op->extent))
        extent = constant_upper_bound(simplify_for_bounds(*e), LoopRanges);
    if (op->for_type == ForType::Vectorized && guarded && extent && *extent > 1) {
      Stmt vector = For::make(op->name, op->min, make_const(op->extent.type(), *extent), ForType::Vectorized, body);
      Stmt serial = For::make(op->name, op->min, op->extent, ForType::Serial, body);
      return IfThenElse::make(EQ::make(op->extent, make_const(op->extent.type(), *extent)), vector, serial);
    }
    if (op->for_type != ForType::Unrolled)
      return body.same_as(op->body) ? Stmt(op) : For::make(op->name, op->min, op->extent, op->for_type, body);
    if (!extent)
      throw CompileError("unrolled loop " + op->name + " has a non-constant extent (" + to_string(op->extent) +
                         ") with no constant bound; unroll with a factor, e.g. unroll(x, 4)");
    if (*extent > 256)
      throw CompileError("unrolled loop " + op->name + " has " + std::to_string(*extent) +
                         (guarded ? " iterations at most" : " iterations") + "; unroll at most 256");
    std::vector<Stmt> copies;
    for (int64_t i = 0; i < *extent; ++i) {
      Expr index = make_const(op->extent.type(), i);
      Stmt copy = guarded ? IfThenElse::make(LT::make(index, op->extent), body) : body;
      copies.push_back(LetStmt::make(op->name, Add::make(op->min, index), copy));
    }
    return copies.empty() ? Evaluate::make(make_zero(Int(32))) : Block::make(copies);
  }
};

} // namespace

Stmt unroll_loops(const Stmt &s) { return Unroll().mutate(s); }

} // namespace ptxjit::lower
