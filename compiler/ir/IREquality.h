#ifndef PTXJIT_IR_IREQUALITY_H
#define PTXJIT_IR_IREQUALITY_H

// Structural equality and hashing: two trees are equal when they have the same nodes, types,
// constants and names, whether or not they share nodes.

#include "IR.h"

#include <cstdint>
#include <string>

namespace ptxjit::ir {

/// A byte string that is equal for exactly the structurally equal trees.
std::string structural_key(const Expr &e);
std::string structural_key(const Stmt &s);

/// Whether the structural keys would be equal, found by comparing the trees without making keys.
bool equal(const Expr &a, const Expr &b);
bool equal(const Stmt &a, const Stmt &b);
/// Equal for structurally equal trees; made without a key string.
uint64_t structural_hash(const Expr &e);
uint64_t structural_hash(const Stmt &s);

/// FNV-1a, for combining structural keys into cache keys.
uint64_t hash_bytes(const std::string &bytes, uint64_t seed = 14695981039346656037ull);

} // namespace ptxjit::ir

#endif
