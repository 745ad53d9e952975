/*
 * channel.c - bounded and unbounded channels (see include/tandem/channel.h).
 *
 * Invariants:
 *   - `lock` (a spin lock: every critical section is a few pointer moves) guards the
 *     ring, the three wait queues and the flags. Tasks are completed only after unlocking,
 *     by whoever unlinked the waiting operation under the lock: a write that pops a
 *     reader, a read that admits a writer, completion, reader disposal, or the op's own
 *     cancel callback. Unlinking decides, so each op completes exactly once.
 *   - readers and wait_to_read ops wait only while the ring is empty; writers wait only
 *     while a bounded ring is full.
 *   - a waiting op (pooled source) has three owners: its consumer, its queue (dropped by
 *     the unlinker after completing it) and its setup (dropped once the cancel
 *     registration is in place, so a fast completion cannot recycle it mid-registration).
 *     The last owner unregisters the cancel callback (which waits for a running one) and
 *     recycles it.
 *   - allocation under the lock happens only when an unbounded ring grows past its
 *     largest size so far, or a waiting op is rented from an empty pool.
 */
#include "../port/td_libc.h"
#include "td_internal.h"

enum { CHANNEL_OP_READ, CHANNEL_OP_WAIT, CHANNEL_OP_WRITE };

typedef struct channel_op channel_op;
typedef struct channel_queue { channel_op *head, *tail; } channel_queue;

struct channel_op {
    td_source source;                /* first member */
    uint32_t token;
    volatile uint32_t owners;
    td_channel *ch;
    channel_queue *queue;            /* the queue it is linked in, NULL when unlinked */
    channel_op *prev, *next;         /* queue links; `next` also chains a completion list */
    int64_t item;                    /* a waiting write's item */
    td_cancel_token cancel;
    td_cancel_registration reg;
    /* the outcome decided under the lock, published after unlocking */
    td_status st;
    int64_t value;
    td_error err;
};

struct td_channel {
    td_spinlock lock;
    int64_t *ring;
    uint32_t cap, head, count;
    int bounded;
    uint32_t closed;                 /* completed, or reader disposed */
    uint32_t reader_disposed;
    td_error fault;                  /* code TD_ERR_NONE: normal completion */
    channel_queue readers, waiters, writers;
};

static td_pool channel_op_pool;
static td_pool channel_all_pool;

static const td_error channel_closed_error = { TD_ERR_CHANNEL_CLOSED, "channel completed", NULL };

/* ---- waiting operations ---------------------------------------------------------------- */

static void channel_op_drop(channel_op *op)
{
    if (td_atomic_fetch_add_u32(&op->owners, (uint32_t)-1) != 1)
        return;
    td_cancel_unregister(op->reg);
    op->reg.node = NULL;
    op->cancel.source = NULL;
    op->ch = NULL;
    td_source_recycle(&op->source);
    td_pool_return(&channel_op_pool, op);
}

/* The consumer's token ends before its ownership drops (the queue may still hold the
 * operation), as compose_release's. */
static void channel_op_release(td_source *s)
{
    td_source_keep_consumed_(s);
    channel_op_drop((channel_op *)s);
}

static const td_source_ops channel_op_ops = { channel_op_release, NULL, NULL, NULL, "channel-op" };

static void channel_link(channel_queue *q, channel_op *op)
{
    op->queue = q;
    op->next = NULL;
    op->prev = q->tail;
    if (q->tail)
        q->tail->next = op;
    else
        q->head = op;
    q->tail = op;
}

static void channel_unlink(channel_op *op)
{
    channel_queue *q = op->queue;
    if (op->prev)
        op->prev->next = op->next;
    else
        q->head = op->next;
    if (op->next)
        op->next->prev = op->prev;
    else
        q->tail = op->prev;
    op->queue = NULL;
    op->prev = op->next = NULL;
}

