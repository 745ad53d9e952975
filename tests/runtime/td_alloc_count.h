/*
 * td_alloc_count.h - counts the program's allocations by defining malloc and friends
 * (forwarding to glibc's __libc_* entry points). Include it in exactly one file of a
 * test program. Sanitizer builds define TD_TEST_NO_ALLOC_COUNT (the sanitizers own
 * malloc); td_alloc_counting() then reports 0 and allocation checks are skipped.
 */
#ifndef TD_ALLOC_COUNT_H
#define TD_ALLOC_COUNT_H

#include <stddef.h>
#include <stdint.h>
#include "../../runtime/port/td_port.h"

static volatile uint32_t td_alloc_calls;

#ifndef TD_TEST_NO_ALLOC_COUNT
void *__libc_malloc(size_t n);
void *__libc_calloc(size_t n, size_t m);
void *__libc_realloc(void *p, size_t n);
void __libc_free(void *p);

void *malloc(size_t n) { td_atomic_fetch_add_u32(&td_alloc_calls, 1); return __libc_malloc(n); }
void *calloc(size_t n, size_t m) { td_atomic_fetch_add_u32(&td_alloc_calls, 1); return __libc_calloc(n, m); }
void *realloc(void *p, size_t n) { td_atomic_fetch_add_u32(&td_alloc_calls, 1); return __libc_realloc(p, n); }
void free(void *p) { __libc_free(p); }
static int td_alloc_counting(void) { return 1; }
#else
static int td_alloc_counting(void) { return 0; }
#endif

static uint32_t td_alloc_count(void) { return td_atomic_load_u32(&td_alloc_calls); }

#endif
