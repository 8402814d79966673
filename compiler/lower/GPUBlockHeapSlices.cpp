#include "GPUBlockHeapSlices.h"

#include "RewriteFuncAccesses.h"
#include "ir/Constants.h"
#include "ir/IRMutator.h"
#include "ir/IRPrinter.h"
#include "ir/IRVisitor.h"
#include "ir/ScopedEntry.h"
#include "ir/Simplify.h"
#include "ir/Substitute.h"

#include <optional>

namespace ptxjit::lower {

using namespace ir;

namespace {

std::string blockIndexName(const std::string &loop) { return loop + ".block_index"; }

int blockLoopsIn(const Stmt &s) {
  struct Counter : IRVisitor {
    int Count = 0;
    using IRVisitor::visit;
    void visit(const For *op) override {
      Count += op->for_type == ForType::GPUBlock;
      IRVisitor::visit(op);
    }
  } counter;
  s.accept(&counter);
  return counter.Count;
}

// Each access of the Func moved to its block's slice: the indices from the tile's min, the
// block's linear index last.
class SliceAccesses : public RewriteFuncAccesses {
public:
  SliceAccesses(const std::string &func, const Region &tile, Expr block)
      : RewriteFuncAccesses(func), Tile(tile), Block(std::move(block)) {}

private:
  const Region &Tile;
  Expr Block;

  std::vector<Expr> coordinates(std::vector<Expr> args) override {
    for (size_t d = 0; d < args.size(); ++d)
      args[d] = Sub::make(args[d], Tile[d].min);
    args.push_back(Block);
    return args;
  }
};

class BlockHeapSlices : public IRMutator {
  struct BlockLoop {
    std::string name;
    Expr min, extent; // written out in names outside the kernel
  };
  struct Hoisted {
    std::string name;
    std::vector<Type> types;
    std::vector<Expr> extents; // in names outside the kernel
  };
  std::map<std::string, Expr> LetValues; // the lets around the code, written out (size-limited)
  std::vector<BlockLoop> Blocks;         // the block loops around the code, outermost first
  std::vector<std::string> KernelNames;  // the lets and loops of the kernel around the code
  Scope LargeLetRanges;                   // bounds of the kernel's lets too large to write out
  int KernelBlockLoops = 0, ThreadDepth = 0;
  std::vector<Hoisted> Slices; // of the kernel being mutated
  Expr GridSize;               // its number of blocks, in names outside it

  using IRMutator::visit;

  Expr expand(const Expr &e) const { return substitute(LetValues, e); }

  Stmt visit(const LetStmt *op) override {
    ScopedEntry<Expr> entry(LetValues, op->name);
    Expr value = expand(op->value);
    if (has_more_nodes_than(value, MaxExpandedLetNodes))
      LetValues.erase(op->name);
    else
      LetValues[op->name] = value;
    if (Blocks.empty())
      return IRMutator::visit(op);
    ScopedEntry<Interval> range(LargeLetRanges, op->name);
    LargeLetRanges.erase(op->name);
    if (!LetValues.count(op->name))
      LargeLetRanges[op->name] = bounds_of_expr_in_scope(value, kernelScope());
    KernelNames.push_back(op->name);
    Stmt result = IRMutator::visit(op);
    KernelNames.pop_back();
    return result;
  }

  // The block loops' ranges and the large lets' bounds, in names outside the kernel.
  Scope kernelScope() const {
    Scope scope = LargeLetRanges;
    for (const BlockLoop &b : Blocks)
      scope[b.name] = {b.min, simplify(Sub::make(Add::make(b.min, b.extent), make_one(Int(32))))};
    return scope;
  }

