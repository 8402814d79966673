#include "ReportError.h"

#include "CallContext.h"

#include <cstdio>

namespace ptxjit::runtime {

void report_error(void *context, const std::string &message) {
  auto *call = static_cast<ptxjit_call_context *>(context);
  if (call && call->error)
    call->error(call->user_context, message.c_str());
  else
    std::fprintf(stderr, "ptxjit: %s\n", message.c_str());
}

} // namespace ptxjit::runtime
