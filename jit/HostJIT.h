#ifndef PTXJIT_JIT_HOSTJIT_H
#define PTXJIT_JIT_HOSTJIT_H

// The process's ORC JIT for host code. A pipeline's host code is compiled to a relocatable
// object (which the disk cache keeps) and linked into a JITDylib of its own, so that objects of
// equal pipelines, whose symbols have equal names, can be loaded side by side. The code stays
// until the last holder of its LinkedHostCode lets go. LLJIT is thread-safe; it is made once.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace llvm {
class DataLayout;
class LLVMContext;
class Module;
} // namespace llvm

namespace ptxjit::jit {

using PipelineFunction = int32_t (*)(void *context, void **args);

/// The target triple and data layout host modules are generated for (the data layout makes the
/// JIT).
std::string host_triple();
const llvm::DataLayout &host_data_layout();
/// The host's triple, CPU and features: host code is made for this machine's vector unit.
const std::string &host_machine();

/// Sets up the host code generation that compile_host_module will use on a thread of its own,
/// while the caller lowers the pipeline (LLVM's pass set-up does not depend on the module); the
/// destructor waits for that thread. Does nothing where the machine has one core or where that
/// set-up is ready from an earlier compile.
class HostCodeGenerationAhead {
public:
  HostCodeGenerationAhead();
  ~HostCodeGenerationAhead();
  HostCodeGenerationAhead(const HostCodeGenerationAhead &) = delete;
  HostCodeGenerationAhead &operator=(const HostCodeGenerationAhead &) = delete;

private:
  std::thread SetUp;
};

/// Makes a host module in `context`. compile_host_module compiles parts of a module on other
/// threads, each from the module made again in a context of its own (an LLVMContext is used by
/// one thread at a time, and making a module again costs less than copying it through bitcode).
using HostModuleMaker = std::function<std::unique_ptr<llvm::Module>(llvm::LLVMContext &)>;

/// Optimizes `module` for the host and compiles it to ELF relocatable objects: one, or, where
/// the machine has two cores and the module parts big enough (a pipeline and its parallel loop
/// bodies; functions marked optnone, compiled without optimization), one for each part,
/// compiled at once on threads of their own from copies `makeAgain` makes (they must define the
/// same functions). `optimized`, where given, sees each optimized part (on the thread that
/// compiles it). Changes `module`. Throws InternalError.
std::vector<std::string> compile_host_module(llvm::Module &module, const HostModuleMaker &makeAgain,
                                             const std::function<void(const llvm::Module &)> &optimized);

/// An object linked into the JIT: its pipeline function, and the slot its kernel launches read
/// their DeviceCode from (null on host-only pipelines). Unlinked on destruction.
class LinkedHostCode {
public:
  LinkedHostCode(PipelineFunction function, void **deviceCodeSlot, std::shared_ptr<void> dylib)
      : Function(function), DeviceCodeSlot(deviceCodeSlot), Dylib(std::move(dylib)) {}
  PipelineFunction function() const { return Function; }
  void **device_code_slot() const { return DeviceCodeSlot; }

private:
  PipelineFunction Function;
  void **DeviceCodeSlot;
  std::shared_ptr<void> Dylib;
};

/// Links `objects`, compiled for `dataLayout` (host_data_layout's text when they were made), into
/// one library and finds `functionName` in it (and, where `deviceCodeGlobal` is not empty, that
/// global). The first call of a process makes the JIT with that layout (sparing a TargetMachine
/// where all code comes from the compile cache). Throws InternalError naming `pipeline`, also
/// where the JIT has another layout.
LinkedHostCode link_host_objects(const std::vector<std::string> &objects, const std::string &functionName,
                                 const std::string &deviceCodeGlobal, const std::string &pipeline,
                                 const std::string &dataLayout);

} // namespace ptxjit::jit

#endif
