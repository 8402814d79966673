#ifndef PTXJIT_RUNTIME_RUNTIMEINTERFACE_H
#define PTXJIT_RUNTIME_RUNTIMEINTERFACE_H

/* The interface between generated host code and the runtime: the functions of
   RuntimeFunctions.def, declared from that table. */

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef int32_t (*ptxjit_task_fn)(void *context, int32_t index, uint8_t *closure);
struct ptxjit_buffer_t;

#define PTXJIT_RUNTIME_FUNCTION(result, name, parameters) result name parameters;
#include "RuntimeFunctions.def"
#undef PTXJIT_RUNTIME_FUNCTION

#ifdef __cplusplus
}
#endif

#endif
