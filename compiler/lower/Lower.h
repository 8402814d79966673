#ifndef PTXJIT_LOWER_LOWER_H
#define PTXJIT_LOWER_LOWER_H

// The lowering driver: runs every pass in order, from Funcs and schedules to one loop nest over
// flat memory. PTXJIT_DEBUG=2 prints the statement after each pass with its time.

#include "RealizationOrder.h"
#include "ir/IR.h"
#include "lang/Function.h"
#include "ptxjit/Target.h"

#include <memory>
#include <string>
#include <vector>

namespace ptxjit::lower {

struct LoweredArgument {
  enum Kind { OutputBuffer, InputBuffer, Scalar };
  Kind kind;
  std::string name;
  Type type;
  int dimensions = 0;
  std::shared_ptr<ParameterContents> param; ///< null for the output
  /// A buffer's users on a GPU target: kernels (it needs a device copy), host code (it needs host
  /// memory; the generated code then keeps the buffer's dirty flags). On the host target: host.
  bool on_device = false, on_host = true;
};

struct LoweredPipeline {
  std::string name;
  ir::Stmt body;
  /// The output buffers first (for each output in order, one, or one for each value of a Tuple),
  /// then input buffers, then scalar Params, each in first-use order.
  std::vector<LoweredArgument> arguments;
};

/// `outputs`: the pipeline's output Funcs, each computed at root over its buffers.
LoweredPipeline lower(const Outputs &outputs, const Target &target);

/// The loops the schedules make, as text: each Func's produce, its loops outermost first with
/// their kinds, the branches of specializations, and the definitions inside (Func::print_loop_nest).
std::string loop_nest(const Outputs &outputs);

/// The PTXJIT_DEBUG level (0 when unset).
int debug_level();

} // namespace ptxjit::lower

#endif
