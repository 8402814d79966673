#ifndef PTXJIT_LOWER_STORAGEFLATTENING_H
#define PTXJIT_LOWER_STORAGEFLATTENING_H

// Turns multi-dimensional storage into flat memory: Realize becomes Allocate, Provide becomes
// Store and calls to Funcs and images become Loads, at index sum((arg_i - min_i) * stride_i).
// Dimension 0 of every buffer has stride 1 (input and output buffers are checked for it).

#include "RealizationOrder.h"
#include "ir/IR.h"

namespace ptxjit::lower {

ir::Stmt storage_flattening(const ir::Stmt &s);

} // namespace ptxjit::lower

#endif
