#ifndef PTXJIT_RUNTIME_CUDA_BUFFERSTAGING_H
#define PTXJIT_RUNTIME_CUDA_BUFFERSTAGING_H

// Device copies of a realize's host buffers: device memory from the call's device_malloc
// handler, uploads and downloads on the call's stream, and every allocation freed (stream-
// ordered) when the staging ends, errors included.

#include "ptxjit/BufferABI.h"
#include "CallContext.h"

#include <string>
#include <vector>

namespace ptxjit::runtime::cuda {

class Session;

class BufferStaging {
public:
  explicit BufferStaging(Session &session);
  ~BufferStaging();
  BufferStaging(const BufferStaging &) = delete;
  BufferStaging &operator=(const BufferStaging &) = delete;

  /// Gives `buffer` device storage (its `device` field); copies the host data there when `upload`.
  void stage(ptxjit_buffer_t *buffer, const std::string &name, bool upload);
  /// Copies `buffer` back to its host memory and waits for the stream.
  void download(ptxjit_buffer_t *buffer, const std::string &name);

private:
  Session &Open;
  std::vector<CUdeviceptr> Allocations;
};

/// Bytes from a buffer's first element to the end of its last.
size_t buffer_span_bytes(const ptxjit_buffer_t &buffer);

} // namespace ptxjit::runtime::cuda

#endif
