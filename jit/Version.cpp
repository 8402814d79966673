#include "ptxjit/Version.h"

namespace ptxjit {

const char *version() { return PTXJIT_VERSION_STRING; }

} // namespace ptxjit
