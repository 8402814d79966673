#ifndef PTXJIT_CODEGEN_LLVMOPTIMIZER_H
#define PTXJIT_CODEGEN_LLVMOPTIMIZER_H

// LLVM's standard optimization pipeline, tuned for the machine that will run the code.

#include <llvm/IR/Module.h>
#include <llvm/Target/TargetMachine.h>

namespace ptxjit::codegen {

enum class PassSelection {
  /// LLVM's O3 pipeline, less the unrolling and vectorization that schedules do themselves.
  Full,
  /// A short pipeline for lowered code, which the simplifier has already cleaned and whose loops
  /// schedules have already vectorized and unrolled (see hostPipeline in LLVMOptimizer.cpp). Host
  /// code, which a user waits for at compile_jit.
  FastCompile,
};

void optimize_module(llvm::Module &module, llvm::TargetMachine &machine, PassSelection selection);

} // namespace ptxjit::codegen

#endif
