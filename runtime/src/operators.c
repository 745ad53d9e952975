/*
 * operators.c - where / select (plain and await), take, finally, to_array, to_growable
 * (see include/tandem/operators.h).
 *
 * Invariants of an operator:
 *   - `awaiting` names the one task it is subscribed to (an upstream move, an await-form
 *     result, or the upstream's dispose); its continuation is the only entry besides
 *     move_next and dispose, and all of them run on the operator's thread.
 *   - operators_pump is a loop: a task that is already complete (TD_DONE from
 *     td_task_on_completed) is handled in the next iteration, so synchronous items never
 *     nest calls. It returns right after settling the move (the settle may run the
 *     consumer, which may re-enter move_next or dispose).
 *   - disposal (operators_dispose_step) proceeds only while nothing is awaited, starts
 *     the upstream's dispose once, and finishes (cleanup, then the dispose task) once the
 *     upstream is disposed; a guard flag turns re-entrant calls into another loop turn.
 */
#include "../port/td_libc.h"
#include "td_internal.h"

typedef enum operators_kind {
    OPERATORS_WHERE, OPERATORS_WHERE_AWAIT, OPERATORS_SELECT, OPERATORS_SELECT_AWAIT,
    OPERATORS_TAKE, OPERATORS_FINALLY
} operators_kind;

enum { OPERATORS_AWAIT_NONE, OPERATORS_AWAIT_UP, OPERATORS_AWAIT_FN, OPERATORS_AWAIT_DISPOSE };
enum { OPERATORS_HAVE_NOTHING, OPERATORS_HAVE_UP, OPERATORS_HAVE_FN };

typedef struct operators_stream {
    td_stream_base base;
    operators_kind kind;
    td_stream *up;
    td_where_fn where;
    td_select_fn select;
    td_await_fn await_fn;
    td_continuation_fn cleanup;
    void *arg;
    int64_t remaining;               /* take */
    int64_t item;                    /* the upstream item under an await-form evaluation */
    td_cancel_source *cancel;        /* await forms: cancelled at disposal */
    uint32_t awaiting;
    td_task_i64 pending;             /* the awaited task */
    /* disposal */
    td_task up_dispose;              /* the upstream's dispose task, until subscribed */
    uint32_t up_dispose_started, up_dispose_parked, up_disposed, finished;
    uint32_t stepping, step_again;
    uint32_t cancelling;             /* inside td_cancel_source_cancel(cancel): do not free it */
} operators_stream;

static td_pool operators_pool;

static void operators_yield(operators_stream *o, int64_t item)
{
    o->base.current = item;
    td_stream_base_settle(&o->base, TD_SUCCEEDED, 1, NULL);
}

static void operators_on_up(void *arg);
static void operators_on_fn(void *arg);
static void operators_dispose_step(operators_stream *o);

/* Take the outcome of the awaited task (an unusable task becomes a fault). */
static void operators_take(operators_stream *o, td_outcome *out)
{
    int rc = td_task_i64_get(o->pending, out);
    o->awaiting = OPERATORS_AWAIT_NONE;
    o->pending = td_from_result(0);
    if (TD_UNLIKELY(rc != TD_OK)) {
        out->status = TD_FAULTED;
        out->value = 0;
        out->error.code = rc;
        out->error.message = "operator awaited an unusable task";
        out->error.cancel = NULL;
    }
}

static void operators_pump(operators_stream *o, int have)
{
    td_outcome out;
    for (;;) {
        if (have == OPERATORS_HAVE_NOTHING) {
            if (o->kind == OPERATORS_TAKE && o->remaining <= 0) {
                td_stream_base_settle(&o->base, TD_SUCCEEDED, 0, NULL);
                return;
            }
            o->pending = td_stream_move_next(o->up);
            o->awaiting = OPERATORS_AWAIT_UP;
            if (td_task_on_completed(o->pending.task, operators_on_up, o) == TD_OK)
                return;
            have = OPERATORS_HAVE_UP;
        }
        operators_take(o, &out);
        if (out.status != TD_SUCCEEDED) {
            td_stream_base_settle(&o->base, out.status, 0, &out.error);
            return;
        }
        if (have == OPERATORS_HAVE_UP) {
            if (out.value == 0) {
                td_stream_base_settle(&o->base, TD_SUCCEEDED, 0, NULL);
                return;
            }
            int64_t item = td_stream_current(o->up);
            switch (o->kind) {
            case OPERATORS_WHERE:
                if (!o->where(o->arg, item)) {
                    have = OPERATORS_HAVE_NOTHING;
                    continue;
                }
                operators_yield(o, item);
                return;
            case OPERATORS_SELECT:
                operators_yield(o, o->select(o->arg, item));
                return;
            case OPERATORS_TAKE:
                o->remaining--;
                operators_yield(o, item);
                return;
            case OPERATORS_FINALLY:
                operators_yield(o, item);
                return;
            default: /* await forms */
                o->item = item;
                o->pending = o->await_fn(o->arg, item, td_cancel_source_token(o->cancel));
                o->awaiting = OPERATORS_AWAIT_FN;
                if (td_task_on_completed(o->pending.task, operators_on_fn, o) == TD_OK)
                    return;
                have = OPERATORS_HAVE_FN;
                continue;
            }
        }
        /* have == OPERATORS_HAVE_FN */
        if (o->kind == OPERATORS_SELECT_AWAIT) {
            operators_yield(o, out.value);
            return;
        }
        if (out.value) {
            operators_yield(o, o->item);
            return;
        }
        have = OPERATORS_HAVE_NOTHING;
    }
}

