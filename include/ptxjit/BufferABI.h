#ifndef PTXJIT_BUFFERABI_H
#define PTXJIT_BUFFERABI_H

/* The buffer descriptor that generated code reads and the runtime fills. A C layout, stable
   across the compiler, the runtime and ahead-of-time code. */

#include <stdint.h>

#pragma GCC visibility push(default)
#ifdef __cplusplus
extern "C" {
#endif

/* float with 16 bits is IEEE binary16; bfloat (16 bits) is the upper half of a float32. */
typedef enum ptxjit_type_code_t {
  ptxjit_type_int = 0,
  ptxjit_type_uint = 1,
  ptxjit_type_float = 2,
  ptxjit_type_bfloat = 3
} ptxjit_type_code_t;

typedef struct ptxjit_type_t {
  uint8_t code; /* ptxjit_type_code_t */
  uint8_t bits;
  uint16_t lanes;
} ptxjit_type_t;

typedef struct ptxjit_dimension_t {
  int32_t min, extent, stride; /* stride in elements */
  uint32_t flags;
} ptxjit_dimension_t;

typedef struct ptxjit_buffer_t {
  uint64_t device;   /* device pointer, 0 when none */
  uint8_t *host;     /* host pointer of the element at (min, min, ...) */
  uint64_t flags;    /* ptxjit_buffer_flag_t */
  ptxjit_type_t type;
  int32_t dimensions;
  ptxjit_dimension_t *dim;
} ptxjit_buffer_t;

typedef enum ptxjit_buffer_flag_t {
  ptxjit_buffer_host_dirty = 1,
  ptxjit_buffer_device_dirty = 2,
} ptxjit_buffer_flag_t;

#ifdef __cplusplus
}
#endif

#pragma GCC visibility pop

#endif
