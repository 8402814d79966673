#include "Bindings.h"

NB_MODULE(_ptxjit, m) {
  using namespace ptxjit::python;
  m.doc() = "ptxjit's C++ API; import ptxjit, which adds the NumPy and DLPack conveniences.";
  bind_errors(m);
  bind_expr(m);
  bind_params(m);
  bind_func(m);
  bind_buffer(m);
  bind_pipeline(m);
  bind_handlers(m);
}
