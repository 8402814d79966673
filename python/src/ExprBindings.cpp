#include "Bindings.h"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <climits>
#include <sstream>

namespace ptxjit::python {

namespace {

// Int(3) or Float(8) fail here, when made, rather than in a later cast or Param.
Type checked(Type t) {
  if (!t.is_supported())
    throw nb::value_error(("ptxjit has no type " + to_string(t) +
                           ": its types are int and uint of 8, 16, 32 and 64 bits, bool, float of 16, 32 and 64 bits, "
                           "and bfloat16")
                              .c_str());
  return t;
}

std::string text(const Expr &e) {
  std::ostringstream out;
  out << e;
  return out.str();
}

std::string pythonTypeName(nb::handle value) { return nb::cast<std::string>(nb::type_name(value.type())); }

using BinaryOperator = Expr (*)(Expr, Expr);

struct OperatorEntry {
  const char *name, *reflected;
  BinaryOperator apply;
};

// Python's `/` is ptxjit's (and Halide's) division: it rounds down for integers. `//` also rounds
// down for floats, as Python's does.
const OperatorEntry binaryOperators[] = {
    {"__add__", "__radd__", [](Expr a, Expr b) { return a + b; }},
    {"__sub__", "__rsub__", [](Expr a, Expr b) { return a - b; }},
    {"__mul__", "__rmul__", [](Expr a, Expr b) { return a * b; }},
    {"__truediv__", "__rtruediv__", [](Expr a, Expr b) { return a / b; }},
    {"__floordiv__", "__rfloordiv__",
     [](Expr a, Expr b) {
       Expr q = a / b;
       return q.type().is_float() ? floor(q) : q;
     }},
    {"__mod__", "__rmod__", [](Expr a, Expr b) { return a % b; }},
    {"__pow__", "__rpow__", [](Expr a, Expr b) { return pow(a, b); }},
    {"__and__", "__rand__", [](Expr a, Expr b) { return a.type().is_bool() ? a && b : a & b; }},
    {"__or__", "__ror__", [](Expr a, Expr b) { return a.type().is_bool() ? a || b : a | b; }},
    {"__xor__", "__rxor__", [](Expr a, Expr b) { return a ^ b; }},
    {"__lshift__", "__rlshift__", [](Expr a, Expr b) { return a << b; }},
    {"__rshift__", "__rrshift__", [](Expr a, Expr b) { return a >> b; }},
    {"__eq__", nullptr, [](Expr a, Expr b) { return a == b; }},
    {"__ne__", nullptr, [](Expr a, Expr b) { return a != b; }},
    {"__lt__", nullptr, [](Expr a, Expr b) { return a < b; }},
    {"__le__", nullptr, [](Expr a, Expr b) { return a <= b; }},
    {"__gt__", nullptr, [](Expr a, Expr b) { return a > b; }},
    {"__ge__", nullptr, [](Expr a, Expr b) { return a >= b; }},
};

template <typename Function> void addMethod(nb::handle cls, const char *name, Function &&f) {
  nb::setattr(cls, name, nb::cpp_function(std::forward<Function>(f), nb::scope(cls), nb::name(name), nb::is_method(), nb::is_operator()));
}

Expr minOrMax(nb::args values, bool isMin) {
  if (values.size() < 2)
    throw nb::type_error(isMin ? "min needs at least two values" : "max needs at least two values");
  Expr result = to_expr(values[0]);
  for (size_t i = 1; i < values.size(); ++i)
    result = isMin ? min(result, to_expr(values[i])) : max(result, to_expr(values[i]));
  return result;
}

std::vector<PrintArgument> printArguments(nb::args values, size_t first) {
  std::vector<PrintArgument> arguments;
  for (size_t i = first; i < values.size(); ++i) {
    if (nb::isinstance<nb::str>(values[i]))
      arguments.emplace_back(nb::cast<std::string>(values[i]));
    else
      arguments.emplace_back(to_expr(values[i]));
  }
  return arguments;
}

} // namespace

void add_expr_operators(nb::handle cls) {
  for (const OperatorEntry &entry : binaryOperators) {
    BinaryOperator apply = entry.apply;
    addMethod(cls, entry.name, [apply](nb::handle a, nb::handle b) { return apply(to_expr(a), to_expr(b)); });
    if (entry.reflected)
      addMethod(cls, entry.reflected, [apply](nb::handle a, nb::handle b) { return apply(to_expr(b), to_expr(a)); });
  }
  addMethod(cls, "__neg__", [](nb::handle a) { return -to_expr(a); });
  addMethod(cls, "__pos__", [](nb::handle a) { return to_expr(a); });
  addMethod(cls, "__invert__", [](nb::handle a) {
    Expr e = to_expr(a);
    return e.type().is_bool() ? !e : ~e;
  });
  addMethod(cls, "__abs__", [](nb::handle a) { return abs(to_expr(a)); });
  addMethod(cls, "__bool__", [](nb::handle) -> bool {
    throw nb::type_error("an Expr has no truth value while the pipeline is defined: use ptxjit.select(...) for a "
                         "condition, and & | ~ for and, or, not");
  });
  // == makes an Expr, so these objects cannot be dictionary keys.
  nb::setattr(cls, "__hash__", nb::none());
}

Expr to_expr(nb::handle value) {
  if (nb::isinstance<Expr>(value))
    return nb::cast<Expr>(value);
  if (nb::isinstance<Var>(value))
    return Expr(nb::cast<Var>(value));
  if (nb::isinstance<RVar>(value))
    return Expr(nb::cast<RVar>(value));
  if (nb::isinstance<RDom>(value))
    return Expr(nb::cast<RDom>(value));
  if (nb::isinstance<FuncRef>(value))
    return Expr(nb::cast<const FuncRef &>(value));
  if (nb::isinstance<ScalarParam>(value))
    return detail::parameter_expr(nb::cast<const ScalarParam &>(value).contents);
  if (PyBool_Check(value.ptr()))
    return Expr(value.ptr() == Py_True);
  if (PyLong_Check(value.ptr())) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(value.ptr(), &overflow);
    if (overflow)
      throw nb::value_error("an integer constant does not fit in 64 bits");
    if (v >= INT32_MIN && v <= INT32_MAX)
      return Expr(static_cast<int32_t>(v));
    return Expr(static_cast<int64_t>(v));
  }
  if (PyFloat_Check(value.ptr()))
    return Expr(static_cast<float>(PyFloat_AsDouble(value.ptr())));
  throw nb::type_error(("cannot use a " + pythonTypeName(value) + " as a ptxjit Expr").c_str());
}

