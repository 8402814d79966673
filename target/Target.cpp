#include "ptxjit/Target.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>
#include <optional>
#include <vector>

namespace ptxjit {
namespace {

using Feature = Target::Feature;

constexpr size_t NumFeatures = static_cast<size_t>(Feature::FeatureEnd);

constexpr std::array<std::string_view, NumFeatures> FeatureNames = {
    "cuda",
    "cuda_capability_50",
    "cuda_capability_60",
    "cuda_capability_61",
    "cuda_capability_70",
    "cuda_capability_75",
    "cuda_capability_80",
    "cuda_capability_86",
    "cuda_capability_89",
    "cuda_capability_90",
    "cuda_capability_90a",
    "cuda_capability_100",
    "cuda_capability_120",
    "cuda_capability_host",
    "cuda_graphs",
    "debug",
    "strict_float",
    "no_asserts",
};

struct CapabilityInfo {
  Feature TheFeature;
  int Version; // major*10+minor
};

// Ascending; 90a is arch-specific and never chosen when resolving from a device.
constexpr std::array<CapabilityInfo, 12> Capabilities = {{
    {Feature::CUDACapability50, 50},
    {Feature::CUDACapability60, 60},
    {Feature::CUDACapability61, 61},
    {Feature::CUDACapability70, 70},
    {Feature::CUDACapability75, 75},
    {Feature::CUDACapability80, 80},
    {Feature::CUDACapability86, 86},
    {Feature::CUDACapability89, 89},
    {Feature::CUDACapability90, 90},
    {Feature::CUDACapability90a, 90},
    {Feature::CUDACapability100, 100},
    {Feature::CUDACapability120, 120},
}};

constexpr std::array<std::string_view, 4> ArchNames = {"x86", "arm", "riscv", "powerpc"};
constexpr std::array<std::string_view, 4> OSNames = {"linux", "windows", "osx", "android"};
constexpr std::array<std::string_view, 2> BitsNames = {"32", "64"};

bool isCapability(Feature f) {
  return f == Feature::CUDACapabilityHost ||
         std::any_of(Capabilities.begin(), Capabilities.end(),
                     [f](const CapabilityInfo &c) { return c.TheFeature == f; });
}

template <typename Names> std::optional<size_t> indexOf(const Names &names, std::string_view s) {
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == s)
      return i;
  return std::nullopt;
}

size_t editDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j)
    row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1] ? 1 : 0)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

size_t commonPrefixLength(std::string_view a, std::string_view b) {
  size_t n = 0;
  while (n < a.size() && n < b.size() && a[n] == b[n])
    ++n;
  return n;
}

// The candidate nearest by case-insensitive edit distance; ties go to the longest shared prefix,
// so cuda_capability_81 suggests cuda_capability_80 rather than cuda_capability_61.
template <typename Names> std::string_view closest(const Names &names, std::string_view s) {
  std::string lower(s);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  std::string_view best;
  size_t bestDistance = 0, bestPrefix = 0;
  for (std::string_view candidate : names) {
    size_t d = editDistance(lower, candidate);
    size_t prefix = commonPrefixLength(lower, candidate);
    if (best.empty() || d < bestDistance || (d == bestDistance && prefix > bestPrefix)) {
      best = candidate;
      bestDistance = d;
      bestPrefix = prefix;
    }
  }
  return best;
}

struct Token {
  std::string_view Text;
  size_t Position;
};

std::vector<Token> splitOnDashes(std::string_view s) {
  std::vector<Token> tokens;
  size_t start = 0;
  while (true) {
    size_t dash = s.find('-', start);
    if (dash == std::string_view::npos) {
      tokens.push_back({s.substr(start), start});
      return tokens;
    }
    tokens.push_back({s.substr(start, dash - start), start});
    start = dash + 1;
  }
}

// Names what a token is when it is valid somewhere else in the grammar, for wrong-order errors.
std::string describeMisplaced(std::string_view token) {
  if (indexOf(ArchNames, token))
    return "architecture";
  if (indexOf(OSNames, token))
    return "operating system";
  if (indexOf(BitsNames, token))
    return "bit width";
  if (indexOf(FeatureNames, token))
    return "feature";
  if (token == "host")
    return "'host'";
  return "";
}

class Parser {
public:
  explicit Parser(std::string_view spelling) : Spelling(spelling) {}

  [[noreturn]] void fail(const Token &token, const std::string &what) const {
    throw TargetError("invalid target \"" + std::string(Spelling) + "\": " + what, std::string(token.Text),
                      token.Position);
  }

