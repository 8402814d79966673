#include "Interval.h"

#include "Constants.h"
#include "IREquality.h"
#include "IRVisitor.h"
#include "Simplify.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <optional>

namespace ptxjit::ir {
namespace {

Expr minOf(const Expr &a, const Expr &b) { return a.defined() && b.defined() ? simplify(Min::make(a, b)) : Expr(); }
Expr maxOf(const Expr &a, const Expr &b) { return a.defined() && b.defined() ? simplify(Max::make(a, b)) : Expr(); }

class Bounds : public IRVisitor {
public:
  Bounds(const Scope &scope, CallBounds *calls) : TheScope(scope), Calls(calls) {}
  Interval Result;

  Interval of(const Expr &e) {
    e.accept(this);
    return Result;
  }

private:
  const Scope &TheScope;
  CallBounds *Calls;
  std::map<std::string, Interval> Lets;
  // Free variables (neither lets nor in the scope) take any value of their type instead of
  // standing for themselves: the bounds that hold whatever they are (constantBoundsOf).
  bool FreeVariablesUnknown = false;

  /// Constant bounds of `e` over every value of its free variables, where there are any.
  std::optional<std::pair<int64_t, int64_t>> constantBoundsOf(const Expr &e) {
    static const Scope noScope;
    Bounds everyValue(noScope, Calls);
    everyValue.FreeVariablesUnknown = true;
    Interval c = everyValue.of(e);
    auto lo = as_const_int(c.min), hi = as_const_int(c.max);
    if (!lo || !hi)
      return std::nullopt;
    return std::make_pair(*lo, *hi);
  }

  // Values of narrow integer types are bounded by the type even when nothing else is known.
  void typeBounds(Type t) {
    if ((t.is_int() || t.code == Type::UInt) && t.bits <= 16)
      Result = t.is_int() ? Interval{make_const(t.element_of(), t.min_int()), make_const(t.element_of(), t.max_int())}
                          : Interval{make_zero(t.element_of()), make_const(t.element_of(), int64_t(t.max_uint()))};
    else
      Result = Interval::everything();
  }

  static bool fits(Type t, int64_t value) {
    if (t.is_int())
      return value >= t.min_int() && value <= t.max_int();
    return value >= 0 && (t.bits >= 63 || uint64_t(value) <= t.max_uint());
  }

  void visit(const IntImm *op) override { Result = Interval::single_point(Expr(op)); }
  void visit(const UIntImm *op) override { Result = Interval::single_point(Expr(op)); }
  void visit(const FloatImm *op) override { Result = Interval::single_point(Expr(op)); }

  void visit(const Variable *op) override {
    if (auto it = Lets.find(op->name); it != Lets.end())
      Result = it->second;
    else if (auto it = TheScope.find(op->name); it != TheScope.end())
      Result = it->second;
    else if (FreeVariablesUnknown)
      typeBounds(op->type);
    else
      Result = Interval::single_point(Expr(op));
  }

  void visit(const Cast *op) override {
    Interval v = of(op->value);
    Type from = op->value.type(), to = op->type;
    if (from.is_float() && (to.is_int() || to.is_uint()) && !to.is_bool()) {
      floatToInteger(v, to.element_of());
      return;
    }
    // Only casts that keep every value are monotonic and safe to push through.
    if (v.is_bounded() && to.can_represent(from)) {
      Result = {simplify(Cast::make(to.element_of(), v.min)), simplify(Cast::make(to.element_of(), v.max))};
      return;
    }
    // Constant ends that the narrower type holds: the cast changes no value between them.
    if (auto lo = as_const_int(v.min), hi = as_const_int(v.max); lo && hi && (to.is_int() || to.is_uint()) &&
                                                                   fits(to, *lo) && fits(to, *hi)) {
      Result = {make_const(to.element_of(), *lo), make_const(to.element_of(), *hi)};
      return;
    }
    if (v.is_bounded() && to.is_float()) {
      Result = {simplify(Cast::make(to.element_of(), v.min)), simplify(Cast::make(to.element_of(), v.max))};
      return;
    }
    // Symbolic ends that the cast cannot carry (a value between them might not fit): the
    // constant bounds of every value the operand can take, where the type holds them
    // (int32(p >> 28) of a uint32 p is in [0, 15]).
    if ((to.is_int() || to.is_uint()) && !FreeVariablesUnknown)
      if (auto c = constantBoundsOf(op->value); c && fits(to, c->first) && fits(to, c->second)) {
        Result = {make_const(to.element_of(), c->first), make_const(to.element_of(), c->second)};
        return;
      }
    typeBounds(to);
    if (!Result.is_bounded() && to.can_represent(from))
      typeBounds(from);
    if (Result.is_bounded() && Result.min.type() != to.element_of())
      Result = {simplify(Cast::make(to.element_of(), Result.min)), simplify(Cast::make(to.element_of(), Result.max))};
  }

