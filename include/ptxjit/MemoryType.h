#ifndef PTXJIT_MEMORYTYPE_H
#define PTXJIT_MEMORYTYPE_H

#pragma GCC visibility push(default)
namespace ptxjit {

/// Where a Func's storage lives (Func::store_in).
enum class MemoryType : unsigned char {
  Auto,      ///< host: stack when small and constant, else heap; GPU: device memory at root,
             ///< shared memory at a gpu_blocks loop, registers inside gpu_threads loops
  Heap,      ///< host heap, or device memory outside kernels
  GPUShared, ///< shared memory of a GPU block (the Func is computed at a gpu_blocks loop)
  Register,  ///< per-thread storage (the Func is computed inside gpu_threads loops)
};

} // namespace ptxjit

#pragma GCC visibility pop

#endif
