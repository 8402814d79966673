#ifndef PTXJIT_RUNTIME_CALLCONTEXT_H
#define PTXJIT_RUNTIME_CALLCONTEXT_H

/* What the `context` argument of every runtime entry point points to: one per realize call,
   filled by the JIT with the call's merged handlers. Nothing in the runtime reads a global or
   thread-local "current" context: a parallel task on any thread reports and launches through
   the context of the call that started it. Every callback receives `user_context`. */

#include <cuda.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ptxjit_call_context {
  void *user_context;
  void (*error)(void *user_context, const char *message);
  void (*print)(void *user_context, const char *message);
  /* GPU handlers; each returns 0 on success. */
  int (*acquire_context)(void *user_context, CUcontext *out, int create);
  int (*release_context)(void *user_context);
  int (*get_stream)(void *user_context, CUcontext context, CUstream *out);
  int (*device_malloc)(void *user_context, CUcontext context, CUstream stream, size_t bytes, CUdeviceptr *out);
  int (*device_free)(void *user_context, CUcontext context, CUstream stream, CUdeviceptr pointer);
  /* The runtime's own: the realize's open GPU session (cuda/Session.h), or null. */
  void *gpu_session;
} ptxjit_call_context;

#ifdef __cplusplus
}
#endif

#endif
