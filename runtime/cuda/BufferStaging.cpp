#include "BufferStaging.h"

#include "CudaDriver.h"
#include "ReportError.h"
#include "Session.h"
#include "ptxjit/RuntimeError.h"

namespace ptxjit::runtime::cuda {

size_t buffer_span_bytes(const ptxjit_buffer_t &b) {
  int64_t last = 0;
  for (int d = 0; d < b.dimensions; ++d) {
    if (b.dim[d].extent <= 0)
      return 0;
    last += int64_t(b.dim[d].extent - 1) * b.dim[d].stride;
  }
  size_t element = size_t((b.type.bits + 7) / 8) * b.type.lanes;
  return size_t(last + 1) * element;
}

BufferStaging::BufferStaging(Session &session) : Open(session) {}

BufferStaging::~BufferStaging() {
  ptxjit_call_context *call = Open.call();
  for (CUdeviceptr p : Allocations)
    if (int r = call->device_free(call->user_context, Open.context(), Open.stream(), p); r != 0)
      report_error(call, "device_free failed with " + (r > 0 ? describe(CUresult(r)) : std::to_string(r)));
}

void BufferStaging::stage(ptxjit_buffer_t *buffer, const std::string &name, bool upload) {
  size_t bytes = buffer_span_bytes(*buffer);
  CUdeviceptr pointer = 0;
  ptxjit_call_context *call = Open.call();
  int r = call->device_malloc(call->user_context, Open.context(), Open.stream(), bytes, &pointer);
  if (r != 0 || !pointer)
    throw RuntimeError(describe_allocation_failure(r, bytes, "buffer " + name + " (device_malloc)"));
  Allocations.push_back(pointer);
  buffer->device = pointer;
  if (upload && bytes)
    PTXJIT_CUDA_CALL(cuMemcpyHtoDAsync(pointer, buffer->host, bytes, Open.stream()), "buffer " + name);
}

void BufferStaging::download(ptxjit_buffer_t *buffer, const std::string &name) {
  size_t bytes = buffer_span_bytes(*buffer);
  if (bytes)
    PTXJIT_CUDA_CALL(cuMemcpyDtoHAsync(buffer->host, buffer->device, bytes, Open.stream()), "buffer " + name);
  PTXJIT_CUDA_CALL(cuStreamSynchronize(Open.stream()), "the kernels of " + name);
}

} // namespace ptxjit::runtime::cuda
