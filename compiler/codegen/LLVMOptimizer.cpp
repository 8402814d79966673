#include "LLVMOptimizer.h"

#include <llvm/Analysis/CGSCCPassManager.h>
#include <llvm/Analysis/LoopAnalysisManager.h>
#include <llvm/IR/PassManager.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Transforms/IPO/GlobalDCE.h>
#include <llvm/Transforms/InstCombine/InstCombine.h>
#include <llvm/Transforms/Scalar/EarlyCSE.h>
#include <llvm/Transforms/Scalar/GVN.h>
#include <llvm/Transforms/Scalar/LICM.h>
#include <llvm/Transforms/Scalar/LoopPassManager.h>
#include <llvm/Transforms/Scalar/LoopRotation.h>
#include <llvm/Transforms/Scalar/Reassociate.h>
#include <llvm/Transforms/Scalar/SROA.h>
#include <llvm/Transforms/Scalar/SimpleLoopUnswitch.h>
#include <llvm/Transforms/Scalar/SimplifyCFG.h>

namespace ptxjit::codegen {

namespace {

/// The passes of PassSelection::FastCompile, chosen by measuring (2-core x86 host, LLVM 19) the
/// realize time of eight CPU pipelines (blur, pointwise math, gamma, histogram, matrix product,
/// transpose, 5x5 convolution, column sums) against O3: none slower, and optimization of the CPU
/// blur takes 2.6 ms instead of 7.5. What each one is for in lowered code: SROA and EarlyCSE the
/// scalars and repeated loads of a loop body; InstCombine and SimplifyCFG the guards and address
/// arithmetic; Reassociate groups loop-invariant terms of sums so that LICM hoists them (the
/// matrix product is 20% slower without); LoopRotate, LICM and trivial unswitching hoist
/// invariant loads and tests out of loops and keep accumulators in registers; GVN shares what
/// LICM exposed. O3's interprocedural passes find nothing (a pipeline is one function and its
/// loop bodies, called through pointers), and its value-range, constraint and idiom passes cost
/// two thirds of the time for code the simplifier has already reduced.
llvm::ModulePassManager hostPipeline() {
  llvm::FunctionPassManager function;
  function.addPass(llvm::SROAPass(llvm::SROAOptions::ModifyCFG));
  function.addPass(llvm::EarlyCSEPass(/*UseMemorySSA=*/true));
  function.addPass(llvm::SimplifyCFGPass());
  function.addPass(llvm::InstCombinePass());
  function.addPass(llvm::ReassociatePass());
  llvm::LoopPassManager loop;
  loop.addPass(llvm::LoopRotatePass());
  loop.addPass(llvm::LICMPass(llvm::LICMOptions()));
  loop.addPass(llvm::SimpleLoopUnswitchPass(/*NonTrivial=*/false));
  function.addPass(llvm::createFunctionToLoopPassAdaptor(std::move(loop), /*UseMemorySSA=*/true));
  function.addPass(llvm::GVNPass());
  function.addPass(llvm::InstCombinePass());
  function.addPass(llvm::SimplifyCFGPass());
  llvm::ModulePassManager module;
  module.addPass(llvm::createModuleToFunctionPassAdaptor(std::move(function)));
  module.addPass(llvm::GlobalDCEPass());
  return module;
}

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
  llvm::PassBuilder builder(&machine, tuning);
  builder.registerModuleAnalyses(modules);
  builder.registerCGSCCAnalyses(cgscc);
  builder.registerFunctionAnalyses(functions);
  builder.registerLoopAnalyses(loops);
  builder.crossRegisterProxies(loops, functions, cgscc, modules);
  llvm::ModulePassManager passes = selection == PassSelection::FastCompile
                                       ? hostPipeline()
                                       : builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
  passes.run(module, modules);
}

} // namespace ptxjit::codegen