static void operators_on_up(void *arg)
{
    operators_stream *o = (operators_stream *)arg;
    if (o->base.disposed) {
        td_outcome ignored;
        operators_take(o, &ignored);
        operators_dispose_step(o);
        return;
    }
    operators_pump(o, OPERATORS_HAVE_UP);
}

static void operators_on_fn(void *arg)
{
    operators_stream *o = (operators_stream *)arg;
    if (o->base.disposed) {
        td_outcome ignored;
        operators_take(o, &ignored);
        operators_dispose_step(o);
        return;
    }
    operators_pump(o, OPERATORS_HAVE_FN);
}

static td_task_i64 operators_move(td_stream *s)
{
    operators_stream *o = (operators_stream *)s;
    if (TD_UNLIKELY(o->base.disposed))
        return td_stream_canceled_move(o->cancel);
    if (TD_UNLIKELY(o->base.moving))
        return td_from_error_i64(TD_E_INVALID, "move_next while another is pending");
    td_task_i64 t = td_stream_base_begin_move(&o->base);
    operators_pump(o, OPERATORS_HAVE_NOTHING);
    return td_stream_base_move_result(&o->base, t);
}

static int64_t operators_current(td_stream *s) { return ((td_stream_base *)s)->current; }

static void operators_on_up_disposed(void *arg)
{
    operators_stream *o = (operators_stream *)arg;
    td_outcome ignored;
    operators_take(o, &ignored);
    o->up_disposed = 1;
    operators_dispose_step(o);
}

static void operators_dispose_step(operators_stream *o)
{
    if (o->stepping) {               /* re-entered from a task this loop started */
        o->step_again = 1;
        return;
    }
    o->stepping = 1;
    do {
        o->step_again = 0;
        /* An await-form task must finish first (the token asked it to). An upstream move
         * does not block: disposing the upstream settles it. */
        if (o->awaiting == OPERATORS_AWAIT_FN || o->awaiting == OPERATORS_AWAIT_DISPOSE)
            break;
        if (!o->up_dispose_started) {
            /* Disposing the upstream also settles an upstream move we may be subscribed
             * to; its continuation clears `awaiting` (inline or later). */
            o->up_dispose_started = 1;
            o->up_dispose = td_stream_dispose(o->up);                    /* 3 */
            o->up_dispose_parked = 1;
            o->step_again = 1;
            continue;
        }
        if (o->up_dispose_parked && o->awaiting == OPERATORS_AWAIT_NONE) {
            o->up_dispose_parked = 0;
            o->pending = td_task_i64_of(o->up_dispose);
            o->awaiting = OPERATORS_AWAIT_DISPOSE;
            if (td_task_on_completed(o->up_dispose, operators_on_up_disposed, o) != TD_OK) {
                td_outcome ignored;
                operators_take(o, &ignored);
                o->up_disposed = 1;
            }
            o->step_again = 1;
            continue;
        }
        if (o->up_disposed && o->awaiting == OPERATORS_AWAIT_NONE && !o->finished) {
            o->finished = 1;
            o->stepping = 0;
            if (o->cleanup)
                o->cleanup(o->arg);                                      /* 4 */
            if (!o->cancelling) {    /* else freed once the cancel call has returned */
                td_cancel_source_free(o->cancel);
                o->cancel = NULL;
            }
            td_stream_base_disposed(&o->base);                           /* 5 */
            return;                  /* o may be back in its pool now */
        }
    } while (o->step_again);
    o->stepping = 0;
}

