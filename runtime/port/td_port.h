/*
 * td_port.h - the only place that knows which compiler builds the runtime.
 *
 * The runtime compiles unchanged with clang -O2 (and gcc) and with tcc 0.9.27.
 * tcc has no __atomic builtins, no thread-local storage, no __builtin_clz and never
 * inlines, so everything that differs lives here:
 *   - 32-bit, 64-bit (load / release store) and pointer atomics (clang: __atomic builtins; tcc: x86-64 lock-prefixed
 *     inline asm; x86-64 loads/stores are already acquire/release, tcc reorders nothing);
 *   - a spin lock built on them;
 *   - thread identity (pthread_self's value on both; read inline under clang/glibc);
 *   - inlining and branch hints (no-ops under tcc).
 * Read-modify-writes (CAS, exchange, fetch-add) and td_atomic_store_* are sequentially
 * consistent. td_atomic_store_release_u32 is a release store (x86-64: a plain mov, no
 * lock): for a store that only publishes what was written before it (a spin unlock, a
 * recycled source's new version, a single writer's publication) and that no later load
 * of another location on the same thread relies on being ordered after.
 */
#ifndef TD_PORT_H
#define TD_PORT_H

#include <stdint.h>
#include <pthread.h>

#if defined(__TINYC__)
#  define TD_INLINE static inline
#  define TD_NOINLINE
/* tcc exports every global and does not optimise: nothing to mark or to hide. */
#  define TD_EXPORT
#  define TD_OPAQUE(x) ((void)0)
#  define TD_LIKELY(x) (x)
#  define TD_UNLIKELY(x) (x)
#  define TD_COMPILER_NAME "tcc"
/* 0: inline fast-path wrappers would only add a call (tcc never inlines); headers then map
 * their fast-path names straight to the out-of-line functions. */
#  define TD_PORT_INLINES 0
#  if !defined(__x86_64__)
#    error "tandem: the tcc port supports x86-64 only"
#  endif

TD_INLINE uint32_t td_atomic_load_u32(volatile uint32_t *p)
{
    uint32_t v = *p;
    __asm__ __volatile__("" ::: "memory");
    return v;
}

TD_INLINE void td_atomic_store_u32(volatile uint32_t *p, uint32_t v)
{
    __asm__ __volatile__("xchgl %0, %1" : "+r"(v), "+m"(*p) : : "memory");
}

/* x86-64 stores are release stores: only the compiler must not reorder (tcc does not). */
TD_INLINE void td_atomic_store_release_u32(volatile uint32_t *p, uint32_t v)
{
    __asm__ __volatile__("" ::: "memory");
    *p = v;
    __asm__ __volatile__("" ::: "memory");
}

/* On failure *expected receives the current value. */
TD_INLINE int td_atomic_cas_u32(volatile uint32_t *p, uint32_t *expected, uint32_t desired)
{
    uint32_t prev = *expected;
    unsigned char ok;
    __asm__ __volatile__("lock; cmpxchgl %3, %1\n\tsete %0"
                         : "=q"(ok), "+m"(*p), "+a"(prev)
                         : "r"(desired)
                         : "memory", "cc");
    *expected = prev;
    return ok;
}

TD_INLINE uint32_t td_atomic_fetch_add_u32(volatile uint32_t *p, uint32_t v)
{
    __asm__ __volatile__("lock; xaddl %0, %1" : "+r"(v), "+m"(*p) : : "memory", "cc");
    return v;
}

TD_INLINE uint32_t td_atomic_exchange_u32(volatile uint32_t *p, uint32_t v)
{
    __asm__ __volatile__("xchgl %0, %1" : "+r"(v), "+m"(*p) : : "memory");
    return v;
}

TD_INLINE void *td_atomic_load_ptr(void *volatile *p)
{
    void *v = *p;
    __asm__ __volatile__("" ::: "memory");
    return v;
}

TD_INLINE void td_atomic_store_ptr(void *volatile *p, void *v)
{
    __asm__ __volatile__("xchgq %0, %1" : "+r"(v), "+m"(*p) : : "memory");
}

TD_INLINE void *td_atomic_exchange_ptr(void *volatile *p, void *v)
{
    __asm__ __volatile__("xchgq %0, %1" : "+r"(v), "+m"(*p) : : "memory");
    return v;
}

TD_INLINE int td_atomic_cas_ptr(void *volatile *p, void **expected, void *desired)
{
    void *prev = *expected;
    unsigned char ok;
    __asm__ __volatile__("lock; cmpxchgq %3, %1\n\tsete %0"
                         : "=q"(ok), "+m"(*p), "+a"(prev)
                         : "r"(desired)
                         : "memory", "cc");
    *expected = prev;
    return ok;
}

