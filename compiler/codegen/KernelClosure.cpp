#include "KernelClosure.h"

#include "ir/IRVisitor.h"

#include <algorithm>
#include <map>
#include <set>

namespace ptxjit::codegen {

using namespace ir;

namespace {

class ClosureFinder : public IRVisitor {
public:
  std::map<std::string, KernelArgument> Buffers, Scalars;
  std::vector<const For *> Blocks, Threads;
  const std::string &Kernel;
  explicit ClosureFinder(const std::string &kernel) : Kernel(kernel) {}

private:
  std::map<std::string, int> Bound;
  int ThreadDepth = 0;
  bool SawThreads = false;

  using IRVisitor::visit;

  template <typename Body> void bind(const std::string &name, const Body &body) {
    ++Bound[name];
    body.accept(this);
    if (--Bound[name] == 0)
      Bound.erase(name);
  }

  void visit(const Variable *op) override {
    if (!Bound.count(op->name))
      Scalars[op->name] = {op->name, false, op->type.element_of(), true, false};
  }
  void visit(const Load *op) override {
    IRVisitor::visit(op);
    KernelArgument &b = Buffers[op->name];
    b = {op->name, true, op->type.element_of(), true, b.written};
  }
  void visit(const Store *op) override {
    IRVisitor::visit(op);
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
    bind(op->name, op->body);
  }
  void visit(const For *op) override {
    op->min.accept(this);
    op->extent.accept(this);
    if (op->for_type == ForType::GPUBlock) {
      if (ThreadDepth > 0)
        throw CompileError("kernel " + Kernel + ": gpu_blocks loop " + op->name + " is inside a gpu_threads loop");
      if (SawThreads)
        throw CompileError("kernel " + Kernel + ": gpu_blocks loop " + op->name +
                           " comes after the kernel's gpu_threads loops");
      Blocks.push_back(op);
    } else if (op->for_type == ForType::GPUThread) {
      SawThreads = true;
      Threads.push_back(op);
      ++ThreadDepth;
    } else if (op->for_type == ForType::Parallel) {
      throw CompileError("kernel " + Kernel + ": loop " + op->name + " is parallel inside a GPU kernel");
    }
    bind(op->name, op->body);
    if (op->for_type == ForType::GPUThread)
      --ThreadDepth;
  }
  void visit(const Allocate *op) override {
    throw CompileError("kernel " + Kernel + ": Func " + op->name +
                       " is computed inside the kernel; storage in shared memory or registers is not supported "
                       "yet, compute it at root");
  }
};

} // namespace

KernelClosure kernel_closure(const For *nest) {
  ClosureFinder finder(nest->name);
  nest->accept(&finder);
  if (finder.Blocks.size() > 3)
    throw CompileError("kernel " + nest->name + " has " + std::to_string(finder.Blocks.size()) +
                       " gpu_blocks loops; a grid has at most 3 dimensions");
  if (finder.Threads.size() > 3)
    throw CompileError("kernel " + nest->name + " has " + std::to_string(finder.Threads.size()) +
                       " gpu_threads loops; a block has at most 3 dimensions (and each loop must be nested "
                       "in the one before)");
  KernelClosure closure;
  for (auto &[name, b] : finder.Buffers) {
    finder.Scalars.erase(name);
    closure.arguments.push_back(b);
  }
  for (auto &[name, s] : finder.Scalars)
    closure.arguments.push_back(s);
  closure.block_loops.assign(finder.Blocks.rbegin(), finder.Blocks.rend());
  closure.thread_loops.assign(finder.Threads.rbegin(), finder.Threads.rend());
  return closure;
}

} // namespace ptxjit::codegen
