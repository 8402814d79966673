#include "HostJIT.h"

#include "RuntimeInterface.h"
#include "codegen/CodeGenPasses.h"
#include "codegen/LLVMOptimizer.h"
#include "ptxjit/Error.h"

#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/ExecutorProcessControl.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/TaskDispatch.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <future>
#include <mutex>
#include <optional>
#include <set>
#include <system_error>
#include <thread>
#include <vector>

namespace ptxjit::jit {

namespace {

std::string describe(llvm::Error error) {
  std::string message;
  llvm::handleAllErrors(std::move(error), [&](const llvm::ErrorInfoBase &e) { message += e.message(); });
  return message;
}

/// What host code is made for: this machine's triple, CPU and features. Detecting them asks the
/// CPU only; the compile cache's keys need them before any JIT exists.
struct HostDescription {
  std::unique_ptr<llvm::orc::JITTargetMachineBuilder> Builder;
  std::string Triple, Machine;
};

const HostDescription &hostDescription() {
  static const HostDescription description = [] {
    auto builder = llvm::orc::JITTargetMachineBuilder::detectHost();
    if (!builder)
      throw InternalError("cannot describe the host for the JIT: " + describe(builder.takeError()));
    builder->setCodeGenOptLevel(llvm::CodeGenOptLevel::Default);
    HostDescription d;
    d.Triple = builder->getTargetTriple().str();
    d.Machine = d.Triple + ' ' + builder->getCPU() + ' ' + builder->getFeatures().getString();
    d.Builder = std::make_unique<llvm::orc::JITTargetMachineBuilder>(std::move(*builder));
    return d;
  }();
  return description;
}

/// Registers LLVM's host target, once, before the first host TargetMachine. Linking objects from
/// the compile cache needs none: a process whose pipelines all come from it skips this (a tenth
/// of a millisecond of its first realize).
void initializeNativeTarget() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
}

struct JITState {
  std::unique_ptr<llvm::orc::LLJIT> JIT;

  /// A target machine for one compile at a time (a TargetMachine is not thread-safe), made on
  /// first use: a process whose pipelines all come from the compile cache needs none (making one
  /// is half a millisecond of a cached first realize).
  std::unique_ptr<llvm::TargetMachine> acquireMachine() {
    std::lock_guard<std::mutex> lock(MachinesMutex);
    if (!FreeMachines.empty()) {
      auto machine = std::move(FreeMachines.back());
      FreeMachines.pop_back();
      return machine;
    }
    initializeNativeTarget();
    auto made = hostDescription().Builder->createTargetMachine();
    if (!made)
      throw InternalError("cannot create the host target machine: " + describe(made.takeError()));
    return std::move(*made);
  }
  void releaseMachine(std::unique_ptr<llvm::TargetMachine> machine) {
    std::lock_guard<std::mutex> lock(MachinesMutex);
    FreeMachines.push_back(std::move(machine));
  }

private:
  std::mutex MachinesMutex; // guards FreeMachines
  std::vector<std::unique_ptr<llvm::TargetMachine>> FreeMachines;
};

/// A target machine of the pool for one scope.
class PooledMachine {
public:
  explicit PooledMachine(JITState &state) : State(state), Machine(state.acquireMachine()) {}
  ~PooledMachine() { State.releaseMachine(std::move(Machine)); }
  PooledMachine(const PooledMachine &) = delete;
  PooledMachine &operator=(const PooledMachine &) = delete;
  llvm::TargetMachine &operator*() const { return *Machine; }

private:
  JITState &State;
  std::unique_ptr<llvm::TargetMachine> Machine;
};

/// Makes the process's JIT. `layout`, where given, is the host's data layout as a compile of an
/// earlier process recorded it; without it, LLJIT makes a whole TargetMachine to learn it (a
/// fifth of a millisecond of a first realize from the compile cache).
JITState *makeState(const std::optional<llvm::DataLayout> &layout) {
  const HostDescription &host = hostDescription();
  if (!layout)
    initializeNativeTarget();
  auto s = std::make_unique<JITState>();
  // Pipelines compile on the threads that realize them (an in-place task dispatcher, not a
  // thread started for each compile), and the session must expect concurrent lookups.
  auto processControl = llvm::orc::SelfExecutorProcessControl::Create(nullptr, std::make_unique<llvm::orc::InPlaceTaskDispatcher>());
  if (!processControl)
    throw InternalError("cannot create the host process control for the JIT: " + describe(processControl.takeError()));
  auto jit = llvm::orc::LLJITBuilder()
                 .setJITTargetMachineBuilder(*host.Builder)
                 .setDataLayout(layout)
                 .setExecutorProcessControl(std::move(*processControl))
                 .setSupportConcurrentCompilation(true)
                 // No platform and no library of process symbols of LLJIT's own: generated code
                 // has no static constructors or exit handlers, and the process's symbols come
                 // from the generator below (making them took 0.12 ms of a cached first realize).
                 .setLinkProcessSymbolsByDefault(false)
                 .setPlatformSetUp(llvm::orc::setUpInactivePlatform)
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
  return s.release();
}

std::once_flag StateOnce;
JITState *State = nullptr; // made once (StateOnce), never destroyed: code may run at exit

/// The process's JIT, made on first use; `layout` is used only by the call that makes it.
JITState &state(const std::optional<llvm::DataLayout> &layout = std::nullopt) {
  std::call_once(StateOnce, [&] { State = makeState(layout); });
  return *State;
}

} // namespace

