#ifndef PTXJIT_LOWER_STORAGEFLATTENING_H
#define PTXJIT_LOWER_STORAGEFLATTENING_H

// Turns multi-dimensional storage into flat memory: Realize becomes Allocate, Provide becomes
// Store and calls to Funcs and images become Loads, at index sum((arg_i - min_i) * stride_i).
// Dimension 0 of every buffer has stride 1 (input and output buffers are checked for it), but for
// a realization whose storage puts another dimension innermost (reorder_storage) and an input or
// output whose ImageParam or output_buffer() sets or frees that stride (an interleaved image). A Func of
// several values (a Tuple) has a buffer for each (value_buffer_name), over the same region.

#include "RealizationOrder.h"
#include "ir/IR.h"

#include <map>
#include <set>
#include <string>

namespace ptxjit::lower {

/// `outputValues`: how many values each output Func has (its buffers are arguments, not Realized);
/// `stridedOutputs`: the output buffers indexed by their dimension 0 stride; `env`: the Funcs,
/// for their storage orders.
ir::Stmt storage_flattening(const ir::Stmt &s, const std::map<std::string, size_t> &outputValues,
                            const std::set<std::string> &stridedOutputs, const Environment &env);

} // namespace ptxjit::lower

#endif
