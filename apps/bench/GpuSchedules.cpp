#include "GpuSchedules.h"

#include "GPUScheduleRecipes.h"
#include "Json.h"

#include <cmath>
#include <dlfcn.h>
#include <optional>

using namespace ptxjit;
namespace cu = ptxjit::runtime::cuda;

extern "C" const char ptxjit_handwritten_blur_ptx[];

namespace bench {

namespace {

// cuBLAS, opened at run time: the bench needs no cuBLAS to build or to run. The handful of
// entry points used, declared by their C ABI (handles are pointers, enums ints, statuses ints).
class Cublas {
public:
  Cublas() {
    const char *candidates[] = {"libcublas.so.13", "libcublas.so.12", "libcublas.so",
                                "/usr/local/cuda/lib64/libcublas.so"};
    for (const char *name : candidates)
      if ((Library = dlopen(name, RTLD_NOW | RTLD_LOCAL)))
        break;
    if (!Library) {
      Why = "libcublas was not found (tried libcublas.so.13, .12, libcublas.so, /usr/local/cuda/lib64)";
      return;
    }
    Create = reinterpret_cast<decltype(Create)>(dlsym(Library, "cublasCreate_v2"));
    Destroy = reinterpret_cast<decltype(Destroy)>(dlsym(Library, "cublasDestroy_v2"));
    SetStream = reinterpret_cast<decltype(SetStream)>(dlsym(Library, "cublasSetStream_v2"));
    Sgemm = reinterpret_cast<decltype(Sgemm)>(dlsym(Library, "cublasSgemm_v2"));
    if (!Create || !Destroy || !SetStream || !Sgemm) {
      Why = "libcublas lacks cublasCreate_v2, cublasSetStream_v2 or cublasSgemm_v2";
      return;
    }
    if (int status = Create(&Handle); status != 0) {
      Why = "cublasCreate_v2 failed with status " + std::to_string(status);
      Handle = nullptr;
    }
  }
  ~Cublas() {
    if (Handle)
      Destroy(Handle);
    if (Library)
      dlclose(Library);
  }
  Cublas(const Cublas &) = delete;
  Cublas &operator=(const Cublas &) = delete;

  bool ready() const { return Handle != nullptr; }
  const std::string &why() const { return Why; }

