#include "Simplify.h"

#include "Constants.h"
#include "IREquality.h"
#include "IRMutator.h"
#include "IRVisitor.h"
#include "Interval.h"
#include "Substitute.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <map>
#include <set>

namespace ptxjit::ir {
namespace {

// Integer arithmetic modulo 2^64, which the types' own (modulo 2^bits) follows; int64_t
// arithmetic that overflows would be undefined.
int64_t wrappingAdd(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b)); }
int64_t wrappingMul(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b)); }
int64_t wrappingNeg(int64_t a) { return static_cast<int64_t>(0 - static_cast<uint64_t>(a)); }

// Euclidean division: the remainder is never negative; x / 0 and x % 0 are 0.
int64_t euclideanDiv(int64_t a, int64_t b) {
  if (b == 0)
    return 0;
  if (b == -1)
    return wrappingNeg(a); // avoids INT64_MIN / -1
  int64_t q = a / b, r = a % b;
  if (r < 0)
    q += b > 0 ? -1 : 1;
  return q;
}

int64_t euclideanMod(int64_t a, int64_t b) {
  if (b == 0 || b == -1 || b == 1)
    return 0;
  int64_t r = a % b;
  return r < 0 ? r + (b < 0 ? -b : b) : r;
}

bool isNoOp(const Stmt &s) {
  if (!s.defined())
    return true;
  const auto *e = s.as<Evaluate>();
  return e && is_const(e->value);
}

// A sum of terms with integer coefficients plus a constant, for integer scalars. Wrapping
// arithmetic is a ring, so reassociating and cancelling terms is exact.
struct LinearForm {
  std::vector<std::pair<Expr, int64_t>> Terms;
  int64_t Constant = 0;

private:
  /// Structural hashes of Terms once there are more than ComparedTerms: a sum of few terms is
  /// searched by comparing trees, which stops at their first difference; a long one by hash, so
  /// that adding its terms stays linear in their size.
  static constexpr size_t ComparedTerms = 8;
  std::vector<uint64_t> TermHashes;

public:
  void add(const Expr &e, int64_t scale) {
    if (auto c = as_const_int(e)) {
      Constant = wrappingAdd(Constant, wrappingMul(scale, *c));
    } else if (const auto *op = e.as<Add>()) {
      add(op->a, scale);
      add(op->b, scale);
    } else if (const auto *op = e.as<Sub>()) {
      add(op->a, scale);
      add(op->b, wrappingNeg(scale));
    } else if (const auto *op = e.as<Mul>(); op && as_const_int(op->b)) {
      add(op->a, wrappingMul(scale, *as_const_int(op->b)));
    } else if (const auto *op = e.as<Mul>(); op && as_const_int(op->a)) {
      add(op->b, wrappingMul(scale, *as_const_int(op->a)));
    } else {
      addTerm(e, scale);
    }
  }

  void addTerm(const Expr &e, int64_t scale) {
    if (Terms.size() < ComparedTerms) {
      for (auto &[term, coefficient] : Terms)
        if (equal(term, e)) {
          coefficient = wrappingAdd(coefficient, scale);
          return;
        }
      Terms.emplace_back(e, scale);
      return;
    }
    for (size_t i = TermHashes.size(); i < Terms.size(); ++i)
      TermHashes.push_back(structural_hash(Terms[i].first));
    const uint64_t hash = structural_hash(e);
    for (size_t i = 0; i < Terms.size(); ++i)
      if (TermHashes[i] == hash && equal(Terms[i].first, e)) {
        Terms[i].second = wrappingAdd(Terms[i].second, scale);
        return;
      }
    Terms.emplace_back(e, scale);
    TermHashes.push_back(hash);
  }

  // Terms with negative coefficients are subtracted and a negative constant too, except where
  // the magnitude is no value of the type (-INT32_MIN): x - (-2^31) would overflow where
  // x + (-2^31) does not, and signed 32- and 64-bit arithmetic is compiled as never overflowing.
  Expr build(Type t) const {
    auto negatable = [&](int64_t v) {
      return !t.is_int() || t.bits < 32 || (v != INT64_MIN && -v <= t.max_int());
    };
    Expr positive, negative;
    for (const auto &[term, coefficient] : Terms) {
      if (coefficient == 0)
        continue;
      const bool subtracted = coefficient < 0 && negatable(coefficient);
      const int64_t factor = subtracted ? -coefficient : coefficient;
      Expr scaled = factor == 1 ? term : Mul::make(term, make_const(t, factor));
      Expr &side = subtracted ? negative : positive;
      side = side.defined() ? Add::make(side, scaled) : scaled;
    }
    Expr result = positive;
    if (negative.defined())
      result = result.defined() ? Sub::make(result, negative) : Sub::make(make_zero(t), negative);
    if (!result.defined())
      return make_const(t, Constant);
    if (Constant < 0 && negatable(Constant))
      result = Sub::make(result, make_const(t, -Constant));
    else if (Constant != 0)
      result = Add::make(result, make_const(t, Constant));
    return result;
  }
};

bool isLinearInt(Type t) { return t.is_scalar() && (t.is_int() || t.is_uint()); }

// A let's value, the variables it names, and how many names were bound around it when it was
// recorded.
struct LetValue {
  Expr value;
  std::set<std::string> names;
  size_t depth = 0;
};

class Simplifier : public IRMutator {
public:
  explicit Simplifier(bool pushIntoMinMax = false) : PushIntoMinMax(pushIntoMinMax) {}
  using IRMutator::mutate;

  // A sum's operands that are sums themselves are part of it: they are pushed into mins and
  // maxes only as the whole sum, after its terms have cancelled (pushing (max - min) first would
  // keep min + (max - min) from becoming max).
  Expr mutate(const Expr &e) override {
    const auto *mul = e.defined() ? e.as<Mul>() : nullptr;
    const bool scaled = mul && (as_const_int(mul->a) || as_const_int(mul->b));
    const bool partOfSum = e.defined() && (e.as<Add>() || e.as<Sub>() || scaled);
    const bool saved = InSum;
    InSum = InSum && partOfSum;
    Expr result = IRMutator::mutate(e);
    InSum = saved;
    return result;
  }

private:
  std::map<std::string, Expr> LetReplacements;
  // The values of the integer lets that stay, where their names mean them (see cancelThroughLets).
  std::map<std::string, LetValue> LetValues;
  // How many names are bound around the code being simplified, and where each name was bound
  // (innermost last): a let's value holds where none of the names in it was bound again since.
  size_t BindingDepth = 0;
  std::map<std::string, std::vector<size_t>> BoundAt;

