#ifndef PTXJIT_LOWER_BOUNDSINFERENCE_H
#define PTXJIT_LOWER_BOUNDSINFERENCE_H

// Sizes every Func: the region each stage computes (f.s<k>.<var>.min/max) comes from what its
// consumers read, what its own updates write, and its bound() directives; its storage
// (f.min.<i>, f.extent.<i>) covers every point read or written where it is stored.

#include "ir/Interval.h"
#include "lang/Function.h"

namespace ptxjit::lower {

using Lets = std::vector<std::pair<std::string, ir::Expr>>;

/// Wraps `produceConsume` (placed where `consumer` was) in the lets defining f's computed region.
/// Where `hoisted` is given (f is computed at root), the lets are appended to it instead, to be
/// defined around the whole pipeline: the consumers' own region lets are then free names in
/// `consumer`, and f's region is stated in them rather than expanded into the output's region
/// (expanded, every level of a chain of stencils multiplied the size of the expressions).
/// Coordinates that are Func values are bounded by `funcValues` here and below.
ir::Stmt define_compute_bounds(const FunctionContents &f, const ir::Stmt &produceConsume, const ir::Stmt &consumer,
                               ir::CallBounds &funcValues, Lets *hoisted = nullptr);

/// Wraps `body` in f's Realize, sized to what `body` touches.
ir::Stmt realize_with_bounds(const FunctionContents &f, const ir::Stmt &body, ir::CallBounds &funcValues);

/// Wraps `consumer` in a check that what it reads of `output` (one of several outputs, computed
/// over its buffer's region) lies inside that region.
ir::Stmt check_output_reads(const FunctionContents &output, const ir::Stmt &consumer, ir::CallBounds &funcValues);

/// Appends the lets defining the output's region from its buffer to `lets`, and the checks that its
/// updates stay inside it to `checks`.
void define_output_bounds(const FunctionContents &output, ir::CallBounds &funcValues, Lets &lets,
                          std::vector<ir::Stmt> &checks);

} // namespace ptxjit::lower

#endif
