/*
 * shared.c - shared handles (see include/tandem/shared.h).
 *
 * Invariants:
 *   - a handle is a custom source; its word is used only for its version, so the token of
 *     td_shared_task is the handle's rental and a recycled handle answers TD_E_STALE.
 *   - references: one per td_task_share / td_shared_retain, plus one held by the
 *     subscription to the original until its completion has been stored and every waiter
 *     run. The last reference recycles the handle into shared_pool.
 *   - `done`, `outcome` and the waiter list change only under `lock`. Once done is set no
 *     waiter is added, so the completer runs the list outside the lock (waiters may await
 *     other handles or re-enter this one, which then answers TD_DONE).
 *   - the waiter array is kept across rentals and only grows, so steady state allocates
 *     nothing once a handle has seen its largest number of waiters.
 */
#include "../port/td_libc.h"
#include "td_internal.h"

typedef struct shared_waiter { td_continuation_fn fn; void *arg; } shared_waiter;

struct td_shared {
    td_source source;               /* first member: the readers' task source */
    uint32_t token;                 /* the handle's rental (its version) */
    volatile uint32_t refs;
    td_spinlock lock;
    uint32_t done;
    td_outcome outcome;
    td_task_i64 original;
    shared_waiter *waiters;
    uint32_t count, cap;
};

static td_pool shared_pool;

static void shared_recycle(td_shared *h)
{
    h->done = 0;
    h->count = 0;
    memset(&h->outcome, 0, sizeof(h->outcome));
    memset(&h->original, 0, sizeof(h->original));
    td_source_recycle(&h->source);
    td_pool_return(&shared_pool, h);
}

void td_shared_retain(td_shared *h) { td_atomic_fetch_add_u32(&h->refs, 1); }

void td_shared_release(td_shared *h)
{
    if (h != NULL && td_atomic_fetch_add_u32(&h->refs, (uint32_t)-1) == 1)
        shared_recycle(h);
}

/* ---- the readers' source --------------------------------------------------------------- */

static int shared_check(td_shared *h, uint32_t token)
{
    return td_source_token(&h->source) == token ? TD_OK : TD_E_STALE;
}

static int shared_status(td_source *s, uint32_t token, td_status *out)
{
    td_shared *h = (td_shared *)s;
    if (shared_check(h, token) != TD_OK)
        return TD_E_STALE;
    td_spin_lock(&h->lock);
    *out = h->done ? h->outcome.status : TD_PENDING;
    td_spin_unlock(&h->lock);
    return TD_OK;
}

static int shared_on_completed(td_source *s, uint32_t token, td_continuation_fn fn, void *arg)
{
    td_shared *h = (td_shared *)s;
    if (shared_check(h, token) != TD_OK)
        return TD_E_STALE;
    int rc = TD_OK;
    td_spin_lock(&h->lock);
    if (h->done) {
        rc = TD_DONE;
    } else {
        if (TD_UNLIKELY(h->count == h->cap)) {
            /* Growth is the only allocation: a handle's first burst of waiters. */
            uint32_t cap = h->cap ? h->cap * 2 : 4;
            shared_waiter *w = (shared_waiter *)realloc(h->waiters, cap * sizeof(shared_waiter));
            if (w == NULL)
                rc = TD_E_NOMEM;
            else {
                h->waiters = w;
                h->cap = cap;
            }
        }
        if (rc == TD_OK) {
            h->waiters[h->count].fn = fn;
            h->waiters[h->count].arg = arg;
            h->count++;
        }
    }
    td_spin_unlock(&h->lock);
    return rc;
}

static int shared_get(td_source *s, uint32_t token, td_outcome *out)
{
    td_shared *h = (td_shared *)s;
    if (shared_check(h, token) != TD_OK)
        return TD_E_STALE;
    int rc = TD_OK;
    td_spin_lock(&h->lock);
    if (h->done)
        *out = h->outcome;
    else
        rc = TD_E_PENDING;
    td_spin_unlock(&h->lock);
    return rc;
}

