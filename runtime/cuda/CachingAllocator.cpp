#include "CachingAllocator.h"

#include <algorithm>

namespace ptxjit::runtime::cuda {

size_t CachingAllocator::size_class(size_t bytes) {
  constexpr size_t Smallest = 512, Large = size_t(2) << 20;
  if (bytes <= Smallest)
    return Smallest;
  if (bytes >= Large)
    return (bytes + Large - 1) / Large * Large;
  size_t c = Smallest;
  while (c < bytes)
    c *= 2;
  return c;
}

CachingAllocator::~CachingAllocator() {
  std::lock_guard<std::mutex> lock(Mutex);
  trimLocked(0);
}

int CachingAllocator::allocate(size_t bytes, uint64_t *out) {
  size_t c = size_class(bytes);
  std::lock_guard<std::mutex> lock(Mutex);
  if (auto it = Cached.find(c); it != Cached.end()) {
    *out = it->second;
    Cached.erase(it);
  } else {
    int r = TheBackend.allocate(c, out);
    if (r != 0) {
      trimLocked(0);
      r = TheBackend.allocate(c, out);
    }
    if (r != 0) {
      ++Stats.failed_allocations;
      return r;
    }
    ++Stats.backend_allocations;
    Stats.reserved_bytes += c;
  }
  Live[*out] = c;
  ++Stats.allocations;
  Stats.used_bytes += c;
  Stats.high_water_bytes = std::max(Stats.high_water_bytes, Stats.used_bytes);
  return 0;
}

int CachingAllocator::release(uint64_t pointer) {
  std::lock_guard<std::mutex> lock(Mutex);
  auto it = Live.find(pointer);
  if (it == Live.end())
    return -1; // not ours
  Cached.emplace(it->second, pointer);
  Stats.used_bytes -= it->second;
  ++Stats.frees;
  Live.erase(it);
  return 0;
}

bool CachingAllocator::holds(uint64_t pointer) const {
  std::lock_guard<std::mutex> lock(Mutex);
  return Live.count(pointer) != 0;
}

void CachingAllocator::trim(size_t keep) {
  std::lock_guard<std::mutex> lock(Mutex);
  trimLocked(keep);
}

void CachingAllocator::trimLocked(size_t keep) {
  // Largest blocks first: they give back the most for each call.
  while (!Cached.empty() && Stats.reserved_bytes - Stats.used_bytes > keep) {
    auto it = std::prev(Cached.end());
    TheBackend.free(it->second);
    Stats.reserved_bytes -= it->first;
    Cached.erase(it);
  }
}

CachingAllocator::Statistics CachingAllocator::statistics() const {
  std::lock_guard<std::mutex> lock(Mutex);
  return Stats;
}

} // namespace ptxjit::runtime::cuda
