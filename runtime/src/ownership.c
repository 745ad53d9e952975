/*
 * ownership.c - the main thread's plain-store ownership of sources, and its revocation
 * (task.h's last invariant).
 *
 * The main thread writes the word of a source it owns with plain stores, inside a window:
 *     busy = 1; compiler barrier; read owned; [plain stores to the word]; busy = 0
 * (TD_MAIN_OWNS_BEGIN_ / _END_, td_internal.h). Another thread that must write the word
 * takes the ownership away first:
 *     owned: MAIN -> REVOKING (CAS); heavy barrier; wait until busy is 0; owned = SHARED
 * The heavy barrier (membarrier, registered by td_runtime_init; without it no window is
 * ever opened, td_main_writer_thread_ 0) runs a full fence on every thread of the process,
 * the main thread included, between the CAS and the read of busy: either the main thread's
 * read of `owned` comes after the fence and sees REVOKING (no plain store follows), or its
 * busy = 1 came before and is seen here, and the revoker waits for the window to close.
 * That is the asymmetric Dekker pattern (the main thread pays a compiler barrier, the rare
 * revoker a system call): no window is open once owned is SHARED, and nobody but the main
 * thread opens one on a MAIN source.
 */
#include "../port/td_libc.h"
#include "td_internal.h"

/* membarrier(2), called through syscall(2) declared here rather than with <unistd.h> and
 * <sys/syscall.h>: under libtcc every header is parsed at the JIT player's start, and those
 * two are a large share of its load. */
#if defined(__linux__) && defined(__x86_64__)
extern long syscall(long number, ...);
#define OWNERSHIP_SYS_MEMBARRIER 324L       /* x86-64 */
#else
#include <unistd.h>
#include <sys/syscall.h>
#define OWNERSHIP_SYS_MEMBARRIER ((long)SYS_membarrier)
#endif
#define OWNERSHIP_MEMBARRIER_PRIVATE_EXPEDITED 8            /* linux/membarrier.h */
#define OWNERSHIP_MEMBARRIER_REGISTER_PRIVATE_EXPEDITED 16

volatile uint32_t td_main_busy_;
volatile uintptr_t td_main_writer_thread_;
volatile uintptr_t td_main_registrar_thread_;
static volatile uint32_t ownership_barrier;     /* 1 once membarrier is registered (per process) */

/* The main thread writes owned words with plain stores only where the heavy barrier exists;
 * elsewhere td_main_writer_thread_ stays 0 and every write is a CAS (rentals on the main
 * thread are still marked MAIN, which then means nothing). The main thread is the pools'
 * owner (td_pool_set_owner_thread, set by td_runtime_init's main loop, calls
 * td_ownership_follow_pools_): the writer is that thread or 0, never another, so that code
 * inside a window (td_runner_succeed_'s push) is on the owner thread without testing it. */
int td_ownership_runtime_init_(void)
{
    /* TANDEM_NO_MEMBARRIER=1 behaves as a kernel without it (the tests run both ways). */
    const char *off = getenv("TANDEM_NO_MEMBARRIER");
    if (!td_atomic_load_u32(&ownership_barrier) && !(off && off[0] == '1') &&
        syscall(OWNERSHIP_SYS_MEMBARRIER, OWNERSHIP_MEMBARRIER_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0)
        td_atomic_store_u32(&ownership_barrier, 1);
    td_ownership_follow_pools_(td_pool_owner_thread_);
    return TD_OK;
}

void td_ownership_follow_pools_(uintptr_t owner)
{
    td_main_writer_thread_ = td_atomic_load_u32(&ownership_barrier) ? owner : 0;
    td_ownership_refresh_registrar_();
}

void td_ownership_refresh_registrar_(void)
{
    td_main_registrar_thread_ = td_runtime_settings.flow ? 0 : td_main_writer_thread_;
}

void td_ownership_runtime_shutdown_(void)
{
    td_main_writer_thread_ = 0;
    td_ownership_refresh_registrar_();
}

/* A full memory barrier on every running thread of the process (registered above, so it
 * cannot be refused; if it were, going on could lose a store: stop instead). */
static void ownership_heavy_barrier(void)
{
    if (syscall(OWNERSHIP_SYS_MEMBARRIER, OWNERSHIP_MEMBARRIER_PRIVATE_EXPEDITED, 0, 0) != 0)
        abort();
}

void td_source_disown_(td_source *s)
{
    /* Without the barrier no window is ever opened (td_main_writer_thread_ is 0, and
     * td_runtime_init, which could register it later, runs while no other thread uses the
     * runtime): every party already writes with a CAS, nothing needs taking away. */
    if (!td_atomic_load_u32(&ownership_barrier))
        return;
    uint32_t o = td_atomic_load_u32(&s->owned);
    for (;;) {
        if (o == TD_SOURCE_OWNED_SHARED)
            return;
        if (o == TD_SOURCE_OWNED_REVOKING) {    /* another thread is taking it: wait for it */
            td_cpu_relax();
            o = td_atomic_load_u32(&s->owned);
            continue;
        }
        if (td_main_writer_thread_ == td_thread_self()) {
            /* The main thread itself, outside any window (windows make no calls). */
            if (td_atomic_cas_u32(&s->owned, &o, TD_SOURCE_OWNED_SHARED))
                return;
            continue;
        }
        if (td_atomic_cas_u32(&s->owned, &o, TD_SOURCE_OWNED_REVOKING))
            break;
    }
    ownership_heavy_barrier();
    while (td_atomic_load_u32(&td_main_busy_) != 0)
        td_cpu_relax();
    td_atomic_store_u32(&s->owned, TD_SOURCE_OWNED_SHARED);
}
