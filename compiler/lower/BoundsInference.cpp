#include "BoundsInference.h"

#include "BoxesTouched.h"
#include "ir/Constants.h"
#include "ir/IREquality.h"
#include "ptxjit/IROperator.h"
#include "ir/IRPrinter.h"
#include "ir/Simplify.h"
#include "ir/Substitute.h"
#include "lang/Parameter.h"

namespace ptxjit::lower {

using namespace ir;

namespace {

Expr var(const std::string &name) { return Variable::make(Int(32), name); }
std::string stageVar(const FunctionContents &f, int stage, const std::string &v, const char *field) {
  return f.name + ".s" + std::to_string(stage) + "." + v + "." + field;
}

// The last bound() of dimension v: it fixes the region.
const FunctionBound *findBound(const FunctionContents &f, const std::string &v) {
  for (auto it = f.bounds.rbegin(); it != f.bounds.rend(); ++it)
    if (it->var == v && it->min.defined())
      return &*it;
  return nullptr;
}

bool hasRelativeBounds(const FunctionContents &f, const std::string &v) {
  for (const FunctionBound &b : f.bounds)
    if (b.var == v && !b.min.defined())
      return true;
  return false;
}

// bound_extent() and align_bounds() of dimension v, in the order given, applied to the region r
// the consumers need; `checks` gets the realize-time checks that bound_extent() is enough.
Interval relativeRegion(const FunctionContents &f, const std::string &v, Interval r, std::vector<Stmt> *checks) {
  for (const FunctionBound &b : f.bounds) {
    if (b.var != v || b.min.defined())
      continue;
    if (b.extent.defined()) {
      Expr max = simplify(r.min + b.extent - 1);
      if (checks)
        checks->push_back(AssertStmt::make(LE::make(r.max, max),
                                           "Func " + f.name + " has bound_extent % in " + v +
                                               " but its consumers need [%, %]",
                                           {b.extent, r.min, r.max}));
      r.max = max;
    } else {
      // Each end on its own (Euclidean division rounds down for a positive modulus): the min down
      // to the aligned point, the max up to the one before the next; through the min, the max's
      // bounds would count the min's range twice.
      Expr min = simplify(((r.min - b.remainder) / b.modulus) * b.modulus + b.remainder);
      Expr max = simplify(((r.max - b.remainder + b.modulus) / b.modulus) * b.modulus + b.remainder - 1);
      r = {min, max};
    }
  }
  return r;
}

bool isPureArg(const Definition &d, const FunctionContents &f, size_t i) {
  const auto *v = d.args[i].as<Variable>();
  return v && v->name == f.args[i];
}

// The region each stage of f computes, given the region of its last stage: as in Halide, every
// earlier stage also covers what the later ones read of f (a scan reads f(r - 1)) and write
// (f(r) = ... with r outside the consumers' region). Pure dimensions of a stage loop over its
// region; the others are written at their RDom's points.
std::vector<Box> stageRegions(const FunctionContents &f, const Box &last, CallBounds &funcValues) {
  std::vector<Box> regions(f.num_stages());
  regions.back() = last;
  for (int k = f.num_stages() - 1; k >= 1; --k) {
    const Definition &d = f.stage(k);
    const std::string stage = f.name + ".s" + std::to_string(k);
    Scope scope;
    for (size_t i = 0; i < f.args.size(); ++i)
      scope[f.args[i]] = regions[k][i];
    if (d.rdom)
      for (const ReductionVariable &rv : d.rdom->domain)
        scope[rv.var] = {rv.min, simplify(rv.min + rv.extent - 1)};
    Box touched = regions[k];
    for (size_t i = 0; i < d.args.size(); ++i) {
      if (isPureArg(d, f, i))
        continue;
      Interval b = bounds_of_expr_in_scope(d.args[i], scope, &funcValues);
      if (!b.is_bounded())
        throw CompileError("cannot infer the region of Func " + f.name + " written by update " + stage +
                           ": argument " + std::to_string(i) + " (" + to_string(d.args[i]) +
                           ") is unbounded; clamp it or give the Func a bound()");
      touched[i] = interval_union(touched[i], b);
    }
    std::vector<Expr> parts = d.args;
    parts.insert(parts.end(), d.values.begin(), d.values.end());
    if (d.predicate.defined())
      parts.push_back(d.predicate);
    for (const Expr &e : parts) {
      Box reads = box_touched(e, {f.name, true, false, &funcValues}, scope);
      for (size_t i = 0; i < reads.size() && i < touched.size(); ++i) {
        if (!reads[i].is_bounded())
          throw CompileError("cannot infer the region of Func " + f.name + " read by its update " + stage +
                             " in dimension " + f.args[i] + ": the coordinates are unbounded; clamp them");
        touched[i] = interval_union(touched[i], reads[i]);
      }
    }
    regions[k - 1] = touched;
  }
  return regions;
}

} // namespace

std::pair<Lets, Stmt> peel_lets(const Stmt &s) {
  Lets lets;
  Stmt body = s;
  while (const auto *let = body.as<LetStmt>()) {
    lets.emplace_back(let->name, let->value);
    body = let->body;
  }
  return {lets, body};
}

Stmt wrap_in_lets(const Lets &lets, Stmt body) {
  for (auto it = lets.rbegin(); it != lets.rend(); ++it)
    body = LetStmt::make(it->first, it->second, body);
  return body;
}

Stmt define_compute_bounds(const FunctionContents &f, const Stmt &produce, const Stmt &level, CallBounds &funcValues) {
  auto [lets, consumer] = peel_lets(level);
  const Box required = box_touched(consumer, {f.name, true, false, &funcValues});
  if (required.size() != f.args.size())
    throw CompileError("Func " + f.name + " is not used where it is computed");
  Box last = required;
  for (size_t i = 0; i < f.args.size(); ++i)
    if (const FunctionBound *b = findBound(f, f.args[i]))
      last[i] = {b->min, simplify(b->min + b->extent - 1)};
  std::vector<Box> regions = stageRegions(f, last, funcValues);

  std::vector<Stmt> checks;
  // bound_extent() and align_bounds() apply to what the consumers and the updates need; the last
  // stage computes that region, earlier ones also what the updates read over it.
  bool relative = false;
  for (size_t i = 0; i < f.args.size(); ++i)
    if (!findBound(f, f.args[i]) && hasRelativeBounds(f, f.args[i]) && required[i].is_bounded() &&
        regions[0][i].is_bounded()) {
      last[i] = relativeRegion(f, f.args[i], interval_union(required[i], regions[0][i]), &checks);
      relative = true;
    }
  if (relative)
    regions = stageRegions(f, last, funcValues);
  for (size_t i = 0; i < f.args.size(); ++i) {
    const std::string &v = f.args[i];
    if (const FunctionBound *b = findBound(f, v)) {
      // A bound fixes the region of every stage; what the consumers and the updates need must
      // lie inside it.
      Expr lo = b->min, hi = simplify(b->min + b->extent - 1);
      Interval needed = interval_union(required[i], regions[0][i]);
      if (needed.is_bounded())
        checks.push_back(AssertStmt::make(
            LE::make(lo, needed.min) && LE::make(needed.max, hi),
            "Func " + f.name + " is bound to [%, %] in " + v + " but its consumers need [%, %]",
            {lo, hi, needed.min, needed.max}));
      for (Box &r : regions)
        r[i] = {lo, hi};
    }
    for (int k = 0; k < f.num_stages(); ++k) {
      if (!regions[k][i].is_bounded())
        throw CompileError("cannot infer the region of Func " + f.name + " needed in dimension " + v +
                           ": its consumers' accesses are unbounded; clamp the coordinates or give " + f.name +
                           " a bound() on " + v);
      lets.emplace_back(stageVar(f, k, v, "min"), simplify(regions[k][i].min));
      lets.emplace_back(stageVar(f, k, v, "max"), simplify(regions[k][i].max));
    }
  }
  Stmt body = Block::make(produce, ProducerConsumer::make(f.name, false, consumer));
  return wrap_in_lets(lets, Block::make(Block::make(checks), body));
}

namespace {

// A storage extent in the leading lets' names, constant where their values make it one: a tile's
// producer stored at the tile's loop has a constant size (and strides) although its region's ends
// are not constants. The values are substituted innermost first while the expression stays small.
Expr storageExtent(const Interval &touched, const Lets &lets) {
  Expr extent = simplify(touched.max - touched.min + 1);
  Expr expanded = extent;
  for (auto it = lets.rbegin(); it != lets.rend() && !is_const(expanded); ++it) {
    if (!uses_variable(expanded, it->first))
      continue;
    expanded = simplify(substitute(it->first, it->second, expanded));
    if (has_more_nodes_than(expanded, MaxExpandedLetNodes))
      break;
  }
  return is_const(expanded) ? expanded : extent;
}

} // namespace

Stmt realize_with_bounds(const FunctionContents &f, const Stmt &level, CallBounds &funcValues) {
  auto [lets, body] = peel_lets(level);
  Box touched = box_touched(body, {f.name, true, true, &funcValues});
  if (touched.size() != f.args.size())
    throw CompileError("Func " + f.name + " is not used where it is stored");
  Region bounds;
  Lets storage;
  for (size_t i = 0; i < f.args.size(); ++i) {
    if (!touched[i].is_bounded())
      throw CompileError("cannot infer the storage of Func " + f.name + " in dimension " + f.args[i] +
                         ": accesses are unbounded");
    std::string min = buffer_field_name(f.name, "min", static_cast<int>(i));
    std::string extent = buffer_field_name(f.name, "extent", static_cast<int>(i));
    storage.emplace_back(min, simplify(touched[i].min));
    storage.emplace_back(extent, storageExtent(touched[i], lets));
    bounds.push_back({var(min), var(extent)});
  }
  lets.insert(lets.end(), storage.begin(), storage.end());
  return wrap_in_lets(lets, Realize::make(f.name, f.types, bounds, body, f.memory_type));
}

Stmt check_output_reads(const FunctionContents &output, const Stmt &consumer, CallBounds &funcValues) {
  const Box read = box_touched(consumer, {output.name, true, false, &funcValues});
  if (read.size() != output.args.size())
    return consumer;
  std::vector<Stmt> checks;
  for (size_t i = 0; i < read.size(); ++i) {
    if (!read[i].is_bounded())
      throw CompileError("cannot infer the region of output " + output.name + " read in dimension " + output.args[i] +
                         " by the pipeline's other outputs: the coordinates are unbounded; clamp them");
    const int last = output.num_stages() - 1;
    Expr min = var(stageVar(output, last, output.args[i], "min"));
    Expr max = var(stageVar(output, last, output.args[i], "max"));
    checks.push_back(AssertStmt::make(LE::make(min, read[i].min) && LE::make(read[i].max, max),
                                      "output " + output.name + " is computed over [%, %] in dimension " +
                                          std::to_string(i) + " (its buffer), but the pipeline's other outputs "
                                          "read it at [%, %]",
                                      {min, max, read[i].min, read[i].max}));
  }
  return Block::make(Block::make(checks), consumer);
}

void define_output_bounds(const FunctionContents &output, CallBounds &funcValues, Lets &lets,
                          std::vector<Stmt> &checks) {
  Box region;
  // A Tuple's buffers cover one region: the first buffer's.
  const size_t count = output.types.size();
  const std::string first = value_buffer_name(output.name, 0, count);
  for (size_t i = 0; i < output.args.size(); ++i) {
    const int dim = static_cast<int>(i);
    Expr min = var(buffer_field_name(first, "min", dim));
    Expr extent = var(buffer_field_name(first, "extent", dim));
    Expr max = min + extent - 1;
    for (size_t v = 1; v < count; ++v) {
      const std::string other = value_buffer_name(output.name, static_cast<int>(v), count);
      Expr otherMin = var(buffer_field_name(other, "min", dim));
      Expr otherExtent = var(buffer_field_name(other, "extent", dim));
      checks.push_back(AssertStmt::make(EQ::make(otherMin, min) && EQ::make(otherExtent, extent),
                                        "output buffer " + other + " covers [%, %] in dimension " +
                                            std::to_string(i) + " but output buffer " + first +
                                            " covers [%, %]: the buffers of a Tuple cover the same region",
                                        {otherMin, otherMin + otherExtent - 1, min, max}));
    }
    for (const FunctionBound &b : output.bounds) {
      if (b.var != output.args[i] || b.min.defined())
        continue;
      const std::string dimension = " in dimension " + std::to_string(i) + " but " + output.name;
      if (b.extent.defined()) {
        // The loops' extent is the bound's, constant where it is.
        checks.push_back(AssertStmt::make(EQ::make(max - min + 1, b.extent),
                                          "output buffer " + output.name + " has extent %" + dimension +
                                              " has bound_extent %",
                                          {max - min + 1, b.extent}));
        max = simplify(min + b.extent - 1);
      } else {
        checks.push_back(AssertStmt::make(EQ::make((min - b.remainder) % b.modulus, 0) &&
                                              EQ::make((max - min + 1) % b.modulus, 0),
                                          "output buffer " + output.name + " covers [%, %]" + dimension +
                                              " is aligned to % (plus %)",
                                          {min, max, b.modulus, b.remainder}));
      }
    }
    if (const FunctionBound *b = findBound(output, output.args[i])) {
      // A bound makes the region, and so the loops' extents, what it says (constant, where it
      // is, so the loops can be vectorized or unrolled): the buffer must be exactly that region.
      Expr lo = b->min, hi = simplify(b->min + b->extent - 1);
      checks.push_back(AssertStmt::make(EQ::make(min, lo) && EQ::make(max, hi),
                                        "output buffer " + output.name + " covers [%, %] in dimension " +
                                            std::to_string(i) + " but " + output.name + " is bound to [%, %]",
                                        {min, max, lo, hi}));
      min = lo;
      max = hi;
    }
    region.push_back({min, max});
    for (int k = 0; k < output.num_stages(); ++k) {
      lets.emplace_back(stageVar(output, k, output.args[i], "min"), min);
      lets.emplace_back(stageVar(output, k, output.args[i], "max"), max);
    }
  }
  // Every stage of the output computes its buffer's region; what its updates read or write of it
  // must lie inside.
  Box touched = stageRegions(output, region, funcValues)[0];
  for (size_t i = 0; i < output.args.size(); ++i) {
    const Interval &r = region[i];
    if (!equal(touched[i].min, r.min) || !equal(touched[i].max, r.max))
      checks.push_back(AssertStmt::make(LE::make(r.min, touched[i].min) && LE::make(touched[i].max, r.max),
                                        "output buffer " + output.name + " covers [%, %] in dimension " +
                                            std::to_string(i) + " but the updates of " + output.name +
                                            " read or write [%, %]",
                                        {r.min, r.max, touched[i].min, touched[i].max}));
  }
}

} // namespace ptxjit::lower
