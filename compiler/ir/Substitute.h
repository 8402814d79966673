#ifndef PTXJIT_IR_SUBSTITUTE_H
#define PTXJIT_IR_SUBSTITUTE_H

// Replaces free variables by expressions. Names bound by an inner Let, LetStmt or For shadow
// the replacement inside their scope.

#include "IR.h"

#include <map>
#include <set>
#include <string>

namespace ptxjit::ir {

Expr substitute(const std::map<std::string, Expr> &replacements, const Expr &e);
Stmt substitute(const std::map<std::string, Expr> &replacements, const Stmt &s);
Expr substitute(const std::string &name, const Expr &replacement, const Expr &e);
Stmt substitute(const std::string &name, const Expr &replacement, const Stmt &s);

/// The body inside the lets that wrap `e` (common subexpression elimination puts them around an
/// update's value); `values` receives each let's value written in the variables outside them all.
Expr peel_lets(const Expr &e, std::map<std::string, Expr> &values);

/// Whether `e`, written out as a tree, has more than `nodes` nodes. Passes that expand lets into
/// their uses stop where the expansion would grow past a size worth simplifying.
bool has_more_nodes_than(const Expr &e, int nodes);

/// The size (in nodes) past which a let's value, expanded into outer variables, stays a name.
constexpr int MaxExpandedLetNodes = 200;

/// The names of the variables `e` mentions (free or not).
std::set<std::string> variable_names(const Expr &e);

/// Whether `e` or `s` mentions variable `name` (free or not).
bool uses_variable(const Expr &e, const std::string &name);
bool uses_variable(const Stmt &s, const std::string &name);

/// Whether `e` reads only Params and input sizes (no loop or let variable, load or Func call):
/// its value is the same for the whole realize, as a specialization's condition is.
bool is_realize_invariant(const Expr &e);

} // namespace ptxjit::ir

#endif
