#include "RandomPipeline.h"

#include "DiskCache.h"
#include "ptxjit.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>

namespace ptxjit::fuzz {

namespace {

// ---- Types ----

bool isFloat(Scalar t) { return t == Scalar::F32; }
bool isSigned(Scalar t) { return t == Scalar::I8 || t == Scalar::I16 || t == Scalar::I32; }
int bitsOf(Scalar t) {
  switch (t) {
  case Scalar::I8:
  case Scalar::U8:
    return 8;
  case Scalar::I16:
  case Scalar::U16:
    return 16;
  default:
    return 32;
  }
}
Type typeOf(Scalar t) { return isFloat(t) ? Float(32) : isSigned(t) ? Int(bitsOf(t)) : UInt(bitsOf(t)); }
const char *nameOf(Scalar t) {
  static const char *names[] = {"int8_t", "int16_t", "int32_t", "uint8_t", "uint16_t", "uint32_t", "float"};
  return names[static_cast<int>(t)];
}
constexpr Scalar AllScalars[] = {Scalar::I8, Scalar::I16, Scalar::I32, Scalar::U8, Scalar::U16, Scalar::U32, Scalar::F32};

// The reference gives up on a description whose meaning is undefined or inexact (see the header).
struct Discard {};

// A value of the reference: integers as int64_t within their type's range, floats as doubles that
// are exactly floats. For a signed 32-bit value, `magnitude` bounds every regrouping of the sums
// and products that computed it (zero: |i|): the compiler regroups them, as Halide's simplifier
// does (`(a + 5) + b` as `(a + b) + 5`), so each regrouping must not overflow either.
struct Value {
  int64_t i = 0;
  double f = 0;
  uint64_t magnitude = 0;
};

uint64_t magnitudeOf(const Value &v) {
  return std::max(v.magnitude, v.i < 0 ? uint64_t(0) - uint64_t(v.i) : uint64_t(v.i));
}

Value intValue(Scalar t, __int128 v, uint64_t magnitude = 0) {
  const int bits = bitsOf(t);
  if (t == Scalar::I32) {
    if (v < INT32_MIN || v > INT32_MAX || magnitude > uint64_t(INT32_MAX))
      throw Discard{}; // signed 32-bit overflow is undefined
    return {static_cast<int64_t>(v), 0, magnitude};
  }
  uint64_t mask = (uint64_t(1) << bits) - 1;
  uint64_t u = static_cast<uint64_t>(v) & mask;
  if (isSigned(t) && (u >> (bits - 1)))
    return {static_cast<int64_t>(u) - (int64_t(1) << bits), 0};
  return {static_cast<int64_t>(u), 0};
}

// Two's complement wrap-around to t, for every integer type (shifts never overflow).
Value wrapped(Scalar t, uint64_t v) {
  const int bits = bitsOf(t);
  uint64_t u = v & ((uint64_t(1) << bits) - 1);
  if (isSigned(t) && (u >> (bits - 1)))
    return {static_cast<int64_t>(u) - (int64_t(1) << bits), 0};
  return {static_cast<int64_t>(u), 0};
}

Value floatValue(double d) {
  if (!(std::fabs(d) <= 1048576.0) || static_cast<double>(static_cast<float>(d)) != d)
    throw Discard{}; // too large, or rounded: compilers may round differently
  return {0, d};
}

// A Tuple update's conversion of its first value to the second's type: a float is clamped first,
// to [-25, 25] for a signed type and [0, 25] for an unsigned one, so that it converts.
constexpr double TupleClamp = 25.0;
double tupleClampLow(Scalar to) { return isSigned(to) ? -TupleClamp : 0.0; }
Value converted(Scalar to, Scalar from, const Value &v) {
  if (isFloat(to))
    return floatValue(isFloat(from) ? v.f : static_cast<double>(v.i));
  if (isFloat(from))
    return intValue(to, static_cast<int64_t>(std::trunc(std::clamp(v.f, tupleClampLow(to), TupleClamp))));
  return intValue(to, v.i);
}

int64_t euclidDiv(int64_t a, int64_t b) {
  if (b == 0)
    return 0;
  int64_t q = a / b, r = a % b;
  if (r < 0)
    q += b > 0 ? -1 : 1;
  return q;
}
int64_t euclidMod(int64_t a, int64_t b) {
  if (b == 0)
    return 0;
  int64_t r = a % b;
  return r < 0 ? r + (b < 0 ? -b : b) : r;
}

// ---- Boxes ----

struct Interval {
  int64_t min = INT64_MAX, max = INT64_MIN;
  bool empty() const { return min > max; }
  void include(int64_t lo, int64_t hi) {
    min = std::min(min, lo);
    max = std::max(max, hi);
  }
};
using Box = std::vector<Interval>;

// ---- Generation ----

class Generator {
public:
  Generator(uint64_t seed, bool gpu) : Rng(seed) { P.seed = seed; P.gpu = gpu; }

  PipelineDesc generate() {
    P.dims = pick({1, 2, 2, 3});
    P.inputType = pickScalar();
    P.boundary = P.gpu ? pick({1, 2, 3, 4, 5}) : pick({0, 0, 1, 2, 3, 4, 5});
    const int maxExtent = P.dims == 1 ? 40 : P.dims == 2 ? 14 : 7;
    for (int d = 0; d < P.dims; ++d) {
      P.outputMin.push_back(uniform(-4, 4));
      P.outputExtent.push_back(chance(0.1) ? 1 : uniform(1, maxExtent));
      P.inputMin.push_back(uniform(-3, 3));
      P.inputExtent.push_back(uniform(1, 12));
    }
    P.boundOutput = chance(0.15);
    const int count = uniform(1, 8);
    for (int i = 0; i < count; ++i) {
      FuncDesc f;
      f.type = pickScalar();
      Current = i;
      f.value = node(f.type, 3, false, P.dims, -1);
      if (chance(0.2)) {
        f.tuple = true;
        f.secondType = pickScalar();
        f.second = node(f.secondType, 2, false, P.dims, -1);
      }
      f.update = update(f.type, i);
      P.funcs.push_back(std::move(f));
    }
    fitOutputUpdate();
    placeAndSchedule();
    return P;
  }

private:
  std::mt19937_64 Rng;
  PipelineDesc P;
  int Current = 0;

  int uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(Rng); }
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(Rng) < p; }
  template <typename T> T pick(std::initializer_list<T> options) {
    return *(options.begin() + uniform(0, static_cast<int>(options.size()) - 1));
  }
  Scalar pickScalar() { return AllScalars[uniform(0, 6)]; }

  Node constant(Scalar t) {
    Node n;
    n.kind = Node::Const;
    n.type = t;
    n.value = isSigned(t) || isFloat(t) ? uniform(-9, 9) : uniform(0, 9);
    return n;
  }

  Node cast(Scalar t, Node value) {
    if (value.type == t)
      return value;
    Node n;
    n.kind = Node::Cast;
    n.type = t;
    if (isFloat(value.type) && !isFloat(t)) {
      // Only floats known to fit convert: out of range, the conversion is undefined.
      Node c;
      c.kind = Node::Clamp;
      c.type = value.type;
      c.value = isSigned(t) ? -100 : 0;
      c.high = 100;
      c.children.push_back(std::move(value));
      value = std::move(c);
    }
    n.children.push_back(std::move(value));
    return n;
  }

  // A read of the input or an earlier Func at small offsets; `rdim` >= 0 adds the RVar there.
  Node read(Scalar t, int rdim) {
    Node n;
    bool func = Current > 0 && chance(0.7);
    n.kind = func ? Node::Call : Node::Input;
    n.func = func ? uniform(0, Current - 1) : -1;
    n.valueIndex = func && P.funcs[n.func].tuple && chance(0.5) ? 1 : 0;
    n.type = !func ? P.inputType : n.valueIndex ? P.funcs[n.func].secondType : P.funcs[n.func].type;
    for (int d = 0; d < P.dims; ++d) {
      n.offsets.push_back(chance(0.5) ? 0 : uniform(-2, 2));
      n.plusR.push_back(d == rdim);
    }
    return cast(t, std::move(n));
  }

  Node node(Scalar t, int depth, bool reduction, int coords, int rdim) {
    if (depth == 0 || chance(0.2)) {
      double p = std::uniform_real_distribution<double>(0, 1)(Rng);
      if (p < 0.6)
        return read(t, reduction ? rdim : -1);
      if (p < 0.8) {
        Node c;
        c.kind = Node::Coord;
        c.type = Scalar::I32;
        c.dim = uniform(0, coords - 1);
        return cast(t, std::move(c));
      }
      return constant(t);
    }
    Node n;
    n.type = t;
    int op = uniform(0, isFloat(t) ? 10 : 13);
    auto child = [&](Scalar ct) { return node(ct, depth - 1, reduction, coords, rdim); };
    if (op == 13) {
      // Bit counts, and division rounding toward zero.
      static const Node::Kind bitOps[] = {Node::Popcount, Node::CountLeadingZeros, Node::CountTrailingZeros,
                                          Node::DivRoundToZero, Node::ModRoundToZero};
      n.kind = bitOps[uniform(0, 4)];
      n.children.push_back(child(t));
      if (n.kind == Node::DivRoundToZero || n.kind == Node::ModRoundToZero)
        n.children.push_back(chance(0.3) ? constant(t) : child(t));
      return n;
    }
    if (op >= 11) {
      // Bitwise operators; a shift's amount is mostly a constant near the width, either side.
      static const Node::Kind bitwiseOps[] = {Node::And, Node::Or, Node::Xor, Node::Shl, Node::Shr};
      n.kind = bitwiseOps[uniform(0, 4)];
      n.children.push_back(child(t));
      if ((n.kind == Node::Shl || n.kind == Node::Shr) && chance(0.7)) {
        Node amount;
        amount.type = t;
        amount.value = uniform(isSigned(t) ? -3 : 0, bitsOf(t) + 2);
        n.children.push_back(amount);
      } else {
        n.children.push_back(chance(0.3) ? constant(t) : child(t));
      }
      return n;
    }
    // Floats are never divided (a quotient would round): they add or subtract instead.
    static const Node::Kind integerOps[] = {Node::Add, Node::Add, Node::Sub, Node::Mul,
                                            Node::Min, Node::Max, Node::Div, Node::Mod};
    static const Node::Kind floatOps[] = {Node::Add, Node::Add, Node::Sub, Node::Mul,
                                          Node::Min, Node::Max, Node::Add, Node::Sub};
    switch (op) {
    case 0: case 1: case 2: case 3: case 4: case 5: case 6: case 7:
      n.kind = isFloat(t) ? floatOps[op] : integerOps[op];
      break;
    case 8: {
      n.kind = Node::Select;
      Scalar ct = pickScalar();
      n.children.push_back(child(ct));
      n.children.push_back(child(ct));
      n.children.push_back(child(t));
      n.children.push_back(child(t));
      return n;
    }
    case 9:
      return cast(t, child(pickScalar()));
    default: {
      n.kind = Node::Clamp;
      n.value = isSigned(t) || isFloat(t) ? uniform(-20, 5) : uniform(0, 5);
      n.high = n.value + uniform(0, 30);
      n.children.push_back(child(t));
      return n;
    }
    }
    n.children.push_back(child(t));
    n.children.push_back(chance(0.3) ? constant(t) : child(t));
    return n;
  }

