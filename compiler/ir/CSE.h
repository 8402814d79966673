#ifndef PTXJIT_IR_CSE_H
#define PTXJIT_IR_CSE_H

// Common subexpression elimination. A definition written in C++ is a DAG: an Expr held in a
// variable and used twice is one node with two parents; inlining a Func read twice makes one too.
// Passes that walk trees would visit it once per path, which grows exponentially with nesting;
// this turns the repeated subexpressions worth computing once into lets, in time linear in the
// DAG: those reading memory, float arithmetic, and any whose written-out form would be large.
// Small integer arithmetic (x + 1) stays written out: it is cheap, and bounds inference is more
// precise on it.

#include "IR.h"

#include <string>

namespace ptxjit::ir {

/// `e` with each repeated subexpression worth it computed once, in lets named <prefix>.cse<N>.
/// Lets already in `e` are looked through (their values numbered where they are used), so each
/// name they bind must be bound once in `e` and mean one thing wherever it appears.
Expr common_subexpression_elimination(const Expr &e, const std::string &prefix);

} // namespace ptxjit::ir

#endif
