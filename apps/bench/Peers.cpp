#include "Peers.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace bench {

std::optional<std::string> run_peer(const std::string &program, const std::string &arguments) {
  std::error_code error;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error)
    return std::nullopt;
  std::filesystem::path path = self.parent_path() / program;
  if (!std::filesystem::exists(path, error))
    return std::nullopt;
  std::string command = "'" + path.string() + "' " + arguments;
  FILE *pipe = popen(command.c_str(), "r");
  if (!pipe)
    return std::nullopt;
  std::string out;
  char chunk[512];
  while (size_t n = std::fread(chunk, 1, sizeof chunk, pipe))
    out.append(chunk, n);
  if (pclose(pipe) != 0 || out.empty())
    return std::nullopt;
  while (!out.empty() && (out.back() == '\n' || out.back() == ' '))
    out.pop_back();
  return out;
}

} // namespace bench
