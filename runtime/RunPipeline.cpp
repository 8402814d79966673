#include "RunPipeline.h"

#include "cuda/BufferStaging.h"
#include "cuda/CudaDriver.h"
#include "cuda/DeviceCode.h"
#include "cuda/GraphRecording.h"
#include "cuda/Session.h"
#include "ptxjit/RuntimeError.h"

#include <cstring>
#include <vector>

namespace ptxjit::runtime {

namespace {

using cuda::GraphRecording;

bool isBuffer(const PipelineArgument &a) { return a.kind != PipelineArgument::Kind::Scalar; }

void runHostCode(ptxjit_call_context *call, const PipelineRun &run) {
  if (int32_t result = run.function(call, run.args); result != 0)
    throw RuntimeError("error code " + std::to_string(result));
}

// What a graph's operations may depend on besides scalars: each buffer's type and shape.
std::string shapeKey(const PipelineRun &run) {
  std::string key;
  for (size_t i = 0; i < run.count; ++i) {
    if (!isBuffer(run.arguments[i]))
      continue;
    const ptxjit_buffer_t &b = run.buffers[i];
    key.append(reinterpret_cast<const char *>(&b.type), sizeof(b.type));
    key.append(reinterpret_cast<const char *>(b.dim), sizeof(ptxjit_dimension_t) * size_t(b.dimensions));
  }
  return key;
}

// The host code run once more for each divergence: recording into the cached graph (or a new
// one), rebuilding when the operations changed, on the stream when a graph cannot hold them.
void runAsGraph(cuda::Session &session, const PipelineRun &run) {
  cuda::GraphCache &cache = run.device_code->graphs(session.context());
  cuda::GraphCounters &counters = cuda::graph_counters();
  if (!cache.graphable()) {
    counters.stream_fallbacks.fetch_add(1, std::memory_order_relaxed);
    runHostCode(session.call(), run);
    return;
  }
  const std::string key = shapeKey(run);
  std::unique_ptr<cuda::CachedGraph> cached = cache.checkout(key);
  for (;;) {
    GraphRecording recording(session, *run.device_code, std::move(cached));
    session.set_recording(&recording);
    int32_t result = 0;
    try {
      result = run.function(session.call(), run.args);
    } catch (...) {
      session.set_recording(nullptr);
      throw;
    }
    session.set_recording(nullptr);
    if (recording.divergence() == GraphRecording::Divergence::None) {
      if (result != 0)
        throw RuntimeError("error code " + std::to_string(result));
      recording.launch_graph();
    }
    switch (recording.divergence()) {
    case GraphRecording::Divergence::None:
      cache.checkin(key, recording.release());
      return;
    case GraphRecording::Divergence::Operations:
      if (recording.replaying())
        continue; // build a graph of what the host code does now
      [[fallthrough]];
    case GraphRecording::Divergence::NotGraphable:
      cache.set_not_graphable();
      counters.stream_fallbacks.fetch_add(1, std::memory_order_relaxed);
      runHostCode(session.call(), run);
      return;
    }
  }
}

void runWithKernels(ptxjit_call_context *call, const PipelineRun &run) {
  cuda::Session session(call);
  // Inputs whose host data is newer than their device copy go up first, on the call's stream.
  for (size_t i = 0; i < run.count; ++i) {
    ptxjit_buffer_t &b = run.buffers[i];
    if (run.arguments[i].kind != PipelineArgument::Kind::InputBuffer || !run.arguments[i].on_device || !b.device ||
        !(b.flags & ptxjit_buffer_host_dirty))
      continue;
    if (size_t bytes = cuda::buffer_span_bytes(b))
      PTXJIT_CUDA_CALL(cuMemcpyHtoDAsync(b.device, b.host, bytes, session.stream()), "input " + run.arguments[i].name);
    b.flags &= ~uint64_t(ptxjit_buffer_host_dirty);
  }
  // Buffers that kernels use without a device copy of the caller's get one for the call. (The
  // bookkeeping is allocated only then: a realize on device buffers allocates nothing here.)
  auto needsStaging = [&](size_t i) {
    return isBuffer(run.arguments[i]) && run.arguments[i].on_device && !run.buffers[i].device;
  };
  cuda::BufferStaging staging(session);
  std::vector<uint64_t> stagedFlags;
  std::vector<bool> staged;
  for (size_t i = 0; i < run.count; ++i) {
    if (!needsStaging(i))
      continue;
    staged.resize(run.count, false);
    stagedFlags.resize(run.count, 0);
    staged[i] = true;
    stagedFlags[i] = run.buffers[i].flags;
    staging.stage(&run.buffers[i], run.arguments[i].name, run.arguments[i].kind == PipelineArgument::Kind::InputBuffer);
    run.buffers[i].flags = 0; // the host data is the newest, and now on the device too
  }
  if (run.cuda_graphs)
    runAsGraph(session, run);
  else
    runHostCode(call, run);
  for (size_t i = 0; i < run.count; ++i) {
    const PipelineArgument &a = run.arguments[i];
    ptxjit_buffer_t &b = run.buffers[i];
    if (!staged.empty() && staged[i]) {
      if (a.kind == PipelineArgument::Kind::OutputBuffer && (!a.on_host || (b.flags & ptxjit_buffer_device_dirty)))
        staging.download(&b, a.name);
      b.device = 0;
      b.flags = stagedFlags[i];
    } else if (!a.on_host && a.kind == PipelineArgument::Kind::OutputBuffer) {
      b.flags |= ptxjit_buffer_device_dirty; // only kernels wrote it
    }
  }
}

} // namespace

void run_pipeline(ptxjit_call_context *call, const PipelineRun &run) {
  if (run.device_code)
    runWithKernels(call, run);
  else
    runHostCode(call, run);
}

} // namespace ptxjit::runtime
