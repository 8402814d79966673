#ifndef PTXJIT_RUNTIME_CUDA_DEFAULTHANDLERS_H
#define PTXJIT_RUNTIME_CUDA_DEFAULTHANDLERS_H

// The built-in GPU handlers, used where neither the call, the pipeline nor the defaults
// override one. Each returns 0 on success, else a CUresult or -1.

#include <cuda.h>

#include <cstddef>
#include <string>

namespace ptxjit::runtime::cuda {

/// The device a call runs on, the first that applies: `requested` when >= 0; the device of
/// `buffer` (a device address among the call's buffers, 0 for none); the device of the context
/// current on the calling thread (cudart's and PyTorch's set_device make one); PTXJIT_DEVICE; the
/// process's local rank (LOCAL_RANK from torchrun, OMPI_COMM_WORLD_LOCAL_RANK, SLURM_LOCALID);
/// 0. With one device in the machine the buffer and the current context are not asked.
int choose_device(int requested, CUdeviceptr buffer);

/// The compute capability (major*10+minor) of the device a call that requests none and passes
/// host buffers would run on (choose_device(-1, 0)), where this process has initialized CUDA
/// already (initialized_driver); else 0. Only asks the driver: no context is made or made
/// current, a process without CUDA is not given it.
int likely_device_capability();

/// The primary context of `device`, retained once per device for the life of the process (it is
/// the context the CUDA runtime, PyTorch and cuBLAS share). No other device is touched.
/// With create == false, fails unless the primary context is already active.
int default_acquire_context(int device, CUcontext *out, bool create, std::string *why);
int default_release_context();
/// The legacy default stream of the context.
int default_get_stream(CUcontext context, CUstream *out);
/// Stream-ordered allocation from ptxjit's transient pool of the context's device
/// (DevicePools.h); the context is current.
int default_device_malloc(CUcontext context, CUstream stream, size_t bytes, CUdeviceptr *out);
int default_device_free(CUcontext context, CUstream stream, CUdeviceptr pointer);

} // namespace ptxjit::runtime::cuda

#endif
