#ifndef PTXJIT_IR_SIMPLIFY_H
#define PTXJIT_IR_SIMPLIFY_H

// Constant folding, linear normalization of integer sums, min/max/select and boolean rules, and
// let handling (lets bound to constants or variables are substituted; unused lets are dropped).

#include "IR.h"

namespace ptxjit::ir {

Expr simplify(const Expr &e);
Stmt simplify(const Stmt &s);

/// True when `e` simplifies to the constant true.
bool can_prove(const Expr &e);

} // namespace ptxjit::ir

#endif
