#ifndef PTXJIT_RUNTIME_CUDA_CUDARUNTIME_H
#define PTXJIT_RUNTIME_CUDA_CUDARUNTIME_H

/* The functions generated host code calls for GPU work. Each takes the call's context
   (a ptxjit_call_context *) first, acquires a context through the call's handler, makes it
   current only for its own driver calls, and reports failures through the error handler.
   Nothing here allocates on the heap per launch. */

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Launches kernel `kernel` of `device_code` (a DeviceCode *) with `args`, one pointer to each
   argument's value; with `synchronize` (the debug target feature) waits for it, so that a fault
   is reported with the kernel's name. Returns 0, or -1 after reporting the error. */
int32_t ptxjit_cuda_launch(void *context, void *device_code, int32_t kernel, int32_t grid_x, int32_t grid_y,
                           int32_t grid_z, int32_t block_x, int32_t block_y, int32_t block_z, int32_t shared_bytes,
                           void **args, int32_t synchronize);

/* Device memory for an intermediate, through the device_malloc handler on the call's stream.
   Returns the device address, or null after reporting an error naming `what`. */
void *ptxjit_cuda_malloc(void *context, uint64_t bytes, const char *what);
void ptxjit_cuda_free(void *context, void *pointer);

/* The copies between a buffer's host and device memory that host stages need: each copies only
   when the other side is newer (host_dirty, device_dirty) and clears that flag; copy_to_host
   waits for the copy. `name` names the buffer in errors. Returns 0, or -1 after reporting. */
struct ptxjit_buffer_t;
int32_t ptxjit_cuda_copy_to_device(void *context, struct ptxjit_buffer_t *buffer, const char *name);
int32_t ptxjit_cuda_copy_to_host(void *context, struct ptxjit_buffer_t *buffer, const char *name);

#ifdef __cplusplus
}
#endif

#endif
