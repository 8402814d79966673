#ifndef PTXJIT_IR_CONSTANTS_H
#define PTXJIT_IR_CONSTANTS_H

// Making and recognizing constants of any type, scalar or broadcast.

#include "IR.h"

#include <optional>

namespace ptxjit::ir {

Expr make_const(Type t, int64_t value);
Expr make_const(Type t, double value);
Expr make_zero(Type t);
Expr make_one(Type t);
Expr make_bool(bool value, int lanes = 1);
/// The largest and smallest values of a type: infinities for floats, true and false for bool.
Expr make_highest(Type t);
Expr make_lowest(Type t);

/// The value of an integer constant (signed or unsigned fitting int64), looking through Broadcast.
std::optional<int64_t> as_const_int(const Expr &e);
std::optional<double> as_const_float(const Expr &e);
bool is_const(const Expr &e);
bool is_const_zero(const Expr &e);
bool is_const_one(const Expr &e);

/// The value of a scalar bitwise, shift or bit-counting intrinsic (Call::BitwiseAnd ...
/// Call::CountTrailingZeros) of integer type `t` on constant operands, with the language's
/// semantics (a negative signed amount shifts the other way; amounts from the width up shift
/// every bit out), or nothing where `name` is not one of them. The one-operand intrinsics
/// (Call::BitwiseNot and the counts) ignore `b`.
std::optional<Expr> fold_bitwise(const std::string &name, Type t, int64_t a, int64_t b);

} // namespace ptxjit::ir

#endif
