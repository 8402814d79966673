// The IR: construction, type promotion, printing, structural equality, simplification, intervals.

#include "ir/CSE.h"
#include "ir/Constants.h"
#include "ir/IREquality.h"
#include "ir/IRPrinter.h"
#include "ir/Interval.h"
#include "ir/Monotonic.h"
#include "ir/Simplify.h"
#include "ir/Substitute.h"
#include "lower/BoxesTouched.h"
#include "ptxjit.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <random>

using namespace ptxjit;
using namespace ptxjit::ir;

namespace {
Expr v(const char *name, Type t = Int(32)) { return Variable::make(t, name); }
} // namespace

TEST_CASE("Operators promote types like C++ and adapt literals", "[unit][ir]") {
  Expr i8 = v("a", Int(8)), u8 = v("b", UInt(8)), i32 = v("c"), f32 = v("d", Float(32)), f64 = v("e", Float(64));
  CHECK((i8 + 1).type() == Int(8));
  CHECK((u8 * 2).type() == UInt(8));
  CHECK((i8 + i32).type() == Int(32));
  CHECK((u8 + i8).type() == Int(8));
  CHECK((i32 + f32).type() == Float(32));
  CHECK((f32 + f64).type() == Float(64));
  CHECK((f32 * 2.0).type() == Float(32));
  CHECK((i32 + 1.5f).type() == Float(32));
  CHECK((i32 < 3).type() == Bool());
  CHECK(select(f32 > 0.0f, i8, 3).type() == Int(8));
  CHECK_THROWS_WITH(u8 + 300, Catch::Contains("300") && Catch::Contains("uint8"));
  CHECK_THROWS_WITH(i32 && i32, Catch::Contains("boolean"));
  CHECK_THROWS_AS(Expr() + 1, CompileError);
}

TEST_CASE("The printer writes readable IR", "[unit][ir]") {
  Expr x = v("x");
  CHECK(to_string(x + 1) == "(x + 1)");
  CHECK(to_string(min(x, 3) * 2.5f) == "(float32(min(x, 3)) * 2.5f)");
  CHECK(to_string(cast<uint8_t>(x)) == "uint8(x)");
  Stmt s = For::make("x", 0, 10, ForType::Parallel, Store::make("f", x * 2, x));
  CHECK(to_string(s) == "parallel (x, 0, 10) {\n  f[x] = (x * 2)\n}\n");
  Stmt branch = IfThenElse::make(x < 3, Store::make("f", x, x), Store::make("g", x, x));
  CHECK(to_string(branch) == "if ((x < 3)) {\n  f[x] = x\n} else {\n  g[x] = x\n}\n");
}

TEST_CASE("Structural equality and hashing", "[unit][ir]") {
  Expr a = v("x") * 3 + v("y"), b = v("x") * 3 + v("y"), c = v("x") * 3 + v("z");
  CHECK(equal(a, b));
  CHECK_FALSE(a.same_as(b));
  CHECK(structural_hash(a) == structural_hash(b));
  CHECK_FALSE(equal(a, c));
  CHECK_FALSE(equal(Expr(1), Expr(int64_t(1))));
  CHECK_FALSE(equal(v("ab"), Expr(v("a"))));
  CHECK_FALSE(equal(Expr(0.0f), Expr(-0.0f))); // bit for bit
  Stmt s = Store::make("f", a, v("i")), t = Store::make("f", b, v("i")), u = Store::make("g", a, v("i"));
  CHECK(equal(s, t));
  CHECK(structural_hash(s) == structural_hash(t));
  CHECK_FALSE(equal(s, u));
}

TEST_CASE("Products of unsigned constants in sums wrap modulo the type", "[unit][ir]") {
  // The simplifier's coefficients of x * c * c overflowed int64_t (undefined behaviour, reported
  // by UBSan on differential tester seed 925368556384); they wrap, as the type's arithmetic does.
  Expr x = Variable::make(UInt(32), "x");
  Expr c = make_const(UInt(32), int64_t(4294967271)); // -25 modulo 2^32
  for (uint32_t value : {3u, 4000000000u}) {
    Expr simplified = simplify((x * c) * c + x);
    INFO(simplified);
    auto folded = as_const_int(simplify(substitute("x", make_const(UInt(32), int64_t(value)), simplified)));
    REQUIRE(folded);
    CHECK(uint32_t(*folded) == uint32_t(value * 626u));
  }
}

TEST_CASE("The simplifier folds constants and normalizes sums", "[unit][ir]") {
  Expr x = v("x"), y = v("y");
  CHECK(equal(simplify(Expr(3) + 4 * 5), Expr(23)));
  CHECK(equal(simplify((x + 3) - (x - 2)), Expr(5)));
  CHECK(equal(simplify((x + y) - y), x));
  CHECK(equal(simplify(x * 1 + 0), x));
  CHECK(equal(simplify(min(x + 1, x + 4)), simplify(x + 1)));
  CHECK(equal(simplify(max(min(x, 3), 3)), Expr(3)) == false); // max(min(x,3),3) is 3 only with more rules
  CHECK(equal(simplify(x < x + 1), make_bool(true)));
  CHECK(equal(simplify(select(Expr(2) > 1, x, y)), x));
  CHECK(equal(simplify(cast<float>(Expr(7)) / 2.0f), Expr(3.5f)));
  CHECK(equal(simplify(Let::make("t", Expr(4), Variable::make(Int(32), "t") * x)), simplify(x * 4)));
  Stmt loop = For::make("i", 0, 1, ForType::Serial, Store::make("f", v("i"), v("i")));
  CHECK(to_string(simplify(loop)) == "f[0] = 0\n");
}