  // A float cast to an integer truncates toward zero, which is increasing; a value outside the
  // integer's range is undefined (as in C++ and Halide). Each end is first moved outward by 2^-20
  // of its magnitude (about 8 units in the last place of a float), so that a value the program
  // computes with other rounding (a fused multiply-add, an end folded here in double) does not
  // truncate past it. Constant ends give constant bounds where they fit the type; symbolic ones
  // are cast as they are to signed types of 32 bits or more (as Halide does: overflow is undefined
  // there); otherwise the type bounds the result.
  void floatToInteger(const Interval &v, Type to) {
    auto outward = [](Expr end, bool up) -> Expr {
      if (!end.defined())
        return end;
      if (end.type().bits < 32)
        end = Cast::make(Float(32), end);
      const Type t = end.type();
      Expr magnitude = Max::make(end, Sub::make(make_zero(t), end));
      Expr slack = Mul::make(magnitude, make_const(t, std::ldexp(1.0, -20)));
      return simplify(up ? Add::make(end, slack) : Sub::make(end, slack));
    };
    Expr lo = outward(v.min, false), hi = outward(v.max, true);
    auto finite = [](const Expr &end) -> std::optional<double> {
      auto c = end.defined() ? as_const_float(end) : std::nullopt;
      return c && std::fabs(*c) < 0x1p62 ? c : std::nullopt; // NaN and infinities compare false
    };
    if (auto cl = finite(lo), ch = finite(hi); cl && ch) {
      const int64_t tl = int64_t(std::trunc(cl.value())), th = int64_t(std::trunc(ch.value()));
      if (to.bits >= 32 && to.is_int()) {
        // Truncated ends past the type's range clamp to it: no defined value lies beyond.
        const int64_t typeMin = to.min_int(), typeMax = to.max_int();
        Result = {make_const(to, std::clamp(tl, typeMin, typeMax)), make_const(to, std::clamp(th, typeMin, typeMax))};
        return;
      }
      if (fits(to, tl) && fits(to, th)) {
        Result = {make_const(to, tl), make_const(to, th)};
        return;
      }
    } else if (lo.defined() && hi.defined() && to.is_int() && to.bits >= 32) {
      Result = {simplify(Cast::make(to, lo)), simplify(Cast::make(to, hi))};
      return;
    }
    typeBounds(to);
  }

  // Integer types whose arithmetic wraps: narrower than 32 bits, and unsigned. (Signed 32- and
  // 64-bit overflow is undefined, so the usual rules hold there.)
  static bool wraps(Type t) { return (t.is_int() && t.bits < 32) || (t.code == Type::UInt && t.bits > 1); }

