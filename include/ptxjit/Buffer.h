#ifndef PTXJIT_BUFFER_H
#define PTXJIT_BUFFER_H

// Host buffers: a shared, 64-byte aligned allocation viewed through per-dimension min, extent and
// stride. Copies share the allocation; crop() makes a view of part of it.

#include "ptxjit/BufferABI.h"
#include "ptxjit/Expr.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#pragma GCC visibility push(default)
namespace ptxjit {

struct ParameterContents;
class RawBuffer;

namespace detail {
/// A read of `buffer` in a definition: the buffer becomes an input of the pipelines using it,
/// captured with its current shape (its elements are read at each realize).
Expr buffer_call(const RawBuffer &buffer, std::vector<Expr> args);
/// A buffer element type as messages write it, e.g. "float32".
inline std::string type_name(ptxjit_type_t t) {
  return to_string(Type(static_cast<Type::Code>(t.code), t.bits, t.lanes));
}
} // namespace detail

/// An untyped buffer; Buffer<T> adds typed element access.
class RawBuffer {
public:
  RawBuffer() = default;

  /// A dense buffer of `sizes`, dimension 0 innermost, every min 0.
  RawBuffer(ptxjit_type_t type, const std::vector<int> &sizes) : ElementType(type), Dims(dense_dimensions(sizes)) {
    size_t bytes = number_of_elements() * elementSize();
    size_t rounded = (bytes + 63) / 64 * 64;
    void *memory = std::aligned_alloc(64, rounded ? rounded : 64);
    if (!memory)
      throw std::bad_alloc();
    Storage = std::shared_ptr<uint8_t>(static_cast<uint8_t *>(memory), [](uint8_t *p) { std::free(p); });
    Host = Storage.get();
  }

  /// A view of memory someone else owns: `host` may be null for device-only data (set `device`).
  /// `owner` is kept alive as long as any Buffer shares this view.
  static RawBuffer view(ptxjit_type_t type, std::vector<ptxjit_dimension_t> dims, uint8_t *host, uint64_t device,
                        std::shared_ptr<void> owner) {
    RawBuffer b;
    b.ElementType = type;
    b.Dims = std::move(dims);
    b.Host = host;
    b.set_device(device);
    b.Storage = std::shared_ptr<uint8_t>(std::move(owner), host);
    b.Viewed = true;
    return b;
  }

  bool defined() const { return Host != nullptr || Device != 0 || Viewed || !Dims.empty(); }
  int dimensions() const { return static_cast<int>(Dims.size()); }
  /// One dimension's shape, as Halide's Buffer::Dimension reads it.
  class Dimension {
  public:
    explicit Dimension(const ptxjit_dimension_t &d) : D(d) {}
    int min() const { return D.min; }
    int extent() const { return D.extent; }
    int max() const { return D.min + D.extent - 1; }
    int stride() const { return D.stride; }
    /// For range loops over the coordinates: for (int x = b.dim(0).begin(); ...).
    int begin() const { return D.min; }
    int end() const { return D.min + D.extent; }

  private:
    ptxjit_dimension_t D;
  };
  Dimension dim(int i) const { return Dimension(Dims.at(i)); }
  int min(int i) const { return Dims.at(i).min; }
  int extent(int i) const { return Dims.at(i).extent; }
  int stride(int i) const { return Dims.at(i).stride; }
  int width() const { return dimensions() > 0 ? extent(0) : 1; }
  int height() const { return dimensions() > 1 ? extent(1) : 1; }
  int channels() const { return dimensions() > 2 ? extent(2) : 1; }
  ptxjit_type_t type() const { return ElementType; }
  int element_size() const { return elementSize(); }
  size_t number_of_elements() const {
    size_t n = 1;
    for (const auto &d : Dims)
      n *= static_cast<size_t>(d.extent);
    return n;
  }
  uint8_t *host_bytes() const { return Host; }

  /// Moves the coordinate origin: element (m0, m1, ...) becomes the first one.
  void set_min(const std::vector<int> &mins) {
    if (mins.size() > Dims.size())
      throw std::invalid_argument("Buffer::set_min: more mins than dimensions");
    for (size_t i = 0; i < mins.size(); ++i)
      Dims[i].min = mins[i];
  }

  /// A view of [min, min + extent) in dimension `d` sharing this allocation.
  RawBuffer cropped(int d, int min, int extent) const {
    const ptxjit_dimension_t &old = Dims.at(d);
    if (extent < 0 || min < old.min || min + extent > old.min + old.extent)
      throw std::out_of_range("Buffer::crop: [" + std::to_string(min) + ", " + std::to_string(min + extent) +
                              ") of dimension " + std::to_string(d) + " is outside [" + std::to_string(old.min) +
                              ", " + std::to_string(old.min + old.extent) + ")");
    RawBuffer view = *this;
    view.AsInput.reset(); // another region: another input when read in a definition
    ptrdiff_t offset = static_cast<ptrdiff_t>(min - old.min) * old.stride * elementSize();
    view.Host = Host + offset;
    view.Device = Device ? Device + offset : 0;
    view.Dims[d].min = min;
    view.Dims[d].extent = extent;
    return view;
  }