  Update update(Scalar t, int index) {
    Update u;
    if (index == 0 && chance(0.5))
      return u; // keep some pipelines pure
    double p = std::uniform_real_distribution<double>(0, 1)(Rng);
    bool needsPureDim = P.gpu && P.dims == 1;
    if (p < 0.55)
      return u;
    u.rmin = uniform(-3, 3);
    u.rextent = uniform(1, 6);
    u.dim = uniform(0, P.dims - 1);
    if (p < 0.7) {
      u.kind = Update::Reduce;
      u.term = node(t, 2, true, P.dims, u.dim);
      if (!readsRVar(u.term)) { // an RDom the update does not use is no loop of it
        Node sum;
        sum.kind = Node::Add;
        sum.type = t;
        sum.children.push_back(std::move(u.term));
        sum.children.push_back(read(t, u.dim));
        u.term = std::move(sum);
      }
    } else if (p < 0.8 || needsPureDim) {
      u.kind = Update::Pointwise;
      u.term = node(t, 2, false, P.dims, -1);
    } else if (p < 0.9) {
      u.kind = Update::Scan;
      u.rmin = uniform(-3, 6);
      u.rextent = uniform(1, 12);
      u.term = node(t, 2, false, P.dims, -1);
    } else {
      u.kind = Update::Histogram;
      u.low = uniform(-3, 3);
      u.high = u.low + uniform(0, 8);
      u.term = node(Scalar::I32, 2, false, P.dims, -1);
      // The bin moves with the RVar (Coord(dim) is the RVar here): an RDom the update does not
      // use is no loop of it.
      Node r, sum;
      r.kind = Node::Coord;
      r.type = Scalar::I32;
      r.dim = u.dim;
      sum.kind = Node::Add;
      sum.type = Scalar::I32;
      sum.children.push_back(std::move(u.term));
      sum.children.push_back(std::move(r));
      u.term = std::move(sum);
    }
    return u;
  }

  // The output's updates must stay inside its buffer: a scan and its previous point, the bins.
  void fitOutputUpdate() {
    Update &u = P.funcs.back().update;
    const int lo = P.outputMin[u.dim], hi = lo + P.outputExtent[u.dim] - 1;
    if ((u.kind == Update::Reduce || u.kind == Update::Scan || u.kind == Update::Histogram) && chance(0.25)) {
      u.where = u.kind == Update::Reduce ? pick({1, 2, 3}) : 2;
      u.whereConstant = u.where == 2 ? uniform(0, 1) : uniform(-3, 3);
    }
    if (u.kind == Update::Scan) {
      if (hi - lo < 1) {
        u.kind = Update::Pointwise;
        return;
      }
      u.rmin = uniform(lo + 1, hi);
      u.rextent = uniform(1, hi - u.rmin + 1);
    } else if (u.kind == Update::Histogram) {
      u.low = uniform(lo, hi);
      u.high = uniform(u.low, hi);
    }
  }

  // Where each Func is computed and how each stage's loops run.
  void placeAndSchedule() {
    const int n = static_cast<int>(P.funcs.size());
    FuncDesc &out = P.funcs.back();
    out.level = 0;
    std::vector<std::string> outputLoops = schedule(out, n - 1, true);
    if (out.update.kind != Update::None)
      schedule(out, n - 1, false);
    // Loops of the output a Func may be computed at: outermost first, not inside a vector loop.
    const int depth = static_cast<int>(outputLoops.size());

    std::vector<int> effective(n, depth);
    for (int i = n - 2; i >= 0; --i) {
      int maxLevel = INT32_MAX;
      bool used = false;
      for (int j = i + 1; j < n; ++j) {
        bool inValue = calls(P.funcs[j].value, i) || (P.funcs[j].tuple && calls(P.funcs[j].second, i));
        bool inUpdate = P.funcs[j].update.kind != Update::None && calls(P.funcs[j].update.term, i);
        if (inValue)
          maxLevel = std::min(maxLevel, j == n - 1 ? depth : effective[j]);
        if (inUpdate)
          maxLevel = std::min(maxLevel, j == n - 1 ? 0 : effective[j]);
        used = used || inValue || inUpdate;
      }
      FuncDesc &f = P.funcs[i];
      if (!used) {
        // Not computed, unless an output: then at root, after its producers.
        f.level = 0;
        effective[i] = 0;
        f.output = chance(0.3);
        if (!f.output)
          continue;
      } else if (f.update.kind == Update::None && chance(P.gpu ? 0.5 : 0.4)) {
        f.level = -1;
        effective[i] = maxLevel;
        continue;
      } else {
        f.level = P.gpu ? 0 : uniform(0, maxLevel);
        f.output = f.level == 0 && chance(0.15);
        effective[i] = f.level;
      }
      if (f.level > 0 && chance(0.25)) {
        // Stored further out, but never outside a parallel loop it is computed inside.
        std::set<std::string> parallel;
        for (const Directive &d : out.pureSchedule)
          if (d.kind == Directive::Parallel)
            parallel.insert(d.vars[0]);
          else if (d.kind == Directive::Rename && parallel.erase(d.vars[0]))
            parallel.insert(d.vars[1]);
        int lowest = f.level;
        while (lowest > 0 && !parallel.count(outputLoops[lowest - 1]))
          --lowest;
        if (lowest < f.level)
          f.storeLevel = uniform(lowest, f.level - 1);
      }
      schedule(f, i, true);
      // Sometimes a second schedule, used where the input is at least about as wide as it is.
      if (chance(0.2)) {
        f.specializedSchedule = std::move(f.pureSchedule);
        f.pureSchedule.clear();
        f.specializeWidth = std::max(1, P.inputExtent[0] + uniform(-1, 1));
        schedule(f, i, true);
      }
      if (f.update.kind != Update::None)
        schedule(f, i, false);
    }
  }

  static bool readsRVar(const Node &n) {
    if (std::any_of(n.plusR.begin(), n.plusR.end(), [](bool b) { return b; }))
      return true;
    return std::any_of(n.children.begin(), n.children.end(), readsRVar);
  }

  static bool calls(const Node &n, int func) {
    if (n.kind == Node::Call && n.func == func)
      return true;
    return std::any_of(n.children.begin(), n.children.end(), [&](const Node &c) { return calls(c, func); });
  }

