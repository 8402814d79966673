#include "PipelineCompiler.h"

#include "DeviceCodeGenerator.h"
#include "DiskCache.h"
#include "SourceHash.h"
#include "codegen/CodeGen_Host.h"
#include "cuda/CudaDriver.h"
#include "cuda/DefaultHandlers.h"
#include "ptxjit/Error.h"
#include "ptxjit/RuntimeError.h"
#include "ptxjit/Version.h"

#include <llvm/Config/llvm-config.h>
#include <llvm/Support/SHA256.h>
#include <llvm/Support/raw_ostream.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <future>
#include <map>
#include <mutex>
#include <optional>

namespace ptxjit::jit {

using namespace std::string_literals;

namespace {

using Clock = std::chrono::steady_clock;

double millisecondsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// What every host identity starts with: code made by another build of ptxjit or LLVM, or for
// another CPU (a cache directory shared between machines), is never used.
const std::string &buildIdentity() {
  static const std::string identity = std::string("ptxjit ") + PTXJIT_VERSION_STRING + ", sources " +
                                      PTXJIT_SOURCE_HASH + ", LLVM " + LLVM_VERSION_STRING + ", host " +
                                      host_machine() + '\0';
  return identity;
}

std::string sha256Hex(const std::string &bytes) {
  auto digest = llvm::SHA256::hash(llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size()));
  static const char digits[] = "0123456789abcdef";
  std::string hex;
  for (uint8_t b : digest) {
    hex += digits[b >> 4];
    hex += digits[b & 15];
  }
  return hex;
}

// The payload of a host entry: the function's name, the pipeline's name, its arguments, its
// kernels' signatures and the object.
class PayloadWriter {
public:
  std::string Bytes;
  void number(uint64_t n) { Bytes.append(reinterpret_cast<const char *>(&n), sizeof(n)); }
  void text(const std::string &s) {
    number(s.size());
    Bytes += s;
  }
};

class PayloadReader {
public:
  explicit PayloadReader(const std::string &bytes) : Bytes(bytes) {}
  bool Valid = true;
  uint64_t number() {
    uint64_t n = 0;
    if (!take(sizeof(n)))
      return 0;
    std::memcpy(&n, Bytes.data() + Offset - sizeof(n), sizeof(n));
    return n;
  }
  std::string text() {
    uint64_t size = number();
    if (!Valid || !take(size))
      return {};
    return Bytes.substr(Offset - size, size);
  }
  bool finished() const { return Valid && Offset == Bytes.size(); }

private:
  bool take(uint64_t size) {
    Valid = Valid && size <= Bytes.size() - Offset;
    if (Valid)
      Offset += size;
    return Valid;
  }
  const std::string &Bytes;
  size_t Offset = 0;
};

struct HostEntry {
  std::string function_name, pipeline_name;
  /// The object calls glibc's vector math library, which must be loaded before it links.
  bool vector_math = false;
  std::vector<lower::LoweredArgument> arguments;
  std::vector<runtime::cuda::DeviceCode::Kernel> kernels;
  std::vector<std::string> objects; // linked together
  std::string data_layout;          // the objects', as LLVM writes it
};

std::string serialize(const HostEntry &e) {
  PayloadWriter w;
  w.text(e.function_name);
  w.text(e.pipeline_name);
  w.number(e.vector_math);
  w.number(e.arguments.size());
  for (const lower::LoweredArgument &a : e.arguments) {
    w.number(a.kind);
    w.text(a.name);
    w.number(static_cast<uint64_t>(a.type.code));
    w.number(a.type.bits);
    w.number(a.type.lanes);
    w.number(static_cast<uint64_t>(a.dimensions));
    w.number(a.on_device);
    w.number(a.on_host);
  }
  w.number(e.kernels.size());
  for (const runtime::cuda::DeviceCode::Kernel &k : e.kernels) {
    w.text(k.name);
    w.number(k.argument_bytes.size());
    for (uint32_t bytes : k.argument_bytes)
      w.number(bytes);
  }
  w.number(e.objects.size());
  for (const std::string &object : e.objects)
    w.text(object);
  w.text(e.data_layout);
  return std::move(w.Bytes);
}

std::optional<HostEntry> deserialize(const std::string &payload) {
  PayloadReader r(payload);
  HostEntry e;
  e.function_name = r.text();
  e.pipeline_name = r.text();
  e.vector_math = r.number() != 0;
  for (uint64_t i = 0, n = r.number(); r.Valid && i < n; ++i) {
    lower::LoweredArgument a;
    uint64_t kind = r.number();
    a.name = r.text();
    uint64_t code = r.number(), bits = r.number(), lanes = r.number();
    a.dimensions = static_cast<int>(r.number());
    a.on_device = r.number() != 0;
    a.on_host = r.number() != 0;
    if (kind > lower::LoweredArgument::Scalar || code > static_cast<uint64_t>(Type::BFloat) || bits > 64 ||
        lanes == 0 || lanes > 0xffff)
      return std::nullopt;
    a.kind = static_cast<lower::LoweredArgument::Kind>(kind);
    a.type = Type(static_cast<Type::Code>(code), static_cast<int>(bits), static_cast<int>(lanes));
    e.arguments.push_back(std::move(a));
  }
  for (uint64_t i = 0, n = r.number(); r.Valid && i < n; ++i) {
    runtime::cuda::DeviceCode::Kernel k;
    k.name = r.text();
    for (uint64_t j = 0, m = r.number(); r.Valid && j < m; ++j)
      k.argument_bytes.push_back(static_cast<uint32_t>(r.number()));
    e.kernels.push_back(std::move(k));
  }
  for (uint64_t i = 0, n = r.number(); r.Valid && i < n; ++i)
    e.objects.push_back(r.text());
  e.data_layout = r.text();
  if (!r.finished() || e.objects.empty())
    return std::nullopt;
  return e;
}

std::vector<runtime::cuda::DeviceCode::Kernel> signatures(const std::vector<codegen::KernelRecord> &kernels) {
  std::vector<runtime::cuda::DeviceCode::Kernel> out;
  for (const codegen::KernelRecord &k : kernels) {
    runtime::cuda::DeviceCode::Kernel &signature = out.emplace_back();
    signature.name = k.name;
    for (const codegen::KernelArgument &a : k.closure.arguments)
      signature.argument_bytes.push_back(a.is_buffer ? sizeof(CUdeviceptr) : uint32_t(a.type.bytes()));
  }
  return out;
}

bool sameSignatures(const std::vector<runtime::cuda::DeviceCode::Kernel> &a,
                    const std::vector<runtime::cuda::DeviceCode::Kernel> &b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].name != b[i].name || a[i].argument_bytes != b[i].argument_bytes)
      return false;
  return true;
}