  [[noreturn]] void failEmpty(const Token &token) const {
    fail(token, "empty token at position " + std::to_string(token.Position) +
                    " (a leading, trailing or doubled '-')");
  }

  template <typename Names>
  [[noreturn]] void failExpected(const Token &token, std::string_view expected, const Names &names) const {
    if (token.Text.empty())
      failEmpty(token);
    std::string message = "expected " + std::string(expected) + " at position " +
                          std::to_string(token.Position) + ", found ";
    std::string misplaced = describeMisplaced(token.Text);
    if (!misplaced.empty())
      message += misplaced + " '" + std::string(token.Text) +
                 "' (targets are spelled arch-bits-os(-feature)* or host(-feature)*, e.g. x86-64-linux-cuda)";
    else
      message += "'" + std::string(token.Text) + "'; did you mean " + std::string(closest(names, token.Text)) + "?";
    fail(token, message);
  }

  Target parse() {
    if (Spelling.empty())
      fail({Spelling, 0}, "empty string; expected arch-bits-os(-feature)* or host(-feature)*, e.g. host-cuda");
    std::vector<Token> tokens = splitOnDashes(Spelling);
    Target result;
    size_t next = 0;
    if (tokens[0].Text == "host") {
      next = 1;
    } else {
      const Token &arch = tokens[0];
      auto archIndex = indexOf(ArchNames, arch.Text);
      if (!archIndex) {
        std::vector<std::string_view> archOrHost(ArchNames.begin(), ArchNames.end());
        archOrHost.push_back("host");
        failExpected(arch, "an architecture (x86, arm, riscv, powerpc) or 'host'", archOrHost);
      }
      if (tokens.size() < 2)
        fail({"", Spelling.size()}, "missing bit width (32 or 64) after '" + std::string(arch.Text) + "'");
      const Token &bits = tokens[1];
      if (!indexOf(BitsNames, bits.Text))
        failExpected(bits, "a bit width (32 or 64)", BitsNames);
      if (tokens.size() < 3)
        fail({"", Spelling.size()}, "missing operating system (linux, windows, osx, android) after '" +
                                        std::string(bits.Text) + "'");
      const Token &os = tokens[2];
      auto osIndex = indexOf(OSNames, os.Text);
      if (!osIndex)
        failExpected(os, "an operating system (linux, windows, osx, android)", OSNames);
      result = Target(static_cast<Target::Arch>(*archIndex), bits.Text == "64" ? 64 : 32,
                      static_cast<Target::OS>(*osIndex));
      next = 3;
    }

    std::array<std::optional<size_t>, NumFeatures> seenAt;
    std::optional<Token> capability;
    for (; next < tokens.size(); ++next) {
      const Token &token = tokens[next];
      auto index = indexOf(FeatureNames, token.Text);
      if (!index)
        failExpected(token, "a feature", FeatureNames);
      if (seenAt[*index])
        fail(token, "duplicate feature '" + std::string(token.Text) + "' at position " +
                        std::to_string(token.Position) + " (first given at position " +
                        std::to_string(*seenAt[*index]) + ")");
      seenAt[*index] = token.Position;
      auto feature = static_cast<Feature>(*index);
      if (isCapability(feature)) {
        if (capability)
          fail(token, "conflicting feature '" + std::string(token.Text) + "' at position " +
                          std::to_string(token.Position) + ": '" + std::string(capability->Text) +
                          "' was given at position " + std::to_string(capability->Position) +
                          "; a target has one CUDA capability");
        capability = token;
      }
      result = result.with_feature(feature);
    }
    return result;
  }

private:
  std::string_view Spelling;
};

} // namespace

Target::Target() : Target(get_host_target()) {}

Target::Target(std::string_view spelling) : Target(Parser(spelling).parse()) {}

Target::Target(Arch arch, int bits, OS os) : TheArch(arch), Bits(bits), TheOS(os) {
  if (bits != 32 && bits != 64)
    throw TargetError("invalid target: bit width " + std::to_string(bits) + "; expected 32 or 64",
                      std::to_string(bits), 0);
}

// Invariant: `cuda` is set exactly when one capability feature is set; `cuda_graphs` only with
// `cuda` (graphs hold kernels).
Target Target::with_feature(Feature f) const {
  Target t = *this;
  if (f == Feature::CUDAGraphs && !t.has_feature(Feature::CUDA))
    t = t.with_feature(Feature::CUDA);
  if (isCapability(f)) {
    for (size_t i = 0; i < NumFeatures; ++i)
      if (isCapability(static_cast<Feature>(i)))
        t.Features.reset(i);
    t.Features.set(static_cast<size_t>(Feature::CUDA));
  } else if (f == Feature::CUDA && !t.has_feature(Feature::CUDA)) {
    t.Features.set(static_cast<size_t>(Feature::CUDACapabilityHost));
  }
  t.Features.set(static_cast<size_t>(f));
  return t;
}

