#ifndef PTXJIT_CODEGEN_SIGNEDBOOLTOFLOAT_H
#define PTXJIT_CODEGEN_SIGNEDBOOLTOFLOAT_H

// Rewrites `sitofp i1 b` (true is -1) in device code as `select b, -1.0, 0.0`. LLVM 19's NVPTX
// backend converts a signed i1 as if it were unsigned (selp 1, 0 then cvt.rn.f32.s32), so true
// becomes +1.0 (fixed in LLVM 20). The language never converts a bool as signed; instcombine
// makes these from a negated comparison converted to float, as in float(-(x >= 5)) or
// float(q / -5) with q in [0, 7]: fuzz seed 162000386. Runs after LLVM's optimizer, which makes them.

#include <llvm/IR/Module.h>

namespace ptxjit::codegen {

void expand_signed_bool_to_float(llvm::Module &module);

} // namespace ptxjit::codegen

#endif