  /// C = A * B for n x n column-major matrices, on `stream`.
  void sgemm(CUstream stream, int n, CUdeviceptr a, CUdeviceptr b, CUdeviceptr c) {
    const float one = 1.0f, zero = 0.0f;
    constexpr int NoTranspose = 0;
    if (int status = SetStream(Handle, stream); status != 0)
      throw RuntimeError("cublasSetStream_v2 failed with status " + std::to_string(status));
    if (int status = Sgemm(Handle, NoTranspose, NoTranspose, n, n, n, &one, reinterpret_cast<const float *>(a), n,
                           reinterpret_cast<const float *>(b), n, &zero, reinterpret_cast<float *>(c), n);
        status != 0)
      throw RuntimeError("cublasSgemm_v2 failed with status " + std::to_string(status));
  }

private:
  void *Library = nullptr;
  void *Handle = nullptr;
  std::string Why;
  int (*Create)(void **) = nullptr;
  int (*Destroy)(void *) = nullptr;
  int (*SetStream)(void *, CUstream) = nullptr;
  int (*Sgemm)(void *, int, int, int, int, int, const float *, const float *, int, const float *, int, const float *,
               float *, int) = nullptr;
};

std::string ptxFor(const Pipeline &p) {
  return Pipeline(p).compile_to_ptx(Target("host-cuda-cuda_capability_90"));
}

// The 3x3 blur of GpuBenchmarks, hand-written (handwritten_blur.cu), on an input whose rows are
// padded to a multiple of 4 floats so that its loads are 16-byte aligned.
std::string handwrittenBlur(BenchContext &uc, double copyTBs, int reps, double *tbsOut) {
  const int w = 8192, h = 8192, stride = (w + 2 + 3) / 4 * 4;
  CUmodule module;
  CUfunction kernel;
  CHECK_CU(cuModuleLoadData(&module, ptxjit_handwritten_blur_ptx));
  CHECK_CU(cuModuleGetFunction(&kernel, module, "handwritten_blur"));
  DeviceBuffer inDevice(size_t(stride) * (h + 2) * 4), outDevice(size_t(w) * h * 4);
  Buffer<float> input = random_image({stride, h + 2}, inDevice, uc.Stream, 7);
  Buffer<float> out(w, h);
  CUdeviceptr inPointer = inDevice.Pointer, outPointer = outDevice.Pointer;
  int width = w, inStride = stride;
  void *args[] = {&inPointer, &outPointer, &width, &inStride};
  const int threadsX = 64, threadsY = 4, rows = 16;
  double ms = time_on_stream(uc.Stream, 3, reps, [&] {
    CHECK_CU(cuLaunchKernel(kernel, w / (4 * threadsX), h / (rows * threadsY), 1, threadsX, threadsY, 1, 0, uc.Stream,
                            args, nullptr));
  });
  CHECK_CU(cuMemcpyDtoHAsync(out.data(), outDevice.Pointer, size_t(w) * h * 4, uc.Stream));
  CHECK_CU(cuStreamSynchronize(uc.Stream));
  // in(x, y) is stored at input(x + 1, y + 1).
  double maxError = blur_max_error([&](int x, int y) { return input(x + 1, y + 1); }, out);
  std::string resources = kernel_resources(ptxjit_handwritten_blur_ptx);
  cu::driver().cuModuleUnload(module);
  // The bytes the blur must move: the (w + 2) x (h + 2) input once and the output once.
  double tbs = (double(w + 2) * (h + 2) + double(w) * h) * 4 / (ms * 1e-3) / 1e12;
  *tbsOut = tbs;
  return "{\"ms\": " + json_number(ms) + ", \"tb_per_s\": " + json_number(tbs) + ", \"fraction_of_copy\": " +
         json_number(tbs / copyTBs) + ", \"max_abs_error\": " + json_number(maxError) + ", \"kernels\": " + resources + "}";
}

// Halide's CUDA matrix multiply schedule (apps/cuda_mat_mul): a block computes a tile of the
// product, each thread a tile of it in registers; the rows of A and B a step of k needs are
// loaded into registers, 16 bytes at a time. Halide's own sizes are a 64x16 block tile of 4x8
// thread tiles.
std::string sgemm(BenchContext &uc, Cublas &cublas, int n, int reps) {
  DeviceBuffer aDevice(size_t(n) * n * 4), bDevice(size_t(n) * n * 4), cDevice(size_t(n) * n * 4),
      referenceDevice(size_t(n) * n * 4);
  Buffer<float> a = random_image({n, n}, aDevice, uc.Stream, 21), b = random_image({n, n}, bDevice, uc.Stream, 22);
  const double flops = 2.0 * n * n * double(n);
  double cublasMs = NAN;
  Buffer<float> reference(n, n);
  if (cublas.ready()) {
    // ptxjit's out(x, y) = sum A(x, r) B(r, y) over x-fastest buffers is the column-major C = A B.
    cublasMs = time_on_stream(uc.Stream, 2, reps, [&] {
      cublas.sgemm(uc.Stream, n, aDevice.Pointer, bDevice.Pointer, referenceDevice.Pointer);
    });
    CHECK_CU(cuMemcpyDtoHAsync(reference.data(), referenceDevice.Pointer, size_t(n) * n * 4, uc.Stream));
  }
  std::string variants;
  double bestMs = NAN;
  // Steps of k staged at a time in shared memory; 0: A and B read from global memory into registers.
  const std::pair<test::MatMulTiles, int> schedules[] = {
      {{64, 16, 4, 8}, 0},  {{64, 64, 4, 8}, 0},   {{128, 32, 4, 8}, 0},   {{128, 64, 8, 8}, 0},
      {{128, 128, 8, 8}, 0}, {{64, 64, 4, 4}, 8},  {{64, 64, 4, 4}, 16},   {{128, 64, 8, 4}, 8},
      {{128, 64, 8, 4}, 16}, {{128, 128, 8, 8}, 8}, {{128, 128, 8, 8}, 16}};
  for (const auto &[tiles, steps] : schedules) {
    ImageParam A(Float(32), 2, "A"), B(Float(32), 2, "B");
    Pipeline p(steps ? test::shared_staged_matmul(A, B, n, tiles, steps) : test::register_tiled_matmul(A, B, n, tiles));
    p.compile_jit(Target("host-cuda"));
    A.set(a);
    B.set(b);
    Buffer<float> c(n, n);
    c.set_device(cDevice.Pointer);
    double ms = time_on_stream(uc.Stream, 2, reps, [&] { p.realize(&uc, c); });
    bestMs = std::isnan(bestMs) ? ms : std::min(bestMs, ms);
    CHECK_CU(cuMemcpyDtoHAsync(c.data(), cDevice.Pointer, size_t(n) * n * 4, uc.Stream));
    CHECK_CU(cuStreamSynchronize(uc.Stream));
    double maxError = NAN;
    if (cublas.ready()) {
      maxError = 0;
      for (size_t i = 0; i < size_t(n) * n; i += 997)
        maxError = std::max(maxError, double(std::fabs(c.data()[i] - reference.data()[i])));
    }
    variants += std::string(variants.empty() ? "" : ", ") + "{\"tiles\": " + json_string(tiles.name()) +
                ", \"shared_staged_steps_of_k\": " + std::to_string(steps) +
                ", \"ms\": " + json_number(ms) + ", \"tflops\": " + json_number(flops / (ms * 1e-3) / 1e12) +
                ", \"fraction_of_cublas\": " + json_number(cublasMs / ms) + ", \"max_abs_difference_from_cublas\": " +
                json_number(maxError) + ", \"kernels\": " + kernel_resources(ptxFor(p)) + "}";
  }
  std::string cublasField = cublas.ready() ? "{\"ms\": " + json_number(cublasMs) + ", \"tflops\": " +
                                                 json_number(flops / (cublasMs * 1e-3) / 1e12) + "}"
                                           : "{\"skipped\": " + json_string(cublas.why()) + "}";
  return "{\"n\": " + std::to_string(n) + ", \"cublas\": " + cublasField + ", \"best_fraction_of_cublas\": " +
         json_number(cublasMs / bestMs) + ", \"ptxjit\": [" + variants + "]}";
}

// out(x, y) = in(y, x): read along rows, written along columns; with a 32x32 tile of the input
// staged in shared memory, both global sides are along rows.
std::string transpose(BenchContext &uc, double copyTBs, int reps) {
  const int n = 8192;
  DeviceBuffer inDevice(size_t(n) * n * 4), outDevice(size_t(n) * n * 4);
  Buffer<float> input = random_image({n, n}, inDevice, uc.Stream, 31);
  std::string result;
  for (const std::string variant : {"direct", "shared_tile", "shared_tile_4_rows_a_thread"}) {
    const bool shared = variant != "direct", fourRows = variant == "shared_tile_4_rows_a_thread";
    ImageParam in(Float(32), 2, "in");
    Var x("x"), y("y"), xi("xi"), yi("yi"), xo("xo"), yo("yo"), yii("yii"), j("j"), k("k");
    Func t("transpose_" + variant);
    t(x, y) = in(y, x);
    if (fourRows) {
      // 32x8 threads, each 4 rows of a 32x32 tile; the tile staged 4 rows a thread.
      t.tile(x, y, xo, yo, xi, yi, 32, 32).split(yi, yi, yii, 4).reorder(yii, xi, yi, xo, yo).gpu_blocks(xo, yo)
          .gpu_threads(xi, yi).unroll(yii);
      in.in().compute_at(t, xo).split(_1, j, k, 4).reorder(k, _0, j).gpu_threads(_0, j).unroll(k);
    } else {
      t.gpu_tile(x, y, xi, yi, 32, 32);
      if (shared)
        in.in().compute_at(t, x).gpu_threads(_0, _1);
    }
    Pipeline p(t);
    p.compile_jit(Target("host-cuda"));
    in.set(input);
    Buffer<float> out(n, n);
    out.set_device(outDevice.Pointer);
    double ms = time_on_stream(uc.Stream, 3, reps, [&] { p.realize(&uc, out); });
    CHECK_CU(cuMemcpyDtoHAsync(out.data(), outDevice.Pointer, size_t(n) * n * 4, uc.Stream));
    CHECK_CU(cuStreamSynchronize(uc.Stream));
    int wrong = 0;
    for (int j = 0; j < n; j += 101)
      for (int i = 0; i < n; i += 89)
        wrong += out(i, j) != input(j, i);
    double tbs = 2.0 * n * n * 4 / (ms * 1e-3) / 1e12;
    result += std::string(result.empty() ? "" : ", ") + "\"" + variant +
              "\": {\"ms\": " + json_number(ms) + ", \"tb_per_s\": " + json_number(tbs) + ", \"fraction_of_copy\": " +
              json_number(tbs / copyTBs) + ", \"wrong_samples\": " + std::to_string(wrong) +
              ", \"kernels\": " + kernel_resources(ptxFor(p)) + "}";
  }
  return "{" + result + "}";
}

} // namespace

std::vector<std::string> schedule_benchmarks(BenchContext &uc, double copyTBs, int reps, bool quick,
                                             double *handwrittenBlurTBs) {
  std::vector<std::string> fields;
  *handwrittenBlurTBs = NAN;
  fields.push_back("\"blur_8192_handwritten_cuda\": " + handwrittenBlur(uc, copyTBs, reps, handwrittenBlurTBs));
  Cublas cublas;
  std::string rows;
  for (int n : quick ? std::vector<int>{2048} : std::vector<int>{2048, 4096})
    rows += std::string(rows.empty() ? "" : ", ") + sgemm(uc, cublas, n, std::max(3, reps / 2));
  fields.push_back("\"sgemm\": [" + rows + "]");
  fields.push_back("\"transpose_8192\": " + transpose(uc, copyTBs, reps));
  return fields;
}

} // namespace bench
