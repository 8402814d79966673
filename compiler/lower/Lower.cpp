#include "Lower.h"

#include "AddImageChecks.h"
#include "BufferConstraints.h"
#include "CheckGPUSchedules.h"
#include "CheckUpdateLoops.h"
#include "FuncValueBounds.h"
#include "GPUBlockHeapSlices.h"
#include "GPURegisterSlices.h"
#include "GPUSingleThreadSections.h"
#include "HoistStorage.h"
#include "InjectPrefetches.h"
#include "InjectTracing.h"
#include "InjectHostDeviceCopies.h"
#include "RealizationOrder.h"
#include "ScheduleFunctions.h"
#include "SlidingWindow.h"
#include "StorageFlattening.h"
#include "UnrollLoops.h"
#include "VectorizeLoops.h"
#include "WidenFloat16.h"
#include "WrapCalls.h"
#include "ir/Constants.h"
#include "ir/IRPrinter.h"
#include "ir/IRVisitor.h"
#include "ir/Simplify.h"
#include "ir/Substitute.h"
#include "lang/Parameter.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <map>
#include <set>
#include <sstream>
#include <thread>

namespace ptxjit::lower {

using namespace ir;

int debug_level() {
  const char *value = std::getenv("PTXJIT_DEBUG");
  return value ? std::atoi(value) : 0;
}

namespace {

class ScalarParamFinder : public IRVisitor {
public:
  std::vector<std::shared_ptr<ParameterContents>> Params;

private:
  using IRVisitor::visit;
  void visit(const Variable *op) override {
    if (op->param && !op->param->is_buffer &&
        std::find(Params.begin(), Params.end(), op->param) == Params.end())
      Params.push_back(op->param);
  }
};

// The fields of an output buffer (f.output_buffer().width()) are the realize's: a pipeline may
// use them only where that Func is one of its outputs.
void checkOutputBufferUses(const Stmt &s, const Outputs &outputs) {
  struct Finder : IRVisitor {
    const Outputs &TheOutputs;
    explicit Finder(const Outputs &o) : TheOutputs(o) {}
    using IRVisitor::visit;
    void visit(const Variable *op) override {
      if (!op->param || !op->param->is_output)
        return;
      for (const auto &output : TheOutputs)
        for (const auto &buffer : output->output_buffers)
          if (buffer == op->param)
            return;
      throw CompileError("the pipeline uses " + op->name + ", a field of " + describe_buffer(*op->param) +
                         ", but that Func is not an output of this pipeline");
    }
  } finder(outputs);
  s.accept(&finder);
}

template <typename Pass> Stmt runPass(const char *name, int debug, Pass pass) {
  auto start = std::chrono::steady_clock::now();
  Stmt s = pass();
  if (debug >= 2) {
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    std::fprintf(stderr, "ptxjit: lowering pass %s (%.3f ms):\n%s\n", name, ms, to_string(s).c_str());
  }
  return s;
}

// Prints the structure of a scheduled statement: lets and the guards of split tails are skipped.
class LoopNestPrinter : public IRVisitor {
public:
  std::ostringstream Out;

private:
  int Indent = 0;
  using IRVisitor::visit;

  std::ostream &line() { return Out << std::string(2 * static_cast<size_t>(Indent), ' '); }
  void nested(const Stmt &s) {
    ++Indent;
    s.accept(this);
    --Indent;
  }

