/* jit_functions.h - where a tcc state's functions are in memory (jit_functions.c). */
#ifndef TD_JIT_FUNCTIONS_H
#define TD_JIT_FUNCTIONS_H

#include <stddef.h>

#include "backend.h"

/* The functions of the ELF object at obj_path (tcc's TCC_OUTPUT_OBJ of the TU that `state`, a
 * relocated TCCState, compiled in memory), at their addresses in that state's code. 0 with
 * *out (sorted by address) and *n, or -1 with err. */
int td_jit_object_functions(const char *obj_path, void *state, td_backend_function **out, size_t *n, char *err,
                            size_t errlen);

/* The whole file at path, NUL-terminated (for text; *size excludes the NUL), or NULL with err
 * naming the file as `what` ("the object"). An empty file is not read. */
unsigned char *td_jit_read_file(const char *path, const char *what, size_t *size, char *err, size_t errlen);

#endif
