#include "GraphRecording.h"

#include "CudaDriver.h"
#include "Session.h"
#include "ptxjit/RuntimeError.h"

#include <cstring>

namespace ptxjit::runtime::cuda {

namespace {

size_t alignedTo8(size_t n) { return (n + 7) & ~size_t(7); }

// The argument values, each at an 8-byte aligned offset.
void packArguments(const std::vector<uint32_t> &sizes, void **args, std::vector<uint8_t> &out) {
  size_t total = 0;
  for (uint32_t size : sizes)
    total = alignedTo8(total) + size;
  out.assign(total, 0);
  size_t offset = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    offset = alignedTo8(offset);
    std::memcpy(out.data() + offset, args[i], sizes[i]);
    offset += sizes[i];
  }
}

// Pointers to each argument in a packed block, as kernelParams.
std::vector<void *> argumentPointers(const std::vector<uint32_t> &sizes, std::vector<uint8_t> &packed) {
  std::vector<void *> pointers;
  size_t offset = 0;
  for (uint32_t size : sizes) {
    offset = alignedTo8(offset);
    pointers.push_back(packed.data() + offset);
    offset += size;
  }
  return pointers;
}

CUDA_KERNEL_NODE_PARAMS kernelNodeParams(const GraphOperation &op, void **params) {
  CUDA_KERNEL_NODE_PARAMS p{};
  p.func = op.function;
  p.gridDimX = op.grid[0];
  p.gridDimY = op.grid[1];
  p.gridDimZ = op.grid[2];
  p.blockDimX = op.block[0];
  p.blockDimY = op.block[1];
  p.blockDimZ = op.block[2];
  p.sharedMemBytes = op.shared_bytes;
  p.kernelParams = params;
  return p;
}

} // namespace

GraphRecording::GraphRecording(Session &session, DeviceCode &code, std::unique_ptr<CachedGraph> cached)
    : Open(session), Code(code), Graph(std::move(cached)), Replaying(Graph != nullptr) {
  if (Replaying)
    return;
  PTXJIT_CUDA_CALL(cuCtxGetDevice(&Device), "the graph of " + Code.pipeline());
  Graph = std::make_unique<CachedGraph>();
  PTXJIT_CUDA_CALL(cuGraphCreate(&Graph->graph, 0), "the graph of " + Code.pipeline());
  graph_counters().built.fetch_add(1, std::memory_order_relaxed);
}

void GraphRecording::diverge(Divergence why) {
  Divergence none = Divergence::None;
  Diverged.compare_exchange_strong(none, why, std::memory_order_acq_rel);
}

GraphOperation *GraphRecording::expect(GraphOperation::Kind kind) {
  if (Next >= Graph->operations.size() || Graph->operations[Next].kind != kind) {
    diverge(Divergence::Operations);
    return nullptr;
  }
  return &Graph->operations[Next++];
}

size_t GraphRecording::dependencies(CUgraphNode *out) const {
  if (Graph->operations.empty())
    return 0;
  *out = Graph->operations.back().node;
  return 1;
}

CUdeviceptr GraphRecording::allocate(uint64_t bytes) {
  if (divergence() != Divergence::None)
    return 0;
  if (Replaying) {
    GraphOperation *op = expect(GraphOperation::Kind::Allocate);
    if (!op || op->bytes != bytes) {
      diverge(Divergence::Operations);
      return 0;
    }
    return op->pointer;
  }
  CUDA_MEM_ALLOC_NODE_PARAMS params{};
  params.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  params.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  params.poolProps.location.id = Device;
  params.bytesize = bytes ? bytes : 1;
  GraphOperation op;
  op.kind = GraphOperation::Kind::Allocate;
  op.bytes = bytes;
  CUgraphNode after = nullptr;
  size_t count = dependencies(&after);
  PTXJIT_CUDA_CALL(cuGraphAddMemAllocNode(&op.node, Graph->graph, &after, count, &params),
                   "an intermediate of " + std::to_string(bytes) + " bytes in the graph of " + Code.pipeline());
  op.pointer = params.dptr;
  Graph->operations.push_back(std::move(op));
  return params.dptr;
}

