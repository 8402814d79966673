#ifndef PTXJIT_RUNTIME_CUDA_CUDADRIVER_H
#define PTXJIT_RUNTIME_CUDA_CUDADRIVER_H

// The one place the CUDA driver is loaded: dlopen("libcuda.so.1") on first use, every entry
// point through cuGetProcAddress for the CUDA version of the headers ptxjit was built with.
// Loading happens once (thread-safe); nothing here creates a context.

#include <cuda.h>

#include <string>

namespace ptxjit::runtime::cuda {

struct DriverApi {
#define PTXJIT_CUDA_FUNCTION(name) decltype(&::name) name = nullptr;
#include "CudaFunctions.def"
#undef PTXJIT_CUDA_FUNCTION
  int version = 0; ///< cuDriverGetVersion, e.g. 13000
};

/// The loaded driver; throws RuntimeError("CUDA driver not found: ...") when there is none.
const DriverApi &driver();

/// The loaded driver, or null with the reason in `why` (for probes that must not throw).
const DriverApi *try_driver(std::string *why);

/// The loaded driver where this process has initialized CUDA already (ptxjit, a CUDA runtime,
/// PyTorch: cuInit was called), else null. Never loads the driver into a process that has not
/// loaded it nor initializes it: a probe for work that may be done ahead of time.
const DriverApi *initialized_driver();

/// The compute capability of device `ordinal` as major * 10 + minor (90 for sm_90), or 0 where
/// the driver cannot say (no such device, driver error): for probes that must not throw.
int device_capability(const DriverApi &api, int ordinal);

/// "CUDA_ERROR_OUT_OF_MEMORY (out of memory)".
std::string describe(CUresult result);

/// Why an allocation of `bytes` for `what` failed, from the allocator's return value: out of
/// memory, or (for the errors a kernel fault leaves on its context, such as
/// CUDA_ERROR_ILLEGAL_ADDRESS) a context that an earlier kernel made unusable.
std::string describe_allocation_failure(int result, uint64_t bytes, const std::string &what);

/// Throws RuntimeError naming the failing call, the driver's error name and string, and `what`.
[[noreturn]] void fail(const char *call, CUresult result, const std::string &what);

} // namespace ptxjit::runtime::cuda

/// Calls a driver function; a failure throws with the call's text and `what` (the pipeline,
/// kernel or buffer involved).
#define PTXJIT_CUDA_CALL(call, what)                                                               \
  do {                                                                                             \
    CUresult ptxjit_result_ = ::ptxjit::runtime::cuda::driver().call;                              \
    if (ptxjit_result_ != CUDA_SUCCESS)                                                            \
      ::ptxjit::runtime::cuda::fail(#call, ptxjit_result_, what);                                  \
  } while (0)

#endif