/* Unlink the head of q and push it on the completion list with its outcome. */
static void channel_decide(channel_op *op, channel_op **list, td_status st, int64_t value, const td_error *err)
{
    channel_unlink(op);
    op->st = st;
    op->value = value;
    if (err)
        op->err = *err;
    else
        memset(&op->err, 0, sizeof(op->err));
    op->next = *list;
    *list = op;
}

static void channel_decide_all(channel_queue *q, channel_op **list, td_status st, int64_t value, const td_error *err)
{
    while (q->head)
        channel_decide(q->head, list, st, value, err);
}

/* After unlocking: publish each decided outcome, then drop the queue's ownership. The list
 * was built by pushing on its front: reversed, ops settle in the order they were decided,
 * so blocked writers (and readers) settle first in, first out. */
static void channel_publish(channel_op *list)
{
    channel_op *fifo = NULL;
    while (list) {
        channel_op *next = list->next;
        list->next = fifo;
        fifo = list;
        list = next;
    }
    list = fifo;
    while (list) {
        channel_op *next = list->next;
        td_error err = list->err;
        td_source_complete(&list->source, list->token, list->st, list->value, &err);
        channel_op_drop(list);
        list = next;
    }
}

static void channel_op_cancel(void *arg)
{
    channel_op *op = (channel_op *)arg;
    td_channel *ch = op->ch;
    channel_op *list = NULL;
    td_spin_lock(&ch->lock);
    if (op->queue) {
        td_error e = td_cancel_error(op->cancel.source);
        channel_decide(op, &list, TD_CANCELED, 0, &e);
    }
    td_spin_unlock(&ch->lock);
    channel_publish(list);
}

/* Called with the lock held: rent and link a waiting op (NULL: out of memory). */
static channel_op *channel_wait_locked(td_channel *ch, channel_queue *q, int64_t item, td_cancel_token cancel)
{
    channel_op *op = (channel_op *)td_pool_rent(&channel_op_pool);
    if (op == NULL)
        return NULL;
    if (op->source.ops == NULL)
        op->source.ops = &channel_op_ops;
    op->token = td_source_token(&op->source);
    op->owners = 3;
    op->ch = ch;
    op->item = item;
    op->cancel = cancel;
    op->reg.node = NULL;
    channel_link(q, op);
    return op;
}

/* After unlocking: register the cancel callback, drop the setup ownership. */
static td_task channel_wait_armed(channel_op *op)
{
    td_task t = td_task_of(&op->source, op->token);
    if (op->cancel.source)
        op->reg = td_cancel_register(op->cancel, channel_op_cancel, op);
    channel_op_drop(op);
    return t;
}

/* ---- the ring ------------------------------------------------------------------------------- */

static int channel_ring_push(td_channel *ch, int64_t item)
{
    if (ch->count == ch->cap) {
        if (ch->bounded)
            return 0;
        uint32_t cap = ch->cap ? ch->cap * 2 : 16;
        int64_t *ring = (int64_t *)malloc(cap * sizeof(int64_t));
        if (ring == NULL)
            return 0;
        for (uint32_t i = 0; i < ch->count; i++)
            ring[i] = ch->ring[(ch->head + i) % ch->cap];
        free(ch->ring);
        ch->ring = ring;
        ch->cap = cap;
        ch->head = 0;
    }
    ch->ring[(ch->head + ch->count) % ch->cap] = item;
    ch->count++;
    return 1;
}

static int64_t channel_ring_pop(td_channel *ch)
{
    int64_t item = ch->ring[ch->head];
    ch->head = (ch->head + 1) % ch->cap;
    ch->count--;
    return item;
}

/* ---- channels -------------------------------------------------------------------------------- */

static td_channel *channel_new(uint32_t cap, int bounded)
{
    td_channel *ch = (td_channel *)calloc(1, sizeof(*ch));
    if (ch == NULL)
        return NULL;
    ch->bounded = bounded;
    if (cap) {
        ch->ring = (int64_t *)malloc(cap * sizeof(int64_t));
        if (ch->ring == NULL) {
            free(ch);
            return NULL;
        }
        ch->cap = cap;
    }
    return ch;
}