std::string host_triple() { return hostDescription().Triple; }

const std::string &host_machine() { return hostDescription().Machine; }

const llvm::DataLayout &host_data_layout() { return state().JIT->getDataLayout(); }

namespace {

/// Whether every function `module` defines is marked optnone (code that runs once per realize:
/// see CodeGen_Host::compile).
bool onlyUnoptimizedFunctions(const llvm::Module &module) {
  return std::all_of(module.begin(), module.end(), [](const llvm::Function &f) {
    return f.isDeclaration() || f.hasOptNone();
  });
}

/// Host code generation for one module: a target machine of the pool at one optimization level,
/// and LLVM's pass manager set up on it to write an object to a buffer of its own. The set-up
/// does not depend on the module and is about a tenth of a small pipeline's compile, so it is
/// done ahead, while the pipeline is lowered (HostCodeGenerationAhead).
///
/// Loop strength reduction is left out. Lowering already computes each access as a base plus
/// the loop variable times a stride, which x86 addressing takes as it is; LSR's rewrite of those
/// into pointer increments took about 1.5 of the CPU blur's 10.6 ms of code generation, and
/// without it the matrix product (19.9 -> 17.0 ms) and the 5x5 convolution (0.48 -> 0.41 ms) got
/// faster, no pipeline measured slower. Left out of the set-up, rather than skipped where it
/// would run, LSR's analyses (IVUsers) do not run either.
///
/// So is the scheduler after register allocation, which the host's out-of-order cores make
/// redundant: it took 0.3 of the CPU blur's 3.3 ms of code generation, and the realize time of
/// eight CPU pipelines (blur, pointwise math, gamma, histogram, matrix product, transpose, 5x5
/// convolution, column sums) stayed within the run-to-run noise, 2%, of the same run with it.
class HostCodeGenerator {
public:
  HostCodeGenerator(JITState &state, bool optimized) : Machine(state) {
    llvm::TargetMachine &machine = *Machine;
    // A module of optnone functions only is compiled by the short pipeline of level None
    // (FastISel, the fast register allocator): optnone alone skips the passes' work but not the
    // set-up of the optimizing pipelines, most of the time for such a module.
    machine.setOptLevel(optimized ? llvm::CodeGenOptLevel::Default : llvm::CodeGenOptLevel::None);
    // LLVM's set-up turns FastISel on for level None and never off: a pooled machine that once
    // compiled an unoptimized part would select instructions of every later optimized one with
    // FastISel, which part got which machine depending on the threads' timing (the same program
    // compiled to different code, and float results differed).
    machine.setFastISel(false);
    machine.setGlobalISel(false);
    llvm::MCContext *context = nullptr;
    const codegen::CodeGenerationPasses keep{/*LoopStrengthReduction=*/false, /*PostRAScheduling=*/false};
    if (codegen::add_code_generation_passes(keep, [&] {
          return static_cast<llvm::LLVMTargetMachine &>(machine).addPassesToEmitMC(Passes, context, Stream);
        }))
      throw InternalError("the host target machine cannot emit objects");
  }
  HostCodeGenerator(const HostCodeGenerator &) = delete;
  HostCodeGenerator &operator=(const HostCodeGenerator &) = delete;

  llvm::TargetMachine &machine() const { return *Machine; }

  /// Compiles `module` to an ELF relocatable object. Once per generator.
  std::string compile(llvm::Module &module) {
    Passes.run(module);
    return std::string(Object.data(), Object.size());
  }

private:
  llvm::SmallVector<char, 0> Object;
  llvm::raw_svector_ostream Stream{Object};
  PooledMachine Machine;
  llvm::legacy::PassManager Passes; // holds Machine and Stream: destroyed first
};

/// Host code generators set up ahead, at most one of each optimization level, and the levels
/// being set up.
class HostCodeGeneratorPool {
public:
  /// Marks the levels that have no generator, ready or being set up, as being set up, and
  /// returns them, the optimized one first (the longer compile of a module's parts).
  std::vector<bool> claimMissing() {
    std::lock_guard<std::mutex> lock(Mutex);
    std::vector<bool> claimed;
    for (bool optimized : {true, false})
      if (!Ready[optimized] && !InSetUp[optimized]) {
        InSetUp[optimized] = true;
        claimed.push_back(optimized);
      }
    return claimed;
  }

