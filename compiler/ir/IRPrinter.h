#ifndef PTXJIT_IR_IRPRINTER_H
#define PTXJIT_IR_IRPRINTER_H

// Readable text for IR, as PTXJIT_DEBUG=2 shows it.

#include "IR.h"
#include "ptxjit/IROperator.h" // operator<< for Expr, which the public API exports

#include <ostream>
#include <string>

namespace ptxjit::ir {

std::string to_string(const Expr &e);
std::string to_string(const Stmt &s);
std::ostream &operator<<(std::ostream &out, const Stmt &s);

} // namespace ptxjit::ir

#endif
