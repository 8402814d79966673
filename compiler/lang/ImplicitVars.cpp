#include "ImplicitVars.h"

#include "ir/IRVisitor.h"
#include "ptxjit/Var.h"

#include <algorithm>
#include <cctype>

namespace ptxjit {

namespace {

bool isPlaceholder(const Expr &e) {
  const auto *v = e.as<ir::Variable>();
  return v && v->name == _.name() && !v->param && !v->reduction_domain;
}

// Where `args` holds `_`, or args.size() when it holds none; two are an error.
size_t placeholderIndex(const std::vector<Expr> &args, const std::string &what) {
  size_t at = args.size();
  for (size_t i = 0; i < args.size(); ++i)
    if (isPlaceholder(args[i])) {
      if (at != args.size())
        throw CompileError(what + " has more than one implicit argument _");
      at = i;
    }
  return at;
}

std::vector<Expr> replacePlaceholder(std::vector<Expr> args, size_t at, int count) {
  std::vector<Expr> implicit;
  for (int k = 0; k < count; ++k)
    implicit.push_back(Var("_" + std::to_string(k)));
  args.erase(args.begin() + static_cast<std::ptrdiff_t>(at));
  args.insert(args.begin() + static_cast<std::ptrdiff_t>(at), implicit.begin(), implicit.end());
  return args;
}

// How many implicit Vars (_0 ... _{n-1}) `e` uses.
class ImplicitVarsUsed : public ir::IRVisitor {
public:
  int Count = 0;

private:
  using IRVisitor::visit;
  void visit(const ir::Variable *op) override {
    const std::string &n = op->name;
    // _0 ... _999999: the implicit Vars; longer names are a user's own.
    if (n.size() > 1 && n.size() <= 7 && n[0] == '_' && !op->param && !op->reduction_domain &&
        std::all_of(n.begin() + 1, n.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
      Count = std::max(Count, std::stoi(n.substr(1)) + 1);
  }
};

} // namespace

std::vector<Expr> expand_implicit_call_args(std::vector<Expr> args, int dimensions, const std::string &callee) {
  const size_t at = placeholderIndex(args, "the call to " + callee);
  if (at == args.size())
    return args;
  const int count = dimensions - static_cast<int>(args.size() - 1);
  if (count < 0)
    throw CompileError(callee + " has " + std::to_string(dimensions) + " dimensions but is called with " +
                       std::to_string(args.size() - 1) + " arguments besides _");
  return replacePlaceholder(std::move(args), at, count);
}

std::vector<Expr> expand_implicit_lhs(std::vector<Expr> args, const std::vector<Expr> &values, int dimensions,
                                      const std::string &func) {
  const size_t at = placeholderIndex(args, "the definition of " + func);
  if (at == args.size())
    return args;
  int count;
  if (dimensions < 0) {
    ImplicitVarsUsed used;
    for (const Expr &value : values)
      value.accept(&used);
    count = used.Count;
  } else {
    count = dimensions - static_cast<int>(args.size() - 1);
    if (count < 0)
      throw CompileError("Func " + func + " has " + std::to_string(dimensions) + " dimensions but is updated with " +
                         std::to_string(args.size() - 1) + " arguments besides _");
  }
  return replacePlaceholder(std::move(args), at, count);
}

} // namespace ptxjit
