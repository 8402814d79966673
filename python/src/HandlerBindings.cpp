#include "Bindings.h"

#include <nanobind/stl/string.h>

namespace ptxjit::python {

bool python_usable() {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsInitialized() && !Py_IsFinalizing();
#else
  return Py_IsInitialized() && !_Py_IsFinalizing();
#endif
}

namespace {

// The callables of the process-wide default handlers (pj.set_default_handlers). Never freed: a
// Buffer's device memory may be freed from a static destructor after Python has finalized, when
// the trampolines no longer call them. Read and written with the GIL held.
PythonHandlers &defaults() {
  static auto *handlers = new PythonHandlers;
  return *handlers;
}

uintptr_t handleFrom(nb::handle value, const char *handler) {
  if (value.is_none())
    throw nb::type_error((std::string("the ") + handler + " handler returned None, not a handle (an int)").c_str());
  return nb::cast<uintptr_t>(nb::int_(value)); // ints, and objects with __int__ (cuda-python's)
}

// Calls a handler's callable with the GIL held. A Python exception becomes the nonzero return
// that fails the realize: a call's handler keeps it for realize to raise from; a default
// handler's is reported as unraisable, as it may serve a call from C++ or a Buffer's destructor.
template <typename Body> int run(JITUserContext *context, bool scoped, const char *handler, Body body) {
  if (!python_usable())
    return 1;
  nb::gil_scoped_acquire locked;
  PythonCall *call = scoped ? static_cast<PythonCall *>(context) : nullptr;
  try {
    body(call ? call->python : defaults());
    return 0;
  } catch (nb::python_error &e) {
    if (call && !call->raised.is_valid())
      call->raised = nb::borrow(e.value());
    else if (!call)
      e.discard_as_unraisable(handler);
  } catch (const std::exception &e) { // a result of the wrong kind
    nb::object error = nb::borrow(PyExc_TypeError)(nb::str(e.what()));
    if (call && !call->raised.is_valid())
      call->raised = error;
    else if (!call)
      PyErr_WriteUnraisable(error.ptr());
  }
  return 1;
}

template <bool Scoped> void print(JITUserContext *context, const char *message) {
  run(context, Scoped, "print", [&](PythonHandlers &h) { h.print(nb::str(message)); });
}

template <bool Scoped> void error(JITUserContext *context, const char *message) {
  run(context, Scoped, "error", [&](PythonHandlers &h) { h.error(nb::str(message)); });
}

template <bool Scoped> int acquireContext(JITUserContext *context, CUcontext *out, bool create) {
  return run(context, Scoped, "acquire_context", [&](PythonHandlers &h) {
    *out = reinterpret_cast<CUcontext>(handleFrom(h.acquire_context(create), "acquire_context"));
  });
}

template <bool Scoped> int releaseContext(JITUserContext *context) {
  return run(context, Scoped, "release_context", [&](PythonHandlers &h) { h.release_context(); });
}

template <bool Scoped> int getStream(JITUserContext *context, CUcontext cuda, CUstream *out) {
  return run(context, Scoped, "get_stream", [&](PythonHandlers &h) {
    *out = reinterpret_cast<CUstream>(handleFrom(h.get_stream(reinterpret_cast<uintptr_t>(cuda)), "get_stream"));
  });
}

int deviceMalloc(JITUserContext *context, CUcontext cuda, CUstream stream, size_t bytes, CUdeviceptr *out) {
  return run(context, false, "device_malloc", [&](PythonHandlers &h) {
    *out = handleFrom(h.device_malloc(reinterpret_cast<uintptr_t>(cuda), reinterpret_cast<uintptr_t>(stream), bytes),
                      "device_malloc");
  });
}

int deviceFree(JITUserContext *context, CUcontext cuda, CUstream stream, CUdeviceptr pointer) {
  if (!python_usable()) // the process is exiting: the allocator went with Python
    return 0;
  return run(context, false, "device_free", [&](PythonHandlers &h) {
    h.device_free(reinterpret_cast<uintptr_t>(cuda), reinterpret_cast<uintptr_t>(stream), uint64_t(pointer));
  });
}

bool set(const nb::object &callable) { return callable.is_valid() && !callable.is_none(); }

} // namespace

void install_python_handlers(PythonCall &call) {
  const PythonHandlers &h = call.python;
  if (set(h.device_malloc) || set(h.device_free))
    throw nb::value_error("device_malloc and device_free serve memory that outlives a call (a Buffer's device copy): "
                          "set them for the process with ptxjit.set_default_handlers");
  if (set(h.print))
    call.handlers.print = print<true>;
  if (set(h.error))
    call.handlers.error = error<true>;
  if (set(h.acquire_context))
    call.handlers.acquire_context = acquireContext<true>;
  if (set(h.release_context))
    call.handlers.release_context = releaseContext<true>;
  if (set(h.get_stream))
    call.handlers.get_stream = getStream<true>;
}

void bind_handlers(nb::module_ &m) {
  auto handlers = nb::class_<PythonHandlers>(m, "Handlers",
      "Python callables standing in for ptxjit's handlers; None keeps the next one (the pipeline's, the default, "
      "the built-in). Contexts, streams and pointers are ints. print(message), error(message), "
      "acquire_context(create) -> context, release_context(), get_stream(context) -> stream, "
      "device_malloc(context, stream, nbytes) -> pointer, device_free(context, stream, pointer).");
  handlers.def(
      "__init__",
      [](PythonHandlers *self, nb::object print, nb::object error, nb::object acquire, nb::object release,
         nb::object stream, nb::object malloc, nb::object free) {
        new (self) PythonHandlers{print, error, acquire, release, stream, malloc, free};
      },
      nb::kw_only(), nb::arg("print") = nb::none(), nb::arg("error") = nb::none(),
      nb::arg("acquire_context") = nb::none(), nb::arg("release_context") = nb::none(),
      nb::arg("get_stream") = nb::none(), nb::arg("device_malloc") = nb::none(), nb::arg("device_free") = nb::none());
  handlers.def_rw("print", &PythonHandlers::print, nb::arg().none())
      .def_rw("error", &PythonHandlers::error, nb::arg().none())
      .def_rw("acquire_context", &PythonHandlers::acquire_context, nb::arg().none())
      .def_rw("release_context", &PythonHandlers::release_context, nb::arg().none())
      .def_rw("get_stream", &PythonHandlers::get_stream, nb::arg().none())
      .def_rw("device_malloc", &PythonHandlers::device_malloc, nb::arg().none())
      .def_rw("device_free", &PythonHandlers::device_free, nb::arg().none());

  m.def(
      "set_default_handlers",
      [](const PythonHandlers &h) {
        if (set(h.device_malloc) != set(h.device_free))
          throw nb::value_error("set device_malloc and device_free together: each frees what the other allocates");
        PythonHandlers previous = defaults();
        defaults() = h;
        JITHandlers c;
        c.print = set(h.print) ? print<false> : nullptr;
        c.error = set(h.error) ? error<false> : nullptr;
        c.acquire_context = set(h.acquire_context) ? acquireContext<false> : nullptr;
        c.release_context = set(h.release_context) ? releaseContext<false> : nullptr;
        c.get_stream = set(h.get_stream) ? getStream<false> : nullptr;
        c.device_malloc = set(h.device_malloc) ? deviceMalloc : nullptr;
        c.device_free = set(h.device_free) ? deviceFree : nullptr;
        JIT::set_default_handlers(c);
        return previous;
      },
      nb::arg("handlers"),
      "Sets the process-wide default handlers (used from the next realize on, by every pipeline without its own); "
      "returns the previous ones. Pass ptxjit.Handlers() to go back to the built-in ones.");
}

} // namespace ptxjit::python
