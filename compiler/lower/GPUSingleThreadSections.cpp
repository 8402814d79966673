#include "GPUSingleThreadSections.h"

#include "ir/IRMutator.h"
#include "ir/IRVisitor.h"

namespace ptxjit::lower {

using namespace ir;

namespace {

class StoresAndThreadLoops : public IRVisitor {
public:
  bool Stores = false, ThreadLoops = false, BlockLoops = false;

private:
  using IRVisitor::visit;
  void visit(const Store *op) override {
    Stores = true;
    IRVisitor::visit(op);
  }
  void visit(const For *op) override {
    ThreadLoops = ThreadLoops || op->for_type == ForType::GPUThread;
    BlockLoops = BlockLoops || op->for_type == ForType::GPUBlock;
    IRVisitor::visit(op);
  }
};

// One thread of the block: the loops nest as z, y, x, so each takes its own dimension.
Stmt oneThread(const Stmt &s) {
  Stmt result = s;
  for (const char *dim : {"x", "y", "z"})
    result = For::make(std::string("__single_thread.") + dim, 0, 1, ForType::GPUThread, result);
  return result;
}

// A statement at the block level of a kernel (or around its inner block loops).
Stmt atBlockLevel(const Stmt &s) {
  const auto *loop = s.as<For>();
  if (loop && loop->for_type == ForType::GPUThread)
    return s;
  StoresAndThreadLoops found;
  s.accept(&found);
  if (!found.Stores)
    return s;
  // A producer's statement stays outside the section: its barrier follows the section.
  if (const auto *pc = s.as<ProducerConsumer>())
    return ProducerConsumer::make(pc->name, pc->is_producer, atBlockLevel(pc->body));
  if (!found.ThreadLoops && !found.BlockLoops)
    return oneThread(s);
  if (const auto *block = s.as<Block>())
    return Block::make(atBlockLevel(block->first), atBlockLevel(block->rest));
  if (loop)
    return For::make(loop->name, loop->min, loop->extent, loop->for_type, atBlockLevel(loop->body));
  if (const auto *let = s.as<LetStmt>())
    return LetStmt::make(let->name, let->value, atBlockLevel(let->body));
  if (const auto *branch = s.as<IfThenElse>())
    return IfThenElse::make(branch->condition, atBlockLevel(branch->then_case),
                            branch->else_case.defined() ? atBlockLevel(branch->else_case) : Stmt());
  if (const auto *allocate = s.as<Allocate>())
    return Allocate::make(allocate->name, allocate->type, allocate->extents, atBlockLevel(allocate->body),
                          allocate->memory, allocate->side);
  internal_error("gpu_single_thread_sections: unexpected statement at block level");
}

class Kernels : public IRMutator {
  using IRMutator::visit;
  Stmt visit(const For *op) override {
    if (op->for_type != ForType::GPUBlock)
      return IRMutator::visit(op);
    return For::make(op->name, op->min, op->extent, op->for_type, atBlockLevel(op->body));
  }
};

} // namespace

Stmt gpu_single_thread_sections(const Stmt &s) { return Kernels().mutate(s); }

} // namespace ptxjit::lower
