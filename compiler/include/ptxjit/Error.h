#ifndef PTXJIT_ERROR_H
#define PTXJIT_ERROR_H

// Errors the compiler raises. User mistakes are CompileError; a broken compiler invariant is
// InternalError. Both carry a message naming the Func, Var or buffer involved.

#include <stdexcept>
#include <string>

namespace ptxjit {

class CompileError : public std::runtime_error {
public:
  explicit CompileError(const std::string &message) : std::runtime_error(message) {}
};

class InternalError : public std::logic_error {
public:
  explicit InternalError(const std::string &message) : std::logic_error(message) {}
};

} // namespace ptxjit

#endif