// The host code generator's output for a lowered pipeline: the LLVM module and its kernels.
struct GeneratedHostCode {
  std::unique_ptr<llvm::LLVMContext> context;
  std::unique_ptr<llvm::Module> module;
  std::vector<codegen::KernelRecord> kernels;
};

GeneratedHostCode generateHostCode(const lower::LoweredPipeline &lowered, const Target &target,
                                   const std::string &functionName) {
  GeneratedHostCode out;
  out.context = std::make_unique<llvm::LLVMContext>();
  codegen::CodeGen_Host generator(*out.context, target);
  out.module = generator.compile(lowered, functionName, host_data_layout(), host_triple());
  out.kernels = generator.kernels();
  return out;
}

// Compiled pipelines alive in this process, by identity; entries of dead ones go when a new one
// comes, so the map stays small.
std::mutex LiveMutex; // guards Live
std::map<std::string, std::weak_ptr<const CompiledPipeline>> Live;

} // namespace

// The kernels' loop nests, for PTX: kept from the compile that made them, or made again by
// lowering when a pipeline from the disk cache needs PTX that the cache does not hold (a device
// of another capability). PTX and the driver's binaries go through the disk cache.
class KernelSource {
public:
  KernelSource(std::vector<codegen::KernelRecord> records, Target target, std::string identity,
               std::function<void(const char *)> warn)
      : Records(std::move(records)), HaveRecords(true), CompiledFor(std::move(target)),
        Identity(std::move(identity)), Warn(std::move(warn)) {}
  KernelSource(lower::Outputs outputs, Target target, std::string functionName,
               std::vector<runtime::cuda::DeviceCode::Kernel> expected, std::string identity,
               std::function<void(const char *)> warn)
      : Outputs(std::move(outputs)), FunctionName(std::move(functionName)), Expected(std::move(expected)),
        CompiledFor(std::move(target)), Identity(std::move(identity)), Warn(std::move(warn)) {}

