#include "ptxjit/BoundaryConditions.h"

#include "ptxjit/IROperator.h"
#include "ptxjit/Tuple.h"
#include "UniqueName.h"

#include <functional>

namespace ptxjit::BoundaryConditions {
namespace {

// What a boundary condition reads: a Func (of one value or a Tuple), an ImageParam or a Buffer,
// called at coordinates.
struct Source {
  std::string name;
  std::vector<Type> types;
  int dimensions = 0;
  std::function<Tuple(const std::vector<Expr> &)> call;
  Region bounds;
};

// `s` bounded by `bounds` in place of its own region, which a Func source does not have.
Source bounded(Source s, const Region &bounds, const char *what) {
  if (static_cast<int>(bounds.size()) > s.dimensions)
    throw CompileError(std::string(what) + " of " + s.name + ": " + std::to_string(bounds.size()) + " bounds for " +
                       std::to_string(s.dimensions) + " dimensions");
  for (const Range &r : bounds)
    if (r.min.defined() != r.extent.defined())
      throw CompileError(std::string(what) + " of " + s.name + ": a range with a min but no extent, or the reverse");
  s.bounds = bounds;
  return s;
}

Source sourceOf(const Func &f, const Region &bounds, const char *what) {
  if (!f.defined())
    throw CompileError(std::string(what) + " of the undefined Func " + f.name());
  return bounded({f.name(), f.types(), f.dimensions(), [f](const std::vector<Expr> &c) { return Tuple(f(c)); }, {}},
                 bounds, what);
}

Source sourceOf(const ImageParam &image, const char *what) {
  if (!image.contents())
    throw CompileError(std::string(what) + " of an uninitialized ImageParam");
  Region bounds;
  for (int d = 0; d < image.dimensions(); ++d)
    bounds.emplace_back(image.min(d), image.extent(d));
  return {image.name(), {image.type()}, image.dimensions(),
          [image](const std::vector<Expr> &c) { return Tuple({image(c)}); }, bounds};
}

Source sourceOf(const RawBuffer &buffer, const char *what) {
  if (!buffer.defined())
    throw CompileError(std::string(what) + " of an undefined Buffer");
  Region bounds;
  for (int d = 0; d < buffer.dimensions(); ++d)
    bounds.emplace_back(buffer.min(d), buffer.extent(d));
  const ptxjit_type_t t = buffer.type();
  return {unique_name("buffer"), {Type(static_cast<Type::Code>(t.code), t.bits)}, buffer.dimensions(),
          [buffer](const std::vector<Expr> &c) { return Tuple({detail::buffer_call(buffer, c)}); }, bounds};
}

// The Func over fresh Vars whose values are `body(vars, value i of the source, i)` at the
// coordinates, where each bounded coordinate is mapped into its range by `inside(var, min, extent)`.
Func define(const Source &s, const char *what, const std::function<Expr(Expr, Expr, Expr)> &inside,
            const std::function<Expr(const std::vector<Var> &, Expr, size_t)> &body = nullptr) {
  std::vector<Var> vars;
  std::vector<Expr> args, coords;
  for (int d = 0; d < s.dimensions; ++d) {
    vars.emplace_back(s.name + "_" + what + "_" + std::to_string(d));
    args.push_back(vars.back());
    const bool bounded = d < static_cast<int>(s.bounds.size()) && s.bounds[d].min.defined();
    coords.push_back(bounded ? inside(vars.back(), s.bounds[d].min, s.bounds[d].extent) : Expr(vars.back()));
  }
  Func f(s.name + "_" + what);
  std::vector<Expr> values = s.call(coords).as_vector();
  if (body)
    for (size_t i = 0; i < values.size(); ++i)
      values[i] = body(vars, values[i], i);
  if (values.size() == 1)
    f(args) = values[0];
  else
    f(args) = Tuple(values);
  return f;
}

Expr clampToRange(Expr v, Expr min, Expr extent) { return clamp(std::move(v), min, min + extent - 1); }

Func constantExterior(const Source &s, const Tuple &value) {
  if (value.size() != s.types.size())
    throw CompileError("constant_exterior of " + s.name + ": " + std::to_string(value.size()) +
                       " exterior values for a Func of " + std::to_string(s.types.size()));
  return define(s, "constant_exterior", clampToRange, [&](const std::vector<Var> &vars, Expr loaded, size_t i) {
    Expr in;
    for (size_t d = 0; d < vars.size() && d < s.bounds.size(); ++d) {
      if (!s.bounds[d].min.defined())
        continue;
      Expr lo = s.bounds[d].min, hi = s.bounds[d].min + s.bounds[d].extent - 1;
      Expr here = vars[d] >= lo && vars[d] <= hi;
      in = in.defined() ? (in && here) : here;
    }
    return in.defined() ? select(in, loaded, cast(s.types[i], value[i])) : loaded;
  });
}

Func repeatEdge(const Source &s) { return define(s, "repeat_edge", clampToRange); }

// The clamps in the next three never bind; they tell bounds inference the coordinate stays
// inside the range. The language's % is Euclidean: never negative, and x % 0 is 0.
Func repeatImage(const Source &s) {
  return define(s, "repeat_image",
                [](Expr v, Expr min, Expr extent) { return min + clamp((v - min) % extent, 0, extent - 1); });
}

Func mirrorImage(const Source &s) {
  return define(s, "mirror_image", [](Expr v, Expr min, Expr extent) {
    Expr t = (v - min) % (2 * extent);
    return min + clamp(select(t < extent, t, 2 * extent - 1 - t), 0, extent - 1);
  });
}

Func mirrorInterior(const Source &s) {
  // Period 2 * (extent - 1): the edge points are not repeated. An extent of 1 gives its point.
  return define(s, "mirror_interior", [](Expr v, Expr min, Expr extent) {
    Expr limit = extent - 1;
    Expr t = (v - min) % (2 * limit);
    return min + clamp(select(t <= limit, t, 2 * limit - t), 0, limit);
  });
}

} // namespace

Func constant_exterior(const Func &source, Expr value, const Region &bounds) {
  return constantExterior(sourceOf(source, bounds, "constant_exterior"), Tuple({std::move(value)}));
}
Func constant_exterior(const Func &source, const Tuple &value, const Region &bounds) {
  return constantExterior(sourceOf(source, bounds, "constant_exterior"), value);
}
Func constant_exterior(const ImageParam &image, Expr value) {
  return constantExterior(sourceOf(image, "constant_exterior"), Tuple({std::move(value)}));
}
Func constant_exterior(const ImageParam &image, Expr value, const Region &bounds) {
  return constantExterior(bounded(sourceOf(image, "constant_exterior"), bounds, "constant_exterior"), Tuple({std::move(value)}));
}
Func constant_exterior(const RawBuffer &buffer, Expr value) {
  return constantExterior(sourceOf(buffer, "constant_exterior"), Tuple({std::move(value)}));
}
Func constant_exterior(const RawBuffer &buffer, Expr value, const Region &bounds) {
  return constantExterior(bounded(sourceOf(buffer, "constant_exterior"), bounds, "constant_exterior"), Tuple({std::move(value)}));
}

Func repeat_edge(const Func &source, const Region &bounds) { return repeatEdge(sourceOf(source, bounds, "repeat_edge")); }
Func repeat_edge(const ImageParam &image) { return repeatEdge(sourceOf(image, "repeat_edge")); }
Func repeat_edge(const ImageParam &image, const Region &bounds) {
  return repeatEdge(bounded(sourceOf(image, "repeat_edge"), bounds, "repeat_edge"));
}
Func repeat_edge(const RawBuffer &buffer) { return repeatEdge(sourceOf(buffer, "repeat_edge")); }
Func repeat_edge(const RawBuffer &buffer, const Region &bounds) {
  return repeatEdge(bounded(sourceOf(buffer, "repeat_edge"), bounds, "repeat_edge"));
}

Func repeat_image(const Func &source, const Region &bounds) { return repeatImage(sourceOf(source, bounds, "repeat_image")); }
Func repeat_image(const ImageParam &image) { return repeatImage(sourceOf(image, "repeat_image")); }
Func repeat_image(const ImageParam &image, const Region &bounds) {
  return repeatImage(bounded(sourceOf(image, "repeat_image"), bounds, "repeat_image"));
}
Func repeat_image(const RawBuffer &buffer) { return repeatImage(sourceOf(buffer, "repeat_image")); }
Func repeat_image(const RawBuffer &buffer, const Region &bounds) {
  return repeatImage(bounded(sourceOf(buffer, "repeat_image"), bounds, "repeat_image"));
}

Func mirror_image(const Func &source, const Region &bounds) { return mirrorImage(sourceOf(source, bounds, "mirror_image")); }
Func mirror_image(const ImageParam &image) { return mirrorImage(sourceOf(image, "mirror_image")); }
Func mirror_image(const ImageParam &image, const Region &bounds) {
  return mirrorImage(bounded(sourceOf(image, "mirror_image"), bounds, "mirror_image"));
}
Func mirror_image(const RawBuffer &buffer) { return mirrorImage(sourceOf(buffer, "mirror_image")); }
Func mirror_image(const RawBuffer &buffer, const Region &bounds) {
  return mirrorImage(bounded(sourceOf(buffer, "mirror_image"), bounds, "mirror_image"));
}

Func mirror_interior(const Func &source, const Region &bounds) { return mirrorInterior(sourceOf(source, bounds, "mirror_interior")); }
Func mirror_interior(const ImageParam &image) { return mirrorInterior(sourceOf(image, "mirror_interior")); }
Func mirror_interior(const ImageParam &image, const Region &bounds) {
  return mirrorInterior(bounded(sourceOf(image, "mirror_interior"), bounds, "mirror_interior"));
}
Func mirror_interior(const RawBuffer &buffer) { return mirrorInterior(sourceOf(buffer, "mirror_interior")); }
Func mirror_interior(const RawBuffer &buffer, const Region &bounds) {
  return mirrorInterior(bounded(sourceOf(buffer, "mirror_interior"), bounds, "mirror_interior"));
}

} // namespace ptxjit::BoundaryConditions