  /// Sets up a generator of a claimed level. On failure none is kept: take() then sets one up
  /// itself and throws the error to its caller.
  void setUp(bool optimized) noexcept {
    std::unique_ptr<HostCodeGenerator> made;
    try {
      made = std::make_unique<HostCodeGenerator>(state(), optimized);
    } catch (...) {
    }
    std::lock_guard<std::mutex> lock(Mutex);
    Ready[optimized] = std::move(made);
    InSetUp[optimized] = false;
    Changed.notify_all();
  }

  void unclaim(bool optimized) {
    std::lock_guard<std::mutex> lock(Mutex);
    InSetUp[optimized] = false;
    Changed.notify_all();
  }

  /// A generator of that level: the one set up ahead, waited for while it is being set up, or
  /// else one set up now.
  std::unique_ptr<HostCodeGenerator> take(bool optimized) {
    {
      std::unique_lock<std::mutex> lock(Mutex);
      Changed.wait(lock, [&] { return Ready[optimized] || !InSetUp[optimized]; });
      if (Ready[optimized])
        return std::move(Ready[optimized]);
    }
    return std::make_unique<HostCodeGenerator>(state(), optimized);
  }

private:
  std::mutex Mutex; // guards Ready and InSetUp
  std::condition_variable Changed;
  std::unique_ptr<HostCodeGenerator> Ready[2];
  bool InSetUp[2] = {false, false};
};

/// The process's pool, made once and never destroyed (like the JIT, whose machines it holds).
HostCodeGeneratorPool &generatorPool() {
  static HostCodeGeneratorPool *const pool = new HostCodeGeneratorPool;
  return *pool;
}

std::string compileOnThisThread(llvm::Module &module, const std::function<void(const llvm::Module &)> &optimized) {
  const bool unoptimized = onlyUnoptimizedFunctions(module);
  std::unique_ptr<HostCodeGenerator> generator = generatorPool().take(!unoptimized);
  if (!unoptimized)
    codegen::optimize_module(module, generator->machine(), codegen::PassSelection::FastCompile);
  if (optimized)
    optimized(module);
  return generator->compile(module);
}

/// Below this many instructions, functions are not given a part of their own: making the module
/// again for another thread would cost more than it saves.
constexpr size_t MinimumInstructionsOfAPart = 100;

/// The names of the functions of each part of `module` but the first, which keeps the rest;
/// none where it is compiled whole. The parts are compiled at once, on threads of their own.
/// Unoptimized (optnone) functions make a part of their own, which compiles quickly at level
/// None: in an optimized module they would still go through every pass of its code generation.
/// The optimized ones are shared out, largest first, to the smaller of two halves, kept where
/// both halves are big enough.
std::vector<std::set<std::string>> extraParts(const llvm::Module &module) {
  if (std::thread::hardware_concurrency() < 2)
    return {};
  std::vector<const llvm::Function *> optimized;
  std::set<std::string> unoptimized;
  size_t unoptimizedInstructions = 0;
  for (const llvm::Function &f : module) {
    if (f.isDeclaration())
      continue;
    if (f.hasOptNone()) {
      unoptimized.insert(f.getName().str());
      unoptimizedInstructions += f.getInstructionCount();
    } else {
      optimized.push_back(&f);
    }
  }
  std::vector<std::set<std::string>> parts;
  if (!optimized.empty() && unoptimizedInstructions >= MinimumInstructionsOfAPart)
    parts.push_back(std::move(unoptimized));
  std::stable_sort(optimized.begin(), optimized.end(), [](const llvm::Function *a, const llvm::Function *b) {
    return a->getInstructionCount() > b->getInstructionCount();
  });
  size_t sizes[2] = {0, 0};
  std::set<std::string> secondHalf;
  for (const llvm::Function *f : optimized) {
    const int half = sizes[1] < sizes[0] ? 1 : 0;
    sizes[half] += f->getInstructionCount();
    if (half == 1)
      secondHalf.insert(f->getName().str());
  }
  if (std::min(sizes[0], sizes[1]) >= MinimumInstructionsOfAPart)
    parts.push_back(std::move(secondHalf));
  return parts;
}

/// Leaves in `module` only the function bodies that `keep` accepts (the others become
/// declarations) and, unless `keepGlobals`, declares instead of defines its global variables
/// that other objects can see (the other part defines them). Each part calls functions of the
/// others by name, so none stays local to its object.
void keepPart(llvm::Module &module, const std::function<bool(const llvm::Function &)> &keep, bool keepGlobals) {
  for (llvm::Function &f : module) {
    if (f.isDeclaration())
      continue;
    if (f.hasLocalLinkage())
      f.setLinkage(llvm::GlobalValue::ExternalLinkage);
    if (!keep(f))
      f.deleteBody();
  }
  if (!keepGlobals)
    for (llvm::GlobalVariable &g : module.globals())
      if (!g.hasLocalLinkage() && g.hasInitializer())
        g.setInitializer(nullptr);
}

/// The functions `module` defines, each with its instruction count: equal for a module made
/// again, or the parts would not link into the same program.
std::vector<std::pair<std::string, size_t>> definedFunctions(const llvm::Module &module) {
  std::vector<std::pair<std::string, size_t>> defined;
  for (const llvm::Function &f : module)
    if (!f.isDeclaration())
      defined.emplace_back(f.getName().str(), f.getInstructionCount());
  return defined;
}

} // namespace

