/*
 * pool.c - array-slot stacks in two segments (see include/tandem/pool.h).
 *
 * Invariants:
 *   - `local[0 .. local_count)` is touched only by the owner thread (td_pool_owner_thread_)
 *     and by the cold functions (which run on the owner thread or with no owner set);
 *     local_count is stored with release stores so other threads may read it (bounds).
 *   - `local` holds only returned objects (pool.h): prefill fills `slots`, a capacity change
 *     keeps each object in its segment.
 *   - `slots[0 .. count)` and the statistics are touched only under the spin lock.
 *   - both segments have `capacity` slots; together they hold at most `capacity` objects,
 *     except that returns racing on two threads may each see room for the last one.
 *   - allocation happens outside the lock and only when the pool is empty (rent) or full
 *     (return). A newly allocated object is zeroed.
 */
#include "../port/td_libc.h"
#include "td_internal.h"

volatile uintptr_t td_pool_owner_thread_;

/* The main thread's plain-store ownership follows (ownership.c): its writer is this thread
 * or none, so that a window on an owned source is always on the pools' owner thread. */
void td_pool_set_owner_thread(uintptr_t thread)
{
    td_pool_owner_thread_ = thread;
    td_ownership_follow_pools_(thread);
}

/* The owner's return bound (pool.h, local_limit): room left for the owner segment, the
 * capacity less what the shared one holds, or 0 once other threads rent from the shared
 * one. Recomputed under the lock after every change of count, remote_rents or capacity. */
static void pool_limit_update(td_pool *p)
{
    uint32_t n = p->count;
    td_atomic_store_release_u32(&p->local_limit,
                                p->remote_rents || n >= p->capacity ? 0 : p->capacity - n);
}

static void pool_free_object(td_pool *p, void *obj)
{
    if (p->finalize)
        p->finalize(obj);
    free(obj);
}

int td_pool_init(td_pool *p, const char *name, size_t object_size, uint32_t capacity)
{
    memset(p, 0, sizeof(*p));
    p->name = name;
    p->object_size = object_size;
    if (capacity > 0) {
        p->slots = (void **)calloc((size_t)capacity * 2, sizeof(void *));
        if (p->slots == NULL)
            return TD_E_NOMEM;
        p->local = p->slots + capacity;
        p->slots_owned = 1;
    }
    p->capacity = capacity;
    pool_limit_update(p);
    return TD_OK;
}

void td_pool_destroy(td_pool *p)
{
    td_spin_lock(&p->lock);
    for (uint32_t i = 0; i < p->count; i++)
        pool_free_object(p, p->slots[i]);
    for (uint32_t i = 0; i < p->local_count; i++)
        pool_free_object(p, p->local[i]);
    td_atomic_store_release_u32(&p->count, 0);
    td_atomic_store_release_u32(&p->local_count, 0);
    if (p->slots_owned)
        free(p->slots);
    p->slots = NULL;
    p->local = NULL;
    p->slots_owned = 0;
    p->capacity = 0;
    p->object_size = 0;              /* torn down: rent refuses until td_pool_init */
    td_atomic_store_release_u32(&p->remote_rents, 0);
    pool_limit_update(p);
    td_spin_unlock(&p->lock);
}

