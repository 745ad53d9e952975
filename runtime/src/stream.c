/*
 * stream.c - async streams: the pooled stream base, the simple sources, create-from-writer
 * and every-update (see include/tandem/stream.h for the contract and the cleanup order).
 *
 * Invariants of a stream base (relied on by operators.c and channel.c too):
 *   - `owners` counts the dispose consumer (1 from rent), every move task handed out and
 *     not yet consumed, and kind-specific holders; the last drop recycles `done` and
 *     returns the object to its pool. `next` is recycled at each consumption of a move
 *     task, so a stale move token is rejected like any recycled source's.
 *   - `moving` is 1 between begin_move and the settle; exactly one party settles (on the
 *     loop thread, or under the kind's lock for every-update).
 *   - dispose runs the kind's cleanup once (guarded by `disposed` or a kind flag) before
 *     completing `done`.
 */
#include <stddef.h>
#include "../port/td_libc.h"
#include "td_internal.h"

/* ---- the base ----------------------------------------------------------------------- */

#define STREAM_OF_NEXT(s) ((td_stream_base *)((char *)(s) - offsetof(td_stream_base, next)))
#define STREAM_OF_DONE(s) ((td_stream_base *)((char *)(s) - offsetof(td_stream_base, done)))

void td_stream_base_drop_owner(td_stream_base *b)
{
    if (td_atomic_fetch_add_u32(&b->owners, (uint32_t)-1) != 1)
        return;
    td_source_recycle(&b->done);
    td_pool_return(b->pool, b);
}

void td_stream_base_add_owner(td_stream_base *b) { td_atomic_fetch_add_u32(&b->owners, 1); }

/* A move task was consumed: the next move gets a fresh version. */
static void stream_next_release(td_source *s)
{
    td_source_recycle(s);
    td_stream_base_drop_owner(STREAM_OF_NEXT(s));
}

/* The dispose consumer's token ends before its ownership drops (moves may still hold the
 * base), as compose_release's. */
static void stream_done_release(td_source *s)
{
    td_source_keep_consumed_(s);
    td_stream_base_drop_owner(STREAM_OF_DONE(s));
}

static const td_source_ops stream_next_ops = { stream_next_release, NULL, NULL, NULL, "stream-move" };
static const td_source_ops stream_done_ops = { stream_done_release, NULL, NULL, NULL, "stream-dispose" };

td_stream_base *td_stream_base_rent(td_pool *pool, const td_stream_vtable *vt)
{
    td_stream_base *b = (td_stream_base *)td_pool_rent(pool);
    if (TD_UNLIKELY(b == NULL))
        return NULL;
    if (b->next.ops == NULL) {          /* freshly allocated (zeroed) */
        b->next.ops = &stream_next_ops;
        b->done.ops = &stream_done_ops;
    }
    b->stream.vt = vt;
    b->pool = pool;
    b->owners = 1;
    b->moving = 0;
    b->disposed = 0;
    b->current = 0;
    return b;
}

td_task_i64 td_stream_base_begin_move(td_stream_base *b)
{
    td_atomic_fetch_add_u32(&b->owners, 1);
    b->next_token = td_source_token(&b->next);
    b->moving = 1;
    return td_task_i64_of(td_task_of(&b->next, b->next_token));
}

void td_stream_base_settle(td_stream_base *b, td_status st, int64_t value, const td_error *err)
{
    if (!b->moving)
        return;
    b->moving = 0;
    /* try_complete: an every-update stream may race a worker's dispose for the source. */
    td_source_try_complete(&b->next, b->next_token, st, value, err);
}

td_task_i64 td_stream_base_move_result(td_stream_base *b, td_task_i64 t)
{
    (void)b;
    td_status st;
    if (td_task_status(t.task, &st) == TD_OK && st == TD_SUCCEEDED) {
        td_outcome o;
        td_task_i64_get(t, &o);
        return td_from_result(o.value);
    }
    return t;
}

