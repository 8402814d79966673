#include "Bindings.h"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

namespace ptxjit::python {

namespace {

/// What `f[x] += v` leaves for Python to assign back: Python runs f.__setitem__(x, f[x].__iadd__(v)),
/// and the update is already defined by then.
struct UpdateDefined {};

bool isLoopVariable(nb::handle h) {
  return nb::isinstance<Var>(h) || nb::isinstance<RVar>(h) || nb::isinstance<RDom>(h);
}

VarOrRVar loopVariable(nb::handle h) {
  if (nb::isinstance<Var>(h))
    return nb::cast<Var>(h);
  if (nb::isinstance<RVar>(h))
    return nb::cast<RVar>(h);
  if (nb::isinstance<RDom>(h))
    return nb::cast<RDom>(h);
  throw nb::type_error(("a schedule names loops with Var, RVar or RDom, not a " +
                        nb::cast<std::string>(nb::type_name(h.type())))
                           .c_str());
}

// An RVar named by an RVar or a one-dimensional RDom.
RVar reductionVariable(nb::handle h) {
  if (nb::isinstance<RVar>(h))
    return nb::cast<RVar>(h);
  if (nb::isinstance<RDom>(h))
    return nb::cast<RDom>(h);
  throw nb::type_error(("expected an RVar or RDom, not a " + nb::cast<std::string>(nb::type_name(h.type()))).c_str());
}

std::vector<VarOrRVar> loopVariables(nb::args args) {
  std::vector<VarOrRVar> vars;
  // reorder(x, y) or reorder([x, y])
  if (args.size() == 1 && (nb::isinstance<nb::list>(args[0]) || nb::isinstance<nb::tuple>(args[0])))
    for (nb::handle h : args[0])
      vars.push_back(loopVariable(h));
  else
    for (nb::handle h : args)
      vars.push_back(loopVariable(h));
  return vars;
}

/// Splits gpu_tile's and tile's positional arguments into the leading loop variables and the sizes.
void splitVariablesAndSizes(nb::args args, std::vector<VarOrRVar> &vars, std::vector<Expr> &sizes) {
  size_t i = 0;
  for (; i < args.size() && isLoopVariable(args[i]); ++i)
    vars.push_back(loopVariable(args[i]));
  for (; i < args.size(); ++i)
    sizes.push_back(to_expr(args[i]));
}

Tuple toTuple(nb::handle values) { return Tuple(to_exprs(values)); }

bool isSequence(nb::handle h) { return nb::isinstance<nb::tuple>(h) || nb::isinstance<nb::list>(h); }

/// The scheduling directives Func and Stage share, as Halide's Python bindings spell them. Each
/// returns the object, so that directives chain.
template <typename T> void bindLoopSchedules(nb::class_<T> &c) {
  c.def("split",
        [](T &s, nb::handle old, nb::handle outer, nb::handle inner, nb::handle factor, TailStrategy tail) {
          return s.split(loopVariable(old), loopVariable(outer), loopVariable(inner), to_expr(factor), tail);
        },
        nb::arg("old"), nb::arg("outer"), nb::arg("inner"), nb::arg("factor"), nb::arg("tail") = TailStrategy::Auto);
  c.def("fuse",
        [](T &s, nb::handle inner, nb::handle outer, nb::handle fused) {
          return s.fuse(loopVariable(inner), loopVariable(outer), loopVariable(fused));
        },
        nb::arg("inner"), nb::arg("outer"), nb::arg("fused"));
  c.def(
      "rename", [](T &s, nb::handle old, nb::handle renamed) { return s.rename(loopVariable(old), loopVariable(renamed)); },
      nb::arg("old"), nb::arg("renamed"));
  c.def("reorder", [](T &s, nb::args vars) { return s.reorder(loopVariables(vars)); });
  c.def(
      "tile",
      [](T &s, nb::args args, TailStrategy tail) {
        std::vector<VarOrRVar> v;
        std::vector<Expr> sizes;
        splitVariablesAndSizes(args, v, sizes);
        if (sizes.size() != 2 || (v.size() != 4 && v.size() != 6))
          throw nb::type_error("tile takes (x, y, xi, yi, xfactor, yfactor) or (x, y, xo, yo, xi, yi, xfactor, yfactor)");
        return v.size() == 4 ? s.tile(v[0], v[1], v[2], v[3], sizes[0], sizes[1], tail)
                             : s.tile(v[0], v[1], v[2], v[3], v[4], v[5], sizes[0], sizes[1], tail);
      },
      nb::arg("args"), nb::kw_only(), nb::arg("tail") = TailStrategy::Auto);
  c.def(
      "parallel",
      [](T &s, nb::handle var, nb::handle task_size, TailStrategy tail) {
        return task_size.is_none() ? s.parallel(loopVariable(var)) : s.parallel(loopVariable(var), to_expr(task_size), tail);
      },
      nb::arg("var"), nb::arg("task_size") = nb::none(), nb::arg("tail") = TailStrategy::Auto);
  c.def("serial", [](T &s, nb::handle var) { return s.serial(loopVariable(var)); }, nb::arg("var"));
  c.def(
      "vectorize",
      [](T &s, nb::handle var, std::optional<int> factor, TailStrategy tail) {
        return factor ? s.vectorize(loopVariable(var), *factor, tail) : s.vectorize(loopVariable(var));
      },
      nb::arg("var"), nb::arg("factor") = nb::none(), nb::arg("tail") = TailStrategy::Auto);
  c.def(
      "unroll",
      [](T &s, nb::handle var, std::optional<int> factor, TailStrategy tail) {
        return factor ? s.unroll(loopVariable(var), *factor, tail) : s.unroll(loopVariable(var));
      },
      nb::arg("var"), nb::arg("factor") = nb::none(), nb::arg("tail") = TailStrategy::Auto);
  c.def("gpu_blocks", [](T &s, nb::args vars) {
    std::vector<VarOrRVar> v = loopVariables(vars);
    switch (v.size()) {
    case 1: return s.gpu_blocks(v[0]);
    case 2: return s.gpu_blocks(v[0], v[1]);
    case 3: return s.gpu_blocks(v[0], v[1], v[2]);
    default: throw nb::type_error("gpu_blocks takes one to three loop variables");
    }
  });
  c.def("gpu_threads", [](T &s, nb::args vars) {
    std::vector<VarOrRVar> v = loopVariables(vars);
    switch (v.size()) {
    case 1: return s.gpu_threads(v[0]);
    case 2: return s.gpu_threads(v[0], v[1]);
    case 3: return s.gpu_threads(v[0], v[1], v[2]);
    default: throw nb::type_error("gpu_threads takes one to three loop variables");
    }
  });
  c.def("gpu_lanes", [](T &s, nb::handle var) { return s.gpu_lanes(loopVariable(var)); }, nb::arg("var"));
  c.def("never_partition", [](T &s, nb::args vars) { return s.never_partition(loopVariables(vars)); });
  c.def("never_partition_all", [](T &s) { return s.never_partition_all(); });
  c.def("always_partition", [](T &s, nb::args vars) { return s.always_partition(loopVariables(vars)); });
  c.def("always_partition_all", [](T &s) { return s.always_partition_all(); });
  c.def(
      "gpu_tile",
      [](T &s, nb::args args, TailStrategy tail) {
        std::vector<VarOrRVar> v;
        std::vector<Expr> sizes;
        splitVariablesAndSizes(args, v, sizes);
        if (sizes.size() == 1 && v.size() == 2)
          return s.gpu_tile(v[0], v[1], sizes[0], tail);
        if (sizes.size() == 1 && v.size() == 3)
          return s.gpu_tile(v[0], v[1], v[2], sizes[0], tail);
        if (sizes.size() == 2 && v.size() == 4)
          return s.gpu_tile(v[0], v[1], v[2], v[3], sizes[0], sizes[1], tail);
        if (sizes.size() == 2 && v.size() == 6)
          return s.gpu_tile(v[0], v[1], v[2], v[3], v[4], v[5], sizes[0], sizes[1], tail);
        if (sizes.size() == 3 && v.size() == 6)
          return s.gpu_tile(v[0], v[1], v[2], v[3], v[4], v[5], sizes[0], sizes[1], sizes[2], tail);
        if (sizes.size() == 3 && v.size() == 9)
          return s.gpu_tile(v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], sizes[0], sizes[1], sizes[2], tail);
        throw nb::type_error("gpu_tile takes (x, tx, size), (x, bx, tx, size), (x, y, tx, ty, xsize, ysize), "
                             "(x, y, bx, by, tx, ty, xsize, ysize), (x, y, z, tx, ty, tz, xsize, ysize, zsize) or "
                             "(x, y, z, bx, by, bz, tx, ty, tz, xsize, ysize, zsize)");
      },
      nb::arg("args"), nb::kw_only(), nb::arg("tail") = TailStrategy::Auto);
}

/// prefetch(target, at, from_=None, offset=1, strategy=GuardWithIf): `target` a Func or an
/// ImageParam; `from_` None for `at` itself.
template <typename T> void bindPrefetch(nb::class_<T> &c) {
  c.def(
      "prefetch",
      [](T &s, nb::handle target, nb::handle at, nb::handle from, nb::handle offset, PrefetchBoundStrategy strategy) {
        const VarOrRVar atLoop = loopVariable(at);
        const VarOrRVar fromLoop = from.is_none() ? atLoop : loopVariable(from);
        if (nb::isinstance<Func>(target))
          return T(s.prefetch(nb::cast<const Func &>(target), atLoop, fromLoop, to_expr(offset), strategy));
        if (nb::isinstance<ImageParam>(target))
          return T(s.prefetch(nb::cast<const ImageParam &>(target), atLoop, fromLoop, to_expr(offset), strategy));
        throw nb::type_error(("prefetch takes a Func or an ImageParam, not a " +
                              nb::cast<std::string>(nb::type_name(target.type())))
                                 .c_str());
      },
      nb::arg("target"), nb::arg("at"), nb::arg("from_") = nb::none(), nb::arg("offset") = 1,
      nb::arg("strategy") = PrefetchBoundStrategy::GuardWithIf);
}

void define(const FuncRef &ref, nb::handle value) {
  FuncRef target = ref;
  if (nb::isinstance<UpdateDefined>(value))
    return;
  if (nb::isinstance<FuncRef>(value))
    target = nb::cast<const FuncRef &>(value);
  else if (isSequence(value))
    target = toTuple(value);
  else
    target = to_expr(value);
}

template <typename Apply> nb::object updateWith(FuncRef &ref, nb::handle value, Apply apply) {
  if (isSequence(value))
    apply(ref, toTuple(value));
  else if (nb::isinstance<FuncRef>(value))
    apply(ref, Tuple(nb::cast<const FuncRef &>(value)));
  else
    apply(ref, Tuple(std::vector<Expr>{to_expr(value)}));
  return nb::cast(UpdateDefined{});
}

} // namespace

