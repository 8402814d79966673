#ifndef PTXJIT_DEVICEBUFFERS_H
#define PTXJIT_DEVICEBUFFERS_H

// Device copies that Buffers own, moved through a call's handlers: the context they acquire,
// the stream get_stream gives. The memory comes from the call's device_malloc handler, else from
// ptxjit's buffer pool for the device (apart from the pool intermediates use), and is freed when
// the last Buffer sharing it goes, or by device_free (see JITHandlers::device_free).

#include "ptxjit/Buffer.h"
#include "ptxjit/JIT.h"

#pragma GCC visibility push(default)
namespace ptxjit {

/// Gives `buffer` device memory of its own if it has no device copy yet, and copies the host data
/// there on the call's stream (without waiting). Clears host_dirty.
void copy_to_device(RawBuffer &buffer, JITUserContext *context = nullptr);

/// If the device copy is newer (device_dirty), copies it to the host on the call's stream and
/// waits for it. Clears device_dirty.
void copy_to_host(RawBuffer &buffer, JITUserContext *context = nullptr);

/// Waits until the call's stream has finished the work queued on it.
void device_sync(JITUserContext *context = nullptr);

/// Drops this Buffer's device copy once the call's stream is done with it; the memory is freed
/// when no other Buffer shares it. The Buffer keeps its host data.
void device_free(RawBuffer &buffer, JITUserContext *context = nullptr);

} // namespace ptxjit

#pragma GCC visibility pop

#endif
