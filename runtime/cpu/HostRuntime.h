#ifndef PTXJIT_RUNTIME_CPU_HOSTRUNTIME_H
#define PTXJIT_RUNTIME_CPU_HOSTRUNTIME_H

/* The functions generated host code calls for CPU work. Each receives the call's context
   (a ptxjit_call_context *) first. */

#include "CallContext.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef int32_t (*ptxjit_task_fn)(void *context, int32_t index, uint8_t *closure);

/* 64-byte aligned; reports an error naming `what` and returns null when out of memory. */
void *ptxjit_malloc(void *context, uint64_t bytes, const char *what);
void ptxjit_free(void *context, void *pointer);

/* Reports `format` with each '%' replaced by the next of `values`. */
void ptxjit_assert_failed(void *context, const char *format, int32_t count, const int64_t *values);

/* Passes `format` to the call's print handler with each "%i", "%u" or "%f" replaced by the next of
   `values` (a signed or unsigned integer, or the bits of a double), and "%%" by '%'. */
void ptxjit_print(void *context, const char *format, int32_t count, const uint64_t *values);

/* Runs task(context, i, closure) for i in [min, min + extent) on the thread pool and the calling
   thread. Returns the first non-zero task result (remaining iterations are skipped), else 0. */
int32_t ptxjit_do_par_for(void *context, ptxjit_task_fn task, int32_t min, int32_t extent, uint8_t *closure);

#ifdef __cplusplus
}
#endif

#endif
