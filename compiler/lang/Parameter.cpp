#include "lang/Parameter.h"

#include "ir/IR.h"
#include "ir/IRPrinter.h"
#include "ir/IRVisitor.h"
#include "lang/Function.h"
#include "lang/ImplicitVars.h"
#include "lang/UniqueName.h"
#include "ptxjit/IROperator.h"
#include "ptxjit/Param.h"
#include "ptxjit/RuntimeError.h"

#include <cstring>
#include <functional>
#include <mutex>

namespace ptxjit {

std::string buffer_field_name(const std::string &buffer, const char *field, int dim) {
  return buffer + "." + field + "." + std::to_string(dim);
}

namespace detail {

std::shared_ptr<ParameterContents> make_scalar_parameter(Type type, const std::string &name) {
  ir::check_supported(type, "Param " + name + " of type " + to_string(type));
  auto p = std::make_shared<ParameterContents>();
  p->name = name.empty() ? unique_name("p") : name;
  p->type = type;
  return p;
}

void set_scalar_parameter(ParameterContents &p, const void *value, size_t bytes) {
  p.scalar_bits = 0;
  std::memcpy(&p.scalar_bits, value, bytes);
}

void get_scalar_parameter(const ParameterContents &p, void *value, size_t bytes) {
  std::memcpy(value, &p.scalar_bits, bytes);
}

Expr parameter_expr(const std::shared_ptr<ParameterContents> &p) { return ir::Variable::make(p->type, p->name, p); }

const std::string &parameter_name(const ParameterContents &p) { return p.name; }

} // namespace detail

ImageParam::ImageParam(Type type, int dimensions, const std::string &name) {
  if (dimensions < 0 || dimensions > 8)
    throw CompileError("ImageParam " + name + ": " + std::to_string(dimensions) + " dimensions (0 to 8 allowed)");
  if (type.is_vector())
    throw CompileError("ImageParam " + name + ": element type must be scalar, not " + to_string(type));
  ir::check_supported(type, "ImageParam " + name + " of type " + to_string(type));
  Contents = std::make_shared<ParameterContents>();
  Contents->name = name.empty() ? unique_name("in") : name;
  Contents->type = type;
  Contents->is_buffer = true;
  Contents->dimensions = dimensions;
}

void ImageParam::set(const RawBuffer &buffer) {
  ptxjit_type_t t = buffer.type();
  Type bufferType(static_cast<Type::Code>(t.code), t.bits);
  if (bufferType != Contents->type)
    throw CompileError("ImageParam " + name() + " has type " + to_string(Contents->type) +
                       " but the buffer given has type " + to_string(bufferType));
  if (buffer.dimensions() != Contents->dimensions)
    throw CompileError("ImageParam " + name() + " has " + std::to_string(Contents->dimensions) +
                       " dimensions but the buffer given has " + std::to_string(buffer.dimensions()));
  if (Contents->host_alignment > 0 && buffer.host_bytes() &&
      reinterpret_cast<uintptr_t>(buffer.host_bytes()) % static_cast<uintptr_t>(Contents->host_alignment) != 0)
    throw RuntimeError("ImageParam " + name() + " requires host memory aligned to " +
                       std::to_string(Contents->host_alignment) + " bytes, but the buffer given starts at " +
                       std::to_string(reinterpret_cast<uintptr_t>(buffer.host_bytes()) % Contents->host_alignment) +
                       " past such a boundary");
  Contents->buffer = buffer;
}

const RawBuffer &ImageParam::get() const { return Contents->buffer; }
const std::string &ImageParam::name() const { return Contents->name; }
int ImageParam::dimensions() const { return Contents->dimensions; }
Type ImageParam::type() const { return Contents->type; }

Expr ImageParam::min(int d) const {
  if (d < 0 || d >= dimensions())
    throw CompileError("ImageParam " + name() + " has no dimension " + std::to_string(d));
  return ir::Variable::make(Int(32), buffer_field_name(name(), "min", d), Contents);
}

Expr ImageParam::extent(int d) const {
  if (d < 0 || d >= dimensions())
    throw CompileError("ImageParam " + name() + " has no dimension " + std::to_string(d));
  return ir::Variable::make(Int(32), buffer_field_name(name(), "extent", d), Contents);
}

Dimension ImageParam::dim(int d) const {
  if (!Contents)
    throw CompileError("dim() of an uninitialized ImageParam");
  if (d < 0 || d >= dimensions())
    throw CompileError("ImageParam " + name() + " has no dimension " + std::to_string(d));
  return Dimension(Contents, d);
}

ImageParam &ImageParam::set_host_alignment(int bytes) {
  if (bytes <= 0 || (bytes & (bytes - 1)) != 0)
    throw CompileError("ImageParam " + name() + ": set_host_alignment(" + std::to_string(bytes) +
                       "): the alignment must be a power of two");
  Contents->host_alignment = bytes;
  return *this;
}

ImageParam &ImageParam::set_estimates(const Region &estimates) {
  if (int(estimates.size()) != dimensions())
    throw CompileError("ImageParam " + name() + ": set_estimates with " + std::to_string(estimates.size()) +
                       " ranges for " + std::to_string(dimensions()) + " dimensions");
  for (size_t d = 0; d < estimates.size(); ++d)
    dim(int(d)).set_estimate(estimates[d].min, estimates[d].extent);
  return *this;
}

std::string describe_buffer(const ParameterContents &p) {
  return (p.is_output ? "the output buffer " : "ImageParam ") + p.name;
}

const std::string &OutputImageParam::name() const { return Contents->name; }
int OutputImageParam::dimensions() const { return Contents->dimensions; }
Type OutputImageParam::type() const { return Contents->type; }
Dimension OutputImageParam::dim(int d) const {
  if (d < 0 || d >= dimensions())
    throw CompileError(describe_buffer(*Contents) + " has no dimension " + std::to_string(d));
  return Dimension(Contents, d);
}

Expr Dimension::field(const char *name) const {
  return ir::Variable::make(Int(32), buffer_field_name(Contents->name, name, D), Contents);
}
Expr Dimension::min() const { return field("min"); }
Expr Dimension::extent() const { return field("extent"); }
Expr Dimension::max() const { return min() + extent() - 1; }
Expr Dimension::stride() const { return field("stride"); }
Dimension Dimension::dim(int d) const {
  if (d < 0 || d >= Contents->dimensions)
    throw CompileError(describe_buffer(*Contents) + " has no dimension " + std::to_string(d));
  return Dimension(Contents, d);
}

Dimension &Dimension::constrain(const char *field, Expr value) {
  const std::string what = describe_buffer(*Contents) + ".dim(" + std::to_string(D) + ").set_" + field;
  if (Contents->constraints.size() < static_cast<size_t>(Contents->dimensions))
    Contents->constraints.resize(Contents->dimensions);
  if (!value.defined()) {
    // As in Halide, an undefined value lifts the constraint; for the stride, the density of
    // dimension 0 too.
    DimensionConstraint &c = Contents->constraints[D];
    (std::string(field) == "min" ? c.min : std::string(field) == "extent" ? c.extent : c.stride) = Expr();
    c.any_stride = c.any_stride || std::string(field) == "stride";
    return *this;
  }
  if (!value.type().is_scalar() || value.type().is_float() || value.type().is_bool())
    throw CompileError(what + ": the value must be an integer expression");
  struct Check : ir::IRVisitor {
    std::string Problem;
    using ir::IRVisitor::visit;
    void visit(const ir::Call *op) override {
      if (op->call_type == ir::Call::Halide || op->call_type == ir::Call::Image)
        Problem = "it reads " + op->name;
      ir::IRVisitor::visit(op);
    }
    void visit(const ir::Variable *op) override {
      if (!op->param)
        Problem = "it uses " + op->name + ", which is not a Param";
    }
  } check;
  value.accept(&check);
  if (!check.Problem.empty())
    throw CompileError(what + ": a constraint is a value of Params and constants, but " + check.Problem);
  DimensionConstraint &c = Contents->constraints[D];
  (std::string(field) == "min" ? c.min : std::string(field) == "extent" ? c.extent : c.stride) = cast(Int(32), value);
  return *this;
}
Dimension &Dimension::set_min(Expr min) { return constrain("min", std::move(min)); }
Dimension &Dimension::set_extent(Expr extent) { return constrain("extent", std::move(extent)); }
Dimension &Dimension::set_bounds(Expr min, Expr extent) {
  constrain("min", std::move(min));
  return constrain("extent", std::move(extent));
}
Dimension &Dimension::set_stride(Expr stride) { return constrain("stride", std::move(stride)); }
Dimension &Dimension::set_estimate(Expr min, Expr extent) {
  for (const Expr &v : {min, extent})
    if (!v.defined() || !(v.type().is_int() || v.type().is_uint()) || v.type().is_vector())
      throw CompileError(describe_buffer(*Contents) + ": set_estimate of dimension " + std::to_string(D) +
                         ": its values must be integers");
  return *this;
}

namespace {

// A read of the buffer input `p` (what: "ImageParam in" or "Buffer buffer3", for errors).
Expr imageCall(const std::shared_ptr<ParameterContents> &p, const std::string &what, std::vector<Expr> args) {
  args = expand_implicit_call_args(std::move(args), p->dimensions, what);
  if (static_cast<int>(args.size()) != p->dimensions)
    throw CompileError(what + " has " + std::to_string(p->dimensions) + " dimensions but is called with " +
                       std::to_string(args.size()) + " arguments");
  for (size_t i = 0; i < args.size(); ++i) {
    if (!args[i].defined() || args[i].type().is_float() || args[i].type().is_vector())
      throw CompileError("argument " + std::to_string(i) + " of the call to " + what + " must be an integer" +
                         (args[i].defined() ? ", not " + to_string(args[i].type()) : ""));
    args[i] = cast(Int(32), args[i]);
  }
  return ir::Call::make(p->type, p->name, std::move(args), ir::Call::Image, nullptr, p);
}

// Guards the first use of a Buffer in a definition, which makes its input.
std::mutex BufferInputsLock;

} // namespace

namespace {

// Its loops are named by the implicit Vars _0, _1, ...
Func imageWrapper(const std::shared_ptr<ParameterContents> &image, const std::vector<std::string> &consumers) {
  if (!image)
    throw CompileError("in() of an uninitialized ImageParam");
  std::vector<std::string> vars;
  for (int d = 0; d < image->dimensions; ++d)
    vars.push_back("_" + std::to_string(d));
  return wrapper_of(image->wrappers, consumers, image->name, {image->type}, vars, true,
                    [&](FunctionContents &w) { w.wrapped_image = image; });
}

} // namespace

Func ImageParam::in(const Func &consumer) { return imageWrapper(Contents, {consumer.name()}); }
Func ImageParam::in(const std::vector<Func> &consumers) {
  std::vector<std::string> names;
  for (const Func &f : consumers)
    names.push_back(f.name());
  return imageWrapper(Contents, names);
}
Func ImageParam::in() { return imageWrapper(Contents, {""}); }

Expr ImageParam::operator()(std::vector<Expr> args) const {
  if (!Contents)
    throw CompileError("call to an uninitialized ImageParam");
  return imageCall(Contents, "ImageParam " + name(), std::move(args));
}

namespace {

// The Func f(v0, v1, ...) = read(v0, v1, ...) of Halide's conversions of images to Funcs: inlined
// unless scheduled. A fresh Func each time: one kept by the image would keep the image alive.
Func funcReading(const std::string &name, int dimensions, const std::function<Expr(std::vector<Expr>)> &read) {
  Func f(unique_name((name + "_func").c_str()));
  std::vector<Var> vars;
  std::vector<Expr> args;
  for (int d = 0; d < dimensions; ++d) {
    vars.emplace_back(unique_name("v"));
    args.push_back(vars.back());
  }
  f(vars) = read(args);
  return f;
}

} // namespace

ImageParam::operator Func() const {
  if (!Contents)
    throw CompileError("a Func of an uninitialized ImageParam");
  return funcReading(name(), dimensions(), [this](std::vector<Expr> args) { return (*this)(std::move(args)); });
}

Func::Func(const RawBuffer &buffer) : Func([&] {
  if (!buffer.defined())
    throw CompileError("a Func of an undefined Buffer");
  return funcReading("buffer", buffer.dimensions(),
                     [&](std::vector<Expr> args) { return detail::buffer_call(buffer, std::move(args)); });
}()) {}

Expr detail::buffer_call(const RawBuffer &buffer, std::vector<Expr> args) {
  if (!buffer.defined())
    throw CompileError("an undefined Buffer is read in a definition");
  std::shared_ptr<ParameterContents> input;
  {
    std::lock_guard<std::mutex> lock(BufferInputsLock);
    if (!buffer.AsInput) {
      auto made = std::make_shared<ParameterContents>();
      made->name = unique_name("buffer");
      const ptxjit_type_t t = buffer.type();
      made->type = Type(static_cast<Type::Code>(t.code), t.bits);
      made->is_buffer = true;
      made->dimensions = buffer.dimensions();
      made->buffer = buffer;
      made->buffer.AsInput.reset(); // the input must not own itself
      buffer.AsInput = std::move(made);
    }
    input = buffer.AsInput;
  }
  return imageCall(input, "Buffer " + input->name, std::move(args));
}

} // namespace ptxjit
