#include "ptxjit/Float16.h"

#include <cmath>

namespace ptxjit {

namespace {

// A binary floating-point format of 16 bits: 1 sign bit, then the exponent, then the mantissa.
struct Format16 {
  int exponentBits, mantissaBits;
  uint16_t quietNaN; // positive
  int bias() const { return (1 << (exponentBits - 1)) - 1; }
  uint16_t infinity() const { return static_cast<uint16_t>(((1 << exponentBits) - 1) << mantissaBits); }
};

constexpr Format16 Binary16{5, 10, 0x7e00}, BFloat16{8, 7, 0x7fc0};

uint16_t roundToFormat(double value, const Format16 &f) {
  const uint16_t sign = std::signbit(value) ? 0x8000 : 0;
  if (std::isnan(value))
    return sign | f.quietNaN;
  const double magnitude = std::fabs(value);
  if (std::isinf(magnitude))
    return sign | f.infinity();
  if (magnitude == 0.0)
    return sign;
  int exponent = 0;
  std::frexp(magnitude, &exponent);
  // magnitude = 1.m * 2^(exponent - 1); below the smallest normal, the quantum stays that of
  // the subnormals.
  const int unbiased = std::max(exponent - 1, 1 - f.bias());
  const double steps = std::ldexp(magnitude, f.mantissaBits - unbiased); // exact: a power-of-two scale
  const auto rounded = static_cast<uint64_t>(std::nearbyint(steps));     // ties to even
  // A normal value's leading 1 lands on the lowest exponent bit, so adding the biased exponent
  // less one encodes it, and a carry out of the mantissa moves into the exponent as it should.
  const uint64_t bits = rounded < (uint64_t(1) << f.mantissaBits)
                            ? rounded
                            : (uint64_t(unbiased + f.bias() - 1) << f.mantissaBits) + rounded;
  return bits >= f.infinity() ? sign | f.infinity() : sign | static_cast<uint16_t>(bits);
}

double formatToDouble(uint16_t bits, const Format16 &f) {
  const bool negative = bits & 0x8000;
  const int exponentField = (bits >> f.mantissaBits) & ((1 << f.exponentBits) - 1);
  const int mantissa = bits & ((1 << f.mantissaBits) - 1);
  double magnitude;
  if (exponentField == (1 << f.exponentBits) - 1)
    magnitude = mantissa ? std::nan("") : INFINITY;
  else if (exponentField == 0)
    magnitude = std::ldexp(mantissa, 1 - f.bias() - f.mantissaBits);
  else
    magnitude = std::ldexp(mantissa + (1 << f.mantissaBits), exponentField - f.bias() - f.mantissaBits);
  return negative ? -magnitude : magnitude;
}

} // namespace

float16_t::float16_t(double value) : bits(roundToFormat(value, Binary16)) {}
double float16_t::to_double() const { return formatToDouble(bits, Binary16); }

bfloat16_t::bfloat16_t(double value) : bits(roundToFormat(value, BFloat16)) {}
double bfloat16_t::to_double() const { return formatToDouble(bits, BFloat16); }

} // namespace ptxjit