TEST_CASE("Constant folding of / and % matches Euclidean division", "[unit][ir]") {
  std::mt19937 rng(std::random_device{}());
  for (int i = 0; i < 2000; ++i) {
    int a = static_cast<int>(rng() % 2001) - 1000, b = static_cast<int>(rng() % 21) - 10;
    int64_t q = *as_const_int(simplify(Expr(a) / Expr(b)));
    int64_t r = *as_const_int(simplify(Expr(a) % Expr(b)));
    INFO(a << " / " << b);
    if (b == 0) {
      CHECK(q == 0);
      CHECK(r == 0);
    } else {
      CHECK(r >= 0);
      CHECK(r < std::abs(b));
      CHECK(q * b + r == a);
    }
  }
}

TEST_CASE("The simplifier folds comparisons over constant loop ranges and minds shadowing", "[unit][ir]") {
  Expr i = v("i"), n = v("n");
  auto guarded = [&](Expr condition) {
    return For::make("i", 0, 32, ForType::Serial, IfThenElse::make(condition, Store::make("f", i, i)));
  };
  // i * 8 + 7 <= 255 for every i in [0, 31]: the guard goes.
  Stmt unguarded = For::make("i", 0, 32, ForType::Serial, Store::make("f", i, i));
  CHECK(to_string(simplify(guarded(i * 8 + 7 <= 255))) == to_string(unguarded));
  CHECK(to_string(simplify(guarded(i * 8 + 7 < 200 || i >= 0))) == to_string(unguarded));
  // i * 8 + 7 < 200 holds for some i only; i <= n depends on n: both stay.
  CHECK_THAT(to_string(simplify(guarded(i * 8 + 7 < 200))), Catch::Contains("if"));
  CHECK_THAT(to_string(simplify(guarded(i <= n))), Catch::Contains("if"));
  // i == 5 is neither always nor never: it stays, though both ends of the range differ from 5.
  CHECK_THAT(to_string(simplify(guarded(i == 5))), Catch::Contains("if"));
  // A let of the same name inside the loop has a range of its own.
  Stmt shadowed = For::make("i", 0, 32, ForType::Serial,
                            LetStmt::make("i", n * 100, IfThenElse::make(i <= 31, Store::make("f", i, i))));
  CHECK_THAT(to_string(simplify(shadowed)), Catch::Contains("if"));
}

TEST_CASE("The simplifier substitutes lets only where their names mean the same", "[unit][ir]") {
  Expr x = v("x"), y = v("y"), b = v("b"), i = v("i");
  // b is x: substituted, and the let goes.
  CHECK(to_string(simplify(LetStmt::make("b", x, Store::make("f", b + 1, 0)))) == "f[0] = (x + 1)\n");
  // x is rebound where b is used: b keeps its let there.
  Stmt shadowed = LetStmt::make("b", x, LetStmt::make("x", y * 3, Store::make("f", b - x, 0)));
  CHECK_THAT(to_string(simplify(shadowed)), Catch::Contains("let b = x"));
  // A loop of the same name as an outer let: inside, the name is the loop's.
  Stmt loop = LetStmt::make("i", 5, For::make("i", 0, 4, ForType::Serial, Store::make("f", i, i)));
  CHECK_THAT(to_string(simplify(loop)), Catch::Contains("f[i] = i"));
}

TEST_CASE("Lets of short linear sums are substituted, so tile bounds cancel", "[unit][ir]") {
  Expr x = v("x"), xi = v("xi"), lo = v("lo"), hi = v("hi"), y = v("y");
  // A tile's max - min + 1: its constant extent once both lets are substituted.
  Stmt tile = LetStmt::make("lo", x * 64 + xi * 4,
                            LetStmt::make("hi", x * 64 + xi * 4 + 3, Store::make("f", hi - lo + 1, 0)));
  CHECK(to_string(simplify(tile)) == "f[0] = 4\n");
  // let x = x * 8 + xi (a split whose outer loop keeps the name), with a use that stays because
  // xi is rebound inside: the let is renamed, and no use can take the outer x for the let's.
  Stmt split = LetStmt::make("x", x * 8 + xi, LetStmt::make("xi", y * 3, Store::make("f", x + xi, x)));
  std::string out = to_string(simplify(split));
  INFO(out);
  CHECK_THAT(out, Catch::Contains("let x.v0 = ((x * 8) + xi)"));
  CHECK_THAT(out, Catch::Contains("f[x.v0] = (x.v0 + (y * 3))"));
}

