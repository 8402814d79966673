#ifndef PTXJIT_IR_MONOTONIC_H
#define PTXJIT_IR_MONOTONIC_H

#include "IR.h"

#include <string>

namespace ptxjit::ir {

/// How an integer expression moves as one variable counts up, from its structure: sums,
/// differences, products and quotients by constants, min, max, and selects on conditions that do
/// not read the variable (signed arithmetic of 32 bits or more does not overflow, as the language
/// requires). Unknown where it cannot tell.
enum class Monotonic { Constant, Increasing, Decreasing, Unknown };

Monotonic is_monotonic(const Expr &e, const std::string &var);

} // namespace ptxjit::ir

#endif
