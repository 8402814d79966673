// DLPack views in both directions, without copies.

#include "TestUtil.h"
#include "ptxjit.h"
#include "ptxjit/DLPack.h"

using namespace ptxjit;
using namespace ptxjit::test;

TEST_CASE("DLPack round trip shares the data and frees it once", "[unit][buffer]") {
  Buffer<float> b(5, 3);
  fill_random(b, fresh_seed());
  DLManagedTensor *t = buffer_to_dlpack(b);
  REQUIRE(t->dl_tensor.ndim == 2);
  CHECK(t->dl_tensor.shape[0] == 3); // outermost first
  CHECK(t->dl_tensor.shape[1] == 5);
  CHECK(t->dl_tensor.strides[0] == 5);
  CHECK(t->dl_tensor.strides[1] == 1);
  CHECK(t->dl_tensor.device.device_type == kDLCPU);
  CHECK(t->dl_tensor.dtype.code == kDLFloat);
  CHECK(t->dl_tensor.data == b.data());

  Buffer<float> back(buffer_from_dlpack(t)); // takes ownership of t
  CHECK(back.data() == b.data());
  CHECK(back.width() == 5);
  CHECK(back.height() == 3);
  CHECK(back(4, 2) == b(4, 2));
}

TEST_CASE("DLPack float16 and bfloat16 tensors map to Float(16) and BFloat(16), both ways", "[unit][buffer]") {
  Buffer<float16_t> h(7);
  Buffer<bfloat16_t> b(7);
  for (int i = 0; i < 7; ++i) {
    h(i) = float16_t(i * 0.3);
    b(i) = bfloat16_t(i * -0.7);
  }
  DLManagedTensor *ht = buffer_to_dlpack(h), *bt = buffer_to_dlpack(b);
  CHECK((ht->dl_tensor.dtype.code == kDLFloat && ht->dl_tensor.dtype.bits == 16));
  CHECK((bt->dl_tensor.dtype.code == kDLBfloat && bt->dl_tensor.dtype.bits == 16));
  Buffer<float16_t> hBack(buffer_from_dlpack(ht));
  Buffer<bfloat16_t> bBack(buffer_from_dlpack(bt));
  CHECK(hBack(6).bits == float16_t(1.8).bits);
  CHECK(bBack(6).bits == bfloat16_t(-4.2).bits);
  CHECK_THROWS_WITH(Buffer<float16_t>(RawBuffer(bBack)), Catch::Contains("element type"));
}

TEST_CASE("DLPack tensors a Buffer cannot view are refused with the reason", "[unit][buffer]") {
  float data[12] = {};
  int64_t shape[2] = {3, 4}, strides[2] = {1, 3};
  DLTensor t{};
  t.data = data;
  t.device = {kDLCPU, 0};
  t.ndim = 2;
  t.dtype = {kDLFloat, 32, 1};
  t.shape = shape;
  t.strides = strides; // column-major: viewed with its strides; a pipeline checks the ones it needs
  Buffer<float> columnMajor(buffer_from_dlpack(t));
  CHECK(columnMajor.stride(0) == 3);
  CHECK(&columnMajor(1, 2) == data + 2 * 1 + 1 * 3);
  t.strides = nullptr;
  t.dtype = {kDLFloat, 8, 1};
  CHECK_THROWS_WITH(buffer_from_dlpack(t), Catch::Contains("type code 2 and 8 bits") && Catch::Contains("bfloat16"));
  t.dtype = {kDLBfloat, 32, 1};
  CHECK_THROWS_WITH(buffer_from_dlpack(t), Catch::Contains("type code 4 and 32 bits"));
  t.dtype = {kDLInt, 12, 1};
  CHECK_THROWS_WITH(buffer_from_dlpack(t), Catch::Contains("type code 0 and 12 bits"));
  t.dtype = {kDLFloat, 32, 1};
  t.device = {kDLVulkan, 0};
  CHECK_THROWS_WITH(buffer_from_dlpack(t), Catch::Contains("only CPU and CUDA"));
}

TEST_CASE("A pipeline reads a DLPack tensor in place", "[cpu][pipeline]") {
  uint32_t seed = fresh_seed();
  INFO("seed " << seed);
  std::vector<int32_t> data(6 * 4);
  std::mt19937 rng(seed);
  for (int32_t &v : data)
    v = static_cast<int32_t>(rng() % 1000);
  int64_t shape[2] = {4, 6};
  DLTensor t{};
  t.data = data.data();
  t.device = {kDLCPU, 0};
  t.ndim = 2;
  t.dtype = {kDLInt, 32, 1};
  t.shape = shape;
  ImageParam in(Int(32), 2, "in");
  in.set(buffer_from_dlpack(t));
  Var x("x"), y("y");
  Func f("f");
  f(x, y) = in(x, y) * 3;
  Buffer<int> out = Pipeline(f).realize<int>({6, 4});
  check_against(out, [&](const std::vector<int> &c) { return data[c[1] * 6 + c[0]] * 3; });

  // A device-only view cannot feed a host pipeline.
  t.device = {kDLCUDA, 0};
  in.set(buffer_from_dlpack(t));
  CHECK_THROWS_WITH(Pipeline(f).realize<int>({6, 4}), Catch::Contains("buffer in has no host memory"));
}
