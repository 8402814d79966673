#ifndef PTXJIT_LOWER_SLIDINGWINDOW_H
#define PTXJIT_LOWER_SLIDINGWINDOW_H

// A Func stored outside a serial loop and computed inside it (store_root().compute_at(g, y), say)
// keeps what earlier iterations computed: where the region each iteration needs moves forward
// along one dimension as the loop counts up, an iteration after the first computes only what
// lies past the previous iteration's end (a blur computes one new row of its input a row, not
// three). A region that does not move at all is computed in the first iteration only.
//
// Slides only Funcs of a pure definition, over the innermost loop around where they are computed,
// where every loop between their storage and their computation is serial or unrolled, the region
// depends on the loop in at most one dimension, its start there provably never moves back, and
// each condition around the computation inside the loop, once false, stays false (a split's tail
// guard): the iteration before is then known to have computed its part.
//
// A slid Func used only inside that loop is then stored folded: that dimension modulo a power of
// two no smaller than what one iteration uses (three rows of a 3x3 blur's input in four).

#include "RealizationOrder.h"
#include "ir/IR.h"

namespace ptxjit::lower {

ir::Stmt sliding_window(const ir::Stmt &s, const Environment &env);

} // namespace ptxjit::lower

#endif
