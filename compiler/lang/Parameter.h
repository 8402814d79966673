#ifndef PTXJIT_LANG_PARAMETER_H
#define PTXJIT_LANG_PARAMETER_H

// What a Param or ImageParam is inside the compiler: its name, type and the value or buffer
// bound for the next realize. Values are read at realize; only name and type affect the code.

#include "ptxjit/Buffer.h"
#include "ptxjit/Expr.h"
#include "ptxjit/Type.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace ptxjit {

struct FunctionContents;

/// What ImageParam::dim(d) or Func::output_buffer().dim(d) constrains a buffer's dimension to:
/// undefined where free.
struct DimensionConstraint {
  Expr min, extent, stride;
  /// set_stride(Expr()): any stride, in dimension 0 too (which is otherwise required dense).
  bool any_stride = false;
  /// Dimension 0 of the buffer is indexed by its stride rather than assumed dense.
  static bool strided(const std::vector<DimensionConstraint> &constraints) {
    return !constraints.empty() && (constraints[0].stride.defined() || constraints[0].any_stride);
  }
};

struct ParameterContents {
  std::string name;
  Type type;
  bool is_buffer = false;
  /// The buffer of an output Func's value (Func::output_buffer): its constraints and fields, not
  /// an input.
  bool is_output = false;
  int dimensions = 0;
  /// Scalar value bits (little end first), for Params.
  uint64_t scalar_bits = 0;
  RawBuffer buffer;
  /// For buffers: one for each dimension.
  std::vector<DimensionConstraint> constraints;
  /// For buffers: what the host pointer must be a multiple of (0: any).
  int host_alignment = 0;
  /// Wrappers made by ImageParam::in (see FunctionContents::wrappers).
  std::map<std::string, std::shared_ptr<FunctionContents>> wrappers;
};

/// "ImageParam in", or "the output buffer f" of an output Func's value, for errors.
std::string describe_buffer(const ParameterContents &p);

/// The name of a buffer field variable, e.g. "in.min.0".
std::string buffer_field_name(const std::string &buffer, const char *field, int dim);

} // namespace ptxjit

#endif