  // Random directives for one stage. Returns the loops (outermost first) a Func may be computed at.
  std::vector<std::string> schedule(FuncDesc &f, int index, bool pure) {
    const bool isOutput = index == static_cast<int>(P.funcs.size()) - 1;
    // An output other than the last covers a region known only to the reference: no shifted or
    // rounded-up tails, which need its extent.
    const bool fixedTails = !isOutput && f.output;
    std::vector<std::string> loops; // innermost first
    std::set<std::string> rvars;
    std::map<std::string, int> constantExtent;
    std::map<std::string, int> originalDim;
    const Update &u = f.update;
    bool writesDim = !pure && (u.kind == Update::Scan || u.kind == Update::Histogram);
    std::string rvar = "r" + std::to_string(index) + ".x";
    if (!pure && u.kind != Update::Pointwise) {
      loops.push_back(rvar);
      rvars.insert(rvar);
    }
    for (int d = 0; d < P.dims; ++d)
      if (!(writesDim && d == u.dim)) {
        loops.push_back("x" + std::to_string(d));
        originalDim[loops.back()] = d;
      }
    std::vector<Directive> &out = pure ? f.pureSchedule : f.updateSchedule;
    int counter = 0;
    auto fresh = [&](const std::string &base, const char *what) {
      return base + what + std::to_string(index) + (pure ? "p" : "u") + std::to_string(counter++);
    };

    if (P.gpu) {
      // A GPU tile over the first one to three pure loops; the rest stay serial inside. At most
      // 1024 threads a block.
      std::vector<std::string> pureLoops;
      for (const std::string &l : loops)
        if (!rvars.count(l))
          pureLoops.push_back(l);
      const int tiled = std::min<int>(static_cast<int>(pureLoops.size()), uniform(1, 3));
      int threads = 1;
      for (int k = 0; k < tiled; ++k) {
        Directive s;
        s.kind = Directive::Split;
        s.vars = {pureLoops[k], pureLoops[k] + "_b", pureLoops[k] + "_t"};
        do
          s.factor = pick({1, 2, 3, 4, 8, 16, 32});
        while (threads * s.factor > 1024);
        threads *= s.factor;
        const int extent = isOutput ? P.outputExtent[originalDim[pureLoops[k]]] : 0;
        s.tail = fixedTails                                                      ? 0
                 : pure && chance(0.3) && (!isOutput || extent >= s.factor)        ? 2
                 : pure && chance(0.2) && (!isOutput || extent % s.factor == 0) ? 3
                                                                                 : 0;
        out.push_back(s);
      }
      // Threads inside blocks: innermost first, the loops left serial, the thread loops, the blocks.
      Directive order;
      order.kind = Directive::Reorder;
      for (const std::string &l : loops)
        if (std::find(pureLoops.begin(), pureLoops.begin() + tiled, l) == pureLoops.begin() + tiled)
          order.vars.push_back(l);
      for (int k = 0; k < tiled; ++k)
        order.vars.push_back(pureLoops[k] + "_t");
      for (int k = 0; k < tiled; ++k)
        order.vars.push_back(pureLoops[k] + "_b");
      out.push_back(order);
      for (int k = 0; k < tiled; ++k) {
        Directive b;
        b.kind = Directive::Parallel; // gpu_blocks / gpu_threads on the GPU (see the builder)
        b.vars = {pureLoops[k] + "_b"};
        b.factor = 1;
        out.push_back(b);
        Directive t;
        t.kind = Directive::Parallel;
        t.vars = {pureLoops[k] + "_t"};
        t.factor = 2;
        out.push_back(t);
      }
      return {};
    }

    const int steps = uniform(0, 4);
    bool vectorized = false;
    std::set<std::string> typed; // parallel or unrolled: not split or fused again
    // Pure loops split or fused away in this stage: a later split may name a new loop after one
    // (split(x, xo, xi) then split(xi, xi, x)), as after the variable it splits (split(x, x, xi)).
    std::vector<std::string> retired;
    for (int step = 0; step < steps && !vectorized; ++step) {
      int kind = uniform(0, 6);
      int at = uniform(0, static_cast<int>(loops.size()) - 1);
      const std::string v = loops[at];
      if (kind <= 1 && !typed.count(v)) {
        Directive s;
        s.kind = Directive::Split;
        s.factor = uniform(1, 8);
        std::string outer = fresh(v, "o"), innerName = fresh(v, "i");
        if (!rvars.count(v) && uniform(0, 3) == 0) {
          std::vector<std::string> names = retired;
          names.push_back(v);
          const std::string reused = names[uniform(0, static_cast<int>(names.size()) - 1)];
          (uniform(0, 1) ? outer : innerName) = reused;
          retired.erase(std::remove(retired.begin(), retired.end(), reused), retired.end());
        }
        s.vars = {v, outer, innerName};
        bool shiftable = pure && !fixedTails && originalDim.count(v) &&
                         (!isOutput || P.outputExtent[originalDim[v]] >= s.factor);
        // Rounded-up tails on root intermediates and on the output: a producer computed inside a
        // consumer's guarded split loops is bounded past the consumer's end (its region is not
        // narrowed by those guards), which the sizing of the input here does not cover.
        bool roundable = pure && !fixedTails && originalDim.count(v) && (isOutput || f.level == 0) &&
                         (!isOutput || P.outputExtent[originalDim[v]] % s.factor == 0);
        s.tail = shiftable && roundable ? pick({0, 1, 2, 3}) : shiftable ? pick({0, 1, 2}) : roundable ? pick({0, 1, 3})
                                                                                                     : pick({0, 1});
        out.push_back(s);
        if (!rvars.count(v) && v != outer && v != innerName)
          retired.push_back(v);
        // A reused name is a new loop: not the original dimension it once was.
        originalDim.erase(outer);
        originalDim.erase(innerName);
        constantExtent.erase(outer);
        loops[at] = innerName;
        loops.insert(loops.begin() + at + 1, outer);
        constantExtent[innerName] = s.factor;
        if (rvars.count(v)) {
          rvars.insert(outer);
          rvars.insert(innerName);
        }
      } else if (kind == 2 && at + 1 < static_cast<int>(loops.size()) &&
                 rvars.count(v) == rvars.count(loops[at + 1]) && !typed.count(v) &&
                 !typed.count(loops[at + 1])) {
        Directive s;
        s.kind = Directive::Fuse;
        std::string fused = fresh(v, "f");
        s.vars = {v, loops[at + 1], fused};
        out.push_back(s);
        if (!rvars.count(v)) {
          retired.push_back(v);
          retired.push_back(loops[at + 1]);
        }
        if (rvars.count(v))
          rvars.insert(fused);
        loops[at] = fused;
        loops.erase(loops.begin() + at + 1);
      } else if (kind == 3 && loops.size() > 1) {
        std::vector<std::string> order = loops;
        std::shuffle(order.begin(), order.end(), Rng);
        // RVar loops keep their order: a scan must run along its RVar as written.
        std::vector<std::string> rvarOrder;
        for (const std::string &l : loops)
          if (rvars.count(l))
            rvarOrder.push_back(l);
        size_t next = 0;
        for (std::string &l : order)
          if (rvars.count(l))
            l = rvarOrder[next++];
        Directive r;
        r.kind = Directive::Reorder;
        r.vars = order;
        out.push_back(r);
        loops = order;
      } else if (kind == 4 && constantExtent.count(v) && !rvars.count(v)) {
        Directive d;
        bool vector = at == 0 && chance(0.6);
        d.kind = vector ? Directive::Vectorize : Directive::Unroll;
        d.vars = {v};
        out.push_back(d);
        if (vector)
          vectorized = true;
        else
          typed.insert(v);
      } else if (kind == 5 && !rvars.count(v)) {
        Directive d;
        d.kind = Directive::Parallel;
        d.vars = {v};
        out.push_back(d);
        typed.insert(v);
      } else if (kind == 6) {
        // The renamed loop is the same loop: its dimension, extent, kind and type go with it.
        Directive d;
        d.kind = Directive::Rename;
        const std::string renamed = fresh(v, "r");
        d.vars = {v, renamed};
        out.push_back(d);
        for (auto *names : {&rvars, &typed})
          if (names->erase(v))
            names->insert(renamed);
        if (auto it = originalDim.find(v); it != originalDim.end()) {
          originalDim[renamed] = it->second;
          originalDim.erase(v);
        }
        if (auto it = constantExtent.find(v); it != constantExtent.end()) {
          constantExtent[renamed] = it->second;
          constantExtent.erase(v);
        }
        if (!rvars.count(renamed))
          retired.push_back(v);
        loops[at] = renamed;
      }
    }
    // A sum or a histogram computed at root, factored over one of its RVar loops: the other
    // RVars reduce into an intermediate at root, in parallel over the kept one's Var.
    const bool factorable = u.kind == Update::Reduce || u.kind == Update::Histogram;
    if (!pure && factorable && !f.tuple && f.level == 0 && chance(0.3)) {
      std::vector<std::string> rvarLoops;
      for (const std::string &l : loops)
        if (rvars.count(l))
          rvarLoops.push_back(l);
      if (!rvarLoops.empty()) {
        Directive d;
        d.kind = Directive::RFactor;
        d.vars = {rvarLoops[uniform(0, static_cast<int>(rvarLoops.size()) - 1)], "u" + std::to_string(index)};
        d.factor = chance(0.6) ? 1 : 0;
        out.push_back(d);
      }
    }
    std::vector<std::string> levels;
    for (auto it = loops.rbegin(); it != loops.rend(); ++it) {
      if (vectorized && *it == loops[0])
        break;
      levels.push_back(*it);
    }
    return levels;
  }
};

// ---- The reference ----

Value readElement(const RawBuffer &b, Scalar t, const std::vector<int64_t> &c) {
  size_t offset = 0;
  for (int d = 0; d < b.dimensions(); ++d)
    offset += static_cast<size_t>(c[d] - b.min(d)) * static_cast<size_t>(b.stride(d));
  const uint8_t *p = b.host_bytes() + offset * b.element_size();
  switch (t) {
  case Scalar::I8:
    return {*reinterpret_cast<const int8_t *>(p), 0};
  case Scalar::I16:
    return {*reinterpret_cast<const int16_t *>(p), 0};
  case Scalar::I32:
    return {*reinterpret_cast<const int32_t *>(p), 0};
  case Scalar::U8:
    return {*p, 0};
  case Scalar::U16:
    return {*reinterpret_cast<const uint16_t *>(p), 0};
  case Scalar::U32:
    return {*reinterpret_cast<const uint32_t *>(p), 0};
  case Scalar::F32:
    return {0, *reinterpret_cast<const float *>(p)};
  }
  return {};
}


// Whether an update's RDom::where holds at RVar value r and coordinates c (Euclidean %).
bool whereHolds(const Update &u, const std::vector<int64_t> &c, int64_t r) {
  if (u.where == 1)
    return r <= c[u.dim] + u.whereConstant;
  if (u.where == 2)
    return ((r % 2) + 2) % 2 == u.whereConstant;
  if (u.where == 3)
    return r != c[u.dim] + u.whereConstant;
  return true;
}