  // For a wrapping type, the interval of a op b from the exact values at the ends of a and b when
  // none of them wraps; otherwise the type's own range (or nothing known).
  template <typename Op> bool boundedWithoutWrap(Type t, const Interval &a, const Interval &b, Op exact) {
    if (!wraps(t))
      return false;
    auto ends = [](const Interval &i) -> std::optional<std::pair<int64_t, int64_t>> {
      auto lo = as_const_int(i.min), hi = as_const_int(i.max);
      if (!lo || !hi)
        return std::nullopt;
      return std::pair{*lo, *hi};
    };
    auto ea = ends(a), eb = ends(b);
    typeBounds(t);
    if (!ea || !eb || t.bits > 32)
      return true;
    __int128 values[] = {exact(__int128(ea->first), __int128(eb->first)), exact(__int128(ea->first), __int128(eb->second)),
                         exact(__int128(ea->second), __int128(eb->first)),
                         exact(__int128(ea->second), __int128(eb->second))};
    __int128 lo = *std::min_element(std::begin(values), std::end(values));
    __int128 hi = *std::max_element(std::begin(values), std::end(values));
    __int128 typeMin = t.is_int() ? __int128(t.min_int()) : 0;
    __int128 typeMax = t.is_int() ? __int128(t.max_int()) : __int128(t.max_uint());
    if (lo >= typeMin && hi <= typeMax)
      Result = {make_const(t.element_of(), int64_t(lo)), make_const(t.element_of(), int64_t(hi))};
    return true;
  }

  // One end of the interval of x op y, for a type that does not wrap. Constant ends of a signed
  // 32- or 64-bit type combine exactly and clamp to the type's range: overflow is undefined, so no
  // value lies past it, and folding in the type's own arithmetic would wrap the end around.
  template <typename Op> static Expr endOf(const Expr &x, const Expr &y, Op exact, const Expr &symbolic) {
    if (!x.defined() || !y.defined())
      return Expr();
    Type t = symbolic.type();
    auto cx = as_const_int(x), cy = as_const_int(y);
    if (cx && cy && t.is_int()) {
      __int128 v = std::clamp(exact(__int128(*cx), __int128(*cy)), __int128(t.min_int()), __int128(t.max_int()));
      return make_const(t.element_of(), int64_t(v));
    }
    return simplify(symbolic);
  }
  static __int128 plus(__int128 x, __int128 y) { return x + y; }
  static __int128 minus(__int128 x, __int128 y) { return x - y; }
  static __int128 times(__int128 x, __int128 y) { return x * y; }

  void visit(const Add *op) override {
    Interval a = of(op->a), b = of(op->b);
    if (boundedWithoutWrap(op->type, a, b, plus))
      return;
    Result = {a.min.defined() && b.min.defined() ? endOf(a.min, b.min, plus, Add::make(a.min, b.min)) : Expr(),
              a.max.defined() && b.max.defined() ? endOf(a.max, b.max, plus, Add::make(a.max, b.max)) : Expr()};
  }

  void visit(const Sub *op) override {
    Interval a = of(op->a), b = of(op->b);
    if (boundedWithoutWrap(op->type, a, b, minus))
      return;
    Result = {a.min.defined() && b.max.defined() ? endOf(a.min, b.max, minus, Sub::make(a.min, b.max)) : Expr(),
              a.max.defined() && b.min.defined() ? endOf(a.max, b.min, minus, Sub::make(a.max, b.min)) : Expr()};
  }

  void visit(const Mul *op) override {
    Interval a = of(op->a), b = of(op->b);
    if (boundedWithoutWrap(op->type, a, b, times))
      return;
    if (as_const_int(a.min) && !as_const_int(b.min))
      std::swap(a, b);
    auto c = b.min.defined() && equal_const(b) ? as_const_int(b.min) : std::nullopt;
    auto cf = b.min.defined() && equal_const(b) ? as_const_float(b.min) : std::nullopt;
    if (c || cf) {
      bool negative = c ? *c < 0 : *cf < 0;
      Expr lo = a.min.defined() ? endOf(a.min, b.min, times, Mul::make(a.min, b.min)) : Expr();
      Expr hi = a.max.defined() ? endOf(a.max, b.min, times, Mul::make(a.max, b.min)) : Expr();
      Result = negative ? Interval{hi, lo} : Interval{lo, hi};
      return;
    }
    if (a.is_bounded() && b.is_bounded()) {
      // A factor bounded by a large constant (the range of a narrower type it was cast from,
      // say) times a symbolic one: the product of the ends may pass 2^31 at run time where no
      // value of the program does. The end is then computed in 64 bits and clamped to the
      // type's range (sound: overflow is undefined, so no value lies past it).
      auto large = [](const Interval &i) {
        auto lo = as_const_int(i.min), hi = as_const_int(i.max);
        return (lo && std::abs(*lo) >= (1 << 15)) || (hi && std::abs(*hi) >= (1 << 15));
      };
      const Type t = op->type;
      const bool saturate = t.is_int() && t.bits == 32 && (large(a) || large(b));
      auto product = [&](const Expr &x, const Expr &y) {
        if (!saturate || (is_const(x) && is_const(y)))
          return endOf(x, y, times, Mul::make(x, y));
        const Type wide = Int(64);
        Expr p = Mul::make(Cast::make(wide, x), Cast::make(wide, y));
        p = Max::make(Min::make(p, make_const(wide, int64_t(t.max_int()))), make_const(wide, t.min_int()));
        return simplify(Cast::make(t.element_of(), p));
      };
      Expr p1 = product(a.min, b.min), p2 = product(a.min, b.max), p3 = product(a.max, b.min), p4 = product(a.max, b.max);
      Result = {minOf(minOf(p1, p2), minOf(p3, p4)), maxOf(maxOf(p1, p2), maxOf(p3, p4))};
      return;
    }
    Result = Interval::everything();
  }

