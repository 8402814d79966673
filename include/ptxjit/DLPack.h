#ifndef PTXJIT_DLPACK_H
#define PTXJIT_DLPACK_H

// DLPack interop (Debian's libdlpack-dev): a framework's tensor (a PyTorch tensor through
// torch.utils.dlpack, say) becomes a Buffer without a copy, and a Buffer becomes a tensor.
// DLPack lists dimensions outermost first; a Buffer innermost first, so the order is reversed.

#include "ptxjit/Buffer.h"

#include <dlpack/dlpack.h>

#pragma GCC visibility push(default)
namespace ptxjit {

/// Views `tensor`, which its owner keeps alive: CPU tensors as host buffers, CUDA tensors as
/// device-only buffers (Buffer::device set, no host memory). Throws std::invalid_argument naming
/// what is unsupported (element type, device kind, a non-unit innermost stride, sizes over 2^31).
RawBuffer buffer_from_dlpack(const DLTensor &tensor);
/// The same, taking ownership: the tensor's deleter runs when the last Buffer sharing it goes.
RawBuffer buffer_from_dlpack(DLManagedTensor *tensor);
/// The same, keeping `owner` alive as long as the Buffer.
RawBuffer buffer_from_dlpack(const DLTensor &tensor, std::shared_ptr<void> owner);

/// A tensor viewing `buffer` (its device copy when it has one, on CUDA device `cudaDevice`);
/// it keeps the buffer's storage alive until its deleter runs.
DLManagedTensor *buffer_to_dlpack(const RawBuffer &buffer, int cudaDevice = 0);

} // namespace ptxjit

#pragma GCC visibility pop

#endif
