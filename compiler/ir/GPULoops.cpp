#include "GPULoops.h"

#include "IRVisitor.h"

#include <algorithm>

namespace ptxjit::ir {

namespace {

class ThreadDimensions : public IRVisitor {
public:
  std::map<const For *, int> Dimensions;

private:
  int InnerDimension = -1; // the largest dimension among the thread loops inside the current one

  using IRVisitor::visit;
  void visit(const For *op) override {
    if (op->for_type != ForType::GPUThread) {
      IRVisitor::visit(op);
      return;
    }
    int outer = InnerDimension;
    InnerDimension = -1;
    IRVisitor::visit(op);
    int dimension = InnerDimension + 1;
    Dimensions[op] = dimension;
    InnerDimension = std::max(outer, dimension);
  }
};

} // namespace

std::map<const For *, int> gpu_thread_dimensions(const Stmt &s) {
  ThreadDimensions finder;
  s.accept(&finder);
  return finder.Dimensions;
}

} // namespace ptxjit::ir
