#include "BoundsInference.h"

#include "BoxesTouched.h"
#include "ir/Constants.h"
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

const FunctionBound *findBound(const FunctionContents &f, const std::string &v) {
  for (auto it = f.bounds.rbegin(); it != f.bounds.rend(); ++it)
    if (it->var == v)
      return &*it;
  return nullptr;
}

// The intervals update stages write in dimensions indexed by something other than their pure
// Var, with RVars over their domains and pure Vars over `region`.
Box updateWrites(const FunctionContents &f, const Box &region) {
  Box writes(f.args.size());
  std::vector<bool> touched(f.args.size(), false);
  for (int k = 1; k < f.num_stages(); ++k) {
    const Definition &d = f.stage(k);
    Scope scope;
    for (size_t i = 0; i < f.args.size(); ++i)
      if (i < region.size())
        scope[f.args[i]] = region[i];
    if (d.rdom)
      for (const ReductionVariable &rv : d.rdom->domain)
        scope[rv.var] = {rv.min, simplify(rv.min + rv.extent - 1)};
    for (size_t i = 0; i < d.args.size(); ++i) {
      if (const auto *v = d.args[i].as<Variable>(); v && v->name == f.args[i])
        continue;
      Interval b = bounds_of_expr_in_scope(d.args[i], scope);
      if (!b.is_bounded())
        throw CompileError("cannot infer the region of Func " + f.name + " written by update " + f.name + ".s" +
                           std::to_string(k) + ": argument " + std::to_string(i) + " (" + to_string(d.args[i]) +
                           ") is unbounded; clamp it or give the Func a bound()");
      writes[i] = touched[i] ? interval_union(writes[i], b) : b;
      touched[i] = true;
    }
  }
  for (size_t i = 0; i < writes.size(); ++i)
    if (!touched[i])
      writes[i] = Interval::everything();
  return writes;
}

std::vector<bool> writtenDims(const FunctionContents &f) {
  std::vector<bool> written(f.args.size(), false);
  for (int k = 1; k < f.num_stages(); ++k)
    for (size_t i = 0; i < f.args.size(); ++i) {
      const auto *v = f.stage(k).args[i].as<Variable>();
      written[i] = written[i] || !v || v->name != f.args[i];
    }
  return written;
}

} // namespace

Stmt define_compute_bounds(const FunctionContents &f, const Stmt &produceConsume, const Stmt &consumer) {
  Box required = box_touched(consumer, {f.name, true, false});
  if (required.size() != f.args.size())
    throw CompileError("Func " + f.name + " is not used where it is computed");
  Box writes = updateWrites(f, required);
  std::vector<bool> written = writtenDims(f);

  std::vector<std::pair<std::string, Expr>> lets;
  std::vector<Stmt> checks;
  for (size_t i = 0; i < f.args.size(); ++i) {
    const std::string &v = f.args[i];
    Interval region = required[i];
    if (written[i])
      region = interval_union(region, writes[i]);
    if (const FunctionBound *b = findBound(f, v)) {
      Expr lo = b->min, hi = simplify(b->min + b->extent - 1);
      if (required[i].is_bounded())
        checks.push_back(AssertStmt::make(
            LE::make(lo, required[i].min) && LE::make(required[i].max, hi),
            "Func " + f.name + " is bound to [%, %] in " + v + " but its consumers need [%, %]",
            {lo, hi, required[i].min, required[i].max}));
      region = {lo, hi};
    }
    if (!region.is_bounded())
      throw CompileError("cannot infer the region of Func " + f.name + " needed in dimension " + v +
                         ": its consumers' accesses are unbounded; clamp the coordinates or give " + f.name +
                         " a bound() on " + v);
    lets.emplace_back(stageVar(f, 0, v, "min"), simplify(region.min));
    lets.emplace_back(stageVar(f, 0, v, "max"), simplify(region.max));
    for (int k = 1; k < f.num_stages(); ++k) {
      lets.emplace_back(stageVar(f, k, v, "min"), var(stageVar(f, 0, v, "min")));
      lets.emplace_back(stageVar(f, k, v, "max"), var(stageVar(f, 0, v, "max")));
    }
  }
  Stmt body = Block::make(Block::make(checks), produceConsume);
  for (auto it = lets.rbegin(); it != lets.rend(); ++it)
    body = LetStmt::make(it->first, it->second, body);
  return body;
}

