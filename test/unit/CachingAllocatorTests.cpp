// The caching allocator's bookkeeping, with a fake backend in place of the device.

#include "cuda/CachingAllocator.h"

#include <catch2/catch.hpp>

#include <set>

using ptxjit::runtime::cuda::CachingAllocator;

namespace {

struct FakeDevice {
  std::set<uint64_t> Live;
  uint64_t Next = 0x1000, Capacity = uint64_t(64) << 20, InUse = 0;
  int Allocations = 0, Frees = 0;
  std::map<uint64_t, size_t> Sizes;
  CachingAllocator::Backend backend() {
    return {[this](size_t bytes, uint64_t *out) {
              if (InUse + bytes > Capacity)
                return 2; // out of memory
              *out = Next;
              Next += bytes;
              InUse += bytes;
              Sizes[*out] = bytes;
              Live.insert(*out);
              ++Allocations;
              return 0;
            },
            [this](uint64_t p) {
              InUse -= Sizes.at(p);
              Live.erase(p);
              ++Frees;
              return 0;
            }};
  }
};

} // namespace

TEST_CASE("Size classes", "[unit][allocator]") {
  CHECK(CachingAllocator::size_class(1) == 512);
  CHECK(CachingAllocator::size_class(513) == 1024);
  CHECK(CachingAllocator::size_class(4096) == 4096);
  CHECK(CachingAllocator::size_class((1 << 20) + 1) == (2 << 20));
  CHECK(CachingAllocator::size_class((2 << 20) + 1) == (4 << 20));
}

TEST_CASE("Freed blocks are reused; trim and out of memory give them back", "[unit][allocator]") {
  FakeDevice device;
  {
    CachingAllocator allocator(device.backend());
    uint64_t a = 0, b = 0, c = 0;
    REQUIRE(allocator.allocate(3000, &a) == 0);
    REQUIRE(allocator.allocate(100 << 10, &b) == 0);
    CHECK(allocator.holds(a));
    REQUIRE(allocator.release(a) == 0);
    CHECK_FALSE(allocator.holds(a)); // cached, no longer handed out
    CHECK(allocator.holds(b));
    REQUIRE(allocator.allocate(4000, &c) == 0); // same class as 3000: reused
    CHECK(c == a);
    CHECK(allocator.holds(c));
    CHECK(device.Allocations == 2);
    CHECK(allocator.release(12345) != 0); // not one of its blocks
    auto s = allocator.statistics();
    CHECK(s.allocations == 3);
    CHECK(s.frees == 1);
    CHECK(s.backend_allocations == 2);
    CHECK(s.used_bytes == 4096 + (128 << 10));
    CHECK(s.reserved_bytes == s.used_bytes);

    // Steady state: the same sizes again and again ask the backend for nothing.
    for (int i = 0; i < 100; ++i) {
      uint64_t p = 0;
      REQUIRE(allocator.allocate(70 << 10, &p) == 0);
      REQUIRE(allocator.release(p) == 0);
    }
    CHECK(device.Allocations == 3);

    allocator.release(b);
    allocator.release(c);
    CHECK(allocator.statistics().used_bytes == 0);
    allocator.trim(0);
    CHECK(allocator.statistics().reserved_bytes == 0);
    CHECK(device.Live.empty());

    // Out of memory: cached blocks are freed and the request tried again.
    uint64_t big = 0, other = 0;
    REQUIRE(allocator.allocate(40 << 20, &big) == 0);
    REQUIRE(allocator.release(big) == 0); // cached, still reserved
    REQUIRE(allocator.allocate(50 << 20, &other) == 0);
    CHECK(allocator.statistics().reserved_bytes == (50u << 20));
    uint64_t tooBig = 0;
    CHECK(allocator.allocate(100 << 20, &tooBig) != 0);
    CHECK(allocator.statistics().failed_allocations == 1);
    CHECK(allocator.statistics().used_bytes == (50u << 20));
    allocator.release(other);
  }
  CHECK(device.Live.empty()); // the destructor gave everything back
  CHECK(device.Allocations == device.Frees);
}