int td_pool_set_capacity(td_pool *p, uint32_t capacity)
{
    void **fresh = NULL;
    if (capacity > 0) {
        fresh = (void **)calloc((size_t)capacity * 2, sizeof(void *));
        if (fresh == NULL)
            return TD_E_NOMEM;
    }
    /* Everything held: the shared segment, then the owner's (each oldest first). */
    uint32_t held_max = p->capacity * 2;
    void **held = held_max ? (void **)malloc(held_max * sizeof(void *)) : NULL;
    if (held_max && held == NULL) {
        free(fresh);
        return TD_E_NOMEM;
    }
    td_spin_lock(&p->lock);
    uint32_t n = 0;
    for (uint32_t i = 0; i < p->count; i++)
        held[n++] = p->slots[i];
    uint32_t n_shared = n;
    for (uint32_t i = 0; i < p->local_count; i++)
        held[n++] = p->local[i];
    void **old = p->slots;
    int old_owned = p->slots_owned;
    p->slots = fresh;
    p->local = fresh ? fresh + capacity : NULL;
    p->slots_owned = fresh != NULL;
    p->capacity = capacity;
    /* The most recently pooled objects of each segment stay, the owner's first; on the owner
     * thread each stays in its segment (the owner's holds only returned objects, never a
     * prefilled one: pool.h), elsewhere all go to the shared one. */
    uint32_t n_local = n - n_shared;
    uint32_t keep_local = n_local < capacity ? n_local : capacity;
    uint32_t keep_shared = n_shared < capacity - keep_local ? n_shared : capacity - keep_local;
    uint32_t from_local = n - keep_local, from_shared = n_shared - keep_shared;
    uint32_t to_local = TD_POOL_ON_OWNER_() ? keep_local : 0, to_shared = 0;
    for (uint32_t i = 0; i < keep_shared; i++)
        p->slots[to_shared++] = held[from_shared + i];
    for (uint32_t i = 0; i < keep_local; i++) {
        if (i < to_local)
            p->local[i] = held[from_local + i];
        else
            p->slots[to_shared++] = held[from_local + i];
    }
    td_atomic_store_release_u32(&p->count, to_shared);
    td_atomic_store_release_u32(&p->local_count, to_local);
    td_atomic_store_release_u32(&p->remote_rents, 0);
    pool_limit_update(p);
    p->freed += n - keep_local - keep_shared;
    td_spin_unlock(&p->lock);
    /* The rest: the older objects of each segment. */
    for (uint32_t i = 0; i < n_shared - keep_shared; i++)
        pool_free_object(p, held[i]);
    for (uint32_t i = n_shared; i < n - keep_local; i++)
        pool_free_object(p, held[i]);
    free(held);
    if (old_owned)
        free(old);
    return TD_OK;
}

/* Prefilled objects go to the shared segment (under the lock), on every thread: the owner's
 * segment holds only returned objects (pool.h). */
int td_pool_prefill(td_pool *p, uint32_t count)
{
    if (count > p->capacity)
        count = p->capacity;
    while (td_pool_count(p) < count) {
        void *obj = calloc(1, p->object_size);
        if (obj == NULL)
            return TD_E_NOMEM;
        td_spin_lock(&p->lock);
        if (p->count + td_atomic_load_u32(&p->local_count) < p->capacity) {
            p->slots[p->count] = obj;
            td_atomic_store_release_u32(&p->count, p->count + 1);
            pool_limit_update(p);
            obj = NULL;
        }
        td_spin_unlock(&p->lock);
        if (obj != NULL) {          /* another thread filled it meanwhile */
            free(obj);
            break;
        }
    }
    return TD_OK;
}

/* The locked path: other threads, and the owner once its segment is empty. */
static TD_NOINLINE void *pool_rent_shared(td_pool *p, int owner)
{
    void *obj = NULL;
    td_spin_lock(&p->lock);
    uint32_t n = p->count;
    if (n > 0) {
        obj = p->slots[n - 1];
        td_atomic_store_release_u32(&p->count, n - 1);
        pool_limit_update(p);
    } else if (!owner && !p->remote_rents) {
        td_atomic_store_release_u32(&p->remote_rents, 1);
        pool_limit_update(p);
    }
    td_spin_unlock(&p->lock);
    if (obj == NULL) {
        /* A pool that was never set up (object size 0: used before td_runtime_init) has
         * nothing to allocate: refuse rather than hand out a 0-byte object. */
        if (TD_UNLIKELY(p->object_size == 0))
            return NULL;
        obj = calloc(1, p->object_size);
        if (obj == NULL)
            return NULL;
        td_spin_lock(&p->lock);
        p->allocated++;
        td_spin_unlock(&p->lock);
    }
    return obj;
}

static TD_NOINLINE void pool_return_shared(td_pool *p, void *obj)
{
    td_spin_lock(&p->lock);
    uint32_t n = p->count;
    if (n + td_atomic_load_u32(&p->local_count) < p->capacity) {
        p->slots[n] = obj;
        td_atomic_store_release_u32(&p->count, n + 1);
        pool_limit_update(p);
        obj = NULL;
    } else {
        p->freed++;
    }
    td_spin_unlock(&p->lock);
    if (obj)
        pool_free_object(p, obj);
}

void *td_pool_rent(td_pool *p)
{
    void *obj;
    TD_POOL_RENT_OR_(p, obj, pool_rent_shared(p, TD_POOL_ON_OWNER_()));
    return obj;
}

void td_pool_return(td_pool *p, void *obj)
{
    TD_POOL_RETURN_OR_(p, obj, pool_return_shared);
}

/* Never inlined: the generated releases' cold fallback, their tail call (async.h), whose
 * own owner test would otherwise be inlined there a second time. */
TD_NOINLINE void td_pool_return_object_(void *obj, td_pool *p)
{
    td_pool_return(p, obj);
}
