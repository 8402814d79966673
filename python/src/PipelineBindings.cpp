#include "Bindings.h"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

namespace ptxjit::python {

namespace {

/// One realize called from Python: the device of its tensors, and the stream the caller's
/// framework orders its work on (PyTorch's current stream), when there is one.
struct PythonCall : JITUserContext {
  CUstream stream = nullptr;
};

int callerStream(JITUserContext *context, CUcontext, CUstream *out) {
  *out = static_cast<PythonCall *>(context)->stream;
  return 0;
}

void realize(Pipeline &pipeline, const std::vector<ImportedBuffer> &outputs, int device, std::optional<uintptr_t> stream) {
  PythonCall call;
  call.device = device;
  if (stream) {
    call.stream = reinterpret_cast<CUstream>(*stream);
    call.handlers.get_stream = callerStream;
  }
  std::vector<RawBuffer> buffers;
  buffers.reserve(outputs.size());
  for (const ImportedBuffer &b : outputs)
    buffers.push_back(b.buffer);
  nb::gil_scoped_release unlocked; // pipelines run on ptxjit's threads, and may run long
  pipeline.realize(&call, buffers);
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
      .def("_realize", &realize, nb::arg("outputs"), nb::arg("device"), nb::arg("stream").none())
      .def("compile_to_ptx", &Pipeline::compile_to_ptx, nb::arg("target"), nb::arg("ptx_version") = 78)
      .def("lowered_stmt",
           [](const Pipeline &p, std::optional<Target> target) {
             return p.lowered_stmt(target ? *target : get_jit_target_from_environment());
           },
           nb::arg("target") = nb::none())
      .def("loop_nest", &Pipeline::loop_nest);

  m.def("compile_cache_statistics", [] { return statistics(JIT::compile_cache_statistics()); },
        "What the on-disk compile cache did in this process: a dict of counts and bytes");
  m.def("trim_device_memory", &JIT::trim_device_memory, nb::arg("device"), nb::arg("keep_bytes") = 0);
}

} // namespace ptxjit::python
