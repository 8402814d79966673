#ifndef PTXJIT_LOWER_REALIZATIONORDER_H
#define PTXJIT_LOWER_REALIZATIONORDER_H

// The Funcs a pipeline uses, and an order in which each is realized before its consumers.

#include "lang/Function.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace ptxjit::lower {

using Environment = std::map<std::string, std::shared_ptr<FunctionContents>>;

/// Every Func reachable from `output`. Two different Funcs with one name are a CompileError.
Environment find_environment(const std::shared_ptr<FunctionContents> &output);

/// Producers before consumers; `output` last.
std::vector<std::string> realization_order(const std::shared_ptr<FunctionContents> &output, const Environment &env);

/// The Funcs called by any definition of `f` (not `f` itself).
std::vector<std::shared_ptr<FunctionContents>> direct_callees(const FunctionContents &f);

} // namespace ptxjit::lower

#endif