  // The value of the let `term` names, where it stays and still means that value here.
  const Expr *letValue(const Expr &term) const {
    const auto *v = term.as<Variable>();
    auto it = v ? LetValues.find(v->name) : LetValues.end();
    if (it == LetValues.end())
      return nullptr;
    for (const std::string &name : it->second.names) {
      auto bound = BoundAt.find(name);
      if (bound != BoundAt.end() && !bound->second.empty() && bound->second.back() >= it->second.depth)
        return nullptr;
    }
    return &it->second.value;
  }

  // `e` with the lets it names written out, through lets in their values, a few levels deep; an
  // undefined Expr where that passes MaxExpandedLetNodes nodes. The budget is spent as it is
  // written: lets that each name the one before twice would write out 2^depth copies (a pyramid
  // of upsampled and downsampled stages).
  Expr expandLets(const Expr &e) {
    int budget = MaxExpandedLetNodes;
    Expr expanded = expandLets(e, 0, budget);
    return budget < 0 ? Expr() : expanded;
  }
  Expr expandLets(const Expr &e, int depth, int &budget) {
    class Expander : public IRMutator {
    public:
      Expander(Simplifier &s, int depth, int &budget) : S(s), Depth(depth), Budget(budget) {}
      Expr mutate(const Expr &e) override { return --Budget < 0 ? e : IRMutator::mutate(e); }

    private:
      Simplifier &S;
      int Depth;
      int &Budget;
      using IRMutator::visit;
      Expr visit(const Variable *op) override {
        const Expr *value = Depth < 8 ? S.letValue(Expr(op)) : nullptr;
        return value ? S.expandLets(*value, Depth + 1, Budget) : Expr(op);
      }
    };
    return Expander(*this, depth, budget).mutate(e);
  }
  // The ranges of the loop variables around the code being simplified, where constant, and of
  // the integer lets whose values those ranges bound to constants: a comparison that holds (or
  // fails) over a whole range folds, such as the guard xi * 8 + 7 <= 255 of a vectorized loop
  // over xi in [0, 31], and so does a min or max one side of which is always the smaller. Lets
  // and loops of the same name shadow them.
  Scope LoopBounds;
  // Off in simplify(): pushing sums inside min/max helps bound an expression but can split
  // terms that would otherwise cancel, as in x + (min(x + 33, end) - x).
  bool PushIntoMinMax;
  // Whether the node being simplified is an operand of an enclosing sum (see mutate).
  bool InSum = false;

  using IRMutator::visit;

  Expr visit(const Variable *op) override {
    auto it = LetReplacements.find(op->name);
    return it == LetReplacements.end() || !it->second.defined() ? Expr(op) : it->second;
  }

  Expr visit(const Cast *op) override {
    Expr value = mutate(op->value);
    Type t = op->type;
    if (value.type() == t)
      return value;
    if (t.is_scalar()) {
      if (auto i = as_const_int(value); i && !value.type().is_float()) {
        if (t.is_float())
          return make_const(t, double(*i));
        if (t.is_bool())
          return make_bool(*i != 0);
        return make_const(t, *i);
      }
      if (auto f = as_const_float(value)) {
        if (t.is_bool())
          return make_bool(*f != 0.0);
        if (t.is_float())
          return make_const(t, *f);
        if (std::isfinite(*f) && std::fabs(*f) < 9.2e18)
          return make_const(t, static_cast<int64_t>(*f));
      }
    }
    return value.same_as(op->value) ? Expr(op) : Cast::make(t, value);
  }

  static size_t nonZeroTerms(const LinearForm &form) {
    return std::count_if(form.Terms.begin(), form.Terms.end(), [](const auto &t) { return t.second != 0; });
  }

  // Lets that stay (a tile's clipped min, say) and lets written in terms of the same value (its
  // max, that min plus 3) cancel once their values are written out: the difference is the
  // tile's constant extent. Taken only where terms cancel, so sums do not grow.
  void cancelThroughLets(LinearForm &form) {
    auto valueOf = [&](const Expr &term) { return letValue(term); };
    if (std::none_of(form.Terms.begin(), form.Terms.end(), [&](const auto &t) { return t.second != 0 && valueOf(t.first); }))
      return;
    LinearForm expanded;
    expanded.Constant = form.Constant;
    for (const auto &[term, coefficient] : form.Terms)
      if (coefficient != 0) {
        const Expr *value = valueOf(term);
        expanded.add(value ? *value : term, coefficient);
      }
    if (nonZeroTerms(expanded) < nonZeroTerms(form)) {
      form = std::move(expanded);
      return;
    }
    // Deeper: a clipped tile's min written through other lets (x = xo * 4 + c, xo = ...) on one
    // side, and written out on the other. Tried only where a let or a min or max is added and
    // another subtracted, as in a tile's max - min, so that plain indices (x - f.min.0) pay nothing.
    auto clipped = [&](const Expr &term) { return valueOf(term) || term.as<Min>() || term.as<Max>(); };
    bool added = false, subtracted = false;
    for (const auto &[term, coefficient] : form.Terms)
      if (coefficient != 0 && clipped(term))
        (coefficient > 0 ? added : subtracted) = true;
    if (!added || !subtracted)
      return;
    LinearForm deep;
    deep.Constant = form.Constant;
    for (const auto &[term, coefficient] : form.Terms) {
      if (coefficient == 0)
        continue;
      Expr e = expandLets(term);
      if (!e.defined())
        return;
      deep.add(e.same_as(term) ? e : mutate(e), coefficient);
    }
    if (nonZeroTerms(deep) < nonZeroTerms(form))
      form = std::move(deep);
  }

