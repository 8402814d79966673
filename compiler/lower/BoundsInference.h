#ifndef PTXJIT_LOWER_BOUNDSINFERENCE_H
#define PTXJIT_LOWER_BOUNDSINFERENCE_H

// Sizes every Func: the region each stage computes (f.s<k>.<var>.min/max) comes from what its
// consumers read, what its own updates write, and its bound() directives; its storage
// (f.min.<i>, f.extent.<i>) covers every point read or written where it is stored.

#include "ir/Interval.h"
#include "lang/Function.h"

namespace ptxjit::lower {

/// Wraps `produceConsume` (placed where `consumer` was) in the lets defining f's computed region.
/// Coordinates that are Func values are bounded by `funcValues` here and below.
ir::Stmt define_compute_bounds(const FunctionContents &f, const ir::Stmt &produceConsume, const ir::Stmt &consumer,
                               ir::CallBounds &funcValues);

/// Wraps `body` in f's Realize, sized to what `body` touches.
ir::Stmt realize_with_bounds(const FunctionContents &f, const ir::Stmt &body, ir::CallBounds &funcValues);

/// Wraps `consumer` in a check that what it reads of `output` (one of several outputs, computed
/// over its buffer's region) lies inside that region.
ir::Stmt check_output_reads(const FunctionContents &output, const ir::Stmt &consumer, ir::CallBounds &funcValues);

/// Defines the output's region from its buffer and checks that its updates stay inside it, after
/// `scheduleChecks` (stated over that region).
ir::Stmt define_output_bounds(const FunctionContents &output, const ir::Stmt &s,
                              const std::vector<ir::Stmt> &scheduleChecks, ir::CallBounds &funcValues);

} // namespace ptxjit::lower

#endif
