#include "RealizationOrder.h"

#include <algorithm>
#include <functional>
#include <set>

namespace ptxjit::lower {

std::vector<std::shared_ptr<FunctionContents>> direct_callees(const FunctionContents &f) {
  std::vector<std::shared_ptr<FunctionContents>> callees;
  auto add = [&](const Expr &e) {
    for (const auto &c : called_functions(e))
      if (c.get() != &f && std::find(callees.begin(), callees.end(), c) == callees.end())
        callees.push_back(c);
  };
  for (int s = 0; s < f.num_stages(); ++s) {
    const Definition &d = f.stage(s);
    for (const Expr &value : d.values)
      add(value);
    add(d.predicate);
    for (const Expr &a : d.args)
      add(a);
    if (d.rdom)
      for (const ReductionVariable &rv : d.rdom->domain) {
        add(rv.min);
        add(rv.extent);
      }
  }
  return callees;
}

Environment find_environment(const Outputs &outputs) {
  for (const auto &output : outputs)
    if (!output->defined())
      throw CompileError("Func " + output->name + " is realized but never defined");
  Environment env;
  std::vector<std::shared_ptr<FunctionContents>> work(outputs.rbegin(), outputs.rend());
  while (!work.empty()) {
    auto f = work.back();
    work.pop_back();
    auto [it, inserted] = env.emplace(f->name, f);
    if (!inserted) {
      if (it->second != f)
        throw CompileError("two different Funcs in one pipeline are named " + f->name + "; give them distinct names");
      continue;
    }
    for (const auto &callee : direct_callees(*f))
      work.push_back(callee);
  }
  return env;
}

std::vector<std::string> realization_order(const Outputs &outputs, const Environment &env) {
  std::vector<std::string> order;
  std::set<std::string> done, active;
  std::function<void(const FunctionContents &)> visit = [&](const FunctionContents &f) {
    if (done.count(f.name))
      return;
    if (!active.insert(f.name).second)
      throw CompileError("cyclic dependency through Func " + f.name);
    for (const auto &callee : direct_callees(f))
      visit(*callee);
    active.erase(f.name);
    done.insert(f.name);
    order.push_back(f.name);
  };
  for (const auto &output : outputs)
    visit(*output);
  return order;
}

} // namespace ptxjit::lower
