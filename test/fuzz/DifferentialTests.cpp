// The differential tester on a fixed set of seeds: random pipelines with random schedules against
// the reference evaluator. `ptxjit_fuzz --minutes N` runs fresh seeds for as long as asked.

#include "TestUtil.h"
#include "fuzz/RandomPipeline.h"
#include "ptxjit.h"

#include <algorithm>
#include <cstdlib>

using namespace ptxjit::fuzz;

namespace {

void runSeeds(uint64_t first, int wanted, bool gpu, const std::string &target) {
  int ran = 0, discarded = 0;
  for (uint64_t seed = first; ran < wanted; ++seed) {
    PipelineDesc p = random_pipeline(seed, gpu);
    Result r = run_pipeline(p, target);
    if (r.outcome == Outcome::Discarded) {
      ++discarded;
      continue;
    }
    ++ran;
    if (r.outcome != Outcome::Pass) {
      PipelineDesc reduced = reduce_failure(p, target, r.outcome);
      FAIL_CHECK((r.outcome == Outcome::Wrong ? "wrong values" : "error") << " for seed " << seed << ": "
                                                                           << r.message << "\nreduced:\n"
                                                                           << to_string(reduced));
    }
  }
  INFO(ran << " pipelines compared, " << discarded << " discarded as undefined or inexact");
  CHECK(ran == wanted);
}

} // namespace

// The compiler regroups signed 32-bit sums (`(a + 5) + r` as `(a + r) + 5`), as Halide's simplifier
// does: a description is defined only when every regrouping stays in range (seed 680003243 had
// ((f0 << 30) + 5) + r, right as written for f0 = 22, wrong once regrouped).
TEST_CASE("The reference discards signed sums that overflow when regrouped", "[cpu][fuzz]") {
  auto constant = [](int64_t v) {
    Node n;
    n.value = v;
    return n;
  };
  auto binary = [](Node::Kind kind, Node a, Node b) {
    Node n;
    n.kind = kind;
    n.children = {std::move(a), std::move(b)};
    return n;
  };
  Node x;
  x.kind = Node::Coord;
  auto pipeline = [&](int shift) {
    PipelineDesc p;
    p.inputMin = {0};
    p.inputExtent = {1};
    p.outputMin = {0};
    p.outputExtent = {4};
    FuncDesc f;
    Node shifted = binary(Node::Shl, constant(-1), constant(shift));
    f.value = binary(Node::Add, binary(Node::Add, shifted, constant(5)), binary(Node::Sub, x, constant(4)));
    f.level = 0;
    p.funcs = {f};
    return p;
  };
  CHECK(run_pipeline(pipeline(29), "host").outcome == Outcome::Pass);
  CHECK(run_pipeline(pipeline(31), "host").outcome == Outcome::Discarded);
}

// PTXJIT_FUZZ_CASES sets how many (the sanitizer presets run fewer: they are ten times slower).
TEST_CASE("Random pipelines match the reference on the host", "[cpu][fuzz]") {
  const char *cases = std::getenv("PTXJIT_FUZZ_CASES");
  runSeeds(1, cases ? std::max(1, std::atoi(cases)) : 300, false, "host");
}

TEST_CASE("Random GPU pipelines compile to PTX", "[ptx][fuzz]") {
  const std::string target = "x86-64-linux-cuda-cuda_capability_80";
  for (uint64_t seed = 1; seed <= 25; ++seed) {
    std::string error = compile_to_ptx(random_pipeline(seed, true), target);
    if (!error.empty())
      FAIL_CHECK("seed " << seed << ": " << error << "\n" << to_string(random_pipeline(seed, true)));
  }
}

TEST_CASE("Random GPU pipelines match the reference on the device", "[gpu][fuzz]") {
  std::string why;
  if (!ptxjit::host_supports_target_device(ptxjit::Target("host-cuda"), &why)) {
    WARN("[gpu] test skipped: " << why);
    return;
  }
  runSeeds(1, 150, true, "host-cuda");
}
