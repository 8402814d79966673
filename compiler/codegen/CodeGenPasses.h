#ifndef PTXJIT_CODEGEN_CODEGENPASSES_H
#define PTXJIT_CODEGEN_CODEGENPASSES_H

// Setting up LLVM's code generation passes, with or without loop strength reduction.

#include <functional>

namespace ptxjit::codegen {

/// Runs `addPasses` (a TargetMachine's addPassesToEmitMC or addPassesToEmitFile) with LLVM's loop
/// strength reduction in the pipeline it sets up or out of it, and returns what it returns. LLVM
/// reads that choice from a process-wide option (-disable-lsr) while it adds the passes; every
/// code generation set-up of ptxjit goes through here, one at a time, so that each sees its own.
/// Host code leaves LSR out (see HostCodeGenerator in jit/HostJIT.cpp); NVPTX keeps it.
bool add_code_generation_passes(bool loopStrengthReduction, const std::function<bool()> &addPasses);

} // namespace ptxjit::codegen

#endif
