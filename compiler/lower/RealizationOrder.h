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
/// A pipeline's outputs, in the order its buffers are given.
using Outputs = std::vector<std::shared_ptr<FunctionContents>>;

/// Every Func reachable from the outputs. Two different Funcs with one name are a CompileError.
Environment find_environment(const Outputs &outputs);

/// Producers before consumers (an output another output reads comes before it).
std::vector<std::string> realization_order(const Outputs &outputs, const Environment &env);

/// The Funcs called by any definition of `f` (not `f` itself).
std::vector<std::shared_ptr<FunctionContents>> direct_callees(const FunctionContents &f);

} // namespace ptxjit::lower

#endif
