#ifndef PTXJIT_IROPERATOR_H
#define PTXJIT_IROPERATOR_H

// Operators and functions on Expr. Mixed types follow C++-like promotion: float beats integer,
// wider beats narrower, signed and unsigned of equal width meet as signed; an int or float
// literal takes the type of the other operand (a CompileError when it does not fit).
// Integer division is Euclidean: % is never negative (for positive divisors, / rounds down);
// dividing by zero gives zero.

#include "ptxjit/Expr.h"

#pragma GCC visibility push(default)
namespace ptxjit {

Expr operator+(Expr a, Expr b);
Expr operator-(Expr a, Expr b);
Expr operator*(Expr a, Expr b);
Expr operator/(Expr a, Expr b);
Expr operator%(Expr a, Expr b);
Expr operator-(Expr a);
Expr operator==(Expr a, Expr b);
Expr operator!=(Expr a, Expr b);
Expr operator<(Expr a, Expr b);
Expr operator<=(Expr a, Expr b);
Expr operator>(Expr a, Expr b);
Expr operator>=(Expr a, Expr b);
Expr operator&&(Expr a, Expr b);
Expr operator||(Expr a, Expr b);
Expr operator!(Expr a);

// Bitwise operators on integers (and booleans), on the operands' matched type. A shift by a
// negative amount shifts the other way; shifting by the type's width or more gives 0, or -1 for
// a negative signed value shifted right (all bits shifted out, as if one at a time).
Expr operator&(Expr a, Expr b);
Expr operator|(Expr a, Expr b);
Expr operator^(Expr a, Expr b);
Expr operator~(Expr a);
Expr operator<<(Expr a, Expr b);
Expr operator>>(Expr a, Expr b);

Expr min(Expr a, Expr b);
Expr max(Expr a, Expr b);
Expr clamp(Expr value, Expr lo, Expr hi);
Expr abs(Expr a);
Expr select(Expr condition, Expr true_value, Expr false_value);

Expr cast(Type t, Expr value);
template <typename T> Expr cast(Expr value) { return cast(type_of<T>(), std::move(value)); }

// Math on floats; integer arguments are converted to float32.
Expr sqrt(Expr x);
Expr exp(Expr x);
Expr log(Expr x);
Expr pow(Expr x, Expr y);
Expr sin(Expr x);
Expr cos(Expr x);
Expr tanh(Expr x);
Expr floor(Expr x);
Expr ceil(Expr x);
Expr round(Expr x);

} // namespace ptxjit

#pragma GCC visibility pop

#endif
