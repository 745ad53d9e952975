/*
 * adapter.c - callback and future bridges (see include/tandem/adapter.h).
 *
 * Invariants: a bridge is a pooled source with three owners: its consumer, the answer
 * (the API's done callback or the future's setter, whichever will report) and the setup
 * (dropped once the cancel registration is in place and the API has been started). The
 * answer and the cancel callback race with td_source_try_complete: the first wins. The
 * last owner unregisters the cancel callback (waiting for a running one) and recycles.
 */
#include "../port/td_libc.h"
#include "td_internal.h"

typedef struct adapter_op {
    td_source source;                /* first member */
    uint32_t token;
    volatile uint32_t owners;
    td_cancel_token cancel;
    td_cancel_registration reg;
} adapter_op;

static td_pool adapter_pool;

static void adapter_drop(adapter_op *op)
{
    if (td_atomic_fetch_add_u32(&op->owners, (uint32_t)-1) != 1)
        return;
    td_cancel_unregister(op->reg);
    op->reg.node = NULL;
    op->cancel.source = NULL;
    td_source_recycle(&op->source);
    td_pool_return(&adapter_pool, op);
}

/* The consumer's token ends before its ownership drops, as compose_release's. */
static void adapter_release(td_source *s)
{
    td_source_keep_consumed_(s);
    adapter_drop((adapter_op *)s);
}

static const td_source_ops adapter_ops = { adapter_release, NULL, NULL, NULL, "adapter" };

static void adapter_cancel_now(void *arg)
{
    adapter_op *op = (adapter_op *)arg;
    td_error e = td_cancel_error(op->cancel.source);
    td_source_try_complete(&op->source, op->token, TD_CANCELED, 0, &e);
}

/* Publish an answer by the status convention. */
static void adapter_answer(adapter_op *op, int status, int64_t value)
{
    if (status == TD_ADAPT_OK) {
        td_source_try_complete(&op->source, op->token, TD_SUCCEEDED, value, NULL);
    } else if (status == TD_ADAPT_CANCELED) {
        td_error e = td_cancel_error(NULL);
        td_source_try_complete(&op->source, op->token, TD_CANCELED, 0, &e);
    } else {
        td_error e = { status, "operation failed", NULL };
        td_source_try_complete(&op->source, op->token, TD_FAULTED, 0, &e);
    }
}

static adapter_op *adapter_rent(td_cancel_token cancel)
{
    adapter_op *op = (adapter_op *)td_pool_rent(&adapter_pool);
    if (op == NULL)
        return NULL;
    if (op->source.ops == NULL)
        op->source.ops = &adapter_ops;
    op->token = td_source_token(&op->source);
    op->owners = 3;
    op->cancel = cancel;
    op->reg.node = NULL;
    return op;
}

/* Drop the setup ownership and hand out the task (a completed success inline). */
static td_task_i64 adapter_task(adapter_op *op)
{
    td_task_i64 t = td_task_i64_of(td_task_of(&op->source, op->token));
    adapter_drop(op);
    td_status st;
    if (td_task_status(t.task, &st) == TD_OK && st == TD_SUCCEEDED) {
        td_outcome o;
        td_task_i64_get(t, &o);
        return td_from_result(o.value);
    }
    return t;
}

static td_task_i64 adapter_value_task(int status, int64_t value)
{
    if (status == TD_ADAPT_OK)
        return td_from_result(value);
    if (status == TD_ADAPT_CANCELED)
        return td_from_canceled_i64(NULL);
    return td_from_error_i64(status, "operation failed");
}

static void adapter_done(void *cb_arg, int status, int64_t value)
{
    adapter_op *op = (adapter_op *)cb_arg;
    adapter_answer(op, status, value);
    adapter_drop(op);
}

td_task_i64 td_from_callback(td_callback_api_fn api, void *arg, td_cancel_token cancel)
{
    if (td_cancel_is_requested(cancel))
        return td_from_canceled_i64(cancel.source);       /* not started */
    adapter_op *op = adapter_rent(cancel);
    if (op == NULL)
        return td_from_error_i64(TD_E_NOMEM, "adapter allocation failed");
    if (cancel.source)
        op->reg = td_cancel_register(cancel, adapter_cancel_now, op);
    api(arg, adapter_done, op);
    return adapter_task(op);
}

/* ---- futures ------------------------------------------------------------------------------ */

struct td_future {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int set;
    int status;
    int64_t value;
    adapter_op *waiter;              /* the bridged task's op (holds its answer owner) */
};

td_future *td_future_new(void)
{
    td_future *f = (td_future *)calloc(1, sizeof(*f));
    if (f == NULL)
        return NULL;
    pthread_mutex_init(&f->lock, NULL);
    pthread_cond_init(&f->cond, NULL);
    return f;
}

void td_future_free(td_future *f)
{
    if (f == NULL)
        return;
    if (f->waiter)                   /* never set: the answer will not come */
        adapter_drop(f->waiter);
    pthread_cond_destroy(&f->cond);
    pthread_mutex_destroy(&f->lock);
    free(f);
}

int td_future_set(td_future *f, int status, int64_t value)
{
    pthread_mutex_lock(&f->lock);
    if (f->set) {
        pthread_mutex_unlock(&f->lock);
        return TD_DONE;
    }
    f->set = 1;
    f->status = status;
    f->value = value;
    adapter_op *w = f->waiter;
    f->waiter = NULL;
    pthread_cond_broadcast(&f->cond);
    pthread_mutex_unlock(&f->lock);
    if (w) {
        adapter_answer(w, status, value);
        adapter_drop(w);
    }
    return TD_OK;
}

void td_future_wait(td_future *f, int *status, int64_t *value)
{
    pthread_mutex_lock(&f->lock);
    while (!f->set)
        pthread_cond_wait(&f->cond, &f->lock);
    *status = f->status;
    *value = f->value;
    pthread_mutex_unlock(&f->lock);
}

td_task_i64 td_future_task(td_future *f, td_cancel_token cancel)
{
    pthread_mutex_lock(&f->lock);
    if (f->set) {
        int status = f->status;
        int64_t value = f->value;
        pthread_mutex_unlock(&f->lock);
        return adapter_value_task(status, value);
    }
    if (f->waiter) {
        pthread_mutex_unlock(&f->lock);
        return td_from_error_i64(TD_E_AWAITED, "the future already has a bridged task");
    }
    if (td_cancel_is_requested(cancel)) {
        pthread_mutex_unlock(&f->lock);
        return td_from_canceled_i64(cancel.source);
    }
    adapter_op *op = adapter_rent(cancel);
    if (op == NULL) {
        pthread_mutex_unlock(&f->lock);
        return td_from_error_i64(TD_E_NOMEM, "adapter allocation failed");
    }
    f->waiter = op;
    pthread_mutex_unlock(&f->lock);
    if (cancel.source)
        op->reg = td_cancel_register(cancel, adapter_cancel_now, op);
    return adapter_task(op);
}

/* ---- runtime hooks ------------------------------------------------------------------------ */

int td_adapter_runtime_init_(uint32_t capacity)
{
    return td_pool_init(&adapter_pool, "adapter", sizeof(adapter_op), capacity);
}

void td_adapter_runtime_shutdown_(void) { td_pool_destroy(&adapter_pool); }
int td_adapter_set_capacity_(uint32_t capacity) { return td_pool_set_capacity(&adapter_pool, capacity); }