td_channel *td_channel_create_bounded(uint32_t capacity) { return channel_new(capacity ? capacity : 1, 1); }
td_channel *td_channel_create_unbounded(void) { return channel_new(16, 0); }

void td_channel_free(td_channel *ch)
{
    if (ch == NULL)
        return;
    free(ch->ring);
    free(ch);
}

/* Locked: put an item in (a waiting reader first, else the ring, waking every waiter).
 * 1 done, 0 full (bounded) or out of memory. */
static int channel_put_locked(td_channel *ch, int64_t item, channel_op **list)
{
    if (ch->readers.head) {
        channel_decide(ch->readers.head, list, TD_SUCCEEDED, item, NULL);
        return 1;
    }
    if (!channel_ring_push(ch, item))
        return 0;
    channel_decide_all(&ch->waiters, list, TD_SUCCEEDED, 1, NULL);
    return 1;
}

/* Locked: take an item; a waiting writer moves into the freed slot. */
static int64_t channel_take_locked(td_channel *ch, channel_op **list)
{
    int64_t item = channel_ring_pop(ch);
    if (ch->writers.head) {
        channel_op *w = ch->writers.head;
        channel_ring_push(ch, w->item);
        channel_decide(w, list, TD_SUCCEEDED, 0, NULL);
    }
    return item;
}

static const td_error *channel_end_error(td_channel *ch)
{
    return ch->fault.code != TD_ERR_NONE ? &ch->fault : &channel_closed_error;
}

int td_channel_try_write(td_channel *ch, int64_t item)
{
    channel_op *list = NULL;
    int rc;
    td_spin_lock(&ch->lock);
    if (ch->closed)
        rc = TD_E_STALE;
    else
        rc = channel_put_locked(ch, item, &list) ? TD_OK : TD_E_PENDING;
    td_spin_unlock(&ch->lock);
    channel_publish(list);
    return rc;
}

td_task td_channel_write(td_channel *ch, int64_t item, td_cancel_token cancel)
{
    channel_op *list = NULL;
    td_spin_lock(&ch->lock);
    if (ch->closed) {
        td_spin_unlock(&ch->lock);
        return td_from_error(TD_ERR_CHANNEL_CLOSED, "channel completed");
    }
    if (channel_put_locked(ch, item, &list)) {
        td_spin_unlock(&ch->lock);
        channel_publish(list);
        return td_completed();
    }
    if (!ch->bounded) {
        td_spin_unlock(&ch->lock);
        return td_from_error(TD_E_NOMEM, "channel ring allocation failed");
    }
    if (td_cancel_is_requested(cancel)) {
        td_spin_unlock(&ch->lock);
        return td_from_canceled(cancel.source);
    }
    channel_op *op = channel_wait_locked(ch, &ch->writers, item, cancel);
    td_spin_unlock(&ch->lock);
    if (op == NULL)
        return td_from_error(TD_E_NOMEM, "channel op allocation failed");
    return channel_wait_armed(op);
}

int td_channel_try_read(td_channel *ch, int64_t *out)
{
    channel_op *list = NULL;
    int rc = TD_OK;
    td_spin_lock(&ch->lock);
    if (ch->count)
        *out = channel_take_locked(ch, &list);
    else
        rc = ch->closed ? TD_E_STALE : TD_E_PENDING;
    td_spin_unlock(&ch->lock);
    channel_publish(list);
    return rc;
}