  static bool equal_const(const Interval &i) {
    return i.is_bounded() && i.min.same_as(i.max) && is_const(i.min);
  }

  // One value: ends that are the same expression, or equal ones computed apart (the ends of
  // (w + 31) / 32 for a free w, each built on its own). Only where both operands are: over a
  // range, a divisor's symbolic bounds make long ends that the clamps around a fused loop's
  // parts bound better.
  static bool onePoint(const Interval &i) {
    return i.is_bounded() && (i.min.same_as(i.max) || equal(i.min, i.max));
  }

  void visit(const Div *op) override {
    Interval a = of(op->a), b = of(op->b);
    auto c = equal_const(b) ? as_const_int(b.min) : std::nullopt;
    auto cf = equal_const(b) ? as_const_float(b.min) : std::nullopt;
    if ((c && *c > 0) || (cf && *cf > 0)) {
      Result = {a.min.defined() ? simplify(Div::make(a.min, b.min)) : Expr(),
                a.max.defined() ? simplify(Div::make(a.max, b.min)) : Expr()};
    } else if (c && *c < 0 && wraps(op->type)) {
      typeBounds(op->type); // the type's minimum divided by -1 wraps to itself
    } else if ((c && *c < 0) || (cf && *cf < 0)) {
      Result = {a.max.defined() ? simplify(Div::make(a.max, b.min)) : Expr(),
                a.min.defined() ? simplify(Div::make(a.min, b.min)) : Expr()};
    } else if (onePoint(a) && onePoint(b) && !op->type.is_float() && !wraps(op->type)) {
      // One value (a fused loop's variable split back into its dimensions at a point of it).
      Result = Interval::single_point(simplify(Div::make(a.min, b.min)));
    } else if (a.is_bounded() && b.is_bounded() && b.min.same_as(b.max) && !is_const(b.min) && !wraps(op->type)) {
      // A fixed divisor of unknown sign (a Param, an input's size): a / b is monotonic in a,
      // increasing or decreasing with b's sign (and 0 for an integer b of 0).
      Expr lo = simplify(Div::make(a.min, b.min)), hi = simplify(Div::make(a.max, b.min));
      Result = lo.same_as(hi) ? Interval::single_point(lo) : Interval{minOf(lo, hi), maxOf(lo, hi)};
    } else {
      Result = Interval::everything();
    }
  }

