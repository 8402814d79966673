#include "CheckGPUSchedules.h"

#include "ir/IRVisitor.h"

namespace ptxjit::lower {

using namespace ir;

namespace {

std::string funcOfLoop(const std::string &loop) { return loop.substr(0, loop.find('.')); }

class Checker : public IRVisitor {
public:
  explicit Checker(const Target &target) : TheTarget(target), CUDA(target.has_gpu_feature()) {}

private:
  const Target &TheTarget;
  bool CUDA;
  int BlockDepth = 0, ThreadDepth = 0;

  using IRVisitor::visit;

  void visit(const For *op) override {
    if (is_gpu(op->for_type) && !CUDA)
      throw CompileError("loop " + op->name + " of Func " + funcOfLoop(op->name) + " is scheduled " +
                         (op->for_type == ForType::GPUBlock ? "gpu_blocks" : "gpu_threads") + ", but target " +
                         TheTarget.to_string() + " has no cuda feature");
    if (op->for_type == ForType::GPUBlock && ThreadDepth > 0)
      throw CompileError("Func " + funcOfLoop(op->name) + ": gpu_blocks loop " + op->name +
                         " is inside a gpu_threads loop; block loops must be outside thread loops");
    if (op->for_type == ForType::GPUThread && BlockDepth == 0)
      throw CompileError("Func " + funcOfLoop(op->name) + ": gpu_threads loop " + op->name +
                         " is not inside a gpu_blocks loop");
    if (op->for_type == ForType::Parallel && BlockDepth > 0)
      throw CompileError("Func " + funcOfLoop(op->name) + ": loop " + op->name + " is parallel inside a GPU kernel");
    BlockDepth += op->for_type == ForType::GPUBlock;
    ThreadDepth += op->for_type == ForType::GPUThread;
    IRVisitor::visit(op);
    BlockDepth -= op->for_type == ForType::GPUBlock;
    ThreadDepth -= op->for_type == ForType::GPUThread;
  }

  // Inside a kernel, a Func stored at a gpu_blocks loop lives in shared memory, or where asked in
  // registers (each thread its own slice) or device memory (each block its own slice); one
  // stored inside gpu_threads loops in each thread's registers.
  void visit(const Realize *op) override {
    MemoryType m = op->memory;
    auto reject = [&](const std::string &why) {
      throw CompileError("Func " + op->name + " is stored in " + why);
    };
    if (ThreadDepth > 0 && m != MemoryType::Auto && m != MemoryType::Register)
      reject(std::string(m == MemoryType::GPUShared ? "shared memory" : "the heap") +
             " but computed inside a gpu_threads loop, where only registers can hold it");
    if (BlockDepth == 0 && (m == MemoryType::GPUShared || m == MemoryType::Register))
      reject(std::string(m == MemoryType::Register ? "registers" : "shared memory") +
             " but computed outside any GPU kernel; compute it at a gpu_blocks or gpu_threads loop");
    IRVisitor::visit(op);
  }
};

} // namespace

void check_gpu_schedules(const Stmt &s, const Target &target) {
  Checker checker(target);
  s.accept(&checker);
}

} // namespace ptxjit::lower
