#include "Bindings.h"

namespace ptxjit::python {

// ptxjit's exceptions as Python exceptions of the same names and messages. RuntimeError derives
// from Python's RuntimeError and TargetError from ValueError (std::invalid_argument), so that
// code catching the built-in kinds catches them too.
void bind_errors(nb::module_ &m) {
  nb::exception<CompileError>(m, "CompileError");
  nb::exception<InternalError>(m, "InternalError");
  nb::exception<RuntimeError>(m, "RuntimeError", PyExc_RuntimeError);
  nb::exception<TargetError>(m, "TargetError", PyExc_ValueError);
}

} // namespace ptxjit::python
