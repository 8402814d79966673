#ifndef PTXJIT_LOWER_INJECTTRACING_H
#define PTXJIT_LOWER_INJECTTRACING_H

// Halide's tracing of a Func (trace_stores, trace_loads, trace_realizations): trace events
// (Call::Trace) that print each value stored, each value read and the start and end of each
// produce and consume, with the region, through the realize's print handler. Runs on the
// scheduled statement, before storage flattening: a store's event reads the point back.

#include "RealizationOrder.h"
#include "ir/IR.h"

namespace ptxjit::lower {

ir::Stmt inject_tracing(const ir::Stmt &s, const Environment &env);

} // namespace ptxjit::lower

#endif