  Expr linear(const Expr &original, const Expr &a, const Expr &b, int64_t bScale) {
    LinearForm form;
    form.add(a, 1);
    form.add(b, bScale);
    if (!InSum && original.type().is_int() && original.type().bits >= 32)
      cancelThroughLets(form);
    if (Expr pushed = PushIntoMinMax && !InSum ? pushIntoMinMax(form, original.type()) : Expr(); pushed.defined())
      return pushed;
    return form.build(original.type());
  }

  // k * min(p, q) + rest is min(k * p + rest, k * q + rest) for k > 0 and the max for k < 0:
  // worth it when an operand then loses terms, as min(x + 33, end) - x becomes min(33, end - x),
  // the extent of a tile clipped at the end of an image, and 2 * min(o + 1, n) - 2 * o becomes
  // min(2, 2 * n - 2 * o), whose bounds no longer count o twice. A rest holding one more min or
  // max is pushed too where that one is a term of an operand, so that it can cancel
  // (min(b + m + 1, end) - (b + m) with m = min(2 * i, 14), a tail shifted inward, becomes
  // min(1, end - b - m)); never more, and only MaxPushDepth deep: each push simplifies both
  // operands, so nested pushes take time exponential in their depth.
  static constexpr int MaxPushDepth = 4;
  int PushDepth = 0;

  static size_t termCount(const Expr &e) {
    LinearForm form;
    form.add(e, 1);
    size_t n = 0;
    for (const auto &[term, coefficient] : form.Terms)
      n += coefficient != 0;
    return n;
  }

  // Whether the min or max among `rest`'s terms is a term of `operand`'s sum.
  static bool restMinMaxIsTermOf(const LinearForm &rest, const Expr &operand) {
    LinearForm terms;
    terms.add(operand, 1);
    for (const auto &[term, coefficient] : rest.Terms) {
      if (coefficient == 0 || (!term.as<Min>() && !term.as<Max>()))
        continue;
      for (const auto &[candidate, c] : terms.Terms)
        if (c != 0 && equal(candidate, term))
          return true;
    }
    return false;
  }

  Expr pushIntoMinMax(const LinearForm &form, Type t) {
    if (PushDepth >= MaxPushDepth || !t.is_int() || t.bits < 32)
      return Expr(); // narrower types wrap: min(p, q) - r need not be min(p - r, q - r)
    int minMaxTerms = 0;
    for (const auto &[term, coefficient] : form.Terms)
      minMaxTerms += coefficient != 0 && (term.as<Min>() || term.as<Max>());
    if (minMaxTerms < 1 || minMaxTerms > 2)
      return Expr();
    for (size_t i = 0; i < form.Terms.size(); ++i) {
      const auto &[term, coefficient] = form.Terms[i];
      const auto *mn = term.as<Min>();
      const auto *mx = term.as<Max>();
      if (coefficient == 0 || (!mn && !mx))
        continue;
      LinearForm rest;
      rest.Constant = form.Constant;
      for (size_t j = 0; j < form.Terms.size(); ++j)
        if (j != i && form.Terms[j].second != 0)
          rest.add(form.Terms[j].first, form.Terms[j].second);
      if (rest.Terms.empty() && coefficient == 1)
        continue;
      const Expr &a = mn ? mn->a : mx->a, &b = mn ? mn->b : mx->b;
      if (minMaxTerms == 2 && !restMinMaxIsTermOf(rest, a) && !restMinMaxIsTermOf(rest, b))
        continue;
      Expr restExpr = rest.build(t), scale = make_const(t, coefficient);
      ++PushDepth;
      Expr p = mutate(Add::make(Mul::make(a, scale), restExpr));
      Expr q = mutate(Add::make(Mul::make(b, scale), restExpr));
      --PushDepth;
      const size_t restTerms = termCount(restExpr);
      if (termCount(p) < termCount(a) + restTerms || termCount(q) < termCount(b) + restTerms) {
        const bool isMin = (mn != nullptr) == (coefficient > 0);
        return mutate(isMin ? Min::make(p, q) : Max::make(p, q));
      }
    }
    return Expr();
  }

  // The operands of a sum, simplified as parts of it.
  std::pair<Expr, Expr> sumOperands(const Expr &a, const Expr &b) {
    const bool saved = InSum;
    InSum = true;
    std::pair<Expr, Expr> result{mutate(a), mutate(b)};
    InSum = saved;
    return result;
  }

  Expr visit(const Add *op) override {
    auto [a, b] = sumOperands(op->a, op->b);
    if (isLinearInt(op->type))
      return linear(Expr(op), a, b, 1);
    auto fa = as_const_float(a), fb = as_const_float(b);
    if (fa && fb && op->type.is_scalar())
      return make_const(op->type, *fa + *fb);
    // Only -0 is an identity of float addition: -0 + +0 is +0.
    if (fb && *fb == 0.0 && std::signbit(*fb))
      return a;
    if (fa && *fa == 0.0 && std::signbit(*fa))
      return b;
    return a.same_as(op->a) && b.same_as(op->b) ? Expr(op) : Add::make(a, b);
  }

  Expr visit(const Sub *op) override {
    auto [a, b] = sumOperands(op->a, op->b);
    if (isLinearInt(op->type))
      return linear(Expr(op), a, b, -1);
    auto fa = as_const_float(a), fb = as_const_float(b);
    if (fa && fb && op->type.is_scalar())
      return make_const(op->type, *fa - *fb);
    if (fb && *fb == 0.0 && !std::signbit(*fb)) // x - (-0) is x + 0: not x for x = -0
      return a;
    return a.same_as(op->a) && b.same_as(op->b) ? Expr(op) : Sub::make(a, b);
  }

