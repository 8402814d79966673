#include "RuntimeInterface.h"

#include "CallContext.h"
#include "ThreadPool.h"
#include "ReportError.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

void reportError(void *context, const std::string &message) { ptxjit::runtime::report_error(context, message); }

// `format` with each "%i", "%u" or "%f" replaced by the next of `values` (a signed or unsigned
// integer, or the bits of a double), and "%%" by '%'.
std::string formatTyped(const char *format, int32_t count, const uint64_t *values) {
  std::string message;
  int32_t next = 0;
  for (const char *c = format; *c; ++c) {
    if (*c != '%') {
      message += *c;
      continue;
    }
    const char kind = *++c;
    if (kind == '\0')
      break;
    if (kind == '%' || next >= count) {
      message += '%';
      continue;
    }
    char text[400]; // the longest: -DBL_MAX as %f, 317 characters
    const uint64_t slot = values[next++];
    if (kind == 'f') {
      double value;
      std::memcpy(&value, &slot, sizeof value);
      std::snprintf(text, sizeof text, "%f", value);
    } else if (kind == 'i') {
      std::snprintf(text, sizeof text, "%lld", static_cast<long long>(slot));
    } else {
      std::snprintf(text, sizeof text, "%llu", static_cast<unsigned long long>(slot));
    }
    message += text;
  }
  return message;
}

} // namespace

extern "C" {

void *ptxjit_malloc(void *context, uint64_t bytes, const char *what) {
  uint64_t rounded = (bytes + 63) / 64 * 64;
  void *p = rounded >= bytes ? std::aligned_alloc(64, rounded ? rounded : 64) : nullptr;
  if (!p)
    reportError(context, "out of memory allocating " + std::to_string(bytes) + " bytes for " + what);
  return p;
}

void ptxjit_free(void *, void *pointer) { std::free(pointer); }

void ptxjit_assert_failed(void *context, const char *format, int32_t count, const int64_t *values) {
  std::string message;
  int32_t next = 0;
  for (const char *c = format; *c; ++c) {
    if (*c == '%' && next < count)
      message += std::to_string(values[next++]);
    else
      message += *c;
  }
  reportError(context, message);
}

void ptxjit_print(void *context, const char *format, int32_t count, const uint64_t *values) {
  ptxjit::runtime::report_print(context, formatTyped(format, count, values));
}

void ptxjit_require_failed(void *context, const char *format, int32_t count, const uint64_t *values) {
  reportError(context, formatTyped(format, count, values));
}

int32_t ptxjit_do_par_for(void *context, ptxjit_task_fn task, int32_t min, int32_t extent, uint8_t *closure) {
  return ptxjit::runtime::ThreadPool::instance().parallel_for(context, task, min, extent, closure);
}

} // extern "C"
