#include "Bindings.h"

#include "ptxjit/DLPack.h"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstring>

namespace ptxjit::python {

ImportedBuffer import_dlpack(nb::capsule capsule) {
  // The DLPack protocol: a capsule named "dltensor" is unused; the consumer that takes it renames
  // it "used_dltensor" and from then on calls the tensor's deleter itself.
  if (std::strcmp(capsule.name(), "dltensor") != 0)
    throw nb::value_error(("expected an unused DLPack capsule (named \"dltensor\"), got one named \"" +
                           std::string(capsule.name()) + "\"")
                              .c_str());
  auto *managed = static_cast<DLManagedTensor *>(capsule.data());
  if (PyCapsule_SetName(capsule.ptr(), "used_dltensor") != 0)
    throw nb::python_error();
  const DLDevice device = managed->dl_tensor.device;
  ImportedBuffer imported;
  try {
    imported.buffer = buffer_from_dlpack(managed); // runs the deleter if it throws
  } catch (const std::invalid_argument &e) {
    throw nb::value_error(e.what());
  }
  imported.cuda_device = device.device_type == kDLCUDA ? device.device_id : -1;
  return imported;
}

void bind_buffer(nb::module_ &m) {
  nb::class_<ImportedBuffer>(m, "Buffer",
                             "A NumPy array's or a framework tensor's memory, viewed through DLPack without a copy; "
                             "dimension 0 is the array's last axis.")
      .def(
          "__init__",
          [](ImportedBuffer *self, nb::handle array, std::optional<intptr_t> stream) {
            // An array with __dlpack__ (NumPy, PyTorch, CuPy, JAX) or an unused DLPack capsule.
            nb::object capsule;
            if (PyCapsule_CheckExact(array.ptr())) {
              capsule = nb::borrow(array);
            } else if (nb::hasattr(array, "__dlpack__")) {
              // The stream the consumer will use: the producer orders its pending work before it.
              capsule = stream ? array.attr("__dlpack__")(nb::arg("stream") = *stream) : array.attr("__dlpack__")();
            } else {
              throw nb::type_error(("a ptxjit.Buffer views an array with __dlpack__ (NumPy, PyTorch, CuPy) or a DLPack "
                                    "capsule, not a " +
                                    nb::cast<std::string>(nb::type_name(array.type())))
                                       .c_str());
            }
            new (self) ImportedBuffer(import_dlpack(nb::borrow<nb::capsule>(capsule)));
          },
          nb::arg("array"), nb::arg("stream") = nb::none())
      .def("dimensions", [](const ImportedBuffer &b) { return b.buffer.dimensions(); })
      .def("min", [](const ImportedBuffer &b, int d) { return b.buffer.min(d); })
      .def("extent", [](const ImportedBuffer &b, int d) { return b.buffer.extent(d); })
      .def("stride", [](const ImportedBuffer &b, int d) { return b.buffer.stride(d); })
      .def("set_min",
           [](ImportedBuffer &b, const std::vector<int> &mins) {
             try {
               b.buffer.set_min(mins);
             } catch (const std::invalid_argument &e) {
               throw nb::value_error(e.what());
             }
           },
           nb::arg("mins"))
      .def("type",
           [](const ImportedBuffer &b) {
             ptxjit_type_t t = b.buffer.type();
             return Type(t.code == ptxjit_type_int ? Type::Int : t.code == ptxjit_type_uint ? Type::UInt : Type::Float,
                         t.bits, t.lanes);
           })
      .def_ro("cuda_device", &ImportedBuffer::cuda_device, "the CUDA device of the memory, or -1 for host memory");
}

} // namespace ptxjit::python