  Expr visit(const Mul *op) override {
    const bool scaled = isLinearInt(op->type) && (as_const_int(op->a) || as_const_int(op->b));
    auto [a, b] = scaled ? sumOperands(op->a, op->b) : std::pair<Expr, Expr>{mutate(op->a), mutate(op->b)};
    if (isLinearInt(op->type) && (as_const_int(a) || as_const_int(b))) {
      LinearForm form;
      if (auto c = as_const_int(b))
        form.add(a, *c);
      else
        form.add(b, *as_const_int(a));
      return form.build(op->type);
    }
    auto fa = as_const_float(a), fb = as_const_float(b);
    if (fa && fb && op->type.is_scalar())
      return make_const(op->type, *fa * *fb);
    if (is_const_one(b))
      return a;
    if (is_const_one(a))
      return b;
    if (!op->type.is_float() && (is_const_zero(a) || is_const_zero(b)))
      return make_zero(op->type);
    return a.same_as(op->a) && b.same_as(op->b) ? Expr(op) : Mul::make(a, b);
  }

  Expr visit(const Div *op) override {
    Expr a = mutate(op->a), b = mutate(op->b);
    Type t = op->type;
    if (t.is_scalar() && !t.is_float()) {
      auto ca = as_const_int(a), cb = as_const_int(b);
      if (ca && cb && t.is_int())
        return make_const(t, euclideanDiv(*ca, *cb));
      if (ca && cb)
        return make_const(t, *cb == 0 ? int64_t(0) : int64_t(uint64_t(*ca) / uint64_t(*cb)));
      if (cb && *cb == 0)
        return make_zero(t);
    }
    if (t.is_float() && t.is_scalar()) {
      auto fa = as_const_float(a), fb = as_const_float(b);
      if (fa && fb)
        return make_const(t, *fa / *fb);
    }
    if (is_const_one(b))
      return a;
    return a.same_as(op->a) && b.same_as(op->b) ? Expr(op) : Div::make(a, b);
  }

  Expr visit(const Mod *op) override {
    Expr a = mutate(op->a), b = mutate(op->b);
    Type t = op->type;
    if (t.is_scalar() && !t.is_float()) {
      auto ca = as_const_int(a), cb = as_const_int(b);
      if (ca && cb)
        return make_const(t, t.is_int() ? euclideanMod(*ca, *cb) : (*cb ? int64_t(uint64_t(*ca) % uint64_t(*cb)) : 0));
      if (cb && (*cb == 1 || *cb == 0))
        return make_zero(t);
    }
    if (t.is_float() && t.is_scalar()) {
      auto fa = as_const_float(a), fb = as_const_float(b);
      if (fa && fb && *fb != 0.0)
        return make_const(t, *fa - *fb * std::floor(*fa / *fb));
    }
    return a.same_as(op->a) && b.same_as(op->b) ? Expr(op) : Mod::make(a, b);
  }

  // The constant value of a - b for signed integer scalars, when the difference folds. Types
  // narrower than 32 bits wrap, so there x + 1 need not exceed x: only a difference of 0 counts.
  std::optional<int64_t> constantDifference(const Expr &a, const Expr &b) {
    if (!isLinearInt(a.type()) || !a.type().is_int())
      return std::nullopt;
    if (auto ca = as_const_int(a), cb = as_const_int(b); ca && cb) {
      int64_t difference; // exact at any width, but of 64-bit extremes
      if (__builtin_sub_overflow(*ca, *cb, &difference))
        return std::nullopt;
      return difference;
    }
    LinearForm form;
    form.add(a, 1);
    form.add(b, -1);
    for (const auto &term : form.Terms)
      if (term.second != 0)
        return std::nullopt;
    if (a.type().bits < 32 && form.Constant != 0)
      return std::nullopt;
    return form.Constant;
  }

  // Whether a and b are equal, or one names a let (that stays) of the other's value.
  bool equalThroughLets(const Expr &a, const Expr &b) {
    const Expr *va = letValue(a), *vb = letValue(b);
    return equal(a, b) || (va && equal(*va, b)) || (vb && equal(a, *vb)) || (va && vb && equal(*va, *vb));
  }

  // constantDifference, also where lets that stay cancel once written out (cancelThroughLets).
  std::optional<int64_t> constantDifferenceThroughLets(const Expr &a, const Expr &b) {
    if (auto d = constantDifference(a, b))
      return d;
    if (!isLinearInt(a.type()) || !a.type().is_int() || a.type().bits < 32 || (!letValue(a) && !letValue(b)))
      return std::nullopt;
    LinearForm form;
    form.add(a, 1);
    form.add(b, -1);
    cancelThroughLets(form);
    return nonZeroTerms(form) == 0 ? std::optional<int64_t>(form.Constant) : std::nullopt;
  }

  // Whether an operand of the chain of Nodes (mins, or maxes) `chain` is, a few levels deep, is
  // `e` or known to be on e's side of it (below it in a chain of mins): then the chain absorbs e.
  template <typename Node> bool absorbs(const Expr &chain, const Expr &e, bool isMin, int depth) {
    const auto *node = chain.as<Node>();
    if (!node || depth > 8)
      return false;
    for (const Expr &operand : {node->a, node->b}) {
      if (equal(operand, e) || absorbs<Node>(operand, e, isMin, depth + 1))
        return true;
      if (auto d = operand.as<Node>() ? std::nullopt : constantDifference(operand, e); d && (isMin ? *d <= 0 : *d >= 0))
        return true;
    }
    return false;
  }