TEST_CASE("Lets that stay cancel through their values, but not where their value names them", "[unit][ir]") {
  Expr x = v("x"), n = v("n"), e = v("e"), lo = v("lo"), hi = v("hi"), y = v("y"), yi = v("yi");
  // A clipped tile: min and max are lets of mins; max - min + 1 is its extent.
  Expr clipped = min(x * 16 + n, e - 16);
  Stmt tile = LetStmt::make("lo", clipped, LetStmt::make("hi", clipped + 15, Store::make("f", hi - lo + 1, lo)));
  CHECK_THAT(to_string(simplify(tile)), Catch::Contains("f[lo] = 16"));
  // min(lo, clipped) is lo.
  Stmt same = LetStmt::make("lo", clipped, Store::make("f", min(lo, clipped), lo));
  CHECK_THAT(to_string(simplify(same)), Catch::Contains("f[lo] = lo"));
  // let y = min(y * 8, n) + yi: inside, y is the let, so y - min(y * 8, n) is not yi.
  Stmt shadowing = LetStmt::make("y", min(y * 8, n) + yi, Store::make("f", y - min(y * 8, n), 0));
  std::string out = to_string(simplify(shadowing));
  INFO(out);
  CHECK_THAT(out, !Catch::Contains("f[0] = yi"));
}

TEST_CASE("Mins, maxes and lets fold over constant loop ranges", "[unit][ir]") {
  Expr i = v("i"), j = v("j"), n = v("n"), k = v("k");
  auto inLoops = [&](Stmt body) {
    return For::make("i", 0, 2, ForType::Serial, For::make("j", 0, 8, ForType::Serial, body));
  };
  // i * 8 + j is at most 15: min(i * 8 + j, 15) is i * 8 + j, max(i * 8 + j, 16) is 16.
  CHECK(to_string(simplify(inLoops(Store::make("f", min(i * 8 + j, 15), 0)))) ==
        to_string(inLoops(Store::make("f", i * 8 + j, 0))));
  CHECK(to_string(simplify(inLoops(Store::make("f", max(i * 8 + j, 16), 0)))) ==
        to_string(inLoops(Store::make("f", 16, 0))));
  // Neither side always the smaller: the min stays.
  CHECK_THAT(to_string(simplify(inLoops(Store::make("f", min(i * 8 + j, 10), 0)))), Catch::Contains("min("));
  CHECK_THAT(to_string(simplify(inLoops(Store::make("f", min(i * 8 + j, n), 0)))), Catch::Contains("min("));
  // A let (not substituted) bounded by the loops to [0, 7]: a guard it always meets goes; one it
  // does not stays.
  auto guarded = [&](Expr condition) {
    return inLoops(LetStmt::make("k", (i * 8 + j) / 2, IfThenElse::make(condition, Store::make("f", k, k))));
  };
  CHECK_THAT(to_string(simplify(guarded(k <= 7))), !Catch::Contains("if"));
  CHECK_THAT(to_string(simplify(guarded(k <= 6))), Catch::Contains("if"));
}

TEST_CASE("A chain of mins or maxes absorbs an operand it already bounds", "[unit][ir]") {
  Expr x = v("x"), c = v("c") * 8 + v("d");
  // Bounds inference unions one interval a read: three reads of rows c - 1, c, c + 1.
  CHECK(equal(simplify(min(min(min(x, c - 1), c), c + 1)), simplify(min(x, c - 1))));
  CHECK(equal(simplify(max(max(max(x, c + 1), c), c - 1)), simplify(max(x, c + 1))));
  CHECK(equal(simplify(min(c, min(x, c))), simplify(min(x, c))));
  CHECK(equal(simplify(max(max(x, max(v("y"), c)), c)), simplify(max(x, max(v("y"), c)))));
  // Not absorbed: an operand on the other side, or unrelated.
  CHECK_THAT(to_string(simplify(min(min(x, c + 1), c))), Catch::Contains("min(min("));
  CHECK_THAT(to_string(simplify(max(max(x, c - 1), c))), Catch::Contains("max(max("));
  CHECK_THAT(to_string(simplify(min(min(x, c), v("y")))), Catch::Contains("min(min("));
  // Floats keep their chains: with a NaN the order of a chain's operands decides its value.
  Expr f = v("f", Float(32)), g = v("g", Float(32)), h = v("h", Float(32));
  CHECK_THAT(to_string(simplify(min(min(min(f, g), h), g))), Catch::Contains("min(min(min("));
}

TEST_CASE("Common subexpressions worth it become lets, in time linear in the DAG", "[unit][ir]") {
  Expr x = v("x"), f = v("f", Float(32));
  auto load = [&](Expr i) { return Load::make(Float(32), "in", i); };
  // Two separate but equal loads: one let.
  Expr twice = common_subexpression_elimination(load(x) * load(x), "g");
  CHECK(to_string(twice) == "(let g.cse0 = in[x] in (g.cse0 * g.cse0))");
  // Repeated integer arithmetic stays written out.
  Expr index = (x + 1) * (x + 1);
  CHECK(equal(common_subexpression_elimination(index, "g"), index));
  // A DAG 40 levels deep (2^40 paths): each level's value is computed once.
  Expr deep = f;
  for (int i = 0; i < 40; ++i)
    deep = deep * 0.5f + deep * deep;
  Expr e = common_subexpression_elimination(deep, "g");
  int lets = 0;
  for (const Let *let = e.as<Let>(); let; let = let->body.as<Let>())
    ++lets;
  CHECK(lets == 39);
}