void bind_func(nb::module_ &m) {
  nb::enum_<TailStrategy>(m, "TailStrategy")
      .value("Auto", TailStrategy::Auto)
      .value("GuardWithIf", TailStrategy::GuardWithIf)
      .value("ShiftInward", TailStrategy::ShiftInward)
      .value("ShiftInwards", TailStrategy::ShiftInwards)
      .value("RoundUp", TailStrategy::RoundUp)
      .value("PredicateLoads", TailStrategy::PredicateLoads)
      .value("PredicateStores", TailStrategy::PredicateStores);
  nb::enum_<PrefetchBoundStrategy>(m, "PrefetchBoundStrategy")
      .value("Clamp", PrefetchBoundStrategy::Clamp)
      .value("GuardWithIf", PrefetchBoundStrategy::GuardWithIf)
      .value("NonFaulting", PrefetchBoundStrategy::NonFaulting);
  nb::enum_<MemoryType>(m, "MemoryType")
      .value("Auto", MemoryType::Auto)
      .value("Heap", MemoryType::Heap)
      .value("GPUShared", MemoryType::GPUShared)
      .value("Register", MemoryType::Register);

  nb::class_<UpdateDefined>(m, "_UpdateDefined");

  auto ref = nb::class_<FuncRef>(m, "FuncRef")
                 .def("__getitem__", [](const FuncRef &r, int i) { return r[i]; })
                 .def("__len__", &FuncRef::size)
                 .def("__iadd__", [](FuncRef &r, nb::handle v) { return updateWith(r, v, [](FuncRef &f, const Tuple &t) { f += t; }); })
                 .def("__isub__", [](FuncRef &r, nb::handle v) { return updateWith(r, v, [](FuncRef &f, const Tuple &t) { f -= t; }); })
                 .def("__imul__", [](FuncRef &r, nb::handle v) { return updateWith(r, v, [](FuncRef &f, const Tuple &t) { f *= t; }); })
                 .def("__itruediv__", [](FuncRef &r, nb::handle v) { return updateWith(r, v, [](FuncRef &f, const Tuple &t) { f /= t; }); });
  add_expr_operators(ref);

  nb::class_<LoopLevel>(m, "LoopLevel")
      .def(nb::init<>())
      .def(
          "__init__", [](LoopLevel *l, const Func &f, nb::handle var) { new (l) LoopLevel(f, loopVariable(var)); },
          nb::arg("func"), nb::arg("var"))
      .def_static("root", &LoopLevel::root)
      .def_static("inlined", &LoopLevel::inlined)
      .def("set", &LoopLevel::set, nb::arg("other"))
      .def("defined", &LoopLevel::defined)
      .def("is_root", &LoopLevel::is_root)
      .def("is_inlined", &LoopLevel::is_inlined)
      .def("func", &LoopLevel::func)
      .def("var", &LoopLevel::var)
      .def("__eq__", &LoopLevel::operator==)
      .def("__repr__", [](const LoopLevel &l) { return "ptxjit.LoopLevel(" + l.to_string() + ")"; });

  auto stage = nb::class_<Stage>(m, "Stage")
                   .def("name", &Stage::name)
                   .def("atomic", [](Stage &s) { return s.atomic(); })
                   .def("allow_race_conditions", [](Stage &s) { return s.allow_race_conditions(); })
                   .def("unscheduled", &Stage::unscheduled)
                   .def("rfactor", [](Stage &s, nb::handle r, const Var &v) { return s.rfactor(reductionVariable(r), v); },
                        nb::arg("r"), nb::arg("v"))
                   .def("rfactor",
                        [](Stage &s, nb::list preserved) {
                          std::vector<std::pair<RVar, Var>> pairs;
                          for (nb::handle pair : preserved) {
                            if (!nb::isinstance<nb::tuple>(pair) || nb::len(pair) != 2)
                              throw nb::type_error("rfactor takes a list of (RVar, Var) pairs");
                            pairs.emplace_back(reductionVariable(pair[0]), nb::cast<Var>(pair[1]));
                          }
                          return s.rfactor(pairs);
                        },
                        nb::arg("preserved"))
                   .def("specialize", [](Stage &s, nb::handle c) { return s.specialize(to_expr(c)); }, nb::arg("condition"))
                   .def("specialize_fail", &Stage::specialize_fail, nb::arg("message"))
                   .def("__repr__", [](const Stage &s) { return "ptxjit.Stage(" + s.name() + ")"; });
  bindLoopSchedules(stage);
  bindPrefetch(stage);

  auto func =
      nb::class_<Func>(m, "Func")
          .def(nb::init<>())
          .def(nb::init<const std::string &>(), nb::arg("name"))
          .def("name", &Func::name)
          .def("defined", &Func::defined)
          .def("dimensions", &Func::dimensions)
          .def("type", &Func::type)
          .def("types", &Func::types)
          .def("outputs", &Func::outputs)
          .def("args", &Func::args)
          .def("value", &Func::value)
          .def("values", [](const Func &f) { return f.values().as_vector(); })
          .def("num_update_definitions", &Func::num_update_definitions)
          .def("has_update_definition", &Func::has_update_definition)
          .def("update_args", &Func::update_args, nb::arg("index") = 0)
          .def("update_value", &Func::update_value, nb::arg("index") = 0)
          .def("update_values", [](const Func &f, int i) { return f.update_values(i).as_vector(); }, nb::arg("index") = 0)
          .def("__getitem__", [](const Func &f, nb::handle key) { return f(to_exprs(key)); })
          .def("__setitem__", [](const Func &f, nb::handle key, nb::handle value) { define(f(to_exprs(key)), value); })
          .def("update", &Func::update, nb::arg("index") = 0)
          .def("specialize", [](Func &f, nb::handle c) { return f.specialize(to_expr(c)); }, nb::arg("condition"))
          .def("specialize_fail", &Func::specialize_fail, nb::arg("message"))
          .def("bound", [](Func &f, const Var &v, nb::handle min, nb::handle extent) { return f.bound(v, to_expr(min), to_expr(extent)); },
               nb::arg("var"), nb::arg("min"), nb::arg("extent"))
          .def("set_estimate",
               [](Func &f, const Var &v, nb::handle min, nb::handle extent) { return f.set_estimate(v, to_expr(min), to_expr(extent)); },
               nb::arg("var"), nb::arg("min"), nb::arg("extent"))
          .def("set_estimates", [](Func &f, nb::handle region) { return f.set_estimates(to_region(region)); },
               nb::arg("estimates"))
          .def("bound_extent", [](Func &f, const Var &v, nb::handle extent) { return f.bound_extent(v, to_expr(extent)); },
               nb::arg("var"), nb::arg("extent"))
          .def("align_bounds",
               [](Func &f, const Var &v, nb::handle modulus, nb::handle remainder) {
                 return f.align_bounds(v, to_expr(modulus), to_expr(remainder));
               },
               nb::arg("var"), nb::arg("modulus"), nb::arg("remainder") = 0)
          .def("compute_root", [](Func &f) { return f.compute_root(); })
          .def("compute_at", [](Func &f, const Func &consumer, nb::handle var) { return f.compute_at(consumer, loopVariable(var)); },
               nb::arg("consumer"), nb::arg("var"))
          .def("compute_at", [](Func &f, const LoopLevel &level) { return f.compute_at(level); }, nb::arg("level"))
          .def("compute_inline", [](Func &f) { return f.compute_inline(); })
          .def("store_in", [](Func &f, MemoryType memory) { return f.store_in(memory); }, nb::arg("memory_type"))
          .def("reorder_storage",
               [](Func &f, nb::args vars) {
                 std::vector<Var> dims;
                 for (nb::handle v : vars)
                   dims.push_back(nb::cast<Var>(v));
                 return f.reorder_storage(dims);
               })
          .def("align_storage", [](Func &f, const Var &v, nb::handle alignment) { return f.align_storage(v, to_expr(alignment)); },
               nb::arg("var"), nb::arg("alignment"))
          .def("fold_storage",
               [](Func &f, const Var &v, nb::handle extent, bool forward) { return f.fold_storage(v, to_expr(extent), forward); },
               nb::arg("var"), nb::arg("extent"), nb::arg("fold_forward") = true)
          .def("store_root", [](Func &f) { return f.store_root(); })
          .def("store_at", [](Func &f, const Func &consumer, nb::handle var) { return f.store_at(consumer, loopVariable(var)); },
               nb::arg("consumer"), nb::arg("var"))
          .def("store_at", [](Func &f, const LoopLevel &level) { return f.store_at(level); }, nb::arg("level"))
          .def("trace_stores", [](Func &f) { return f.trace_stores(); })
          .def("trace_loads", [](Func &f) { return f.trace_loads(); })
          .def("trace_realizations", [](Func &f) { return f.trace_realizations(); })
          .def("output_buffer", &Func::output_buffer)
          .def("output_buffers", &Func::output_buffers)
          .def("hoist_storage_root", [](Func &f) { return f.hoist_storage_root(); })
          .def("hoist_storage",
               [](Func &f, const Func &consumer, nb::handle var) { return f.hoist_storage(consumer, loopVariable(var)); },
               nb::arg("consumer"), nb::arg("var"))
          .def("hoist_storage", [](Func &f, const LoopLevel &level) { return f.hoist_storage(level); }, nb::arg("level"))
          .def("in_", nb::overload_cast<const Func &>(&Func::in), nb::arg("consumer"))
          .def("in_", nb::overload_cast<const std::vector<Func> &>(&Func::in), nb::arg("consumers"))
          .def("in_", nb::overload_cast<>(&Func::in))
          .def("clone_in", nb::overload_cast<const Func &>(&Func::clone_in), nb::arg("consumer"))
          .def("clone_in", nb::overload_cast<const std::vector<Func> &>(&Func::clone_in), nb::arg("consumers"))
          .def("__repr__", [](const Func &f) { return "ptxjit.Func(" + f.name() + ")"; });
  bindLoopSchedules(func);
  bindPrefetch(func);

  m.def("lambda_", [](nb::args args) {
    // lambda_(x, y, expr) or lambda_(expr)
    if (args.size() < 1)
      throw nb::type_error("lambda_ takes the Vars and then the value");
    std::vector<Var> vars;
    for (size_t i = 0; i + 1 < args.size(); ++i)
      vars.push_back(nb::cast<Var>(args[i]));
    Expr value = to_expr(args[args.size() - 1]);
    return vars.empty() ? lambda(value) : lambda(vars, value);
  });

  nb::module_ boundary = m.def_submodule("BoundaryConditions", "Funcs that extend a Func or an image past its bounds");
  boundary.def("constant_exterior", [](const ImageParam &image, nb::handle value) {
    return BoundaryConditions::constant_exterior(image, to_expr(value));
  });
  boundary.def("constant_exterior", [](const ImageParam &image, nb::handle value, nb::handle bounds) {
    return BoundaryConditions::constant_exterior(image, to_expr(value), to_region(bounds));
  });
  boundary.def("constant_exterior", [](const Func &f, nb::handle value, nb::handle bounds) {
    if (isSequence(value))
      return BoundaryConditions::constant_exterior(f, toTuple(value), to_region(bounds));
    return BoundaryConditions::constant_exterior(f, to_expr(value), to_region(bounds));
  });
  using ImageCondition = Func (*)(const ImageParam &);
  using BoundedImageCondition = Func (*)(const ImageParam &, const Region &);
  using FuncCondition = Func (*)(const Func &, const Region &);
  const std::tuple<const char *, ImageCondition, BoundedImageCondition, FuncCondition> conditions[] = {
      {"repeat_edge", BoundaryConditions::repeat_edge, BoundaryConditions::repeat_edge, BoundaryConditions::repeat_edge},
      {"repeat_image", BoundaryConditions::repeat_image, BoundaryConditions::repeat_image, BoundaryConditions::repeat_image},
      {"mirror_image", BoundaryConditions::mirror_image, BoundaryConditions::mirror_image, BoundaryConditions::mirror_image},
      {"mirror_interior", BoundaryConditions::mirror_interior, BoundaryConditions::mirror_interior,
       BoundaryConditions::mirror_interior},
  };
  for (const auto &[name, onImage, onBoundedImage, onFunc] : conditions) {
    ImageCondition image = onImage;
    BoundedImageCondition boundedImage = onBoundedImage;
    FuncCondition onSource = onFunc;
    boundary.def(name, [image](const ImageParam &p) { return image(p); }, nb::arg("image"));
    boundary.def(name, [boundedImage](const ImageParam &p, nb::handle bounds) { return boundedImage(p, to_region(bounds)); },
                 nb::arg("source"), nb::arg("bounds"));
    boundary.def(name, [onSource](const Func &f, nb::handle bounds) { return onSource(f, to_region(bounds)); },
                 nb::arg("source"), nb::arg("bounds"));
  }
}

} // namespace ptxjit::python
