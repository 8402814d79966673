#ifndef PTXJIT_CODEGEN_LLVMOPTIMIZER_H
#define PTXJIT_CODEGEN_LLVMOPTIMIZER_H

// LLVM's standard optimization pipeline, tuned for the machine that will run the code.

#include <llvm/IR/Module.h>
#include <llvm/Target/TargetMachine.h>

namespace ptxjit::codegen {

void optimize_module(llvm::Module &module, llvm::TargetMachine &machine);

} // namespace ptxjit::codegen

#endif
