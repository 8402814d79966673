#include "OpaqueNegations.h"

namespace ptxjit::codegen {

namespace {

bool isRegisterCharacter(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '%' ||
         c == '$';
}

// The register at `position` (advanced past it), or an empty string.
std::string registerAt(const std::string &text, size_t &position) {
  size_t start = position;
  while (position < text.size() && isRegisterCharacter(text[position]))
    ++position;
  return start < position && text[start] == '%' ? text.substr(start, position - start) : std::string();
}

} // namespace

std::string make_negations_opaque(const std::string &ptx) {
  std::string out;
  out.reserve(ptx.size() + ptx.size() / 16);
  size_t lineStart = 0;
  while (lineStart < ptx.size()) {
    size_t lineEnd = ptx.find('\n', lineStart);
    lineEnd = lineEnd == std::string::npos ? ptx.size() : lineEnd + 1;
    // LLVM writes an instruction as "\tneg.s32 \t%r2, %r1;".
    size_t p = ptx.find_first_not_of(" \t", lineStart);
    const char *width = nullptr;
    if (p != std::string::npos && ptx.compare(p, 5, "neg.s") == 0) {
      if (ptx.compare(p + 5, 2, "32") == 0)
        width = "32";
      else if (ptx.compare(p + 5, 2, "16") == 0)
        width = "16";
    }
    if (width) {
      size_t q = ptx.find_first_not_of(" \t", p + 7);
      std::string destination = q == std::string::npos ? "" : registerAt(ptx, q);
      if (q < ptx.size() && ptx[q] == ',')
        q = ptx.find_first_not_of(" \t", q + 1);
      std::string source = q == std::string::npos || destination.empty() ? "" : registerAt(ptx, q);
      if (!source.empty() && q < ptx.size() && ptx[q] == ';') {
        out += "\tnot.b" + std::string(width) + " \t" + destination + ", " + source + ";\n";
        out += "\tadd.s" + std::string(width) + " \t" + destination + ", " + destination + ", 1;\n";
        lineStart = lineEnd;
        continue;
      }
    }
    out.append(ptx, lineStart, lineEnd - lineStart);
    lineStart = lineEnd;
  }
  return out;
}

} // namespace ptxjit::codegen
