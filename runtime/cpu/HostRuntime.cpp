#include "HostRuntime.h"

#include "ThreadPool.h"
#include "ReportError.h"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

void reportError(void *context, const std::string &message) { ptxjit::runtime::report_error(context, message); }

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

int32_t ptxjit_do_par_for(void *context, ptxjit_task_fn task, int32_t min, int32_t extent, uint8_t *closure) {
  return ptxjit::runtime::ThreadPool::instance().parallel_for(context, task, min, extent, closure);
}

} // extern "C"
