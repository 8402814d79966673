#include "DiskCache.h"

#include "ptxjit/RuntimeError.h"

#include <llvm/Support/SHA256.h>
#include <llvm/Support/xxhash.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <thread>
#include <vector>

namespace ptxjit::jit {

namespace {

namespace fs = std::filesystem;

// An entry: the header, then the identity, then the payload.
struct EntryHeader {
  char magic[8];
  uint64_t identity_bytes;
  uint64_t payload_bytes;
  uint64_t checksum; // of the identity and the payload
};
constexpr char EntryMagic[8] = {'P', 'T', 'X', 'J', 'I', 'T', 'C', '1'};
constexpr const char *EntrySuffix = ".entry";
constexpr const char *TemporaryPrefix = ".tmp-";

uint64_t checksum(const std::string &identity, const std::string &payload) {
  auto bytes = [](const std::string &s) {
    return llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(s.data()), s.size());
  };
  return llvm::xxh3_64bits(bytes(identity)) * 0x9E3779B97F4A7C15ull + llvm::xxh3_64bits(bytes(payload));
}

std::string hexName(const std::string &identity) {
  std::array<uint8_t, 32> digest = llvm::SHA256::hash(
      llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(identity.data()), identity.size()));
  static const char digits[] = "0123456789abcdef";
  std::string name;
  for (size_t i = 0; i < 16; ++i) {
    name += digits[digest[i] >> 4];
    name += digits[digest[i] & 15];
  }
  return name;
}

bool readWhole(const std::string &path, std::string &out) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  struct stat st;
  bool ok = ::fstat(fd, &st) == 0 && st.st_size >= 0;
  if (ok) {
    out.resize(size_t(st.st_size));
    size_t done = 0;
    while (ok && done < out.size()) {
      ssize_t n = ::read(fd, out.data() + done, out.size() - done);
      if (n < 0 && errno == EINTR)
        continue;
      ok = n > 0;
      if (ok)
        done += size_t(n);
    }
  }
  ::close(fd);
  return ok;
}

bool writeWhole(int fd, const char *data, size_t size) {
  while (size > 0) {
    ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    data += n;
    size -= size_t(n);
  }
  return true;
}

uint64_t parseBytes(const char *variable, const char *text) {
  char *end = nullptr;
  errno = 0;
  unsigned long long value = std::strtoull(text, &end, 10);
  uint64_t scale = 1;
  if (end != text && *end) {
    switch (*end) {
    case 'K': case 'k': scale = uint64_t(1) << 10; break;
    case 'M': case 'm': scale = uint64_t(1) << 20; break;
    case 'G': case 'g': scale = uint64_t(1) << 30; break;
    default: end = const_cast<char *>(text); break;
    }
    if (end != text)
      ++end;
  }
  if (end == text || *end || errno != 0 || text[0] == '-' || value > UINT64_MAX / scale)
    throw RuntimeError(std::string(variable) + " must be a number of bytes (optionally with K, M or G), not '" + text +
                       "'");
  return uint64_t(value) * scale;
}

} // namespace

DiskCache::Settings DiskCache::settings_from_environment() {
  Settings s;
  if (const char *on = std::getenv("PTXJIT_CACHE")) {
    if (std::strcmp(on, "0") != 0 && std::strcmp(on, "1") != 0)
      throw RuntimeError(std::string("PTXJIT_CACHE must be 0 or 1, not '") + on + "'");
    s.enabled = on[0] == '1';
  }
  if (const char *dir = std::getenv("PTXJIT_CACHE_DIR"); dir && *dir)
    s.directory = dir;
  else if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    s.directory = std::string(xdg) + "/ptxjit";
  else if (const char *home = std::getenv("HOME"); home && *home)
    s.directory = std::string(home) + "/.cache/ptxjit";
  else
    s.enabled = false; // nowhere to put it
  if (const char *max = std::getenv("PTXJIT_CACHE_MAX_BYTES"))
    s.max_bytes = parseBytes("PTXJIT_CACHE_MAX_BYTES", max);
  return s;
}

DiskCache &DiskCache::process() {
  static DiskCache *cache = new DiskCache(settings_from_environment()); // lives as long as the process
  return *cache;
}

DiskCache::DiskCache(Settings settings) : Config(std::move(settings)) {}

bool DiskCache::enabled() const {
  std::lock_guard<std::mutex> lock(Mutex);
  return Config.enabled;
}

DiskCache::Settings DiskCache::settings() const {
  std::lock_guard<std::mutex> lock(Mutex);
  return Config;
}

void DiskCache::configure(Settings settings) {
  std::lock_guard<std::mutex> lock(Mutex);
  Config = std::move(settings);
  Warned = false;
  EstimatedBytes.reset();
}

std::string DiskCache::entry_path(const std::string &identity) const {
  std::lock_guard<std::mutex> lock(Mutex);
  return Config.directory + "/" + hexName(identity) + EntrySuffix;
}

