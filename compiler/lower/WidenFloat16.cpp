#include "WidenFloat16.h"

#include "ir/Constants.h"
#include "ir/IRMutator.h"

#include "ptxjit/IROperator.h"

namespace ptxjit::lower {

using namespace ir;

namespace {

bool isFloat16(Type t) { return t.is_float() && t.bits == 16; }

Expr uintConstant(Type like, uint64_t value) { return make_const(UInt(32, like.lanes), int64_t(value)); }

// float32 bits rounded to bfloat16 bits (the upper half), to nearest, ties to even; a NaN stays
// a NaN (quieted: its upper half alone could read as infinity).
Expr float32ToBFloat16(const Expr &f) {
  const Type t = f.type();
  Expr bits = reinterpret(UInt(32, t.lanes), f);
  Expr isNan = (bits & uintConstant(t, 0x7fffffff)) > uintConstant(t, 0x7f800000);
  Expr lowestKept = (bits >> uintConstant(t, 16)) & uintConstant(t, 1);
  Expr rounded = (bits + uintConstant(t, 0x7fff) + lowestKept) >> uintConstant(t, 16);
  Expr quietNan = (bits >> uintConstant(t, 16)) | uintConstant(t, 0x40);
  return reinterpret(BFloat(16, t.lanes), Cast::make(UInt(16, t.lanes), Select::make(isNan, quietNan, rounded)));
}

Expr bfloat16ToFloat32(const Expr &b) {
  const Type t = b.type();
  Expr bits = Cast::make(UInt(32, t.lanes), reinterpret(UInt(16, t.lanes), b));
  return reinterpret(Float(32, t.lanes), bits << uintConstant(t, 16));
}

// A float64 rounded to float32 to odd: when inexact, the neighbour of the two around it whose
// last bit is 1. Rounding that again to 16 bits equals rounding the float64 once.
Expr float64ToFloat32RoundedToOdd(const Expr &d) {
  const Type t = d.type();
  Expr nearest = Cast::make(Float(32, t.lanes), d);
  Expr back = Cast::make(d.type(), nearest);
  Expr bits = reinterpret(UInt(32, t.lanes), nearest);
  Expr even = (bits & uintConstant(t, 1)) == uintConstant(t, 0);
  // Moving the bits by one moves the magnitude by one step, whatever the sign.
  Expr towardValue = Select::make(abs(back) > abs(d), bits - uintConstant(t, 1), bits + uintConstant(t, 1));
  return reinterpret(Float(32, t.lanes), Select::make(NE::make(back, d) && even, towardValue, bits));
}

class Widen : public IRMutator {
  using IRMutator::visit;

  static Expr toFloat32(const Expr &e) { return convert(Float(32, e.type().lanes), e); }

  // A conversion that no code generator sees with a 16-bit float on either side, but for
  // float32 <-> Float(16), which every target does in one instruction.
  static Expr convert(Type to, const Expr &value) {
    const Type from = value.type();
    if (from == to)
      return value;
    if (from.is_bfloat())
      return convert(to, bfloat16ToFloat32(value));
    if (isFloat16(from) && to != Float(32, to.lanes))
      return convert(to, Cast::make(Float(32, from.lanes), value));
    if (!isFloat16(to))
      return Cast::make(to, value);
    // To a 16-bit float through float32, where float32 holds the value or rounds it to odd.
    // float32 holds Float(16) values and integers of up to 16 bits; to Float(16), every integer
    // float32 does not hold is past its largest finite value anyway. To BFloat(16), wider integers
    // go through float64, which holds those of 32 bits; 64-bit ones round there first (a second
    // rounding, wrong only past 2^53).
    Expr f32;
    if (from.is_float() && from.bits == 32)
      f32 = value;
    else if (from.is_float() && from.bits == 64)
      f32 = float64ToFloat32RoundedToOdd(value);
    else if (from.bits <= 16 || !to.is_bfloat()) // an integer or a bool
      f32 = Cast::make(Float(32, from.lanes), value);
    else
      f32 = float64ToFloat32RoundedToOdd(Cast::make(Float(64, from.lanes), value));
    return to.is_bfloat() ? float32ToBFloat16(f32) : Cast::make(to, f32);
  }

  template <typename Node> Expr arithmetic(const Node *op) {
    Expr e = IRMutator::visit(op);
    const auto *n = e.as<Node>();
    if (!n || !isFloat16(n->type))
      return e;
    return convert(n->type, Node::make(toFloat32(n->a), toFloat32(n->b)));
  }

  template <typename Node> Expr comparison(const Node *op) {
    Expr e = IRMutator::visit(op);
    const auto *n = e.as<Node>();
    if (!n || !isFloat16(n->a.type()))
      return e;
    return Node::make(toFloat32(n->a), toFloat32(n->b));
  }

  Expr visit(const Add *op) override { return arithmetic(op); }
  Expr visit(const Sub *op) override { return arithmetic(op); }
  Expr visit(const Mul *op) override { return arithmetic(op); }
  Expr visit(const Div *op) override { return arithmetic(op); }
  Expr visit(const Mod *op) override { return arithmetic(op); }
  Expr visit(const Min *op) override { return arithmetic(op); }
  Expr visit(const Max *op) override { return arithmetic(op); }
  Expr visit(const EQ *op) override { return comparison(op); }
  Expr visit(const NE *op) override { return comparison(op); }
  Expr visit(const LT *op) override { return comparison(op); }
  Expr visit(const LE *op) override { return comparison(op); }
  Expr visit(const GT *op) override { return comparison(op); }
  Expr visit(const GE *op) override { return comparison(op); }

  Expr visit(const Cast *op) override { return convert(op->type, mutate(op->value)); }

  Expr visit(const Ramp *op) override {
    if (!isFloat16(op->type))
      return IRMutator::visit(op);
    return convert(op->type, Ramp::make(toFloat32(mutate(op->base)), toFloat32(mutate(op->stride)), op->lanes));
  }

  Expr visit(const Call *op) override {
    const bool math = op->call_type == Call::PureExtern;
    const bool test = op->call_type == Call::Intrinsic &&
                      (op->name == Call::IsNan || op->name == Call::IsInf || op->name == Call::IsFinite);
    if (!math && !test && !op->is_print() && !op->is_trace() && !op->is_require())
      return IRMutator::visit(op);
    // Math in float32, the result rounded back; tests, printing and requirements of the widened value.
    std::vector<Expr> args;
    for (const Expr &a : op->args) {
      Expr m = mutate(a);
      args.push_back(isFloat16(m.type()) ? toFloat32(m) : m);
    }
    const Type t = isFloat16(op->type) ? Float(32, op->type.lanes) : op->type;
    Expr call = Call::make(t, op->name, args, op->call_type, op->func, op->param, op->value_index);
    return convert(op->type, call);
  }
};

} // namespace

Stmt widen_float16(const Stmt &s) { return Widen().mutate(s); }

} // namespace ptxjit::lower
