#ifndef PTXJIT_RUNTIME_CPU_HOSTRUNTIME_H
#define PTXJIT_RUNTIME_CPU_HOSTRUNTIME_H

/* The functions generated host code calls. Each receives the call's context first: nothing
   here reads global or thread-local "current" state, so a task on any worker thread reports
   to the caller that started it. */

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What `user_context` points to in generated host code: one per realize call. */
typedef struct ptxjit_host_call_context {
  void *user_context; /* the caller's JITUserContext */
  void (*error)(void *user_context, const char *message);
  void (*print)(void *user_context, const char *message);
} ptxjit_host_call_context;

typedef int32_t (*ptxjit_task_fn)(void *context, int32_t index, uint8_t *closure);

/* 64-byte aligned; reports an error naming `what` and returns null when out of memory. */
void *ptxjit_malloc(void *context, uint64_t bytes, const char *what);
void ptxjit_free(void *context, void *pointer);

/* Reports `format` with each '%' replaced by the next of `values`. */
void ptxjit_assert_failed(void *context, const char *format, int32_t count, const int64_t *values);

/* Runs task(context, i, closure) for i in [min, min + extent) on the thread pool and the calling
   thread. Returns the first non-zero task result (remaining iterations are skipped), else 0. */
int32_t ptxjit_do_par_for(void *context, ptxjit_task_fn task, int32_t min, int32_t extent, uint8_t *closure);

#ifdef __cplusplus
}
#endif

#endif