Target Target::without_feature(Feature f) const {
  Target t = *this;
  if (!t.has_feature(f))
    return t;
  t.Features.reset(static_cast<size_t>(f));
  if (f == Feature::CUDA) {
    for (size_t i = 0; i < NumFeatures; ++i)
      if (isCapability(static_cast<Feature>(i)))
        t.Features.reset(i);
    t.Features.reset(static_cast<size_t>(Feature::CUDAGraphs));
  } else if (isCapability(f) && f != Feature::CUDACapabilityHost) {
    t.Features.set(static_cast<size_t>(Feature::CUDACapabilityHost));
  } else if (f == Feature::CUDACapabilityHost) {
    t.Features.reset(static_cast<size_t>(Feature::CUDA));
    t.Features.reset(static_cast<size_t>(Feature::CUDAGraphs));
  }
  return t;
}

int Target::cuda_capability() const {
  for (const CapabilityInfo &c : Capabilities)
    if (has_feature(c.TheFeature))
      return c.Version;
  return 0;
}

Target Target::resolve_cuda_capability(int major, int minor) const {
  std::string version = std::to_string(major) + "." + std::to_string(minor);
  if (major < 0 || minor < 0 || minor > 9)
    throw TargetError("invalid CUDA compute capability " + version, version, 0);
  int wanted = major * 10 + minor;
  const CapabilityInfo *best = nullptr;
  for (const CapabilityInfo &c : Capabilities)
    if (c.Version <= wanted && c.TheFeature != Feature::CUDACapability90a)
      best = &c;
  if (!best)
    throw TargetError("CUDA compute capability " + version +
                          " is older than the oldest supported capability 5.0",
                      version, 0);
  return with_feature(best->TheFeature);
}

std::string Target::to_string() const {
  std::string s = std::string(arch_name(TheArch)) + "-" + std::to_string(Bits) + "-" +
                  std::string(os_name(TheOS));
  for (size_t i = 0; i < NumFeatures; ++i)
    if (Features.test(i))
      s += "-" + std::string(FeatureNames[i]);
  return s;
}

std::string_view Target::feature_name(Feature f) { return FeatureNames.at(static_cast<size_t>(f)); }
std::string_view Target::arch_name(Arch a) { return ArchNames.at(static_cast<size_t>(a)); }
std::string_view Target::os_name(OS os) { return OSNames.at(static_cast<size_t>(os)); }

Target get_host_target() {
#if defined(__x86_64__) || defined(_M_X64)
  constexpr Target::Arch arch = Target::Arch::X86;
  constexpr int bits = 64;
#elif defined(__i386__) || defined(_M_IX86)
  constexpr Target::Arch arch = Target::Arch::X86;
  constexpr int bits = 32;
#elif defined(__aarch64__)
  constexpr Target::Arch arch = Target::Arch::ARM;
  constexpr int bits = 64;
#elif defined(__arm__)
  constexpr Target::Arch arch = Target::Arch::ARM;
  constexpr int bits = 32;
#elif defined(__riscv)
  constexpr Target::Arch arch = Target::Arch::RISCV;
  constexpr int bits = __riscv_xlen;
#elif defined(__powerpc__)
  constexpr Target::Arch arch = Target::Arch::PowerPC;
  constexpr int bits = sizeof(void *) * 8;
#else
#error "ptxjit: unsupported host architecture"
#endif

#if defined(__ANDROID__)
  constexpr Target::OS os = Target::OS::Android;
#elif defined(__linux__)
  constexpr Target::OS os = Target::OS::Linux;
#elif defined(_WIN32)
  constexpr Target::OS os = Target::OS::Windows;
#elif defined(__APPLE__)
  constexpr Target::OS os = Target::OS::OSX;
#else
#error "ptxjit: unsupported host operating system"
#endif
  return Target(arch, bits, os);
}

Target get_jit_target_from_environment() {
  const char *value = std::getenv("PTXJIT_TARGET");
  if (!value || !*value)
    return get_host_target();
  try {
    return Target(value);
  } catch (const TargetError &e) {
    throw TargetError(std::string("PTXJIT_TARGET: ") + e.what(), e.token(), e.position());
  }
}

} // namespace ptxjit