TEST_CASE("Substitution respects shadowing", "[unit][ir]") {
  Expr x = v("x");
  Expr e = x + Let::make("x", Expr(2), x * 3);
  CHECK(to_string(substitute("x", Expr(7), e)) == "(7 + (let x = 2 in (x * 3)))");
  CHECK(uses_variable(e, "x"));
  CHECK_FALSE(uses_variable(e, "y"));
}

TEST_CASE("The box a statement touches follows the lets its reads name, shadowed ones too", "[unit][ir]") {
  // for (x, 0, 10): a read at a, with lets of other names (a realization's bounds, a large value)
  // around it, and a name defined twice whose inner definition names an outer let.
  auto read = [](const Expr &at) { return Evaluate::make(Call::make(Float(32), "in", {at}, Call::Image)); };
  Expr large = v("x");
  for (int i = 0; i < 40; ++i)
    large = min(large * 3 + i, v("x") - i);
  auto boxOf = [](const Stmt &s) {
    lower::Box box = lower::box_touched(s, {"in", true, false, nullptr});
    REQUIRE(box.size() == 1);
    return std::make_pair(as_const_int(simplify(box[0].min)), as_const_int(simplify(box[0].max)));
  };
  using Ends = std::pair<std::optional<int64_t>, std::optional<int64_t>>;
  Stmt plain = LetStmt::make("a", v("x") * 2, LetStmt::make("unused", large, read(v("a"))));
  CHECK(boxOf(For::make("x", 0, 10, ForType::Serial, plain)) == Ends(0, 18));
  // a is x * 2 outside and offset + 1 inside, offset = x + 100: the read is at [101, 110].
  Stmt shadowed = LetStmt::make(
      "offset", v("x") + 100,
      LetStmt::make("a", v("x") * 2, LetStmt::make("a", v("offset") + 1, read(v("a")))));
  CHECK(boxOf(For::make("x", 0, 10, ForType::Serial, shadowed)) == Ends(101, 110));
  // A loop's bounds and a guard's condition name lets too: y runs over [n, n + 3], capped at 5.
  Stmt guarded = LetStmt::make(
      "n", Expr(2),
      LetStmt::make("limit", Expr(5),
                    For::make("y", v("n"), 4, ForType::Serial,
                              IfThenElse::make(v("y") <= v("limit"), read(v("y") * 10)))));
  CHECK(boxOf(guarded) == Ends(20, 50));
  // Reads inside a let's value count, whatever the let's name.
  Stmt inValue = For::make("x", 0, 10, ForType::Serial,
                           LetStmt::make("t", Call::make(Float(32), "in", {v("x") - 3}, Call::Image),
                                         Evaluate::make(v("t", Float(32)))));
  CHECK(boxOf(inValue) == Ends(-3, 6));
}

TEST_CASE("The remainder of one value by another is that one value", "[unit][ir]") {
  // A fused loop's variable at one iteration splits back into one value of each dimension
  // (yo = t % extent), so a Func computed at the fused loop covers one tile, not every tile.
  Scope scope{{"x", {Expr(0), Expr(9)}}};
  Interval point = bounds_of_expr_in_scope(v("t") % v("e"), scope);
  REQUIRE(point.is_bounded());
  CHECK(equal(point.min, point.max));
  CHECK(to_string(point.min) == "(t % e)");
  Interval range = bounds_of_expr_in_scope(v("x") % v("e"), scope);
  REQUIRE(range.is_bounded()); // over a range of x: [0, |e| - 1]
  CHECK(as_const_int(range.min) == 0);
  CHECK(to_string(range.max) != "(x % e)");
  Interval constant = bounds_of_expr_in_scope(v("x") % 4, scope);
  CHECK(as_const_int(constant.max) == 3);
}

