#ifndef PTXJIT_LANG_UNIQUENAME_H
#define PTXJIT_LANG_UNIQUENAME_H

#include <string>

namespace ptxjit {

/// `prefix` followed by a process-wide counter (atomic), for unnamed Vars, Funcs and params.
std::string unique_name(const char *prefix);

} // namespace ptxjit

#endif
