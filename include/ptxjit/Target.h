#ifndef PTXJIT_TARGET_H
#define PTXJIT_TARGET_H

// A compilation target: architecture, word size, operating system and features.
// Pure value type: parsing and printing never load LLVM or the CUDA driver.

#include <bitset>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

#pragma GCC visibility push(default)
namespace ptxjit {

/// A malformed target string. `token()` and `position()` locate the offending part.
class TargetError : public std::invalid_argument {
public:
  TargetError(const std::string &message, std::string token, size_t position)
      : std::invalid_argument(message), Token(std::move(token)), Position(position) {}
  const std::string &token() const { return Token; }
  /// Offset of the token in the string, in characters.
  size_t position() const { return Position; }

private:
  std::string Token;
  size_t Position;
};

class Target {
public:
  enum class Arch { X86, ARM, RISCV, PowerPC };
  enum class OS { Linux, Windows, OSX, Android };
  /// In canonical printing order. Capability features are mutually exclusive.
  enum class Feature {
    CUDA,
    CUDACapability50,
    CUDACapability60,
    CUDACapability61,
    CUDACapability70,
    CUDACapability75,
    CUDACapability80,
    CUDACapability86,
    CUDACapability89,
    CUDACapability90,
    CUDACapability90a,
    CUDACapability100,
    CUDACapability120,
    /// Resolved from the device of the acquired context when device code is generated.
    CUDACapabilityHost,
    /// A realize runs its kernels as a CUDA graph, built once per context and buffer shapes and
    /// updated in place for new pointers and scalars (see the README).
    CUDAGraphs,
    Debug,
    StrictFloat,
    NoAsserts,
    FeatureEnd
  };

  /// The host target with no features.
  Target();
  /// Parses `arch-bits-os(-feature)*` or `host(-feature)*`; throws TargetError.
  explicit Target(std::string_view spelling);
  Target(Arch arch, int bits, OS os);

  Arch arch() const { return TheArch; }
  int bits() const { return Bits; }
  OS os() const { return TheOS; }

  bool has_feature(Feature f) const { return Features.test(static_cast<size_t>(f)); }
  /// Adding a capability replaces any other capability and implies `cuda`.
  Target with_feature(Feature f) const;
  Target without_feature(Feature f) const;

  /// True when the target generates CUDA device code.
  bool has_gpu_feature() const { return has_feature(Feature::CUDA); }
  /// The capability as major*10+minor (90 for 90a); 0 while unresolved or without `cuda`.
  int cuda_capability() const;
  /// A copy with the capability set to the largest supported one not above major.minor.
  /// Throws TargetError when the device is older than the oldest supported capability.
  Target resolve_cuda_capability(int major, int minor) const;

  /// Canonical spelling: `arch-bits-os` then features in enum order.
  std::string to_string() const;

  static std::string_view feature_name(Feature f);
  static std::string_view arch_name(Arch a);
  static std::string_view os_name(OS os);

  friend bool operator==(const Target &a, const Target &b) {
    return a.TheArch == b.TheArch && a.Bits == b.Bits && a.TheOS == b.TheOS &&
           a.Features == b.Features;
  }
  friend bool operator!=(const Target &a, const Target &b) { return !(a == b); }

private:
  Arch TheArch;
  int Bits;
  OS TheOS;
  std::bitset<static_cast<size_t>(Feature::FeatureEnd)> Features;
};

/// The machine this process runs on, from compile-time facts (no queries, no side effects).
Target get_host_target();

/// `PTXJIT_TARGET` when set (a TargetError names the variable), otherwise `host`.
Target get_jit_target_from_environment();

} // namespace ptxjit

#pragma GCC visibility pop

#endif
