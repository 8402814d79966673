#ifndef PTXJIT_BOUNDARYCONDITIONS_H
#define PTXJIT_BOUNDARYCONDITIONS_H

// Funcs defined everywhere from a Func, an ImageParam or a Buffer defined on a region: each reads
// the source inside the region and decides what lies outside it. A Func source names its region;
// an image's is its own unless one is given. Dimensions past the region's, or whose min is undefined, pass through.
// A Func of several values (a Tuple) gives a Func of as many, each value bounded alike.

#include "ptxjit/Buffer.h"
#include "ptxjit/Func.h"
#include "ptxjit/Param.h"
#include "ptxjit/Tuple.h"

#include <vector>

#pragma GCC visibility push(default)
namespace ptxjit::BoundaryConditions {

/// Points outside take `value` (a Tuple of as many values for a Func of several).
Func constant_exterior(const Func &source, Expr value, const Region &bounds);
Func constant_exterior(const Func &source, const Tuple &value, const Region &bounds);
Func constant_exterior(const ImageParam &image, Expr value);
Func constant_exterior(const ImageParam &image, Expr value, const Region &bounds);
Func constant_exterior(const RawBuffer &buffer, Expr value);
Func constant_exterior(const RawBuffer &buffer, Expr value, const Region &bounds);

/// Points outside take the value of the nearest edge point.
Func repeat_edge(const Func &source, const Region &bounds);
Func repeat_edge(const ImageParam &image);
Func repeat_edge(const ImageParam &image, const Region &bounds);
Func repeat_edge(const RawBuffer &buffer);
Func repeat_edge(const RawBuffer &buffer, const Region &bounds);

/// The region tiles the plane (…, n-1, 0, 1, …, n-1, 0, …).
Func repeat_image(const Func &source, const Region &bounds);
Func repeat_image(const ImageParam &image);
Func repeat_image(const ImageParam &image, const Region &bounds);
Func repeat_image(const RawBuffer &buffer);
Func repeat_image(const RawBuffer &buffer, const Region &bounds);

/// Points outside reflect about the edge, repeating the edge point (…, 1, 0, 0, 1, …).
Func mirror_image(const Func &source, const Region &bounds);
Func mirror_image(const ImageParam &image);
Func mirror_image(const ImageParam &image, const Region &bounds);
Func mirror_image(const RawBuffer &buffer);
Func mirror_image(const RawBuffer &buffer, const Region &bounds);

/// Points outside reflect about the edge point, which appears once (…, 2, 1, 0, 1, 2, …).
Func mirror_interior(const Func &source, const Region &bounds);
Func mirror_interior(const ImageParam &image);
Func mirror_interior(const ImageParam &image, const Region &bounds);
Func mirror_interior(const RawBuffer &buffer);
Func mirror_interior(const RawBuffer &buffer, const Region &bounds);

} // namespace ptxjit::BoundaryConditions

#pragma GCC visibility pop

#endif
