#ifndef PTXJIT_CODEGEN_PROMOTENARROWINTEGERS_H
#define PTXJIT_CODEGEN_PROMOTENARROWINTEGERS_H

// Device code computes 8- and 16-bit integers in 32-bit registers, as C's integer promotion has
// nvcc do: every narrow value becomes an i32 whose low bits are the value (the high bits are
// whatever the operations left there), extended with its sign or with zeros where an operation
// needs it (division, remainder, right shifts, comparisons, min and max, conversions). Narrow
// types stay only in memory: loads extend, stores truncate.
//
// Why: the CUDA 13.0 PTX compiler (ptxas and the 580 driver's JIT, sm_90, level 2 and up)
// miscompiles 16-bit registers. It fuses `min.u16 r, a, 7; setp.eq.s16 p, r, 7` into a
// VIMNMX.U16x2 with an inverted predicate, and it keeps a loop-invariant 16-bit value in the low
// half of a register whose high half it reuses, then shifts that register right as if it were
// sign-extended (GPU fuzz seed 406000948). 32-bit paths are the ones it is tested on.
// Runs after LLVM's optimizer, whose instcombine would narrow the operations back.

#include <llvm/IR/Module.h>

namespace ptxjit::codegen {

void promote_narrow_integers(llvm::Module &module);

} // namespace ptxjit::codegen

#endif
