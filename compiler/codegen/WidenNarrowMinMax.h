#ifndef PTXJIT_CODEGEN_WIDENNARROWMINMAX_H
#define PTXJIT_CODEGEN_WIDENNARROWMINMAX_H

// Rewrites every 8- and 16-bit integer min and max in device code as the same operation on 32
// bits. The CUDA 13 driver's PTX compiler (sm_90, optimization level 1 and up) fuses a 16-bit
// min or max with a following comparison of its result into VIMNMX.U16x2 with a predicate output
// and inverts that predicate: `min.u16 r, a, 7; setp.eq.s16 p, r, 7` yields !(a >= 7). The 32-bit
// forms are compiled correctly. Runs after LLVM's optimizer, whose instcombine would narrow the
// widened operations back; NVPTX instruction selection keeps them 32-bit.

#include <llvm/IR/Module.h>

namespace ptxjit::codegen {

void widen_narrow_min_max(llvm::Module &module);

} // namespace ptxjit::codegen

#endif
