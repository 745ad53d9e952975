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
 *   - per-thread pointers (TD_TLS_*: __thread under clang, pthread keys under tcc);
 *   - inlining and branch hints (no-ops under tcc);
 *   - td_zero_8 / _16 / _24 / _32, fixed-size clears (immediate stores under tcc), and
 *     their _at forms at a constant offset from a base;
 *   - td_compiler_barrier, the light side of the ownership's asymmetric fence (ownership.c);
 *   - under tcc only, asm blocks for the hottest statements tcc compiles worst: the pools'
 *     owner-segment pop and push (pool.h) and a succeeded outcome's stores (task.h); the
 *     consumption's common cases as asm functions (TD_PORT_DEFINE_TASK_GETS_,
 *     TD_PORT_DEFINE_TASK_RESULTS_) and a
 *     step's return with a value as one (TD_PORT_DEFINE_RUNNER_RETURN_).
 * Read-modify-writes (CAS, exchange, fetch-add) and td_atomic_store_* are sequentially
 * consistent. td_atomic_store_release_u32 is a release store (x86-64: a plain mov, no
 * lock): for a store that only publishes what was written before it (a spin unlock, a
 * recycled source's new version, a single writer's publication) and that no later load
 * of another location on the same thread relies on being ordered after.
 */
#ifndef TD_PORT_H
#define TD_PORT_H

#include <stdint.h>
/* <pthread.h> only where this header itself needs it (td_thread_self's fallback below): the
 * runtime's sources include it through td_internal.h, for the tcc TLS macros and the
 * workers; a player or subject that never expands them does not pay libtcc for parsing it. */
#if !(defined(__x86_64__) && defined(__GLIBC__))
#include <pthread.h>
#endif

#if defined(__TINYC__)
#  define TD_INLINE static inline
#  define TD_ALWAYS_INLINE
#  define TD_NOINLINE
#  define TD_MAYBE_UNUSED
#  define TD_FLATTEN
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

/* tcc never inlines, so a helper function would cost a call (and an argument shuffle) on
 * every hot path: under tcc the atomics are macros with the same names and meaning as
 * clang's functions. x86-64 loads are acquire and stores release; only the compiler must
 * not reorder or cache, and tcc does neither (it keeps no value in a register across a
 * statement and emits accesses in source order), so loads and release stores are plain
 * volatile moves, with no temporary (tcc would spill it to the stack and load it back);
 * read-modify-writes are lock-prefixed (or xchg, locked by definition). */
#define td_atomic_load_u32(p) (*(volatile uint32_t *)(p))
#define td_atomic_load_relaxed_u32(p) (*(volatile uint32_t *)(p))
#define td_atomic_store_release_u32(p, v) ((void)(*(volatile uint32_t *)(p) = (uint32_t)(v)))
#define td_atomic_store_u32(p, v) \
    ({ uint32_t td_v_ = (v); \
       __asm__ __volatile__("xchgl %0, %1" : "+r"(td_v_), "+m"(*(volatile uint32_t *)(p)) : : "memory"); (void)0; })
/* On failure *expected receives the current value. `*(expected)` is the asm's accumulator
 * operand itself (every caller passes &local, which tcc folds back to the local): no pointer
 * or copy of it on the stack. */
#define td_atomic_cas_u32(p, expected, desired) \
    ({ unsigned char td_ok_; \
       __asm__ __volatile__("lock; cmpxchgl %3, %1\n\tsete %0" \
                            : "=q"(td_ok_), "+m"(*(volatile uint32_t *)(p)), "+a"(*(expected)) \
                            : "r"((uint32_t)(desired)) : "memory", "cc"); \
       (int)td_ok_; })
#define td_atomic_fetch_add_u32(p, v) \
    ({ uint32_t td_v_ = (v); \
       __asm__ __volatile__("lock; xaddl %0, %1" : "+r"(td_v_), "+m"(*(volatile uint32_t *)(p)) : : "memory", "cc"); \
       td_v_; })
#define td_atomic_exchange_u32(p, v) \
    ({ uint32_t td_v_ = (v); \
       __asm__ __volatile__("xchgl %0, %1" : "+r"(td_v_), "+m"(*(volatile uint32_t *)(p)) : : "memory"); td_v_; })
#define td_atomic_load_ptr(p) (*(void *volatile *)(p))
#define td_atomic_store_ptr(p, v) \
    ({ void *td_v_ = (v); \
       __asm__ __volatile__("xchgq %0, %1" : "+r"(td_v_), "+m"(*(void *volatile *)(p)) : : "memory"); (void)0; })