  template <typename Node> Expr minOrMax(const Node *op, bool isMin) {
    Expr a = mutate(op->a), b = mutate(op->b);
    if (equalThroughLets(a, b))
      return a;
    // An operand a chain absorbs adds nothing: bounds inference unions the interval of each read
    // (min(min(min(x, c - 1), c), c + 1) for three reads of one column).
    // Not for floats: with a NaN, the order of a chain's operands decides which value comes out.
    if (!op->type.is_float() && absorbs<Node>(a, b, isMin, 0))
      return a;
    if (!op->type.is_float() && absorbs<Node>(b, a, isMin, 0))
      return b;
    if (auto d = constantDifferenceThroughLets(a, b))
      return (*d <= 0) == isMin ? a : b;
    Type t = op->type;
    if (t.is_scalar()) {
      if (t.is_float()) {
        auto fa = as_const_float(a), fb = as_const_float(b);
        // As the min or max computes at run time (a < b ? a : b), signed zeros and NaN included.
        if (fa && fb)
          return (isMin ? *fa < *fb : *fa > *fb) ? a : b;
      } else if (t.code == Type::UInt) {
        auto ca = as_const_int(a), cb = as_const_int(b);
        if (ca && cb)
          return (uint64_t(*ca) <= uint64_t(*cb)) == isMin ? a : b;
      }
    }
    if (auto aFirst = orderOverLoopBounds(a, b))
      return *aFirst == isMin ? a : b;
    // Constants go on the right, and nested constants combine: min(min(x, 3), 5) is min(x, 3).
    // A float min is a < b ? a : b, whose operands do not commute (min(+0, -0) is -0, min(1, NaN)
    // is NaN, and the other way round +0 and 1).
    if (is_const(a) && !is_const(b) && !t.is_float())
      std::swap(a, b);
    if (const auto *inner = a.as<Node>(); inner && is_const(inner->b) && is_const(b))
      return mutate(Node::make(inner->a, Node::make(inner->b, b)));
    return a.same_as(op->a) && b.same_as(op->b) ? Expr(op) : Node::make(a, b);
  }

  // The constant range of signed integer `e` over LoopBounds, where `e` uses one of them (a
  // 64-bit `e` must not wrap: the difference of two 32-bit values, say).
  std::optional<std::pair<int64_t, int64_t>> constantRangeOverLoopBounds(const Expr &e) {
    if (LoopBounds.empty() || !e.type().is_int() || !e.type().is_scalar() ||
        std::none_of(LoopBounds.begin(), LoopBounds.end(), [&](const auto &b) { return uses_variable(e, b.first); }))
      return std::nullopt;
    Interval range = bounds_of_expr_in_scope(e, LoopBounds);
    // The ends use no loop variable: simplifying them does not come back here.
    Expr lo = range.min.defined() ? mutate(range.min) : Expr(), hi = range.max.defined() ? mutate(range.max) : Expr();
    auto l = lo.defined() ? as_const_int(lo) : std::nullopt, h = hi.defined() ? as_const_int(hi) : std::nullopt;
    if (!l || !h)
      return std::nullopt;
    return std::pair{*l, *h};
  }

  // a - b (both simplified) in 64 bits, where it cannot wrap. Terms a and b share cancel first: signed 32- and
  // 64-bit arithmetic is compiled as never overflowing, so (x + t) - (y + t) is x - y there, and
  // t's bounds are not counted twice. Narrower types wrap: their operands are widened whole.
  Expr wideDifference(const Expr &a, const Expr &b) {
    const Type t = a.type(), wide = Int(64, t.lanes);
    if (!t.is_int() || t.bits < 32)
      return mutate(Sub::make(Cast::make(wide, a), Cast::make(wide, b)));
    LinearForm form, widened;
    form.add(a, 1);
    form.add(b, -1);
    for (const auto &[term, coefficient] : form.Terms)
      if (coefficient != 0)
        widened.add(term.type() == wide ? term : Cast::make(wide, term), coefficient);
    widened.Constant = form.Constant;
    return widened.build(wide); // a and b are simplified already: only their terms are left
  }

  // Whether a <= b over all of LoopBounds (true), b < a over all of it (false), or neither known.
  std::optional<bool> orderOverLoopBounds(const Expr &a, const Expr &b) {
    if (!a.type().is_int() || !a.type().is_scalar() || a.type().bits > 32)
      return std::nullopt;
    auto range = constantRangeOverLoopBounds(wideDifference(a, b));
    if (!range)
      return std::nullopt;
    if (range->second <= 0)
      return true;
    if (range->first > 0)
      return false;
    return std::nullopt;
  }

  Expr visit(const Min *op) override { return minOrMax(op, true); }
  Expr visit(const Max *op) override { return minOrMax(op, false); }

  // Whether cmp(a - b, 0) holds for every value the loop variables give a - b (true), for none
  // (false), or depends. Ordering comparisons only need the ends of the range.
  template <typename Compare> std::optional<bool> overLoopBounds(const Expr &a, const Expr &b, bool ordering, Compare cmp) {
    if (LoopBounds.empty() || !a.type().is_int() || a.type().bits > 32)
      return std::nullopt;
    // The difference in 64 bits: in the operands' type it may wrap (x - INT_MIN, or any narrow one).
    Interval range = bounds_of_expr_in_scope(wideDifference(a, b), LoopBounds);
    auto constant = [&](const Expr &e, int64_t *out) {
      Expr folded = e.defined() ? mutate(e) : Expr();
      const auto *c = folded.defined() ? folded.as<IntImm>() : nullptr;
      if (c)
        *out = c->value;
      return c != nullptr;
    };
    int64_t lo = 0, hi = 0;
    if (!constant(range.min, &lo) || !constant(range.max, &hi) || (!ordering && lo != hi))
      return std::nullopt;
    bool atLo = cmp(lo, int64_t(0)), atHi = cmp(hi, int64_t(0));
    return atLo == atHi ? std::optional<bool>(atLo) : std::nullopt;
  }

  // Folds comparisons of constants and of integer expressions whose difference is constant, or
  // of one sign over the loops' ranges.
  template <typename Node, typename Compare> Expr compare(const Node *op, Compare cmp, bool ordering = true) {
    Expr a = mutate(op->a), b = mutate(op->b);
    if (op->type.is_scalar()) {
      if (auto d = constantDifferenceThroughLets(a, b))
        return make_bool(cmp(*d, int64_t(0)));
      if (auto holds = overLoopBounds(a, b, ordering, cmp))
        return make_bool(*holds);
      Type t = a.type();
      if (t.is_float()) {
        auto fa = as_const_float(a), fb = as_const_float(b);
        if (fa && fb)
          return make_bool(cmp(*fa, *fb));
      } else if (t.code == Type::UInt) {
        auto ca = as_const_int(a), cb = as_const_int(b);
        if (ca && cb)
          return make_bool(cmp(uint64_t(*ca), uint64_t(*cb)));
      }
    }
    return a.same_as(op->a) && b.same_as(op->b) ? Expr(op) : Node::make(a, b);
  }

