#ifndef PTXJIT_LOWER_CHECKGPUSCHEDULES_H
#define PTXJIT_LOWER_CHECKGPUSCHEDULES_H

// Rejects GPU schedules that cannot run: GPU loops on a target without cuda, thread loops
// outside block loops, blocks nested in threads, Funcs computed inside a kernel, and (on a
// CUDA target) Funcs left on the host. Each CompileError names the Func or loop and the reason.

#include "ir/IR.h"
#include "ptxjit/Target.h"

namespace ptxjit::lower {

void check_gpu_schedules(const ir::Stmt &s, const Target &target);

} // namespace ptxjit::lower

#endif