  /// A device copy of this buffer that the caller owns and keeps current (0: none). A realize on
  /// a CUDA target then reads or writes it directly, on the call's context and stream, without
  /// copying, and returns without waiting for the kernels. Copies of the Buffer share it.
  void set_device(uint64_t address) {
    Device = address;
    State = address ? std::make_shared<DeviceState>() : nullptr;
  }
  uint64_t device() const { return Device; }

  /// Device memory this buffer owns (from copy_to_device, in ptxjit.h); `owner`'s deleter frees
  /// it when the last Buffer sharing it goes.
  void set_owned_device(uint64_t address, std::shared_ptr<void> owner) {
    set_device(address);
    State->Owner = std::move(owner);
  }
  bool owns_device() const { return State && State->Owner; }

  /// Which copy is newer, shared by every Buffer viewing the same device memory: call
  /// set_host_dirty() after writing the host data of a buffer with a device copy (realize then
  /// uploads it first); realize marks the outputs it writes on the device device-dirty
  /// (copy_to_host brings them back).
  bool host_dirty() const { return State && State->HostDirty; }
  bool device_dirty() const { return State && State->DeviceDirty; }
  void set_host_dirty(bool dirty = true) {
    if (State)
      State->HostDirty = dirty;
  }
  void set_device_dirty(bool dirty = true) {
    if (State)
      State->DeviceDirty = dirty;
  }

  /// The descriptor generated code reads, by value. Its dimensions point into this object: keep
  /// the object alive and its shape unchanged while the descriptor is in use.
  ptxjit_buffer_t descriptor() const {
    ptxjit_buffer_t d{};
    d.device = Device;
    d.host = Host;
    d.flags = (host_dirty() ? ptxjit_buffer_host_dirty : 0) | (device_dirty() ? ptxjit_buffer_device_dirty : 0);
    d.type = ElementType;
    d.dimensions = dimensions();
    d.dim = const_cast<ptxjit_dimension_t *>(Dims.data());
    return d;
  }
  /// The descriptor, kept in this object.
  ptxjit_buffer_t *raw_buffer() {
    Raw = descriptor();
    return &Raw;
  }

  /// Dimensions of `sizes` laid out densely, dimension 0 innermost, every min 0.
  static std::vector<ptxjit_dimension_t> dense_dimensions(const std::vector<int> &sizes) {
    std::vector<ptxjit_dimension_t> dims;
    int64_t stride = 1;
    for (int size : sizes) {
      if (size < 0)
        throw std::invalid_argument("Buffer: negative size " + std::to_string(size));
      if (stride > INT32_MAX)
        throw std::invalid_argument("Buffer: strides exceed 32 bits");
      dims.push_back({0, size, static_cast<int32_t>(stride), 0});
      stride *= size;
    }
    return dims;
  }

protected:
  int elementSize() const { return (ElementType.bits + 7) / 8 * ElementType.lanes; }
  uint8_t *addressOf(const int *coords, int n) const {
    ptrdiff_t offset = 0;
    for (int i = 0; i < n; ++i) {
      const ptxjit_dimension_t &d = Dims[i];
      offset += static_cast<ptrdiff_t>(coords[i] - d.min) * d.stride;
    }
    return Host + offset * elementSize();
  }

