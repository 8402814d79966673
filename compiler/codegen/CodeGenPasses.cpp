#include "CodeGenPasses.h"

#include "ptxjit/Error.h"

#include <llvm/Support/CommandLine.h>

#include <mutex>

namespace ptxjit::codegen {

bool add_code_generation_passes(bool loopStrengthReduction, const std::function<bool()> &addPasses) {
  static std::mutex mutex; // guards the option from one set-up to the next
  static llvm::cl::opt<bool> *const disableLSR = [] {
    llvm::StringMap<llvm::cl::Option *> &options = llvm::cl::getRegisteredOptions();
    auto it = options.find("disable-lsr");
    return it == options.end() ? nullptr : static_cast<llvm::cl::opt<bool> *>(it->second);
  }();
  if (!disableLSR)
    throw InternalError("LLVM has no -disable-lsr option: code generation cannot leave loop strength reduction out");
  std::lock_guard<std::mutex> lock(mutex);
  disableLSR->setValue(!loopStrengthReduction);
  return addPasses();
}

} // namespace ptxjit::codegen