TEST_CASE("Interval arithmetic bounds masks, shifts and complements", "[unit][ir]") {
  Scope scope{{"x", {Expr(0), Expr(9)}}, {"y", {Expr(-2), Expr(3)}}};
  using Ends = std::pair<std::optional<int64_t>, std::optional<int64_t>>;
  auto bounds = [&](const Expr &e) -> Ends {
    Interval i = bounds_of_expr_in_scope(e, scope);
    return {as_const_int(simplify(i.min)), as_const_int(simplify(i.max))};
  };
  CHECK(bounds(v("x") & 4) == Ends(0, 4));
  CHECK(bounds(v("q") & v("x")) == Ends(0, 9)); // a non-negative operand bounds any other
  CHECK(bounds(v("x") | 4) == Ends(0, 15));
  CHECK(bounds(v("x") ^ v("x")) == Ends(0, 15));
  CHECK(bounds(v("y") >> 1) == Ends(-1, 1));
  CHECK(bounds(v("y") << 3) == Ends(-16, 24));
  CHECK(bounds(~v("y")) == Ends(-4, 1));
  // A reinterpreted value is bounded by its type only (narrow) or not at all.
  CHECK(bounds(reinterpret<uint16_t>(cast<int16_t>(v("x")))) == Ends(0, 65535));
  CHECK_FALSE(bounds_of_expr_in_scope(reinterpret<int32_t>(cast<float>(v("x"))), scope).is_bounded());
  // A signed shift by the width less one: 2^(bits - 1) is no value of the type, so no division.
  for (Type t : {Int(8), Int(16), Int(32)}) {
    INFO(to_string(t));
    Expr amount = make_const(t, int64_t(t.bits - 1));
    CHECK(bounds(Call::make(t, Call::ShiftRight, {cast(t, v("y") - 12), amount}, Call::Intrinsic)) == Ends(-1, -1));
    CHECK(bounds(Call::make(t, Call::ShiftRight, {cast(t, v("y")), amount}, Call::Intrinsic)) == Ends(-1, 0));
  }
  CHECK(bounds(cast<uint8_t>(v("x") + 200) >> cast<uint8_t>(7)) == Ends(1, 1));
  // Unknown: a mask of negative values, a shift by a variable amount.
  CHECK_FALSE(bounds_of_expr_in_scope(v("y") & v("q"), scope).is_bounded());
  CHECK_FALSE(bounds_of_expr_in_scope(v("x") << v("y"), scope).is_bounded());
}

TEST_CASE("Bitwise operators and shifts of constants fold as they compute", "[unit][ir]") {
  auto folded = [](Type t, const std::string &name, int64_t a, int64_t b) -> std::optional<int64_t> {
    std::vector<Expr> args = {make_const(t, a)};
    if (name != Call::BitwiseNot)
      args.push_back(make_const(t, b));
    return as_const_int(simplify(Call::make(t, name, args, Call::Intrinsic)));
  };
  CHECK(folded(Int(8), Call::ShiftRight, -10, 7) == -1);
  CHECK(folded(Int(8), Call::ShiftRight, -10, 9) == -1);
  CHECK(folded(Int(8), Call::ShiftRight, 3, -2) == 12);
  CHECK(folded(Int(8), Call::ShiftLeft, 3, 6) == -64);
  CHECK(folded(Int(8), Call::ShiftLeft, 3, 8) == 0);
  CHECK(folded(Int(8), Call::ShiftLeft, -64, -128) == -1); // the magnitude of -128 is past the width
  CHECK(folded(Int(16), Call::ShiftLeft, -5, -1) == -3);
  CHECK(folded(UInt(8), Call::ShiftRight, 200, 7) == 1);
  CHECK(folded(UInt(8), Call::ShiftRight, 200, 200) == 0);
  CHECK(folded(UInt(8), Call::ShiftLeft, 200, 1) == 144);
  CHECK(folded(UInt(16), Call::BitwiseNot, 1, 0) == 65534);
  CHECK(folded(Int(32), Call::BitwiseNot, 5, 0) == -6);
  CHECK(folded(Int(32), Call::BitwiseAnd, -6, 12) == 8);
  CHECK(folded(UInt(32), Call::BitwiseOr, 0x80000000ll, 1) == 0x80000001ll);
  CHECK(folded(Int(64), Call::BitwiseXor, -1, 5) == -6);
  CHECK(folded(Int(64), Call::ShiftRight, INT64_MIN, 63) == -1);
  CHECK(folded(Int(64), Call::ShiftLeft, 1, INT64_MIN) == 0);
}

TEST_CASE("Interval arithmetic bounds expressions", "[unit][ir]") {
  Scope scope{{"x", {Expr(0), Expr(9)}}, {"y", {Expr(-2), Expr(3)}}};
  auto bounds = [&](const Expr &e) {
    Interval i = bounds_of_expr_in_scope(e, scope);
    return std::make_pair(as_const_int(simplify(i.min)), as_const_int(simplify(i.max)));
  };
  CHECK(bounds(v("x") * 2 - v("y")) == std::make_pair(std::optional<int64_t>(-3), std::optional<int64_t>(20)));
  CHECK(bounds(clamp(v("x") * 100, 5, 17)) == std::make_pair(std::optional<int64_t>(5), std::optional<int64_t>(17)));
  CHECK(bounds(v("x") % 4) == std::make_pair(std::optional<int64_t>(0), std::optional<int64_t>(3)));
  CHECK(bounds(v("x") / 2) == std::make_pair(std::optional<int64_t>(0), std::optional<int64_t>(4)));
  CHECK(bounds(cast<int>(Load::make(UInt(8), "in", v("x")))) ==
        std::make_pair(std::optional<int64_t>(0), std::optional<int64_t>(255)));
  CHECK_FALSE(bounds_of_expr_in_scope(Load::make(Int(32), "in", v("x")), scope).is_bounded());
  Interval symbolic = bounds_of_expr_in_scope(v("x") + v("n"), scope);
  CHECK(to_string(simplify(symbolic.max)) == "(n + 9)");
  // Euclidean modulus by a symbolic or unbounded divisor: [0, |w| - 1], and 0 when w is 0.
  Scope wide{{"i", {v("lo"), v("hi")}}};
  Interval byWidth = bounds_of_expr_in_scope(v("i") % v("w"), wide);
  REQUIRE(byWidth.is_bounded());
  CHECK(is_const_zero(byWidth.min));
  CHECK(to_string(byWidth.max) == "max((max(w, (0 - w)) - 1), 0)");
  CHECK(bounds(v("x") % 0) == std::make_pair(std::optional<int64_t>(0), std::optional<int64_t>(0)));
  CHECK(bounds(v("y") % v("n")).first == std::optional<int64_t>(0));
  // Over a range of divisors the result stays unbounded, so a clamp around it stays constant.
  CHECK_FALSE(bounds_of_expr_in_scope(v("x") % v("y"), scope).is_bounded());
}