void td_stream_base_disposed(td_stream_base *b)
{
    td_source_complete(&b->done, td_source_token(&b->done), TD_SUCCEEDED, 0, NULL);
}

td_task td_stream_base_dispose_result(td_stream_base *b)
{
    td_task t = td_task_of(&b->done, td_source_token(&b->done));
    td_status st;
    if (td_task_status(t, &st) == TD_OK && st == TD_SUCCEEDED) {
        td_task_forget_result(t);        /* may return b to its pool: touch nothing after */
        return td_completed();
    }
    return t;
}

td_task_i64 td_stream_canceled_move(td_cancel_source *by) { return td_from_canceled_i64(by); }

/* ---- empty, return, range, repeat (synchronous: moves complete inline) --------------- */

static td_task_i64 stream_empty_move(td_stream *s) { (void)s; return td_from_result(0); }
static int64_t stream_empty_current(td_stream *s) { (void)s; return 0; }
static td_task stream_empty_dispose(td_stream *s) { (void)s; return td_completed(); }
static const td_stream_vtable stream_empty_vt = { stream_empty_move, stream_empty_current, stream_empty_dispose, "empty" };
static td_stream stream_empty_object = { &stream_empty_vt };

td_stream *td_stream_empty(void) { return &stream_empty_object; }

typedef struct stream_seq {
    td_stream_base base;
    int64_t next_value;
    int64_t step;
    int64_t remaining;          /* < 0: without end */
} stream_seq;

static td_pool stream_seq_pool;

static td_task_i64 stream_seq_move(td_stream *s)
{
    stream_seq *q = (stream_seq *)s;
    if (q->base.disposed)
        return td_stream_canceled_move(NULL);
    if (q->remaining == 0)
        return td_from_result(0);
    if (q->remaining > 0)
        q->remaining--;
    q->base.current = q->next_value;
    q->next_value += q->step;
    return td_from_result(1);
}

static int64_t stream_base_current(td_stream *s) { return ((td_stream_base *)s)->current; }

static td_task stream_seq_dispose(td_stream *s)
{
    stream_seq *q = (stream_seq *)s;
    q->base.disposed = 1;
    td_stream_base_disposed(&q->base);
    return td_stream_base_dispose_result(&q->base);
}

static const td_stream_vtable stream_seq_vt = { stream_seq_move, stream_base_current, stream_seq_dispose, "sequence" };

static td_stream *stream_seq_new(int64_t first, int64_t step, int64_t count)
{
    stream_seq *q = (stream_seq *)td_stream_base_rent(&stream_seq_pool, &stream_seq_vt);
    if (q == NULL)
        return NULL;
    q->next_value = first;
    q->step = step;
    q->remaining = count;
    return &q->base.stream;
}

td_stream *td_stream_return(int64_t value) { return stream_seq_new(value, 0, 1); }
td_stream *td_stream_range(int64_t start, int64_t count) { return stream_seq_new(start, 1, count < 0 ? 0 : count); }
td_stream *td_stream_repeat(int64_t value, int64_t count) { return stream_seq_new(value, 0, count < 0 ? -1 : count); }

/* ---- create-from-writer ----------------------------------------------------------------- */

enum { GEN_IDLE, GEN_RUNNING, GEN_FINISHED };

struct td_stream_writer {
    td_stream_base base;
    td_source write;                 /* the producer's pending write */
    uint32_t write_token;
    uint32_t write_pending;
    uint32_t state;
    uint32_t cleaned;
    uint32_t cancelling;             /* inside td_cancel_source_cancel(cancel): do not free it */
    td_stream_producer_fn producer;
    void *arg;
    td_continuation_fn cleanup;
    void *cleanup_arg;
    td_cancel_source *cancel;
    td_task producer_task;
    td_status end_status;            /* how the producer ended (GEN_FINISHED) */
    td_error end_error;
};

static td_pool stream_gen_pool;