  Expr visit(const EQ *op) override { return compare(op, [](auto x, auto y) { return x == y; }, false); }
  Expr visit(const NE *op) override { return compare(op, [](auto x, auto y) { return x != y; }, false); }
  Expr visit(const LT *op) override { return compare(op, [](auto x, auto y) { return x < y; }); }
  Expr visit(const LE *op) override { return compare(op, [](auto x, auto y) { return x <= y; }); }
  Expr visit(const GT *op) override { return compare(op, [](auto x, auto y) { return x > y; }); }
  Expr visit(const GE *op) override { return compare(op, [](auto x, auto y) { return x >= y; }); }

  Expr visit(const And *op) override {
    Expr a = mutate(op->a), b = mutate(op->b);
    if (is_const_one(a))
      return b;
    if (is_const_one(b))
      return a;
    if (is_const_zero(a) || is_const_zero(b))
      return make_bool(false, op->type.lanes);
    if (equal(a, b))
      return a;
    return a.same_as(op->a) && b.same_as(op->b) ? Expr(op) : And::make(a, b);
  }

  Expr visit(const Or *op) override {
    Expr a = mutate(op->a), b = mutate(op->b);
    if (is_const_zero(a))
      return b;
    if (is_const_zero(b))
      return a;
    if (is_const_one(a) || is_const_one(b))
      return make_bool(true, op->type.lanes);
    if (equal(a, b))
      return a;
    return a.same_as(op->a) && b.same_as(op->b) ? Expr(op) : Or::make(a, b);
  }

  Expr visit(const Not *op) override {
    Expr a = mutate(op->a);
    if (is_const(a))
      return make_bool(is_const_zero(a), op->type.lanes);
    if (const auto *inner = a.as<Not>())
      return inner->a;
    return a.same_as(op->a) ? Expr(op) : Not::make(a);
  }

  Expr visit(const Select *op) override {
    Expr c = mutate(op->condition), t = mutate(op->true_value), f = mutate(op->false_value);
    if (is_const_one(c))
      return t;
    if (is_const_zero(c))
      return f;
    if (equal(t, f))
      return t;
    if (c.same_as(op->condition) && t.same_as(op->true_value) && f.same_as(op->false_value))
      return Expr(op);
    return Select::make(c, t, f);
  }

  Expr visit(const Ramp *op) override {
    Expr base = mutate(op->base), stride = mutate(op->stride);
    if (is_const_zero(stride))
      return Broadcast::make(base, op->lanes);
    if (base.same_as(op->base) && stride.same_as(op->stride))
      return Expr(op);
    return Ramp::make(base, stride, op->lanes);
  }

  Expr visit(const Call *op) override {
    Expr result = IRMutator::visit(op);
    const auto *call = result.as<Call>();
    if (call && call->call_type == Call::Intrinsic && (call->type.is_int() || call->type.is_uint()) &&
        !call->args.empty() && call->args.size() <= 2) {
      auto a = as_const_int(call->args[0]);
      auto b = call->args.size() == 2 ? as_const_int(call->args[1]) : std::optional<int64_t>(0);
      if (a && b)
        if (auto folded = fold_bitwise(call->name, call->type, *a, *b))
          return *folded;
    }
    if (call && call->call_type == Call::PureExtern && call->args.size() == 1 && call->type.is_scalar()) {
      if (auto x = as_const_float(call->args[0])) {
        static const std::map<std::string, double (*)(double)> folds = {
            {"sqrt", [](double v) { return std::sqrt(v); }},   {"exp", [](double v) { return std::exp(v); }},
            {"log", [](double v) { return std::log(v); }},     {"sin", [](double v) { return std::sin(v); }},
            {"cos", [](double v) { return std::cos(v); }},     {"tanh", [](double v) { return std::tanh(v); }},
            {"floor", [](double v) { return std::floor(v); }}, {"ceil", [](double v) { return std::ceil(v); }},
            {"round", [](double v) { return std::nearbyint(v); }}, {"trunc", [](double v) { return std::trunc(v); }},
            {"fabs", [](double v) { return std::fabs(v); }},   {"tan", [](double v) { return std::tan(v); }},
            {"asin", [](double v) { return std::asin(v); }},   {"acos", [](double v) { return std::acos(v); }},
            {"atan", [](double v) { return std::atan(v); }},   {"sinh", [](double v) { return std::sinh(v); }},
            {"cosh", [](double v) { return std::cosh(v); }},   {"asinh", [](double v) { return std::asinh(v); }},
            {"acosh", [](double v) { return std::acosh(v); }}, {"atanh", [](double v) { return std::atanh(v); }},
            {"erf", [](double v) { return std::erf(v); }}};
        if (auto it = folds.find(call->name); it != folds.end())
          return make_const(call->type, it->second(*x));
      }
    }
    return result;
  }

  // A sum of a few variables with constant coefficients, such as a tile's origin x * 64 + xi * 4:
  // substituted, such lets cancel in the differences bounds take (a tile's max - min + 1 is its
  // constant extent), and repeating them costs a few integer operations that code generation
  // shares again.
  static bool isShortLinearSum(const Expr &e) {
    constexpr size_t MaxTerms = 4;
    if (!e.type().is_int() || !e.type().is_scalar() || e.type().bits < 32 || !(e.as<Add>() || e.as<Sub>() || e.as<Mul>()))
      return false;
    LinearForm form;
    form.add(e, 1);
    return form.Terms.size() <= MaxTerms &&
           std::all_of(form.Terms.begin(), form.Terms.end(), [](const auto &t) { return t.first.template as<Variable>(); });
  }

