#ifndef PTXJIT_RUNTIME_REPORTERROR_H
#define PTXJIT_RUNTIME_REPORTERROR_H

#include <string>

namespace ptxjit::runtime {

/// Passes `message` to the call's error handler (`context` is a ptxjit_call_context *).
void report_error(void *context, const std::string &message);
/// Passes `message` to the call's print handler (print() in a pipeline).
void report_print(void *context, const std::string &message);

} // namespace ptxjit::runtime

#endif
