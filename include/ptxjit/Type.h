#ifndef PTXJIT_TYPE_H
#define PTXJIT_TYPE_H

// Scalar and vector types of pipeline values. Booleans are UInt(1). Floats are Float(16) (IEEE
// binary16), Float(32), Float(64) and BFloat(16); arithmetic on the 16-bit ones rounds to the type
// after each operation (with strict_float; otherwise a * b + c may round once, as for float32).

#include "ptxjit/Float16.h"

#include <cstdint>
#include <string>
#include <type_traits>

#pragma GCC visibility push(default)
namespace ptxjit {

struct Type {
  enum Code : uint8_t { Int, UInt, Float, BFloat }; // the values of ptxjit_type_code_t
  Code code = Int;
  uint8_t bits = 32;
  uint16_t lanes = 1;

  constexpr Type() = default;
  constexpr Type(Code c, int b, int l = 1)
      : code(c), bits(static_cast<uint8_t>(b)), lanes(static_cast<uint16_t>(l)) {}

  constexpr bool is_int() const { return code == Int; }
  constexpr bool is_uint() const { return code == UInt && bits != 1; }
  constexpr bool is_bool() const { return code == UInt && bits == 1; }
  constexpr bool is_float() const { return code == Float || code == BFloat; }
  constexpr bool is_bfloat() const { return code == BFloat; }
  constexpr bool is_scalar() const { return lanes == 1; }
  constexpr bool is_vector() const { return lanes != 1; }
  constexpr int bytes() const { return (bits + 7) / 8; }
  /// Whether ptxjit has the type: int and uint of 8, 16, 32 or 64 bits, bool, float of 16, 32 or
  /// 64 bits, bfloat of 16.
  constexpr bool is_supported() const {
    switch (code) {
    case Int: return bits == 8 || bits == 16 || bits == 32 || bits == 64;
    case UInt: return bits == 1 || bits == 8 || bits == 16 || bits == 32 || bits == 64;
    case Float: return bits == 16 || bits == 32 || bits == 64;
    case BFloat: return bits == 16;
    }
    return false;
  }
  constexpr Type element_of() const { return Type(code, bits, 1); }
  constexpr Type with_lanes(int l) const { return Type(code, bits, l); }
  constexpr Type with_code(Code c) const { return Type(c, bits, lanes); }
  constexpr Type with_bits(int b) const { return Type(code, b, lanes); }

  /// Whether every value of this type is representable in `other`.
  bool can_represent(Type other) const;
  int64_t min_int() const;
  int64_t max_int() const;
  uint64_t max_uint() const;

  friend constexpr bool operator==(Type a, Type b) {
    return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
  }
  friend constexpr bool operator!=(Type a, Type b) { return !(a == b); }
};

constexpr Type Int(int bits, int lanes = 1) { return Type(Type::Int, bits, lanes); }
constexpr Type UInt(int bits, int lanes = 1) { return Type(Type::UInt, bits, lanes); }
constexpr Type Float(int bits, int lanes = 1) { return Type(Type::Float, bits, lanes); }
constexpr Type BFloat(int bits, int lanes = 1) { return Type(Type::BFloat, bits, lanes); }
constexpr Type Bool(int lanes = 1) { return UInt(1, lanes); }

/// e.g. "int32", "float32x8", "bfloat16", "bool".
std::string to_string(Type t);

template <typename T> constexpr Type type_of() {
  if constexpr (std::is_same_v<T, bool>)
    return Bool();
  else if constexpr (std::is_same_v<T, float16_t>)
    return Float(16);
  else if constexpr (std::is_same_v<T, bfloat16_t>)
    return BFloat(16);
  else if constexpr (std::is_floating_point_v<T>)
    return Float(8 * sizeof(T));
  else if constexpr (std::is_signed_v<T>)
    return Int(8 * sizeof(T));
  else
    return UInt(8 * sizeof(T));
}

} // namespace ptxjit

#pragma GCC visibility pop

#endif