#define td_atomic_exchange_ptr(p, v) \
    ({ void *td_v_ = (v); \
       __asm__ __volatile__("xchgq %0, %1" : "+r"(td_v_), "+m"(*(void *volatile *)(p)) : : "memory"); td_v_; })
#define td_atomic_cas_ptr(p, expected, desired) \
    ({ unsigned char td_ok_; \
       __asm__ __volatile__("lock; cmpxchgq %3, %1\n\tsete %0" \
                            : "=q"(td_ok_), "+m"(*(void *volatile *)(p)), "+a"(*(expected)) \
                            : "r"((void *)(desired)) : "memory", "cc"); \
       (int)td_ok_; })
/* 64-bit values written by one thread and read by others (clocks): aligned x86-64 moves are
 * single-copy atomic. */
#define td_atomic_load_i64(p) (*(volatile int64_t *)(p))
#define td_atomic_store_release_i64(p, v) ((void)(*(volatile int64_t *)(p) = (int64_t)(v)))
#define td_cpu_relax() ({ __asm__ __volatile__("pause" ::: "memory"); (void)0; })
/* No compiler reordering across it (tcc reorders nothing, but the asm says so). */
#define td_compiler_barrier() ({ __asm__ __volatile__("" ::: "memory"); (void)0; })
/* Zero 8, 16, 24 or 32 bytes at an 8-byte aligned address with immediate word stores (tcc
 * would compute the address, load a zero and store it for each word: four instructions
 * apiece); the _at forms at a constant offset from base (a runner's frame, async.h), where
 * tcc would also compute the address, spill it and load it back. */
#define td_zero_8_at(base, off) \
    ({ __asm__ __volatile__("movq $0, %c1(%0)" : : "r"(base), "i"(off) : "memory"); (void)0; })
#define td_zero_16_at(base, off) \
    ({ __asm__ __volatile__("movq $0, %c1(%0)\n\tmovq $0, 8+%c1(%0)" : : "r"(base), "i"(off) : "memory"); (void)0; })
#define td_zero_24_at(base, off) \
    ({ __asm__ __volatile__("movq $0, %c1(%0)\n\tmovq $0, 8+%c1(%0)\n\tmovq $0, 16+%c1(%0)" \
                            : : "r"(base), "i"(off) : "memory"); (void)0; })
#define td_zero_32_at(base, off) \
    ({ __asm__ __volatile__("movq $0, %c1(%0)\n\tmovq $0, 8+%c1(%0)\n\tmovq $0, 16+%c1(%0)\n\t" \
                            "movq $0, 24+%c1(%0)" : : "r"(base), "i"(off) : "memory"); (void)0; })
#define td_zero_8(p) td_zero_8_at((p), 0)
#define td_zero_16(p) td_zero_16_at((p), 0)
#define td_zero_24(p) td_zero_24_at((p), 0)
#define td_zero_32(p) td_zero_32_at((p), 0)
/* A 40-byte record at an 8-byte aligned p: the 32-bit `tag` at 0, the 64-bit v at 8, zeros
 * at 16, 24 and 32 (a succeeded td_outcome, task.h, which checks that layout): one asm block
 * for what tcc writes as three stores through a reloaded pointer and a clear. */
#define td_port_store_tag_value_zero24_(p, tag, v)                                         \
    ({  __asm__ __volatile__("movl %2, (%0)\n\tmovq %1, 8(%0)\n\tmovq $0, 16(%0)\n\t"      \
                             "movq $0, 24(%0)\n\tmovq $0, 32(%0)"                         \
                             : : "r"(p), "r"((int64_t)(v)), "i"(tag) : "memory");          \
        (void)0; })
/* The assembly functions (consumption, a step's return): their own header. */
#  include "td_port_tcc_asm.h"
/* Thread identity: glibc keeps pthread_self()'s value at %fs:0x10 (as read under clang). */
/* No thread-local storage under tcc: per-thread pointers live in pthread keys, created by
 * td_runtime_init (TD_TLS_CREATE) and deleted at shutdown. */
