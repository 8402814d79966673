#include "Bindings.h"

#include <nanobind/stl/string.h>

#include <climits>

namespace ptxjit::python {

namespace {

/// What reading tensors needs from PyTorch, looked up once PyTorch is imported. Read and written
/// with the GIL held.
struct Torch {
  nb::object tensorType, rawStream;
  // Attribute names read on every realize of a tensor, interned once. Kept here, never in
  // function-local statics: those would be released by exit() after Python has finalized.
  nb::str dtypeName{"dtype"}, isNegName{"is_neg"}, isCudaName{"is_cuda"}, isCpuName{"is_cpu"},
      deviceName{"get_device"}, shapeName{"shape"}, strideName{"stride"}, dataName{"data_ptr"};
  std::vector<std::pair<nb::object, ptxjit_type_t>> dtypes;
};

const Torch *torch() {
  static Torch *loaded = nullptr;
  if (loaded)
    return loaded;
  nb::dict modules = nb::borrow<nb::dict>(nb::module_::import_("sys").attr("modules"));
  if (!modules.contains("torch")) // no tensor can exist before PyTorch is imported
    return nullptr;
  nb::object module = modules["torch"];
  auto *t = new Torch; // lives as long as the process, as PyTorch does
  t->tensorType = module.attr("Tensor");
  t->rawStream = module.attr("_C").attr("_cuda_getCurrentRawStream");
  const std::pair<const char *, ptxjit_type_t> types[] = {
      {"float32", {ptxjit_type_float, 32, 1}}, {"float64", {ptxjit_type_float, 64, 1}},
      {"float16", {ptxjit_type_float, 16, 1}}, {"bfloat16", {ptxjit_type_bfloat, 16, 1}},
      {"int8", {ptxjit_type_int, 8, 1}},       {"int16", {ptxjit_type_int, 16, 1}},
      {"int32", {ptxjit_type_int, 32, 1}},     {"int64", {ptxjit_type_int, 64, 1}},
      {"uint8", {ptxjit_type_uint, 8, 1}},     {"uint16", {ptxjit_type_uint, 16, 1}},
      {"uint32", {ptxjit_type_uint, 32, 1}},   {"uint64", {ptxjit_type_uint, 64, 1}},
      {"bool", {ptxjit_type_uint, 1, 1}},
  };
  for (const auto &[name, type] : types)
    if (nb::hasattr(module, name))
      t->dtypes.emplace_back(module.attr(name), type);
  loaded = t;
  return loaded;
}

int32_t fitInt32(long long v, const char *what) {
  if (v < INT32_MIN || v > INT32_MAX)
    throw nb::value_error(("a tensor " + std::string(what) + " of " + std::to_string(v) + " does not fit in 32 bits").c_str());
  return static_cast<int32_t>(v);
}

} // namespace

void release_python_reference(void *object) {
  // Pipelines ptxjit keeps for reuse may hold buffers until the process's static destructors run,
  // after Python has finalized: then the reference is left, as Python has freed everything.
  if (!python_usable())
    return;
  nb::gil_scoped_acquire locked;
  Py_DECREF(static_cast<PyObject *>(object));
}

bool is_torch_tensor(nb::handle object) {
  const Torch *t = torch();
  return t && PyObject_IsInstance(object.ptr(), t->tensorType.ptr()) == 1;
}

ImportedBuffer import_torch_tensor(nb::handle tensor) {
  const Torch &t = *torch();
  nb::object dtype = tensor.attr(t.dtypeName);
  const ptxjit_type_t *type = nullptr;
  for (const auto &[object, ptxjitType] : t.dtypes)
    if (object.is(dtype))
      type = &ptxjitType;
  if (!type)
    throw nb::value_error(("a tensor of " + nb::cast<std::string>(nb::str(dtype)) +
                           ": ptxjit takes int, uint, float16, bfloat16, float32, float64 and bool tensors")
                              .c_str());
  // Complex tensors (the lazily conjugated ones) are refused above; a lazily negated view is not.
  if (nb::cast<bool>(tensor.attr(t.isNegName)()))
    throw nb::value_error("a tensor with a lazy negation: call .resolve_neg() first");
  const bool cuda = nb::cast<bool>(tensor.attr(t.isCudaName));
  if (!cuda && !nb::cast<bool>(tensor.attr(t.isCpuName)))
    throw nb::value_error(("a tensor on " + nb::cast<std::string>(nb::str(tensor.attr("device"))) +
                           ": ptxjit takes CPU and CUDA tensors")
                              .c_str());
  const int device = cuda ? nb::cast<int>(tensor.attr(t.deviceName)()) : -1;
  nb::tuple sizes = nb::borrow<nb::tuple>(tensor.attr(t.shapeName));
  nb::tuple strides = nb::cast<nb::tuple>(tensor.attr(t.strideName)());
  const size_t n = nb::len(sizes);
  if (n > 8)
    throw nb::value_error(("a tensor of " + std::to_string(n) + " dimensions: at most 8 are supported").c_str());
  std::vector<ptxjit_dimension_t> dims(n);
  for (size_t i = 0; i < n; ++i) { // innermost first: the tensor's last axis is dimension 0
    const size_t axis = n - 1 - i;
    dims[i] = {0, fitInt32(nb::cast<long long>(sizes[axis]), "size"), fitInt32(nb::cast<long long>(strides[axis]), "stride"), 0};
  }
  const uintptr_t address = nb::cast<uintptr_t>(tensor.attr(t.dataName)());
  // The buffer keeps the tensor (so its memory) alive; the last copy may go without the GIL.
  PyObject *reference = tensor.ptr();
  Py_INCREF(reference);
  std::shared_ptr<void> owner(reference, release_python_reference);
  ImportedBuffer imported;
  imported.buffer = RawBuffer::view(*type, std::move(dims), cuda ? nullptr : reinterpret_cast<uint8_t *>(address),
                                    cuda ? address : 0, std::move(owner));
  imported.cuda_device = device;
  imported.torch = true;
  return imported;
}

uintptr_t torch_current_stream(int device) { return nb::cast<uintptr_t>(torch()->rawStream(device)); }

} // namespace ptxjit::python
