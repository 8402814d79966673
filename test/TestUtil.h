#ifndef PTXJIT_TEST_TESTUTIL_H
#define PTXJIT_TEST_TESTUTIL_H

// Fresh random inputs (the seed is printed on failure) and comparisons against references.

#include "ptxjit/Buffer.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <spawn.h>
#include <string>
#include <sys/wait.h>
#include <type_traits>
#include <vector>

extern char **environ;

namespace ptxjit::test {

inline uint32_t fresh_seed() {
  static std::random_device device;
  return device();
}

template <typename T> void fill_random(const Buffer<T> &b, uint32_t seed, double lo = -1.0, double hi = 1.0) {
  std::mt19937 rng(seed);
  b.for_each_element([&](const std::vector<int> &c) {
    if constexpr (std::is_floating_point_v<T>)
      b.at(c) = static_cast<T>(std::uniform_real_distribution<double>(lo, hi)(rng));
    else
      b.at(c) = static_cast<T>(std::uniform_int_distribution<int64_t>(static_cast<int64_t>(lo), static_cast<int64_t>(hi))(rng));
  });
}

/// Checks every element of `actual` against reference(coords): floats within a relative
/// `tolerance`, integers within `integerTolerance` (nonzero only where a float computed with FMA
/// contraction is truncated to an integer, so the last bit can move the result by one).
template <typename T, typename F>
void check_against(const Buffer<T> &actual, F reference, double tolerance = 1e-5, double integerTolerance = 0) {
  int mismatches = 0;
  actual.for_each_element([&](const std::vector<int> &c) {
    double expected = static_cast<double>(reference(c));
    double got = static_cast<double>(actual.at(c));
    bool ok = std::is_floating_point_v<T> ? std::fabs(got - expected) <= tolerance * std::max(1.0, std::fabs(expected))
                                          : std::fabs(got - expected) <= integerTolerance;
    if (!ok && ++mismatches <= 5) {
      std::string where;
      for (int v : c)
        where += (where.empty() ? "" : ", ") + std::to_string(v);
      FAIL_CHECK("at (" << where << "): expected " << expected << ", got " << got);
    }
  });
  CHECK(mismatches == 0);
}

/// Starts the hidden test case `name` in a fresh process of this executable, with `environment`
/// (NAME=value entries) in place of this process's entries of those names. `-w NoTests` makes
/// the child fail if the name stops matching.
inline pid_t spawn_test(const char *name, const std::vector<std::string> &environment = {}) {
  std::vector<std::string> names; // "NAME=" of each entry of `environment`
  for (const std::string &entry : environment) {
    REQUIRE(entry.find('=') != std::string::npos);
    names.push_back(entry.substr(0, entry.find('=') + 1));
  }
  std::vector<std::string> entries;
  for (char **e = environ; *e; ++e) {
    const std::string entry = *e;
    if (std::none_of(names.begin(), names.end(), [&](const std::string &n) { return entry.rfind(n, 0) == 0; }))
      entries.push_back(entry);
  }
  entries.insert(entries.end(), environment.begin(), environment.end());
  std::vector<char *> envp;
  for (std::string &e : entries)
    envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<char *> argv = {const_cast<char *>("ptxjit_tests"), const_cast<char *>("-w"),
                              const_cast<char *>("NoTests"), const_cast<char *>(name), nullptr};
  pid_t child = 0;
  REQUIRE(posix_spawn(&child, "/proc/self/exe", nullptr, nullptr, argv.data(), envp.data()) == 0);
  return child;
}

/// Waits for a process of spawn_test and checks that its test passed.
inline void require_passed(pid_t child) {
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

/// Runs the hidden test case `name` in a fresh process of this executable and checks that it
/// passed. Tests about process-wide state (loaded libraries, contexts) use it, so that what
/// other tests did in this process can neither hide nor fake the result.
inline void run_in_child_process(const char *name) { require_passed(spawn_test(name)); }

} // namespace ptxjit::test

#endif