bool GraphRecording::launch(int32_t kernel, CUfunction function, const uint32_t grid[3], const uint32_t block[3],
                            uint32_t sharedBytes, void **args) {
  if (divergence() != Divergence::None)
    return false;
  const std::vector<uint32_t> &sizes = Code.argument_bytes(kernel);
  if (Replaying) {
    GraphOperation *op = expect(GraphOperation::Kind::Launch);
    if (!op || op->kernel != kernel || op->shared_bytes != sharedBytes ||
        !std::equal(grid, grid + 3, op->grid) || !std::equal(block, block + 3, op->block)) {
      diverge(Divergence::Operations);
      return false;
    }
    op->function = function;
    packArguments(sizes, args, Scratch);
    if (Scratch != op->arguments) {
      op->arguments.swap(Scratch);
      Changed.push_back(size_t(op - Graph->operations.data()));
    }
    return true;
  }
  GraphOperation op;
  op.kind = GraphOperation::Kind::Launch;
  op.kernel = kernel;
  op.function = function;
  std::copy(grid, grid + 3, op.grid);
  std::copy(block, block + 3, op.block);
  op.shared_bytes = sharedBytes;
  packArguments(sizes, args, op.arguments);
  std::vector<void *> params = argumentPointers(sizes, op.arguments);
  CUDA_KERNEL_NODE_PARAMS node = kernelNodeParams(op, params.data());
  CUgraphNode after = nullptr;
  size_t count = dependencies(&after);
  PTXJIT_CUDA_CALL(cuGraphAddKernelNode(&op.node, Graph->graph, &after, count, &node),
                   "kernel " + Code.kernel_name(kernel) + " of " + Code.pipeline() + " in its graph");
  Graph->operations.push_back(std::move(op));
  return true;
}

void GraphRecording::free(CUdeviceptr pointer) {
  if (divergence() != Divergence::None)
    return;
  if (Replaying) {
    GraphOperation *op = expect(GraphOperation::Kind::Free);
    if (op && op->pointer != pointer)
      diverge(Divergence::Operations);
    return;
  }
  GraphOperation op;
  op.kind = GraphOperation::Kind::Free;
  op.pointer = pointer;
  CUgraphNode after = nullptr;
  size_t count = dependencies(&after);
  PTXJIT_CUDA_CALL(cuGraphAddMemFreeNode(&op.node, Graph->graph, &after, count, pointer),
                   "an intermediate in the graph of " + Code.pipeline());
  Graph->operations.push_back(std::move(op));
}

void GraphRecording::launch_graph() {
  GraphCounters &counters = graph_counters();
  if (Replaying) {
    if (Next != Graph->operations.size()) {
      diverge(Divergence::Operations);
      return;
    }
    for (size_t index : Changed) {
      GraphOperation &op = Graph->operations[index];
      std::vector<void *> params = argumentPointers(Code.argument_bytes(op.kernel), op.arguments);
      CUDA_KERNEL_NODE_PARAMS node = kernelNodeParams(op, params.data());
      PTXJIT_CUDA_CALL(cuGraphExecKernelNodeSetParams(Graph->exec, op.node, &node),
                       "kernel " + Code.kernel_name(op.kernel) + " of " + Code.pipeline() + " in its graph");
    }
    counters.updated_nodes.fetch_add(Changed.size(), std::memory_order_relaxed);
    counters.replayed.fetch_add(1, std::memory_order_relaxed);
  } else {
    PTXJIT_CUDA_CALL(cuGraphInstantiateWithFlags(&Graph->exec, Graph->graph, 0), "the graph of " + Code.pipeline());
    counters.instantiated.fetch_add(1, std::memory_order_relaxed);
  }
  PTXJIT_CUDA_CALL(cuGraphLaunch(Graph->exec, Open.stream()), "the graph of " + Code.pipeline());
}

} // namespace ptxjit::runtime::cuda
