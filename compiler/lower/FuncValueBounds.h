#ifndef PTXJIT_LOWER_FUNCVALUEBOUNDS_H
#define PTXJIT_LOWER_FUNCVALUEBOUNDS_H

// The range of the values a Func computes, for coordinates that are Func values: a histogram
// `hist(im(r)) += 1` with im(x) = (x * x) % 7 writes hist over [0, 6]. Each Func value's range is the
// union, over its definitions, of the bounds of the value with its pure arguments unbounded and
// its RVars over their domains (see compute() for updates that read the Func itself). Computed
// on first use and kept for the lowering of one pipeline.

#include "ir/Interval.h"
#include "lang/Function.h"

#include <map>
#include <string>

namespace ptxjit::lower {

class FuncValueBounds : public ir::CallBounds {
public:
  ir::Interval of(const ir::Call *call) override;

private:
  // A Func and which of its values (a Tuple's index).
  using ValueOf = std::pair<std::string, int>;
  ir::Interval compute(const FunctionContents &f, int index);
  ir::Interval stageBounds(const FunctionContents &f, int stage, int index);

  std::map<ValueOf, ir::Interval> Known;
  std::map<ValueOf, ir::Interval> Assumed; // for the Func value being bounded: its range so far
};

} // namespace ptxjit::lower

#endif