std::optional<std::string> DiskCache::find(const std::string &identity) {
  Settings s = settings();
  if (!s.enabled)
    return std::nullopt;
  const std::string path = s.directory + "/" + hexName(identity) + EntrySuffix;
  std::string file;
  if (!readWhole(path, file)) {
    Counters.misses.fetch_add(1, std::memory_order_relaxed);
    return std::nullopt;
  }
  EntryHeader header;
  bool valid = file.size() >= sizeof(header);
  if (valid) {
    std::memcpy(&header, file.data(), sizeof(header));
    valid = std::memcmp(header.magic, EntryMagic, sizeof(EntryMagic)) == 0 &&
            header.identity_bytes <= file.size() && header.payload_bytes <= file.size() &&
            sizeof(header) + header.identity_bytes + header.payload_bytes == file.size();
  }
  std::string storedIdentity, payload;
  if (valid) {
    storedIdentity = file.substr(sizeof(header), header.identity_bytes);
    payload = file.substr(sizeof(header) + header.identity_bytes);
    valid = checksum(storedIdentity, payload) == header.checksum;
  }
  if (!valid) {
    Counters.rejected.fetch_add(1, std::memory_order_relaxed);
    Counters.misses.fetch_add(1, std::memory_order_relaxed);
    return std::nullopt;
  }
  if (storedIdentity != identity) { // another key with the same hash: a miss
    Counters.misses.fetch_add(1, std::memory_order_relaxed);
    return std::nullopt;
  }
  ::utimensat(AT_FDCWD, path.c_str(), nullptr, 0); // now the most recently used; best effort
  Counters.hits.fetch_add(1, std::memory_order_relaxed);
  Counters.bytes_read.fetch_add(file.size(), std::memory_order_relaxed);
  return payload;
}

void DiskCache::store(const std::string &identity, const std::string &payload,
                      const std::function<void(const char *)> &warn) {
  Settings s = settings();
  if (!s.enabled)
    return;
  const std::string name = hexName(identity) + EntrySuffix;
  static std::atomic<uint64_t> serial{0};
  const std::string temporary = s.directory + "/" + TemporaryPrefix + std::to_string(::getpid()) + "-" +
                                std::to_string(serial.fetch_add(1)) + "-" + name;
  std::string failure;
  std::error_code error;
  fs::create_directories(s.directory, error);
  if (error) {
    failure = "cannot create " + s.directory + ": " + error.message();
  } else {
    EntryHeader header;
    std::memcpy(header.magic, EntryMagic, sizeof(EntryMagic));
    header.identity_bytes = identity.size();
    header.payload_bytes = payload.size();
    header.checksum = checksum(identity, payload);
    int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) {
      failure = "cannot write in " + s.directory + ": " + std::strerror(errno);
    } else {
      bool written = writeWhole(fd, reinterpret_cast<const char *>(&header), sizeof(header)) &&
                     writeWhole(fd, identity.data(), identity.size()) && writeWhole(fd, payload.data(), payload.size());
      int savedErrno = errno;
      written = ::close(fd) == 0 && written;
      if (!written || ::rename(temporary.c_str(), (s.directory + "/" + name).c_str()) != 0) {
        failure = "cannot write " + s.directory + "/" + name + ": " + std::strerror(written ? errno : savedErrno);
        ::unlink(temporary.c_str());
      }
    }
  }
  if (!failure.empty()) {
    bool first = false;
    {
      std::lock_guard<std::mutex> lock(Mutex);
      first = !Warned;
      Warned = true;
    }
    if (first) {
      std::string message = "ptxjit: the compile cache is not used: " + failure + " (set PTXJIT_CACHE_DIR, or PTXJIT_CACHE=0)\n";
      if (warn)
        warn(message.c_str());
      else
        std::fputs(message.c_str(), stderr);
    }
    return;
  }
  const uint64_t written = sizeof(EntryHeader) + identity.size() + payload.size();
  Counters.stores.fetch_add(1, std::memory_order_relaxed);
  Counters.bytes_written.fetch_add(written, std::memory_order_relaxed);
  // The directory is measured on the first store and whenever what this process wrote since may
  // have taken it past the cap, not on every store: a scan of a large cache costs milliseconds.
  bool scan = false;
  {
    std::lock_guard<std::mutex> lock(Mutex);
    scan = !EstimatedBytes || *EstimatedBytes + written > s.max_bytes;
    EstimatedBytes = EstimatedBytes.value_or(0) + written;
  }
  if (scan) {
    uint64_t remaining = evictBeyond(s.max_bytes, s.directory);
    std::lock_guard<std::mutex> lock(Mutex);
    EstimatedBytes = remaining;
  }
}

uint64_t DiskCache::evictBeyond(uint64_t maxBytes, const std::string &directory) {
  struct File {
    fs::file_time_type used;
    uint64_t bytes;
    fs::path path;
  };
  std::vector<File> entries;
  uint64_t total = 0;
  std::error_code error;
  const auto now = fs::file_time_type::clock::now();
  for (fs::directory_iterator it(directory, error), end; !error && it != end; it.increment(error)) {
    const fs::path &path = it->path();
    const std::string file = path.filename().string();
    std::error_code statError;
    fs::file_time_type used = it->last_write_time(statError);
    uint64_t bytes = it->file_size(statError);
    if (statError)
      continue; // removed meanwhile by another process
    if (file.rfind(TemporaryPrefix, 0) == 0) {
      // A writer that died mid-entry leaves its temporary file; an hour is long past any write.
      if (now - used > std::chrono::hours(1))
        fs::remove(path, statError);
      continue;
    }
    if (file.size() <= std::strlen(EntrySuffix) ||
        file.compare(file.size() - std::strlen(EntrySuffix), std::string::npos, EntrySuffix) != 0)
      continue;
    entries.push_back({used, bytes, path});
    total += bytes;
  }
  if (total <= maxBytes)
    return total;
  std::sort(entries.begin(), entries.end(), [](const File &a, const File &b) { return a.used < b.used; });
  for (const File &f : entries) {
    if (total <= maxBytes)
      break;
    std::error_code removeError;
    if (fs::remove(f.path, removeError))
      Counters.evictions.fetch_add(1, std::memory_order_relaxed);
    total -= f.bytes; // gone, whether this process or another removed it
  }
  return total;
}

} // namespace ptxjit::jit
