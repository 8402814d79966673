#include "ptxjit/BoundaryConditions.h"

#include "ptxjit/IROperator.h"

namespace ptxjit::BoundaryConditions {
namespace {

std::vector<Var> argsFor(const ImageParam &image, const char *what) {
  if (!image.contents())
    throw CompileError(std::string(what) + " of an uninitialized ImageParam");
  std::vector<Var> vars;
  for (int d = 0; d < image.dimensions(); ++d)
    vars.emplace_back(image.name() + "_" + what + "_" + std::to_string(d));
  return vars;
}

std::vector<Expr> asExprs(const std::vector<Var> &vars) { return {vars.begin(), vars.end()}; }

} // namespace

Func repeat_edge(const ImageParam &image) {
  std::vector<Var> vars = argsFor(image, "repeat_edge");
  std::vector<Expr> coords;
  for (int d = 0; d < image.dimensions(); ++d)
    coords.push_back(clamp(vars[d], image.min(d), image.min(d) + image.extent(d) - 1));
  Func f(image.name() + "_repeat_edge");
  f(asExprs(vars)) = image(coords);
  return f;
}

Func constant_exterior(const ImageParam &image, Expr value) {
  std::vector<Var> vars = argsFor(image, "constant_exterior");
  std::vector<Expr> coords;
  Expr inside;
  for (int d = 0; d < image.dimensions(); ++d) {
    Expr lo = image.min(d), hi = image.min(d) + image.extent(d) - 1;
    coords.push_back(clamp(vars[d], lo, hi));
    Expr in = vars[d] >= lo && vars[d] <= hi;
    inside = inside.defined() ? (inside && in) : in;
  }
  Func f(image.name() + "_constant_exterior");
  Expr loaded = image(coords);
  f(asExprs(vars)) = inside.defined() ? select(inside, loaded, cast(image.type(), value)) : loaded;
  return f;
}

Func mirror_image(const ImageParam &image) {
  std::vector<Var> vars = argsFor(image, "mirror_image");
  std::vector<Expr> coords;
  for (int d = 0; d < image.dimensions(); ++d) {
    Expr extent = image.extent(d);
    Expr t = (Expr(vars[d]) - image.min(d)) % (2 * extent);
    // The clamp never binds; it tells bounds inference the coordinate stays inside the image.
    Expr reflected = select(t < extent, t, 2 * extent - 1 - t);
    coords.push_back(image.min(d) + clamp(reflected, 0, extent - 1));
  }
  Func f(image.name() + "_mirror_image");
  f(asExprs(vars)) = image(coords);
  return f;
}

} // namespace ptxjit::BoundaryConditions
