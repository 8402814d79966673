#ifndef PTXJIT_CODEGEN_WIDENNARROWINTEGERS_H
#define PTXJIT_CODEGEN_WIDENNARROWINTEGERS_H

// Rewrites 8- and 16-bit integer arithmetic, comparisons, min and max in device code as the same
// operations on 32 bits, truncated back, so that the PTX does narrow arithmetic mostly as nvcc's
// does (C promotes it to int): the driver's PTX compiler is exercised far less on 16-bit paths,
// and it miscompiles at least one. The CUDA 13 driver (sm_90, optimization level 1 and up) fuses
// `min.u16 r, a, 7; setp.eq.s16 p, r, 7` into VIMNMX.U16x2 with an inverted predicate. Runs after
// LLVM's optimizer, whose instcombine would narrow the operations back. NVPTX instruction
// selection keeps min, max, division, remainder and multiplication 32-bit; it may narrow an add,
// a mask or a compare of values loaded narrow again (add.s16, and.b16, setp.*.u16).

#include <llvm/IR/Module.h>

namespace ptxjit::codegen {

void widen_narrow_integers(llvm::Module &module);

} // namespace ptxjit::codegen

#endif
