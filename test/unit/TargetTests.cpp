#include "TestUtil.h"
#include "ptxjit/Target.h"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <cstring>
#include <link.h>
#include <random>
#include <vector>

using namespace ptxjit;
using Feature = Target::Feature;

namespace {

std::string hostPrefix() {
  Target host = get_host_target();
  return std::string(Target::arch_name(host.arch())) + "-" + std::to_string(host.bits()) + "-" +
         std::string(Target::os_name(host.os()));
}

bool isLoaded(const char *soname) {
  struct Query {
    const char *Name;
    bool Found;
  } query{soname, false};
  dl_iterate_phdr(
      [](dl_phdr_info *info, size_t, void *data) {
        auto *q = static_cast<Query *>(data);
        if (info->dlpi_name && std::strstr(info->dlpi_name, q->Name))
          q->Found = true;
        return 0;
      },
      &query);
  return query.Found;
}

const std::vector<std::string> EveryForm = {
    "host", "host-cuda", "host-cuda-cuda_capability_80", "host-cuda_capability_90a",
    "x86-64-linux", "x86-64-linux-cuda-cuda_capability_80", "arm-64-linux-cuda-debug-no_asserts",
    "x86-64-linux-cuda-cuda_capability_host-strict_float"};

} // namespace

TEST_CASE("Valid target strings parse to their canonical form", "[unit][target]") {
  const std::string host = hostPrefix();
  const std::vector<std::pair<std::string, std::string>> table = {
      {"host", host},
      {"host-cuda", host + "-cuda-cuda_capability_host"},
      {"host-cuda-cuda_capability_host", host + "-cuda-cuda_capability_host"},
      {"x86-64-linux", "x86-64-linux"},
      {"x86-32-windows", "x86-32-windows"},
      {"arm-64-android", "arm-64-android"},
      {"riscv-64-linux-debug", "riscv-64-linux-debug"},
      {"powerpc-64-linux", "powerpc-64-linux"},
      {"arm-64-osx-no_asserts-debug", "arm-64-osx-debug-no_asserts"},
      {"x86-64-linux-cuda-cuda_capability_80", "x86-64-linux-cuda-cuda_capability_80"},
      {"x86-64-linux-cuda_capability_80-cuda", "x86-64-linux-cuda-cuda_capability_80"},
      {"x86-64-linux-cuda_capability_86", "x86-64-linux-cuda-cuda_capability_86"},
      {"x86-64-linux-strict_float-cuda-cuda_capability_90a",
       "x86-64-linux-cuda-cuda_capability_90a-strict_float"},
      {"x86-64-linux-cuda-cuda_capability_120", "x86-64-linux-cuda-cuda_capability_120"},
      {"x86-64-linux-cuda-cuda_capability_50", "x86-64-linux-cuda-cuda_capability_50"},
      {"host-cuda_graphs", host + "-cuda-cuda_capability_host-cuda_graphs"},
      {"x86-64-linux-cuda_graphs-cuda_capability_90", "x86-64-linux-cuda-cuda_capability_90-cuda_graphs"},
  };
  for (const auto &[spelling, canonical] : table) {
    INFO(spelling);
    Target t(spelling);
    CHECK(t.to_string() == canonical);
    CHECK(Target(t.to_string()) == t);
  }
}