TEST_CASE("Interval arithmetic bounds floats cast to integers and divisions by a fixed divisor", "[unit][ir]") {
  auto constBounds = [](const Expr &e, const Scope &scope) {
    Interval i = bounds_of_expr_in_scope(e, scope);
    return std::make_pair(i.min.defined() ? as_const_int(simplify(i.min)) : std::nullopt,
                          i.max.defined() ? as_const_int(simplify(i.max)) : std::nullopt);
  };
  using Ends = std::pair<std::optional<int64_t>, std::optional<int64_t>>;
  Scope floats{{"f", Interval::everything()}, {"u", {Expr(0.0f), Expr(1.0f)}}};
  // A float clamped and scaled, cast: truncation toward zero, exact at integral ends.
  Expr clamped = clamp(v("f", Float(32)), Expr(0.0f), Expr(1.0f));
  CHECK(constBounds(cast<int>(clamped * 255.0f), floats) == Ends(0, 255));
  CHECK(constBounds(cast<int>(clamped * 10.0f + 0.5f), floats) == Ends(0, 10));
  CHECK(constBounds(cast<uint8_t>(clamped * 255.0f + 0.5f), floats) == Ends(0, 255));
  CHECK(constBounds(cast<int>(v("u", Float(32)) * -3.5f), floats) == Ends(-3, 0));
  // An end a few units in the last place below an integer may be that integer when computed
  // with other rounding: the bound includes it.
  CHECK(constBounds(cast<int>(v("u", Float(32)) * std::nextafter(3.0f, 0.0f)), floats) == Ends(0, 3));
  // Ends past a narrow type's range leave the type's bounds; past int32's, clamp to it.
  CHECK(constBounds(cast<int8_t>(clamped * 1000.0f), floats) == Ends(-128, 127));
  CHECK(constBounds(cast<int>(clamped * 1e12f), floats) == Ends(0, 2147483647));
  CHECK_FALSE(bounds_of_expr_in_scope(cast<int>(v("f", Float(32))), floats).is_bounded());
  // Symbolic ends (a Param) cast as they are, to int32.
  Interval scaled = bounds_of_expr_in_scope(cast<int>(clamped * (1.0f / v("sigma", Float(32)))), floats);
  REQUIRE(scaled.is_bounded());
  CHECK(to_string(scaled.max).find("sigma") != std::string::npos);
  // A fixed divisor of unknown sign: the quotients of the ends, ordered either way.
  Scope ints{{"x", {Expr(0), Expr(59)}}};
  Interval quotient = bounds_of_expr_in_scope(v("x") / v("k"), ints);
  REQUIRE(quotient.is_bounded());
  CHECK(to_string(quotient.max) == "max((0 / k), (59 / k))");
  CHECK_FALSE(bounds_of_expr_in_scope(v("x") / v("x"), ints).is_bounded());
  CHECK_FALSE(bounds_of_expr_in_scope(cast<int8_t>(v("x")) / v("q", Int(8)), ints).is_bounded());
}

TEST_CASE("Constant upper bounds see through clipped tiles", "[unit][ir]") {
  Expr x = v("x"), end = v("end");
  CHECK(constant_upper_bound(min(x + 33, end) - x + 1) == std::optional<int64_t>(34));
  CHECK(constant_upper_bound(v("i") * 4 + 3, {{"i", {Expr(0), Expr(7)}}}) == std::optional<int64_t>(31));
  CHECK_FALSE(constant_upper_bound(x + end).has_value());
  // A loop over a clipped tile 4 rows at a time: (min(end - x + 3, 35)) / 4 is at most 8.
  CHECK(constant_upper_bound(min(end - x * 32 + 3, 35) / 4) == std::optional<int64_t>(8));
  CHECK(constant_upper_bound(min(end - x, 9) * 4) == std::optional<int64_t>(36));
  CHECK_FALSE(constant_upper_bound(min(end - x, 9) * -4).has_value());
  // simplify() itself keeps the sum whole, so terms that cancel still cancel.
  CHECK(to_string(simplify(x + (min(x + 33, end) - x))) == "min((x + 33), end)");
}

TEST_CASE("Constant upper bounds of a window that slides through a tail shifted inward", "[unit][ir]") {
  // A strip's row m = min(2 * i, 14), clipped at the image's end: rows [b + m - 1, min(b + m + 1, end) + 1].
  Expr b = v("b"), end = v("end"), m = min(v("i") * 2, 14);
  CHECK(constant_upper_bound((min(b + m + 1, end) + 1) - (b + m - 1)) == std::optional<int64_t>(3));
}

