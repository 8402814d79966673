#ifndef PTXJIT_BOUNDARYCONDITIONS_H
#define PTXJIT_BOUNDARYCONDITIONS_H

// Funcs defined everywhere from an image defined on its bounds.

#include "ptxjit/Func.h"
#include "ptxjit/Param.h"

#pragma GCC visibility push(default)
namespace ptxjit::BoundaryConditions {

/// Points outside take the value of the nearest edge point.
Func repeat_edge(const ImageParam &image);
/// Points outside take `value`.
Func constant_exterior(const ImageParam &image, Expr value);
/// Points outside reflect about the edge, repeating the edge point (…, 1, 0, 0, 1, …).
Func mirror_image(const ImageParam &image);

} // namespace ptxjit::BoundaryConditions

#pragma GCC visibility pop

#endif