  // Lets bound to constants, plain variables or short linear sums of variables are substituted;
  // others stay when used.
  template <typename LetNode, typename Body, typename Make>
  Body let(const LetNode *op, const Body &body, Make make) {
    Expr value = mutate(op->value);
    if (const auto *v = value.as<Variable>(); v && v->name == op->name)
      return mutate(body); // let x = x
    const bool linear = isShortLinearSum(value);
    if (linear && uses_variable(value, op->name)) {
      // let x = x * 8 + xi (a split whose outer loop keeps the name): renamed, the let
      // substitutes like any other, and a use that remains cannot mean the outer x.
      std::string fresh;
      for (int n = 0; fresh.empty() || uses_variable(body, fresh) || uses_variable(value, fresh); ++n)
        fresh = op->name + ".v" + std::to_string(n);
      Body renamed = make(fresh, value, substitute(op->name, Variable::make(value.type(), fresh), body));
      return let(renamed.template as<LetNode>(), renamed.template as<LetNode>()->body, make);
    }
    bool substitutable = is_const(value) || value.as<Variable>() || value.as<UIntImm>() || linear;
    std::optional<Interval> bounds;
    if (!substitutable && value.type().bits <= 32)
      if (auto range = constantRangeOverLoopBounds(value))
        bounds = Interval{make_const(value.type(), range->first), make_const(value.type(), range->second)};
    Body newBody = binding(op->name, bounds, [&] {
      LetReplacements[op->name] = substitutable ? value : Expr();
      // Not a value that names the let itself (let x = min(x * 8, e) + xi): inside, x is the let.
      if (!substitutable && value.type().is_int() && value.type().is_scalar() && value.type().bits >= 32 &&
          !uses_variable(value, op->name))
        LetValues[op->name] = {value, variable_names(value), BindingDepth};
      return mutate(body);
    });
    // Uses remain where a let inside rebinds what the replacement names: the let stays for them.
    if (!uses_variable(newBody, op->name))
      return newBody;
    if (value.same_as(op->value) && newBody.same_as(body))
      return Body(op);
    return make(op->name, value, newBody);
  }

  // Runs `work` where `name` is bound anew (by a let or a loop, ranging over `bounds` when
  // known): what referred to an outer `name` no longer applies inside.
  template <typename Work> auto binding(const std::string &name, std::optional<Interval> bounds, Work work) {
    std::map<std::string, Expr> savedReplacements = LetReplacements;
    Scope savedBounds = LoopBounds;
    for (auto it = LetReplacements.begin(); it != LetReplacements.end();)
      it = it->second.defined() && uses_variable(it->second, name) ? LetReplacements.erase(it) : std::next(it);
    auto outerValue = LetValues.extract(name);
    BoundAt[name].push_back(BindingDepth++);
    LetReplacements[name] = Expr();
    if (bounds)
      LoopBounds[name] = *bounds;
    else
      LoopBounds.erase(name);
    auto result = work();
    --BindingDepth;
    if (auto at = BoundAt.find(name); at->second.size() == 1)
      BoundAt.erase(at);
    else
      at->second.pop_back();
    LetValues.erase(name);
    if (outerValue)
      LetValues.insert(std::move(outerValue));
    LetReplacements = std::move(savedReplacements);
    LoopBounds = std::move(savedBounds);
    return result;
  }

  Expr visit(const Let *op) override { return let(op, op->body, Let::make); }
  Stmt visit(const LetStmt *op) override { return let(op, op->body, LetStmt::make); }

  Stmt visit(const AssertStmt *op) override {
    Stmt s = IRMutator::visit(op);
    if (const auto *a = s.as<AssertStmt>(); a && is_const_one(a->condition))
      return Evaluate::make(make_zero(Int(32)));
    return s;
  }

  Stmt visit(const For *op) override {
    Expr min = mutate(op->min), extent = mutate(op->extent);
    if (auto e = as_const_int(extent); e && *e <= 0)
      return Evaluate::make(make_zero(Int(32)));
    // A GPU loop of one iteration stays: it is what makes a kernel (a block loop) or a block.
    if (is_const_one(extent) && op->for_type != ForType::Parallel && !is_gpu(op->for_type))
      return mutate(LetStmt::make(op->name, min, op->body));
    std::optional<Interval> bounds;
    if (auto lo = as_const_int(min), n = as_const_int(extent); lo && n)
      bounds = Interval{make_const(min.type(), *lo), make_const(min.type(), *lo + *n - 1)};
    Stmt body = binding(op->name, bounds, [&] { return mutate(op->body); });
    if (isNoOp(body))
      return body;
    if (min.same_as(op->min) && extent.same_as(op->extent) && body.same_as(op->body))
      return Stmt(op);
    return For::make(op->name, min, extent, op->for_type, body);
  }

  Stmt visit(const Block *op) override {
    Stmt first = mutate(op->first), rest = mutate(op->rest);
    if (isNoOp(first))
      return rest;
    if (isNoOp(rest))
      return first;
    return first.same_as(op->first) && rest.same_as(op->rest) ? Stmt(op) : Block::make(first, rest);
  }

  Stmt visit(const IfThenElse *op) override {
    Expr condition = mutate(op->condition);
    if (is_const_one(condition))
      return mutate(op->then_case);
    if (is_const_zero(condition))
      return op->else_case.defined() ? mutate(op->else_case) : Evaluate::make(make_zero(Int(32)));
    Stmt then_case = mutate(op->then_case), else_case = mutate(op->else_case);
    if (isNoOp(else_case))
      else_case = Stmt();
    if (isNoOp(then_case) && !else_case.defined())
      return then_case;
    if (condition.same_as(op->condition) && then_case.same_as(op->then_case) && else_case.same_as(op->else_case))
      return Stmt(op);
    return IfThenElse::make(condition, then_case, else_case);
  }

  Stmt visit(const ProducerConsumer *op) override {
    Stmt body = mutate(op->body);
    return body.same_as(op->body) ? Stmt(op) : ProducerConsumer::make(op->name, op->is_producer, body);
  }
};

} // namespace

Expr simplify(const Expr &e) { return Simplifier().mutate(e); }
Stmt simplify(const Stmt &s) { return Simplifier().mutate(s); }
Expr simplify_for_bounds(const Expr &e) { return Simplifier(true).mutate(e); }
bool can_prove(const Expr &e) { return is_const_one(simplify(e)); }

