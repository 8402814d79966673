#ifndef PTXJIT_IR_SCOPEDENTRY_H
#define PTXJIT_IR_SCOPEDENTRY_H

// Passes that track what names mean (a let's value written out, a loop's range) rebind a name
// for the scope of a let or loop: the outer meaning comes back when the scope ends.

#include <map>
#include <optional>
#include <string>

namespace ptxjit::ir {

/// Saves `map`'s entry for `name` (or its absence) and restores it when destroyed; the owner
/// sets or erases the entry in between.
template <typename Value> class ScopedEntry {
public:
  ScopedEntry(std::map<std::string, Value> &map, const std::string &name) : Map(map), Name(name) {
    if (auto it = map.find(name); it != map.end())
      Saved = it->second;
  }
  ScopedEntry(const ScopedEntry &) = delete;
  ScopedEntry &operator=(const ScopedEntry &) = delete;
  ~ScopedEntry() {
    if (Saved)
      Map[Name] = *Saved;
    else
      Map.erase(Name);
  }

private:
  std::map<std::string, Value> &Map;
  std::string Name;
  std::optional<Value> Saved;
};

} // namespace ptxjit::ir

#endif