/* The producer consumed a write: next version; the stream itself lives on. */
static void stream_write_release(td_source *s) { td_source_recycle(s); }
static const td_source_ops stream_write_ops = { stream_write_release, NULL, NULL, NULL, "stream-write" };

/* Steps 4 and 5 of the order, once the producer has finished (or never started). */
static void stream_gen_finish_dispose(td_stream_writer *g)
{
    if (g->cleaned)
        return;
    g->cleaned = 1;
    if (g->cleanup)
        g->cleanup(g->cleanup_arg);
    if (!g->cancelling) {            /* else freed once the cancel call has returned */
        td_cancel_source_free(g->cancel);
        g->cancel = NULL;
    }
    td_stream_base_disposed(&g->base);
}

static void stream_gen_producer_done(void *arg)
{
    td_stream_writer *g = (td_stream_writer *)arg;
    td_outcome o;
    int rc = td_task_get(g->producer_task, &o);
    g->producer_task = td_completed();
    g->state = GEN_FINISHED;
    g->end_status = TD_SUCCEEDED;
    if (g->base.disposed) {
        stream_gen_finish_dispose(g);
        return;
    }
    if (rc != TD_OK) {
        td_error e = { rc, "stream producer task was unusable", NULL };
        g->end_status = TD_FAULTED;
        g->end_error = e;
        td_stream_base_settle(&g->base, TD_FAULTED, 0, &e);
    } else if (o.status == TD_SUCCEEDED) {
        td_stream_base_settle(&g->base, TD_SUCCEEDED, 0, NULL);
    } else {
        /* Remembered: every later move_next ends the same way, not with a clean end. */
        g->end_status = o.status;
        g->end_error = o.error;
        td_stream_base_settle(&g->base, o.status, 0, &o.error);
    }
}

static td_task_i64 stream_gen_move(td_stream *s)
{
    td_stream_writer *g = (td_stream_writer *)s;
    if (TD_UNLIKELY(g->base.disposed))
        return td_stream_canceled_move(g->cancel);
    if (TD_UNLIKELY(g->base.moving))
        return td_from_error_i64(TD_E_INVALID, "move_next while another is pending");
    if (g->state == GEN_FINISHED) {
        if (TD_LIKELY(g->end_status == TD_SUCCEEDED))
            return td_from_result(0);
        if (g->end_status == TD_CANCELED)
            return td_from_canceled_i64(g->end_error.cancel);
        return td_from_error_i64(g->end_error.code, g->end_error.message);
    }
    td_task_i64 t = td_stream_base_begin_move(&g->base);
    if (g->state == GEN_IDLE) {
        g->state = GEN_RUNNING;
        g->producer_task = g->producer(g, td_cancel_source_token(g->cancel), g->arg);
        if (td_task_on_completed(g->producer_task, stream_gen_producer_done, g) != TD_OK)
            stream_gen_producer_done(g);
    } else if (g->write_pending) {
        /* Back-pressure released: the producer resumes (inline when it awaits the write). */
        g->write_pending = 0;
        td_source_complete(&g->write, g->write_token, TD_SUCCEEDED, 0, NULL);
    }
    return td_stream_base_move_result(&g->base, t);
}

td_task td_stream_writer_write(td_stream_writer *g, int64_t item)
{
    if (g->base.disposed)
        return td_from_canceled(g->cancel);
    if (TD_UNLIKELY(!g->base.moving || g->write_pending))
        return td_from_error(TD_E_INVALID, "stream write without a pending move_next (await each write)");
    /* Make the write pending before publishing the item: the consumer may call move_next
     * inline from its continuation, and that completes this write. */
    g->write_pending = 1;
    g->write_token = td_source_token(&g->write);
    td_task w = td_task_of(&g->write, g->write_token);
    g->base.current = item;
    td_stream_base_settle(&g->base, TD_SUCCEEDED, 1, NULL);
    return w;
}

