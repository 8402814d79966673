#ifndef PTXJIT_RUNTIMEERROR_H
#define PTXJIT_RUNTIMEERROR_H

#include <stdexcept>
#include <string>

#pragma GCC visibility push(default)
namespace ptxjit {

/// A pipeline that failed while running: bad buffers, failed checks, out of memory, a driver
/// error (the message names the failing call and the driver's error).
class RuntimeError : public std::runtime_error {
public:
  explicit RuntimeError(const std::string &message) : std::runtime_error(message) {}
};

} // namespace ptxjit

#pragma GCC visibility pop

#endif
