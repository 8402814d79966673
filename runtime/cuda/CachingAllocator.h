#ifndef PTXJIT_RUNTIME_CUDA_CACHINGALLOCATOR_H
#define PTXJIT_RUNTIME_CUDA_CACHINGALLOCATOR_H

// Keeps freed blocks for reuse, for devices without stream-ordered pools: sizes are rounded to
// classes (powers of two from 512 bytes, then multiples of 2 MiB), a request takes a cached block
// of its class before asking the backend, and trim gives cached blocks back. The backend is
// injected, so the bookkeeping is tested without a device. Thread-safe.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <vector>

namespace ptxjit::runtime::cuda {

class CachingAllocator {
public:
  struct Backend {
    std::function<int(size_t bytes, uint64_t *out)> allocate; ///< 0 on success
    std::function<int(uint64_t pointer)> free;
  };
  struct Statistics {
    uint64_t reserved_bytes = 0, used_bytes = 0, high_water_bytes = 0;
    uint64_t allocations = 0, frees = 0, failed_allocations = 0, backend_allocations = 0;
  };

  explicit CachingAllocator(Backend backend) : TheBackend(std::move(backend)) {}
  ~CachingAllocator();

  /// 0 on success; out of memory frees the cache and asks the backend once more.
  int allocate(size_t bytes, uint64_t *out);
  /// The block goes back to the cache; the caller guarantees the device is done with it.
  int release(uint64_t pointer);
  /// Whether `pointer` is a block this allocator handed out and has not had back.
  bool holds(uint64_t pointer) const;
  /// Gives cached blocks back to the backend until at most `keep` bytes are reserved unused.
  void trim(size_t keep);
  Statistics statistics() const;

  static size_t size_class(size_t bytes);

private:
  Backend TheBackend;
  mutable std::mutex Mutex; // guards everything below
  std::multimap<size_t, uint64_t> Cached; // free blocks by size class
  std::map<uint64_t, size_t> Live;        // allocated blocks and their size class
  Statistics Stats;
  void trimLocked(size_t keep);
};

} // namespace ptxjit::runtime::cuda

#endif