TEST_CASE("Constant upper bounds of the rows upsamplings read, level after level", "[unit][ir]") {
  // Row y of a clamped output reads rows [(y - 1) / 2, (min(y, end) + 1) / 2] of the level below,
  // which reads [(r - 1) / 2, (r + 1) / 2] of the next for each of those rows r.
  Expr y = v("y"), end = v("end");
  auto up = [](const Expr &lo, const Expr &hi) { return std::make_pair(min((lo + 1) / 2, (lo - 1) / 2), max((hi + 1) / 2, (hi - 1) / 2)); };
  CHECK(constant_upper_bound((y + 1) / 2 - (y - 1) / 2) == std::optional<int64_t>(1));
  auto [lo1, hi1] = up(y, min(y, end));
  CHECK(constant_upper_bound(hi1 - lo1) == std::optional<int64_t>(1));
  auto [lo2, hi2] = up(lo1, hi1);
  CHECK(constant_upper_bound(hi2 - lo2) == std::optional<int64_t>(2));
  auto [lo3, hi3] = up(lo2, hi2);
  CHECK(constant_upper_bound(hi3 - lo3) == std::optional<int64_t>(2));
  // Quotients by different divisors stay unbounded, and so do differences of wrapping types: in
  // uint8, min(u + 1, 7) - u is 253 where u is 10, not min(1, 7 - u).
  CHECK_FALSE(constant_upper_bound((y + 1) / 2 - (y - 1) / 3).has_value());
  Expr u = v("u", UInt(8));
  CHECK_FALSE(structural_upper_bound(min(u + cast(UInt(8), Expr(1)), cast(UInt(8), Expr(7))) - u).has_value());
}

TEST_CASE("Casts and right shifts of unbounded 32-bit values are bounded by the operand's range", "[unit][ir]") {
  Expr p = v("p", UInt(32));
  Interval shifted = bounds_of_expr_in_scope(cast<int>(p >> 28), {});
  CHECK(as_const_int(shifted.min) == std::optional<int64_t>(0));
  CHECK(as_const_int(shifted.max) == std::optional<int64_t>(15));
  Interval byte = bounds_of_expr_in_scope((p ^ (p >> 3)) >> 24, {});
  CHECK(as_const_int(byte.max) == std::optional<int64_t>(255));
  CHECK_FALSE(bounds_of_expr_in_scope(cast<int>(p), {}).is_bounded());
}

TEST_CASE("is_monotonic follows sums, scaled terms, mins, maxes and selects on other conditions", "[unit][ir]") {
  Expr i = v("i"), n = v("n");
  CHECK(is_monotonic(n * 3 + 1, "i") == Monotonic::Constant);
  CHECK(is_monotonic(min(i * 2, 14) + n, "i") == Monotonic::Increasing);
  CHECK(is_monotonic(max(n - i * 4, 0) / 2, "i") == Monotonic::Decreasing);
  CHECK(is_monotonic(select(n > 0, i, n), "i") == Monotonic::Increasing);
  CHECK(is_monotonic(select(i > 0, i, n), "i") == Monotonic::Unknown);
  CHECK(is_monotonic(i - min(i, n), "i") == Monotonic::Unknown);
  CHECK(is_monotonic(i * n, "i") == Monotonic::Unknown);
  CHECK(is_monotonic(i / -2, "i") == Monotonic::Decreasing);
  // Narrow integers wrap: no direction.
  CHECK(is_monotonic(cast<uint8_t>(i) + cast<uint8_t>(1), "i") == Monotonic::Unknown);
}

TEST_CASE("Bounding a sum of many mins and maxes takes polynomial time", "[unit][ir]") {
  // The extent of storage read at many offsets: max(...) - min(...) + 1 over 12 reads each.
  Expr x = v("x"), y = v("y");
  Expr hi = x + 11, lo = y;
  for (int k = 0; k < 12; ++k) {
    hi = max(hi, min(x + k * 3, y + 40));
    lo = min(lo, max(y - k, x - 7));
  }
  Expr extent = min(hi - lo + 1, 64) + min(hi, y + 3) - min(lo, x);
  auto start = std::chrono::steady_clock::now();
  std::optional<int64_t> bound = constant_upper_bound(extent);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(seconds < 2.0);
  CHECK_FALSE(bound.has_value()); // x and y are unbounded, so no constant bounds the last terms
  CHECK(constant_upper_bound(min(hi - lo + 1, 64)) == std::optional<int64_t>(64));
  // The case pushing exists for: the extent of a tile clipped at the end of an image.
  CHECK(constant_upper_bound(min(x + 33, y) - x) == std::optional<int64_t>(33));
}

