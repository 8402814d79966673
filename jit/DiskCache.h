#ifndef PTXJIT_JIT_DISKCACHE_H
#define PTXJIT_JIT_DISKCACHE_H

// Compiled code kept on disk across processes: one file an entry, named by a hash of the entry's
// identity (the full text of its key, stored in the entry and compared on every read, so a hash
// collision is a miss, never a wrong hit). An entry is written to a temporary file and renamed
// into place, so readers in other threads and processes see a whole entry or none; a checksum
// over the identity and the payload turns a truncated or corrupted file into a miss (the next
// store rewrites it). A hit refreshes the entry's modification time; stores beyond the size cap
// delete the least recently used entries. A cache that cannot be written warns once and
// compilation goes on without it: the cache never fails a compile.
//
// Configuration from the environment, read once: PTXJIT_CACHE=0 disables it; PTXJIT_CACHE_DIR,
// else $XDG_CACHE_HOME/ptxjit, else $HOME/.cache/ptxjit; PTXJIT_CACHE_MAX_BYTES (default 1 GiB).

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>

namespace ptxjit::jit {

struct DiskCacheCounters {
  std::atomic<uint64_t> hits{0}, misses{0}, stores{0}, bytes_read{0}, bytes_written{0}, evictions{0},
      rejected{0};
};

class DiskCache {
public:
  struct Settings {
    bool enabled = true;
    std::string directory;
    uint64_t max_bytes = uint64_t(1) << 30;
  };
  /// The settings PTXJIT_CACHE, PTXJIT_CACHE_DIR, XDG_CACHE_HOME, HOME and
  /// PTXJIT_CACHE_MAX_BYTES give; a malformed value throws RuntimeError naming it.
  static Settings settings_from_environment();

  /// The process's cache, configured from the environment on first use.
  static DiskCache &process();

  explicit DiskCache(Settings settings);

  bool enabled() const;
  /// The payload stored under `identity`, or nothing (absent, damaged, or another identity).
  std::optional<std::string> find(const std::string &identity);
  /// Stores `payload` under `identity`. A failure to write warns once through `warn` (or stderr)
  /// and is otherwise ignored.
  void store(const std::string &identity, const std::string &payload,
             const std::function<void(const char *)> &warn = nullptr);
  /// Replaces the settings (tests point the process's cache at a directory of their own).
  void configure(Settings settings);
  Settings settings() const;
  const DiskCacheCounters &counters() const { return Counters; }
  /// The path of the file that holds (or would hold) `identity`.
  std::string entry_path(const std::string &identity) const;

private:
  /// Deletes the least recently used entries while the directory holds more than `maxBytes`;
  /// returns what it holds then.
  uint64_t evictBeyond(uint64_t maxBytes, const std::string &directory);

  mutable std::mutex Mutex; // guards Config, Warned and EstimatedBytes
  Settings Config;
  bool Warned = false;
  /// The directory's size when last measured plus what this process stored since.
  std::optional<uint64_t> EstimatedBytes;
  DiskCacheCounters Counters;
};

} // namespace ptxjit::jit

#endif
