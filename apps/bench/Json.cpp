#include "Json.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace bench {

std::string json_number(double v) {
  if (!std::isfinite(v))
    return "null";
  char text[64];
  std::snprintf(text, sizeof text, "%.4f", v);
  return text;
}

std::string json_string(const std::string &s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
      out += escaped;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

double json_field(const std::string &text, const std::string &key) {
  size_t at = text.find("\"" + key + "\"");
  if (at == std::string::npos)
    return NAN;
  const char *value = text.c_str() + text.find(':', at) + 1;
  char *end = nullptr;
  double v = std::strtod(value, &end);
  return end == value ? NAN : v;
}

} // namespace bench