class Reference {
public:
  // An output other than the last is computed `outputMargin` past its region on every side: the
  // shifted and rounded-up tiles of its consumers may read that far.
  Reference(const PipelineDesc &p, const RawBuffer &input, int outputMargin) : P(p), Input(input) {
    const int n = static_cast<int>(P.funcs.size());
    Boxes.assign(n, Box(P.dims));
    InputBox.assign(P.dims, Interval());
    for (int d = 0; d < P.dims; ++d)
      Boxes[n - 1][d].include(P.outputMin[d], P.outputMin[d] + P.outputExtent[d] - 1);
    for (int i = n - 1; i >= 0; --i) {
      const FuncDesc &f = P.funcs[i];
      if (f.output)
        for (int d = 0; d < P.dims; ++d) {
          Boxes[i][d].include(P.outputMin[d], P.outputMin[d] + P.outputExtent[d] - 1);
          Boxes[i][d].include(Boxes[i][d].min - outputMargin, Boxes[i][d].max + outputMargin);
        }
      if (Boxes[i][0].empty())
        continue;
      const Update &u = f.update;
      if (u.kind == Update::Scan)
        Boxes[i][u.dim].include(u.rmin - 1, u.rmin + u.rextent - 1);
      if (u.kind == Update::Histogram)
        Boxes[i][u.dim].include(u.low, u.high);
      collect(f.value, Boxes[i], nullptr);
      if (f.tuple)
        collect(f.second, Boxes[i], nullptr);
      if (u.kind == Update::Reduce) {
        Interval r;
        r.include(u.rmin, u.rmin + u.rextent - 1);
        collect(u.term, Boxes[i], &r);
      } else if (u.kind == Update::Pointwise) {
        collect(u.term, Boxes[i], nullptr);
      } else if (u.kind == Update::Scan || u.kind == Update::Histogram) {
        Box b = Boxes[i];
        b[u.dim] = Interval();
        b[u.dim].include(u.rmin, u.rmin + u.rextent - 1);
        collect(u.term, b, nullptr);
      }
    }
  }

  /// Where the input is read when reads are not through a boundary condition.
  const Box &input_box() const { return InputBox; }

  void evaluate() {
    Values.assign(P.funcs.size(), {});
    SecondValues.assign(P.funcs.size(), {});
    for (size_t i = 0; i < P.funcs.size(); ++i)
      if (!Boxes[i][0].empty())
        computeFunc(static_cast<int>(i));
  }

  /// Value `index` (1: the second of a Tuple) of Func `func`, inside its box.
  Value value(int func, const std::vector<int64_t> &c, int index = 0) const { return at(func, c, index); }

  /// The region of Func `func` computed (for an output: its buffer's).
  const Box &box(int func) const { return Boxes[func]; }

private:
  const PipelineDesc &P;
  const RawBuffer &Input;
  std::vector<Box> Boxes;
  Box InputBox;
  std::vector<std::vector<Value>> Values, SecondValues; // a Tuple's second values in SecondValues

  void collect(const Node &n, const Box &coords, const Interval *r) {
    for (const Node &c : n.children)
      collect(c, coords, r);
    if (n.kind != Node::Input && n.kind != Node::Call)
      return;
    Box &target = n.kind == Node::Input ? InputBox : Boxes[n.func];
    for (int d = 0; d < P.dims; ++d) {
      int64_t lo = coords[d].min + n.offsets[d], hi = coords[d].max + n.offsets[d];
      if (n.plusR[d]) {
        lo += r->min;
        hi += r->max;
      }
      target[d].include(lo, hi);
    }
  }

  size_t offsetIn(const Box &b, const std::vector<int64_t> &c) const {
    size_t offset = 0, stride = 1;
    for (int d = 0; d < P.dims; ++d) {
      if (c[d] < b[d].min || c[d] > b[d].max)
        throw std::logic_error("reference: a read outside the computed box");
      offset += static_cast<size_t>(c[d] - b[d].min) * stride;
      stride *= static_cast<size_t>(b[d].max - b[d].min + 1);
    }
    return offset;
  }

  Value at(int func, const std::vector<int64_t> &c, int index = 0) const {
    return (index ? SecondValues : Values)[func][offsetIn(Boxes[func], c)];
  }
  Value &at(int func, const std::vector<int64_t> &c, int index = 0) {
    return (index ? SecondValues : Values)[func][offsetIn(Boxes[func], c)];
  }

  Value readInput(std::vector<int64_t> c) const {
    for (int d = 0; d < P.dims; ++d) {
      const int64_t lo = Input.min(d), extent = Input.extent(d), hi = lo + extent - 1;
      if (P.boundary == 1) {
        c[d] = std::clamp(c[d], lo, hi);
      } else if (P.boundary == 2) {
        if (c[d] < lo || c[d] > hi)
          return isFloat(P.inputType) ? Value{0, 7.0} : Value{7, 0};
      } else if (P.boundary == 3) {
        int64_t t = euclidMod(c[d] - lo, 2 * extent);
        c[d] = lo + std::clamp<int64_t>(t < extent ? t : 2 * extent - 1 - t, 0, extent - 1);
      } else if (P.boundary == 4) {
        c[d] = lo + euclidMod(c[d] - lo, extent);
      } else if (P.boundary == 5) {
        const int64_t period = 2 * (extent - 1), t = period ? euclidMod(c[d] - lo, period) : 0;
        c[d] = lo + (t < extent ? t : period - t);
      } else if (c[d] < lo || c[d] > hi) {
        throw std::logic_error("reference: a read outside the input");
      }
    }
    return readElement(Input, P.inputType, c);
  }

  Value eval(const Node &n, const std::vector<int64_t> &c, int64_t r) const {
    const Scalar t = n.type;
    auto arg = [&](int i) { return eval(n.children[i], c, r); };
    switch (n.kind) {
    case Node::Const:
      return isFloat(t) ? Value{0, n.value / 4.0} : intValue(t, n.value);
    case Node::Coord:
      return {c[n.dim], 0};
    case Node::Input:
    case Node::Call: {
      std::vector<int64_t> at(c.size());
      for (int d = 0; d < P.dims; ++d)
        at[d] = c[d] + n.offsets[d] + (n.plusR[d] ? r : 0);
      return n.kind == Node::Input ? readInput(at) : this->at(n.func, at, n.valueIndex);
    }
    case Node::Add:
    case Node::Sub:
    case Node::Mul:
    case Node::Div:
    case Node::Mod: {
      Value a = arg(0), b = arg(1);
      if (isFloat(t)) {
        switch (n.kind) {
        case Node::Add:
          return floatValue(a.f + b.f);
        case Node::Sub:
          return floatValue(a.f - b.f);
        case Node::Mul:
          return floatValue(a.f * b.f);
        default:
          throw std::logic_error("reference: float division is not generated");
        }
      }
      switch (n.kind) {
      case Node::Add:
        return intValue(t, __int128(a.i) + b.i, magnitudeOf(a) + magnitudeOf(b));
      case Node::Sub:
        return intValue(t, __int128(a.i) - b.i, magnitudeOf(a) + magnitudeOf(b));
      case Node::Mul:
        return intValue(t, __int128(a.i) * b.i, magnitudeOf(a) * magnitudeOf(b));
      case Node::Div:
        return intValue(t, euclidDiv(a.i, b.i));
      default:
        return intValue(t, euclidMod(a.i, b.i));
      }
    }
    case Node::And:
      return {arg(0).i & arg(1).i, 0};
    case Node::Or:
      return {arg(0).i | arg(1).i, 0};
    case Node::Xor:
      return {arg(0).i ^ arg(1).i, 0};
    case Node::Shl:
    case Node::Shr: {
      // A negative amount shifts the other way; from the width up every bit is shifted out. A
      // signed 32-bit left shift is a multiplication by 2^amount (as in Halide): it must not
      // overflow.
      const Value a = arg(0);
      const int64_t amount = arg(1).i;
      const bool left = (n.kind == Node::Shl) == (amount >= 0);
      const uint64_t distance = amount < 0 ? uint64_t(0) - uint64_t(amount) : uint64_t(amount);
      if (distance >= uint64_t(bitsOf(t)))
        return {left || a.i >= 0 ? 0 : -1, 0};
      if (left && t == Scalar::I32)
        return intValue(t, __int128(a.i) << distance, magnitudeOf(a) << distance);
      return left ? wrapped(t, uint64_t(a.i) << distance) : Value{a.i >> distance, 0};
    }
    case Node::Popcount:
    case Node::CountLeadingZeros:
    case Node::CountTrailingZeros: {
      const int bits = bitsOf(t);
      const uint64_t v = uint64_t(arg(0).i) & ((uint64_t(1) << bits) - 1);
      int count = 0;
      for (int b = 0; b < bits; ++b) {
        const int at = n.kind == Node::CountLeadingZeros ? bits - 1 - b : b;
        const bool set = (v >> at) & 1;
        if (n.kind == Node::Popcount)
          count += set;
        else if (set)
          break;
        else
          ++count;
      }
      return intValue(t, count);
    }
    case Node::DivRoundToZero:
    case Node::ModRoundToZero: {
      // C's division and remainder; a divisor of zero gives zero.
      const Value a = arg(0), b = arg(1);
      if (b.i == 0)
        return intValue(t, 0);
      const __int128 q = __int128(a.i) / b.i;
      return intValue(t, n.kind == Node::DivRoundToZero ? q : __int128(a.i) - q * b.i);
    }
    case Node::Min:
    case Node::Max: {
      Value a = arg(0), b = arg(1);
      bool first = isFloat(t) ? (a.f < b.f) == (n.kind == Node::Min) : (a.i < b.i) == (n.kind == Node::Min);
      Value chosen = first ? a : b;
      chosen.magnitude = std::max(magnitudeOf(a), magnitudeOf(b));
      return chosen;
    }
    case Node::Select: {
      Value a = arg(0), b = arg(1);
      const Scalar compared = n.children[0].type;
      // A comparison regroups too (`a + 5 < b` as `a < b - 5`).
      if (compared == Scalar::I32)
        intValue(compared, 0, magnitudeOf(a) + magnitudeOf(b));
      bool less = isFloat(compared) ? a.f < b.f : a.i < b.i;
      Value whenLess = arg(2), otherwise = arg(3);
      Value chosen = less ? whenLess : otherwise;
      chosen.magnitude = std::max(magnitudeOf(whenLess), magnitudeOf(otherwise));
      return chosen;
    }
    case Node::Clamp: {
      Value v = arg(0);
      if (isFloat(t))
        return {0, std::clamp<double>(v.f, n.value / 4.0, n.high / 4.0)};
      return {std::clamp<int64_t>(v.i, n.value, n.high), 0, magnitudeOf(v)};
    }
    case Node::Cast: {
      Value v = arg(0);
      Scalar from = n.children[0].type;
      if (isFloat(t))
        return floatValue(isFloat(from) ? v.f : static_cast<double>(v.i));
      if (isFloat(from))
        return intValue(t, static_cast<int64_t>(std::trunc(v.f)));
      return intValue(t, v.i);
    }
    }
    return {};
  }