Stmt realize_with_bounds(const FunctionContents &f, const Stmt &body) {
  Box touched = box_touched(body, {f.name, true, true});
  if (touched.size() != f.args.size())
    throw CompileError("Func " + f.name + " is not used where it is stored");
  Region bounds;
  std::vector<std::pair<std::string, Expr>> lets;
  for (size_t i = 0; i < f.args.size(); ++i) {
    if (!touched[i].is_bounded())
      throw CompileError("cannot infer the storage of Func " + f.name + " in dimension " + f.args[i] +
                         ": accesses are unbounded");
    std::string min = buffer_field_name(f.name, "min", static_cast<int>(i));
    std::string extent = buffer_field_name(f.name, "extent", static_cast<int>(i));
    lets.emplace_back(min, simplify(touched[i].min));
    // From both bounds, not the min's let: min(...) + 31 - min(...) simplifies to a constant
    // extent (a shifted tile), which makes the storage's strides constant.
    lets.emplace_back(extent, simplify(touched[i].max - touched[i].min + 1));
    bounds.push_back({var(min), var(extent)});
  }
  Stmt result = Realize::make(f.name, f.type, bounds, body, f.memory_type);
  for (auto it = lets.rbegin(); it != lets.rend(); ++it)
    result = LetStmt::make(it->first, it->second, result);
  return result;
}

Stmt define_output_bounds(const FunctionContents &output, const Stmt &s, const std::vector<Stmt> &scheduleChecks) {
  std::vector<std::pair<std::string, Expr>> lets;
  Box region;
  for (size_t i = 0; i < output.args.size(); ++i) {
    Expr min = var(buffer_field_name(output.name, "min", static_cast<int>(i)));
    Expr max = min + var(buffer_field_name(output.name, "extent", static_cast<int>(i))) - 1;
    region.push_back({min, max});
    for (int k = 0; k < output.num_stages(); ++k) {
      lets.emplace_back(stageVar(output, k, output.args[i], "min"), min);
      lets.emplace_back(stageVar(output, k, output.args[i], "max"), max);
    }
  }
  std::vector<Stmt> checks = scheduleChecks;
  Box writes = updateWrites(output, region);
  std::vector<bool> written = writtenDims(output);
  for (size_t i = 0; i < output.args.size(); ++i) {
    const Interval &r = region[i];
    if (written[i])
      checks.push_back(AssertStmt::make(LE::make(r.min, writes[i].min) && LE::make(writes[i].max, r.max),
                                        "output buffer " + output.name + " covers [%, %] in dimension " +
                                            std::to_string(i) + " but the updates of " + output.name +
                                            " write [%, %]",
                                        {r.min, r.max, writes[i].min, writes[i].max}));
    if (const FunctionBound *b = findBound(output, output.args[i])) {
      Expr hi = b->min + b->extent - 1;
      checks.push_back(AssertStmt::make(LE::make(b->min, r.min) && LE::make(r.max, hi),
                                        "output buffer " + output.name + " covers [%, %] in dimension " +
                                            std::to_string(i) + " but " + output.name + " is bound to [%, %]",
                                        {r.min, r.max, b->min, hi}));
    }
  }
  Stmt body = Block::make(Block::make(checks), s);
  for (auto it = lets.rbegin(); it != lets.rend(); ++it)
    body = LetStmt::make(it->first, it->second, body);
  return body;
}

} // namespace ptxjit::lower
