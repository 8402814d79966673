#ifndef PTXJIT_LOWER_INLINEFUNCTIONS_H
#define PTXJIT_LOWER_INLINEFUNCTIONS_H

// Replaces calls to a Func computed inline by its definition.

#include "lang/Function.h"

namespace ptxjit::lower {

ir::Stmt inline_function(const ir::Stmt &s, const FunctionContents &f);
ir::Expr inline_function(const ir::Expr &e, const FunctionContents &f);

} // namespace ptxjit::lower

#endif
