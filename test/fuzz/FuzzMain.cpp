// ptxjit_fuzz: the differential tester for as long as asked.
//   ptxjit_fuzz --minutes N [--gpu] [--first-seed S]
// runs fresh seeds in child processes (so that a crash or a hang is caught and pinned to its
// seed), prints each failure with its seed and a reduced reproduction, and a summary at the end.
//   ptxjit_fuzz --seeds A B [--gpu]  runs seeds [A, B) in this process (what the children do).
//   ptxjit_fuzz --ptx S [TARGET]  prints seed S's GPU variant and compiles it offline (default sm_80).
//   ptxjit_fuzz --cpu-of-gpu S  runs seed S's GPU variant on the host, GPU loops as parallel ones.

#include "RandomPipeline.h"
#include "TemporaryCompileCache.h"

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

using namespace ptxjit::fuzz;

namespace {

int runSeeds(uint64_t first, uint64_t last, bool gpu) {
  int pass = 0, discarded = 0, wrong = 0, refused = 0;
  for (uint64_t seed = first; seed < last; ++seed) {
    // On the GPU, even seeds run with the debug feature, which synchronizes after each kernel (a
    // fault names its kernel); odd seeds as CUDA graphs, realized twice (built, then replayed).
    const std::string target = !gpu ? "host" : seed % 2 ? "host-cuda-cuda_graphs" : "host-cuda-debug";
    PipelineDesc p = random_pipeline(seed, gpu);
    Result r = run_pipeline(p, target);
    switch (r.outcome) {
    case Outcome::Pass:
      ++pass;
      break;
    case Outcome::Discarded:
      ++discarded;
      break;
    default: {
      ++(r.outcome == Outcome::Wrong ? wrong : refused);
      PipelineDesc reduced = reduce_failure(p, target, r.outcome);
      std::printf("FAIL seed %llu (%s, %s): %s\n%s\n", static_cast<unsigned long long>(seed), target.c_str(),
                  r.outcome == Outcome::Wrong ? "wrong values" : "error", r.message.c_str(),
                  to_string(reduced).c_str());
    }
    }
    std::fflush(stdout);
  }
  std::printf("COUNTS %d %d %d %d\n", pass, discarded, wrong, refused);
  return 0;
}

struct ChildResult {
  bool finished = false; // exited normally
  bool timedOut = false;
  int signal = 0;
  std::string output;
};

ChildResult runChild(const char *self, uint64_t first, uint64_t last, bool gpu, int timeoutSeconds) {
  int pipeFds[2];
  if (pipe(pipeFds) != 0) {
    std::perror("pipe");
    std::exit(2);
  }
  pid_t pid = fork();
  if (pid == 0) {
    dup2(pipeFds[1], STDOUT_FILENO);
    close(pipeFds[0]);
    alarm(static_cast<unsigned>(timeoutSeconds));
    std::string a = std::to_string(first), b = std::to_string(last);
    std::vector<const char *> argv = {self, "--seeds", a.c_str(), b.c_str()};
    if (gpu)
      argv.push_back("--gpu");
    argv.push_back(nullptr);
    execv(self, const_cast<char **>(argv.data()));
    _exit(127);
  }
  close(pipeFds[1]);
  ChildResult result;
  char buffer[4096];
  ssize_t n;
  while ((n = read(pipeFds[0], buffer, sizeof buffer)) > 0)
    result.output.append(buffer, static_cast<size_t>(n));
  close(pipeFds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  result.finished = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  if (WIFSIGNALED(status)) {
    result.signal = WTERMSIG(status);
    result.timedOut = result.signal == SIGALRM;
  }
  return result;
}

} // namespace

int main(int argc, char **argv) {
  // One cache for the run: a key that two different pipelines shared would show as wrong values.
  ptxjit::test::TemporaryCompileCache cache;
  double minutes = 1;
  bool gpu = false;
  uint64_t firstSeed = static_cast<uint64_t>(std::chrono::system_clock::now().time_since_epoch().count()) % 1000000007ull * 1000;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--seeds" && i + 2 < argc) {
      for (int j = i + 3; j < argc; ++j)
        gpu = gpu || std::strcmp(argv[j], "--gpu") == 0;
      return runSeeds(std::strtoull(argv[i + 1], nullptr, 10), std::strtoull(argv[i + 2], nullptr, 10), gpu);
    }
    if (a == "--ptx" && i + 1 < argc) {
      // Offline: the GPU variant of one seed (PTXJIT_DEBUG=2 prints each pass).
      PipelineDesc p = random_pipeline(std::strtoull(argv[i + 1], nullptr, 10), true);
      std::string error = compile_to_ptx(p, i + 2 < argc ? argv[i + 2] : "x86-64-linux-cuda-cuda_capability_80");
      std::printf("%s\n%s\n", to_string(p).c_str(), error.empty() ? "compiled" : error.c_str());
      return error.empty() ? 0 : 1;
    }
    if (a == "--cpu-of-gpu" && i + 1 < argc) {
      // Offline: the GPU variant of one seed with its block and thread loops as parallel host
      // loops, to tell a wrong description from a wrong kernel without a device.
      PipelineDesc p = random_pipeline(std::strtoull(argv[i + 1], nullptr, 10), true);
      p.gpu = false;
      Result r = run_pipeline(p, "host");
      static const char *outcomes[] = {"passed", "discarded", "wrong values", "error"};
      std::printf("%s\n%s %s\n", to_string(p).c_str(), outcomes[int(r.outcome)], r.message.c_str());
      return r.outcome == Outcome::Pass || r.outcome == Outcome::Discarded ? 0 : 1;
    }
    if (a == "--minutes" && i + 1 < argc)
      minutes = std::atof(argv[++i]);
    else if (a == "--gpu")
      gpu = true;
    else if (a == "--first-seed" && i + 1 < argc)
      firstSeed = std::strtoull(argv[++i], nullptr, 10);
    else {
      std::fprintf(stderr, "usage: %s --minutes N [--gpu] [--first-seed S]\n", argv[0]);
      return 2;
    }
  }
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  const uint64_t chunk = 50;
  long pass = 0, discarded = 0, wrong = 0, refused = 0, crashed = 0, hung = 0;
  // Adds the counts a child printed last and echoes what it printed before them.
  auto collect = [&](const std::string &output) {
    size_t at = output.rfind("COUNTS ");
    int p = 0, d = 0, w = 0, r = 0;
    if (at != std::string::npos)
      std::sscanf(output.c_str() + at, "COUNTS %d %d %d %d", &p, &d, &w, &r);
    pass += p;
    discarded += d;
    wrong += w;
    refused += r;
    std::fputs(output.substr(0, at).c_str(), stdout);
  };
  uint64_t seed = firstSeed;
  std::printf("ptxjit_fuzz: %s, seeds from %llu\n", gpu ? "GPU" : "CPU", static_cast<unsigned long long>(seed));
  while (elapsed() < minutes * 60) {
    ChildResult r = runChild("/proc/self/exe", seed, seed + chunk, gpu, 600);
    if (r.finished) {
      collect(r.output);
    } else {
      // Pin the crash or hang to its seeds, one child each.
      for (uint64_t s = seed; s < seed + chunk; ++s) {
        ChildResult one = runChild("/proc/self/exe", s, s + 1, gpu, 60);
        if (one.finished) {
          collect(one.output);
        } else if (one.timedOut) {
          ++hung;
          std::printf("HANG seed %llu (over 60 s)\n%s\n", static_cast<unsigned long long>(s),
                      to_string(random_pipeline(s, gpu)).c_str());
        } else {
          ++crashed;
          std::printf("CRASH seed %llu (signal %d)\n%s\n", static_cast<unsigned long long>(s), one.signal,
                      to_string(random_pipeline(s, gpu)).c_str());
        }
      }
    }
    seed += chunk;
    std::fflush(stdout);
  }
  std::printf("ptxjit_fuzz: %.0f s, seeds %llu..%llu: %ld passed, %ld wrong, %ld refused, %ld crashed, %ld hung, "
              "%ld discarded (undefined or inexact)\n",
              elapsed(), static_cast<unsigned long long>(firstSeed), static_cast<unsigned long long>(seed - 1), pass,
              wrong, refused, crashed, hung, discarded);
  return wrong + refused + crashed + hung ? 1 : 0;
}
