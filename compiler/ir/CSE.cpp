#include "CSE.h"

#include "Constants.h"
#include "IREquality.h"
#include "IRMutator.h"
#include "Substitute.h"

#include <cstdint>
#include <map>
#include <unordered_map>
#include <vector>

namespace ptxjit::ir {

namespace {

// Value numbering over the DAG: each distinct subexpression (by node, then by structure) gets a
// number once, children before parents, with the number of parents that use it.
class ValueNumbering {
public:
  struct Entry {
    Expr shallow;              // the node with its children replaced by placeholders "#<number>"
    std::vector<int> children; // their numbers
    int uses = 0;
    bool reads = false;        // reads memory here or below
  };
  std::vector<Entry> Entries;

  int number(const Expr &e);

private:
  std::unordered_map<const IRNode *, int> ByNode;
  std::map<std::string, int> ByKey;
};

std::string placeholder(int n) { return "#" + std::to_string(n); }

// Rebuilds one node with its children numbered and replaced by placeholders. Lets are taken
// whole: their bodies may use the name they bind.
class Shallow : public IRMutator {
public:
  explicit Shallow(ValueNumbering &numbering) : Numbering(numbering) {}
  std::vector<int> Children;

  Expr mutate(const Expr &e) override {
    if (Top) {
      Top = false;
      return IRMutator::mutate(e);
    }
    int n = Numbering.number(e);
    Children.push_back(n);
    return Variable::make(e.type(), placeholder(n));
  }

private:
  ValueNumbering &Numbering;
  bool Top = true;
  using IRMutator::visit;
  Expr visit(const Let *op) override { return Expr(op); }
};

int ValueNumbering::number(const Expr &e) {
  if (auto it = ByNode.find(e.get()); it != ByNode.end()) {
    ++Entries[it->second].uses;
    return it->second;
  }
  Shallow shallow(*this);
  Expr node = shallow.mutate(e);
  std::string key = structural_key(node);
  // Structure compares names; a call is also the Func or image it names (two of one name are an
  // error reported later, which merging them would hide).
  if (const auto *call = e.as<Call>())
    key += "@" + std::to_string(reinterpret_cast<uintptr_t>(call->func.get())) + "@" +
           std::to_string(reinterpret_cast<uintptr_t>(call->param.get()));
  if (auto it = ByKey.find(key); it != ByKey.end()) {
    ByNode[e.get()] = it->second;
    ++Entries[it->second].uses;
    return it->second;
  }
  bool reads = e.as<Load>() || (e.as<Call>() && e.as<Call>()->call_type != Call::PureExtern);
  for (int child : shallow.Children)
    reads = reads || Entries[child].reads;
  int n = static_cast<int>(Entries.size());
  Entries.push_back({node, shallow.Children, 1, reads});
  ByKey.emplace(std::move(key), n);
  ByNode[e.get()] = n;
  return n;
}

bool worthALet(const ValueNumbering::Entry &entry) {
  const Expr &e = entry.shallow;
  if (entry.uses < 2 || is_const(e) || e.as<Variable>() || e.as<Broadcast>() || e.type().is_bool())
    return false;
  return entry.reads || e.type().is_float();
}

} // namespace

Expr common_subexpression_elimination(const Expr &e, const std::string &prefix) {
  if (!e.defined())
    return e;
  ValueNumbering numbering;
  int root = numbering.number(e);
  // Children come before parents: each entry is rebuilt from its rebuilt children, or from the
  // variables of the lets that hold them.
  std::vector<Expr> rebuilt(numbering.Entries.size());
  std::vector<std::pair<std::string, Expr>> lets;
  for (size_t n = 0; n < numbering.Entries.size(); ++n) {
    const ValueNumbering::Entry &entry = numbering.Entries[n];
    std::map<std::string, Expr> children;
    for (int child : entry.children)
      children[placeholder(child)] = rebuilt[child];
    Expr value = children.empty() ? entry.shallow : substitute(children, entry.shallow);
    if (worthALet(entry)) {
      std::string name = prefix + ".cse" + std::to_string(lets.size());
      lets.emplace_back(name, value);
      value = Variable::make(value.type(), name);
    }
    rebuilt[n] = value;
  }
  Expr result = rebuilt[static_cast<size_t>(root)];
  for (auto it = lets.rbegin(); it != lets.rend(); ++it)
    result = Let::make(it->first, it->second, result);
  return result;
}

} // namespace ptxjit::ir
