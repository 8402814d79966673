#include "HostJIT.h"

#include "RuntimeInterface.h"
#include "codegen/LLVMOptimizer.h"
#include "ptxjit/Error.h"

#include <llvm/ExecutionEngine/Orc/CompileUtils.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/ExecutorProcessControl.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/TaskDispatch.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/OptBisect.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>

#include <atomic>
#include <cstdio>
#include <mutex>

namespace ptxjit::jit {

namespace {

std::string describe(llvm::Error error) {
  std::string message;
  llvm::handleAllErrors(std::move(error), [&](const llvm::ErrorInfoBase &e) { message += e.message(); });
  return message;
}

struct JITState {
  std::unique_ptr<llvm::orc::LLJIT> JIT;
  std::unique_ptr<llvm::orc::JITTargetMachineBuilder> Builder;
  std::mutex MachineMutex; // guards Machine: a TargetMachine is not thread-safe
  /// Made on first compile: a process whose pipelines all come from the compile cache needs none
  /// (making it is half a millisecond of a cached first realize).
  std::unique_ptr<llvm::TargetMachine> Machine;
  std::string Triple, HostMachine;

  /// The target machine; the caller holds MachineMutex.
  llvm::TargetMachine &machine() {
    if (!Machine) {
      auto made = Builder->createTargetMachine();
      if (!made)
        throw InternalError("cannot create the host target machine: " + describe(made.takeError()));
      Machine = std::move(*made);
    }
    return *Machine;
  }
};

JITState &state() {
  static JITState *instance = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    auto *s = new JITState;
    auto builder = llvm::orc::JITTargetMachineBuilder::detectHost();
    if (!builder)
      throw InternalError("cannot describe the host for the JIT: " + describe(builder.takeError()));
    builder->setCodeGenOptLevel(llvm::CodeGenOptLevel::Default);
    s->Builder = std::make_unique<llvm::orc::JITTargetMachineBuilder>(*builder);
    s->Triple = builder->getTargetTriple().str();
    s->HostMachine = s->Triple + ' ' + builder->getCPU() + ' ' + builder->getFeatures().getString();
    // Pipelines compile on the threads that realize them (an in-place task dispatcher, not a
    // thread started for each compile), and the session must expect concurrent lookups.
    auto processControl = llvm::orc::SelfExecutorProcessControl::Create(nullptr, std::make_unique<llvm::orc::InPlaceTaskDispatcher>());
    if (!processControl)
      throw InternalError("cannot create the host process control for the JIT: " + describe(processControl.takeError()));
    auto jit = llvm::orc::LLJITBuilder()
                   .setJITTargetMachineBuilder(*builder)
                   .setExecutorProcessControl(std::move(*processControl))
                   .setSupportConcurrentCompilation(true)
                   .create();
    if (!jit)
      throw InternalError("cannot create the host JIT: " + describe(jit.takeError()));
    s->JIT = std::move(*jit);
    llvm::orc::JITDylib &main = s->JIT->getMainJITDylib();
    auto &es = s->JIT->getExecutionSession();
    llvm::orc::SymbolMap runtime;
    auto define = [&](const char *name, void *address) {
      runtime[es.intern(name)] = {llvm::orc::ExecutorAddr::fromPtr(address), llvm::JITSymbolFlags::Exported};
    };
#define PTXJIT_RUNTIME_FUNCTION(result, name, parameters) define(#name, reinterpret_cast<void *>(&name));
#include "RuntimeFunctions.def"
#undef PTXJIT_RUNTIME_FUNCTION
    if (auto error = main.define(llvm::orc::absoluteSymbols(std::move(runtime))))
      throw InternalError("cannot define the runtime for the JIT: " + describe(std::move(error)));
    // The C library (tanhf, memcpy, ...) and libraries loaded later (the vector math library,
    // codegen::load_vector_math_library) come from the process.
    auto process = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
        s->JIT->getDataLayout().getGlobalPrefix());
    if (!process)
      throw InternalError("cannot search the process for symbols: " + describe(process.takeError()));
    main.addGenerator(std::move(*process));
    return s;
  }();
  return *instance;
}

} // namespace