TEST_CASE("Target properties and capability helpers", "[unit][target]") {
  Target t("x86-64-linux-cuda-cuda_capability_86-debug");
  CHECK(t.arch() == Target::Arch::X86);
  CHECK(t.bits() == 64);
  CHECK(t.os() == Target::OS::Linux);
  CHECK(t.has_feature(Feature::CUDA));
  CHECK(t.has_feature(Feature::Debug));
  CHECK_FALSE(t.has_feature(Feature::StrictFloat));
  CHECK(t.cuda_capability() == 86);

  CHECK(Target("host-cuda").cuda_capability() == 0);
  CHECK(Target("host").cuda_capability() == 0);
  CHECK(Target("host-cuda_capability_90a").cuda_capability() == 90);

  SECTION("with_feature keeps one capability and implies cuda") {
    Target u = Target("host").with_feature(Feature::CUDACapability80);
    CHECK(u.has_feature(Feature::CUDA));
    CHECK(u.cuda_capability() == 80);
    Target v = u.with_feature(Feature::CUDACapability90);
    CHECK(v.cuda_capability() == 90);
    CHECK_FALSE(v.has_feature(Feature::CUDACapability80));
    CHECK(Target("host").with_feature(Feature::CUDA) == Target("host-cuda"));
    CHECK(Target("host").with_feature(Feature::CUDAGraphs) == Target("host-cuda-cuda_graphs"));
  }
  SECTION("without_feature keeps cuda and its capability together") {
    CHECK(t.without_feature(Feature::CUDA) == Target("x86-64-linux-debug"));
    CHECK(t.without_feature(Feature::CUDACapability86) == Target("x86-64-linux-cuda-debug"));
    CHECK(Target("host-cuda").without_feature(Feature::CUDACapabilityHost) == Target("host"));
    CHECK(t.without_feature(Feature::StrictFloat) == t);
    CHECK(t.without_feature(Feature::Debug) == Target("x86-64-linux-cuda-cuda_capability_86"));
    CHECK(Target("x86-64-linux-cuda-cuda_graphs").without_feature(Feature::CUDA) == Target("x86-64-linux"));
  }
}

TEST_CASE("resolve_cuda_capability rounds down to a supported capability", "[unit][target]") {
  Target lazy("host-cuda");
  const std::vector<std::tuple<int, int, int>> table = {
      {5, 0, 50}, {5, 2, 50}, {6, 0, 60}, {6, 1, 61}, {6, 2, 61}, {7, 0, 70},  {7, 2, 70},
      {7, 5, 75}, {8, 0, 80}, {8, 6, 86}, {8, 7, 86}, {8, 9, 89}, {9, 0, 90},  {10, 0, 100},
      {10, 3, 100}, {11, 0, 100}, {12, 0, 120}, {12, 1, 120}};
  for (const auto &[major, minor, expected] : table) {
    INFO(major << "." << minor);
    Target resolved = lazy.resolve_cuda_capability(major, minor);
    CHECK(resolved.cuda_capability() == expected);
    CHECK_FALSE(resolved.has_feature(Feature::CUDACapabilityHost));
    CHECK(resolved.has_feature(Feature::CUDA));
  }
  CHECK_FALSE(lazy.resolve_cuda_capability(9, 0).has_feature(Feature::CUDACapability90a));
  CHECK_THROWS_WITH(lazy.resolve_cuda_capability(3, 5), Catch::Contains("3.5") &&
                                                            Catch::Contains("oldest supported"));
  CHECK_THROWS_AS(lazy.resolve_cuda_capability(8, 12), TargetError);
}

TEST_CASE("Malformed target strings name the token, its position and a fix", "[unit][target]") {
  struct Case {
    std::string Spelling;
    std::string Token;
    size_t Position;
    std::vector<std::string> MessageParts;
  };
  const std::vector<Case> table = {
      {"", "", 0, {"empty string"}},
      {"x86-64-linux-cuda-cuda_capabilty_80", "cuda_capabilty_80", 18,
       {"position 18", "did you mean cuda_capability_80?"}},
      {"host-cuda-cuda_capability_81", "cuda_capability_81", 10, {"did you mean cuda_capability_80?"}},
      {"host-cdua", "cdua", 5, {"'cdua'", "did you mean cuda?"}},
      {"hots-cuda", "hots", 0, {"did you mean host?"}},
      {"x68-64-linux", "x68", 0, {"did you mean x86?"}},
      {"x86-33-linux", "33", 4, {"bit width", "did you mean 32?"}},
      {"x86-64-linx", "linx", 7, {"operating system", "did you mean linux?"}},
      {"x86-64", "", 6, {"missing operating system"}},
      {"x86", "", 3, {"missing bit width"}},
      {"linux-x86-64", "linux", 0, {"found operating system 'linux'", "arch-bits-os"}},
      {"x86-linux-64", "linux", 4, {"found operating system 'linux'"}},
      {"x86-64-cuda-linux", "cuda", 7, {"found feature 'cuda'"}},
      {"host-cuda-x86", "x86", 10, {"found architecture 'x86'"}},
      {"host-cuda-", "", 10, {"empty token at position 10"}},
      {"host--cuda", "", 5, {"empty token"}},
      {"-host", "", 0, {"empty token"}},
      {"host-cuda-cuda", "cuda", 10, {"duplicate feature 'cuda'", "first given at position 5"}},
      {"host-cuda_capability_80-cuda_capability_86", "cuda_capability_86", 24,
       {"conflicting feature", "'cuda_capability_80' was given at position 5"}},
      {"host-cuda_capability_host-cuda_capability_90", "cuda_capability_90", 26, {"conflicting feature"}},
      {"HOST", "HOST", 0, {"did you mean host?"}},
  };
  for (const Case &c : table) {
    INFO("spelling: \"" << c.Spelling << "\"");
    try {
      Target t(c.Spelling);
      FAIL("parsed as " << t.to_string());
    } catch (const TargetError &e) {
      INFO("message: " << e.what());
      CHECK(e.token() == c.Token);
      CHECK(e.position() == c.Position);
      CHECK_THAT(e.what(), Catch::Contains("\"" + c.Spelling + "\""));
      for (const std::string &part : c.MessageParts)
        CHECK_THAT(e.what(), Catch::Contains(part));
    }
  }
}

