#include "AddImageChecks.h"
#include "BoundsInference.h"

#include "BoxesTouched.h"
#include "ir/Constants.h"
#include "ptxjit/IROperator.h"
#include "ir/IRVisitor.h"
#include "ir/Simplify.h"
#include "lang/Parameter.h"

#include <algorithm>

namespace ptxjit::lower {

using namespace ir;

namespace {

Expr var(const std::string &name) { return Variable::make(Int(32), name); }

class ImageFinder : public IRVisitor {
public:
  std::vector<std::shared_ptr<ParameterContents>> Images;

private:
  using IRVisitor::visit;
  void add(const std::shared_ptr<ParameterContents> &image) {
    if (std::find(Images.begin(), Images.end(), image) == Images.end())
      Images.push_back(image);
  }
  void visit(const Call *op) override {
    IRVisitor::visit(op);
    if (op->call_type == Call::Image && op->param)
      add(op->param);
  }
  // An image's bounds (in.width(), ...) make it an argument even when it is never read; an
  // output's (f.output_buffer().width()) are the output's.
  void visit(const Variable *op) override {
    if (op->param && op->param->is_buffer && !op->param->is_output)
      add(op->param);
  }
};

bool isChecks(const Stmt &s) {
  if (s.as<AssertStmt>())
    return true;
  const auto *block = s.as<Block>();
  return block && isChecks(block->first) && isChecks(block->rest);
}

} // namespace

std::vector<std::shared_ptr<ParameterContents>> find_images(const Stmt &s) {
  ImageFinder finder;
  s.accept(&finder);
  return finder.Images;
}

Stmt image_checks(const Stmt &s, const std::vector<OutputBuffer> &outputs,
                      const std::vector<std::shared_ptr<ParameterContents>> &images, CallBounds &funcValues) {
  std::vector<Stmt> checks;
  auto denseCheck = [&](const std::string &name, const char *kind) {
    checks.push_back(AssertStmt::make(EQ::make(var(buffer_field_name(name, "stride", 0)), make_one(Int(32))),
                                      std::string(kind) + " buffer " + name +
                                          " must be dense in dimension 0, but its stride there is %",
                                      {var(buffer_field_name(name, "stride", 0))}));
  };
  // Indices are 32-bit: the farthest element a buffer's strides address must be within reach.
  // A term is below 2^62; capped at 2^31 (at 2^58 in the reported offset) before the sums, no
  // number of dimensions a buffer can have overflows them.
  auto spanCheck = [&](const std::string &name, int dimensions, const char *kind) {
    const Type i64 = Int(64);
    Expr span = make_zero(i64), cappedSpan = make_zero(i64);
    for (int i = 0; i < dimensions; ++i) {
      Expr last = Max::make(Sub::make(var(buffer_field_name(name, "extent", i)), make_one(Int(32))), make_zero(Int(32)));
      Expr stride = var(buffer_field_name(name, "stride", i));
      Expr term = Mul::make(Cast::make(i64, last), Cast::make(i64, Max::make(stride, Sub::make(make_zero(Int(32)), stride))));
      span = Add::make(span, Min::make(term, make_const(i64, int64_t(1) << 58)));
      cappedSpan = Add::make(cappedSpan, Min::make(term, make_const(i64, int64_t(1) << 31)));
    }
    checks.push_back(AssertStmt::make(LE::make(cappedSpan, make_const(i64, int64_t(INT32_MAX))),
                                      std::string(kind) + " buffer " + name +
                                          " reaches element offset %, past the 2^31 - 1 that 32-bit indexing addresses",
                                      {span}));
  };
  for (const OutputBuffer &output : outputs)
    if (output.dimensions > 0) {
      if (!output.strided)
        denseCheck(output.name, "output");
      spanCheck(output.name, output.dimensions, "output");
    }
  const auto [lets, body] = peel_lets(s);
  for (const auto &image : images) {
    if (image->dimensions > 0) {
      // A stride the ImageParam sets in dimension 0 is checked with its other constraints.
      if (!DimensionConstraint::strided(image->constraints))
        denseCheck(image->name, "input");
      spanCheck(image->name, image->dimensions, "input");
    }
    Box box = box_touched(body, {image->name, true, false, &funcValues});
    for (size_t i = 0; i < box.size(); ++i) {
      if (!box[i].is_bounded())
        throw CompileError("cannot infer the region of input " + image->name + " read in dimension " +
                           std::to_string(i) + ": the coordinates are unbounded; clamp them or use a "
                           "BoundaryConditions function");
      Expr min = var(buffer_field_name(image->name, "min", static_cast<int>(i)));
      Expr extent = var(buffer_field_name(image->name, "extent", static_cast<int>(i)));
      Expr max = Sub::make(Add::make(min, extent), make_one(Int(32)));
      checks.push_back(AssertStmt::make(LE::make(min, box[i].min) && LE::make(box[i].max, max),
                                        "input buffer " + image->name + " is read at [%, %] in dimension " +
                                            std::to_string(i) + ", but it covers only [%, %]",
                                        {box[i].min, box[i].max, min, max}));
    }
  }
  // Inside the lets they refer to, simplified on their own: insert_image_checks may put them
  // into a statement whose passes have written those lets out.
  return simplify(wrap_in_lets(lets, Block::make(checks)));
}

Stmt insert_image_checks(const Stmt &s, const Stmt &checks) {
  if (const auto *let = s.as<LetStmt>())
    return LetStmt::make(let->name, let->value, insert_image_checks(let->body, checks));
  if (const auto *block = s.as<Block>(); block && isChecks(block->first))
    return Block::make(block->first, insert_image_checks(block->rest, checks));
  return Block::make(checks, s);
}

} // namespace ptxjit::lower
