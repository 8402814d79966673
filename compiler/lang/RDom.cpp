#include "ptxjit/RDom.h"

#include "ir/Constants.h"
#include "ir/IRMutator.h"
#include "ir/IRPrinter.h"
#include "ir/Simplify.h"
#include "lang/Function.h"
#include "lang/UniqueName.h"
#include "ptxjit/Buffer.h"
#include "ptxjit/IROperator.h"
#include "ptxjit/Param.h"

namespace ptxjit {
namespace {

Expr integerBound(Expr e, const std::string &what) {
  if (!e.defined())
    throw CompileError("RDom " + what + " is undefined");
  if (e.type().is_float() || e.type().is_vector())
    throw CompileError("RDom " + what + " must be an integer, not " + to_string(e.type()) + ": " + ir::to_string(e));
  return cast(Int(32), e);
}

const ReductionVariable &domainOf(const std::shared_ptr<ReductionDomainContents> &domain, int index,
                                         const std::string &name) {
  if (!domain)
    throw CompileError("RVar " + name + " belongs to no RDom: it only names a loop in a schedule");
  return domain->domain.at(index);
}

// The domain's own RVars, as plain names: the domain keeps its predicate, and an RVar Expr holds
// its domain, so as they were they would keep each other alive.
class ForgetDomain : public ir::IRMutator {
public:
  explicit ForgetDomain(const ReductionDomainContents *domain) : Domain(domain) {}

private:
  const ReductionDomainContents *Domain;
  using ir::IRMutator::visit;
  Expr visit(const ir::Variable *op) override {
    if (op->reduction_domain.get() != Domain)
      return Expr(op);
    return ir::Variable::make(op->type, op->name, op->param, nullptr);
  }
};

} // namespace

RVar::RVar() : Name(unique_name("rv")) {}
RVar::RVar(const std::string &name) : Name(name) {
  if (name.empty())
    throw CompileError("an RVar needs a non-empty name");
}
RVar::RVar(std::shared_ptr<ReductionDomainContents> domain, int index) : Domain(std::move(domain)), Index(index) {}
const std::string &RVar::name() const { return Domain ? Domain->domain.at(Index).var : Name; }

Expr RVar::min() const { return domainOf(Domain, Index, Name).min; }
Expr RVar::extent() const { return domainOf(Domain, Index, Name).extent; }
RVar::operator Expr() const {
  return ir::Variable::make(Int(32), domainOf(Domain, Index, Name).var, nullptr, Domain);
}

RDom::RDom(const std::vector<std::pair<Expr, Expr>> &ranges, const std::string &name) {
  if (ranges.empty())
    throw CompileError("an RDom needs at least one (min, extent) range");
  Contents = std::make_shared<ReductionDomainContents>();
  Contents->name = name.empty() ? unique_name("r") : name;
  static const char *suffixes[] = {"x", "y", "z", "w"};
  for (size_t i = 0; i < ranges.size(); ++i) {
    std::string var = Contents->name + "." + (i < 4 ? suffixes[i] : std::to_string(i));
    Expr extent = integerBound(ranges[i].second, "extent of " + var);
    if (auto c = ir::as_const_int(ir::simplify(extent)); c && *c < 0)
      throw CompileError("RDom " + Contents->name + " has extent " + std::to_string(*c) + " in " + var +
                         ": an extent must not be negative");
    Contents->domain.push_back({var, integerBound(ranges[i].first, "min of " + var), extent});
  }
  RVar *named[] = {&x, &y, &z, &w};
  for (size_t i = 0; i < ranges.size() && i < 4; ++i)
    *named[i] = RVar(Contents, static_cast<int>(i));
}

RDom::RDom(Expr min, Expr extent, const std::string &name) : RDom({{min, extent}}, name) {}
RDom::RDom(Expr min0, Expr extent0, Expr min1, Expr extent1, const std::string &name)
    : RDom({{min0, extent0}, {min1, extent1}}, name) {}
RDom::RDom(Expr min0, Expr extent0, Expr min1, Expr extent1, Expr min2, Expr extent2, const std::string &name)
    : RDom({{min0, extent0}, {min1, extent1}, {min2, extent2}}, name) {}

namespace {
std::vector<std::pair<Expr, Expr>> regionOf(const RawBuffer &buffer) {
  if (!buffer.defined())
    throw CompileError("RDom of an undefined Buffer");
  std::vector<std::pair<Expr, Expr>> ranges;
  for (int d = 0; d < buffer.dimensions(); ++d)
    ranges.emplace_back(Expr(buffer.min(d)), Expr(buffer.extent(d)));
  return ranges;
}
std::vector<std::pair<Expr, Expr>> regionOf(const ImageParam &input) {
  std::vector<std::pair<Expr, Expr>> ranges;
  for (int d = 0; d < input.dimensions(); ++d)
    ranges.emplace_back(input.min(d), input.extent(d));
  return ranges;
}
} // namespace

RDom::RDom(const RawBuffer &buffer, const std::string &name) : RDom(regionOf(buffer), name) {}
RDom::RDom(const ImageParam &input, const std::string &name) : RDom(regionOf(input), name) {}

RDom &RDom::where(Expr predicate) {
  if (!Contents)
    throw CompileError("where() of an RDom with no dimensions");
  if (!predicate.defined())
    throw CompileError("RDom " + Contents->name + ": where() of an undefined predicate");
  if (!predicate.type().is_bool() || predicate.type().is_vector())
    throw CompileError("RDom " + Contents->name + ": where() needs a boolean condition, not " +
                       to_string(predicate.type()) + " (" + ir::to_string(predicate) + ")");
  if (Contents->used)
    throw CompileError("RDom " + Contents->name + ": where() after an update used the RDom; restrict it first");
  predicate = ForgetDomain(Contents.get()).mutate(predicate);
  Contents->predicate = Contents->predicate.defined() ? (Contents->predicate && predicate) : predicate;
  return *this;
}

int RDom::dimensions() const { return Contents ? static_cast<int>(Contents->domain.size()) : 0; }
RVar RDom::operator[](int i) const {
  if (i < 0 || i >= dimensions())
    throw CompileError("RDom index " + std::to_string(i) + " out of range (dimensions: " +
                       std::to_string(dimensions()) + ")");
  return RVar(Contents, i);
}
RDom::operator Expr() const { return Expr((*this)[0]); }
RDom::operator RVar() const { return (*this)[0]; }

} // namespace ptxjit
