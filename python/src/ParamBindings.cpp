#include "Bindings.h"

#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstring>

namespace ptxjit::python {

namespace {

/// Stores a Python number as `type`'s bytes; raises when it cannot be represented exactly
/// (a float for an integer Param, an integer out of range), since Param::set would truncate.
void setScalar(const ScalarParam &p, nb::handle value) {
  const Type t = p.type;
  auto store = [&](auto v) { detail::set_scalar_parameter(*p.contents, &v, sizeof(v)); };
  const std::string name = detail::parameter_name(*p.contents);
  if (t.is_float()) {
    if (!PyFloat_Check(value.ptr()) && !PyLong_Check(value.ptr()))
      throw nb::type_error(("Param " + name + " of type " + to_string(t) + " takes a number").c_str());
    double v = PyFloat_AsDouble(value.ptr());
    if (PyErr_Occurred())
      throw nb::python_error();
    if (t.is_bfloat())
      store(bfloat16_t(v).bits);
    else if (t.bits == 16)
      store(float16_t(v).bits);
    else
      t.bits == 64 ? store(v) : store(static_cast<float>(v));
    return;
  }
  if (!PyLong_Check(value.ptr()))
    throw nb::type_error(("Param " + name + " of type " + to_string(t) + " takes an integer, not a " +
                          nb::cast<std::string>(nb::type_name(value.type())))
                             .c_str());
  if (t.is_bool()) {
    store(static_cast<bool>(PyObject_IsTrue(value.ptr())));
    return;
  }
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(value.ptr(), &overflow);
  bool fits = !overflow && (t.is_uint() ? v >= 0 && (t.bits == 64 || uint64_t(v) <= t.max_uint())
                                        : v >= t.min_int() && v <= t.max_int());
  if (!fits && t.is_uint() && t.bits == 64 && overflow > 0) {
    unsigned long long u = PyLong_AsUnsignedLongLong(value.ptr());
    if (!PyErr_Occurred()) {
      store(static_cast<uint64_t>(u));
      return;
    }
    PyErr_Clear();
  }
  if (!fits)
    throw nb::value_error(("Param " + name + ": " + nb::cast<std::string>(nb::str(value)) + " does not fit in " +
                           to_string(t))
                              .c_str());
  switch (t.bits) {
  case 8: t.is_int() ? store(int8_t(v)) : store(uint8_t(v)); break;
  case 16: t.is_int() ? store(int16_t(v)) : store(uint16_t(v)); break;
  case 32: t.is_int() ? store(int32_t(v)) : store(uint32_t(v)); break;
  default: t.is_int() ? store(int64_t(v)) : store(uint64_t(v)); break;
  }
}

nb::object getScalar(const ScalarParam &p) {
  const Type t = p.type;
  unsigned char bytes[8] = {};
  detail::get_scalar_parameter(*p.contents, bytes, t.bytes());
  auto read = [&](auto v) {
    std::memcpy(&v, bytes, sizeof(v));
    return v;
  };
  if (t.is_bfloat())
    return nb::float_(bfloat16_t::from_bits(read(uint16_t())).to_double());
  if (t.is_float() && t.bits == 16)
    return nb::float_(float16_t::from_bits(read(uint16_t())).to_double());
  if (t.is_float())
    return nb::float_(t.bits == 64 ? read(double()) : double(read(float())));
  if (t.is_bool())
    return nb::bool_(read(bool()));
  switch (t.bits) {
  case 8: return t.is_int() ? nb::int_(read(int8_t())) : nb::int_(read(uint8_t()));
  case 16: return t.is_int() ? nb::int_(read(int16_t())) : nb::int_(read(uint16_t()));
  case 32: return t.is_int() ? nb::int_(read(int32_t())) : nb::int_(read(uint32_t()));
  default: return t.is_int() ? nb::int_(read(int64_t())) : nb::int_(read(uint64_t()));
  }
}

} // namespace

void bind_params(nb::module_ &m) {
  auto param = nb::class_<ScalarParam>(m, "Param")
                   .def(
                       "__init__",
                       [](ScalarParam *self, Type type, const std::string &name, nb::handle value) {
                         if (!type.is_scalar())
                           throw nb::value_error("a Param holds one scalar value: its type has one lane");
                         new (self) ScalarParam{detail::make_scalar_parameter(type, name), type};
                         if (!value.is_none())
                           setScalar(*self, value);
                       },
                       nb::arg("type"), nb::arg("name") = "", nb::arg("value") = nb::none())
                   .def("set", &setScalar, nb::arg("value"))
                   .def(
                       "set_estimate",
                       [](ScalarParam &p, nb::handle value) -> ScalarParam & {
                         // Checked as set() checks a value, on a scratch Param: the estimate is not kept.
                         setScalar(ScalarParam{detail::make_scalar_parameter(p.type, detail::parameter_name(*p.contents)), p.type},
                                   value);
                         return p;
                       },
                       nb::arg("value"), nb::rv_policy::reference_internal,
                       "A value for Halide's autoschedulers, checked as set() checks one; ptxjit does not use it")
                   .def("get", &getScalar)
                   .def("name", [](const ScalarParam &p) { return detail::parameter_name(*p.contents); })
                   .def("type", [](const ScalarParam &p) { return p.type; })
                   .def("__repr__", [](const ScalarParam &p) {
                     return "ptxjit.Param(" + to_string(p.type) + ", " + detail::parameter_name(*p.contents) + ")";
                   });
  add_expr_operators(param);

  nb::class_<Dimension>(m, "Dimension")
      .def("min", &Dimension::min)
      .def("extent", &Dimension::extent)
      .def("max", &Dimension::max)
      .def("stride", &Dimension::stride)
      .def("set_min", [](Dimension &d, nb::handle v) -> Dimension & { return d.set_min(to_expr(v)); },
           nb::rv_policy::reference_internal)
      .def("set_extent", [](Dimension &d, nb::handle v) -> Dimension & { return d.set_extent(to_expr(v)); },
           nb::rv_policy::reference_internal)
      .def("set_bounds",
           [](Dimension &d, nb::handle min, nb::handle extent) -> Dimension & {
             return d.set_bounds(to_expr(min), to_expr(extent));
           },
           nb::rv_policy::reference_internal)
      // None, as Halide's Expr(), lifts the constraint: any stride, in dimension 0 too.
      .def("set_stride", [](Dimension &d, nb::handle v) -> Dimension & { return d.set_stride(v.is_none() ? Expr() : to_expr(v)); },
           nb::arg("stride").none(), nb::rv_policy::reference_internal)
      .def("set_estimate",
           [](Dimension &d, nb::handle min, nb::handle extent) -> Dimension & {
             return d.set_estimate(to_expr(min), to_expr(extent));
           },
           nb::rv_policy::reference_internal)
      .def("dim", &Dimension::dim);

  nb::class_<OutputImageParam>(m, "OutputImageParam")
      .def("name", &OutputImageParam::name)
      .def("dimensions", &OutputImageParam::dimensions)
      .def("type", &OutputImageParam::type)
      .def("dim", &OutputImageParam::dim)
      .def("width", &OutputImageParam::width)
      .def("height", &OutputImageParam::height)
      .def("channels", &OutputImageParam::channels)
      .def("__repr__", [](const OutputImageParam &p) {
        return "ptxjit.OutputImageParam(" + to_string(p.type()) + ", " + std::to_string(p.dimensions()) + ", " + p.name() + ")";
      });

  nb::class_<ImageParam>(m, "ImageParam")
      .def(nb::init<Type, int, const std::string &>(), nb::arg("type"), nb::arg("dimensions"), nb::arg("name") = "")
      .def("set", [](ImageParam &p, nb::handle array) { p.set(import_array(array, std::nullopt, false).buffer); },
           nb::arg("array"), "Binds an array or tensor (or a ptxjit.Buffer) to this ImageParam, without a copy")
      .def("name", &ImageParam::name)
      .def("dimensions", &ImageParam::dimensions)
      .def("type", &ImageParam::type)
      .def("min", &ImageParam::min)
      .def("extent", &ImageParam::extent)
      .def("width", &ImageParam::width)
      .def("height", &ImageParam::height)
      .def("dim", &ImageParam::dim)
      .def("set_host_alignment", &ImageParam::set_host_alignment, nb::rv_policy::reference_internal)
      .def("set_estimates", [](ImageParam &p, nb::handle region) -> ImageParam & { return p.set_estimates(to_region(region)); },
           nb::arg("estimates"), nb::rv_policy::reference_internal)
      .def("__getitem__", [](const ImageParam &p, nb::handle key) { return p(to_exprs(key)); })
      .def("in_", nb::overload_cast<const Func &>(&ImageParam::in), nb::arg("consumer"))
      .def("in_", nb::overload_cast<const std::vector<Func> &>(&ImageParam::in), nb::arg("consumers"))
      .def("in_", nb::overload_cast<>(&ImageParam::in))
      .def("__repr__", [](const ImageParam &p) {
        return "ptxjit.ImageParam(" + to_string(p.type()) + ", " + std::to_string(p.dimensions()) + ", " + p.name() + ")";
      });
}

} // namespace ptxjit::python
