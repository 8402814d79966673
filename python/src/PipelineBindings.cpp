#include "Bindings.h"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

namespace ptxjit::python {

namespace {

int callerStream(JITUserContext *context, CUcontext, CUstream *out) {
  *out = static_cast<PythonCall *>(context)->stream;
  return 0;
}

/// The CUDA device `device` names: an int, "cuda:N", "cuda" (0) or a torch.device; -1 for "cpu".
int deviceIndex(nb::handle device) {
  if (PyLong_Check(device.ptr()))
    return nb::cast<int>(device);
  const std::string text = nb::cast<std::string>(nb::str(device));
  if (text == "cpu")
    return -1;
  if (text == "cuda")
    return 0;
  if (text.rfind("cuda:", 0) == 0)
    return std::stoi(text.substr(5));
  throw nb::value_error(("device must be an index, \"cpu\", \"cuda\", \"cuda:N\" or a torch.device, not " + text).c_str());
}

/// Whether realize's argument is sizes (a list or tuple of ints, empty for a zero-dimensional
/// output) rather than arrays.
bool isSizes(nb::handle outputs) {
  if (!nb::isinstance<nb::list>(outputs) && !nb::isinstance<nb::tuple>(outputs))
    return false;
  for (nb::handle o : outputs)
    if (!PyLong_Check(o.ptr()))
      return false;
  return true;
}

/// The pipeline's Python handlers (Pipeline.set_handlers) with the call's over them.
PythonHandlers handlersOf(nb::handle pipeline, nb::handle call) {
  PythonHandlers merged;
  for (nb::handle given : {nb::getattr(pipeline, "_handlers", nb::none()), nb::borrow(call)}) {
    if (given.is_none())
      continue;
    const auto &h = nb::cast<const PythonHandlers &>(given);
    for (auto member : {&PythonHandlers::print, &PythonHandlers::error, &PythonHandlers::acquire_context,
                        &PythonHandlers::release_context, &PythonHandlers::get_stream, &PythonHandlers::device_malloc,
                        &PythonHandlers::device_free})
      if ((h.*member).is_valid() && !(h.*member).is_none())
        merged.*member = h.*member;
  }
  return merged;
}

/// Runs the pipeline into `outputs`: an array or tensor, or a list of them.
void realizeInto(nb::handle self, nb::handle outputs, nb::handle stream, nb::handle device, nb::handle handlers) {
  Pipeline &pipeline = nb::cast<Pipeline &>(self);
  std::optional<uintptr_t> handle;
  if (!stream.is_none())
    handle = stream_handle(stream);
  std::vector<RawBuffer> buffers;
  int cudaDevice = device.is_none() ? -1 : deviceIndex(device);
  bool torchOnDevice = false;
  auto add = [&](nb::handle array) {
    ImportedBuffer imported = import_array(array, handle, true);
    if (imported.cuda_device >= 0) {
      if (cudaDevice >= 0 && cudaDevice != imported.cuda_device)
        throw nb::value_error(("the buffers of one realize are on CUDA devices " + std::to_string(cudaDevice) + " and " +
                               std::to_string(imported.cuda_device))
                                  .c_str());
      cudaDevice = imported.cuda_device;
      torchOnDevice = torchOnDevice || imported.torch;
    }
    buffers.push_back(std::move(imported.buffer));
  };
  if (nb::isinstance<nb::list>(outputs) || nb::isinstance<nb::tuple>(outputs))
    for (nb::handle o : outputs)
      add(o);
  else
    add(outputs);
  if (torchOnDevice) {
    const uintptr_t current = torch_current_stream(cudaDevice);
    if (!handle) {
      handle = current;
    } else if (*handle != current) {
      // As __dlpack__(stream) does for its consumer: the named stream waits for the work
      // PyTorch has queued on its current stream.
      nb::object cuda = nb::module_::import_("torch").attr("cuda");
      cuda.attr("ExternalStream")(*handle, nb::arg("device") = cudaDevice)
          .attr("wait_stream")(cuda.attr("current_stream")(cudaDevice));
    }
  }
  PythonCall call;
  call.device = cudaDevice;
  if (handle) {
    call.stream = reinterpret_cast<CUstream>(*handle);
    call.handlers.get_stream = callerStream;
  }
  call.python = handlersOf(self, handlers);
  install_python_handlers(call);
  try {
    nb::gil_scoped_release unlocked; // pipelines run on ptxjit's threads, and may run long
    pipeline.realize(&call, buffers);
  } catch (const RuntimeError &e) {
    if (!call.raised.is_valid())
      throw;
    // The handler's exception is the cause: ptxjit.RuntimeError from it.
    PyErr_SetObject(reinterpret_cast<PyObject *>(Py_TYPE(call.raised.ptr())), call.raised.ptr());
    nb::python_error cause;
    nb::raise_from(cause, nb::module_::import_("ptxjit").attr("RuntimeError"), "%s", e.what());
  }
}

nb::dict statistics(const CompileCacheStatistics &s) {
  nb::dict d;
  d["hits"] = s.hits;
  d["misses"] = s.misses;
  d["stores"] = s.stores;
  d["bytes_read"] = s.bytes_read;
  d["bytes_written"] = s.bytes_written;
  d["evictions"] = s.evictions;
  d["rejected"] = s.rejected;
  return d;
}

} // namespace

void bind_pipeline(nb::module_ &m) {
  nb::class_<Target>(m, "Target")
      .def(nb::init<>())
      .def("__init__", [](Target *self, const std::string &spelling) { new (self) Target(spelling); }, nb::arg("spelling"))
      .def("has_gpu_feature", &Target::has_gpu_feature)
      .def("cuda_capability", &Target::cuda_capability)
      .def("to_string", &Target::to_string)
      .def("__str__", &Target::to_string)
      .def("__repr__", [](const Target &t) { return "ptxjit.Target(\"" + t.to_string() + "\")"; })
      .def("__eq__", [](const Target &a, const Target &b) { return a == b; })
      .def("__hash__", [](const Target &t) { return nb::hash(nb::str(t.to_string().c_str())); });
  m.def("get_host_target", &get_host_target);
  m.def("get_jit_target_from_environment", &get_jit_target_from_environment);
  m.def("host_supports_target_device", [](const Target &t) {
    std::string why;
    bool supported = host_supports_target_device(t, &why);
    return nb::make_tuple(supported, why);
  }, nb::arg("target"), "(supported, why): whether this process can run the target's device code, and what is missing");

  nb::class_<Pipeline>(m, "Pipeline")
      .def(nb::init<const Func &>(), nb::arg("output"))
      .def(nb::init<const std::vector<Func> &>(), nb::arg("outputs"))
      .def("compile_jit",
           [](Pipeline &p, std::optional<Target> target) {
             Target t = target ? *target : get_jit_target_from_environment();
             nb::gil_scoped_release unlocked;
             p.compile_jit(t);
           },
           nb::arg("target") = nb::none())
      .def(
          "realize",
          [](nb::handle self, nb::handle outputs, nb::handle stream, nb::handle device, nb::handle handlers) -> nb::object {
            if (isSizes(outputs)) // new arrays: made in Python, from NumPy or PyTorch
              return nb::module_::import_("ptxjit").attr("_realize_sizes")(self, outputs, stream, device, handlers);
            realizeInto(self, outputs, stream, device, handlers);
            return nb::none();
          },
          nb::arg("outputs"), nb::kw_only(), nb::arg("stream") = nb::none(), nb::arg("device") = nb::none(),
          nb::arg("handlers") = nb::none(),
          "Runs the pipeline.\n\n"
          "realize([w, h]) returns a new array (a list of them for several outputs or Tuple values): a PyTorch "
          "tensor on `device` (\"cuda:0\", a torch.device), else on the device of the inputs in device memory, else "
          "a NumPy array. realize(out) or realize([out0, out1]) "
          "writes into the arrays or tensors given. CUDA tensors run on their device and on PyTorch's current "
          "stream; `stream` (torch.cuda.Stream, CuPy stream or handle) names another, which first waits for the "
          "work PyTorch queued on its current stream; `device` also names the CUDA device for host arrays on a "
          "CUDA target; `handlers` (ptxjit.Handlers) serve this call, over the pipeline's (set_handlers).")
      .def("compile_to_ptx", &Pipeline::compile_to_ptx, nb::arg("target"), nb::arg("ptx_version") = 78)
      .def("lowered_stmt",
           [](const Pipeline &p, std::optional<Target> target) {
             return p.lowered_stmt(target ? *target : get_jit_target_from_environment());
           },
           nb::arg("target") = nb::none())
      .def("loop_nest", &Pipeline::loop_nest)
      .def("infer_arguments", &Pipeline::infer_arguments,
           "The Params and buffer inputs the definitions use, in name order.");

  nb::class_<Argument>(m, "Argument")
      .def_ro("name", &Argument::name)
      .def_ro("is_buffer", &Argument::is_buffer)
      .def_ro("type", &Argument::type)
      .def_ro("dimensions", &Argument::dimensions)
      .def_prop_ro(
          "device_address", [](const Argument &a) { return a.buffer.defined() ? a.buffer.device() : uint64_t(0); },
          "the device memory of the bound buffer, 0 where it has none")
      .def("__repr__", [](const Argument &a) {
        return "ptxjit.Argument(" + a.name + ", " + (a.is_buffer ? "buffer of " : "") + to_string(a.type) +
               (a.is_buffer ? ", " + std::to_string(a.dimensions) + " dimensions" : "") + ")";
      });

  m.def("compile_cache_statistics", [] { return statistics(JIT::compile_cache_statistics()); },
        "What the on-disk compile cache did in this process: a dict of counts and bytes");
  m.def("trim_device_memory", &JIT::trim_device_memory, nb::arg("device"), nb::arg("keep_bytes") = 0);
}

} // namespace ptxjit::python
