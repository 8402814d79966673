#ifndef PTXJIT_FLOAT16_H
#define PTXJIT_FLOAT16_H

// 16-bit floating-point element types for buffers and Params: IEEE binary16 (Float(16)) and
// bfloat16 (BFloat(16), the upper half of a float32). Conversions from double and float round to
// the nearest value, ties to even, as the generated code does. Compare values through `bits`
// (or as doubles, where +0 equals -0 and NaN equals nothing).

#include <cstdint>

#pragma GCC visibility push(default)
namespace ptxjit {

struct float16_t {
  uint16_t bits = 0;

  constexpr float16_t() = default;
  explicit float16_t(double value);
  static constexpr float16_t from_bits(uint16_t b) {
    float16_t h;
    h.bits = b;
    return h;
  }
  /// Exact: every float16 value is a double.
  double to_double() const;
  explicit operator double() const { return to_double(); }
  explicit operator float() const { return static_cast<float>(to_double()); }
};

struct bfloat16_t {
  uint16_t bits = 0;

  constexpr bfloat16_t() = default;
  explicit bfloat16_t(double value);
  static constexpr bfloat16_t from_bits(uint16_t b) {
    bfloat16_t h;
    h.bits = b;
    return h;
  }
  double to_double() const;
  explicit operator double() const { return to_double(); }
  explicit operator float() const { return static_cast<float>(to_double()); }
};

} // namespace ptxjit
#pragma GCC visibility pop

#endif
