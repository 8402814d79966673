#include "KernelClosure.h"

#include "ir/Constants.h"
#include "ir/GPULoops.h"
#include "ir/IRPrinter.h"
#include "ir/IRVisitor.h"
#include "ir/Simplify.h"
#include "ir/Substitute.h"

#include <algorithm>
#include <optional>

namespace ptxjit::codegen {

using namespace ir;

namespace {

class ClosureFinder : public IRVisitor {
public:
  explicit ClosureFinder(const std::string &kernel) : Kernel(kernel) {}
  const std::string &Kernel;
  std::map<std::string, KernelArgument> Buffers, Scalars;
  std::vector<const For *> Blocks;
  KernelClosure Result;

private:
  std::map<std::string, int> Bound;
  // The values of the lets inside the kernel, in terms of names outside it, for bounding sizes.
  std::map<std::string, Expr> LetValues;
  // The range of each loop variable inside the kernel, in terms of names outside it.
  Scope LoopRanges;
  int ThreadDepth = 0;

  using IRVisitor::visit;

  template <typename Body> void bind(const std::string &name, const Body &body) {
    ++Bound[name];
    body.accept(this);
    if (--Bound[name] == 0)
      Bound.erase(name);
  }

  // With the variables of the kernel's loops fixed first, where terms of one cancel (a tile's
  // clipped max - min), then over their ranges.
  std::optional<int64_t> constantUpperBound(const Expr &e) const {
    if (auto bound = constant_upper_bound(e))
      return bound;
    return constant_upper_bound(e, LoopRanges);
  }

  int64_t constantBound(const Expr &e, const std::string &what) {
    auto bound = constantUpperBound(simplify_for_bounds(substitute(LetValues, e)));
    if (!bound)
      throw CompileError("kernel " + Kernel + ": " + what + " (" + to_string(e) + ") has no constant upper bound; "
                         "split the loops by constant factors (e.g. gpu_tile)");
    return std::max<int64_t>(*bound, 1);
  }

  void visit(const Variable *op) override {
    if (!Bound.count(op->name))
      Scalars[op->name] = {op->name, false, op->type.element_of(), true, false};
  }
  void visit(const Load *op) override {
    IRVisitor::visit(op);
    if (Bound.count(op->name))
      return;
    KernelArgument &b = Buffers[op->name];
    b = {op->name, true, op->type.element_of(), true, b.written};
  }
  void visit(const Store *op) override {
    IRVisitor::visit(op);
    if (Bound.count(op->name))
      return;
    KernelArgument &b = Buffers[op->name];
    bool read = b.read;
    b = {op->name, true, op->value.type().element_of(), read, true};
  }
  void visit(const Let *op) override {
    op->value.accept(this);
    bind(op->name, op->body);
  }
  void visit(const LetStmt *op) override {
    op->value.accept(this);
    auto saved = LetValues.count(op->name) ? std::optional<Expr>(LetValues[op->name]) : std::nullopt;
    LetValues[op->name] = substitute(LetValues, op->value);
    bind(op->name, op->body);
    if (saved)
      LetValues[op->name] = *saved;
    else
      LetValues.erase(op->name);
  }
  void visit(const For *op) override {
    op->min.accept(this);
    op->extent.accept(this);
    auto saved = LetValues.count(op->name) ? std::optional<Expr>(LetValues[op->name]) : std::nullopt;
    LetValues.erase(op->name);
    // A range whose expressions grow past a size worth bounding stays unknown.
    Expr min = substitute(LetValues, op->min);
    Expr max = substitute(LetValues, Sub::make(Add::make(op->min, op->extent), make_const(op->min.type(), int64_t(1))));
    if (has_more_nodes_than(min, MaxExpandedLetNodes) || has_more_nodes_than(max, MaxExpandedLetNodes))
      LoopRanges.erase(op->name);
    else
      LoopRanges[op->name] = {bounds_of_expr_in_scope(simplify_for_bounds(min), LoopRanges).min,
                              bounds_of_expr_in_scope(simplify_for_bounds(max), LoopRanges).max};
    if (op->for_type == ForType::GPUBlock) {
      if (ThreadDepth > 0)
        throw CompileError("kernel " + Kernel + ": gpu_blocks loop " + op->name + " is inside a gpu_threads loop");
      Blocks.push_back(op);
      bind(op->name, op->body);
    } else if (op->for_type == ForType::GPUThread) {
      ++ThreadDepth;
      bind(op->name, op->body);
      --ThreadDepth;
      int dim = Result.thread_dims.at(op);
      if (dim > 2)
        throw CompileError("kernel " + Kernel + " nests more than three gpu_threads loops (" + op->name + ")");
      Result.block_size[dim] = std::max(Result.block_size[dim], constantBound(op->extent, "the extent of gpu_threads loop " + op->name));
    } else {
      if (op->for_type == ForType::Parallel)
        throw CompileError("kernel " + Kernel + ": loop " + op->name + " is parallel inside a GPU kernel");
      bind(op->name, op->body);
    }
    LoopRanges.erase(op->name);
    if (saved)
      LetValues[op->name] = *saved;
  }
  void visit(const Allocate *op) override {
    // Registers at block level hold each thread's own slice (lower/GPURegisterSlices.h).
    if (ThreadDepth == 0 && op->memory != MemoryType::Register) {
      sharedAllocation(op);
    } else {
      int64_t elements = 1;
      for (const Expr &extent : op->extents)
        elements *= constantBound(extent, "the extent of Func " + op->name + "'s storage");
      constexpr int64_t MaxRegisterElements = 1024;
      if (elements > MaxRegisterElements)
        throw CompileError("kernel " + Kernel + ": Func " + op->name + " needs " + std::to_string(elements) +
                           " elements in each thread; at most " + std::to_string(MaxRegisterElements) +
                           " fit a thread's registers and local memory here");
      Result.registers[op->name] = elements;
    }
    for (const Expr &extent : op->extents)
      extent.accept(this);
    bind(op->name, op->body);
  }