  Value add(Scalar t, Value a, Value b) const {
    return isFloat(t) ? floatValue(a.f + b.f) : intValue(t, __int128(a.i) + b.i, magnitudeOf(a) + magnitudeOf(b));
  }

  void forEach(const Box &b, const std::function<void(std::vector<int64_t> &)> &body) const {
    std::vector<int64_t> c(P.dims);
    for (int d = 0; d < P.dims; ++d)
      c[d] = b[d].min;
    while (true) {
      body(c);
      int d = 0;
      while (d < P.dims && ++c[d] > b[d].max) {
        c[d] = b[d].min;
        ++d;
      }
      if (d == P.dims)
        return;
    }
  }

  void computeFunc(int i) {
    const FuncDesc &f = P.funcs[i];
    const Box &box = Boxes[i];
    size_t size = 1;
    for (const Interval &iv : box)
      size *= static_cast<size_t>(iv.max - iv.min + 1);
    Values[i].assign(size, {});
    forEach(box, [&](std::vector<int64_t> &c) { at(i, c) = eval(f.value, c, 0); });
    if (f.tuple) {
      SecondValues[i].assign(size, {});
      forEach(box, [&](std::vector<int64_t> &c) { at(i, c, 1) = eval(f.second, c, 0); });
    }
    const Update &u = f.update;
    const Scalar t = f.type;
    // An update of a Tuple: the second value gains the first's old value at the point written.
    auto updateSecond = [&](const std::vector<int64_t> &w) {
      if (f.tuple)
        at(i, w, 1) = add(f.secondType, at(i, w, 1), converted(f.secondType, t, at(i, w)));
    };
    switch (u.kind) {
    case Update::None:
      return;
    case Update::Reduce:
      forEach(box, [&](std::vector<int64_t> &c) {
        for (int64_t r = u.rmin; r < u.rmin + u.rextent; ++r)
          if (whereHolds(u, c, r)) {
            Value v = add(t, at(i, c), eval(u.term, c, r));
            updateSecond(c);
            at(i, c) = v;
          }
      });
      return;
    case Update::Pointwise:
      forEach(box, [&](std::vector<int64_t> &c) {
        Value v = add(t, at(i, c), eval(u.term, c, 0));
        updateSecond(c);
        at(i, c) = v;
      });
      return;
    case Update::Scan:
    case Update::Histogram: {
      Box rest = box;
      rest[u.dim] = Interval();
      rest[u.dim].include(0, 0);
      forEach(rest, [&](std::vector<int64_t> &c) {
        for (int64_t r = u.rmin; r < u.rmin + u.rextent; ++r) {
          if (!whereHolds(u, c, r))
            continue;
          c[u.dim] = r;
          Value term = eval(u.term, c, 0);
          std::vector<int64_t> w = c;
          Value v;
          if (u.kind == Update::Scan) {
            std::vector<int64_t> previous = c;
            --previous[u.dim];
            v = add(t, at(i, previous), term);
          } else {
            w[u.dim] = std::clamp<int64_t>(term.i, u.low, u.high);
            v = add(t, at(i, w), isFloat(t) ? Value{0, 1.0} : Value{1, 0});
          }
          updateSecond(w);
          at(i, w) = v;
        }
        c[u.dim] = 0;
      });
      return;
    }
    }
  }
};

// ---- Building the pipeline ----

ptxjit_type_t bufferType(Scalar t) {
  Type type = typeOf(t);
  ptxjit_type_t b{};
  b.code = static_cast<uint8_t>(type.code);
  b.bits = static_cast<uint8_t>(type.bits);
  b.lanes = 1;
  return b;
}

void writeElement(const RawBuffer &b, Scalar t, size_t index, Value v) {
  uint8_t *p = b.host_bytes() + index * b.element_size();
  if (t == Scalar::F32) {
    float x = static_cast<float>(v.f);
    std::memcpy(p, &x, 4);
    return;
  }
  // The low bytes of the two's-complement value (the hosts ptxjit runs on are little-endian).
  uint64_t bits = static_cast<uint64_t>(v.i);
  std::memcpy(p, &bits, static_cast<size_t>(b.element_size()));
}


/// The output's loops a Func may be computed at, outermost first (see Generator::schedule).
std::vector<std::string> outputLevels(const PipelineDesc &P) {
  std::vector<std::string> loops;
  for (int d = 0; d < P.dims; ++d)
    loops.push_back("x" + std::to_string(d));
  bool vectorized = false;
  for (const Directive &d : P.funcs.back().pureSchedule) {
    auto it = std::find(loops.begin(), loops.end(), d.vars[0]);
    // The reducer may remove the directive that made a loop a later one names: the library
    // refuses that schedule, and the levels are left as they are.
    bool named = it != loops.end();
    switch (d.kind) {
    case Directive::Split:
      if (!named)
        break;
      *it = d.vars[2];
      loops.insert(it + 1, d.vars[1]);
      break;
    case Directive::Fuse:
      if (!named || std::find(loops.begin(), loops.end(), d.vars[1]) == loops.end())
        break;
      *it = d.vars[2];
      loops.erase(std::find(loops.begin(), loops.end(), d.vars[1]));
      break;
    case Directive::Rename:
      if (named)
        *it = d.vars[1];
      break;
    case Directive::Reorder:
      loops = d.vars;
      break;
    case Directive::Vectorize:
      vectorized = true;
      break;
    default:
      break;
    }
  }
  std::vector<std::string> levels;
  for (auto it = loops.rbegin(); it != loops.rend(); ++it) {
    if (vectorized && *it == loops[0])
      break;
    levels.push_back(*it);
  }
  return levels;
}

class Builder {
public:
  explicit Builder(const PipelineDesc &p) : P(p), In(typeOf(p.inputType), p.dims, "in") {
    for (int d = 0; d < P.dims; ++d)
      Vars.emplace_back("x" + std::to_string(d));
    switch (P.boundary) {
    case 1:
      Bounded = BoundaryConditions::repeat_edge(In);
      break;
    case 2:
      Bounded = BoundaryConditions::constant_exterior(In, isFloat(P.inputType) ? Expr(7.0f)
                                                                                : ptxjit::cast(typeOf(P.inputType), 7));
      break;
    case 3:
      Bounded = BoundaryConditions::mirror_image(In);
      break;
    case 4:
      Bounded = BoundaryConditions::repeat_image(In);
      break;
    case 5:
      Bounded = BoundaryConditions::mirror_interior(In);
      break;
    default:
      break;
    }
    for (size_t i = 0; i < P.funcs.size(); ++i)
      Funcs.emplace_back("f" + std::to_string(i));
    for (size_t i = 0; i < P.funcs.size(); ++i)
      define(static_cast<int>(i));
    for (size_t i = 0; i < P.funcs.size(); ++i)
      scheduleFunc(static_cast<int>(i));
  }

  ImageParam &input() { return In; }
  /// The pipeline's outputs: the Funcs marked as outputs, in order, then the last.
  std::vector<Func> outputs() {
    std::vector<Func> result;
    for (size_t i = 0; i < P.funcs.size(); ++i)
      if (P.funcs[i].output || i + 1 == P.funcs.size())
        result.push_back(Funcs[i]);
    return result;
  }

private:
  const PipelineDesc &P;
  ImageParam In;
  Func Bounded;
  std::vector<Var> Vars;
  std::vector<Func> Funcs;
  std::vector<RDom> RDoms;

  Expr constant(Scalar t, int64_t v) const {
    return isFloat(t) ? Expr(static_cast<float>(v / 4.0)) : ptxjit::cast(typeOf(t), Expr(static_cast<int32_t>(v)));
  }

  Expr build(const Node &n, const std::vector<Expr> &coords, const Expr &r) const {
    auto arg = [&](int i) { return build(n.children[i], coords, r); };
    switch (n.kind) {
    case Node::Const:
      return constant(n.type, n.value);
    case Node::Coord:
      return coords[n.dim];
    case Node::Input:
    case Node::Call: {
      std::vector<Expr> at;
      for (int d = 0; d < P.dims; ++d) {
        Expr e = coords[d];
        if (n.offsets[d])
          e = e + n.offsets[d];
        if (n.plusR[d])
          e = e + r;
        at.push_back(e);
      }
      if (n.kind == Node::Call)
        return Funcs[n.func](at)[n.valueIndex];
      return P.boundary ? Expr(Bounded(at)) : In(at);
    }
    case Node::Add:
      return arg(0) + arg(1);
    case Node::Sub:
      return arg(0) - arg(1);
    case Node::Mul:
      return arg(0) * arg(1);
    case Node::Div:
      return arg(0) / arg(1);
    case Node::Mod:
      return arg(0) % arg(1);
    case Node::Min:
      return min(arg(0), arg(1));
    case Node::Max:
      return max(arg(0), arg(1));
    case Node::And:
      return arg(0) & arg(1);
    case Node::Or:
      return arg(0) | arg(1);
    case Node::Xor:
      return arg(0) ^ arg(1);
    case Node::Shl:
      return arg(0) << arg(1);
    case Node::Shr:
      return arg(0) >> arg(1);
    case Node::Popcount:
      return popcount(arg(0));
    case Node::CountLeadingZeros:
      return count_leading_zeros(arg(0));
    case Node::CountTrailingZeros:
      return count_trailing_zeros(arg(0));
    case Node::DivRoundToZero:
      return div_round_to_zero(arg(0), arg(1));
    case Node::ModRoundToZero:
      return mod_round_to_zero(arg(0), arg(1));
    case Node::Select:
      return select(arg(0) < arg(1), arg(2), arg(3));
    case Node::Clamp:
      return clamp(arg(0), constant(n.type, n.value), constant(n.type, n.high));
    case Node::Cast:
      return ptxjit::cast(typeOf(n.type), arg(0));
    }
    return Expr();
  }