/* 64-bit values written by one thread and read by others (clocks): aligned x86-64 moves are
 * single-copy atomic. */
TD_INLINE int64_t td_atomic_load_i64(volatile int64_t *p)
{
    int64_t v = *p;
    __asm__ __volatile__("" ::: "memory");
    return v;
}

TD_INLINE void td_atomic_store_release_i64(volatile int64_t *p, int64_t v)
{
    __asm__ __volatile__("" ::: "memory");
    *p = v;
    __asm__ __volatile__("" ::: "memory");
}

TD_INLINE void td_cpu_relax(void) { __asm__ __volatile__("pause" ::: "memory"); }

#else /* clang, gcc */
#  define TD_INLINE static inline __attribute__((always_inline))
#  define TD_NOINLINE __attribute__((noinline))
/* Visible from a -fvisibility=hidden module (its one entry table). */
#  define TD_EXPORT __attribute__((visibility("default")))
/* Hide a value from the optimiser (benchmarks: keep a computed result alive). */
#  define TD_OPAQUE(x) __asm__ __volatile__("" : "+r"(x))
#  define TD_PORT_INLINES 1
#  define TD_LIKELY(x) __builtin_expect(!!(x), 1)
#  define TD_UNLIKELY(x) __builtin_expect(!!(x), 0)
#  if defined(__clang__)
#    define TD_COMPILER_NAME "clang"
#  else
#    define TD_COMPILER_NAME "gcc"
#  endif

TD_INLINE uint32_t td_atomic_load_u32(volatile uint32_t *p)
{ return __atomic_load_n(p, __ATOMIC_SEQ_CST); }
TD_INLINE void td_atomic_store_u32(volatile uint32_t *p, uint32_t v)
{ __atomic_store_n(p, v, __ATOMIC_SEQ_CST); }
TD_INLINE void td_atomic_store_release_u32(volatile uint32_t *p, uint32_t v)
{ __atomic_store_n(p, v, __ATOMIC_RELEASE); }
TD_INLINE int td_atomic_cas_u32(volatile uint32_t *p, uint32_t *expected, uint32_t desired)
{ return __atomic_compare_exchange_n(p, expected, desired, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); }
TD_INLINE uint32_t td_atomic_fetch_add_u32(volatile uint32_t *p, uint32_t v)
{ return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }
TD_INLINE uint32_t td_atomic_exchange_u32(volatile uint32_t *p, uint32_t v)
{ return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST); }
TD_INLINE void *td_atomic_load_ptr(void *volatile *p)
{ return __atomic_load_n(p, __ATOMIC_SEQ_CST); }
TD_INLINE void td_atomic_store_ptr(void *volatile *p, void *v)
{ __atomic_store_n(p, v, __ATOMIC_SEQ_CST); }
TD_INLINE void *td_atomic_exchange_ptr(void *volatile *p, void *v)
{ return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST); }
TD_INLINE int td_atomic_cas_ptr(void *volatile *p, void **expected, void *desired)
{ return __atomic_compare_exchange_n(p, expected, desired, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); }
TD_INLINE int64_t td_atomic_load_i64(volatile int64_t *p)
{ return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
TD_INLINE void td_atomic_store_release_i64(volatile int64_t *p, int64_t v)
{ __atomic_store_n(p, v, __ATOMIC_RELEASE); }
#  if defined(__x86_64__) || defined(__i386__)
TD_INLINE void td_cpu_relax(void) { __builtin_ia32_pause(); }
#  else
TD_INLINE void td_cpu_relax(void) { }
#  endif
#endif

/* A test-and-set spin lock: pools and queues hold it for a handful of instructions. */
typedef struct td_spinlock { volatile uint32_t held; } td_spinlock;
#define TD_SPINLOCK_INIT { 0 }

TD_INLINE void td_spin_lock(td_spinlock *l)
{
    while (td_atomic_exchange_u32(&l->held, 1) != 0) {
        while (td_atomic_load_u32(&l->held) != 0)
            td_cpu_relax();
    }
}

TD_INLINE void td_spin_unlock(td_spinlock *l) { td_atomic_store_release_u32(&l->held, 0); }

/* Thread identity: an opaque integer, equal only for the same live thread. The value is
 * pthread_self()'s on both compilers; under clang on x86-64 glibc it is read inline from
 * the thread control block (%fs:0x10 is where glibc's pthread_self reads it), no call. */
#if !defined(__TINYC__) && defined(__x86_64__) && defined(__GLIBC__)
TD_INLINE uintptr_t td_thread_self(void)
{
    uintptr_t self;
    __asm__("movq %%fs:0x10, %0" : "=r"(self));
    return self;
}
#else
TD_INLINE uintptr_t td_thread_self(void) { return (uintptr_t)pthread_self(); }
#endif

#endif /* TD_PORT_H */