#  define TD_TLS_DEFINE(name) static pthread_key_t name
#  define TD_TLS_CREATE(name) pthread_key_create(&(name), NULL)
#  define TD_TLS_DELETE(name) ((void)pthread_key_delete(name))
#  define TD_TLS_GET(name) pthread_getspecific(name)
#  define TD_TLS_SET(name, v) ((void)pthread_setspecific((name), (v)))
#  if defined(__GLIBC__)
/* Operand 0 gets this thread's identity (pthread_self()'s value, where glibc keeps it). */
#    define TD_PORT_SELF_ASM_ "movq %%fs:0x10, %0"
#    define td_thread_self() ({ uintptr_t td_self_; __asm__(TD_PORT_SELF_ASM_ : "=r"(td_self_)); td_self_; })
#    define TD_THREAD_SELF_DEFINED 1
/* The pools' owner segment (pool.h), each operation one asm block: tcc would keep the pool
 * pointer and the count on the stack and reload them for every field. `base` points at the pool; the offsets name its owner-segment
 * count (uint32_t), bound (uint32_t, the push's) and slot array (void **); `owner` is the
 * owner thread's identity (td_thread_self's value). Plain loads and stores, in the order the
 * C fast paths use (x86-64 stores are release stores). td_port_owner_pop_(obj, ...): the
 * lvalue obj gets the top object, popped, or NULL when this is not the owner thread or the
 * segment is empty; td_port_owner_pop_mark_held_ also stores the 32-bit constant `mark` at
 * `mark_off` in the object it pops and tests the 32-bit word at `test_off` against the
 * constant `busy`: an object with any of those bits is not taken, the lvalue held gets it
 * and obj is NULL (held is NULL otherwise). td_port_owner_push_: 1 when obj was pushed (the owner
 * thread, below the bound), else 0. The blocks test the owner with the identity
 * td_thread_self reads, so they exist only where it is glibc's %fs:0x10; elsewhere pool.h
 * keeps its C paths. The fragments every block shares: operand 0 a scratch register, operand
 * 3 the owner's identity; not the owner jumps to 1, which leaves operand 0 zero. */
#define TD_PORT_OWNER_ONLY_ASM_ TD_PORT_SELF_ASM_ "\n\tcmpq %0, %3\n\tjne 1f\n\t"
#define TD_PORT_OWNER_END_ASM_ "jmp 2f\n1:\txorl %k0, %k0\n2:"
#define TD_PORT_OWNER_POP_ASM_(then)                                                      \
    TD_PORT_OWNER_ONLY_ASM_                                                                \
    "movl %c4(%2), %k0\n\t"                                                                \
    "testl %k0, %k0\n\t"                                                                   \
    "jz 1f\n\t"                                                                            \
    "decl %k0\n\t"                                                                         \
    "movl %k0, %c4(%2)\n\t"                                                                \
    "movq %c5(%2), %1\n\t"                                                                 \
    "movq (%1,%0,8), %0\n\t"                                                               \
    then                                                                                   \
    TD_PORT_OWNER_END_ASM_
#define td_port_owner_pop_(obj, base, count_off, array_off, owner)                         \
    ({  void **td_pa_;                                                                     \
        __asm__ __volatile__(TD_PORT_OWNER_POP_ASM_("")                                    \
                             : "=&r"(obj), "=&r"(td_pa_)                                   \
                             : "r"(base), "m"(*(owner)), "i"(count_off), "i"(array_off)    \
                             : "cc", "memory");                                            \
        (void)0; })
#define td_port_owner_pop_mark_held_(obj, held, base, count_off, array_off, owner, mark_off, mark, \
                                     test_off, busy)                                       \
    ({  __asm__ __volatile__("xorl %k1, %k1\n\t"                                          \
                             TD_PORT_OWNER_POP_ASM_("movl %7, %c6(%0)\n\t"               \
                                                    "xorl %k1, %k1\n\t"                  \
                                                    "testl %9, %c8(%0)\n\t"              \
                                                    "jz 2f\n\t"                          \
                                                    "movq %0, %1\n\t"                    \
                                                    "xorl %k0, %k0\n\t")                 \
                             : "=&r"(obj), "=&r"(held)                                    \
                             : "r"(base), "m"(*(owner)), "i"(count_off), "i"(array_off),  \
                               "i"(mark_off), "i"(mark), "i"(test_off), "i"(busy)         \
                             : "cc", "memory");                                           \
        (void)0; })
#define td_port_owner_push_(base, count_off, limit_off, array_off, owner, obj)             \
    ({  uintptr_t td_pn_; void **td_pa_;                                                   \
        __asm__ __volatile__(TD_PORT_OWNER_ONLY_ASM_                                      \
                             "movl %c5(%2), %k0\n\t"                                      \
                             "cmpl %c6(%2), %k0\n\t"                                      \
                             "jae 1f\n\t"                                                 \
                             "movq %c7(%2), %1\n\t"                                       \
                             "movq %4, (%1,%0,8)\n\t"                                     \
                             "incl %k0\n\t"                                               \
                             "movl %k0, %c5(%2)\n\t"                                      \
                             "movl $1, %k0\n\t"                                           \
                             TD_PORT_OWNER_END_ASM_                                        \
                             : "=&r"(td_pn_), "=&r"(td_pa_)                                \
                             : "r"(base), "m"(*(owner)), "r"(obj), "i"(count_off),         \
                               "i"(limit_off), "i"(array_off)                              \
                             : "cc", "memory");                                            \
        (int)td_pn_; })