  void define(int i) {
    const FuncDesc &f = P.funcs[i];
    std::vector<Expr> coords(Vars.begin(), Vars.end());
    Func &func = Funcs[i];
    if (f.tuple)
      func(coords) = Tuple(build(f.value, coords, Expr()), build(f.second, coords, Expr()));
    else
      func(coords) = build(f.value, coords, Expr());
    const Update &u = f.update;
    if (u.kind == Update::None)
      return;
    // func(lhs) = first, and for a Tuple the second value plus the old first (see FuncDesc).
    auto update = [&](const std::vector<Expr> &lhs, const Expr &first) {
      if (!f.tuple) {
        func(lhs) = first;
        return;
      }
      Expr old = func(lhs)[0];
      if (isFloat(f.type) && !isFloat(f.secondType))
        old = clamp(old, float(tupleClampLow(f.secondType)), float(TupleClamp));
      func(lhs) = Tuple(first, func(lhs)[1] + ptxjit::cast(typeOf(f.secondType), old));
    };
    if (u.kind == Update::Pointwise) {
      update(coords, func(coords)[0] + build(u.term, coords, Expr()));
      return;
    }
    RDom r(u.rmin, u.rextent, "r" + std::to_string(i));
    if (u.where == 1)
      r.where(Expr(r) <= coords[u.dim] + u.whereConstant);
    else if (u.where == 2)
      r.where(Expr(r) % 2 == u.whereConstant);
    else if (u.where == 3)
      r.where(Expr(r) != coords[u.dim] + u.whereConstant);
    if (u.kind == Update::Reduce) {
      update(coords, func(coords)[0] + build(u.term, coords, r));
      return;
    }
    std::vector<Expr> at = coords;
    at[u.dim] = r;
    Expr term = build(u.term, at, Expr());
    if (u.kind == Update::Scan) {
      std::vector<Expr> previous = at;
      previous[u.dim] = Expr(r) - 1;
      update(at, func(previous)[0] + term);
    } else {
      at[u.dim] = clamp(term, u.low, u.high);
      update(at, func(at)[0] + constant(f.type, isFloat(f.type) ? 4 : 1));
    }
  }

  VarOrRVar loopName(const std::string &name, const std::set<std::string> &rvars) const {
    return rvars.count(name) ? VarOrRVar(RVar(name)) : VarOrRVar(Var(name));
  }

  void apply(Stage stage, const std::vector<Directive> &directives, std::set<std::string> rvars) {
    for (const Directive &d : directives) {
      auto v = [&](int k) { return loopName(d.vars[k], rvars); };
      switch (d.kind) {
      case Directive::Split:
        if (rvars.count(d.vars[0])) {
          rvars.insert(d.vars[1]);
          rvars.insert(d.vars[2]);
        }
        stage.split(v(0), v(1), v(2), d.factor, static_cast<TailStrategy>(d.tail));
        break;
      case Directive::Fuse:
        if (rvars.count(d.vars[0]))
          rvars.insert(d.vars[2]);
        stage.fuse(v(0), v(1), v(2));
        break;
      case Directive::Rename:
        if (rvars.count(d.vars[0]))
          rvars.insert(d.vars[1]);
        stage.rename(v(0), v(1));
        break;
      case Directive::Reorder: {
        std::vector<VarOrRVar> order;
        for (size_t k = 0; k < d.vars.size(); ++k)
          order.push_back(v(static_cast<int>(k)));
        stage.reorder(order);
        break;
      }
      case Directive::Vectorize:
        stage.vectorize(v(0));
        break;
      case Directive::Unroll:
        stage.unroll(v(0));
        break;
      case Directive::Parallel:
        if (P.gpu && d.factor == 1)
          stage.gpu_blocks(v(0));
        else if (P.gpu)
          stage.gpu_threads(v(0));
        else
          stage.parallel(v(0));
        break;
      case Directive::RFactor: {
        Func intermediate = stage.rfactor(RVar(d.vars[0]), Var(d.vars[1]));
        intermediate.compute_root();
        if (d.factor == 1)
          intermediate.update().parallel(Var(d.vars[1]));
        break;
      }
      }
    }
  }

  void scheduleFunc(int i) {
    const FuncDesc &f = P.funcs[i];
    Func &func = Funcs[i];
    const bool isOutput = i + 1 == static_cast<int>(P.funcs.size());
    if (isOutput && P.boundOutput)
      for (int d = 0; d < P.dims; ++d)
        func.bound(Vars[d], P.outputMin[d], P.outputExtent[d]);
    if ((isOutput || f.output) && P.stridedOutputs)
      for (OutputImageParam buffer : func.output_buffers())
        buffer.dim(0).set_stride(Expr());
    if (!isOutput) {
      if (f.level < 0)
        func.compute_inline();
      else if (f.level == 0)
        func.compute_root();
      else {
        std::vector<std::string> levels = outputLevels(P);
        // The reducer may have removed the split that made this level.
        if (f.level > static_cast<int>(levels.size()))
          throw std::invalid_argument("compute level " + std::to_string(f.level) + " no longer exists");
        func.compute_at(Funcs.back(), Var(levels[f.level - 1]));
        if (f.storeLevel == 0)
          func.store_root();
        else if (f.storeLevel > 0)
          func.store_at(Funcs.back(), Var(levels[f.storeLevel - 1]));
      }
    }
    if (f.level < 0)
      return;
    if (f.specializeWidth > 0)
      apply(func.specialize(In.width() >= f.specializeWidth), f.specializedSchedule, {});
    apply(Stage(func.contents(), 0), f.pureSchedule, {});
    if (f.update.kind != Update::None)
      apply(func.update(), f.updateSchedule, {"r" + std::to_string(i) + ".x"});
  }

};

std::string describeNode(const PipelineDesc &p, const Node &n, const std::vector<std::string> &coords) {
  auto arg = [&](int i) { return describeNode(p, n.children[i], coords); };
  switch (n.kind) {
  case Node::Const:
    return isFloat(n.type) ? std::to_string(n.value / 4.0) + "f"
                           : std::string("cast<") + nameOf(n.type) + ">(" + std::to_string(n.value) + ")";
  case Node::Coord:
    return coords[n.dim];
  case Node::Input:
  case Node::Call: {
    std::string s = n.kind == Node::Input ? (p.boundary ? "bounded" : "in") : "f" + std::to_string(n.func);
    s += "(";
    for (int d = 0; d < p.dims; ++d) {
      s += (d ? ", " : "") + coords[d];
      if (n.offsets[d])
        s += (n.offsets[d] > 0 ? " + " : " - ") + std::to_string(std::abs(n.offsets[d]));
      if (n.plusR[d])
        s += " + r";
    }
    s += ")";
    if (n.kind == Node::Call && p.funcs[n.func].tuple)
      s += "[" + std::to_string(n.valueIndex) + "]";
    return s;
  }
  case Node::Add:
    return "(" + arg(0) + " + " + arg(1) + ")";
  case Node::Sub:
    return "(" + arg(0) + " - " + arg(1) + ")";
  case Node::Mul:
    return "(" + arg(0) + " * " + arg(1) + ")";
  case Node::Div:
    return "(" + arg(0) + " / " + arg(1) + ")";
  case Node::Mod:
    return "(" + arg(0) + " % " + arg(1) + ")";
  case Node::Min:
    return "min(" + arg(0) + ", " + arg(1) + ")";
  case Node::Max:
    return "max(" + arg(0) + ", " + arg(1) + ")";
  case Node::And:
    return "(" + arg(0) + " & " + arg(1) + ")";
  case Node::Or:
    return "(" + arg(0) + " | " + arg(1) + ")";
  case Node::Xor:
    return "(" + arg(0) + " ^ " + arg(1) + ")";
  case Node::Shl:
    return "(" + arg(0) + " << " + arg(1) + ")";
  case Node::Shr:
    return "(" + arg(0) + " >> " + arg(1) + ")";
  case Node::Popcount:
    return "popcount(" + arg(0) + ")";
  case Node::CountLeadingZeros:
    return "count_leading_zeros(" + arg(0) + ")";
  case Node::CountTrailingZeros:
    return "count_trailing_zeros(" + arg(0) + ")";
  case Node::DivRoundToZero:
    return "div_round_to_zero(" + arg(0) + ", " + arg(1) + ")";
  case Node::ModRoundToZero:
    return "mod_round_to_zero(" + arg(0) + ", " + arg(1) + ")";
  case Node::Select:
    return "select(" + arg(0) + " < " + arg(1) + ", " + arg(2) + ", " + arg(3) + ")";
  case Node::Clamp: {
    auto bound = [&](int64_t v) {
      return isFloat(n.type) ? std::to_string(v / 4.0) + "f" : std::to_string(v);
    };
    return "clamp(" + arg(0) + ", " + bound(n.value) + ", " + bound(n.high) + ")";
  }
  case Node::Cast:
    return std::string("cast<") + nameOf(n.type) + ">(" + arg(0) + ")";
  }
  return "?";
}