/* A read or wait_to_read: `wait` selects the queue and the answers. */
static td_task_i64 channel_read_or_wait(td_channel *ch, td_cancel_token cancel, int wait)
{
    channel_op *list = NULL;
    td_spin_lock(&ch->lock);
    if (ch->count) {
        int64_t v = wait ? 1 : channel_take_locked(ch, &list);
        td_spin_unlock(&ch->lock);
        channel_publish(list);
        return td_from_result(v);
    }
    if (ch->reader_disposed) {
        td_spin_unlock(&ch->lock);
        return td_from_canceled_i64(NULL);
    }
    if (ch->closed) {
        td_error e = *channel_end_error(ch);
        td_spin_unlock(&ch->lock);
        if (wait && e.code == TD_ERR_CHANNEL_CLOSED)
            return td_from_result(0);
        return td_from_error_i64(e.code, e.message);
    }
    if (td_cancel_is_requested(cancel)) {
        td_spin_unlock(&ch->lock);
        return td_from_canceled_i64(cancel.source);
    }
    channel_op *op = channel_wait_locked(ch, wait ? &ch->waiters : &ch->readers, 0, cancel);
    td_spin_unlock(&ch->lock);
    if (op == NULL)
        return td_from_error_i64(TD_E_NOMEM, "channel op allocation failed");
    return td_task_i64_of(channel_wait_armed(op));
}

td_task_i64 td_channel_read(td_channel *ch, td_cancel_token cancel) { return channel_read_or_wait(ch, cancel, 0); }
td_task_i64 td_channel_wait_to_read(td_channel *ch, td_cancel_token cancel) { return channel_read_or_wait(ch, cancel, 1); }

int td_channel_complete(td_channel *ch, const td_error *fault)
{
    channel_op *list = NULL;
    td_spin_lock(&ch->lock);
    if (ch->closed) {
        td_spin_unlock(&ch->lock);
        return TD_DONE;
    }
    ch->closed = 1;
    if (fault && fault->code != TD_ERR_NONE)
        ch->fault = *fault;
    const td_error *end = channel_end_error(ch);
    /* Readers and waiters wait only on an empty ring: nothing more will come. */
    channel_decide_all(&ch->readers, &list, TD_FAULTED, 0, end);
    if (end->code == TD_ERR_CHANNEL_CLOSED)
        channel_decide_all(&ch->waiters, &list, TD_SUCCEEDED, 0, NULL);
    else
        channel_decide_all(&ch->waiters, &list, TD_FAULTED, 0, end);
    channel_decide_all(&ch->writers, &list, TD_FAULTED, 0, &channel_closed_error);
    td_spin_unlock(&ch->lock);
    channel_publish(list);
    return TD_OK;
}

void td_channel_dispose_reader(td_channel *ch)
{
    channel_op *list = NULL;
    td_error canceled = td_cancel_error(NULL);
    td_spin_lock(&ch->lock);
    ch->reader_disposed = 1;
    ch->closed = 1;
    ch->count = 0;
    ch->head = 0;
    channel_decide_all(&ch->readers, &list, TD_CANCELED, 0, &canceled);
    channel_decide_all(&ch->waiters, &list, TD_CANCELED, 0, &canceled);
    channel_decide_all(&ch->writers, &list, TD_FAULTED, 0, &channel_closed_error);
    td_spin_unlock(&ch->lock);
    channel_publish(list);
}

/* ---- read-all stream --------------------------------------------------------------------------- */

typedef struct channel_all {
    td_stream_base base;
    td_channel *ch;
    td_cancel_source *cancel;        /* cancels the pending read at disposal */
    td_task_i64 pending;
    uint32_t reading, finished;
    uint32_t cancelling;             /* inside td_cancel_source_cancel(cancel): do not free it */
} channel_all;

static void channel_all_finish(channel_all *a)
{
    if (a->finished)
        return;
    a->finished = 1;
    if (!a->cancelling) {            /* else freed once the cancel call has returned */
        td_cancel_source_free(a->cancel);
        a->cancel = NULL;
    }
    td_stream_base_disposed(&a->base);
}

