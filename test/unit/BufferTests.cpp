// Host buffers: shapes, element access, crops that share storage, and their descriptors.

#include "ptxjit/Buffer.h"

#include <catch2/catch.hpp>

using namespace ptxjit;

TEST_CASE("Buffer dimensions, strides and element access", "[unit][buffer]") {
  Buffer<float> b(5, 3, 2);
  REQUIRE(b.dimensions() == 3);
  CHECK(b.width() == 5);
  CHECK(b.height() == 3);
  CHECK(b.channels() == 2);
  CHECK(b.stride(0) == 1);
  CHECK(b.stride(1) == 5);
  CHECK(b.stride(2) == 15);
  CHECK(b.number_of_elements() == 30);
  CHECK(reinterpret_cast<uintptr_t>(b.data()) % 64 == 0);
  b.for_each_element([&](const std::vector<int> &c) { b.at(c) = float(c[0] + 10 * c[1] + 100 * c[2]); });
  CHECK(b(4, 2, 1) == 124.0f);
  CHECK(b.data()[4 + 2 * 5 + 15] == 124.0f);

  b.set_min({-1, 10, 0});
  CHECK(b(-1, 10, 0) == 0.0f);
  CHECK(b(3, 12, 1) == 124.0f);
  // Halide's Buffer::Dimension: b.dim(1).min(), extent(), max(), stride(), begin() and end().
  CHECK(b.dim(1).min() == 10);
  CHECK(b.dim(1).extent() == 3);
  CHECK(b.dim(1).max() == 12);
  CHECK(b.dim(2).stride() == 15);
  int columns = 0;
  for (int x = b.dim(0).begin(); x < b.dim(0).end(); ++x)
    columns += x;
  CHECK(columns == -1 + 0 + 1 + 2 + 3);

  ptxjit_buffer_t *raw = b.raw_buffer();
  CHECK(raw->dimensions == 3);
  CHECK(raw->dim[1].min == 10);
  CHECK(raw->dim[2].stride == 15);
  CHECK(raw->type.code == ptxjit_type_float);
  CHECK(raw->type.bits == 32);
  CHECK(raw->host == reinterpret_cast<uint8_t *>(b.data()));
}

TEST_CASE("Crops share the allocation", "[unit][buffer]") {
  Buffer<int> b(10, 4);
  b.fill(7);
  Buffer<int> c = b.cropped(0, 3, 5).cropped(1, 1, 2);
  CHECK(c.min(0) == 3);
  CHECK(c.extent(0) == 5);
  CHECK(c.min(1) == 1);
  CHECK(c.extent(1) == 2);
  c(4, 2) = 42;
  CHECK(b(4, 2) == 42);
  CHECK(c.data() == &b(3, 1));
  CHECK_THROWS_WITH(b.cropped(0, 8, 5), Catch::Contains("outside [0, 10)"));
  CHECK_THROWS_AS(Buffer<int>(-1, 3), std::invalid_argument);
  CHECK_THROWS_AS(Buffer<float>(RawBuffer(buffer_type_of<int>(), {4})), std::invalid_argument);
}