  /// Starts making the PTX for `resolved` at `ptxVersion` on a thread of its own, for the first
  /// ptx() of the same to take.
  void prepare(const Target &resolved, int ptxVersion) {
    std::lock_guard<std::mutex> lock(PreparedMutex);
    PreparedFor = resolved.to_string() + ' ' + std::to_string(ptxVersion);
    Prepared = std::async(std::launch::async, [this, resolved, ptxVersion] { return make(resolved, ptxVersion); });
  }

  std::string ptx(const Target &resolved, int ptxVersion) {
    std::unique_lock<std::mutex> lock(PreparedMutex);
    if (Prepared.valid() && PreparedFor == resolved.to_string() + ' ' + std::to_string(ptxVersion)) {
      std::future<std::string> prepared = std::move(Prepared);
      lock.unlock();
      return prepared.get();
    }
    lock.unlock();
    return make(resolved, ptxVersion);
  }

  runtime::cuda::DeviceCode::BinaryStore binaries() const {
    if (Identity.empty())
      return {};
    auto identity = [](const std::string &ptx, const std::string &target) {
      return "binary\0"s + target + '\0' + sha256Hex(ptx);
    };
    auto warn = Warn;
    return {[identity](const std::string &ptx, const std::string &target) {
              return DiskCache::process().find(identity(ptx, target));
            },
            [identity, warn](const std::string &ptx, const std::string &target, const std::string &binary) {
              DiskCache::process().store(identity(ptx, target), binary, warn);
            }};
  }

  const Target &target() const { return CompiledFor; }

  std::string prepared_for() {
    std::lock_guard<std::mutex> lock(PreparedMutex);
    return PreparedFor;
  }

private:
  std::string make(const Target &resolved, int ptxVersion) {
    const std::string identity = Identity.empty() ? std::string()
                                                  : "ptx\0"s + resolved.to_string() + '\0' +
                                                        std::to_string(ptxVersion) + '\0' + Identity;
    DiskCache &disk = DiskCache::process();
    if (!identity.empty())
      if (std::optional<std::string> cached = disk.find(identity))
        return *cached;
    std::string made = generate_ptx(records(), resolved, ptxVersion);
    if (!identity.empty())
      disk.store(identity, made, Warn);
    return made;
  }

  const std::vector<codegen::KernelRecord> &records() {
    std::lock_guard<std::mutex> lock(Mutex); // Records, once made, are never changed
    if (!HaveRecords) {
      std::vector<codegen::KernelRecord> made =
          generateHostCode(lower::lower(Outputs, CompiledFor), CompiledFor, FunctionName).kernels;
      if (!sameSignatures(signatures(made), Expected))
        throw InternalError("the kernels of " + FunctionName + " made again differ from those the compile cache holds");
      Records = std::move(made);
      HaveRecords = true;
    }
    return Records;
  }

  std::mutex Mutex; // guards Records and HaveRecords
  std::vector<codegen::KernelRecord> Records;
  bool HaveRecords = false;
  lower::Outputs Outputs;
  std::string FunctionName;
  std::vector<runtime::cuda::DeviceCode::Kernel> Expected;
  Target CompiledFor;
  std::string Identity; // of the host entry; empty: no disk cache
  std::function<void(const char *)> Warn;
  std::mutex PreparedMutex; // guards PreparedFor and Prepared
  std::string PreparedFor;  // the target and PTX version Prepared is for
  // Last, so that it is destroyed first: its destructor waits for the thread, which uses the
  // members above.
  std::future<std::string> Prepared;
};

namespace {

/// Where this process has initialized CUDA, starts making the PTX for the device a realize will
/// most likely run on (the built-in handlers' choice), on a thread of its own while the host code
/// compiles: a realize there finds it made. Returns the target it is made for, or "".
std::string prepareLikelyPTX(KernelSource &source, const Target &target) {
  const int capability = runtime::cuda::likely_device_capability();
  if (capability == 0)
    return {};
  Target resolved;
  try {
    resolved = device_target(target, capability);
  } catch (const RuntimeError &) {
    return {}; // too old a device for the target: a realize there will say so
  }
  source.prepare(resolved, runtime::cuda::max_ptx_version_for_driver(runtime::cuda::driver().version));
  return resolved.to_string();
}

} // namespace