  // Integer modulus is Euclidean: a % b lies in [0, |b| - 1], and is 0 when b is 0. Only a
  // constant or a fixed symbolic b (an image's width, say) gives useful bounds: over a range of b
  // the symbolic ends would be looser than leaving the result unbounded for a clamp around it.
  void visit(const Mod *op) override {
    const Type t = op->type.element_of();
    Interval b = of(op->b);
    auto c = equal_const(b) ? as_const_int(b.min) : std::nullopt;
    Interval a = of(op->a);
    if (onePoint(a) && onePoint(b)) {
      // One value (a fused loop's variable split back into its dimensions at a point of it).
      Result = Interval::single_point(simplify(Mod::make(a.min, b.min)));
    } else if (op->type.is_float()) {
      Result = Interval::everything();
    } else if (c) {
      int64_t m = *c < 0 ? -*c : *c;
      Result = {make_zero(t), make_const(t, std::max<int64_t>(m - 1, 0))};
    } else if (b.is_bounded() && b.min.same_as(b.max) && !wraps(op->type)) {
      Expr magnitude = Max::make(b.max, Sub::make(make_zero(t), b.max));
      Result = {make_zero(t), simplify(Max::make(Sub::make(magnitude, make_one(t)), make_zero(t)))};
    } else {
      Result = Interval::everything();
    }
  }

  void visit(const Min *op) override {
    Interval a = of(op->a), b = of(op->b);
    // min(x, hi) is at most hi even when x is unbounded.
    Result = {minOf(a.min, b.min), a.max.defined() && b.max.defined() ? minOf(a.max, b.max)
                                                                       : (a.max.defined() ? a.max : b.max)};
  }

  void visit(const Max *op) override {
    Interval a = of(op->a), b = of(op->b);
    Result = {a.min.defined() && b.min.defined() ? maxOf(a.min, b.min) : (a.min.defined() ? a.min : b.min),
              maxOf(a.max, b.max)};
  }

  void boolean() { Result = {make_bool(false), make_bool(true)}; }
  void visit(const EQ *) override { boolean(); }
  void visit(const NE *) override { boolean(); }
  void visit(const LT *) override { boolean(); }
  void visit(const LE *) override { boolean(); }
  void visit(const GT *) override { boolean(); }
  void visit(const GE *) override { boolean(); }
  void visit(const And *) override { boolean(); }
  void visit(const Or *) override { boolean(); }
  void visit(const Not *) override { boolean(); }

  void visit(const Select *op) override {
    Interval t = of(op->true_value), f = of(op->false_value);
    Result = interval_union(t, f);
  }

  void visit(const Load *op) override { typeBounds(op->type); }
  void visit(const Call *op) override {
    if (op->is_print() || op->is_trace() || op->is_require()) {
      Result = of(op->args[1]);
      return;
    }
    if (Calls && op->call_type == Call::Halide) {
      Result = Calls->of(op);
      if (Result.is_bounded())
        return;
    }
    if (op->call_type == Call::Intrinsic && (op->type.is_int() || op->type.is_uint()) && bitwiseBounds(op))
      return;
    typeBounds(op->type);
  }

  static bool nonNegative(const Interval &i) {
    auto lo = as_const_int(i.min);
    return lo && *lo >= 0;
  }

