#ifndef PTXJIT_IR_CSE_H
#define PTXJIT_IR_CSE_H

// Common subexpression elimination. A definition written in C++ is a DAG: an Expr held in a
// variable and used twice is one node with two parents. Passes that walk trees would visit it
// once per path, which grows exponentially with nesting; this turns the repeated subexpressions
// worth computing once (those reading memory, and float arithmetic) into lets, in linear time,
// before anything else walks the definition. Integer arithmetic is left in place: it is cheap,
// and bounds inference is more precise on it written out.

#include "IR.h"

#include <string>

namespace ptxjit::ir {

/// `e` with each repeated subexpression worth it computed once, in lets named <prefix>.cse<N>.
Expr common_subexpression_elimination(const Expr &e, const std::string &prefix);

} // namespace ptxjit::ir

#endif
