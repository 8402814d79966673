// ptxjit benchmarks. Prints one JSON object: compile time from definition to callable, realize
// time against a plain C++ loop doing the same work in the same run, and, where the Halide 14
// peer was built, Halide's compile and realize time for the same blur in the same run; the first
// realize of fresh processes with a cold and a warm compile cache.
// Usage: bench [--quick]

#include "BlurPipelines.h"
#include "FirstRealize.h"
#include "GpuBenchmarks.h"
#include "Json.h"
#include "Peers.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

using namespace ptxjit;

namespace {

double nowMs() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct Stats {
  double Median, Min;
};

Stats measure(int repetitions, const std::function<void()> &f) {
  std::vector<double> times;
  for (int i = 0; i < repetitions; ++i) {
    double start = nowMs();
    f();
    times.push_back(nowMs() - start);
  }
  std::sort(times.begin(), times.end());
  return {times[times.size() / 2], times.front()};
}

Buffer<float> randomImage(int w, int h) {
  Buffer<float> b(w, h);
  std::mt19937 rng(12345);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      b(x, y) = dist(rng);
  return b;
}

// The same blur as make_blur, as plain C++ with a row buffer, threaded over rows like the pipeline.
void referenceBlur(const Buffer<float> &in, Buffer<float> &out) {
  int w = out.width(), h = out.height();
  int threads = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      std::vector<float> rows(3 * static_cast<size_t>(w));
      for (int y = t * h / threads; y < (t + 1) * h / threads; ++y) {
        for (int dy = -1; dy <= 1; ++dy)
          for (int x = 0; x < w; ++x)
            rows[(dy + 1) * w + x] = (in(x - 1, y + dy) + in(x, y + dy) + in(x + 1, y + dy)) / 3.0f;
        for (int x = 0; x < w; ++x)
          out(x, y) = (rows[x] + rows[w + x] + rows[2 * w + x]) / 3.0f;
      }
    });
  for (std::thread &t : pool)
    t.join();
}

} // namespace

