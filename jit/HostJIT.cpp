#include "HostJIT.h"

#include "DeviceCodeGenerator.h"
#include "codegen/CodeGen_Host.h"
#include "codegen/LLVMOptimizer.h"
#include "RuntimeInterface.h"
#include "ir/IR.h"

#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/ExecutorProcessControl.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/TaskDispatch.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>

#include <atomic>
#include <chrono>
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
  std::unique_ptr<llvm::TargetMachine> Machine; // guarded by MachineMutex: not thread-safe
  std::mutex MachineMutex;
  std::string Triple;
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
    auto machine = builder->createTargetMachine();
    if (!machine)
      throw InternalError("cannot create the host target machine: " + describe(machine.takeError()));
    s->Machine = std::move(*machine);
    s->Triple = builder->getTargetTriple().str();
    // Pipelines compile on the threads that realize them (an in-place task dispatcher, not a
    // thread started for each compile): each compile needs its own target machine
    // (ConcurrentIRCompiler), and the session must expect concurrent lookups.
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
    // The C library (tanhf, memcpy, ...) comes from the process.
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

std::shared_ptr<CompiledHostCode> compile_host(const lower::LoweredPipeline &pipeline, const Target &target) {
  JITState &s = state();
  auto start = std::chrono::steady_clock::now();
  static std::atomic<uint64_t> counter{0};
  std::string name = "ptxjit_" + pipeline.name + "_" + std::to_string(counter.fetch_add(1));

  const int debug = lower::debug_level();
  auto phase = [&, last = start](const char *what) mutable {
    auto now = std::chrono::steady_clock::now();
    if (debug >= 2)
      std::fprintf(stderr, "ptxjit: %s of %s: %.3f ms\n", what, pipeline.name.c_str(),
                   std::chrono::duration<double, std::milli>(now - last).count());
    last = now;
  };

  auto context = std::make_unique<llvm::LLVMContext>();
  codegen::CodeGen_Host generator(*context, target);
  std::unique_ptr<llvm::Module> module = generator.compile(pipeline, name, s.JIT->getDataLayout(), s.Triple);
  phase("LLVM IR generation");
  {
    std::lock_guard<std::mutex> lock(s.MachineMutex);
    codegen::optimize_module(*module, *s.Machine);
  }
  phase("LLVM optimization");
  if (debug >= 3) {
    std::string text;
    llvm::raw_string_ostream out(text);
    module->print(out, nullptr);
    std::fprintf(stderr, "ptxjit: optimized LLVM IR of %s:\n%s\n", pipeline.name.c_str(), out.str().c_str());
  }

  llvm::orc::ResourceTrackerSP tracker = s.JIT->getMainJITDylib().createResourceTracker();
  if (auto error = s.JIT->addIRModule(tracker, llvm::orc::ThreadSafeModule(std::move(module), std::move(context))))
    throw InternalError("JIT: cannot add the module of " + pipeline.name + ": " + describe(std::move(error)));
  auto symbol = s.JIT->lookup(name);
  if (!symbol) {
    std::string message = describe(symbol.takeError());
    llvm::consumeError(tracker->remove());
    throw InternalError("JIT: cannot compile " + pipeline.name + ": " + message);
  }
  phase("machine code generation");
  std::shared_ptr<void> resources(nullptr, [tracker](void *) {
    if (auto error = tracker->remove())
      std::fprintf(stderr, "ptxjit: removing compiled code failed: %s\n", describe(std::move(error)).c_str());
  });
  // The kernels' PTX is made per compute capability when a context first runs them.
  std::vector<codegen::KernelRecord> kernels = generator.kernels();
  std::unique_ptr<runtime::cuda::DeviceCode> device;
  if (!kernels.empty()) {
    std::vector<runtime::cuda::DeviceCode::Kernel> signatures;
    for (const codegen::KernelRecord &k : kernels) {
      runtime::cuda::DeviceCode::Kernel &signature = signatures.emplace_back();
      signature.name = k.name;
      for (const codegen::KernelArgument &a : k.closure.arguments)
        signature.argument_bytes.push_back(a.is_buffer ? sizeof(CUdeviceptr) : uint32_t(a.type.bytes()));
    }
    device = std::make_unique<runtime::cuda::DeviceCode>(
        pipeline.name, std::move(signatures), [kernels, target](int capability, int ptxVersion) {
          return generate_ptx(kernels, device_target(target, capability), ptxVersion);
        });
    auto global = s.JIT->lookup(codegen::CodeGen_Host::device_code_global(name));
    if (!global) {
      std::string message = describe(global.takeError());
      throw InternalError("JIT: the device code slot of " + pipeline.name + " is missing: " + message);
    }
    *global->toPtr<runtime::cuda::DeviceCode **>() = device.get();
  }
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return std::make_shared<CompiledHostCode>(symbol->toPtr<PipelineFunction>(), std::move(resources), ms,
                                            std::move(kernels), std::move(device));
}

} // namespace ptxjit::jit
