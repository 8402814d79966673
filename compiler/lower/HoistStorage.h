#ifndef PTXJIT_LOWER_HOISTSTORAGE_H
#define PTXJIT_LOWER_HOISTSTORAGE_H

// Halide's hoist_storage: moves the flattened allocations of each Func that has a hoist level out
// to that loop (or outside every loop), sized by a bound of their size over the loops and lets
// between, so that each iteration of those loops reuses one allocation.

#include "RealizationOrder.h"
#include "ir/IR.h"

namespace ptxjit::lower {

ir::Stmt hoist_storage(const ir::Stmt &s, const Environment &env);

} // namespace ptxjit::lower

#endif