static td_task operators_dispose(td_stream *s)
{
    operators_stream *o = (operators_stream *)s;
    if (o->base.disposed)
        return td_completed();
    o->base.disposed = 1;
    td_error e = td_cancel_error(o->cancel);
    td_stream_base_settle(&o->base, TD_CANCELED, 0, &e);               /* 1 */
    /* Hold an owner: the dispose steps may complete and hand back `done` re-entrantly. */
    td_stream_base_add_owner(&o->base);
    if (o->cancel) {
        /* The awaited task may finish inside the cancel call and the disposal with it;
         * the source is freed only after the cancel call has stopped touching it. */
        o->cancelling = 1;
        td_cancel_source_cancel(o->cancel);                              /* 2 */
        o->cancelling = 0;
        if (o->finished) {
            td_cancel_source_free(o->cancel);
            o->cancel = NULL;
        }
    }
    operators_dispose_step(o);
    td_task r = td_stream_base_dispose_result(&o->base);
    td_stream_base_drop_owner(&o->base);
    return r;
}

static const td_stream_vtable operators_vt = { operators_move, operators_current, operators_dispose, "operator" };

static operators_stream *operators_new(td_stream *up, operators_kind kind, void *arg)
{
    operators_stream *o = (operators_stream *)td_stream_base_rent(&operators_pool, &operators_vt);
    if (o == NULL)
        return NULL;
    o->kind = kind;
    o->up = up;
    o->where = NULL;
    o->select = NULL;
    o->await_fn = NULL;
    o->cleanup = NULL;
    o->arg = arg;
    o->remaining = 0;
    o->item = 0;
    o->cancel = NULL;
    o->awaiting = OPERATORS_AWAIT_NONE;
    o->pending = td_from_result(0);
    o->up_dispose_started = o->up_dispose_parked = o->up_disposed = o->finished = 0;
    o->up_dispose = td_completed();
    o->stepping = o->step_again = 0;
    o->cancelling = 0;
    if (kind == OPERATORS_WHERE_AWAIT || kind == OPERATORS_SELECT_AWAIT) {
        o->cancel = td_cancel_source_new();
        if (o->cancel == NULL) {
            td_stream_base_drop_owner(&o->base);
            return NULL;
        }
    }
    return o;
}

td_stream *td_stream_where(td_stream *up, td_where_fn pred, void *arg)
{
    operators_stream *o = operators_new(up, OPERATORS_WHERE, arg);
    if (o == NULL)
        return NULL;
    o->where = pred;
    return &o->base.stream;
}

td_stream *td_stream_where_await(td_stream *up, td_await_fn pred, void *arg)
{
    operators_stream *o = operators_new(up, OPERATORS_WHERE_AWAIT, arg);
    if (o == NULL)
        return NULL;
    o->await_fn = pred;
    return &o->base.stream;
}

td_stream *td_stream_select(td_stream *up, td_select_fn fn, void *arg)
{
    operators_stream *o = operators_new(up, OPERATORS_SELECT, arg);
    if (o == NULL)
        return NULL;
    o->select = fn;
    return &o->base.stream;
}

td_stream *td_stream_select_await(td_stream *up, td_await_fn fn, void *arg)
{
    operators_stream *o = operators_new(up, OPERATORS_SELECT_AWAIT, arg);
    if (o == NULL)
        return NULL;
    o->await_fn = fn;
    return &o->base.stream;
}

td_stream *td_stream_take(td_stream *up, int64_t count)
{
    operators_stream *o = operators_new(up, OPERATORS_TAKE, NULL);
    if (o == NULL)
        return NULL;
    o->remaining = count;
    return &o->base.stream;
}

td_stream *td_stream_finally(td_stream *up, td_continuation_fn cleanup, void *arg)
{
    operators_stream *o = operators_new(up, OPERATORS_FINALLY, arg);
    if (o == NULL)
        return NULL;
    o->cleanup = cleanup;
    return &o->base.stream;
}

/* ---- collectors --------------------------------------------------------------------------- */

/* A pooled promise: iterate (looping over synchronous moves), then dispose, then complete. */
typedef struct operators_collect {
    td_source source;                /* first member */
    uint32_t token;
    td_stream *s;
    int64_t *items;
    size_t capacity;
    td_i64_array *grow;
    size_t count;
    td_task_i64 pending;
    uint32_t disposing;
    td_outcome result;
} operators_collect;

static td_pool operators_collect_pool;

static void operators_collect_release(td_source *s)
{
    operators_collect *c = (operators_collect *)s;
    c->s = NULL;
    c->items = NULL;
    c->grow = NULL;
    td_source_recycle(&c->source);
    td_pool_return(&operators_collect_pool, c);
}

static const td_source_ops operators_collect_ops = { operators_collect_release, NULL, NULL, NULL, "to-array" };

static void operators_collect_on_move(void *arg);
static void operators_collect_on_disposed(void *arg);

static void operators_collect_finish(operators_collect *c)
{
    td_outcome r = c->result;
    td_source_complete(&c->source, c->token, r.status, r.value, &r.error);
}

static void operators_collect_dispose(operators_collect *c)
{
    c->disposing = 1;
    td_task d = td_stream_dispose(c->s);
    c->pending = td_task_i64_of(d);
    if (td_task_on_completed(d, operators_collect_on_disposed, c) == TD_OK)
        return;
    td_task_forget_result(d);
    operators_collect_finish(c);
}

