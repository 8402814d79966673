#include "GpuBenchmarks.h"

#include "GPUScheduleRecipes.h"
#include "GpuTiming.h"
#include "GpuSchedules.h"
#include "Json.h"
#include "Peers.h"

#include "cuda/CudaDriver.h"
#include "cuda/DevicePools.h"
#include "ptxjit.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <optional>
#include <random>
#include <vector>

using namespace ptxjit;
namespace cu = ptxjit::runtime::cuda;

namespace bench {

namespace {

// The built-in transient pool, called as the built-in device_malloc calls it.
int runtime_malloc(CUstream stream, size_t bytes, CUdeviceptr *out) {
  return cu::pool_malloc(cu::PoolKind::Transient, stream, bytes, out);
}
int runtime_free(CUstream stream, CUdeviceptr p) { return cu::pool_free(cu::PoolKind::Transient, stream, p); }

} // namespace

std::string gpu_benchmarks(bool quick) {
  std::string why;
  if (!host_supports_target_device(Target("host-cuda"), &why))
    return "{\"skipped\": " + json_string(why) + "}";
  const cu::DriverApi &api = cu::driver();
  CUdevice device;
  CHECK_CU(cuDeviceGet(&device, 0));
  char name[256] = {0};
  api.cuDeviceGetName(name, sizeof name, device);
  BenchContext uc;
  CHECK_CU(cuDevicePrimaryCtxRetain(&uc.Context, device));
  CHECK_CU(cuCtxPushCurrent(uc.Context));
  CHECK_CU(cuStreamCreate(&uc.Stream, CU_STREAM_NON_BLOCKING));
  std::vector<std::string> fields;
  fields.push_back("\"device\": " + json_string(name));
  const int reps = quick ? 5 : 20;

  // Baseline: device-to-device copy, bytes read plus written.
  const size_t copyBytes = size_t(1) << 30;
  double copyTBs = 0;
  {
    DeviceBuffer a(copyBytes), b(copyBytes);
    double ms = time_on_stream(uc.Stream, 2, reps, [&] {
      CHECK_CU(cuMemcpyDtoDAsync(b.Pointer, a.Pointer, copyBytes, uc.Stream));
    });
    copyTBs = 2.0 * copyBytes / (ms * 1e-3) / 1e12;
    fields.push_back("\"copy_d2d_tb_per_s\": " + json_number(copyTBs));
  }

  // Blur 8192x8192 float, gpu_tile 32x8: blur_x inline, or in shared memory per block; with the
  // default tails (guarded) and with shifted ones (what Halide's gpu_tile does by default).
  double blurTBs[2][2] = {{NAN, NAN}, {NAN, NAN}}; // [shifted][shared]
  double handwrittenBlurTBs = NAN;
  for (std::string &field : schedule_benchmarks(uc, copyTBs, reps, quick, &handwrittenBlurTBs))
    fields.push_back(std::move(field));
  // Variant 4: each thread 4 columns (one 16-byte vector) by 16 rows, blur_x's 18 rows of them
  // in registers (the structure of the hand-written blur, without its sliding window); variant 5:
  // the same strips with blur_x slid down them in a window of four rows (the hand-written one's).
  double stripsTBs[2] = {NAN, NAN}; // [sliding]
  for (int variant = 0; variant < 6; ++variant) {
    const bool shared = variant % 2 && variant < 4, shifted = variant / 2 == 1, strips = variant >= 4,
               sliding = variant == 5;
    const int w = 8192, h = 8192;
    ImageParam in(Float(32), 2, "in");
    Var x("x"), y("y"), xi("xi"), yi("yi");
    Func bx("blur_x"), by("blur_y");
    bx(x, y) = (in(x - 1, y) + in(x, y) + in(x + 1, y)) / 3.0f;
    by(x, y) = (bx(x, y - 1) + bx(x, y) + bx(x, y + 1)) / 3.0f;
    if (sliding) {
      test::schedule_sliding_strips(bx, by, x, y);
    } else if (strips) {
      test::schedule_register_strips(bx, by, x, y);
    } else {
      by.gpu_tile(x, y, xi, yi, 32, 8, shifted ? TailStrategy::ShiftInward : TailStrategy::Auto);
    }
    if (shared)
      bx.compute_at(by, x).gpu_threads(x, y);
    auto compileStart = std::chrono::steady_clock::now();
    Pipeline p(by);
    p.compile_jit(Target("host-cuda"));
    double compileMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - compileStart).count();
    DeviceBuffer inDevice(size_t(w + 2) * (h + 2) * 4), outDevice(size_t(w) * h * 4);
    Buffer<float> input = random_image({w + 2, h + 2}, inDevice, uc.Stream, 7);
    input.set_min({-1, -1});
    in.set(input);
    Buffer<float> out(w, h);
    out.set_device(outDevice.Pointer);
    // The same PTX the first realize makes, timed on its own.
    int major = 0, minor = 0;
    api.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device);
    api.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device);
    int capability = std::min(major * 10 + minor, 90);
    auto ptxStart = std::chrono::steady_clock::now();
    std::string ptx = Pipeline(by).compile_to_ptx(Target("host-cuda").resolve_cuda_capability(capability / 10, capability % 10));
    double ptxMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - ptxStart).count();
    auto firstStart = std::chrono::steady_clock::now();
    p.realize(&uc, out);
    CHECK_CU(cuStreamSynchronize(uc.Stream));
    double firstMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - firstStart).count();
    double ms = time_on_stream(uc.Stream, 3, reps, [&] { p.realize(&uc, out); });
    CHECK_CU(cuMemcpyDtoHAsync(out.data(), outDevice.Pointer, size_t(w) * h * 4, uc.Stream));
    CHECK_CU(cuStreamSynchronize(uc.Stream));
    double maxError = blur_max_error([&](int x, int y) { return input(x, y); }, out);
    double tbs = (double(w + 2) * (h + 2) + double(w) * h) * 4 / (ms * 1e-3) / 1e12;
    (strips ? stripsTBs[sliding] : blurTBs[shifted][shared]) = tbs;
    std::string name = strips ? std::string(sliding ? "blur_8192_register_sliding_strips" : "blur_8192_register_strips")
                              : std::string("blur_8192_") + (shared ? "shared" : "inline") + (shifted ? "_shift_inward" : "");
    fields.push_back("\"" + name + "\": {\"ms\": " + json_number(ms) + ", \"tb_per_s\": " + json_number(tbs) +
                     ", \"fraction_of_copy\": " + json_number(tbs / copyTBs) + ", \"max_abs_error\": " + json_number(maxError) +
                     ", \"compile_jit_ms\": " + json_number(compileMs) + ", \"first_realize_ms\": " + json_number(firstMs) +
                     ", \"ptx_generation_ms\": " + json_number(ptxMs) + ", \"kernels\": " + kernel_resources(ptx) + "}");
  }
  double bestBlur =
      std::max({blurTBs[0][0], blurTBs[0][1], blurTBs[1][0], blurTBs[1][1], stripsTBs[0], stripsTBs[1]});
  fields.push_back("\"blur_8192_best_over_handwritten_cuda\": " + json_number(bestBlur / handwrittenBlurTBs));

  // axpy over 64M floats: one element per thread, and four (16-byte loads and stores).
  {
    const int n = 64 << 20;
    DeviceBuffer xd(size_t(n) * 4), yd(size_t(n) * 4), od(size_t(n) * 4);
    Buffer<float> xb = random_image({n}, xd, uc.Stream, 1), yb = random_image({n}, yd, uc.Stream, 2);
    for (bool vectorized : {false, true}) {
      ImageParam X(Float(32), 1, "X"), Y(Float(32), 1, "Y");
      Param<float> a("a", 1.5f);
      Var i("i"), io("io"), ii("ii"), iv("iv");
      Func axpy("axpy");
      axpy(i) = a * X(i) + Y(i);
      if (vectorized)
        axpy.split(i, i, iv, 4).vectorize(iv).gpu_tile(i, io, ii, 256);
      else
        axpy.gpu_tile(i, io, ii, 256);
      Pipeline p(axpy);
      p.compile_jit(Target("host-cuda"));
      X.set(xb);
      Y.set(yb);
      Buffer<float> out(n);
      out.set_device(od.Pointer);
      double ms = time_on_stream(uc.Stream, 3, reps, [&] { p.realize(&uc, out); });
      double tbs = 3.0 * n * 4 / (ms * 1e-3) / 1e12;
      fields.push_back(std::string(vectorized ? "\"axpy_64m_vectorized\"" : "\"axpy_64m\"") + ": {\"ms\": " +
                       json_number(ms) + ", \"tb_per_s\": " + json_number(tbs) + ", \"fraction_of_copy\": " + json_number(tbs / copyTBs) +
                       "}");
    }
  }

  double oneKernelUs = NAN;
  // One-kernel realize: host time per call on device-resident buffers, against raw
  // cuLaunchKernel of an empty kernel on the same stream, in the same run.
  {
    ImageParam X(Float(32), 1, "X");
    Var i("i"), io("io"), ii("ii");
    Func twice("twice");
    twice(i) = X(i) * 2.0f;
    twice.gpu_tile(i, io, ii, 256);
    Pipeline p(twice);
    p.compile_jit(Target("host-cuda"));
    DeviceBuffer xd(256 * 4), od(256 * 4);
    Buffer<float> xb = random_image({256}, xd, uc.Stream, 3);
    X.set(xb);
    Buffer<float> out(256);
    out.set_device(od.Pointer);
    p.realize(&uc, out);
    CHECK_CU(cuStreamSynchronize(uc.Stream));

    const char *emptyPtx = ".version 7.8\n.target sm_50\n.address_size 64\n.visible .entry empty() { ret; }\n";
    CUmodule module;
    CUfunction empty;
    CHECK_CU(cuModuleLoadData(&module, emptyPtx));
    CHECK_CU(cuModuleGetFunction(&empty, module, "empty"));
    const int calls = quick ? 2000 : 10000, batches = 7;
    auto perCall = [&](const std::function<void()> &f) {
      std::vector<double> us;
      for (int b = 0; b < batches; ++b) {
        auto start = std::chrono::steady_clock::now();
        for (int c = 0; c < calls; ++c)
          f();
        double total = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
        us.push_back(total / calls);
        cu::driver().cuStreamSynchronize(uc.Stream);
      }
      return median(us);
    };
    double raw = perCall([&] {
      cu::driver().cuLaunchKernel(empty, 1, 1, 1, 256, 1, 1, 0, uc.Stream, nullptr, nullptr);
    });
    double ours = perCall([&] { p.realize(&uc, out); });
    Pipeline graph(twice);
    graph.compile_jit(Target("host-cuda-cuda_graphs"));
    graph.realize(&uc, out);
    double oursGraph = perCall([&] { graph.realize(&uc, out); });
    oneKernelUs = ours;
    fields.push_back("\"one_kernel_realize_us\": {\"ptxjit\": " + json_number(ours) + ", \"ptxjit_cuda_graphs\": " +
                     json_number(oursGraph) + ", \"raw_cuLaunchKernel\": " + json_number(raw) +
                     ", \"overhead_us\": " + json_number(ours - raw) + "}");

    // Four kernels a realize (three intermediates from the pool) against four raw launches.
    Func s1("s1"), s2("s2"), s3("s3"), s4("s4");
    s1(i) = X(i) * 2.0f;
    s2(i) = s1(i) + 1.0f;
    s3(i) = s2(i) * s2(i);
    s4(i) = s3(i) - X(i);
    for (Func *f : {&s1, &s2, &s3})
      f->compute_root().gpu_tile(i, io, ii, 256);
    s4.gpu_tile(i, io, ii, 256);
    Pipeline four(s4);
    four.compile_jit(Target("host-cuda"));
    four.realize(&uc, out);
    double rawFour = perCall([&] {
      for (int k = 0; k < 4; ++k)
        cu::driver().cuLaunchKernel(empty, 1, 1, 1, 256, 1, 1, 0, uc.Stream, nullptr, nullptr);
    });
    double oursFour = perCall([&] { four.realize(&uc, out); });
    Pipeline fourGraph(s4);
    fourGraph.compile_jit(Target("host-cuda-cuda_graphs"));
    fourGraph.realize(&uc, out);
    double oursFourGraph = perCall([&] { fourGraph.realize(&uc, out); });
    cu::driver().cuModuleUnload(module);
    fields.push_back("\"four_kernel_realize_us\": {\"ptxjit\": " + json_number(oursFour) + ", \"ptxjit_cuda_graphs\": " +
                     json_number(oursFourGraph) + ", \"raw_4x_cuLaunchKernel\": " + json_number(rawFour) +
                     ", \"overhead_us\": " + json_number(oursFour - rawFour) + "}");
  }

  // Eight small stencils in a row (seven intermediates), as stream launches and as a CUDA graph:
  // the time from realize to a synchronized stream, and the host time a realize takes to enqueue.
  for (int size : {256, 2048}) {
    ImageParam in(Float(32), 2, "in");
    Var x("x"), y("y"), xi("xi"), yi("yi");
    std::vector<Func> stages;
    stages.push_back(BoundaryConditions::repeat_edge(in));
    for (int k = 1; k <= 8; ++k) {
      Func &prev = stages.back();
      Func stage("stage" + std::to_string(k));
      if (k % 2)
        stage(x, y) = (prev(x - 1, y) + prev(x, y) * 2.0f + prev(x + 1, y)) * 0.25f;
      else
        stage(x, y) = (prev(x, y - 1) + prev(x, y) * 2.0f + prev(x, y + 1)) * 0.25f;
      stage.gpu_tile(x, y, xi, yi, 32, 8);
      if (k < 8)
        stage.compute_root();
      stages.push_back(stage);
    }
    DeviceBuffer inDevice(size_t(size) * size * 4), outDevice(size_t(size) * size * 4);
    Buffer<float> input = random_image({size, size}, inDevice, uc.Stream, 13);
    in.set(input);
    Buffer<float> out(size, size);
    out.set_device(outDevice.Pointer);
    double latencyUs[2], hostUs[2];
    std::vector<float> results[2];
    for (int graphs = 0; graphs < 2; ++graphs) {
      Pipeline p(stages.back());
      p.compile_jit(Target(graphs ? "host-cuda-cuda_graphs" : "host-cuda"));
      std::vector<double> us;
      for (int r = 0; r < 5 + 20 * reps; ++r) {
        auto start = std::chrono::steady_clock::now();
        p.realize(&uc, out);
        CHECK_CU(cuStreamSynchronize(uc.Stream));
        if (r >= 5)
          us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
      }
      latencyUs[graphs] = median(us);
      std::vector<double> enqueue;
      for (int batch = 0; batch < 7; ++batch) {
        const int calls = 50;
        auto start = std::chrono::steady_clock::now();
        for (int c = 0; c < calls; ++c)
          p.realize(&uc, out);
        enqueue.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() / calls);
        CHECK_CU(cuStreamSynchronize(uc.Stream));
      }
      hostUs[graphs] = median(enqueue);
      results[graphs].resize(size_t(size) * size);
      CHECK_CU(cuMemcpyDtoHAsync(results[graphs].data(), outDevice.Pointer, results[graphs].size() * 4, uc.Stream));
      CHECK_CU(cuStreamSynchronize(uc.Stream));
    }
    fields.push_back("\"eight_stencils_" + std::to_string(size) + "\": {\"stream_realize_to_sync_us\": " +
                     json_number(latencyUs[0]) + ", \"graph_realize_to_sync_us\": " + json_number(latencyUs[1]) +
                     ", \"graph_speedup\": " + json_number(latencyUs[0] / latencyUs[1]) +
                     ", \"stream_host_us_per_realize\": " + json_number(hostUs[0]) +
                     ", \"graph_host_us_per_realize\": " + json_number(hostUs[1]) +
                     ", \"graph_equals_stream\": " + std::string(results[0] == results[1] ? "true" : "false") + "}");
  }
  const CudaGraphStatistics graphStatistics = JIT::cuda_graph_statistics();
  fields.push_back("\"cuda_graph_statistics\": {\"built\": " + std::to_string(graphStatistics.built) +
                   ", \"instantiated\": " + std::to_string(graphStatistics.instantiated) +
                   ", \"replayed\": " + std::to_string(graphStatistics.replayed) +
                   ", \"updated_nodes\": " + std::to_string(graphStatistics.updated_nodes) +
                   ", \"stream_fallbacks\": " + std::to_string(graphStatistics.stream_fallbacks) + "}");

  // Allocation + free through the transient pool against cuMemAlloc/cuMemFree, host time.
  {
    std::string rows;
    for (size_t bytes : {size_t(4) << 10, size_t(256) << 10, size_t(4) << 20, size_t(64) << 20}) {
      const int n = quick ? 200 : 1000;
      auto percentiles = [&](const std::function<void()> &f) {
        std::vector<double> us;
        for (int i = 0; i < n; ++i) {
          auto start = std::chrono::steady_clock::now();
          f();
          us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
        }
        std::sort(us.begin(), us.end());
        return std::make_pair(us[us.size() / 2], us[us.size() * 99 / 100]);
      };
      auto pooled = percentiles([&] {
        CUdeviceptr p = 0;
        if (runtime_malloc(uc.Stream, bytes, &p) != 0 || runtime_free(uc.Stream, p) != 0)
          throw RuntimeError("pool allocation failed");
      });
      auto sync = percentiles([&] {
        CUdeviceptr p = 0;
        CHECK_CU(cuMemAlloc(&p, bytes));
        CHECK_CU(cuMemFree(p));
      });
      CHECK_CU(cuStreamSynchronize(uc.Stream));
      rows += std::string(rows.empty() ? "" : ", ") + "{\"bytes\": " + std::to_string(bytes) + ", \"pool_p50_us\": " +
              json_number(pooled.first) + ", \"pool_p99_us\": " + json_number(pooled.second) + ", \"cuMemAlloc_p50_us\": " +
              json_number(sync.first) + ", \"cuMemAlloc_p99_us\": " + json_number(sync.second) + "}";
    }
    fields.push_back("\"alloc_free\": [" + rows + "]");
  }

  // A 4-stage pipeline whose 3 intermediates come from the pool, or from a device_malloc handler
  // that uses cuMemAlloc/cuMemFree, in the same run.
  {
    const int w = 2048, h = 2048;
    ImageParam in(Float(32), 2, "in");
    Var x("x"), y("y"), xi("xi"), yi("yi");
    Func s1("s1"), s2("s2"), s3("s3"), s4("s4");
    s1(x, y) = in(x, y) * 2.0f;
    s2(x, y) = s1(x, y) + 1.0f;
    s3(x, y) = s2(x, y) * s2(x, y);
    s4(x, y) = s3(x, y) - in(x, y);
    for (Func *f : {&s1, &s2, &s3})
      f->compute_root().gpu_tile(x, y, xi, yi, 32, 8);
    s4.gpu_tile(x, y, xi, yi, 32, 8);
    Pipeline p(s4);
    p.compile_jit(Target("host-cuda"));
    DeviceBuffer inDevice(size_t(w) * h * 4), outDevice(size_t(w) * h * 4);
    Buffer<float> input = random_image({w, h}, inDevice, uc.Stream, 11);
    in.set(input);
    Buffer<float> out(w, h);
    out.set_device(outDevice.Pointer);
    BenchContext synchronous;
    synchronous.Context = uc.Context;
    synchronous.Stream = uc.Stream;
    synchronous.handlers.device_malloc = [](JITUserContext *, CUcontext, CUstream, size_t bytes, CUdeviceptr *out) {
      return int(cu::driver().cuMemAlloc(out, bytes));
    };
    synchronous.handlers.device_free = [](JITUserContext *, CUcontext, CUstream, CUdeviceptr pointer) {
      return int(cu::driver().cuMemFree(pointer));
    };
    auto hostMs = [&](JITUserContext *context) {
      std::vector<double> ms;
      for (int i = 0; i < 3 + reps; ++i) {
        auto start = std::chrono::steady_clock::now();
        p.realize(context, out);
        CHECK_CU(cuStreamSynchronize(uc.Stream));
        if (i >= 3)
          ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
      }
      return median(ms);
    };
    double pooled = hostMs(&uc), synchronousMs = hostMs(&synchronous);
    fields.push_back("\"four_stage_2048\": {\"pooled_ms\": " + json_number(pooled) + ", \"cuMemAlloc_ms\": " +
                     json_number(synchronousMs) + ", \"speedup\": " + json_number(synchronousMs / pooled) + "}");
  }

  // Halide 14's same pipelines, compiled ahead of time, in a process of their own, timed the same
  // way in this run.
  if (std::optional<std::string> halide = run_peer("halide_gpu_peer", quick ? "--quick" : "")) {
    fields.push_back("\"halide14\": " + *halide);
    auto halideTBs = [&](const std::string &blur) {
      size_t at = halide->find("\"" + blur + "\"");
      return at == std::string::npos ? NAN : json_field(halide->substr(at), "tb_per_s");
    };
    std::string ratios;
    for (int variant = 0; variant < 4; ++variant) {
      const bool shared = variant % 2, shifted = variant / 2;
      std::string blur = std::string("blur_8192_") + (shared ? "shared" : "inline");
      ratios += "\"" + blur + (shifted ? "_shift_inward" : "") + "_tb_per_s\": " +
                json_number(blurTBs[shifted][shared] / halideTBs(blur)) + ", ";
    }
    fields.push_back("\"ratios_ptxjit_over_halide\": {" + ratios + "\"one_kernel_realize_us\": " +
                     json_number(oneKernelUs / json_field(*halide, "one_kernel_realize_us")) + "}");
  } else {
    fields.push_back("\"halide14\": null");
  }

  api.cuStreamDestroy(uc.Stream);
  CUcontext popped;
  api.cuCtxPopCurrent(&popped);
  api.cuDevicePrimaryCtxRelease(device);
  std::string json = "{";
  for (size_t k = 0; k < fields.size(); ++k)
    json += (k ? ", " : "") + fields[k];
  return json + "}";
}

} // namespace bench