  void visit(const ProducerConsumer *op) override {
    if (!op->is_producer) {
      op->body.accept(this);
      return;
    }
    line() << "produce " << op->name << ":\n";
    nested(op->body);
  }
  void visit(const For *op) override {
    const std::string outermost = std::string(".") + OutermostLoop;
    if (op->name.size() > outermost.size() &&
        op->name.compare(op->name.size() - outermost.size(), outermost.size(), outermost) == 0) {
      op->body.accept(this);
      return;
    }
    line() << to_string(op->for_type) << " " << op->name << ":\n";
    nested(op->body);
  }
  void visit(const IfThenElse *op) override {
    if (!is_realize_invariant(op->condition)) {
      op->then_case.accept(this);
      return;
    }
    line() << "if " << to_string(op->condition) << ":\n";
    nested(op->then_case);
    if (op->else_case.defined()) {
      line() << "else:\n";
      nested(op->else_case);
    }
  }
  void visit(const Provide *op) override {
    line() << op->name << "(";
    for (size_t i = 0; i < op->args.size(); ++i)
      Out << (i ? ", " : "") << to_string(op->args[i]);
    Out << ") = ...\n";
  }
  void visit(const AssertStmt *op) override {
    if (is_const(op->condition) && !is_const_one(op->condition))
      line() << "error: " << op->message << "\n";
  }
  void visit(const LetStmt *op) override { op->body.accept(this); }
};

} // namespace

std::string loop_nest(const Outputs &given) {
  const Outputs outputs = wrap_calls(given);
  Environment env = find_environment(outputs);
  std::vector<std::string> order = realization_order(outputs, env);
  check_update_loops(env);
  FuncValueBounds funcValues;
  LoopNestPrinter printer;
  schedule_functions(outputs, env, order, funcValues).accept(&printer);
  return printer.Out.str();
}

LoweredPipeline lower(const Outputs &given, const Target &target) {
  const int debug = debug_level();
  if (given.empty())
    throw CompileError("a Pipeline needs at least one output Func");
  for (size_t i = 0; i < given.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (given[i] == given[j])
        throw CompileError("Func " + given[i]->name + " is given twice as an output of one Pipeline");
  const Outputs outputs = wrap_calls(given);
  Environment env = find_environment(outputs);
  std::vector<std::string> order = realization_order(outputs, env);
  check_update_loops(env);
  FuncValueBounds funcValues;

  Stmt s = runPass("schedule functions and bounds inference", debug,
                   [&] { return schedule_functions(outputs, env, order, funcValues); });
  check_gpu_schedules(s, target);
  if (target.has_gpu_feature())
    s = runPass("registers at block loops", debug, [&] { return gpu_register_slices(s); });
  if (target.has_gpu_feature())
    s = runPass("heap at block loops", debug, [&] { return gpu_block_heap_slices(s); });
  s = runPass("sliding window", debug, [&] { return sliding_window(s, env); });
  s = runPass("tracing", debug, [&] { return inject_tracing(s, env); });
  checkOutputBufferUses(s, outputs);
  std::vector<std::shared_ptr<ParameterContents>> images = find_images(s);
  // Each output's buffers: one, or one for each value of a Tuple; those output_buffer()
  // constrains are constrained as inputs are.
  std::vector<OutputBuffer> outputBuffers;
  std::vector<std::shared_ptr<ParameterContents>> constrained = images;
  std::set<std::string> stridedOutputs;
  std::map<std::string, size_t> valueCounts;
  for (const auto &output : outputs) {
    valueCounts[output->name] = output->types.size();
    for (size_t v = 0; v < output->types.size(); ++v) {
      const std::string name = value_buffer_name(output->name, static_cast<int>(v), output->types.size());
      const bool strided = !output->output_buffers.empty() &&
                           DimensionConstraint::strided(output->output_buffers[v]->constraints);
      outputBuffers.push_back({name, output->types[v], static_cast<int>(output->args.size()), strided});
      if (strided)
        stridedOutputs.insert(name);
      if (!output->output_buffers.empty())
        constrained.push_back(output->output_buffers[v]);
    }
  }
  for (const auto &image : images)
    for (const auto &output : outputs)
      if (image->name == output->name || std::any_of(outputBuffers.begin(), outputBuffers.end(),
                                                     [&](const OutputBuffer &b) { return b.name == image->name; }))
        throw CompileError("the input " + image->name + " and the output Func " + output->name +
                           " have the same name");
  const bool checks = !target.has_feature(Target::Feature::NoAsserts);
  // The image checks' box queries, about a tenth of a compile, read the statement as it is here:
  // they run on another thread while this one simplifies, flattens and constrains it. funcValues
  // is theirs meanwhile. An error of theirs comes first, as it did when they ran first.
  std::future<Stmt> imageChecks;
  if (checks)
    imageChecks = std::async(std::thread::hardware_concurrency() >= 2 ? std::launch::async : std::launch::deferred,
                             [&, s] { return image_checks(s, outputBuffers, images, funcValues); });
  try {
    s = runPass("prefetches", debug, [&] { return inject_prefetches(s, env, outputs); });
    s = runPass("simplify", debug, [&] { return simplify(s); });
    s = runPass("storage flattening", debug, [&] { return storage_flattening(s, valueCounts, stridedOutputs, env); });
    // After flattening, which writes the indices that use the constrained fields.
    s = runPass("buffer constraints", debug, [&] { return constrain_buffers(s, constrained, checks); });
    s = runPass("simplify", debug, [&] { return simplify(s); });
    s = runPass("hoist storage", debug, [&] { return hoist_storage(s, env); });
  } catch (...) {
    if (imageChecks.valid())
      imageChecks.get();
    throw;
  }
  if (checks)
    s = runPass("add image checks", debug, [&] { return insert_image_checks(s, imageChecks.get()); });
  BufferSides sides;
  if (target.has_gpu_feature())
    s = runPass("inject host-device copies", debug, [&] { return inject_host_device_copies(s, &sides); });
  if (target.has_gpu_feature())
    s = runPass("single-thread sections in kernels", debug, [&] { return gpu_single_thread_sections(s); });
  s = runPass("unroll loops", debug, [&] { return unroll_loops(s); });
  s = runPass("vectorize loops", debug, [&] { return vectorize_loops(s); });
  s = runPass("simplify", debug, [&] { return simplify(s); });
  s = runPass("16-bit float arithmetic in float32", debug, [&] { return widen_float16(s); });

  LoweredPipeline result;
  for (const auto &output : outputs)
    result.name += (result.name.empty() ? "" : "_") + output->name;
  result.body = s;
  for (const OutputBuffer &b : outputBuffers)
    result.arguments.push_back({LoweredArgument::OutputBuffer, b.name, b.type, b.dimensions, nullptr});
  for (const auto &image : images)
    result.arguments.push_back({LoweredArgument::InputBuffer, image->name, image->type, image->dimensions, image});
  if (target.has_gpu_feature())
    for (LoweredArgument &a : result.arguments) {
      a.on_device = sides.device.count(a.name) > 0;
      a.on_host = sides.host.count(a.name) > 0;
    }
  ScalarParamFinder params;
  s.accept(&params);
  for (const auto &p : params.Params)
    result.arguments.push_back({LoweredArgument::Scalar, p->name, p->type, 0, p});
  return result;
}

} // namespace ptxjit::lower
