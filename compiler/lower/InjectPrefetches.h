#ifndef PTXJIT_LOWER_INJECTPREFETCHES_H
#define PTXJIT_LOWER_INJECTPREFETCHES_H

// Halide's prefetch directives (Stage::prefetch). A stage's loop nest is built with a placeholder
// at the top of the body of each loop a directive names; once bounds inference and sliding have
// fixed what every loop computes and where each Func is stored, each placeholder becomes the
// hint: loops over the cache lines of the region the loop's body touches of the prefetched Func
// or input, `offset` iterations of the `from` loop ahead, as a Call::Prefetch of each line's
// first element.

#include "RealizationOrder.h"
#include "ir/IR.h"
#include "lang/Function.h"

#include <string>

namespace ptxjit::lower {

/// The placeholder of `p`, put first in the body of the loop p.at names; `atLoop` and `fromLoop`
/// are the full names of the loops p.at and p.from name.
ir::Stmt prefetch_placeholder(const PrefetchDirective &p, const std::string &atLoop, const std::string &fromLoop);

/// Replaces the placeholders with prefetches. CompileError for a Func the loop's body touches but
/// that is stored inside the loop.
ir::Stmt inject_prefetches(const ir::Stmt &s, const Environment &env, const Outputs &outputs);

} // namespace ptxjit::lower

#endif
