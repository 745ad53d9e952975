/*
 * forget.c - fire-and-forget and unobserved faults (see include/tandem/forget.h).
 *
 * Invariants:
 *   - a forget record owns its task from td_task_forget until the task's continuation has
 *     consumed it; then the record goes back to forget_pool before the fault (if any) is
 *     reported, so a handler may forget again without growing the pool.
 *   - the handler pair is read and written under forget_lock, so a handler and its argument
 *     are always seen together even when set while workers complete forgotten tasks.
 */
#include "../port/td_libc.h"
#include "td_internal.h"

typedef struct forget_record { td_task task; } forget_record;

static td_pool forget_pool;
static td_spinlock forget_lock = TD_SPINLOCK_INIT;
static td_unobserved_error_fn forget_handler;
static void *forget_handler_arg;
static volatile uint32_t forget_reported;

void td_set_unobserved_error_handler(td_unobserved_error_fn fn, void *arg)
{
    td_spin_lock(&forget_lock);
    forget_handler = fn;
    forget_handler_arg = arg;
    td_spin_unlock(&forget_lock);
}

uint32_t td_unobserved_error_count(void) { return td_atomic_load_u32(&forget_reported); }

static void forget_report(const td_error *e)
{
    td_spin_lock(&forget_lock);
    td_unobserved_error_fn fn = forget_handler;
    void *arg = forget_handler_arg;
    td_spin_unlock(&forget_lock);
    td_atomic_fetch_add_u32(&forget_reported, 1);
    if (fn)
        fn(e, arg);
}

static void forget_done(void *arg)
{
    forget_record *f = (forget_record *)arg;
    td_task t = f->task;
    f->task.source = NULL;
    td_pool_return(&forget_pool, f);
    td_outcome o;
    if (td_task_get(t, &o) == TD_OK && o.status == TD_FAULTED)
        forget_report(&o.error);
}

void td_task_forget(td_task t)
{
    td_source *s = t.source;
    if (s == NULL || s->ops->on_completed)
        return;                        /* nothing to consume */
    forget_record *f = (forget_record *)td_pool_rent(&forget_pool);
    if (f == NULL)
        return;
    f->task = t;
    int rc = td_task_on_completed(t, forget_done, f);
    if (rc == TD_DONE)
        forget_done(f);
    else if (rc != TD_OK)
        td_pool_return(&forget_pool, f);   /* stale, shared or awaited: owned elsewhere */
}

void td_task_forget_i64(td_task_i64 t) { td_task_forget(t.task); }

int td_forget_runtime_init_(uint32_t capacity)
{
    forget_reported = 0;
    return td_pool_init(&forget_pool, "forget", sizeof(forget_record), capacity);
}

void td_forget_runtime_shutdown_(void) { td_pool_destroy(&forget_pool); }
int td_forget_set_capacity_(uint32_t capacity) { return td_pool_set_capacity(&forget_pool, capacity); }
