#include "InjectHostDeviceCopies.h"

#include "ir/IRPrinter.h"
#include "ir/IRVisitor.h"

#include <vector>

namespace ptxjit::lower {

using namespace ir;

namespace {

// The buffers a statement reads and writes, on the host and in kernels. Storage allocated inside
// a kernel is the kernel's own; storage allocated elsewhere inside the statement is left out when
// `withHostAllocations` is false (it is the statement's own).
class Accesses : public IRVisitor {
public:
  explicit Accesses(bool withHostAllocations) : WithHostAllocations(withHostAllocations) {}
  std::set<std::string> HostReads, HostWrites, DeviceReads, DeviceWrites;
  bool HasKernel = false;

private:
  bool WithHostAllocations;
  std::set<std::string> Own;
  int KernelDepth = 0;

  using IRVisitor::visit;
  void visit(const For *op) override {
    const bool kernel = op->for_type == ForType::GPUBlock && KernelDepth == 0;
    HasKernel = HasKernel || kernel;
    KernelDepth += kernel;
    IRVisitor::visit(op);
    KernelDepth -= kernel;
  }
  void visit(const Allocate *op) override {
    if (KernelDepth > 0 || !WithHostAllocations)
      Own.insert(op->name); // names of storage are unique in a pipeline
    IRVisitor::visit(op);
  }
  void visit(const Load *op) override {
    IRVisitor::visit(op);
    if (!Own.count(op->name))
      (KernelDepth ? DeviceReads : HostReads).insert(op->name);
  }
  void visit(const Store *op) override {
    IRVisitor::visit(op);
    if (!Own.count(op->name))
      (KernelDepth ? DeviceWrites : HostWrites).insert(op->name);
  }
};

class HostAllocations : public IRVisitor {
public:
  std::set<std::string> Names;

private:
  using IRVisitor::visit;
  void visit(const For *op) override {
    if (op->for_type != ForType::GPUBlock)
      IRVisitor::visit(op);
  }
  void visit(const Allocate *op) override {
    Names.insert(op->name);
    IRVisitor::visit(op);
  }
};

Stmt bufferCall(const char *intrinsic, const std::string &buffer) {
  return Evaluate::make(Call::make(Int(32), intrinsic, {Variable::make(UInt(64), buffer)}, Call::Intrinsic));
}

class Injector {
public:
  Injector(const BufferSides &sides, std::set<std::string> allocated)
      : Sides(sides), Allocated(std::move(allocated)) {}

  Stmt inject(const Stmt &s) {
    Accesses accesses(false);
    s.accept(&accesses);
    if (!accesses.HasKernel)
      return wrap(s, accesses.HostReads, accesses.HostWrites, Call::CopyToHost, Call::SetHostDirty);
    if (const auto *loop = s.as<For>()) {
      if (loop->for_type == ForType::GPUBlock)
        return wrap(s, accesses.DeviceReads, accesses.DeviceWrites, Call::CopyToDevice, Call::SetDeviceDirty);
      const size_t copiesBefore = Copies;
      Stmt body = inject(loop->body);
      if (loop->for_type == ForType::Parallel && Copies != copiesBefore)
        throw CompileError("loop " + loop->name + " is parallel on the host and launches GPU kernels that share "
                           "buffers with host code inside it; make it serial or schedule its Funcs on one side");
      return readsOnHost({loop->min, loop->extent},
                         For::make(loop->name, loop->min, loop->extent, loop->for_type, body));
    }
    if (const auto *block = s.as<Block>())
      return Block::make(inject(block->first), inject(block->rest));
    if (const auto *let = s.as<LetStmt>())
      return readsOnHost({let->value}, LetStmt::make(let->name, let->value, inject(let->body)));
    if (const auto *pc = s.as<ProducerConsumer>())
      return ProducerConsumer::make(pc->name, pc->is_producer, inject(pc->body));
    if (const auto *branch = s.as<IfThenElse>())
      return readsOnHost({branch->condition},
                         IfThenElse::make(branch->condition, inject(branch->then_case),
                                          branch->else_case.defined() ? inject(branch->else_case) : Stmt()));
    if (const auto *allocate = s.as<Allocate>()) {
      const bool host = Sides.host.count(allocate->name), device = Sides.device.count(allocate->name);
      const StorageSide side = host && device ? StorageSide::HostAndDevice
                               : device       ? StorageSide::Device
                                              : StorageSide::Host;
      return readsOnHost(allocate->extents, Allocate::make(allocate->name, allocate->type, allocate->extents,
                                                           inject(allocate->body), allocate->memory, side));
    }
    internal_error("inject_host_device_copies: a statement that launches kernels: " + to_string(s));
  }

private:
  const BufferSides &Sides;
  std::set<std::string> Allocated; // intermediates; the other buffers are the pipeline's arguments
  size_t Copies = 0;

  // Intermediates that only one side touches need no copies; inputs and outputs touched on the
  // host do, since the caller's newest copy may be on the device.
  bool tracked(const std::string &buffer) const {
    return Sides.host.count(buffer) && (Sides.device.count(buffer) || !Allocated.count(buffer));
  }

  Stmt wrap(const Stmt &s, const std::set<std::string> &reads, const std::set<std::string> &writes,
            const char *copy, const char *setDirty) {
    std::set<std::string> touched = reads;
    touched.insert(writes.begin(), writes.end());
    // Written buffers are copied too: a write of part of a buffer keeps the rest.
    Stmt result = s;
    for (const std::string &buffer : writes)
      if (tracked(buffer))
        result = Block::make(result, bufferCall(setDirty, buffer));
    for (auto it = touched.rbegin(); it != touched.rend(); ++it)
      if (tracked(*it)) {
        result = Block::make(bufferCall(copy, *it), result);
        ++Copies;
      }
    return result;
  }

  Stmt readsOnHost(const std::vector<Expr> &exprs, const Stmt &s) {
    Accesses accesses(false);
    for (const Expr &e : exprs)
      e.accept(&accesses);
    return wrap(s, accesses.HostReads, {}, Call::CopyToHost, Call::SetHostDirty);
  }
};

} // namespace

Stmt inject_host_device_copies(const Stmt &s, BufferSides *sides) {
  Accesses all(true);
  s.accept(&all);
  sides->host = all.HostReads;
  sides->host.insert(all.HostWrites.begin(), all.HostWrites.end());
  sides->device = all.DeviceReads;
  sides->device.insert(all.DeviceWrites.begin(), all.DeviceWrites.end());
  HostAllocations allocations;
  s.accept(&allocations);
  return Injector(*sides, std::move(allocations.Names)).inject(s);
}

} // namespace ptxjit::lower