std::string describeSchedule(const std::string &stage, const std::vector<Directive> &directives, bool gpu) {
  std::string s;
  static const char *tails[] = {"Auto", "GuardWithIf", "ShiftInward", "RoundUp"};
  for (const Directive &d : directives) {
    s += "  " + stage;
    switch (d.kind) {
    case Directive::Split:
      s += ".split(" + d.vars[0] + ", " + d.vars[1] + ", " + d.vars[2] + ", " + std::to_string(d.factor) +
           ", TailStrategy::" + tails[d.tail] + ");\n";
      continue;
    case Directive::Fuse:
      s += ".fuse(" + d.vars[0] + ", " + d.vars[1] + ", " + d.vars[2] + ");\n";
      continue;
    case Directive::Rename:
      s += ".rename(" + d.vars[0] + ", " + d.vars[1] + ");\n";
      continue;
    case Directive::Reorder: {
      s += ".reorder(";
      for (size_t k = 0; k < d.vars.size(); ++k)
        s += (k ? ", " : "") + d.vars[k];
      s += ");\n";
      continue;
    }
    case Directive::Vectorize:
      s += ".vectorize(" + d.vars[0] + ");\n";
      continue;
    case Directive::Unroll:
      s += ".unroll(" + d.vars[0] + ");\n";
      continue;
    case Directive::Parallel:
      s += std::string(gpu ? (d.factor == 1 ? ".gpu_blocks(" : ".gpu_threads(") : ".parallel(") + d.vars[0] + ");\n";
      continue;
    case Directive::RFactor:
      s += ".rfactor(" + d.vars[0] + ", " + d.vars[1] + ").compute_root()" +
           (d.factor == 1 ? ".update().parallel(" + d.vars[1] + ")" : std::string()) + ";\n";
      continue;
    }
  }
  return s;
}

} // namespace

PipelineDesc random_pipeline(uint64_t seed, bool gpu) {
  PipelineDesc p = Generator(seed, gpu).generate();
  // Drawn apart from the generator's stream, so that each seed's program is what it was before.
  p.stridedOutputs = std::mt19937_64(seed ^ 0x5bd1e9955bd1e995ull)() % 8 == 0;
  return p;
}

std::string to_string(const PipelineDesc &p) {
  std::ostringstream s;
  std::vector<std::string> coords;
  for (int d = 0; d < p.dims; ++d)
    coords.push_back("x" + std::to_string(d));
  std::string vars;
  for (int d = 0; d < p.dims; ++d)
    vars += (d ? ", " : "") + coords[d];
  static const char *boundaries[] = {"",
                                     "repeat_edge(in)",
                                     "constant_exterior(in, 7)",
                                     "mirror_image(in)",
                                     "repeat_image(in)",
                                     "mirror_interior(in)"};
  s << "// seed " << p.seed << (p.gpu ? " (gpu)" : "") << "\n";
  s << "ImageParam in(" << nameOf(p.inputType) << ", " << p.dims << ");  // over";
  for (int d = 0; d < p.dims; ++d)
    s << " [" << p.inputMin[d] << ", " << p.inputMin[d] + p.inputExtent[d] - 1 << "]";
  s << "\n";
  if (p.boundary)
    s << "Func bounded = BoundaryConditions::" << boundaries[p.boundary] << ";\n";
  std::vector<std::string> levels = outputLevels(p);
  for (size_t i = 0; i < p.funcs.size(); ++i) {
    const FuncDesc &f = p.funcs[i];
    const std::string name = "f" + std::to_string(i);
    s << "Func " << name << ";  // " << nameOf(f.type) << (f.tuple ? std::string(", ") + nameOf(f.secondType) : "")
      << "\n";
    if (f.tuple)
      s << name << "(" << vars << ") = Tuple(" << describeNode(p, f.value, coords) << ", "
        << describeNode(p, f.second, coords) << ");\n";
    else
      s << name << "(" << vars << ") = " << describeNode(p, f.value, coords) << ";\n";
    const Update &u = f.update;
    std::vector<std::string> at = coords;
    if (u.kind == Update::Scan || u.kind == Update::Histogram)
      at[u.dim] = "r";
    std::string lhs;
    for (int d = 0; d < p.dims; ++d)
      lhs += (d ? ", " : "") + at[d];
    if (u.kind != Update::None && u.kind != Update::Pointwise)
      s << "RDom r(" << u.rmin << ", " << u.rextent << ");\n";
    if (u.where == 1)
      s << "r.where(r <= " << coords[u.dim] << " + " << u.whereConstant << ");\n";
    else if (u.where == 2)
      s << "r.where(r % 2 == " << u.whereConstant << ");\n";
    else if (u.where == 3)
      s << "r.where(r != " << coords[u.dim] << " + " << u.whereConstant << ");\n";
    switch (u.kind) {
    case Update::None:
      break;
    case Update::Reduce:
    case Update::Pointwise:
      s << name << "(" << vars << ") += " << describeNode(p, u.term, coords) << ";\n";
      break;
    case Update::Scan: {
      std::string previous;
      for (int d = 0; d < p.dims; ++d)
        previous += (d ? ", " : "") + (d == u.dim ? std::string("r - 1") : at[d]);
      s << name << "(" << lhs << ") = " << name << "(" << previous << ") + " << describeNode(p, u.term, at) << ";\n";
      break;
    }
    case Update::Histogram: {
      std::string bin;
      for (int d = 0; d < p.dims; ++d)
        bin += (d ? ", " : "") +
               (d == u.dim ? "clamp(" + describeNode(p, u.term, at) + ", " + std::to_string(u.low) + ", " +
                                 std::to_string(u.high) + ")"
                           : at[d]);
      s << name << "(" << bin << ") += 1;\n";
      break;
    }
    }
    if (f.tuple && u.kind != Update::None)
      s << "  // on value 0 of the Tuple; the same update adds the old value 0 to value 1 (" << name
        << "(...)[1] + cast(" << name << "(...)[0]), a float clamped to [-25, 25], or [0, 25] for an unsigned value 1, "
        << "first)\n";
    if (i + 1 < p.funcs.size() && f.level < 0)
      continue;
    if (i + 1 < p.funcs.size())
      s << "  " << name << (f.level == 0 ? ".compute_root();\n" : ".compute_at(f" + std::to_string(p.funcs.size() - 1) +
                                                                   ", " + levels[f.level - 1] + ");\n");
    if (i + 1 < p.funcs.size() && f.level > 0 && f.storeLevel >= 0)
      s << "  " << name << (f.storeLevel == 0 ? ".store_root();\n" : ".store_at(f" + std::to_string(p.funcs.size() - 1) +
                                                                        ", " + levels[f.storeLevel - 1] + ");\n");
    if (i + 1 == p.funcs.size() && p.boundOutput)
      for (int d = 0; d < p.dims; ++d)
        s << "  " << name << ".bound(x" << d << ", " << p.outputMin[d] << ", " << p.outputExtent[d] << ");\n";
    if ((i + 1 == p.funcs.size() || f.output) && p.stridedOutputs)
      s << "  for (OutputImageParam b : " << name << ".output_buffers()) b.dim(0).set_stride(Expr());"
        << "  // realized into buffers of stride 2 in x0\n";
    if (f.specializeWidth > 0)
      s << describeSchedule(name + ".specialize(in.width() >= " + std::to_string(f.specializeWidth) + ")",
                            f.specializedSchedule, p.gpu);
    s << describeSchedule(name, f.pureSchedule, p.gpu);
    s << describeSchedule(name + ".update()", f.updateSchedule, p.gpu);
  }
  std::string outputs;
  for (size_t i = 0; i < p.funcs.size(); ++i)
    if (p.funcs[i].output || i + 1 == p.funcs.size())
      outputs += (outputs.empty() ? "f" : ", f") + std::to_string(i);
  if (outputs.find(',') != std::string::npos)
    s << "Pipeline({" << outputs << "});  // each earlier output over what the reference computes of it\n";
  s << "// realized over";
  for (int d = 0; d < p.dims; ++d)
    s << " [" << p.outputMin[d] << ", " << p.outputMin[d] + p.outputExtent[d] - 1 << "]";
  s << "\n";
  return s.str();
}