static td_task stream_gen_dispose(td_stream *s)
{
    td_stream_writer *g = (td_stream_writer *)s;
    if (g->base.disposed)
        return td_completed();
    g->base.disposed = 1;
    td_error e = td_cancel_error(g->cancel);
    td_stream_base_settle(&g->base, TD_CANCELED, 0, &e);          /* 1 */
    /* The cancel callbacks may end the producer and finish the disposal; the source is
     * freed only after the cancel call has stopped touching it. */
    g->cancelling = 1;
    td_cancel_source_cancel(g->cancel);                            /* 2 */
    g->cancelling = 0;
    if (g->cleaned) {
        td_cancel_source_free(g->cancel);
        g->cancel = NULL;
    }
    if (g->write_pending) {
        g->write_pending = 0;
        td_source_complete(&g->write, g->write_token, TD_CANCELED, 0, &e);
    }
    if (g->state != GEN_RUNNING)
        stream_gen_finish_dispose(g);                              /* 4, 5 */
    /* else the producer's end finishes the disposal (stream_gen_producer_done) */
    return td_stream_base_dispose_result(&g->base);
}

static const td_stream_vtable stream_gen_vt = { stream_gen_move, stream_base_current, stream_gen_dispose, "create" };

td_stream *td_stream_create(td_stream_producer_fn producer, void *arg,
                            td_continuation_fn cleanup, void *cleanup_arg)
{
    td_stream_writer *g = (td_stream_writer *)td_stream_base_rent(&stream_gen_pool, &stream_gen_vt);
    if (g == NULL)
        return NULL;
    if (g->write.ops == NULL)
        g->write.ops = &stream_write_ops;
    g->cancel = td_cancel_source_new();
    if (g->cancel == NULL) {
        td_stream_base_drop_owner(&g->base);
        return NULL;
    }
    g->write_pending = 0;
    g->state = GEN_IDLE;
    g->cleaned = 0;
    g->cancelling = 0;
    g->producer = producer;
    g->arg = arg;
    g->cleanup = cleanup;
    g->cleanup_arg = cleanup_arg;
    g->producer_task = td_completed();
    g->end_status = TD_SUCCEEDED;
    return &g->base.stream;
}

/* ---- every-update -------------------------------------------------------------------------- */

/* `lock` guards moving/target/attached/disposed against a dispose from another thread;
 * settling happens outside the lock, by whoever cleared `moving` under it. */
typedef struct stream_every {
    td_stream_base base;
    td_spinlock lock;
    td_loop *loop;
    td_timing timing;
    uint32_t attached;               /* the loop item holds an owner */
    uint32_t target;                 /* frame in which the pending move completes */
    td_continuation_fn cleanup;
    void *cleanup_arg;
} stream_every;

static td_pool stream_every_pool;

static void stream_every_settle_canceled(stream_every *e)
{
    td_error err = td_cancel_error(NULL);
    td_source_try_complete(&e->base.next, e->base.next_token, TD_CANCELED, 0, &err);
}

static int stream_every_tick(void *arg)
{
    stream_every *e = (stream_every *)arg;
    td_spin_lock(&e->lock);
    if (e->base.disposed) {
        e->attached = 0;
        td_spin_unlock(&e->lock);
        td_stream_base_drop_owner(&e->base);
        return 0;
    }
    uint32_t frame = td_loop_frame(e->loop);
    int fire = e->base.moving && (int32_t)(frame - e->target) >= 0;
    if (fire) {
        e->base.moving = 0;
        e->base.current = frame;
    }
    td_spin_unlock(&e->lock);
    /* The item's owner keeps e alive through a re-entrant move_next or dispose here. */
    if (fire)
        td_source_try_complete(&e->base.next, e->base.next_token, TD_SUCCEEDED, 1, NULL);
    return 1;
}

static void stream_every_retire(void *arg)
{
    stream_every *e = (stream_every *)arg;
    td_spin_lock(&e->lock);
    int was_moving = e->base.moving;
    e->base.moving = 0;
    e->attached = 0;
    td_spin_unlock(&e->lock);
    if (was_moving)
        stream_every_settle_canceled(e);
    td_stream_base_drop_owner(&e->base);
}