std::vector<Expr> to_exprs(nb::handle values) {
  std::vector<Expr> result;
  if (nb::isinstance<nb::tuple>(values) || nb::isinstance<nb::list>(values)) {
    for (nb::handle v : values)
      result.push_back(to_expr(v));
  } else {
    result.push_back(to_expr(values));
  }
  return result;
}

Region to_region(nb::handle bounds) {
  Region region;
  for (nb::handle b : bounds) {
    if (nb::isinstance<Range>(b))
      region.push_back(nb::cast<Range>(b));
    else if ((nb::isinstance<nb::tuple>(b) || nb::isinstance<nb::list>(b)) && nb::len(b) == 2)
      region.emplace_back(to_expr(b[0]), to_expr(b[1]));
    else
      throw nb::type_error("a region is a list of Range(min, extent) or (min, extent) pairs");
  }
  return region;
}

void bind_expr(nb::module_ &m) {
  nb::class_<Type>(m, "Type")
      .def_prop_ro("bits", [](Type t) { return int(t.bits); })
      .def_prop_ro("lanes", [](Type t) { return int(t.lanes); })
      .def("is_int", &Type::is_int)
      .def("is_uint", &Type::is_uint)
      .def("is_bool", &Type::is_bool)
      .def("is_float", &Type::is_float)
      .def("is_bfloat", &Type::is_bfloat)
      .def("with_lanes", &Type::with_lanes)
      .def("__eq__", [](Type a, Type b) { return a == b; })
      .def("__ne__", [](Type a, Type b) { return a != b; })
      .def("__hash__", [](Type t) { return (int(t.code) << 24) | (int(t.bits) << 16) | int(t.lanes); })
      .def("__repr__", [](Type t) { return "ptxjit.Type(" + to_string(t) + ")"; })
      .def("__str__", [](Type t) { return to_string(t); });
  m.def("Int", [](int bits) { return checked(Int(bits)); }, nb::arg("bits"));
  m.def("UInt", [](int bits) { return checked(UInt(bits)); }, nb::arg("bits"));
  m.def("Float", [](int bits) { return checked(Float(bits)); }, nb::arg("bits"));
  m.def("BFloat", [](int bits) { return checked(BFloat(bits)); }, nb::arg("bits"));
  m.def("Bool", []() { return Bool(); });

  auto expr = nb::class_<Expr>(m, "Expr")
                  .def("__init__", [](Expr *self, nb::handle value) { new (self) Expr(to_expr(value)); })
                  .def("type", &Expr::type)
                  .def("__repr__", [](const Expr &e) { return "ptxjit.Expr(" + text(e) + ")"; })
                  .def("__str__", &text);
  add_expr_operators(expr);

  auto var = nb::class_<Var>(m, "Var")
                 .def(nb::init<>())
                 .def(nb::init<const std::string &>(), nb::arg("name"))
                 .def("name", &Var::name)
                 .def_static("outermost", &Var::outermost)
                 .def("__repr__", [](const Var &v) { return "ptxjit.Var(" + v.name() + ")"; })
                 .def("__str__", [](const Var &v) { return v.name(); });
  add_expr_operators(var);

  auto rvar = nb::class_<RVar>(m, "RVar")
                  .def(nb::init<>())
                  .def(nb::init<const std::string &>(), nb::arg("name"))
                  .def("name", &RVar::name)
                  .def("min", &RVar::min)
                  .def("extent", &RVar::extent)
                  .def("__repr__", [](const RVar &v) { return "ptxjit.RVar(" + v.name() + ")"; })
                  .def("__str__", [](const RVar &v) { return v.name(); });
  add_expr_operators(rvar);

  nb::class_<Range>(m, "Range")
      .def("__init__", [](Range *self, nb::handle min, nb::handle extent) { new (self) Range(to_expr(min), to_expr(extent)); },
           nb::arg("min"), nb::arg("extent"))
      .def_rw("min", &Range::min)
      .def_rw("extent", &Range::extent);

  auto rdom =
      nb::class_<RDom>(m, "RDom")
          // Before the generic form, which would take the ImageParam for a sequence of ranges.
          .def(nb::init<const ImageParam &, const std::string &>(), nb::arg("image"), nb::arg("name") = "")
          .def(
              "__init__",
              [](RDom *self, nb::handle ranges, const std::string &name) {
                // RDom([(min, extent), ...]) or RDom([Range(min, extent), ...]) or RDom(Range(...)).
                std::vector<std::pair<Expr, Expr>> bounds;
                auto add = [&](nb::handle r) {
                  if (nb::isinstance<Range>(r)) {
                    Range range = nb::cast<Range>(r);
                    bounds.emplace_back(range.min, range.extent);
                  } else if ((nb::isinstance<nb::tuple>(r) || nb::isinstance<nb::list>(r)) && nb::len(r) == 2) {
                    bounds.emplace_back(to_expr(r[0]), to_expr(r[1]));
                  } else {
                    throw nb::type_error("an RDom is made of Range(min, extent) or (min, extent) pairs");
                  }
                };
                if (nb::isinstance<Range>(ranges))
                  add(ranges);
                else
                  for (nb::handle r : ranges)
                    add(r);
                new (self) RDom(bounds, name);
              },
              nb::arg("ranges"), nb::arg("name") = "")
          .def("where", [](RDom &r, nb::handle predicate) -> RDom & { return r.where(to_expr(predicate)); },
               nb::rv_policy::reference_internal)
          .def("dimensions", &RDom::dimensions)
          .def("__len__", &RDom::dimensions)
          .def("__getitem__",
               [](const RDom &r, int i) {
                 if (i < 0 || i >= r.dimensions())
                   throw nb::index_error(("RDom index " + std::to_string(i) + " out of range: it has " +
                                          std::to_string(r.dimensions()) + " dimensions")
                                             .c_str());
                 return r[i];
               })
          .def_ro("x", &RDom::x)
          .def_ro("y", &RDom::y)
          .def_ro("z", &RDom::z)
          .def_ro("w", &RDom::w);
  add_expr_operators(rdom);
  nb::implicitly_convertible<RDom, RVar>();

  m.def("select", [](nb::args values) {
    // select(c0, v0, c1, v1, ..., default), as Halide's Python bindings take it.
    if (values.size() < 3 || values.size() % 2 == 0)
      throw nb::type_error("select takes (condition, value, ..., default): an odd number of at least three arguments");
    Expr result = to_expr(values[values.size() - 1]);
    for (size_t i = values.size() - 1; i >= 2; i -= 2)
      result = select(to_expr(values[i - 2]), to_expr(values[i - 1]), result);
    return result;
  });
  m.def("mux", [](nb::handle id, nb::handle values) { return mux(to_expr(id), to_exprs(values)); });
  m.def("likely", [](nb::handle e) { return likely(to_expr(e)); });
  m.def("likely_if_innermost", [](nb::handle e) { return likely_if_innermost(to_expr(e)); });
  m.def("undef", [](Type t) { return undef(t); });
  m.def("random_float", [](nb::handle seed) { return random_float(seed.is_none() ? Expr() : to_expr(seed)); },
        nb::arg("seed") = nb::none());
  m.def("random_int", [](nb::handle seed) { return random_int(seed.is_none() ? Expr() : to_expr(seed)); },
        nb::arg("seed") = nb::none());
  m.def("random_uint", [](nb::handle seed) { return random_uint(seed.is_none() ? Expr() : to_expr(seed)); },
        nb::arg("seed") = nb::none());
  m.def("min", [](nb::args values) { return minOrMax(values, true); });
  m.def("max", [](nb::args values) { return minOrMax(values, false); });
  m.def("clamp", [](nb::handle v, nb::handle lo, nb::handle hi) { return clamp(to_expr(v), to_expr(lo), to_expr(hi)); });
  m.def("abs", [](nb::handle a) { return abs(to_expr(a)); });
  m.def("absd", [](nb::handle a, nb::handle b) { return absd(to_expr(a), to_expr(b)); });
  m.def("cast", [](Type t, nb::handle value) { return cast(t, to_expr(value)); }, nb::arg("type"), nb::arg("value"));
  m.def("saturating_cast", [](Type t, nb::handle value) { return saturating_cast(t, to_expr(value)); });
  m.def("reinterpret", [](Type t, nb::handle value) { return reinterpret(t, to_expr(value)); });
  m.def("lerp", [](nb::handle a, nb::handle b, nb::handle w) { return lerp(to_expr(a), to_expr(b), to_expr(w)); });
  m.def("atan2", [](nb::handle y, nb::handle x) { return atan2(to_expr(y), to_expr(x)); });
  m.def("pow", [](nb::handle x, nb::handle y) { return pow(to_expr(x), to_expr(y)); });
  m.def("fast_pow", [](nb::handle x, nb::handle y) { return fast_pow(to_expr(x), to_expr(y)); });
  m.def("hypot", [](nb::handle x, nb::handle y) { return hypot(to_expr(x), to_expr(y)); });
  m.def("div_round_to_zero", [](nb::handle x, nb::handle y) { return div_round_to_zero(to_expr(x), to_expr(y)); });
  m.def("mod_round_to_zero", [](nb::handle x, nb::handle y) { return mod_round_to_zero(to_expr(x), to_expr(y)); });
  m.def("unsafe_promise_clamped", [](nb::handle v, nb::handle lo, nb::handle hi) {
    return unsafe_promise_clamped(to_expr(v), to_expr(lo), to_expr(hi));
  });

  using BinaryFunction = Expr (*)(Expr, Expr);
  const std::pair<const char *, BinaryFunction> fixedPointFunctions[] = {
      {"widening_add", widening_add},
      {"widening_sub", widening_sub},
      {"widening_mul", widening_mul},
      {"widening_shift_left", widening_shift_left},
      {"widening_shift_right", widening_shift_right},
      {"rounding_shift_left", rounding_shift_left},
      {"rounding_shift_right", rounding_shift_right},
      {"saturating_add", saturating_add},
      {"saturating_sub", saturating_sub},
      {"halving_add", halving_add},
      {"rounding_halving_add", rounding_halving_add},
      {"halving_sub", halving_sub},
  };
  for (const auto &[name, function] : fixedPointFunctions) {
    BinaryFunction f = function;
    m.def(name, [f](nb::handle a, nb::handle b) { return f(to_expr(a), to_expr(b)); }, nb::arg("a"), nb::arg("b"));
  }
  m.def("mul_shift_right", [](nb::handle a, nb::handle b, nb::handle q) {
    return mul_shift_right(to_expr(a), to_expr(b), to_expr(q));
  });
  m.def("rounding_mul_shift_right", [](nb::handle a, nb::handle b, nb::handle q) {
    return rounding_mul_shift_right(to_expr(a), to_expr(b), to_expr(q));
  });

  using UnaryFunction = Expr (*)(Expr);
  const std::pair<const char *, UnaryFunction> unaryFunctions[] = {
      {"sqrt", sqrt},   {"exp", exp},       {"log", log},           {"sin", sin},           {"cos", cos},
      {"tan", tan},     {"asin", asin},     {"acos", acos},         {"atan", atan},         {"sinh", sinh},
      {"cosh", cosh},   {"tanh", tanh},     {"asinh", asinh},       {"acosh", acosh},       {"atanh", atanh},
      {"floor", floor}, {"ceil", ceil},     {"round", round},       {"trunc", trunc},       {"fast_exp", fast_exp},
      {"fast_log", fast_log}, {"is_nan", is_nan}, {"is_inf", is_inf}, {"is_finite", is_finite},
      {"fast_sin", fast_sin}, {"fast_cos", fast_cos}, {"fast_inverse", fast_inverse},
      {"fast_inverse_sqrt", fast_inverse_sqrt}, {"erf", erf}, {"fract", fract}, {"popcount", popcount},
      {"count_leading_zeros", count_leading_zeros}, {"count_trailing_zeros", count_trailing_zeros},
      {"u8", u8},       {"u16", u16},       {"u32", u32},           {"u64", u64},           {"i8", i8},
      {"i16", i16},     {"i32", i32},       {"i64", i64},           {"f32", f32},           {"f64", f64},
      {"u8_sat", u8_sat}, {"u16_sat", u16_sat}, {"u32_sat", u32_sat}, {"u64_sat", u64_sat}, {"i8_sat", i8_sat},
      {"i16_sat", i16_sat}, {"i32_sat", i32_sat}, {"i64_sat", i64_sat},
  };
  for (const auto &[name, function] : unaryFunctions) {
    UnaryFunction f = function;
    m.def(name, [f](nb::handle x) { return f(to_expr(x)); }, nb::arg("x"));
  }

  using Reduction = Expr (*)(Expr, const std::string &);
  const std::pair<const char *, Reduction> reductions[] = {
      {"sum", sum}, {"product", product}, {"minimum", minimum}, {"maximum", maximum}};
  for (const auto &[name, function] : reductions) {
    Reduction f = function;
    m.def(name, [f](nb::handle e, const std::string &name) { return f(to_expr(e), name); }, nb::arg("expr"),
          nb::arg("name") = "");
  }
  // argmin and argmax give (location..., value) as a Python tuple of Exprs.
  m.def("argmin", [](nb::handle e, const std::string &name) { return argmin(to_expr(e), name).as_vector(); },
        nb::arg("expr"), nb::arg("name") = "");
  m.def("argmax", [](nb::handle e, const std::string &name) { return argmax(to_expr(e), name).as_vector(); },
        nb::arg("expr"), nb::arg("name") = "");

  m.def("print", [](nb::args values) {
    if (values.size() < 1)
      throw nb::type_error("print needs a value");
    return detail::print_call(Expr(true), to_expr(values[0]), printArguments(values, 1));
  });
  m.def("print_when", [](nb::args values) {
    if (values.size() < 2)
      throw nb::type_error("print_when needs a condition and a value");
    return detail::print_call(to_expr(values[0]), to_expr(values[1]), printArguments(values, 2));
  });
  m.def("require", [](nb::args values) {
    if (values.size() < 2)
      throw nb::type_error("require needs a condition and a value");
    return detail::require_call(to_expr(values[0]), to_expr(values[1]), printArguments(values, 2));
  });
}

} // namespace ptxjit::python
