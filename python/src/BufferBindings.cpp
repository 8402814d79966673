#include "Bindings.h"

#include "ptxjit/DLPack.h"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstring>

namespace ptxjit::python {

namespace {

constexpr int dlpackCUDA = kDLCUDA;

std::string typeName(nb::handle object) { return nb::cast<std::string>(nb::type_name(object.type())); }

bool fromModule(nb::handle object, const char *module) {
  nb::object name = nb::getattr(object.type(), "__module__", nb::none());
  if (name.is_none())
    return false;
  std::string text = nb::cast<std::string>(name);
  return text == module || text.rfind(std::string(module) + ".", 0) == 0;
}

/// The stream an array's framework orders its work on now (CuPy's current stream), or none.
std::optional<uintptr_t> frameworkStream(nb::handle array) {
  if (fromModule(array, "cupy"))
    return nb::cast<uintptr_t>(nb::module_::import_("cupy").attr("cuda").attr("get_current_stream")().attr("ptr"));
  return std::nullopt;
}

ImportedBuffer importThroughDLPack(nb::handle array, std::optional<uintptr_t> stream) {
  nb::tuple device = nb::cast<nb::tuple>(array.attr("__dlpack_device__")());
  nb::object capsule;
  if (nb::cast<int>(device[0]) == dlpackCUDA) {
    if (!stream)
      stream = frameworkStream(array);
    // DLPack reserves 0 for "no stream"; the legacy default stream is 1.
    capsule = stream ? array.attr("__dlpack__")(nb::arg("stream") = *stream == 0 ? uintptr_t(1) : *stream)
                     : array.attr("__dlpack__")();
  } else {
    capsule = array.attr("__dlpack__")();
  }
  if (!PyCapsule_CheckExact(capsule.ptr()))
    throw nb::type_error((typeName(array) + ".__dlpack__() did not return a capsule").c_str());
  return import_dlpack(nb::borrow<nb::capsule>(capsule));
}

} // namespace

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

ImportedBuffer import_array(nb::handle array, std::optional<uintptr_t> stream, bool writable) {
  if (nb::isinstance<ImportedBuffer>(array))
    return nb::cast<const ImportedBuffer &>(array);
  if (is_torch_tensor(array))
    return import_torch_tensor(array);
  if (PyCapsule_CheckExact(array.ptr()))
    return import_dlpack(nb::borrow<nb::capsule>(array));
  if (!nb::hasattr(array, "__dlpack__")) {
    if (writable)
      throw nb::type_error(("an output must be an array or tensor with __dlpack__ (NumPy, PyTorch, CuPy), not a " +
                            typeName(array))
                               .c_str());
    nb::object converted;
    try {
      converted = nb::module_::import_("numpy").attr("asarray")(array);
    } catch (nb::python_error &) {
      throw nb::type_error(("a ptxjit.Buffer views an array with __dlpack__ (NumPy, PyTorch, CuPy) or a DLPack "
                            "capsule; a " + typeName(array) + " is not one")
                               .c_str());
    }
    if (nb::cast<std::string>(converted.attr("dtype").attr("kind")) == "O")
      throw nb::type_error(("a ptxjit.Buffer views an array with __dlpack__ (NumPy, PyTorch, CuPy) or a DLPack "
                            "capsule; a " + typeName(array) + " is not one")
                               .c_str());
    return importThroughDLPack(converted, stream);
  }
  if (fromModule(array, "numpy") && nb::hasattr(array, "flags") && !nb::cast<bool>(array.attr("flags").attr("writeable"))) {
    if (writable)
      throw nb::value_error("the output array is read-only");
    return importThroughDLPack(array.attr("copy")(), stream); // DLPack cannot export read-only arrays
  }
  return importThroughDLPack(array, stream);
}

uintptr_t stream_handle(nb::handle stream) {
  for (const char *attribute : {"cuda_stream", "ptr"})
    if (nb::hasattr(stream, attribute))
      return nb::cast<uintptr_t>(stream.attr(attribute));
  return nb::cast<uintptr_t>(stream);
}

void bind_buffer(nb::module_ &m) {
  nb::class_<ImportedBuffer>(m, "Buffer",
                             "A NumPy array's or a framework tensor's memory, viewed without a copy; dimension 0 is "
                             "the array's last axis.")
      .def(
          "__init__",
          [](ImportedBuffer *self, nb::handle array, nb::handle stream) {
            std::optional<uintptr_t> handle;
            if (!stream.is_none())
              handle = stream_handle(stream);
            new (self) ImportedBuffer(import_array(array, handle, false));
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
             return Type(static_cast<Type::Code>(t.code), t.bits, t.lanes);
           })
      .def_ro("cuda_device", &ImportedBuffer::cuda_device, "the CUDA device of the memory, or -1 for host memory");
}

} // namespace ptxjit::python
