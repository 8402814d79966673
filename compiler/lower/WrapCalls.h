#ifndef PTXJIT_LOWER_WRAPCALLS_H
#define PTXJIT_LOWER_WRAPCALLS_H

// Func::in and ImageParam::in: the pipeline's Funcs copied so that each consumer reads the wrapper
// meant for it (its own, else the one for every consumer) instead of the Func or input wrapped,
// with every call pointing at the copies. A wrapper reads what it wraps itself. The user's Funcs
// stay as they are: other pipelines may use them without the redirection.

#include "RealizationOrder.h"

namespace ptxjit::lower {

Outputs wrap_calls(const Outputs &outputs);

} // namespace ptxjit::lower

#endif
