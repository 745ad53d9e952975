/*
 * ownership.c - the main thread's plain-store ownership of sources, and its revocation
 * (task.h's last invariant).
 *
 * The main thread writes the word of a source it owns with plain stores, inside a window:
 *     busy = 1; compiler barrier; read owned; [plain stores to the word]; busy = 0
 * (TD_MAIN_OWNS_BEGIN_ / _END_, td_internal.h). Another thread that must write the word
 * takes the ownership away first:
 *     owned: MAIN -> REVOKING (CAS); heavy barrier; wait until busy is 0; owned = SHARED
 * The heavy barrier (membarrier, or a TLB shootdown) runs a full fence on every thread of
 * the process, the main thread included, between the CAS and the read of busy: either the
 * main thread's read of `owned` comes after the fence and sees REVOKING (no plain store
 * follows), or its busy = 1 came before and is seen here, and the revoker waits for the
 * window to close. That is the asymmetric Dekker pattern (the main thread pays a compiler
 * barrier, the rare revoker a system call): no window is open once owned is SHARED, and
 * nobody but the main thread opens one on a MAIN source.
 */
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "td_internal.h"

volatile uint32_t td_main_busy_;

/* membarrier(2) commands (linux/membarrier.h, stable ABI). */
#define OWNERSHIP_MEMBARRIER_PRIVATE_EXPEDITED 8
#define OWNERSHIP_MEMBARRIER_REGISTER_PRIVATE_EXPEDITED 16

static volatile uint32_t ownership_membarrier;      /* 0 not tried, 1 registered, 2 refused */
static td_spinlock ownership_page_lock = TD_SPINLOCK_INIT;
static char *ownership_page;

/* A full memory barrier on every running thread of the process. membarrier when the kernel
 * has it (registered on first use); else a change of protection of a page this thread has
 * written, whose TLB shootdown interrupts every CPU that runs the process (the fallback
 * folly's asymmetric heavy barrier uses too). */
static void ownership_heavy_barrier(void)
{
#if defined(SYS_membarrier)
    uint32_t state = td_atomic_load_u32(&ownership_membarrier);
    if (state == 0) {
        state = syscall(SYS_membarrier, OWNERSHIP_MEMBARRIER_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0 ? 1u : 2u;
        td_atomic_store_u32(&ownership_membarrier, state);
    }
    if (state == 1 && syscall(SYS_membarrier, OWNERSHIP_MEMBARRIER_PRIVATE_EXPEDITED, 0, 0) == 0)
        return;
#endif
    td_spin_lock(&ownership_page_lock);
    if (ownership_page == NULL) {
        void *p = mmap(NULL, (size_t)sysconf(_SC_PAGESIZE), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            abort();        /* no barrier at all: a plain store could be lost; never go on */
        ownership_page = (char *)p;
    }
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    if (mprotect(ownership_page, page, PROT_READ | PROT_WRITE) != 0)
        abort();
    *(volatile char *)ownership_page = 1;   /* the page is in this CPU's TLB */
    if (mprotect(ownership_page, page, PROT_READ) != 0)
        abort();
    td_spin_unlock(&ownership_page_lock);
}

void td_source_disown_(td_source *s)
{
    uint32_t o = td_atomic_load_u32(&s->owned);
    for (;;) {
        if (o == TD_SOURCE_OWNED_SHARED)
            return;
        if (o == TD_SOURCE_OWNED_REVOKING) {    /* another thread is taking it: wait for it */
            td_cpu_relax();
            o = td_atomic_load_u32(&s->owned);
            continue;
        }
        if (TD_POOL_ON_OWNER_()) {
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