TEST_CASE("Division and remainder by a symbolic value computed apart at each end bound one value", "[unit][ir]") {
  // A fused loop's variable split back by an extent computed from a buffer's size: the extent's
  // ends are equal expressions built apart, and the part is still one value.
  Expr t = v("t"), tiles = (v("w") + 31) / 32;
  for (Expr part : {min(max(t % tiles, 0), tiles - 1), min(max(t / tiles, 0), v("n") - 1)}) {
    INFO(to_string(part));
    Interval point = bounds_of_expr_in_scope(part, {});
    REQUIRE(point.is_bounded());
    CHECK(equal(simplify(point.min), simplify(point.max)));
    CHECK(equal(simplify(point.min), simplify(part)));
  }
  // Over a range of t, not one value.
  Scope loop;
  loop["t"] = {Expr(0), Expr(9)};
  Interval range = bounds_of_expr_in_scope(t % tiles, loop);
  CHECK_FALSE((range.is_bounded() && equal(simplify(range.min), simplify(range.max))));
}

TEST_CASE("Narrow integer constants fold; narrow sums are not assumed not to wrap", "[unit][ir]") {
  Expr a = v("a", Int(16)), c = v("c");
  auto i16 = [](int k) { return cast(Int(16), Expr(k)); };
  CHECK(equal(simplify(min(min(a, i16(3)), i16(-2))), simplify(min(a, i16(-2)))));
  CHECK(is_const_one(simplify(i16(-7) < i16(5))));
  CHECK_FALSE(is_const(simplify(a + i16(1) > a)));   // false where a is 32767
  CHECK(is_const_one(simplify(c + 1 > c)));           // int32 overflow is undefined
  Interval wrapped = bounds_of_expr_in_scope(cast(UInt(8), v("u", UInt(8)) + cast(UInt(8), Expr(1))), {});
  CHECK(as_const_int(wrapped.min) == std::optional<int64_t>(0));
  CHECK(as_const_int(wrapped.max) == std::optional<int64_t>(255));
}

TEST_CASE("Bounds of signed 32-bit arithmetic clamp to the type instead of wrapping", "[unit][ir]") {
  // A product of three int16 values spans [-2^45, 2^45]: folded in int32 its ends wrap to
  // nonsense, and a comparison over a loop was then "proved" (seed 30018 of the GPU fuzzer).
  Expr a = cast<int>(v("a", Int(16))), b = cast<int>(v("b", Int(16))), c = cast<int>(v("c", Int(16)));
  const Interval int16Range{make_const(Int(16), int64_t(-32768)), make_const(Int(16), int64_t(32767))};
  const Scope scope = {{"a", int16Range}, {"b", int16Range}, {"c", int16Range}};
  Interval product = bounds_of_expr_in_scope(a * b * c, scope);
  REQUIRE(product.is_bounded());
  CHECK(as_const_int(product.min) == std::optional<int64_t>(INT32_MIN));
  CHECK(as_const_int(product.max) == std::optional<int64_t>(INT32_MAX));
  Interval sum = bounds_of_expr_in_scope(a * 65536 + b * 65536, scope);
  CHECK(as_const_int(sum.min) == std::optional<int64_t>(INT32_MIN));
  CHECK(as_const_int(sum.max) == std::optional<int64_t>(INT32_MAX));
  Interval small = bounds_of_expr_in_scope(a * b - c, scope);
  CHECK(as_const_int(small.min) == std::optional<int64_t>(-32768 * 32767 - 32767));
  CHECK(as_const_int(small.max) == std::optional<int64_t>(32768 * 32768 + 32768));
  // Inside a loop of constant bounds, a comparison of loaded values stays.
  Expr t = v("t");
  auto load = [&](int k) { return cast<int>(Load::make(Int(16), "in", t + k)); };
  Stmt loop = For::make("t", make_zero(Int(32)), make_const(Int(32), int64_t(4)), ForType::Serial,
                        Store::make("out", select(load(0) * load(1) * load(2) < load(3), 1, 2), t));
  std::string printed = to_string(simplify(loop));
  CHECK_THAT(printed, Catch::Contains("select("));
}

TEST_CASE("Bounds of a product by a wide type's range saturate instead of wrapping at run time", "[unit][ir]") {
  // int32(u16) * max(int32(u16), x): the ends multiply 65535 by a symbolic bound, which in int32
  // wraps to a negative maximum at run time (fuzzer seed 4002798: an update's write bound, too
  // small, let it write past its storage).
  Expr ua = cast<int>(v("ua", UInt(16))), ub = cast<int>(v("ub", UInt(16))), x = v("x"), n = v("n");
  const Interval u16Range{make_const(UInt(16), int64_t(0)), make_const(UInt(16), int64_t(65535))};
  const Scope scope = {{"ua", u16Range}, {"ub", u16Range}, {"x", {make_zero(Int(32)), n}}};
  Interval product = bounds_of_expr_in_scope(ua * max(ub, x), scope);
  REQUIRE(product.is_bounded());
  Expr maxAtFive = simplify(substitute("n", make_const(Int(32), int64_t(5)), product.max));
  CHECK(as_const_int(maxAtFive) == std::optional<int64_t>(INT32_MAX));
  Expr maxAtLarge = simplify(substitute("n", make_const(Int(32), int64_t(100000)), product.max));
  CHECK(as_const_int(maxAtLarge) == std::optional<int64_t>(INT32_MAX));
  Expr minAtFive = simplify(substitute("n", make_const(Int(32), int64_t(5)), product.min));
  CHECK(as_const_int(minAtFive) == std::optional<int64_t>(0));
}
