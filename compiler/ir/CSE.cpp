#include "CSE.h"

#include "Constants.h"
#include "IREquality.h"
#include "IRMutator.h"
#include "Substitute.h"

#include <algorithm>
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
  std::map<std::string, int> LetValues; // the number of each let's value, by the name it binds
};

std::string placeholder(int n) { return "#" + std::to_string(n); }

// Rebuilds one node with its children numbered and replaced by placeholders.
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
};

int ValueNumbering::number(const Expr &e) {
  if (auto it = ByNode.find(e.get()); it != ByNode.end()) {
    ++Entries[it->second].uses;
    return it->second;
  }
  // A let is its body with the name standing for the value's number; a use of the name is a use
  // of the value.
  if (const auto *let = e.as<Let>()) {
    LetValues[let->name] = number(let->value);
    --Entries[LetValues[let->name]].uses; // counted at each use of the name instead
    int n = number(let->body);
    ByNode[e.get()] = n;
    return n;
  }
  if (const auto *v = e.as<Variable>()) {
    if (auto it = LetValues.find(v->name); it != LetValues.end()) {
      ++Entries[it->second].uses;
      ByNode[e.get()] = it->second;
      return it->second;
    }
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
  bool reads = e.as<Load>() || (e.as<Call>() && e.as<Call>()->call_type != Call::PureExtern &&
                                e.as<Call>()->call_type != Call::Intrinsic);
  for (int child : shallow.Children)
    reads = reads || Entries[child].reads;
  int n = static_cast<int>(Entries.size());
  Entries.push_back({node, shallow.Children, 1, reads});
  ByKey.emplace(std::move(key), n);
  ByNode[e.get()] = n;
  return n;
}

// Written out, a repeated subexpression larger than this multiplies the work of every pass.
constexpr int64_t LargestRepeatedInline = 8;

bool worthALet(const ValueNumbering::Entry &entry, int64_t writtenSize) {
  const Expr &e = entry.shallow;
  if (entry.uses < 2 || is_const(e) || e.as<Variable>() || e.as<Broadcast>())
    return false;
  if (writtenSize > LargestRepeatedInline)
    return true;
  return !e.type().is_bool() && (entry.reads || e.type().is_float());
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
  std::vector<int64_t> writtenSize(numbering.Entries.size()); // nodes, a let's name counting one
  std::vector<std::pair<std::string, Expr>> lets;
  for (size_t n = 0; n < numbering.Entries.size(); ++n) {
    const ValueNumbering::Entry &entry = numbering.Entries[n];
    std::map<std::string, Expr> children;
    writtenSize[n] = 1;
    for (int child : entry.children) {
      children[placeholder(child)] = rebuilt[child];
      writtenSize[n] = std::min<int64_t>(writtenSize[n] + writtenSize[child], INT32_MAX);
    }
    Expr value = children.empty() ? entry.shallow : substitute(children, entry.shallow);
    if (worthALet(entry, writtenSize[n])) {
      writtenSize[n] = 1;
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