static td_task_i64 stream_every_move(td_stream *s)
{
    stream_every *e = (stream_every *)s;
    td_spin_lock(&e->lock);
    if (e->base.disposed || e->base.moving) {
        int disposed = e->base.disposed;
        td_spin_unlock(&e->lock);
        return disposed ? td_stream_canceled_move(NULL)
                        : td_from_error_i64(TD_E_INVALID, "move_next while another is pending");
    }
    td_task_i64 t = td_stream_base_begin_move(&e->base);
    e->target = td_loop_next_run_frame_(e->loop, e->timing);
    int attach = !e->attached;
    if (attach) {
        e->attached = 1;
        td_stream_base_add_owner(&e->base);
    }
    td_spin_unlock(&e->lock);
    if (attach && td_loop_add_item_retire_(e->loop, e->timing, stream_every_tick, stream_every_retire, e) != TD_OK) {
        td_spin_lock(&e->lock);
        e->attached = 0;
        e->base.moving = 0;
        td_spin_unlock(&e->lock);
        td_error err = { TD_E_NOMEM, "loop item allocation failed", NULL };
        td_source_try_complete(&e->base.next, e->base.next_token, TD_FAULTED, 0, &err);
        td_stream_base_drop_owner(&e->base);
    }
    return t;
}

static td_task stream_every_dispose(td_stream *s)
{
    stream_every *e = (stream_every *)s;
    td_spin_lock(&e->lock);
    if (e->base.disposed) {
        td_spin_unlock(&e->lock);
        return td_completed();
    }
    e->base.disposed = 1;
    int was_moving = e->base.moving;
    e->base.moving = 0;
    td_spin_unlock(&e->lock);
    if (was_moving)
        stream_every_settle_canceled(e);                 /* 1 */
    if (e->cleanup)
        e->cleanup(e->cleanup_arg);                      /* 4 (the item detaches on its next pass) */
    td_stream_base_disposed(&e->base);                   /* 5 */
    return td_stream_base_dispose_result(&e->base);
}

static const td_stream_vtable stream_every_vt = { stream_every_move, stream_base_current, stream_every_dispose, "every-update" };

td_stream *td_stream_every_update(td_loop *loop, td_timing timing,
                                  td_continuation_fn cleanup, void *cleanup_arg)
{
    stream_every *e = (stream_every *)td_stream_base_rent(&stream_every_pool, &stream_every_vt);
    if (e == NULL)
        return NULL;
    e->loop = loop ? loop : td_loop_main();
    e->timing = timing;
    e->attached = 0;
    e->target = 0;
    e->cleanup = cleanup;
    e->cleanup_arg = cleanup_arg;
    return &e->base.stream;
}

/* ---- runtime hooks (runtime.c calls them in its module order) --------------------------- */

int td_stream_runtime_init_(uint32_t capacity)
{
    int rc = td_pool_init(&stream_seq_pool, "stream-sequence", sizeof(stream_seq), capacity);
    if (rc == TD_OK)
        rc = td_pool_init(&stream_gen_pool, "stream-create", sizeof(td_stream_writer), capacity);
    if (rc == TD_OK)
        rc = td_pool_init(&stream_every_pool, "stream-every-update", sizeof(stream_every), capacity);
    return rc;
}

void td_stream_runtime_shutdown_(void)
{
    td_pool_destroy(&stream_every_pool);
    td_pool_destroy(&stream_gen_pool);
    td_pool_destroy(&stream_seq_pool);
}

int td_stream_set_capacity_(uint32_t capacity)
{
    int rc = td_pool_set_capacity(&stream_seq_pool, capacity);
    if (rc == TD_OK)
        rc = td_pool_set_capacity(&stream_gen_pool, capacity);
    if (rc == TD_OK)
        rc = td_pool_set_capacity(&stream_every_pool, capacity);
    return rc;
}