  // Bounds of the bitwise and shift intrinsics where the operands' bounds give any.
  bool bitwiseBounds(const Call *op) {
    const Type t = op->type;
    const Expr zero = make_zero(t.element_of());
    if (op->name == Call::BitwiseNot) {
      // ~a is -1 - a (signed) or max - a (unsigned): decreasing.
      Interval a = of(op->args[0]);
      if (!a.is_bounded())
        return false;
      Expr top = t.is_int() ? make_const(t.element_of(), int64_t(-1)) : make_const(t.element_of(), int64_t(t.max_uint()));
      Result = {simplify(Sub::make(top, a.max)), simplify(Sub::make(top, a.min))};
      return true;
    }
    if (op->name == Call::Popcount || op->name == Call::CountLeadingZeros || op->name == Call::CountTrailingZeros) {
      Result = {zero, make_const(t.element_of(), int64_t(t.bits))};
      return true;
    }
    if (op->args.size() != 2)
      return false; // reinterpret: bounded by its type
    Interval a = of(op->args[0]), b = of(op->args[1]);
    if (op->name == Call::BitwiseAnd) {
      // A non-negative operand has every bit of the result: 0 <= a & b <= that operand.
      Expr hi;
      for (const Interval *i : {&a, &b})
        if ((t.is_uint() || nonNegative(*i)) && i->max.defined())
          hi = hi.defined() ? minOf(hi, i->max) : i->max;
      if (!hi.defined())
        return false;
      Result = {zero, hi};
      return true;
    }
    if (op->name == Call::BitwiseOr || op->name == Call::BitwiseXor) {
      // Non-negative operands below 2^k give a result below 2^k.
      auto hiA = as_const_int(a.max), hiB = as_const_int(b.max);
      if (!nonNegative(a) || !nonNegative(b) || !hiA || !hiB)
        return false;
      uint64_t below = 1;
      while (below <= uint64_t(std::max(*hiA, *hiB)))
        below <<= 1;
      Result = {zero, make_const(t.element_of(), int64_t(below - 1))};
      return true;
    }
    if (op->name != Call::ShiftLeft && op->name != Call::ShiftRight)
      return false;
    // Shifts by a constant amount within the width.
    auto amount = as_const_int(b.min);
    if (!amount || as_const_int(b.max) != amount || *amount < 0 || *amount >= t.bits)
      return false;
    if (op->name == Call::ShiftRight) {
      // Rounds down, as division by 2^amount does: increasing. Constant ends shift exactly; the
      // others divide, where 2^amount is a value of the type (not 2^(bits - 1) of a signed type).
      const bool divisible = t.is_uint() || *amount < t.bits - 1;
      Expr divisor = make_const(t.element_of(), int64_t(1) << *amount);
      auto end = [&](const Expr &e) -> Expr {
        if (auto c = as_const_int(e))
          return *fold_bitwise(Call::ShiftRight, t.element_of(), *c, *amount);
        return e.defined() && divisible ? simplify(Div::make(e, divisor)) : Expr();
      };
      Result = {end(a.min), end(a.max)};
      if (!Result.is_bounded() && *amount > 0 && t.bits <= 32) {
        // Whatever the operand, its type's range shifted: uint32 x >> 8 is below 2^24.
        const int64_t typeMin = t.is_int() ? t.min_int() : 0;
        const int64_t typeMax = t.is_int() ? t.max_int() : int64_t(t.max_uint());
        Result = {make_const(t.element_of(), typeMin >> *amount), make_const(t.element_of(), typeMax >> *amount)};
      } else if (!Result.is_bounded()) {
        typeBounds(t);
      }
      return true;
    }
    // A left shift wraps: only constant ends that do not overflow.
    auto lo = as_const_int(a.min), hi = as_const_int(a.max);
    if (!lo || !hi || *amount >= 62)
      return false;
    const __int128 typeMin = t.is_int() ? __int128(t.min_int()) : 0;
    const __int128 typeMax = t.is_int() ? __int128(t.max_int()) : __int128(t.max_uint());
    const __int128 scale = __int128(1) << *amount, scaledLo = __int128(*lo) * scale, scaledHi = __int128(*hi) * scale;
    if (scaledLo < typeMin || scaledHi > typeMax)
      return false;
    Result = {make_const(t.element_of(), int64_t(scaledLo)), make_const(t.element_of(), int64_t(scaledHi))};
    return true;
  }

  void visit(const Ramp *op) override {
    Interval base = of(op->base);
    Expr last = Add::make(op->base, Mul::make(op->stride, make_const(op->stride.type(), int64_t(op->lanes - 1))));
    Interval end = of(last);
    Result = interval_union(base, end);
  }

  void visit(const Broadcast *op) override { Result = of(op->value); }

  void visit(const Let *op) override {
    Interval value = of(op->value);
    auto saved = Lets.find(op->name) != Lets.end() ? std::optional<Interval>(Lets[op->name]) : std::nullopt;
    Lets[op->name] = value.is_bounded() ? value : Interval::everything();
    Result = of(op->body);
    if (saved)
      Lets[op->name] = *saved;
    else
      Lets.erase(op->name);
  }
};

} // namespace

Interval interval_union(const Interval &a, const Interval &b) { return {minOf(a.min, b.min), maxOf(a.max, b.max)}; }

Interval bounds_of_expr_in_scope(const Expr &e, const Scope &scope, CallBounds *calls) {
  return Bounds(scope, calls).of(e);
}

} // namespace ptxjit::ir