namespace {

std::optional<int64_t> upperBound(const Expr &e, int depth);

// The larger of two bounds where both exist (a max), the smaller of those that exist (a min).
std::optional<int64_t> boundOfMax(std::optional<int64_t> a, std::optional<int64_t> b) {
  return a && b ? std::optional<int64_t>(std::max(*a, *b)) : std::nullopt;
}
std::optional<int64_t> boundOfMin(std::optional<int64_t> a, std::optional<int64_t> b) {
  return a && b ? std::min(*a, *b) : a ? a : b;
}

// max(p, q) - b as max(p - b, q - b), a - min(r, s) as max(a - r, a - s), and alike for the
// other two; undefined where neither side is a min or max.
Expr splitDifference(const Sub *op) {
  if (const auto *m = op->a.as<Max>())
    return Max::make(Sub::make(m->a, op->b), Sub::make(m->b, op->b));
  if (const auto *m = op->a.as<Min>())
    return Min::make(Sub::make(m->a, op->b), Sub::make(m->b, op->b));
  if (const auto *m = op->b.as<Min>())
    return Max::make(Sub::make(op->a, m->a), Sub::make(op->a, m->b));
  if (const auto *m = op->b.as<Max>())
    return Min::make(Sub::make(op->a, m->a), Sub::make(op->a, m->b));
  return Expr();
}

// A difference whose right side is not a constant: split (see splitDifference) and each part
// simplified for bounds, where terms may cancel; x / k - y / k (k a positive constant) is at most
// ceil((x - y) / k), where x - y, simplified, may cancel: the rows an upsampling reads, (y + 1) /
// 2 - (y - 1) / 2, are at most 1 apart.
std::optional<int64_t> differenceBound(const Sub *op, int depth) {
  if (depth <= 0 || !op->type.is_int() || op->type.bits < 32)
    return std::nullopt; // narrower types wrap: max(p, q) - b need not be max(p - b, q - b)
  // Simplified as for bounds: min(y, e) - y becomes min(e - y, 0), bounded without a level more.
  auto part = [&](const Expr &e) { return upperBound(simplify_for_bounds(e), depth - 1); };
  if (Expr split = splitDifference(op); split.defined()) {
    if (const auto *m = split.as<Max>())
      return boundOfMax(part(m->a), part(m->b));
    const auto *m = split.as<Min>();
    return boundOfMin(part(m->a), part(m->b));
  }
  const auto *x = op->a.as<Div>(), *y = op->b.as<Div>();
  if (x && y) {
    auto k = as_const_int(x->b);
    if (k && *k > 0 && as_const_int(y->b) == k)
      if (auto numerator = part(Sub::make(x->a, y->a)))
        return euclideanDiv(*numerator + *k - 1, *k);
  }
  return std::nullopt;
}

// structural_upper_bound, taking differences apart at most `depth` levels deep (each level
// doubles the work).
std::optional<int64_t> upperBound(const Expr &e, int depth) {
  if (auto c = as_const_int(e))
    return c;
  if (const auto *m = e.as<Min>())
    return boundOfMin(upperBound(m->a, depth), upperBound(m->b, depth));
  if (const auto *m = e.as<Max>())
    return boundOfMax(upperBound(m->a, depth), upperBound(m->b, depth));
  if (const auto *add = e.as<Add>()) {
    auto a = upperBound(add->a, depth), b = upperBound(add->b, depth);
    return a && b ? std::optional<int64_t>(*a + *b) : std::nullopt;
  }
  if (const auto *sub = e.as<Sub>()) {
    if (auto b = as_const_int(sub->b)) {
      auto a = upperBound(sub->a, depth);
      return a ? std::optional<int64_t>(*a - *b) : std::nullopt;
    }
    return differenceBound(sub, depth);
  }
  // Integer division and multiplication by a positive constant keep the order.
  if (const auto *div = e.as<Div>(); div && !e.type().is_float()) {
    auto a = upperBound(div->a, depth), b = as_const_int(div->b);
    return a && b && *b > 0 ? std::optional<int64_t>(euclideanDiv(*a, *b)) : std::nullopt;
  }
  if (const auto *mul = e.as<Mul>(); mul && !e.type().is_float()) {
    auto a = upperBound(mul->a, depth), b = as_const_int(mul->b);
    int64_t product = 0;
    return a && b && *b > 0 && !__builtin_mul_overflow(*a, *b, &product) ? std::optional<int64_t>(product)
                                                                          : std::nullopt;
  }
  return std::nullopt;
}

} // namespace

// Three levels of an upsampling's pyramid: a max, a min and a quotient each.
std::optional<int64_t> structural_upper_bound(const Expr &e) { return upperBound(e, 9); }

Expr split_differences(const Expr &e, int depth) {
  if (depth <= 0 || !e.type().is_int() || e.type().bits < 32)
    return e; // narrower types wrap: max(p, q) - b need not be max(p - b, q - b)
  if (const auto *add = e.as<Add>(); add && is_const(add->b))
    return Add::make(split_differences(add->a, depth), add->b);
  if (const auto *m = e.as<Max>())
    return Max::make(split_differences(m->a, depth), split_differences(m->b, depth));
  if (const auto *m = e.as<Min>())
    return Min::make(split_differences(m->a, depth), split_differences(m->b, depth));
  const auto *sub = e.as<Sub>();
  Expr split = sub ? splitDifference(sub) : Expr();
  if (!split.defined())
    return e;
  auto part = [&](const Expr &p) { return split_differences(simplify_for_bounds(p), depth - 1); };
  if (const auto *m = split.as<Max>())
    return Max::make(part(m->a), part(m->b));
  const auto *m = split.as<Min>();
  return Min::make(part(m->a), part(m->b));
}

std::optional<int64_t> constant_upper_bound(const Expr &e, const Scope &scope) {
  for (bool push : {false, true}) {
    Expr max = bounds_of_expr_in_scope(Simplifier(push).mutate(e), scope).max;
    if (auto c = max.defined() ? structural_upper_bound(Simplifier(push).mutate(max)) : std::nullopt)
      return c;
  }
  return std::nullopt;
}

} // namespace ptxjit::ir