static void shared_source_release(td_source *s) { (void)s; }   /* get never consumes */

static const td_source_ops shared_ops = {
    shared_source_release, shared_status, shared_on_completed, shared_get, "shared-handle"
};

/* ---- completion of the original ------------------------------------------------------ */

static void shared_store(td_shared *h, const td_outcome *o)
{
    td_spin_lock(&h->lock);
    h->outcome = *o;
    h->done = 1;
    uint32_t n = h->count;
    td_spin_unlock(&h->lock);
    for (uint32_t i = 0; i < n; i++)
        h->waiters[i].fn(h->waiters[i].arg);
    td_shared_release(h);            /* the subscription's reference */
}

static void shared_original_done(void *arg)
{
    td_shared *h = (td_shared *)arg;
    td_source *s = h->original.task.source;
    td_outcome o;
    int rc = s->ops->on_completed ? td_task_i64_get(h->original, &o)
                                  : td_source_take_shared(s, h->original.task.token, &o);
    if (rc != TD_OK) {
        memset(&o, 0, sizeof(o));
        o.status = TD_FAULTED;
        o.error.code = rc;
        o.error.message = "shared handle could not read its task";
    }
    shared_store(h, &o);
}

int td_task_share_rc(td_task_i64 t, td_shared **out)
{
    *out = NULL;
    td_shared *h = (td_shared *)td_pool_rent(&shared_pool);
    if (h == NULL)
        return TD_E_NOMEM;
    if (h->source.ops == NULL)
        h->source.ops = &shared_ops;
    h->token = td_source_token(&h->source);
    h->refs = 2;                      /* the caller and the subscription */
    h->original = t;
    td_source *s = t.task.source;
    int rc;
    if (s == NULL) {
        rc = TD_DONE;                 /* a completed task value: succeeded, value inline */
    } else if (s->ops->on_completed) {
        rc = td_task_on_completed(t.task, shared_original_done, h);
    } else {
        rc = td_source_mark_shared(s, t.task.token, shared_original_done, h);
    }
    if (rc < 0) {
        h->refs = 0;
        shared_recycle(h);
        return rc;
    }
    *out = h;
    if (rc == TD_DONE) {
        if (s == NULL) {
            td_outcome o;
            memset(&o, 0, sizeof(o));
            o.status = TD_SUCCEEDED;
            o.value = t.value;
            shared_store(h, &o);
        } else {
            shared_original_done(h);
        }
    }
    return TD_OK;
}

td_shared *td_task_share_i64(td_task_i64 t)
{
    td_shared *h;
    td_task_share_rc(t, &h);
    return h;
}

td_shared *td_task_share(td_task t) { return td_task_share_i64(td_task_i64_of(t)); }
td_shared *td_task_preserve(td_task t) { return td_task_share(t); }
td_shared *td_task_preserve_i64(td_task_i64 t) { return td_task_share_i64(t); }

td_task td_shared_task(td_shared *h) { return td_task_of(&h->source, h->token); }
td_task_i64 td_shared_task_i64(td_shared *h) { return td_task_i64_of(td_shared_task(h)); }

int td_shared_outcome(td_shared *h, td_outcome *out) { return shared_get(&h->source, h->token, out); }

/* ---- lifetime -------------------------------------------------------------------------- */

static void shared_finalize(void *obj) { free(((td_shared *)obj)->waiters); }

int td_shared_runtime_init_(uint32_t capacity)
{
    int rc = td_pool_init(&shared_pool, "shared-handle", sizeof(td_shared), capacity);
    shared_pool.finalize = shared_finalize;
    return rc;
}

void td_shared_runtime_shutdown_(void) { td_pool_destroy(&shared_pool); }
int td_shared_set_capacity_(uint32_t capacity) { return td_pool_set_capacity(&shared_pool, capacity); }
