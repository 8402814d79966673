#ifndef PTXJIT_LOWER_SCHEDULEFUNCTIONS_H
#define PTXJIT_LOWER_SCHEDULEFUNCTIONS_H

// Builds the loop nests of every stage from its schedule and places each Func's storage and
// computation at its store and compute levels, inlining the Funcs computed inline. Bounds
// inference runs as each Func is placed: its required region comes from the consumers
// already in place around it.

#include "RealizationOrder.h"
#include "ir/IR.h"
#include "ir/Interval.h"

#include <vector>

namespace ptxjit::lower {

/// Each output is computed at root over its buffer's region, before the outputs that read it.
ir::Stmt schedule_functions(const Outputs &outputs, const Environment &env, const std::vector<std::string> &order,
                            ir::CallBounds &funcValues);

/// Whether `loop` (named <func>.s<k>.<var>) is a loop of `level`, of any stage of its Func.
bool is_stage_loop_of(const std::string &loop, const LoopLevelContents &level);

/// The loop nest of one stage, over the symbolic region f.s<k>.<var>.min/max. For the output,
/// `outputChecks` receives the checks that its region is large enough for its shifted tails.
ir::Stmt build_stage_loop_nest(const FunctionContents &f, int stage, std::vector<ir::Stmt> *outputChecks);

} // namespace ptxjit::lower

#endif
