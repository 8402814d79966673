#ifndef PTXJIT_RDOM_H
#define PTXJIT_RDOM_H

// Reduction domains: the iteration space of an update definition, e.g. RDom r(0, W, 0, H)
// iterates r.x over [0, W) and r.y over [0, H), r.x innermost.

#include "ptxjit/Expr.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace ptxjit {
struct ReductionDomainContents;
} // namespace ptxjit

#pragma GCC visibility push(default)
namespace ptxjit {

// Public classes are declared where their visibility is the default: a first declaration outside
// decides it, and would hide them from the shared library.
class RawBuffer;
class ImageParam;

/// A dimension of an RDom, or (default-constructed or named) a loop that a schedule makes by
/// splitting or fusing RVars, as in `g.update().split(r, ro, ri, 4)`.
class RVar {
public:
  /// A loop name with a fresh unique name, for schedules.
  RVar();
  explicit RVar(const std::string &name);
  RVar(std::shared_ptr<ReductionDomainContents> domain, int index);
  const std::string &name() const;
  Expr min() const;
  Expr extent() const;
  operator Expr() const;
  const std::shared_ptr<ReductionDomainContents> &domain() const { return Domain; }

private:
  std::shared_ptr<ReductionDomainContents> Domain; // null for a loop name
  int Index = 0;
  std::string Name;                                // the loop name when there is no domain
};

class RDom {
public:
  RDom() = default;
  /// One (min, extent) pair a dimension; extents may be expressions of Params.
  RDom(const std::vector<std::pair<Expr, Expr>> &ranges, const std::string &name = "");
  RDom(Expr min, Expr extent, const std::string &name = "");
  RDom(Expr min0, Expr extent0, Expr min1, Expr extent1, const std::string &name = "");
  RDom(Expr min0, Expr extent0, Expr min1, Expr extent1, Expr min2, Expr extent2, const std::string &name = "");
  /// Every point of a buffer's region (its mins and extents now), or of an ImageParam's (those of
  /// the buffer bound at realize).
  explicit RDom(const RawBuffer &buffer, const std::string &name = "");
  explicit RDom(const ImageParam &input, const std::string &name = "");

  /// Restricts the domain to the points where `predicate` holds (it may read the RVars, pure
  /// Vars of the Func updated, Params and Funcs); called again, to where every predicate holds.
  /// Call it before an update uses the RDom.
  RDom &where(Expr predicate);

  int dimensions() const;
  RVar operator[](int i) const;
  /// The first dimension, so a 1-D RDom can be used as an Expr.
  operator Expr() const;
  operator RVar() const;
  const std::shared_ptr<ReductionDomainContents> &contents() const { return Contents; }

  RVar x, y, z, w;

private:
  std::shared_ptr<ReductionDomainContents> Contents;
};

} // namespace ptxjit

#pragma GCC visibility pop

#endif
