#ifndef PTXJIT_TEST_TEMPORARYCOMPILECACHE_H
#define PTXJIT_TEST_TEMPORARYCOMPILECACHE_H

// Points the compile cache at a directory of this run's own, unless PTXJIT_CACHE_DIR names
// one, and removes it at the end: every run compiles what it tests (a cache from an earlier run
// would skip lowering), while pipelines within the run, and child processes, share it.

#include <cstdlib>
#include <filesystem>
#include <string>

namespace ptxjit::test {

class TemporaryCompileCache {
public:
  TemporaryCompileCache() {
    if (std::getenv("PTXJIT_CACHE_DIR"))
      return;
    std::string pattern = (std::filesystem::temp_directory_path() / "ptxjit-test-cache-XXXXXX").string();
    if (mkdtemp(pattern.data())) {
      Directory = pattern;
      setenv("PTXJIT_CACHE_DIR", Directory.c_str(), 1);
    }
  }
  ~TemporaryCompileCache() {
    std::error_code ignored;
    if (!Directory.empty())
      std::filesystem::remove_all(Directory, ignored);
  }
  TemporaryCompileCache(const TemporaryCompileCache &) = delete;
  TemporaryCompileCache &operator=(const TemporaryCompileCache &) = delete;

private:
  std::string Directory;
};

} // namespace ptxjit::test

#endif
