#include "StorageFlattening.h"

#include "ir/Constants.h"
#include "ir/IRMutator.h"
#include "lang/Parameter.h"

namespace ptxjit::lower {

using namespace ir;

namespace {

Expr var(const std::string &name) { return Variable::make(Int(32), name); }

Expr flatIndex(const std::string &buffer, const std::vector<Expr> &args) {
  Expr index = make_zero(Int(32));
  for (size_t i = 0; i < args.size(); ++i) {
    Expr offset = Sub::make(args[i], var(buffer_field_name(buffer, "min", static_cast<int>(i))));
    if (i > 0)
      offset = Mul::make(offset, var(buffer_field_name(buffer, "stride", static_cast<int>(i))));
    index = i == 0 ? offset : Add::make(index, offset);
  }
  return index;
}

class FlattenStorage : public IRMutator {
  using IRMutator::visit;

  Stmt visit(const Realize *op) override {
    Stmt body = mutate(op->body);
    std::vector<Expr> extents;
    for (const Range &r : op->bounds)
      extents.push_back(r.extent);
    Stmt result = Allocate::make(op->name, op->type, extents, body, op->memory);
    // Index arithmetic names the storage's mins and strides; strides multiply the extents inside.
    for (size_t i = op->bounds.size(); i-- > 1;) {
      Expr stride = i == 1 ? op->bounds[0].extent
                           : Mul::make(var(buffer_field_name(op->name, "stride", static_cast<int>(i - 1))),
                                       op->bounds[i - 1].extent);
      result = LetStmt::make(buffer_field_name(op->name, "stride", static_cast<int>(i)), stride, result);
    }
    for (size_t i = op->bounds.size(); i-- > 0;)
      result = LetStmt::make(buffer_field_name(op->name, "min", static_cast<int>(i)), op->bounds[i].min, result);
    return result;
  }

  Stmt visit(const Provide *op) override {
    std::vector<Expr> args;
    for (const Expr &a : op->args)
      args.push_back(mutate(a));
    return Store::make(op->name, mutate(op->value), flatIndex(op->name, args), op->atomic);
  }

  Expr visit(const Call *op) override {
    if (op->call_type != Call::Halide && op->call_type != Call::Image)
      return IRMutator::visit(op);
    std::vector<Expr> args;
    for (const Expr &a : op->args)
      args.push_back(mutate(a));
    return Load::make(op->type, op->name, flatIndex(op->name, args));
  }
};

} // namespace

Stmt storage_flattening(const Stmt &s) { return FlattenStorage().mutate(s); }

} // namespace ptxjit::lower