static void channel_all_on_read(void *arg)
{
    channel_all *a = (channel_all *)arg;
    td_outcome o;
    int rc = td_task_i64_get(a->pending, &o);
    a->reading = 0;
    if (a->base.disposed) {
        channel_all_finish(a);
        return;
    }
    if (rc != TD_OK) {
        td_error e = { rc, "read_all: unusable read task", NULL };
        td_stream_base_settle(&a->base, TD_FAULTED, 0, &e);
    } else if (o.status == TD_SUCCEEDED) {
        a->base.current = o.value;
        td_stream_base_settle(&a->base, TD_SUCCEEDED, 1, NULL);
    } else if (o.status == TD_FAULTED && o.error.code == TD_ERR_CHANNEL_CLOSED) {
        td_stream_base_settle(&a->base, TD_SUCCEEDED, 0, NULL);      /* normal end */
    } else {
        td_stream_base_settle(&a->base, o.status, 0, &o.error);
    }
}

static td_task_i64 channel_all_move(td_stream *s)
{
    channel_all *a = (channel_all *)s;
    if (TD_UNLIKELY(a->base.disposed))
        return td_stream_canceled_move(a->cancel);
    if (TD_UNLIKELY(a->base.moving))
        return td_from_error_i64(TD_E_INVALID, "move_next while another is pending");
    td_task_i64 t = td_stream_base_begin_move(&a->base);
    a->reading = 1;
    a->pending = td_channel_read(a->ch, td_cancel_source_token(a->cancel));
    if (td_task_on_completed(a->pending.task, channel_all_on_read, a) != TD_OK)
        channel_all_on_read(a);
    return td_stream_base_move_result(&a->base, t);
}

static int64_t channel_all_current(td_stream *s) { return ((td_stream_base *)s)->current; }

static td_task channel_all_dispose(td_stream *s)
{
    channel_all *a = (channel_all *)s;
    if (a->base.disposed)
        return td_completed();
    a->base.disposed = 1;
    td_error e = td_cancel_error(a->cancel);
    td_stream_base_settle(&a->base, TD_CANCELED, 0, &e);           /* 1 */
    td_stream_base_add_owner(&a->base);
    /* The cancelled read finishes the disposal inside the cancel call; the source is
     * freed only after the cancel call has stopped touching it. */
    a->cancelling = 1;
    td_cancel_source_cancel(a->cancel);                             /* 2: the read ends */
    a->cancelling = 0;
    if (a->finished) {
        td_cancel_source_free(a->cancel);
        a->cancel = NULL;
    }
    if (!a->reading)
        channel_all_finish(a);                                      /* 5 */
    td_task r = td_stream_base_dispose_result(&a->base);
    td_stream_base_drop_owner(&a->base);
    return r;
}

static const td_stream_vtable channel_all_vt = { channel_all_move, channel_all_current, channel_all_dispose, "channel-read-all" };

td_stream *td_channel_read_all(td_channel *ch)
{
    channel_all *a = (channel_all *)td_stream_base_rent(&channel_all_pool, &channel_all_vt);
    if (a == NULL)
        return NULL;
    a->ch = ch;
    a->reading = 0;
    a->finished = 0;
    a->cancelling = 0;
    a->pending = td_from_result(0);
    a->cancel = td_cancel_source_new();
    if (a->cancel == NULL) {
        td_stream_base_drop_owner(&a->base);
        return NULL;
    }
    return &a->base.stream;
}

/* ---- runtime hooks --------------------------------------------------------------------------------- */

int td_channel_runtime_init_(uint32_t capacity)
{
    int rc = td_pool_init(&channel_op_pool, "channel-op", sizeof(channel_op), capacity);
    if (rc == TD_OK)
        rc = td_pool_init(&channel_all_pool, "channel-read-all", sizeof(channel_all), capacity);
    return rc;
}

void td_channel_runtime_shutdown_(void)
{
    td_pool_destroy(&channel_all_pool);
    td_pool_destroy(&channel_op_pool);
}

int td_channel_set_capacity_(uint32_t capacity)
{
    int rc = td_pool_set_capacity(&channel_op_pool, capacity);
    if (rc == TD_OK)
        rc = td_pool_set_capacity(&channel_all_pool, capacity);
    return rc;
}
