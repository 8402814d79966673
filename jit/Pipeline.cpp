#include "ptxjit/Pipeline.h"

#include "Handlers.h"
#include "PipelineCompiler.h"
#include "RunPipeline.h"
#include "cuda/CudaDriver.h"
#include "ir/IRPrinter.h"
#include "lang/DefinitionKey.h"
#include "lang/Function.h"
#include "lang/Parameter.h"

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/SmallVector.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <mutex>

namespace ptxjit {

namespace {

Target checkHostTarget(const Target &target) {
  Target host = get_host_target();
  if (target.arch() != host.arch() || target.bits() != host.bits() || target.os() != host.os())
    throw CompileError("cannot JIT-compile for " + target.to_string() + " on this " + host.to_string() + " host");
  return target;
}

// How the runtime sees each argument of a compiled pipeline.
std::vector<runtime::PipelineArgument> runArguments(const std::vector<lower::LoweredArgument> &arguments) {
  std::vector<runtime::PipelineArgument> out;
  for (const lower::LoweredArgument &a : arguments) {
    runtime::PipelineArgument &r = out.emplace_back();
    r.kind = a.kind == lower::LoweredArgument::InputBuffer    ? runtime::PipelineArgument::Kind::InputBuffer
             : a.kind == lower::LoweredArgument::OutputBuffer ? runtime::PipelineArgument::Kind::OutputBuffer
                                                              : runtime::PipelineArgument::Kind::Scalar;
    r.on_host = a.on_host;
    r.on_device = a.on_device;
    r.name = a.name;
  }
  return out;
}

bool isBuffer(const lower::LoweredArgument &a) { return a.kind != lower::LoweredArgument::Scalar; }

} // namespace

struct PipelineContents {
  lower::Outputs Outputs;
  std::string Name; // the outputs' names, for messages
  JITHandlers Handlers;
  std::mutex Mutex; // guards Compiled and CompiledFor
  struct Compiled {
    /// The compiled code's arguments, bound to this Pipeline's Params and ImageParams.
    std::vector<lower::LoweredArgument> Arguments;
    std::vector<runtime::PipelineArgument> RunArguments;
    bool CudaGraphs = false;
    std::shared_ptr<const jit::CompiledPipeline> Code;
  };
  std::shared_ptr<const Compiled> Current;
  Target CompiledFor;
};

Pipeline::Pipeline(const Func &output) : Pipeline(std::vector<Func>{output}) {}

Pipeline::Pipeline(const std::vector<Func> &outputs) : Contents(std::make_shared<PipelineContents>()) {
  if (outputs.empty())
    throw CompileError("a Pipeline needs at least one output Func");
  for (const Func &output : outputs) {
    if (!output.defined())
      throw CompileError("Pipeline of Func " + output.name() + ", which is not defined");
    for (const auto &earlier : Contents->Outputs)
      if (earlier == output.contents())
        throw CompileError("Func " + output.name() + " is given twice as an output of one Pipeline");
    Contents->Outputs.push_back(output.contents());
    Contents->Name += (Contents->Name.empty() ? "" : ", ") + output.name();
  }
}

JITHandlers &Pipeline::jit_handlers() { return Contents->Handlers; }

std::vector<Argument> Pipeline::infer_arguments() const {
  std::vector<Argument> arguments;
  for (const auto &entry : definition_key(Contents->Outputs).parameters) {
    const ParameterContents &p = *entry.second;
    arguments.push_back({p.name, p.is_buffer, p.type, p.dimensions, p.is_buffer ? p.buffer : RawBuffer()});
  }
  return arguments;
}

void Pipeline::compile_jit(const Target &requested) {
  Target target = checkHostTarget(requested);
  DefinitionKey key = definition_key(Contents->Outputs);
  // The compile cache's one warning goes to the Pipeline's print handler, else the default one.
  void (*print)(JITUserContext *, const char *) = Contents->Handlers.print ? Contents->Handlers.print
                                                                            : jit::default_handlers().print;
  std::function<void(const char *)> warn;
  if (print)
    warn = [print](const char *message) { print(nullptr, message); };
  auto compiled = std::make_shared<PipelineContents::Compiled>();
  compiled->Code = jit::compile_pipeline(Contents->Outputs, key, target, warn);
  for (const lower::LoweredArgument &a : compiled->Code->arguments()) {
    lower::LoweredArgument &bound = compiled->Arguments.emplace_back(a);
    if (a.kind == lower::LoweredArgument::OutputBuffer)
      continue;
    auto it = key.parameters.find(a.name);
    if (it == key.parameters.end())
      throw InternalError("the compiled code of " + Contents->Name + " takes " + a.name + ", which it does not use");
    bound.param = it->second;
  }
  compiled->RunArguments = runArguments(compiled->Arguments);
  compiled->CudaGraphs = target.has_feature(Target::Feature::CUDAGraphs);
  std::lock_guard<std::mutex> lock(Contents->Mutex);
  Contents->Current = std::move(compiled);
  Contents->CompiledFor = target;
}

std::string Pipeline::compile_to_ptx(const Target &target, int ptxVersion) {
  if (!target.has_gpu_feature() || target.cuda_capability() == 0)
    throw CompileError("compile_to_ptx needs a target with a fixed CUDA capability, not " + target.to_string());
  compile_jit(target);
  std::shared_ptr<const PipelineContents::Compiled> compiled;
  {
    std::lock_guard<std::mutex> lock(Contents->Mutex);
    compiled = Contents->Current;
  }
  if (!compiled->Code->device_code())
    throw CompileError("pipeline " + Contents->Name + " has no GPU schedule: there are no kernels");
  return compiled->Code->ptx(target, ptxVersion);
}

std::string Pipeline::lowered_stmt(const Target &target) const {
  return ir::to_string(lower::lower(Contents->Outputs, checkHostTarget(target)).body);
}

void Pipeline::compile_to_lowered_stmt(const std::string &filename, const Target &target) const {
  const std::string text = lowered_stmt(target);
  std::ofstream file(filename);
  if (!(file << text) || !file.flush())
    throw RuntimeError("compile_to_lowered_stmt: cannot write " + filename);
}

std::string Pipeline::loop_nest() const { return lower::loop_nest(Contents->Outputs); }

void Func::print_loop_nest() const { std::fputs(Pipeline(*this).loop_nest().c_str(), stdout); }

void Func::compile_to_lowered_stmt(const std::string &filename, const Target &target) const {
  Pipeline(*this).compile_to_lowered_stmt(filename, target);
}

namespace {

// One realize with its merged handlers; every failure is a RuntimeError (or CompileError).
// `outputs`: one buffer for each value of each output.
void realizeWith(Pipeline &pipeline, PipelineContents &contents, jit::RealizeCall &call,
                 llvm::ArrayRef<RawBuffer *> outputs) {
  std::shared_ptr<const PipelineContents::Compiled> compiled;
  {
    std::lock_guard<std::mutex> lock(contents.Mutex);
    compiled = contents.Current;
  }
  if (!compiled) {
    pipeline.compile_jit();
    std::lock_guard<std::mutex> lock(contents.Mutex);
    compiled = contents.Current;
  }
  // One buffer for each value of each output, in order.
  const bool oneOutput = contents.Outputs.size() == 1;
  size_t expected = 0;
  for (const auto &output : contents.Outputs)
    expected += output->types.size();
  if (outputs.size() != expected) {
    const FunctionContents &f = *contents.Outputs[0];
    auto count = [](size_t n, const char *what) { return std::to_string(n) + " " + what + (n == 1 ? "" : "s"); };
    throw RuntimeError(oneOutput ? "Func " + f.name + " has " + count(expected, "value") + " but is realized into " +
                                       count(outputs.size(), "buffer")
                                 : "pipeline " + contents.Name + " has " + count(expected, "output buffer") +
                                       " (one for each value of each output) but is realized into " +
                                       count(outputs.size(), "buffer"));
  }
  size_t k = 0;
  for (const auto &output : contents.Outputs)
    for (size_t v = 0; v < output->types.size(); ++v, ++k) {
      const RawBuffer &buffer = *outputs[k];
      // The names for messages are made only when one is needed: a realize allocates nothing here.
      const bool tuple = output->types.size() > 1;
      auto value = [&] { return output->name + (tuple ? " value " + std::to_string(v) : ""); };
      auto which = [&] {
        return oneOutput ? "output buffer" + (tuple ? " " + std::to_string(v) : "") + " of Func " + output->name
                         : "output buffer " + std::to_string(k) + " (Func " + value() + ")";
      };
      if (buffer.dimensions() != static_cast<int>(output->args.size()))
        throw RuntimeError(which() + " has " + std::to_string(buffer.dimensions()) + " dimensions, but " +
                           output->name + " has " + std::to_string(output->args.size()));
      if (Type(static_cast<Type::Code>(buffer.type().code), buffer.type().bits) != output->types[v])
        throw RuntimeError(which() + " has type " + detail::type_name(buffer.type()) + ", but " + value() + " has type " +
                           to_string(output->types[v]));
    }

  // Per-call descriptors and scalar values: concurrent realizes share nothing they write, and
  // a pipeline of up to 16 arguments allocates nothing here.
  const auto &arguments = compiled->Arguments;
  llvm::SmallVector<ptxjit_buffer_t, 16> buffers(arguments.size());
  llvm::SmallVector<uint64_t, 16> scalars(arguments.size());
  llvm::SmallVector<void *, 16> args(arguments.size());
  size_t nextOutput = 0;
  for (size_t i = 0; i < arguments.size(); ++i) {
    const lower::LoweredArgument &a = arguments[i];
    switch (a.kind) {
    case lower::LoweredArgument::OutputBuffer:
      buffers[i] = outputs[nextOutput++]->descriptor();
      args[i] = &buffers[i];
      break;
    case lower::LoweredArgument::InputBuffer:
      if (!a.param->buffer.defined() || a.param->buffer.dimensions() != a.dimensions)
        throw RuntimeError("ImageParam " + a.name + " is not bound to a buffer; call " + a.name + ".set(buffer)");
      buffers[i] = a.param->buffer.descriptor();
      args[i] = &buffers[i];
      break;
    case lower::LoweredArgument::Scalar:
      scalars[i] = a.param->scalar_bits;
      args[i] = &scalars[i];
      break;
    }
  }
  const bool gpu = compiled->Code->device_code() != nullptr;
  for (size_t i = 0; i < arguments.size() && gpu && !call.BufferOnDevice; ++i)
    if (isBuffer(arguments[i]))
      call.BufferOnDevice = buffers[i].device;
  for (size_t i = 0; i < arguments.size(); ++i)
    if (isBuffer(arguments[i]) && arguments[i].on_host && !buffers[i].host)
      throw RuntimeError("buffer " + arguments[i].name + " has no host memory (it is a device-only view), but " +
                         (gpu ? "a Func that runs on the host (one without a GPU schedule) uses it"
                              : "pipeline " + contents.Name + " runs on the host"));
  runtime::PipelineRun run;
  run.function = compiled->Code->function();
  run.device_code = compiled->Code->device_code();
  run.cuda_graphs = compiled->CudaGraphs;
  run.arguments = compiled->RunArguments.data();
  run.buffers = buffers.data();
  run.args = args.data();
  run.count = arguments.size();
  try {
    runtime::run_pipeline(&call.Runtime, run);
  } catch (const RuntimeError &e) {
    std::string first = call.first_error(); // the handler's first message is the most specific
    throw RuntimeError("realize of " + contents.Name + " failed: " + (first.empty() ? e.what() : first));
  }
  if (!gpu)
    return;
  // The caller's buffers learn which copy is newer.
  for (size_t i = 0, output = 0; i < arguments.size(); ++i) {
    const bool isOutput = arguments[i].kind == lower::LoweredArgument::OutputBuffer;
    RawBuffer *buffer = isOutput ? outputs[output++] : isBuffer(arguments[i]) ? &arguments[i].param->buffer : nullptr;
    if (buffer) {
      buffer->set_host_dirty(buffers[i].flags & ptxjit_buffer_host_dirty);
      buffer->set_device_dirty(buffers[i].flags & ptxjit_buffer_device_dirty);
    }
  }
}

} // namespace

namespace {

void realizeReporting(Pipeline &pipeline, PipelineContents &contents, JITUserContext *context,
                      llvm::ArrayRef<RawBuffer *> outputs) {
  jit::RealizeCall call(context, contents.Handlers);
  try {
    realizeWith(pipeline, contents, call, outputs);
  } catch (const std::exception &e) {
    // Failures the runtime reported went to the error handler already; the others go now.
    if (call.first_error().empty())
      call.Runtime.error(call.Runtime.user_context, e.what());
    throw;
  }
}

} // namespace

Realization::Realization(const std::vector<RawBuffer> &buffers) {
  for (const RawBuffer &b : buffers)
    Buffers.emplace_back(b);
}

const Realization::Element &Realization::only() const {
  if (Buffers.size() != 1)
    throw std::invalid_argument("Realization: " + std::to_string(Buffers.size()) +
                                " buffers (one for each value) cannot become one Buffer; take realization[i]");
  return Buffers[0];
}

Realization Pipeline::realize(const std::vector<int> &sizes) {
  std::vector<RawBuffer> buffers;
  for (const auto &output : Contents->Outputs)
    for (Type t : output->types)
      buffers.emplace_back(ptxjit_type_t{static_cast<uint8_t>(t.code), static_cast<uint8_t>(t.bits), 1}, sizes);
  realize(nullptr, buffers);
  return Realization(buffers);
}

void Pipeline::realize(JITUserContext *context, RawBuffer &output) {
  RawBuffer *outputs[] = {&output};
  realizeReporting(*this, *Contents, context, outputs);
}

void Pipeline::realize(JITUserContext *context, const std::vector<RawBuffer> &outputs) {
  // Handles sharing the caller's buffers (their dirty flags too).
  std::vector<RawBuffer> handles = outputs;
  llvm::SmallVector<RawBuffer *, 4> pointers;
  for (RawBuffer &handle : handles)
    pointers.push_back(&handle);
  realizeReporting(*this, *Contents, context, pointers);
}

bool host_supports_target_device(const Target &target, std::string *why) {
  auto no = [&](const std::string &reason) {
    if (why)
      *why = reason;
    return false;
  };
  if (!target.has_gpu_feature())
    return no("target " + target.to_string() + " has no GPU feature");
  std::string loadError;
  const runtime::cuda::DriverApi *api = runtime::cuda::try_driver(&loadError);
  if (!api)
    return no(loadError);
  int count = 0;
  if (api->cuDeviceGetCount(&count) != CUDA_SUCCESS || count == 0)
    return no("the CUDA driver reports no devices");
  if (int needed = target.cuda_capability(); needed != 0) {
    for (int d = 0; d < count; ++d)
      if (runtime::cuda::device_capability(*api, d) >= needed)
        return true;
    return no("no device has compute capability " + std::to_string(needed / 10) + "." + std::to_string(needed % 10));
  }
  return true;
}

} // namespace ptxjit