Result run_pipeline(const PipelineDesc &p, const std::string &target) {
  Result result;
  try {
    // The input: random values over a region the reference decides when reads are unbounded by
    // a boundary condition; small, so that most arithmetic stays defined and exact.
    std::vector<int> inputMin = p.inputMin, inputExtent = p.inputExtent;
    RawBuffer probe(bufferType(p.inputType), std::vector<int>(p.dims, 1));
    // An intermediate with shifted tails may compute (and read) up to its factor further than the
    // reference. Rounded-up tails compound through splits of split loops and through every
    // producer of a rounded region: a generous margin instead.
    int margin = 0;
    for (size_t i = 0; i + 1 < p.funcs.size(); ++i)
      for (const auto *schedule : {&p.funcs[i].pureSchedule, &p.funcs[i].specializedSchedule})
        for (const Directive &d : *schedule)
          if (d.kind == Directive::Split)
            margin += d.tail == 2 ? d.factor : d.tail == 3 ? 64 : 0;
    if (!p.boundary) {
      // Exactly what the reference reads (and the margin), so that bounds inference is checked too.
      Reference sizing(p, probe, std::min(margin, 8));
      for (int d = 0; d < p.dims; ++d) {
        const auto &iv = sizing.input_box()[d];
        if (iv.empty()) {
          inputMin[d] = 0;
          inputExtent[d] = 1;
        } else {
          inputMin[d] = static_cast<int>(iv.min) - margin;
          inputExtent[d] = static_cast<int>(iv.max - iv.min + 1) + 2 * margin;
        }
      }
    }
    RawBuffer input(bufferType(p.inputType), inputExtent);
    input.set_min(inputMin);
    std::mt19937_64 rng(p.seed ^ 0x9e3779b97f4a7c15ull);
    for (size_t k = 0; k < input.number_of_elements(); ++k) {
      Value v = isFloat(p.inputType) ? Value{0, std::uniform_int_distribution<int>(-16, 16)(rng) / 4.0}
                : isSigned(p.inputType) ? Value{std::uniform_int_distribution<int>(-20, 20)(rng), 0}
                                        : Value{std::uniform_int_distribution<int>(0, 20)(rng), 0};
      writeElement(input, p.inputType, k, v);
    }
    // Earlier outputs get a smaller margin: over every dimension of a large margin the reference
    // would compute (and the pipeline realize) millions of points. Where their consumers' tiles
    // read further, the pipeline refuses the buffer, and the case is discarded.
    const int outputMargin = std::min(margin, 8);
    Reference reference(p, input, outputMargin);
    try {
      reference.evaluate();
    } catch (const Discard &) {
      result.outcome = Outcome::Discarded;
      return result;
    }

    Builder builder(p);
    builder.input().set(input);
    // One buffer per value of each output, over the region the reference computes of it.
    struct OutputBuffer {
      int func, value;
      Scalar type;
      Box region;
    };
    std::vector<OutputBuffer> described;
    for (size_t i = 0; i < p.funcs.size(); ++i) {
      const FuncDesc &f = p.funcs[i];
      if (!f.output && i + 1 < p.funcs.size())
        continue;
      described.push_back({static_cast<int>(i), 0, f.type, reference.box(static_cast<int>(i))});
      if (f.tuple)
        described.push_back({static_cast<int>(i), 1, f.secondType, reference.box(static_cast<int>(i))});
    }
    // Each output buffer views memory of its own (`backing`): dense, or with every other element
    // of dimension 0 left out, still poisoned after a realize.
    std::vector<RawBuffer> outputs, backing;
    auto makeOutput = [&](std::vector<RawBuffer> &views, ptxjit_type_t type, const std::vector<int> &min,
                          const std::vector<int> &extent) {
      const int spread = p.stridedOutputs ? 2 : 1;
      std::vector<int> memory = extent;
      memory[0] *= spread;
      RawBuffer &storage = backing.emplace_back(type, memory);
      std::memset(storage.host_bytes(), 0xA5, storage.number_of_elements() * storage.element_size());
      std::vector<ptxjit_dimension_t> dims;
      for (int d = 0; d < storage.dimensions(); ++d)
        dims.push_back({min[d], extent[d], storage.stride(d) * (d == 0 ? spread : 1), 0});
      views.push_back(RawBuffer::view(type, dims, storage.host_bytes(), 0, std::make_shared<RawBuffer>(storage)));
    };
    for (const OutputBuffer &o : described) {
      std::vector<int> min, extent;
      for (const Interval &iv : o.region) {
        min.push_back(static_cast<int>(iv.min));
        extent.push_back(static_cast<int>(iv.max - iv.min + 1));
      }
      makeOutput(outputs, bufferType(o.type), min, extent);
    }
    auto poison = [](std::vector<RawBuffer> &buffers) {
      for (RawBuffer &o : buffers)
        std::memset(o.host_bytes(), 0xA5, o.number_of_elements() * o.element_size());
    };
    {
      Pipeline pipeline(builder.outputs());
      pipeline.compile_jit(Target(target));
      pipeline.realize(outputs);
      if (Target(target).has_feature(Target::Feature::CUDAGraphs)) {
        // Again from poisoned outputs: the second realize replays the graph the first built, with
        // the new staging pointers.
        poison(backing);
        pipeline.realize(outputs);
      }
    }
    // The same program made again, now that the first Pipeline is gone: its code comes from the
    // compile cache, and gives the same bits (a key two programs shared would show here too).
    std::vector<RawBuffer> again;
    const size_t firstBacking = backing.size();
    for (size_t b = 0; b < outputs.size(); ++b) {
      const RawBuffer &o = outputs[b];
      std::vector<int> min, extent;
      for (int d = 0; d < o.dimensions(); ++d) {
        min.push_back(o.min(d));
        extent.push_back(o.extent(d));
      }
      makeOutput(again, o.type(), min, extent);
    }
    bool cacheHit = false;
    {
      Builder second(p);
      second.input().set(input);
      const uint64_t hitsBefore = JIT::compile_cache_statistics().hits;
      Pipeline cached(second.outputs());
      cached.compile_jit(Target(target));
      cacheHit = JIT::compile_cache_statistics().hits > hitsBefore;
      cached.realize(again);
    }

    int wrong = 0;
    std::ostringstream what;
    for (size_t b = 0; b < described.size(); ++b) {
      const OutputBuffer &o = described[b];
      std::vector<int64_t> c(p.dims);
      for (int d = 0; d < p.dims; ++d)
        c[d] = o.region[d].min;
      while (true) {
        Value expected = reference.value(o.func, c, o.value), got = readElement(outputs[b], o.type, c);
        bool same = isFloat(o.type) ? (expected.f == got.f || (std::isnan(expected.f) && std::isnan(got.f)))
                                    : expected.i == got.i;
        if (!same && wrong++ < 3) {
          what << "f" << o.func << (o.value ? " value 1 at (" : " at (");
          for (int d = 0; d < p.dims; ++d)
            what << (d ? ", " : "") << c[d];
          what << "): expected " << (isFloat(o.type) ? expected.f : double(expected.i)) << ", got "
               << (isFloat(o.type) ? got.f : double(got.i)) << "; ";
        }
        int d = 0;
        while (d < p.dims && ++c[d] > o.region[d].max) {
          c[d] = o.region[d].min;
          ++d;
        }
        if (d == p.dims)
          break;
      }
    }
    // Whole memories: the elements a strided output skips stay poisoned in both.
    for (size_t b = 0; b < outputs.size() && !wrong; ++b)
      if (std::memcmp(backing[b].host_bytes(), backing[firstBacking + b].host_bytes(),
                      backing[b].number_of_elements() * backing[b].element_size()) != 0) {
        wrong = 1;
        what << "output " << b << " differs when the code comes from the compile cache; ";
      }
    if (wrong) {
      result.outcome = Outcome::Wrong;
      result.message = std::to_string(wrong) + " wrong values: " + what.str();
    } else if (!cacheHit && jit::DiskCache::process().enabled()) {
      result.outcome = Outcome::Error;
      result.message = "the same program made again did not find its code in the compile cache";
    }
  } catch (const std::exception &e) {
    const bool outputTooSmall = std::string(e.what()).find("but the pipeline's other outputs read it at") != std::string::npos;
    result.outcome = outputTooSmall ? Outcome::Discarded : Outcome::Error;
    result.message = e.what();
  }
  return result;
}

std::string compile_to_ptx(const PipelineDesc &p, const std::string &target) {
  try {
    Builder builder(p);
    Pipeline(builder.outputs()).compile_to_ptx(Target(target));
    return "";
  } catch (const std::exception &e) {
    return e.what();
  }
}

PipelineDesc reduce_failure(const PipelineDesc &failing, const std::string &target, Outcome kind) {
  PipelineDesc best = failing;
  // An error must stay the same error (numbers aside): removing a directive can make another.
  auto shape = [](const std::string &message) {
    std::string s;
    for (char c : message)
      if (!std::isdigit(static_cast<unsigned char>(c)) && c != '-')
        s += c;
    return s;
  };
  const std::string message = shape(run_pipeline(failing, target).message);
  auto stillFails = [&](const PipelineDesc &candidate) {
    Result r = run_pipeline(candidate, target);
    return r.outcome == kind && (kind != Outcome::Error || shape(r.message) == message);
  };
  bool progress = true;
  while (progress) {
    progress = false;
    if (best.boundOutput) {
      PipelineDesc candidate = best;
      candidate.boundOutput = false;
      if (stillFails(candidate)) {
        best = candidate;
        progress = true;
      }
    }
    if (best.stridedOutputs) {
      PipelineDesc candidate = best;
      candidate.stridedOutputs = false;
      if (stillFails(candidate)) {
        best = candidate;
        progress = true;
      }
    }
    for (size_t i = 0; i < best.funcs.size(); ++i) {
      for (int which = 0; which < 2; ++which) {
        auto directives = [&](PipelineDesc &d) -> std::vector<Directive> & {
          return which == 0 ? d.funcs[i].pureSchedule : d.funcs[i].updateSchedule;
        };
        for (size_t k = directives(best).size(); k-- > 0;) {
          PipelineDesc candidate = best;
          directives(candidate).erase(directives(candidate).begin() + static_cast<long>(k));
          if (stillFails(candidate)) {
            best = candidate;
            progress = true;
          }
        }
      }
      if (best.funcs[i].specializeWidth > 0) {
        PipelineDesc candidate = best;
        candidate.funcs[i].specializeWidth = 0;
        candidate.funcs[i].specializedSchedule.clear();
        if (stillFails(candidate)) {
          best = candidate;
          progress = true;
        }
      }
      if (best.funcs[i].storeLevel >= 0) {
        PipelineDesc candidate = best;
        candidate.funcs[i].storeLevel = -1;
        if (stillFails(candidate)) {
          best = candidate;
          progress = true;
        }
      }
      if (i + 1 < best.funcs.size() && best.funcs[i].level != 0) {
        PipelineDesc candidate = best;
        candidate.funcs[i].level = 0;
        candidate.funcs[i].storeLevel = -1;
        if (stillFails(candidate)) {
          best = candidate;
          progress = true;
        }
      }
      if (best.funcs[i].update.where != 0) {
        PipelineDesc candidate = best;
        candidate.funcs[i].update.where = 0;
        if (stillFails(candidate)) {
          best = candidate;
          progress = true;
        }
      }
      if (best.funcs[i].update.kind != Update::None) {
        PipelineDesc candidate = best;
        candidate.funcs[i].update = Update();
        candidate.funcs[i].updateSchedule.clear();
        if (stillFails(candidate)) {
          best = candidate;
          progress = true;
        }
      }
    }
  }
  return best;
}

} // namespace ptxjit::fuzz
