#ifndef PTXJIT_LOWER_ADDIMAGECHECKS_H
#define PTXJIT_LOWER_ADDIMAGECHECKS_H

// Run-time checks of the input and output buffers: dimension 0 is dense, and every input
// covers the region the pipeline reads from it (an error names the buffer, the dimension, the
// region needed and the region given).

#include "ir/IR.h"
#include "ir/Interval.h"

#include <memory>
#include <vector>

namespace ptxjit {
struct ParameterContents;
}

namespace ptxjit::lower {

struct OutputBuffer {
  std::string name;
  Type type;
  int dimensions;
  /// Its output_buffer() sets or frees the stride of dimension 0: it need not be dense there.
  bool strided = false;
};

/// The run-time checks of the buffers `s` reads and writes, simplified, inside the leading lets
/// of `s` that they refer to. `s` is the statement before storage flattening (it still has the
/// Calls to images and Funcs); coordinates that are Func values are bounded by `funcValues`.
/// Reads `s` only: lowering runs it on another thread while it goes on with `s`.
ir::Stmt image_checks(const ir::Stmt &s, const std::vector<OutputBuffer> &outputs,
                      const std::vector<std::shared_ptr<ParameterContents>> &images, ir::CallBounds &funcValues);

/// `s` with `checks` (from image_checks) after its leading lets and checks (the buffer
/// constraints', the outputs' own): an output its schedule cannot fill is named before the
/// inputs that region would read. The checks then see the constrained buffer fields, as code does.
ir::Stmt insert_image_checks(const ir::Stmt &s, const ir::Stmt &checks);

/// The images a statement reads or whose bounds it uses, in first-use order.
std::vector<std::shared_ptr<ParameterContents>> find_images(const ir::Stmt &s);

} // namespace ptxjit::lower

#endif