  // A bound of a tile's extent over every block, in names outside the kernel: a constant where
  // one bounds it, else an expression the host computes before the launch (an image's height).
  Expr sliceExtent(const std::string &func, const Expr &extent) const {
    Expr e = simplify_for_bounds(expand(extent));
    if (auto bound = constant_upper_bound(e))
      return make_const(Int(32), std::max<int64_t>(*bound, 1));
    Expr bound = bounds_of_expr_in_scope(e, kernelScope()).max;
    if (bound.defined())
      bound = simplify(bound);
    for (const std::string &name : KernelNames)
      if (bound.defined() && uses_variable(bound, name))
        bound = Expr();
    if (!bound.defined())
      throw CompileError("Func " + func + " is stored in the heap at a gpu_blocks loop, where each block takes "
                         "a slice of one allocation, but its extent " + to_string(extent) +
                         " has no bound outside the kernel; split the loops by constant factors (e.g. gpu_tile)");
    return simplify(Max::make(bound, make_one(Int(32))));
  }

  Stmt visit(const For *op) override {
    ScopedEntry<Expr> entry(LetValues, op->name);
    LetValues.erase(op->name);
    const bool kernel = op->for_type == ForType::GPUBlock && Blocks.empty();
    if (kernel) {
      KernelBlockLoops = blockLoopsIn(Stmt(op));
      Slices.clear();
    }
    if (op->for_type == ForType::GPUBlock)
      Blocks.push_back({op->name, expand(op->min), expand(op->extent)});
    const bool inKernel = !Blocks.empty();
    if (inKernel)
      KernelNames.push_back(op->name);
    ThreadDepth += op->for_type == ForType::GPUThread;
    Stmt result = IRMutator::visit(op);
    ThreadDepth -= op->for_type == ForType::GPUThread;
    if (inKernel)
      KernelNames.pop_back();
    // The block's index under a name of its own: a split's let may rebind the loop's name.
    if (op->for_type == ForType::GPUBlock) {
      const auto *loop = result.as<For>();
      result = For::make(loop->name, loop->min, loop->extent, loop->for_type,
                         LetStmt::make(blockIndexName(op->name), Variable::make(Int(32), op->name), loop->body));
    }
    if (op->for_type == ForType::GPUBlock)
      Blocks.pop_back();
    if (!kernel)
      return result;
    // The slices of every block, around the kernel: the grid's size, from its loops' extents.
    for (const Hoisted &h : Slices) {
      Region bounds;
      for (const Expr &e : h.extents)
        bounds.push_back({make_zero(Int(32)), e});
      bounds.push_back({make_zero(Int(32)), GridSize});
      result = Realize::make(h.name, h.types, bounds, result, MemoryType::Heap);
    }
    Slices.clear();
    return result;
  }

  Stmt visit(const Realize *op) override {
    if (Blocks.empty() || ThreadDepth > 0 || op->memory != MemoryType::Heap)
      return IRMutator::visit(op);
    if (static_cast<int>(Blocks.size()) != KernelBlockLoops)
      throw CompileError("Func " + op->name + " is stored in the heap at gpu_blocks loop " + Blocks.back().name +
                         ", outside the kernel's inner block loops: blocks would share it; store it at the "
                         "innermost gpu_blocks loop");
    Hoisted h{op->name, op->types, {}};
    for (const Range &r : op->bounds)
      h.extents.push_back(sliceExtent(op->name, r.extent));
    // The block's linear index, x fastest: the innermost block loop varies fastest.
    Expr block = make_zero(Int(32)), stride = make_one(Int(32));
    for (auto it = Blocks.rbegin(); it != Blocks.rend(); ++it) {
      block = Add::make(block, Mul::make(Sub::make(Variable::make(Int(32), blockIndexName(it->name)), it->min), stride));
      stride = Mul::make(stride, it->extent);
    }
    GridSize = simplify(stride);
    Slices.push_back(h);
    return mutate(SliceAccesses(op->name, op->bounds, simplify(block)).mutate(op->body));
  }
};

} // namespace

Stmt gpu_block_heap_slices(const Stmt &s) { return BlockHeapSlices().mutate(s); }

} // namespace ptxjit::lower
