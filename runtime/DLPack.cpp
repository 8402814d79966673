#include "ptxjit/DLPack.h"

#include <limits>
#include <optional>
#include <stdexcept>
#include <string>

namespace ptxjit {

namespace {

// DLPack 0.8's kDLBool (NumPy's and PyTorch's bool), which Debian's DLPack 0.6 header lacks.
constexpr uint8_t dlpackBool = 6;

ptxjit_type_t typeFrom(const DLDataType &t) {
  if (t.lanes != 1)
    throw std::invalid_argument("DLPack tensor with " + std::to_string(t.lanes) + " lanes: only scalar elements are supported");
  auto ifSupported = [&](Type::Code code) -> std::optional<ptxjit_type_t> {
    if (t.bits > 1 && Type(code, t.bits).is_supported())
      return ptxjit_type_t{static_cast<uint8_t>(code), t.bits, 1};
    return std::nullopt;
  };
  std::optional<ptxjit_type_t> type;
  switch (t.code) {
  case kDLInt:
    type = ifSupported(Type::Int);
    break;
  case kDLUInt:
    type = ifSupported(Type::UInt);
    break;
  case kDLFloat:
    type = ifSupported(Type::Float);
    break;
  case kDLBfloat:
    type = ifSupported(Type::BFloat);
    break;
  case dlpackBool: // one byte each, as ptxjit stores Bool()
    if (t.bits == 8)
      return {ptxjit_type_uint, 1, 1};
    break;
  default:
    break;
  }
  if (type)
    return *type;
  throw std::invalid_argument("DLPack tensor of type code " + std::to_string(t.code) + " and " +
                              std::to_string(t.bits) +
                              " bits: ptxjit takes int and uint of 8 to 64 bits, float of 16, 32 and 64, bfloat16 and bool");
}

int32_t fitInt32(int64_t v, const char *what) {
  if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max())
    throw std::invalid_argument(std::string("DLPack tensor ") + what + " " + std::to_string(v) + " does not fit in 32 bits");
  return static_cast<int32_t>(v);
}

// What a tensor made by buffer_to_dlpack owns.
struct Exported {
  DLManagedTensor Tensor{};
  std::vector<int64_t> Shape, Strides;
  RawBuffer Keep;
};

} // namespace

RawBuffer buffer_from_dlpack(const DLTensor &t) { return buffer_from_dlpack(t, nullptr); }

RawBuffer buffer_from_dlpack(DLManagedTensor *managed) {
  std::shared_ptr<void> owner(managed, [](void *p) {
    auto *m = static_cast<DLManagedTensor *>(p);
    if (m && m->deleter)
      m->deleter(m);
  });
  return buffer_from_dlpack(managed->dl_tensor, owner);
}

RawBuffer buffer_from_dlpack(const DLTensor &t, std::shared_ptr<void> owner) {
  if (t.ndim < 0 || t.ndim > 8)
    throw std::invalid_argument("DLPack tensor with " + std::to_string(t.ndim) + " dimensions: at most 8 are supported");
  if (t.device.device_type != kDLCPU && t.device.device_type != kDLCUDA)
    throw std::invalid_argument("DLPack tensor on device type " + std::to_string(t.device.device_type) +
                                ": only CPU and CUDA tensors are supported");
  ptxjit_type_t type = typeFrom(t.dtype);
  std::vector<ptxjit_dimension_t> dims(t.ndim);
  int64_t compact = 1;
  for (int i = t.ndim - 1; i >= 0; --i) {
    int d = t.ndim - 1 - i; // innermost first
    int64_t stride = t.strides ? t.strides[i] : compact;
    dims[d] = {0, fitInt32(t.shape[i], "extent"), fitInt32(stride, "stride"), 0};
    compact *= t.shape[i];
  }
  auto *base = static_cast<uint8_t *>(t.data) + t.byte_offset;
  bool cuda = t.device.device_type == kDLCUDA;
  return RawBuffer::view(type, std::move(dims), cuda ? nullptr : base, cuda ? reinterpret_cast<uint64_t>(base) : 0,
                         std::move(owner));
}

DLManagedTensor *buffer_to_dlpack(const RawBuffer &buffer, int cudaDevice) {
  auto *e = new Exported;
  e->Keep = buffer;
  int n = buffer.dimensions();
  for (int i = n - 1; i >= 0; --i) {
    e->Shape.push_back(buffer.extent(i));
    e->Strides.push_back(buffer.stride(i));
  }
  DLTensor &t = e->Tensor.dl_tensor;
  bool device = buffer.device() != 0;
  t.data = device ? reinterpret_cast<void *>(buffer.device()) : buffer.host_bytes();
  t.device = {device ? kDLCUDA : kDLCPU, device ? cudaDevice : 0};
  t.ndim = n;
  ptxjit_type_t type = buffer.type();
  if (type.code == ptxjit_type_uint && type.bits == 1)
    t.dtype = {dlpackBool, 8, type.lanes};
  else
    t.dtype = {static_cast<uint8_t>(type.code == ptxjit_type_int      ? kDLInt
                                    : type.code == ptxjit_type_uint   ? kDLUInt
                                    : type.code == ptxjit_type_bfloat ? kDLBfloat
                                                                      : kDLFloat),
               type.bits, type.lanes};
  t.shape = e->Shape.data();
  t.strides = e->Strides.data();
  t.byte_offset = 0;
  e->Tensor.manager_ctx = e;
  e->Tensor.deleter = [](DLManagedTensor *self) { delete static_cast<Exported *>(self->manager_ctx); };
  return &e->Tensor;
}

} // namespace ptxjit
