#ifndef PTXJIT_LOWER_WIDENFLOAT16_H
#define PTXJIT_LOWER_WIDENFLOAT16_H

// Arithmetic on Float(16) and BFloat(16) in float32: each operation's operands widen to float32
// (exactly) and its result rounds back to the 16-bit type, so every operation rounds once to its
// type as arithmetic in that type would (float32's 24 bits round +, -, *, / and sqrt of 11-bit
// operands the same as one rounding). Without strict_float, fast math applies as to float32:
// LLVM narrows such float32 operations back into 16-bit ones and may contract a * b + c into one
// rounding. Conversions to 16-bit floats round to nearest, ties to
// even, from every type; from float64 through float32 rounded to odd, which makes the second
// rounding exact. BFloat(16) conversions become integer code on its bits (it is float32's upper
// half), so that no target needs bfloat16 instructions or library calls: the code generators see
// BFloat(16) values only in loads, stores, selects, lets and reinterprets.

#include "ir/IR.h"

namespace ptxjit::lower {

ir::Stmt widen_float16(const ir::Stmt &s);

} // namespace ptxjit::lower

#endif