CompiledPipeline::CompiledPipeline(LinkedHostCode linked, std::vector<lower::LoweredArgument> arguments,
                                   std::shared_ptr<KernelSource> kernels,
                                   std::unique_ptr<runtime::cuda::DeviceCode> device)
    : Linked(std::move(linked)), Arguments(std::move(arguments)), Kernels(std::move(kernels)),
      Device(std::move(device)) {
  if (Device)
    *Linked.device_code_slot() = Device.get();
}

CompiledPipeline::~CompiledPipeline() = default;

std::string CompiledPipeline::ptx_prepared_for() const { return Kernels ? Kernels->prepared_for() : std::string(); }

std::string CompiledPipeline::ptx(const Target &target, int ptxVersion) const {
  if (!Kernels)
    throw CompileError("the pipeline has no GPU schedule: there are no kernels");
  return Kernels->ptx(target, ptxVersion);
}

namespace {

std::shared_ptr<const CompiledPipeline> makeCompiled(LinkedHostCode linked, std::vector<lower::LoweredArgument> arguments,
                                                     std::shared_ptr<KernelSource> source,
                                                     std::vector<runtime::cuda::DeviceCode::Kernel> kernels,
                                                     const std::string &pipelineName) {
  std::unique_ptr<runtime::cuda::DeviceCode> device;
  if (source) {
    device = std::make_unique<runtime::cuda::DeviceCode>(
        pipelineName, std::move(kernels),
        [source](int capability, int ptxVersion) {
          return source->ptx(device_target(source->target(), capability), ptxVersion);
        },
        source->binaries());
  }
  return std::make_shared<const CompiledPipeline>(std::move(linked), std::move(arguments), std::move(source),
                                                  std::move(device));
}

} // namespace

