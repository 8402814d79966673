#ifndef PTXJIT_IR_IRPRINTER_H
#define PTXJIT_IR_IRPRINTER_H

// Readable text for IR, as PTXJIT_DEBUG=2 shows it.

#include "IR.h"

#include <ostream>
#include <string>

namespace ptxjit::ir {

std::string to_string(const Expr &e);
std::string to_string(const Stmt &s);
std::ostream &operator<<(std::ostream &out, const Stmt &s);

} // namespace ptxjit::ir

namespace ptxjit {
std::ostream &operator<<(std::ostream &out, const Expr &e);
}

#endif
