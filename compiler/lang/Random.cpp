#include "lang/Random.h"

#include "ir/Constants.h"
#include "ir/IR.h"
#include "ir/IRMutator.h"
#include "lang/UniqueName.h"
#include "ptxjit/IROperator.h"

#include <atomic>

namespace ptxjit {

using namespace ir;

namespace {

Expr uint32Constant(uint32_t value) { return make_const(UInt(32), static_cast<int64_t>(value)); }

/// A bijection of 32-bit integers whose output bits each depend on every input bit: two rounds of
/// xor-shift and multiply (the "lowbias32" constants found by Chris Wellons' hash prospector).
/// Integer multiplies and shifts only, so it vectorizes on the host and costs a few instructions
/// on a GPU.
Expr mix(const Expr &h) {
  const std::string a = unique_name("random_mix"), b = unique_name("random_mix");
  const Expr va = Variable::make(UInt(32), a), vb = Variable::make(UInt(32), b);
  return Let::make(a, (h ^ (h >> 16)) * uint32Constant(0x7feb352du),
                   Let::make(b, (va ^ (va >> 15)) * uint32Constant(0x846ca68bu), vb ^ (vb >> 16)));
}

class RandomLowering : public IRMutator {
public:
  RandomLowering(const std::vector<Expr> &freeVariables, int tag) : FreeVariables(freeVariables), Tag(tag) {}

private:
  const std::vector<Expr> &FreeVariables;
  const int Tag;

  using IRMutator::visit;

  Expr visit(const Call *op) override {
    if (op->call_type != Call::Intrinsic || op->name != Call::Random)
      return IRMutator::visit(op);
    // args: the call's id, then its seed if it has one.
    Expr h = mix(uint32Constant(static_cast<uint32_t>(Tag) * 0x9e3779b9u) + cast(UInt(32), op->args[0]));
    for (size_t i = 1; i < op->args.size(); ++i)
      h = mix(h ^ cast(UInt(32), mutate(op->args[i])));
    for (const Expr &v : FreeVariables)
      h = mix(h + cast(UInt(32), v));
    if (op->type == UInt(32))
      return h;
    if (op->type == Int(32))
      return reinterpret(Int(32), h);
    // The top 24 bits, exactly representable, scaled into [0, 1): bounds inference sees [0, 1).
    return cast(Float(32), h >> 8) * make_const(Float(32), 1.0 / 16777216.0);
  }
};

} // namespace

int next_random_definition_tag() {
  static std::atomic<int> counter{0};
  return counter++;
}

Expr lower_random(const Expr &e, const std::vector<Expr> &freeVariables, int tag) {
  return RandomLowering(freeVariables, tag).mutate(e);
}

} // namespace ptxjit
