#ifndef PTXJIT_CODEGEN_OPAQUENEGATIONS_H
#define PTXJIT_CODEGEN_OPAQUENEGATIONS_H

// Works around a miscompile in the CUDA 13.0 PTX compiler (ptxas and the 580 driver's JIT, sm_90,
// optimization level 1 and up): when it fuses two integer mins or maxes into one VIMNMX3, a
// negation that fed the inner one is dropped, so `min(min(x, -a), b)` computes `min(x, a, b)`.
// Negations written as ~a + 1 are compiled right. They are rewritten in the PTX text, after
// instruction selection, because LLVM makes negations there too (x * -2 becomes neg.s32 of a
// shift) and would fold ~a + 1 back into one.
// [gpu] "The driver keeps a negated operand of a fused 3-way min" records whether the driver
// still has the bug; remove this rewrite when no supported driver has it.

#include <string>

namespace ptxjit::codegen {

/// `ptx` with every `neg.s16` and `neg.s32` of a register replaced by `not` and `add 1`.
std::string make_negations_opaque(const std::string &ptx);

} // namespace ptxjit::codegen

#endif
