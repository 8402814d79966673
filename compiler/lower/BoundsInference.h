#ifndef PTXJIT_LOWER_BOUNDSINFERENCE_H
#define PTXJIT_LOWER_BOUNDSINFERENCE_H

// Sizes every Func: the region each stage computes (f.s<k>.<var>.min/max) comes from what its
// consumers read, what its own updates write, and its bound() directives; its storage
// (f.min.<i>, f.extent.<i>) covers every point read or written where it is stored.

#include "ir/Interval.h"
#include "lang/Function.h"

namespace ptxjit::lower {

/// Lets in order, outermost first.
using Lets = std::vector<std::pair<std::string, ir::Expr>>;

/// The lets leading `s` and the statement inside them.
std::pair<Lets, ir::Stmt> peel_lets(const ir::Stmt &s);
ir::Stmt wrap_in_lets(const Lets &lets, ir::Stmt body);

// The region and storage lets of the Funcs computed or stored at one level (a loop's body, or the
// root) lead that level's statement, consumers' first. A producer's region is found in the
// statement inside them, where they are free names: stated in them, it stays small (expanded into
// the outermost variables, every level of a chain of stencils multiplied its size).

/// Computes f (`produce`) at the level whose statement is `level`, before what follows: f's region
/// lets join the leading ones.
/// Coordinates that are Func values are bounded by `funcValues` here and below.
ir::Stmt define_compute_bounds(const FunctionContents &f, const ir::Stmt &produce, const ir::Stmt &level,
                               ir::CallBounds &funcValues);

/// Stores f at the level whose statement is `level`: f's Realize, sized to what it touches, goes
/// inside the leading lets, and its storage lets join them.
ir::Stmt realize_with_bounds(const FunctionContents &f, const ir::Stmt &level, ir::CallBounds &funcValues);

/// Wraps `consumer` in a check that what it reads of `output` (one of several outputs, computed
/// over its buffer's region) lies inside that region.
ir::Stmt check_output_reads(const FunctionContents &output, const ir::Stmt &consumer, ir::CallBounds &funcValues);

/// Appends the lets defining the output's region from its buffer to `lets`, and the checks that its
/// updates stay inside it to `checks`.
void define_output_bounds(const FunctionContents &output, ir::CallBounds &funcValues, Lets &lets,
                          std::vector<ir::Stmt> &checks);

} // namespace ptxjit::lower

#endif
