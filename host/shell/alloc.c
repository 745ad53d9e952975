/*
 * alloc.c - allocation counting for the whole player process.
 *
 * The shell exports malloc, calloc, realloc, free, posix_memalign, aligned_alloc,
 * memalign, valloc and pvalloc (the executable is linked with -rdynamic), so every
 * caller binds to these: glibc itself, dlopen'd AOT modules (their PLT resolves through
 * the global scope, where the executable comes first) and tcc-compiled JIT code (bound
 * explicitly with tcc_add_symbol, see td_player_alloc_symbols). They forward to glibc's
 * allocator through __libc_* and count with relaxed atomics (thread-safe, no locks).
 * Built with -fno-builtin so the compiler does not reason about malloc here.
 *
 * Under AddressSanitizer (the tools' sanitized build, TD_SANITIZE_TOOLS) the shell must not
 * define malloc: ASan's allocator is the process's, and a second definition would bypass
 * it. There the counts come from ASan's allocator hooks instead
 * (__sanitizer_install_malloc_and_free_hooks): every allocation and free is counted, a
 * realloc as one allocation and one free (the hooks do not tell it apart), and the live
 * bytes are the requested sizes. JIT code is bound to the same (intercepted) functions.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include "shell.h"     /* backend.h: TD_ASAN_BUILD */

#ifndef TD_ASAN_BUILD
extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t m);
extern void *__libc_realloc(void *p, size_t n);
extern void __libc_free(void *p);
extern void *__libc_memalign(size_t align, size_t n);
extern void *__libc_valloc(size_t n);
extern void *__libc_pvalloc(size_t n);

static uint64_t td_alloc_allocs, td_alloc_reallocs, td_alloc_frees, td_alloc_bytes;
/* Live heap bytes (usable sizes of live blocks), for the benchmarks' retained bytes. */
static int64_t td_alloc_live;
extern size_t malloc_usable_size(void *p);
#define TD_LIVE(v) __atomic_fetch_add(&td_alloc_live, (int64_t)(v), __ATOMIC_RELAXED)

#define TD_COUNT(var, v) __atomic_fetch_add(&(var), (uint64_t)(v), __ATOMIC_RELAXED)
#define TD_EXPORT __attribute__((visibility("default")))

static inline void *counted(void *p, size_t n)
{
    if (p) {
        TD_COUNT(td_alloc_allocs, 1);
        TD_COUNT(td_alloc_bytes, n);
        TD_LIVE(malloc_usable_size(p));
    }
    return p;
}

TD_EXPORT void *malloc(size_t n) { return counted(__libc_malloc(n), n); }

TD_EXPORT void *calloc(size_t n, size_t m)
{
    void *p = __libc_calloc(n, m);
    return counted(p, n * m);
}

TD_EXPORT void free(void *p)
{
    if (p) {
        TD_COUNT(td_alloc_frees, 1);
        TD_LIVE(-(int64_t)malloc_usable_size(p));
    }
    __libc_free(p);
}

TD_EXPORT void *realloc(void *p, size_t n)
{
    if (!p) return counted(__libc_realloc(NULL, n), n);
    size_t old = malloc_usable_size(p);
    void *q = __libc_realloc(p, n);
    if (n == 0) {
        /* glibc frees p and returns NULL */
        if (!q) {
            TD_COUNT(td_alloc_frees, 1);
            TD_LIVE(-(int64_t)old);
        }
        return q;
    }
    if (q) {
        TD_COUNT(td_alloc_reallocs, 1);
        TD_COUNT(td_alloc_bytes, n);
        TD_LIVE((int64_t)malloc_usable_size(q) - (int64_t)old);
    }
    return q;
}

TD_EXPORT void *memalign(size_t align, size_t n) { return counted(__libc_memalign(align, n), n); }

TD_EXPORT void *aligned_alloc(size_t align, size_t n)
{
    if (align == 0 || (align & (align - 1))) {
        errno = EINVAL;
        return NULL;
    }
    return counted(__libc_memalign(align, n), n);
}

TD_EXPORT int posix_memalign(void **out, size_t align, size_t n)
{
    if (align < sizeof(void *) || (align & (align - 1))) return EINVAL;
    int saved = errno;
    void *p = __libc_memalign(align, n);
    errno = saved;
    if (!p) return ENOMEM;
    *out = counted(p, n);
    return 0;
}

TD_EXPORT void *valloc(size_t n) { return counted(__libc_valloc(n), n); }
TD_EXPORT void *pvalloc(size_t n) { return counted(__libc_pvalloc(n), n); }

#else /* TD_ASAN_BUILD: count through the sanitizer's hooks */
#include <malloc.h>
#include <sanitizer/allocator_interface.h>
#include <stdlib.h>

static uint64_t td_alloc_allocs, td_alloc_reallocs, td_alloc_frees, td_alloc_bytes;
static int64_t td_alloc_live;
#define TD_COUNT(var, v) __atomic_fetch_add(&(var), (uint64_t)(v), __ATOMIC_RELAXED)
#define TD_LIVE(v) __atomic_fetch_add(&td_alloc_live, (int64_t)(v), __ATOMIC_RELAXED)

static void td_alloc_hook(const volatile void *p, size_t n)
{
    TD_COUNT(td_alloc_allocs, 1);
    TD_COUNT(td_alloc_bytes, n);
    TD_LIVE(n);
    (void)p;
}

static void td_free_hook(const volatile void *p)
{
    /* called before the block is released: its size is still known */
    if (p && __sanitizer_get_ownership((const void *)p)) {
        TD_COUNT(td_alloc_frees, 1);
        TD_LIVE(-(int64_t)__sanitizer_get_allocated_size((const void *)p));
    }
}

__attribute__((constructor)) static void td_alloc_install_hooks(void)
{
    __sanitizer_install_malloc_and_free_hooks(td_alloc_hook, td_free_hook);
}
#endif /* TD_ASAN_BUILD */

void td_player_alloc_read(td_player_alloc_counts *out)
{
    out->allocs = __atomic_load_n(&td_alloc_allocs, __ATOMIC_RELAXED);
    out->reallocs = __atomic_load_n(&td_alloc_reallocs, __ATOMIC_RELAXED);
    out->frees = __atomic_load_n(&td_alloc_frees, __ATOMIC_RELAXED);
    out->bytes = __atomic_load_n(&td_alloc_bytes, __ATOMIC_RELAXED);
}

int64_t td_player_alloc_live_bytes(void) { return __atomic_load_n(&td_alloc_live, __ATOMIC_RELAXED); }

const td_backend_symbol td_player_alloc_symbols[] = {
    { "malloc", (const void *)malloc },
    { "calloc", (const void *)calloc },
    { "realloc", (const void *)realloc },
    { "free", (const void *)free },
    { "memalign", (const void *)memalign },
    { "aligned_alloc", (const void *)aligned_alloc },
    { "posix_memalign", (const void *)posix_memalign },
    { "valloc", (const void *)valloc },
    { "pvalloc", (const void *)pvalloc },
    { NULL, NULL },
};
