/*
 * td_libc.h - the C library functions the runtime and the tandem subject call: the
 * allocator, abort, getenv and three memory functions.
 *
 * Under tcc they are declared here with their standard prototypes instead of through
 * <stdlib.h> and <string.h>: libtcc parses every header of the generated unit at the JIT
 * player's start, and those two headers are a large share of its load. C11 7.1.4 lets a program declare a library function
 * itself; the names are in parentheses because a C library may also define them as
 * macros. Every other compiler includes the headers.
 */
#ifndef TD_LIBC_H
#define TD_LIBC_H

#include <stddef.h>

#if defined(__TINYC__)
void *(malloc)(size_t size);
void *(calloc)(size_t count, size_t size);
void *(realloc)(void *ptr, size_t size);
void (free)(void *ptr);
void (abort)(void);
char *(getenv)(const char *name);
void *(memcpy)(void *restrict dst, const void *restrict src, size_t n);
void *(memmove)(void *dst, const void *src, size_t n);
void *(memset)(void *dst, int c, size_t n);
#else
#include <stdlib.h>
#include <string.h>
#endif

#endif
