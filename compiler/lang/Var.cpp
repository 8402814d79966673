#include "ptxjit/Var.h"

#include "ir/IR.h"
#include "lang/UniqueName.h"

#include <atomic>

namespace ptxjit {

std::string unique_name(const char *prefix) {
  static std::atomic<uint64_t> counter{0};
  return prefix + std::to_string(counter.fetch_add(1, std::memory_order_relaxed));
}

Var::Var() : Name(unique_name("v")) {}
Var::Var(const std::string &name) : Name(name) {
  if (name.empty())
    throw CompileError("a Var needs a non-empty name");
}
Var::operator Expr() const { return ir::Variable::make(Int(32), Name); }

Var Var::outermost() { return Var(ir::OutermostLoop); }

const Var _("_");
const Var _0("_0"), _1("_1"), _2("_2"), _3("_3"), _4("_4"), _5("_5"), _6("_6"), _7("_7"), _8("_8"), _9("_9");

} // namespace ptxjit