  // Bounds over all blocks and all iterations of the loops inside the kernel: the largest size
  // the storage takes, found before the kernel runs.
  void sharedAllocation(const Allocate *op) {
    Expr bytes = make_const(Int(64), int64_t(op->type.is_bool() ? 1 : op->type.bytes()));
    for (const Expr &extent : op->extents) {
      // Differences taken apart: a tile's extent, max(min(t + 63, end), ...) - min(t, ...), is
      // bounded by the tile, not by the image it is clipped to.
      Expr e = split_differences(simplify_for_bounds(substitute(LetValues, extent)), 4);
      Expr bound;
      if (auto c = constantUpperBound(e))
        bound = make_const(Int(64), std::max<int64_t>(*c, 1));
      else if (Expr max = bounds_of_expr_in_scope(e, LoopRanges).max; max.defined())
        bound = simplify(Max::make(Cast::make(Int(64), max), make_const(Int(64), int64_t(1))));
      std::string inner;
      for (const auto &[name, count] : Bound)
        if (bound.defined() && uses_variable(bound, name))
          inner = name;
      if (!bound.defined() || !inner.empty())
        throw CompileError("kernel " + Kernel + ": the extent of Func " + op->name + "'s shared storage (" +
                           to_string(extent) + ") has no bound known before the kernel runs" +
                           (inner.empty() ? "" : " (it depends on " + inner + ", computed inside the kernel)") +
                           "; split the loops by constant factors (e.g. gpu_tile)");
      bytes = simplify(Mul::make(bytes, bound));
    }
    bytes.accept(this); // what the size depends on is passed to the kernel
    Shared.push_back({op->name, Expr(), bytes});
  }

public:
  std::vector<SharedAllocation> Shared; // in the order found; offsets come after
};

// Constant sizes first, so that their offsets are constants in the kernel; each offset 16-byte
// aligned, the alignment of the widest vector access.
void assignSharedOffsets(std::vector<SharedAllocation> shared, KernelClosure &closure) {
  std::stable_partition(shared.begin(), shared.end(), [](const SharedAllocation &s) { return is_const(s.bytes); });
  Expr end = make_const(Int(64), int64_t(0));
  const Expr alignment = make_const(Int(64), int64_t(16));
  for (SharedAllocation &s : shared) {
    s.offset = simplify(Mul::make(Div::make(Add::make(end, make_const(Int(64), int64_t(15))), alignment), alignment));
    end = simplify(Add::make(s.offset, s.bytes));
    closure.shared.push_back(s);
  }
  closure.shared_bytes = end;
}

} // namespace

KernelClosure kernel_closure(const For *nest) {
  ClosureFinder finder(nest->name);
  finder.Result.thread_dims = gpu_thread_dimensions(Stmt(nest));
  nest->accept(&finder);
  if (finder.Blocks.size() > 3)
    throw CompileError("kernel " + nest->name + " has " + std::to_string(finder.Blocks.size()) +
                       " gpu_blocks loops; a grid has at most 3 dimensions");
  KernelClosure closure = std::move(finder.Result);
  assignSharedOffsets(std::move(finder.Shared), closure);
  for (auto &[name, b] : finder.Buffers) {
    finder.Scalars.erase(name);
    closure.arguments.push_back(b);
  }
  for (auto &[name, s] : finder.Scalars)
    closure.arguments.push_back(s);
  closure.block_loops.assign(finder.Blocks.rbegin(), finder.Blocks.rend());
  return closure;
}

} // namespace ptxjit::codegen
