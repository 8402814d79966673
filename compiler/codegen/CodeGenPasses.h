#ifndef PTXJIT_CODEGEN_CODEGENPASSES_H
#define PTXJIT_CODEGEN_CODEGENPASSES_H

// Setting up LLVM's code generation passes, with or without some of its optional passes.

#include <functional>

namespace ptxjit::codegen {

/// LLVM's optional code generation passes a set-up keeps.
struct CodeGenerationPasses {
  bool LoopStrengthReduction = true;
  bool PostRAScheduling = true;
};

/// Runs `addPasses` (a TargetMachine's addPassesToEmitMC or addPassesToEmitFile) with the
/// optional passes `keep` names in the pipeline it sets up or out of it, and returns what it
/// returns. LLVM reads those choices from process-wide options (-disable-lsr, -disable-post-ra)
/// while it adds the passes; every code generation set-up of ptxjit goes through here, one at a
/// time, so that each sees its own. Host code leaves both out (see HostCodeGenerator in
/// jit/HostJIT.cpp); NVPTX keeps LSR and schedules nothing after register allocation anyway.
bool add_code_generation_passes(const CodeGenerationPasses &keep, const std::function<bool()> &addPasses);

} // namespace ptxjit::codegen

#endif
