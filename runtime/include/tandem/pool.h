/*
 * pool.h - array-slot stacks of reusable objects.
 *
 * A pool holds up to `capacity` free objects of one size. Rent pops one (or allocates
 * when the pool is empty); return pushes one back (or frees it when the pool is full).
 * The slot array is allocated when the pool is set up or its capacity changes, never on
 * rent or return, so a warmed pool makes steady-state rent/return allocation-free.
 * Pools are shared across threads, in two segments:
 *   - the owner segment (`local`, `local_count`) belongs to the pool owner thread (the
 *     main thread, td_pool_set_owner_thread, set by td_runtime_init's main loop): rent and
 *     return on that thread push and pop it with no lock and no atomic read-modify-write;
 *   - the shared segment (`slots`, `count`) is guarded by the spin lock; other threads rent
 *     from it and return to it, and the owner rents from it once its own segment is empty.
 * Once another thread has found the shared segment empty (`remote_rents`, sticky until the
 * next capacity change), the owner returns to the shared segment too, so objects that other
 * threads rent keep flowing back to them (steady state stays allocation-free).
 * `capacity` bounds the objects held (both segments together; a return racing another
 * thread's may keep one more, never more than the segment's slots). Capacity changes,
 * prefill and destroy are cold and run on the owner thread (or with no owner set).
 * The owner segment only ever holds returned objects: prefill puts its new (zeroed) objects
 * in the shared segment and a capacity change keeps each object in its segment, so the
 * owner's pop never meets an object its user has not set up (td_runner_rent relies on it:
 * a method's pool holds only its own runners). A runner pool's owner segment also holds
 * runners pooled by their own success whose task is not consumed yet (async.h): its users
 * take one only once consumed, and settle the segment before a capacity change.
 */
#ifndef TANDEM_POOL_H
#define TANDEM_POOL_H

#include <stddef.h>
#include <stdint.h>
#include "../../port/td_port.h"

typedef struct td_pool {
    td_spinlock lock;
    volatile uint32_t count; /* free objects held in the shared segment */
    uint32_t capacity;       /* slots available in each segment */
    size_t object_size;
    void **slots;            /* the shared segment: slots[0 .. capacity) */
    const char *name;
    uint64_t allocated;      /* objects ever allocated by rent (statistics) */
    uint64_t freed;          /* objects freed by return to a full pool */
    int slots_owned;         /* 1 when `slots` was allocated by the pool (else static) */
    void (*finalize)(void *obj); /* called before the pool frees an object (optional) */
    void **local;            /* the owner segment: local[0 .. capacity) */
    volatile uint32_t local_count;  /* written by the owner thread only */
    volatile uint32_t remote_rents; /* 1 once another thread found the shared segment empty */
    volatile uint32_t local_limit;  /* the owner's return bound in one load: `capacity` less
                                     * `count` while remote_rents is 0, else 0 (recomputed
                                     * under the lock whenever one of them changes) */
} td_pool;

/* The slot storage of a pool of capacity `cap` holds both segments: 2 * cap pointers.
 * A static initialiser: TD_POOL_STATIC_INIT(storage, cap, object_size, name). */
#define TD_POOL_STATIC_INIT(storage, cap, size, pname)                                  \
    { TD_SPINLOCK_INIT, 0, (cap), (size), (storage), (pname), 0, 0, 0, 0, (storage) + (cap), 0, 0, (cap) }

/* The thread whose rent/return take the unlocked owner segment (0: none, every thread locks);
 * where the process has the heavy barrier it is also the one that writes owned sources with
 * plain stores (task.h). Cold: set once the pools' objects are quiescent (td_runtime_init /
 * shutdown). */
void td_pool_set_owner_thread(uintptr_t thread);

/* Set up a pool (cold): allocates the slot array. Returns TD_OK or TD_E_NOMEM. */
int td_pool_init(td_pool *p, const char *name, size_t object_size, uint32_t capacity);
/* Free every held object and the slot array. */
void td_pool_destroy(td_pool *p);
/* Change the capacity (cold, explicit; e.g. "matched retention" before a burst).
 * Shrinking frees the objects beyond the new capacity (the oldest of each segment, the
 * owner's kept first). */
int td_pool_set_capacity(td_pool *p, uint32_t capacity);
/* Allocate objects up to `count` held (warm-up), zeroed, in the shared segment. */
int td_pool_prefill(td_pool *p, uint32_t count);

/* Pop a free object or allocate one (NULL when allocation fails, or when the pool was
 * never set up: td_pool_init not run, e.g. before td_runtime_init). A newly allocated
 * object is zeroed; a recycled one is as it was returned. */
void *td_pool_rent(td_pool *p);
/* Push an object back, or free it when the pool is full. */
void td_pool_return(td_pool *p, void *obj);

static inline uint32_t td_pool_count(const td_pool *p)
{
    td_pool *q = (td_pool *)p;
    return td_atomic_load_u32(&q->count) + td_atomic_load_u32(&q->local_count);
}
static inline uint32_t td_pool_capacity(const td_pool *p) { return p->capacity; }

/* The owner segment's fast paths: internal, exposed for inlining. */
#include "detail/pool.h"

#endif /* TANDEM_POOL_H */
