#ifndef PTXJIT_LOWER_BUFFERCONSTRAINTS_H
#define PTXJIT_LOWER_BUFFERCONSTRAINTS_H

// The constraints of ImageParam::dim and Func::output_buffer().dim (a min, extent or stride the
// buffer must have): asserts that the buffer given at realize meets them, each naming it, the
// dimension and both values (none with no_asserts, where the caller vouches for them), then the
// constrained fields as lets around the pipeline, so that the compiler works with their values
// (a constant stride makes index arithmetic constant, constant output bounds constant loops).

#include "ir/IR.h"
#include "lang/Parameter.h"

#include <memory>
#include <vector>

namespace ptxjit::lower {

ir::Stmt constrain_buffers(const ir::Stmt &s, const std::vector<std::shared_ptr<ParameterContents>> &buffers,
                           bool checks);

} // namespace ptxjit::lower

#endif
