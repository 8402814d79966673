#ifndef PTXJIT_LOWER_BOXESTOUCHED_H
#define PTXJIT_LOWER_BOXESTOUCHED_H

// The region of a Func or image that a statement reads or writes, as intervals in terms of the
// variables defined outside the statement. Loops range over their bounds, lets are followed,
// and simple guards (x <= e, x >= e) narrow the variables they test.

#include "ir/Interval.h"

#include <string>
#include <vector>

namespace ptxjit::lower {

using Box = std::vector<ir::Interval>;

struct BoxQuery {
  std::string name;
  bool calls = true;    ///< reads: Calls to `name` (Funcs and images)
  bool provides = true; ///< writes: Provides to `name`
  ir::CallBounds *call_bounds = nullptr; ///< bounds of Func values used as coordinates
};

/// The union of the touched points; empty when `name` is not touched at all.
Box box_touched(const ir::Stmt &s, const BoxQuery &query, const ir::Scope &scope = {});
Box box_touched(const ir::Expr &e, const BoxQuery &query, const ir::Scope &scope = {});

} // namespace ptxjit::lower

#endif
