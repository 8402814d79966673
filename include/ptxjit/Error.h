#ifndef PTXJIT_ERROR_H
#define PTXJIT_ERROR_H

// Errors ptxjit raises. User mistakes in a pipeline are CompileError, failures while running
// one are RuntimeError, and a broken compiler invariant is InternalError. Messages name the
// Func, Var or buffer involved.

#include "ptxjit/RuntimeError.h"

#include <stdexcept>
#include <string>

#pragma GCC visibility push(default)
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

#pragma GCC visibility pop

#endif
