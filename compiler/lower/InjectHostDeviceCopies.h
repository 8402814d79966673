#ifndef PTXJIT_LOWER_INJECTHOSTDEVICECOPIES_H
#define PTXJIT_LOWER_INJECTHOSTDEVICECOPIES_H

// On a GPU target, code outside kernels runs on the host: Funcs without a GPU schedule are host
// stages. A buffer that both host code and kernels read or write keeps two copies with dirty
// marks, as in Halide: before a kernel, the buffers it touches are brought to the device (a copy
// only where the host's is newer), after it those it wrote are marked device-dirty; host
// statements likewise the other way. Inputs and outputs touched on the host take part even when
// no kernel touches them, since the caller's copies may be on either side. Each Allocate outside
// kernels gets the side (or sides) that touch it.

#include "ir/IR.h"

#include <set>
#include <string>

namespace ptxjit::lower {

/// Which buffers (inputs, outputs, intermediates) host code and kernels touch.
struct BufferSides {
  std::set<std::string> host, device;
};

ir::Stmt inject_host_device_copies(const ir::Stmt &s, BufferSides *sides);

} // namespace ptxjit::lower

#endif
