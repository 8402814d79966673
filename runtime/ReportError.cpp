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

void report_print(void *context, const std::string &message) {
  auto *call = static_cast<ptxjit_call_context *>(context);
  if (call && call->print)
    call->print(call->user_context, message.c_str());
  else
    std::fputs(message.c_str(), stderr);
}

} // namespace ptxjit::runtime