#  endif

#else /* clang, gcc */
#  define TD_INLINE static inline __attribute__((always_inline))
/* An external function inlined into its callers of the same unit wherever the compiler can
 * (td_runner_succeed_, into every step's return) */
#  define TD_ALWAYS_INLINE __attribute__((always_inline))
#  define TD_NOINLINE __attribute__((noinline))
/* generated functions a file may not call (TD_METHOD_DEFINE's starts) */
#  define TD_MAYBE_UNUSED __attribute__((unused))
/* every call inside inlined where it can be (TD_METHOD_DEFINE's starts take the step in) */
#  define TD_FLATTEN __attribute__((flatten))
/* Visible from a -fvisibility=hidden module (its one entry table). */
#  define TD_EXPORT __attribute__((visibility("default")))
/* Hide a value from the optimiser (benchmarks: keep a computed result alive). */
#  define TD_OPAQUE(x) __asm__ __volatile__("" : "+r"(x))
#  define TD_PORT_INLINES 1
/* Per-thread pointers: __thread, initial-exec (a %fs-relative move, no __tls_get_addr call;
 * a dlopen'ed player module uses a few bytes of glibc's static TLS surplus). */
#  define TD_TLS_DEFINE(name) static __thread __attribute__((tls_model("initial-exec"))) void *name
#  define TD_TLS_CREATE(name) 0
#  define TD_TLS_DELETE(name) ((void)((name) = NULL))    /* this thread's value */
#  define TD_TLS_GET(name) (name)
#  define TD_TLS_SET(name, v) ((void)((name) = (v)))
#  define TD_LIKELY(x) __builtin_expect(!!(x), 1)
#  define TD_UNLIKELY(x) __builtin_expect(!!(x), 0)
#  if defined(__clang__)
#    define TD_COMPILER_NAME "clang"
#  else
#    define TD_COMPILER_NAME "gcc"
#  endif

TD_INLINE uint32_t td_atomic_load_u32(volatile uint32_t *p)
{ return __atomic_load_n(p, __ATOMIC_SEQ_CST); }
/* A load that orders nothing (a value this thread already synchronised with, e.g. the
 * version of a runner it has just rented): the compiler may forward the stores before it. */
TD_INLINE uint32_t td_atomic_load_relaxed_u32(volatile uint32_t *p)
{ return __atomic_load_n(p, __ATOMIC_RELAXED); }
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
/* Zero 8, 16, 24 or 32 bytes at an 8-byte aligned address: a constant-size memset, which
 * clang turns into word stores (and which, unlike stores through a uint64_t pointer,
 * aliases whatever type the bytes are read as afterwards). */
#define td_zero_8(p) ((void)__builtin_memset((p), 0, 8))
#define td_zero_16(p) ((void)__builtin_memset((p), 0, 16))
#define td_zero_24(p) ((void)__builtin_memset((p), 0, 24))
#define td_zero_32(p) ((void)__builtin_memset((p), 0, 32))
#define td_zero_8_at(base, off) td_zero_8((char *)(base) + (off))
#define td_zero_16_at(base, off) td_zero_16((char *)(base) + (off))
#define td_zero_24_at(base, off) td_zero_24((char *)(base) + (off))
#define td_zero_32_at(base, off) td_zero_32((char *)(base) + (off))
/* No compiler reordering across it; no instruction (the asymmetric fence's light side). */
#define td_compiler_barrier() __atomic_signal_fence(__ATOMIC_SEQ_CST)
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

/* Thread identity: an opaque integer, never 0, equal only for the same live thread. The value is
 * pthread_self()'s on both compilers; under clang on x86-64 glibc it is read inline from
 * the thread control block (%fs:0x10 is where glibc's pthread_self reads it), no call. */
#if defined(TD_THREAD_SELF_DEFINED)
/* defined above (tcc) */
#elif defined(__x86_64__) && defined(__GLIBC__) && defined(__SEG_FS)
/* A load through the %fs segment (clang and gcc's __seg_fs), not an asm block: the compiler
 * can fold it into the compare with the owner's identity (cmp %fs:0x10, reg), one instruction
 * less at every ownership test. The word never changes on a thread. */
TD_INLINE uintptr_t td_thread_self(void)
{
    return *(const uintptr_t __seg_fs *)0x10;
}
#elif defined(__x86_64__) && defined(__GLIBC__)
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