int main(int argc, char **argv) {
  if (argc > 2 && std::strcmp(argv[1], "--first-realize-child") == 0)
    return bench::first_realize_child(argv[2]);
  bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  // A compile cache of this run's own: a compile measured here is never a hit from an earlier run.
  std::string pattern = (std::filesystem::temp_directory_path() / "ptxjit-bench-cache-XXXXXX").string();
  const std::string cacheDirectory = mkdtemp(pattern.data()) ? pattern : std::string();
  if (!cacheDirectory.empty())
    setenv("PTXJIT_CACHE_DIR", cacheDirectory.c_str(), 1);
  // A compile takes milliseconds, and a shared machine's speed varies from one to the next:
  // enough of them that one slowed down does not move the median.
  const int compileReps = quick ? 5 : 15, realizeReps = quick ? 5 : 15;
  const int w = quick ? 1024 : 2048, h = quick ? 1024 : 2048;
  Target host("host");
  std::vector<std::string> results;
  int unique = 0;

  // Compile time, definition to callable, for each pipeline.
  struct Entry {
    const char *Name;
    bench::BuiltPipeline (*Make)(const std::string &);
  };
  for (Entry e : {Entry{"blur", bench::make_blur}, Entry{"pointwise", bench::make_pointwise},
                  Entry{"histogram", bench::make_histogram}}) {
    Stats fresh = measure(compileReps, [&] {
      bench::BuiltPipeline p = e.Make("_" + std::to_string(unique++));
      Pipeline(p.Output).compile_jit(host);
    });
    // A pipeline identical to a live one reuses its compiled code.
    bench::BuiltPipeline same = e.Make("_cached");
    Pipeline live(same.Output);
    live.compile_jit(host);
    Stats cached = measure(compileReps, [&] {
      bench::BuiltPipeline p = e.Make("_cached");
      Pipeline(p.Output).compile_jit(host);
    });
    results.push_back("{\"name\": \"compile_" + std::string(e.Name) + "\", \"unit\": \"ms\", \"median\": " +
                      bench::json_number(fresh.Median) + ", \"min\": " + bench::json_number(fresh.Min) + ", \"cached_median\": " +
                      bench::json_number(cached.Median) + "}");
  }

  // Blur realize against the C++ reference, same sizes, same run.
  Buffer<float> input = randomImage(w + 2, h + 2);
  input.set_min({-1, -1});
  Buffer<float> out(w, h), reference(w, h);
  bench::BuiltPipeline blur = bench::make_blur("_realize");
  blur.Input.set(input);
  Pipeline pipeline(blur.Output);
  pipeline.compile_jit(host);
  pipeline.realize(out);
  Stats ours = measure(realizeReps, [&] { pipeline.realize(out); });
  Stats plain = measure(realizeReps, [&] { referenceBlur(input, reference); });
  double maxError = 0;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      maxError = std::max(maxError, double(std::fabs(out(x, y) - reference(x, y))));
  double bytes = 2.0 * 4.0 * w * h;
  results.push_back("{\"name\": \"realize_blur\", \"unit\": \"ms\", \"width\": " + std::to_string(w) +
                    ", \"height\": " + std::to_string(h) + ", \"median\": " + bench::json_number(ours.Median) +
                    ", \"gb_per_s\": " + bench::json_number(bytes / ours.Median / 1e6) + ", \"baseline\": \"plain C++, same threads\"" +
                    ", \"baseline_median\": " + bench::json_number(plain.Median) + ", \"speedup_vs_baseline\": " +
                    bench::json_number(plain.Median / ours.Median) + ", \"max_abs_error\": " + bench::json_number(maxError) + "}");

  // Gamma (pow per pixel of a uint8 image) against the same loop in plain C++ (libm's powf).
  Buffer<uint8_t> pixels(w, h), corrected(w, h), plainCorrected(w, h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      pixels(x, y) = uint8_t((x * 31 + y * 17) % 256);
  bench::BuiltPipeline gamma = bench::make_gamma("_realize");
  gamma.Input.set(pixels);
  Pipeline gammaPipeline(gamma.Output);
  gammaPipeline.compile_jit(host);
  gammaPipeline.realize(corrected);
  Stats gammaOurs = measure(realizeReps, [&] { gammaPipeline.realize(corrected); });
  Stats gammaPlain = measure(realizeReps, [&] {
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x)
        plainCorrected(x, y) =
            uint8_t(std::min(255.0f, std::pow(pixels(x, y) / 255.0f, bench::GammaExponent) * 255.0f + 0.5f));
  });
  int gammaError = 0;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      gammaError = std::max(gammaError, std::abs(int(corrected(x, y)) - int(plainCorrected(x, y))));
  results.push_back("{\"name\": \"realize_gamma\", \"unit\": \"ms\", \"width\": " + std::to_string(w) +
                    ", \"height\": " + std::to_string(h) + ", \"median\": " + bench::json_number(gammaOurs.Median) +
                    ", \"baseline\": \"plain C++, one thread, libm powf\", \"baseline_median\": " +
                    bench::json_number(gammaPlain.Median) + ", \"speedup_vs_baseline\": " +
                    bench::json_number(gammaPlain.Median / gammaOurs.Median) +
                    ", \"max_abs_error\": " + std::to_string(gammaError) + "}");

  std::optional<std::string> peer = bench::run_peer("halide_peer", std::to_string(w) + " " + std::to_string(h));
  double compileMedian = NAN;
  for (const std::string &r : results)
    if (r.find("\"compile_blur\"") != std::string::npos)
      compileMedian = bench::json_field(r, "median");

  std::string gpu;
  try {
    gpu = bench::gpu_benchmarks(quick);
  } catch (const std::exception &e) {
    gpu = "{\"error\": " + bench::json_string(e.what()) + "}";
  }
  const std::string firstRealize = bench::first_realize_benchmarks(host_supports_target_device(Target("host-cuda")));
  std::error_code ignored;
  if (!cacheDirectory.empty())
    std::filesystem::remove_all(cacheDirectory, ignored);

  std::printf("{\n  \"target\": %s,\n  \"threads\": %u,\n  \"results\": [\n", bench::json_string(host.to_string()).c_str(),
              std::thread::hardware_concurrency());
  for (size_t i = 0; i < results.size(); ++i)
    std::printf("    %s%s\n", results[i].c_str(), i + 1 < results.size() ? "," : "");
  std::printf("  ],\n");
  if (peer) {
    double halideCompile = bench::json_field(*peer, "compile_jit_ms");
    double halideRealize = bench::json_field(*peer, "realize_ms");
    double halideGamma = bench::json_field(*peer, "gamma_realize_ms");
    std::printf("  \"halide14\": %s,\n", peer->c_str());
    std::printf("  \"ratios\": {\"compile_blur_ptxjit_over_halide\": %s, \"realize_blur_ptxjit_over_halide\": %s, "
                "\"realize_gamma_ptxjit_over_halide\": %s},\n",
                bench::json_number(compileMedian / halideCompile).c_str(), bench::json_number(ours.Median / halideRealize).c_str(),
                bench::json_number(gammaOurs.Median / halideGamma).c_str());
  } else {
    std::printf("  \"halide14\": null,\n");
  }
  std::printf("  \"first_realize\": %s,\n", firstRealize.c_str());
  std::printf("  \"gpu\": %s\n", gpu.c_str());
  std::printf("}\n");
  return 0;
}