static void operators_collect_on_disposed(void *arg)
{
    operators_collect *c = (operators_collect *)arg;
    td_task_forget_result(c->pending.task);
    operators_collect_finish(c);
}

/* Store one item; 0 when the caller's storage is full. */
static int operators_collect_store(operators_collect *c, int64_t item)
{
    if (c->grow) {
        td_i64_array *a = c->grow;
        if (a->count == a->capacity) {
            size_t cap = a->capacity ? a->capacity * 2 : 16;
            int64_t *items = (int64_t *)realloc(a->items, cap * sizeof(int64_t));
            if (items == NULL)
                return 0;
            a->items = items;
            a->capacity = cap;
        }
        a->items[a->count++] = item;
        return 1;
    }
    if (c->count >= c->capacity)
        return 0;
    c->items[c->count] = item;
    return 1;
}

static void operators_collect_pump(operators_collect *c, int have)
{
    td_outcome o;
    for (;;) {
        if (!have) {
            c->pending = td_stream_move_next(c->s);
            if (td_task_on_completed(c->pending.task, operators_collect_on_move, c) == TD_OK)
                return;
        }
        have = 0;
        int rc = td_task_i64_get(c->pending, &o);
        if (rc != TD_OK || o.status != TD_SUCCEEDED) {
            c->result.status = rc != TD_OK ? TD_FAULTED : o.status;
            c->result.value = 0;
            c->result.error = o.error;
            if (rc != TD_OK) {
                c->result.error.code = rc;
                c->result.error.message = "to_array: unusable move task";
                c->result.error.cancel = NULL;
            }
            operators_collect_dispose(c);
            return;
        }
        if (o.value == 0) {
            c->result.status = TD_SUCCEEDED;
            c->result.value = (int64_t)c->count;
            operators_collect_dispose(c);
            return;
        }
        if (!operators_collect_store(c, td_stream_current(c->s))) {
            c->result.status = TD_FAULTED;
            c->result.value = 0;
            c->result.error.code = c->grow ? TD_E_NOMEM : TD_ERR_BUFFER_FULL;
            c->result.error.message = c->grow ? "to_array: allocation failed" : "to_array: more items than capacity";
            c->result.error.cancel = NULL;
            operators_collect_dispose(c);
            return;
        }
        c->count++;
    }
}

static void operators_collect_on_move(void *arg) { operators_collect_pump((operators_collect *)arg, 1); }

static td_task_i64 operators_collect_start(td_stream *s, int64_t *items, size_t capacity, td_i64_array *grow)
{
    operators_collect *c = (operators_collect *)td_pool_rent(&operators_collect_pool);
    if (c == NULL)
        return td_from_error_i64(TD_E_NOMEM, "to_array allocation failed");
    if (c->source.ops == NULL)
        c->source.ops = &operators_collect_ops;
    c->token = td_source_token(&c->source);
    c->s = s;
    c->items = items;
    c->capacity = capacity;
    c->grow = grow;
    c->count = 0;
    c->disposing = 0;
    memset(&c->result, 0, sizeof(c->result));
    td_task_i64 t = td_task_i64_of(td_task_of(&c->source, c->token));
    operators_collect_pump(c, 0);
    td_status st;
    if (td_task_status(t.task, &st) == TD_OK && st == TD_SUCCEEDED) {
        td_outcome o;
        td_task_i64_get(t, &o);
        return td_from_result(o.value);
    }
    return t;
}

td_task_i64 td_stream_to_array(td_stream *s, int64_t *items, size_t capacity)
{
    return operators_collect_start(s, items, capacity, NULL);
}

td_task_i64 td_stream_to_growable(td_stream *s, td_i64_array *out)
{
    return operators_collect_start(s, NULL, 0, out);
}

void td_i64_array_free(td_i64_array *a)
{
    free(a->items);
    a->items = NULL;
    a->count = a->capacity = 0;
}

/* ---- runtime hooks ------------------------------------------------------------------------ */

int td_operators_runtime_init_(uint32_t capacity)
{
    int rc = td_pool_init(&operators_pool, "operator", sizeof(operators_stream), capacity);
    if (rc == TD_OK)
        rc = td_pool_init(&operators_collect_pool, "to-array", sizeof(operators_collect), capacity);
    return rc;
}

void td_operators_runtime_shutdown_(void)
{
    td_pool_destroy(&operators_collect_pool);
    td_pool_destroy(&operators_pool);
}

int td_operators_set_capacity_(uint32_t capacity)
{
    int rc = td_pool_set_capacity(&operators_pool, capacity);
    if (rc == TD_OK)
        rc = td_pool_set_capacity(&operators_collect_pool, capacity);
    return rc;
}