  ptxjit_type_t ElementType{ptxjit_type_uint, 8, 1};
  std::vector<ptxjit_dimension_t> Dims;
  std::shared_ptr<uint8_t> Storage;
  uint8_t *Host = nullptr;
  // The device copy's flags and owner, shared by copies and crops of this buffer.
  struct DeviceState {
    std::shared_ptr<void> Owner; // frees owned device memory; null when the caller owns it
    std::atomic<bool> HostDirty{false}, DeviceDirty{false}; // concurrent realizes may set them
  };
  uint64_t Device = 0; // this view's first element on the device
  std::shared_ptr<DeviceState> State;
  bool Viewed = false; // made by view(): a zero-dimensional view is defined too
  ptxjit_buffer_t Raw{};
  // The input that definitions reading this buffer (and its copies) refer to, made on first use
  // by detail::buffer_call under its lock.
  mutable std::shared_ptr<ParameterContents> AsInput;
  friend Expr detail::buffer_call(const RawBuffer &buffer, std::vector<Expr> args);
};

template <typename T> constexpr ptxjit_type_t buffer_type_of() {
  static_assert(std::is_arithmetic_v<T> || std::is_same_v<T, float16_t> || std::is_same_v<T, bfloat16_t>,
                "Buffer elements are integers, floats, float16_t, bfloat16_t or bool");
  if constexpr (std::is_same_v<T, bool>)
    return {ptxjit_type_uint, 1, 1};
  else if constexpr (std::is_same_v<T, float16_t>)
    return {ptxjit_type_float, 16, 1};
  else if constexpr (std::is_same_v<T, bfloat16_t>)
    return {ptxjit_type_bfloat, 16, 1};
  else if constexpr (std::is_floating_point_v<T>)
    return {ptxjit_type_float, static_cast<uint8_t>(8 * sizeof(T)), 1};
  else if constexpr (std::is_signed_v<T>)
    return {ptxjit_type_int, static_cast<uint8_t>(8 * sizeof(T)), 1};
  else
    return {ptxjit_type_uint, static_cast<uint8_t>(8 * sizeof(T)), 1};
}

template <typename T> class Buffer : public RawBuffer {
public:
  Buffer() : RawBuffer() { ElementType = buffer_type_of<T>(); }
  explicit Buffer(const std::vector<int> &sizes) : RawBuffer(buffer_type_of<T>(), sizes) {}
  template <typename... Ints, typename = std::enable_if_t<(std::is_integral_v<Ints> && ...)>>
  explicit Buffer(Ints... sizes) : Buffer(std::vector<int>{static_cast<int>(sizes)...}) {}
  /// Wraps dense memory the caller owns (dimension 0 innermost), without a copy; the memory must
  /// outlive every Buffer sharing it.
  Buffer(T *data, const std::vector<int> &sizes)
      : RawBuffer(RawBuffer::view(buffer_type_of<T>(), dense_dimensions(sizes), reinterpret_cast<uint8_t *>(data), 0,
                                  nullptr)) {}
  /// Views an untyped buffer; throws when the element types differ.
  explicit Buffer(const RawBuffer &raw) : RawBuffer(raw) {
    ptxjit_type_t t = buffer_type_of<T>();
    if (raw.type().code != t.code || raw.type().bits != t.bits)
      throw std::invalid_argument("Buffer: the untyped buffer's element type is " + detail::type_name(raw.type()) +
                                  ", not " + detail::type_name(t));
  }

  template <typename... Ints, typename = std::enable_if_t<(std::is_integral_v<Ints> && ...)>>
  T &operator()(Ints... coords) const {
    const int c[] = {static_cast<int>(coords)...};
    return *reinterpret_cast<T *>(addressOf(c, sizeof...(Ints)));
  }
  /// In a definition, `buf(x, y)` reads the buffer as an input (bounds checked at realize).
  template <typename... Args, typename = std::enable_if_t<!(std::is_integral_v<Args> && ...)>, typename = void>
  Expr operator()(const Args &...args) const {
    return detail::buffer_call(*this, std::vector<Expr>{Expr(args)...});
  }
  Expr operator()(std::vector<Expr> args) const { return detail::buffer_call(*this, std::move(args)); }
  T &at(const std::vector<int> &coords) const {
    return *reinterpret_cast<T *>(addressOf(coords.data(), static_cast<int>(coords.size())));
  }
  T *data() const { return reinterpret_cast<T *>(Host); }
  Buffer<T> cropped(int d, int min, int extent) const { return Buffer<T>(RawBuffer::cropped(d, min, extent)); }
  /// As Halide's: a width x height x channels image whose channels are innermost in memory (RGB
  /// RGB ...): strides channels, width * channels and 1. Read it through an ImageParam whose
  /// dim(0) stride is set to the channel count (and dim(2)'s to 1).
  static Buffer<T> make_interleaved(int width, int height, int channels) {
    Buffer<T> b(std::vector<int>{channels, width, height});
    b.Dims = {b.Dims[1], b.Dims[2], b.Dims[0]};
    return b;
  }

  /// Calls f(coords) for every element, dimension 0 fastest.
  template <typename F> void for_each_element(F f) const {
    std::vector<int> c(Dims.size());
    for (size_t i = 0; i < Dims.size(); ++i)
      c[i] = Dims[i].min;
    if (number_of_elements() == 0)
      return;
    while (true) {
      f(static_cast<const std::vector<int> &>(c));
      size_t d = 0;
      while (d < Dims.size() && ++c[d] == Dims[d].min + Dims[d].extent) {
        c[d] = Dims[d].min;
        ++d;
      }
      if (d == Dims.size())
        return;
    }
  }
  void fill(T value) const {
    for_each_element([&](const std::vector<int> &c) { at(c) = value; });
  }
};

} // namespace ptxjit

#pragma GCC visibility pop

#endif