std::shared_ptr<const CompiledPipeline> compile_pipeline(const lower::Outputs &outputs, const DefinitionKey &key,
                                                         const Target &target,
                                                         const std::function<void(const char *)> &warn) {
  const auto start = Clock::now();
  const int debug = lower::debug_level();
  const std::string identity =
      key.text.empty() ? std::string() : "host\0"s + buildIdentity() + target.to_string() + '\0' + key.text;
  std::string pipelineName;
  for (const auto &output : outputs)
    pipelineName += (pipelineName.empty() ? "" : "_") + output->name;
  auto report = [&](const std::string &what) {
    if (debug >= 1)
      std::fprintf(stderr, "ptxjit: compile of %s for %s: %s; %.3f ms in all\n", pipelineName.c_str(),
                   target.to_string().c_str(), what.c_str(), millisecondsSince(start));
  };

  if (!identity.empty()) {
    std::lock_guard<std::mutex> lock(LiveMutex);
    if (auto it = Live.find(identity); it != Live.end())
      if (auto live = it->second.lock()) {
        report("in memory (another Pipeline of the same definitions)");
        return live;
      }
  }
  auto remember = [&](std::shared_ptr<const CompiledPipeline> compiled) {
    if (!identity.empty()) {
      std::lock_guard<std::mutex> lock(LiveMutex);
      for (auto it = Live.begin(); it != Live.end();)
        it = it->second.expired() ? Live.erase(it) : std::next(it);
      Live[identity] = compiled;
    }
    return compiled;
  };

  DiskCache &disk = DiskCache::process();
  if (!identity.empty()) {
    auto lookupStart = Clock::now();
    if (std::optional<std::string> payload = disk.find(identity)) {
      double lookupMs = millisecondsSince(lookupStart);
      std::optional<HostEntry> entry = deserialize(*payload);
      const auto linkStart = Clock::now();
      std::optional<LinkedHostCode> linked;
      // Code that calls the vector math library is of no use where it cannot be loaded.
      if (entry && (!entry->vector_math || codegen::load_vector_math_library())) {
        try {
          linked = link_host_objects(entry->objects, entry->function_name,
                                    entry->kernels.empty()
                                        ? std::string()
                                        : codegen::CodeGen_Host::device_code_global(entry->function_name),
                                    entry->pipeline_name, entry->data_layout);
        } catch (const InternalError &) {
          // An object that does not link (a library it calls is gone) is compiled again: the
          // cache never fails a compile.
        }
      }
      if (entry && linked) {
        double linkMs = millisecondsSince(linkStart);
        std::shared_ptr<KernelSource> source;
        if (!entry->kernels.empty())
          source = std::make_shared<KernelSource>(outputs, target, entry->function_name, entry->kernels, identity, warn);
        auto compiled = makeCompiled(std::move(*linked), std::move(entry->arguments), std::move(source),
                                     std::move(entry->kernels), entry->pipeline_name);
        char line[160];
        std::snprintf(line, sizeof(line), "disk cache hit (read %.3f ms, link %.3f ms)", lookupMs, linkMs);
        report(line);
        return remember(compiled);
      }
    }
  }

  // A miss: lower, generate, compile, link, store. Host code generation is set up meanwhile.
  HostCodeGenerationAhead codeGenerationAhead;
  std::string phases;
  auto phaseStart = Clock::now();
  auto phase = [&](const char *what) {
    char text[96];
    std::snprintf(text, sizeof(text), "%s%s %.3f ms", phases.empty() ? "" : ", ", what, millisecondsSince(phaseStart));
    phases += text;
    phaseStart = Clock::now();
  };
  lower::LoweredPipeline lowered = lower::lower(outputs, target);
  phase("lowering");
  const std::string functionName = "ptxjit_" + lowered.name;
  GeneratedHostCode generated = generateHostCode(lowered, target, functionName);
  phase("LLVM IR");
  HostEntry entry;
  entry.kernels = signatures(generated.kernels);
  std::shared_ptr<KernelSource> source;
  std::string preparedFor;
  if (!generated.kernels.empty()) {
    source = std::make_shared<KernelSource>(std::move(generated.kernels), target, identity, warn);
    preparedFor = prepareLikelyPTX(*source, target);
  }
  for (const llvm::Function &f : *generated.module)
    entry.vector_math = entry.vector_math || f.getName().starts_with("_ZGV"); // the vector function ABI's names
  auto printOptimized = [&](const llvm::Module &optimized) {
    std::string text;
    llvm::raw_string_ostream out(text);
    optimized.print(out, nullptr);
    std::fprintf(stderr, "ptxjit: optimized LLVM IR of %s:\n%s\n", lowered.name.c_str(), out.str().c_str());
  };
  auto makeAgain = [&](llvm::LLVMContext &context) {
    return codegen::CodeGen_Host(context, target).compile(lowered, functionName, host_data_layout(), host_triple());
  };
  entry.objects = compile_host_module(*generated.module, makeAgain, debug >= 3 ? std::function<void(const llvm::Module &)>(printOptimized)
                                                                     : std::function<void(const llvm::Module &)>());
  phase(entry.objects.size() > 1
            ? ("LLVM optimization and machine code, " + std::to_string(entry.objects.size()) + " parts at once").c_str()
            : "LLVM optimization and machine code");
  entry.function_name = functionName;
  entry.pipeline_name = lowered.name;
  entry.data_layout = host_data_layout().getStringRepresentation();
  for (const lower::LoweredArgument &a : lowered.arguments) {
    lower::LoweredArgument &unbound = entry.arguments.emplace_back(a);
    unbound.param = nullptr;
  }
  LinkedHostCode linked = link_host_objects(
      entry.objects, functionName,
      source ? codegen::CodeGen_Host::device_code_global(functionName) : std::string(), lowered.name,
      entry.data_layout);
  phase("link");
  if (!identity.empty())
    disk.store(identity, serialize(entry), warn);
  phase(identity.empty() ? "no cache (the definitions have no key)" : disk.enabled() ? "disk cache store" : "disk cache off");
  if (!preparedFor.empty())
    phases += ", PTX for " + preparedFor + " begun alongside";
  auto compiled = makeCompiled(std::move(linked), std::move(entry.arguments), std::move(source),
                               std::move(entry.kernels), lowered.name);
  report("compiled (" + phases + ")");
  return remember(compiled);
}

} // namespace ptxjit::jit