TEST_CASE("Random feature sets round-trip through their spelling", "[unit][target]") {
  std::mt19937 rng(std::random_device{}());
  const size_t numFeatures = static_cast<size_t>(Feature::FeatureEnd);
  for (int iteration = 0; iteration < 2000; ++iteration) {
    Target t(static_cast<Target::Arch>(rng() % 4), rng() % 2 ? 64 : 32, static_cast<Target::OS>(rng() % 4));
    std::vector<std::string> names;
    for (size_t i = 0; i < numFeatures; ++i)
      if (rng() % 3 == 0)
        t = t.with_feature(static_cast<Feature>(i));
    for (size_t i = 0; i < numFeatures; ++i)
      if (t.has_feature(static_cast<Feature>(i)))
        names.emplace_back(Target::feature_name(static_cast<Feature>(i)));
    INFO(t.to_string());
    REQUIRE(Target(t.to_string()) == t);
    // Any feature order spells the same target.
    std::shuffle(names.begin(), names.end(), rng);
    std::string shuffled = std::string(Target::arch_name(t.arch())) + "-" + std::to_string(t.bits()) + "-" +
                           std::string(Target::os_name(t.os()));
    for (const std::string &name : names)
      shuffled += "-" + name;
    INFO(shuffled);
    REQUIRE(Target(shuffled) == t);
  }
}

TEST_CASE("PTXJIT_TARGET selects the JIT target", "[unit][target]") {
  const char *previous = std::getenv("PTXJIT_TARGET");
  std::string saved = previous ? previous : "";
  unsetenv("PTXJIT_TARGET");
  CHECK(get_jit_target_from_environment() == get_host_target());
  setenv("PTXJIT_TARGET", "host-cuda-debug", 1);
  CHECK(get_jit_target_from_environment() == Target("host-cuda-debug"));
  setenv("PTXJIT_TARGET", "host-cuda-bogus", 1);
  CHECK_THROWS_WITH(get_jit_target_from_environment(), Catch::StartsWith("PTXJIT_TARGET: ") &&
                                                           Catch::Contains("'bogus'"));
  if (previous)
    setenv("PTXJIT_TARGET", saved.c_str(), 1);
  else
    unsetenv("PTXJIT_TARGET");
}

// Runs only when named, in a fresh process (see run_in_child_process).
TEST_CASE("Target parsing child process", "[.]") {
  REQUIRE_FALSE(isLoaded("libcuda.so"));
  for (const std::string &spelling : EveryForm) {
    Target t(spelling);
    (void)Target(t.to_string()).cuda_capability();
    (void)t.resolve_cuda_capability(9, 0);
  }
  setenv("PTXJIT_TARGET", "host-cuda", 1);
  (void)get_jit_target_from_environment();
  REQUIRE_FALSE(isLoaded("libcuda.so"));
}

TEST_CASE("Parsing targets never loads the CUDA driver", "[unit][target]") {
  ptxjit::test::run_in_child_process("Target parsing child process");
}
