#include "LLVMOptimizer.h"

#include <llvm/ADT/StringRef.h>
#include <llvm/Analysis/CGSCCPassManager.h>
#include <llvm/Analysis/LoopAnalysisManager.h>
#include <llvm/IR/PassInstrumentation.h>
#include <llvm/IR/PassManager.h>
#include <llvm/Passes/PassBuilder.h>

#include <algorithm>
#include <iterator>

namespace ptxjit::codegen {

namespace {

/// Loop passes left out of PassSelection::FastCompile. Measured on the CPU blur (2-core x86 host,
/// LLVM 19): IndVarSimplify alone was a third of optimization time, as its scalar evolution works
/// through the nested min/max loop bounds lowering makes; lowering already gives loops 32-bit
/// counters that start at their minimum, which is what it would rewrite them to. Loop load
/// elimination and distribution find nothing in loops whose loads the simplifier already
/// shares. Without them optimization took 9.5 instead of 15 ms and x86 code generation 12
/// instead of 13.5 ms (less for loop strength reduction to undo), with the same realize times.
constexpr llvm::StringLiteral skipped_for_compile_time[] = {
    "IndVarSimplifyPass",
    "LoopDistributePass",
    "LoopLoadEliminationPass",
};

} // namespace

void optimize_module(llvm::Module &module, llvm::TargetMachine &machine, PassSelection selection) {
  llvm::LoopAnalysisManager loops;
  llvm::FunctionAnalysisManager functions;
  llvm::CGSCCAnalysisManager cgscc;
  llvm::ModuleAnalysisManager modules;
  // Schedules vectorize and unroll explicitly; LLVM's own loop unrolling and vectorizers would
  // multiply the code (and the compile time, by about two) for little gain.
  llvm::PipelineTuningOptions tuning;
  tuning.LoopUnrolling = false;
  tuning.LoopVectorization = false;
  tuning.SLPVectorization = false;
  llvm::PassInstrumentationCallbacks instrumentation;
  if (selection == PassSelection::FastCompile)
    instrumentation.registerShouldRunOptionalPassCallback([](llvm::StringRef pass, llvm::Any) {
      return std::find(std::begin(skipped_for_compile_time), std::end(skipped_for_compile_time), pass) ==
             std::end(skipped_for_compile_time);
    });
  llvm::PassBuilder builder(&machine, tuning, std::nullopt, &instrumentation);
  builder.registerModuleAnalyses(modules);
  builder.registerCGSCCAnalyses(cgscc);
  builder.registerFunctionAnalyses(functions);
  builder.registerLoopAnalyses(loops);
  builder.crossRegisterProxies(loops, functions, cgscc, modules);
  llvm::ModulePassManager passes = builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
  passes.run(module, modules);
}

} // namespace ptxjit::codegen
