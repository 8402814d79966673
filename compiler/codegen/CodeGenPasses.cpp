#include "CodeGenPasses.h"

#include "ptxjit/Error.h"

#include <llvm/Support/CommandLine.h>

#include <mutex>

namespace ptxjit::codegen {

namespace {

llvm::cl::opt<bool> &flagOption(const char *name) {
  llvm::StringMap<llvm::cl::Option *> &options = llvm::cl::getRegisteredOptions();
  auto it = options.find(name);
  if (it == options.end())
    throw InternalError(std::string("LLVM has no -") + name + " option: code generation cannot leave that pass out");
  return *static_cast<llvm::cl::opt<bool> *>(it->second);
}

} // namespace

bool add_code_generation_passes(const CodeGenerationPasses &keep, const std::function<bool()> &addPasses) {
  static std::mutex mutex; // guards the options from one set-up to the next
  static llvm::cl::opt<bool> &disableLSR = flagOption("disable-lsr");
  static llvm::cl::opt<bool> &disablePostRA = flagOption("disable-post-ra");
  std::lock_guard<std::mutex> lock(mutex);
  disableLSR.setValue(!keep.LoopStrengthReduction);
  disablePostRA.setValue(!keep.PostRAScheduling);
  return addPasses();
}

} // namespace ptxjit::codegen