std::string host_triple() { return state().Triple; }

const std::string &host_machine() { return state().HostMachine; }

const llvm::DataLayout &host_data_layout() { return state().JIT->getDataLayout(); }

void optimize_host_module(llvm::Module &module) {
  JITState &s = state();
  std::lock_guard<std::mutex> lock(s.MachineMutex);
  codegen::optimize_module(module, s.machine(), codegen::PassSelection::FastCompile);
}

namespace {

/// Leaves loop strength reduction out of host code generation. Lowering already computes each
/// access as a base plus the loop variable times a stride, which x86 addressing takes as it is;
/// LSR's rewrite of those into pointer increments took about 1.5 of the CPU blur's 10.6 ms of
/// code generation, and without it the matrix product (19.9 -> 17.0 ms, with the short pass
/// pipeline) and the 5x5 convolution (0.48 -> 0.41 ms) got faster, no pipeline measured slower.
/// A gate of the module's context, not LLVM's global -disable-lsr option, so that device code
/// and other users of LLVM in the process keep it.
class HostCodeGenGate : public llvm::OptPassGate {
public:
  bool isEnabled() const override { return true; }
  bool shouldRunPass(llvm::StringRef pass, llvm::StringRef) override { return pass != "Loop Strength Reduction"; }
};

} // namespace

std::string emit_host_object(llvm::Module &module) {
  static HostCodeGenGate gate; // stateless: shared by concurrent compiles
  module.getContext().setOptPassGate(gate);
  JITState &s = state();
  std::lock_guard<std::mutex> lock(s.MachineMutex);
  llvm::orc::SimpleCompiler compiler(s.machine());
  auto object = compiler(module);
  if (!object)
    throw InternalError("cannot compile the host code of " + module.getName().str() + ": " +
                        describe(object.takeError()));
  return (*object)->getBuffer().str();
}

LinkedHostCode link_host_object(const std::string &object, const std::string &functionName,
                                const std::string &deviceCodeGlobal, const std::string &pipeline) {
  JITState &s = state();
  static std::atomic<uint64_t> counter{0};
  auto dylib = s.JIT->createJITDylib("ptxjit_pipeline_" + std::to_string(counter.fetch_add(1)));
  if (!dylib)
    throw InternalError("JIT: cannot make a library for " + pipeline + ": " + describe(dylib.takeError()));
  llvm::orc::JITDylib &library = *dylib;
  library.addToLinkOrder(s.JIT->getMainJITDylib()); // the runtime and the C library
  std::shared_ptr<void> owner(nullptr, [&library, &s](void *) {
    if (auto error = s.JIT->getExecutionSession().removeJITDylib(library))
      std::fprintf(stderr, "ptxjit: removing compiled code failed: %s\n", describe(std::move(error)).c_str());
  });
  auto buffer = llvm::MemoryBuffer::getMemBufferCopy(object, functionName);
  if (auto error = s.JIT->addObjectFile(library, std::move(buffer)))
    throw InternalError("JIT: cannot add the object of " + pipeline + ": " + describe(std::move(error)));
  auto function = s.JIT->lookup(library, functionName);
  if (!function)
    throw InternalError("JIT: cannot link " + pipeline + ": " + describe(function.takeError()));
  void **slot = nullptr;
  if (!deviceCodeGlobal.empty()) {
    auto global = s.JIT->lookup(library, deviceCodeGlobal);
    if (!global)
      throw InternalError("JIT: the device code slot of " + pipeline + " is missing: " + describe(global.takeError()));
    slot = global->toPtr<void **>();
  }
  return LinkedHostCode(function->toPtr<PipelineFunction>(), slot, std::move(owner));
}

} // namespace ptxjit::jit