HostCodeGenerationAhead::HostCodeGenerationAhead() {
  if (std::thread::hardware_concurrency() < 2)
    return;
  HostCodeGeneratorPool &pool = generatorPool();
  const std::vector<bool> levels = pool.claimMissing();
  if (levels.empty())
    return;
  try {
    SetUp = std::thread([&pool, levels] {
      for (bool optimized : levels)
        pool.setUp(optimized);
    });
  } catch (const std::system_error &) {
    // No thread: compile_host_module sets up its generators itself.
    for (bool optimized : levels)
      pool.unclaim(optimized);
  }
}

HostCodeGenerationAhead::~HostCodeGenerationAhead() {
  if (SetUp.joinable())
    SetUp.join();
}

std::vector<std::string> compile_host_module(llvm::Module &module, const HostModuleMaker &makeAgain,
                                             const std::function<void(const llvm::Module &)> &optimized) {
  // The JIT has no platform (makeState): static constructors and destructors would never run.
  if (module.getNamedGlobal("llvm.global_ctors") || module.getNamedGlobal("llvm.global_dtors"))
    throw InternalError("JIT: the host code of " + module.getName().str() +
                        " has static constructors or destructors, which the JIT does not run");
  const std::vector<std::set<std::string>> parts = extraParts(module);
  if (parts.empty())
    return {compileOnThisThread(module, optimized)};
  const std::string name = module.getName().str();
  const std::vector<std::pair<std::string, size_t>> defined = definedFunctions(module);
  std::vector<std::future<std::string>> extraObjects;
  for (const std::set<std::string> &functions : parts)
    extraObjects.push_back(std::async(std::launch::async, [&makeAgain, &functions, &optimized, &name, &defined] {
      llvm::LLVMContext context;
      std::unique_ptr<llvm::Module> part = makeAgain(context);
      if (!part || definedFunctions(*part) != defined)
        throw InternalError("JIT: the host code of " + name + " made again for another thread differs");
      keepPart(*part, [&](const llvm::Function &f) { return functions.count(f.getName().str()) != 0; }, false);
      return compileOnThisThread(*part, optimized);
    }));
  keepPart(module, [&](const llvm::Function &f) {
    return std::none_of(parts.begin(), parts.end(), [&](const std::set<std::string> &p) { return p.count(f.getName().str()) != 0; });
  }, true);
  // On an error, the futures' destructors wait for their threads, which read `parts` and `defined`.
  std::vector<std::string> objects{compileOnThisThread(module, optimized)};
  for (std::future<std::string> &object : extraObjects)
    objects.push_back(object.get());
  return objects;
}

LinkedHostCode link_host_objects(const std::vector<std::string> &objects, const std::string &functionName,
                                 const std::string &deviceCodeGlobal, const std::string &pipeline,
                                 const std::string &dataLayout) {
  std::optional<llvm::DataLayout> layout;
  if (auto parsed = llvm::DataLayout::parse(dataLayout))
    layout = std::move(*parsed);
  else
    throw InternalError("JIT: the objects of " + pipeline + " have a malformed data layout: " +
                        describe(parsed.takeError()));
  JITState &s = state(layout);
  if (s.JIT->getDataLayout() != *layout)
    throw InternalError("JIT: the objects of " + pipeline + " were compiled for another data layout");
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
  for (const std::string &object : objects)
    if (auto error = s.JIT->addObjectFile(library, llvm::MemoryBuffer::getMemBufferCopy(object, functionName)))
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
