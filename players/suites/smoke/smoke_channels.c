/*
 * smoke_channels.c - bridges and channels: 38 (callback APIs and pthread-completed futures
 * bridged into tasks; a reusable completion source), 39 (bounded channel: FIFO,
 * back-pressure, cancellation, closure with a fault), 40 (read-all and reader disposal).
 * Cross-thread handoffs are joined before anything is checked: no sleeps, no races.
 */
#include "smoke.h"

/* Where and how often a task's continuation ran. */
typedef struct { uintptr_t thread; uint32_t hits; int64_t tag; } smoke_chan_seen;

static int64_t smoke_chan_order[16];
static int smoke_chan_order_len;

static void smoke_chan_note(void *arg)
{
    smoke_chan_seen *s = (smoke_chan_seen *)arg;
    s->thread = td_thread_self();
    s->hits++;
    if (smoke_chan_order_len < 16)
        smoke_chan_order[smoke_chan_order_len++] = s->tag;
}

/* ---- 38: adapters over callback APIs ------------------------------------------------------ */

/* A callback API: answers inline, or keeps its callback for someone else to answer. */
typedef struct {
    int inline_answer;
    int status;
    int64_t value;
    int calls;
    td_adapt_done_fn done;
    void *cb_arg;
    uintptr_t answered_on;
} smoke_chan_api;

static void smoke_chan_api_call(void *arg, td_adapt_done_fn done, void *cb_arg)
{
    smoke_chan_api *a = (smoke_chan_api *)arg;
    a->calls++;
    a->done = done;
    a->cb_arg = cb_arg;
    if (a->inline_answer)
        done(cb_arg, a->status, a->value);
}

static void *smoke_chan_answer_thread(void *arg)
{
    smoke_chan_api *a = (smoke_chan_api *)arg;
    a->answered_on = td_thread_self();
    a->done(a->cb_arg, a->status, a->value);
    return NULL;
}

/* A computation on a pthread that completes a future. */
typedef struct { td_future *f; int status; int64_t value; uintptr_t thread; } smoke_chan_job;

static void *smoke_chan_compute(void *arg)
{
    smoke_chan_job *j = (smoke_chan_job *)arg;
    j->thread = td_thread_self();
    td_future_set(j->f, j->status, j->value * 6);
    return NULL;
}

/* Awaits a task and returns its value + 1; faults and cancellations pass through. */
typedef struct { td_task_i64 in; int64_t v; } smoke_chan_relay_frame;

static void smoke_chan_relay_step(td_runner *r, smoke_chan_relay_frame *f)
{
    TD_BEGIN(r);
    TD_AWAIT_VALUE(r, f->in, f->v);
    TD_RETURN_VALUE(r, f->v + 1);
    TD_END(r);
}
TD_METHOD_DEFINE(smoke_chan_relay, smoke_chan_relay_frame, smoke_chan_relay_step);

static void *smoke_chan_set_source(void *arg)
{
    td_completion_source_set_result((td_completion_source *)arg, 380);
    return NULL;
}

void smoke_case_38(SMOKE_ARGS)
{
    td_outcome o;
    pthread_t th;
    static const int statuses[3] = { TD_ADAPT_OK, TD_ERR_USER + 38, TD_ADAPT_CANCELED };
    static const td_status expected[3] = { TD_SUCCEEDED, TD_FAULTED, TD_CANCELED };
    smoke_chan_api api;
    /* inline answers: success is a completed value, fault and cancel are outcomes */
    for (int k = 0; k < 3; k++) {
        memset(&api, 0, sizeof(api));
        api.inline_answer = 1;
        api.status = statuses[k];
        api.value = 31;
        td_task_i64 t = td_from_callback(smoke_chan_api_call, &api, td_cancel_none());
        SMOKE_EQ(1, api.calls);
        if (k == 0) {
            SMOKE_TRUE(t.task.source == NULL);
            SMOKE_EQ(31, t.value);
            continue;
        }
        SMOKE_EQ(TD_OK, td_task_i64_get(t, &o));
        SMOKE_EQ(expected[k], o.status);
        if (k == 1)
            SMOKE_EQ(TD_ERR_USER + 38, o.error.code);
    }
    /* answered later on a pthread: the task completes there, with the actual outcome */
    for (int k = 0; k < 3; k++) {
        memset(&api, 0, sizeof(api));
        api.status = statuses[k];
        api.value = 40 + k;
        td_task_i64 t = td_from_callback(smoke_chan_api_call, &api, td_cancel_none());
        SMOKE_EQ(TD_PENDING, smoke_status(t.task));
        smoke_chan_seen seen;
        memset(&seen, 0, sizeof(seen));
        SMOKE_EQ(TD_OK, td_task_on_completed(t.task, smoke_chan_note, &seen));
        SMOKE_TRUE(smoke_thread_start(&th, smoke_chan_answer_thread, &api));
        smoke_thread_join(th);
        SMOKE_EQ(1, seen.hits);
        SMOKE_TRUE(seen.thread == api.answered_on);
        SMOKE_TRUE(seen.thread != td_main_thread_id());
        SMOKE_EQ(TD_OK, td_task_i64_get(t, &o));
        SMOKE_EQ(expected[k], o.status);
        if (k == 0)
            SMOKE_EQ(40, o.value);
        if (k == 1)
            SMOKE_EQ(TD_ERR_USER + 38, o.error.code);
    }
    /* a token cancels a pending bridge with that token; the late answer is discarded;
     * a token already cancelled does not start the API at all */
    td_cancel_source *cs = td_cancel_source_new();
    memset(&api, 0, sizeof(api));
    td_task_i64 t = td_from_callback(smoke_chan_api_call, &api, td_cancel_source_token(cs));
    td_cancel_source_cancel(cs);
    SMOKE_EQ(TD_OK, td_task_i64_get(t, &o));
    SMOKE_EQ(TD_CANCELED, o.status);
    SMOKE_TRUE(o.error.cancel == cs);
    api.status = TD_ADAPT_OK;
    SMOKE_TRUE(smoke_thread_start(&th, smoke_chan_answer_thread, &api));
    smoke_thread_join(th);
    t = td_from_callback(smoke_chan_api_call, &api, td_cancel_source_token(cs));
    SMOKE_EQ(1, api.calls);
    SMOKE_EQ(TD_OK, td_task_i64_get(t, &o));
    SMOKE_EQ(TD_CANCELED, o.status);
    SMOKE_TRUE(o.error.cancel == cs);
    td_cancel_source_free(cs);

    /* futures completed by a pthread: the bridged task and the blocking view agree */
    for (int k = 0; k < 3; k++) {
        smoke_chan_job job = { td_future_new(), statuses[k], 7, 0 };
        t = td_future_task(job.f, td_cancel_none());
        SMOKE_EQ(TD_PENDING, smoke_status(t.task));
        smoke_chan_seen seen;
        memset(&seen, 0, sizeof(seen));
        SMOKE_EQ(TD_OK, td_task_on_completed(t.task, smoke_chan_note, &seen));
        SMOKE_TRUE(smoke_thread_start(&th, smoke_chan_compute, &job));
        int status = -99;
        int64_t value = -1;
        td_future_wait(job.f, &status, &value);
        smoke_thread_join(th);
        SMOKE_EQ(statuses[k], status);
        SMOKE_EQ(42, value);
        SMOKE_EQ(1, seen.hits);
        SMOKE_TRUE(seen.thread == job.thread);
        SMOKE_EQ(TD_OK, td_task_i64_get(t, &o));
        SMOKE_EQ(expected[k], o.status);
        if (k == 0)
            SMOKE_EQ(42, o.value);
        if (k == 1)
            SMOKE_EQ(TD_ERR_USER + 38, o.error.code);
        SMOKE_EQ(TD_DONE, td_future_set(job.f, TD_ADAPT_OK, 0));      /* set once */
        td_future_free(job.f);
    }
    /* a cancelled future bridge: cancelled with the token; the pthread's answer is late */
    cs = td_cancel_source_new();
    smoke_chan_job late = { td_future_new(), TD_ADAPT_OK, 1, 0 };
    t = td_future_task(late.f, td_cancel_source_token(cs));
    td_cancel_source_cancel(cs);
    SMOKE_EQ(TD_OK, td_task_i64_get(t, &o));
    SMOKE_EQ(TD_CANCELED, o.status);
    SMOKE_TRUE(o.error.cancel == cs);
    SMOKE_TRUE(smoke_thread_start(&th, smoke_chan_compute, &late));
    smoke_thread_join(th);
    td_future_free(late.f);
    td_cancel_source_free(cs);

    /* a reusable completion source across rounds: each round its own outcome, the old
     * round's task stale, the first completer wins; odd rounds complete on a pthread */
    td_completion_source *src = td_completion_source_new();
    td_cancel_source *stop = td_cancel_source_new();
    td_task_i64 previous = td_from_result(0);
    for (int round = 0; round < 6; round++) {
        if (round)
            td_completion_source_reset(src);
        td_task_i64 in = td_completion_source_task_i64(src);
        if (round)
            SMOKE_EQ(TD_E_STALE, td_task_i64_get(previous, &o));
        td_runner *r = td_runner_rent(&smoke_chan_relay_method);
        TD_FRAME(r, smoke_chan_relay_frame)->in = in;
        td_task_i64 relay = td_runner_start_i64(r);
        SMOKE_EQ(TD_PENDING, smoke_status(relay.task));
        if (round % 2) {
            SMOKE_TRUE(smoke_thread_start(&th, smoke_chan_set_source, src));
            smoke_thread_join(th);
        } else if (round == 2) {
            td_completion_source_set_error(src, TD_ERR_USER + round, "round fault");
        } else if (round == 4) {
            td_completion_source_set_canceled(src, stop);
        } else {
            td_completion_source_set_result(src, round);
        }
        SMOKE_EQ(TD_DONE, td_completion_source_set_result(src, -1));
        SMOKE_EQ(TD_OK, td_task_i64_get(relay, &o));
        if (round % 2) {
            SMOKE_EQ(TD_SUCCEEDED, o.status);
            SMOKE_EQ(381, o.value);
        } else if (round == 2) {
            SMOKE_EQ(TD_FAULTED, o.status);
            SMOKE_EQ(TD_ERR_USER + 2, o.error.code);
        } else if (round == 4) {
            SMOKE_EQ(TD_CANCELED, o.status);
            SMOKE_TRUE(o.error.cancel == stop);
        } else {
            SMOKE_EQ(TD_SUCCEEDED, o.status);
            SMOKE_EQ(1, o.value);
        }
        previous = in;
    }
    td_cancel_source_free(stop);
    td_completion_source_free(src);
}

/* ---- 39: bounded channel --------------------------------------------------------------------- */

typedef struct { td_channel *ch; int64_t item; uintptr_t thread; } smoke_chan_writer;

static void *smoke_chan_write_thread(void *arg)
{
    smoke_chan_writer *w = (smoke_chan_writer *)arg;
    w->thread = td_thread_self();
    td_channel_try_write(w->ch, w->item);
    return NULL;
}

void smoke_case_39(SMOKE_ARGS)
{
    td_outcome o;
    int64_t v;
    td_channel *ch = td_channel_create_bounded(3);
    /* room for three: those writes complete at once; then back-pressure */
    for (int64_t i = 1; i <= 3; i++)
        SMOKE_TRUE(td_channel_write(ch, i, td_cancel_none()).source == NULL);
    SMOKE_EQ(TD_E_PENDING, td_channel_try_write(ch, 99));
    td_task w4 = td_channel_write(ch, 4, td_cancel_none());
    td_task w5 = td_channel_write(ch, 5, td_cancel_none());
    SMOKE_EQ(TD_PENDING, smoke_status(w4));
    SMOKE_EQ(TD_PENDING, smoke_status(w5));
    smoke_chan_seen s4 = { 0, 0, 4 }, s5 = { 0, 0, 5 };
    smoke_chan_order_len = 0;
    SMOKE_EQ(TD_OK, td_task_on_completed(w4, smoke_chan_note, &s4));
    SMOKE_EQ(TD_OK, td_task_on_completed(w5, smoke_chan_note, &s5));
    /* each read admits the first waiting writer, in order */
    td_task_i64 r = td_channel_read(ch, td_cancel_none());
    SMOKE_TRUE(r.task.source == NULL);
    SMOKE_EQ(1, r.value);
    SMOKE_EQ(1, smoke_chan_order_len);
    SMOKE_EQ(TD_PENDING, smoke_status(w5));
    SMOKE_EQ(TD_OK, td_channel_try_read(ch, &v));
    SMOKE_EQ(2, v);
    SMOKE_EQ(2, smoke_chan_order_len);
    SMOKE_EQ(4, smoke_chan_order[0]);
    SMOKE_EQ(5, smoke_chan_order[1]);
    td_task_forget_result(w4);
    td_task_forget_result(w5);
    for (int64_t i = 3; i <= 5; i++) {               /* FIFO; 99 was never taken */
        SMOKE_EQ(TD_OK, td_channel_try_read(ch, &v));
        SMOKE_EQ(i, v);
    }
    SMOKE_EQ(TD_E_PENDING, td_channel_try_read(ch, &v));

    /* a waiting writer cancelled by its token leaves nothing behind */
    td_cancel_source *cs = td_cancel_source_new();
    for (int64_t i = 10; i <= 12; i++)
        SMOKE_EQ(TD_OK, td_channel_try_write(ch, i));
    td_task wa = td_channel_write(ch, 13, td_cancel_source_token(cs));
    td_task wb = td_channel_write(ch, 14, td_cancel_none());
    td_cancel_source_cancel(cs);
    SMOKE_EQ(TD_OK, td_task_get(wa, &o));
    SMOKE_EQ(TD_CANCELED, o.status);
    SMOKE_TRUE(o.error.cancel == cs);
    SMOKE_EQ(TD_PENDING, smoke_status(wb));
    /* a write with a token already cancelled does not wait either */
    SMOKE_EQ(TD_OK, td_task_get(td_channel_write(ch, 15, td_cancel_source_token(cs)), &o));
    SMOKE_EQ(TD_CANCELED, o.status);
    static const int64_t kept[] = { 10, 11, 12, 14 };
    for (int i = 0; i < 4; i++) {
        SMOKE_EQ(TD_OK, td_channel_try_read(ch, &v));
        SMOKE_EQ(kept[i], v);
    }
    SMOKE_EQ(TD_OK, td_task_get(wb, &o));
    SMOKE_EQ(TD_SUCCEEDED, o.status);
    td_cancel_source_free(cs);

    /* a waiting reader cancelled by its token; the next item goes to the next reader */
    cs = td_cancel_source_new();
    td_task_i64 ra = td_channel_read(ch, td_cancel_source_token(cs));
    td_task_i64 rb = td_channel_read(ch, td_cancel_none());
    td_cancel_source_cancel(cs);
    SMOKE_EQ(TD_OK, td_task_i64_get(ra, &o));
    SMOKE_EQ(TD_CANCELED, o.status);
    SMOKE_TRUE(o.error.cancel == cs);
    SMOKE_EQ(TD_PENDING, smoke_status(rb.task));
    /* ... written from a pthread: the reader completes on that thread */
    smoke_chan_seen sb = { 0, 0, 20 };
    SMOKE_EQ(TD_OK, td_task_on_completed(rb.task, smoke_chan_note, &sb));
    smoke_chan_writer wr = { ch, 20, 0 };
    pthread_t th;
    SMOKE_TRUE(smoke_thread_start(&th, smoke_chan_write_thread, &wr));
    smoke_thread_join(th);
    SMOKE_EQ(1, sb.hits);
    SMOKE_TRUE(sb.thread == wr.thread);
    SMOKE_EQ(TD_OK, td_task_i64_get(rb, &o));
    SMOKE_EQ(20, o.value);
    SMOKE_EQ(TD_E_PENDING, td_channel_try_read(ch, &v));
    td_cancel_source_free(cs);

    /* closure with a fault: buffered items are still read, then the fault; a waiting
     * writer and later writes fault CLOSED */
    static const char why[] = "producer broke";
    td_error fault = { TD_ERR_USER + 39, why, NULL };
    for (int64_t i = 30; i <= 32; i++)
        SMOKE_EQ(TD_OK, td_channel_try_write(ch, i));
    td_task wc = td_channel_write(ch, 33, td_cancel_none());
    SMOKE_EQ(TD_OK, td_channel_complete(ch, &fault));
    SMOKE_EQ(TD_DONE, td_channel_complete(ch, NULL));
    SMOKE_EQ(TD_OK, td_task_get(wc, &o));
    SMOKE_EQ(TD_FAULTED, o.status);
    SMOKE_EQ(TD_ERR_CHANNEL_CLOSED, o.error.code);
    SMOKE_EQ(TD_E_STALE, td_channel_try_write(ch, 34));
    SMOKE_EQ(TD_OK, td_task_get(td_channel_write(ch, 35, td_cancel_none()), &o));
    SMOKE_EQ(TD_ERR_CHANNEL_CLOSED, o.error.code);
    for (int64_t i = 30; i <= 32; i++) {
        td_task_i64 w = td_channel_wait_to_read(ch, td_cancel_none());
        SMOKE_TRUE(w.task.source == NULL && w.value == 1);
        r = td_channel_read(ch, td_cancel_none());
        SMOKE_TRUE(r.task.source == NULL);
        SMOKE_EQ(i, r.value);
    }
    SMOKE_EQ(TD_OK, td_task_i64_get(td_channel_read(ch, td_cancel_none()), &o));
    SMOKE_EQ(TD_FAULTED, o.status);
    SMOKE_EQ(TD_ERR_USER + 39, o.error.code);
    SMOKE_TRUE(o.error.message == why);
    SMOKE_EQ(TD_OK, td_task_i64_get(td_channel_wait_to_read(ch, td_cancel_none()), &o));
    SMOKE_EQ(TD_FAULTED, o.status);
    SMOKE_EQ(TD_ERR_USER + 39, o.error.code);
    SMOKE_EQ(TD_E_STALE, td_channel_try_read(ch, &v));
    td_channel_free(ch);

    /* readers waiting on an empty channel get the fault when it closes */
    ch = td_channel_create_bounded(1);
    ra = td_channel_read(ch, td_cancel_none());
    td_task_i64 wt = td_channel_wait_to_read(ch, td_cancel_none());
    SMOKE_EQ(TD_OK, td_channel_complete(ch, &fault));
    SMOKE_EQ(TD_OK, td_task_i64_get(ra, &o));
    SMOKE_EQ(TD_FAULTED, o.status);
    SMOKE_TRUE(o.error.message == why);
    SMOKE_EQ(TD_OK, td_task_i64_get(wt, &o));
    SMOKE_EQ(TD_ERR_USER + 39, o.error.code);
    td_channel_free(ch);
}

/* ---- 40: channel read-all and disposal -------------------------------------------------------- */

/* What a drain saw (caller storage: a runner's frame is cleared when its task is consumed). */
typedef struct {
    int64_t n;
    int64_t items[16];
    td_outcome end;
    uintptr_t ended_on;
} smoke_chan_drained;

/* Iterates a stream to its end (or fault), disposes it, returns the count. */
typedef struct { td_stream *s; smoke_chan_drained *out; } smoke_chan_drain_frame;

static void smoke_chan_drain_step(td_runner *r, smoke_chan_drain_frame *f)
{
    TD_BEGIN(r);
    for (;;) {
        TD_AWAIT_OUTCOME(r, td_stream_move_next(f->s));
        if (r->last.status != TD_SUCCEEDED || r->last.value == 0)
            break;
        if (f->out->n < 16)
            f->out->items[f->out->n] = td_stream_current(f->s);
        f->out->n++;
    }
    f->out->end = r->last;
    f->out->ended_on = td_thread_self();
    TD_AWAIT(r, td_stream_dispose(f->s));
    TD_RETURN_VALUE(r, f->out->n);
    TD_END(r);
}
TD_METHOD_DEFINE(smoke_chan_drain, smoke_chan_drain_frame, smoke_chan_drain_step);

static td_task_i64 smoke_chan_drain(td_stream *s, smoke_chan_drained *out)
{
    td_runner *r = td_runner_rent(&smoke_chan_drain_method);
    memset(out, 0, sizeof(*out));
    TD_FRAME(r, smoke_chan_drain_frame)->s = s;
    TD_FRAME(r, smoke_chan_drain_frame)->out = out;
    return td_runner_start_i64(r);
}

typedef struct { td_channel *ch; uintptr_t thread; } smoke_chan_closer;

static void *smoke_chan_close_thread(void *arg)
{
    smoke_chan_closer *c = (smoke_chan_closer *)arg;
    c->thread = td_thread_self();
    td_channel_complete(c->ch, NULL);
    return NULL;
}

void smoke_case_40(SMOKE_ARGS)
{
    td_outcome o;
    int64_t v;
    smoke_chan_drained seen;
    smoke_chan_drained *f = &seen;
    /* buffered items, writers held back, and one item written while the reader waits;
     * read-all delivers all of them in order and ends when the channel completes */
    td_channel *ch = td_channel_create_bounded(4);
    td_task held[3];
    for (int64_t i = 1; i <= 4; i++)
        SMOKE_EQ(TD_OK, td_channel_try_write(ch, i));
    for (int i = 0; i < 3; i++)
        held[i] = td_channel_write(ch, 5 + i, td_cancel_none());
    td_task_i64 t = smoke_chan_drain(td_channel_read_all(ch), f);
    SMOKE_EQ(TD_PENDING, smoke_status(t.task));
    SMOKE_EQ(7, f->n);                                /* 1..7 read synchronously */
    for (int i = 0; i < 3; i++) {
        SMOKE_EQ(TD_OK, td_task_get(held[i], &o));
        SMOKE_EQ(TD_SUCCEEDED, o.status);
    }
    SMOKE_EQ(TD_OK, td_channel_try_write(ch, 8));     /* handed to the waiting reader */
    SMOKE_EQ(8, f->n);
    SMOKE_EQ(TD_PENDING, smoke_status(t.task));
    /* completed from a pthread: the stream ends there, normally */
    smoke_chan_closer closer = { ch, 0 };
    pthread_t th;
    SMOKE_TRUE(smoke_thread_start(&th, smoke_chan_close_thread, &closer));
    smoke_thread_join(th);
    SMOKE_EQ(TD_OK, td_task_i64_get(t, &o));
    SMOKE_EQ(TD_SUCCEEDED, o.status);
    SMOKE_EQ(8, o.value);
    SMOKE_EQ(TD_SUCCEEDED, f->end.status);
    SMOKE_EQ(0, f->end.value);
    SMOKE_TRUE(f->ended_on == closer.thread);
    for (int i = 0; i < 8; i++)
        SMOKE_EQ(i + 1, f->items[i]);
    td_channel_free(ch);

    /* a fault ends read-all with that fault, after the buffered items */
    static const char why[] = "writer failed";
    td_error fault = { TD_ERR_USER + 40, why, NULL };
    ch = td_channel_create_unbounded();
    td_channel_try_write(ch, 70);
    td_channel_try_write(ch, 71);
    td_channel_complete(ch, &fault);
    t = smoke_chan_drain(td_channel_read_all(ch), f);
    SMOKE_TRUE(t.task.source == NULL);
    SMOKE_EQ(2, t.value);
    SMOKE_EQ(71, f->items[1]);
    SMOKE_EQ(TD_FAULTED, f->end.status);
    SMOKE_EQ(TD_ERR_USER + 40, f->end.error.code);
    SMOKE_TRUE(f->end.error.message == why);
    td_channel_free(ch);

    /* disposing the read-all stream settles its pending move; no item is lost */
    ch = td_channel_create_unbounded();
    td_stream *s = td_channel_read_all(ch);
    td_task_i64 m = td_stream_move_next(s);
    SMOKE_EQ(TD_PENDING, smoke_status(m.task));
    SMOKE_TRUE(td_stream_dispose(s).source == NULL);
    SMOKE_EQ(TD_OK, td_task_i64_get(m, &o));
    SMOKE_EQ(TD_CANCELED, o.status);
    SMOKE_EQ(TD_OK, td_channel_try_write(ch, 90));
    SMOKE_EQ(TD_OK, td_channel_try_read(ch, &v));
    SMOKE_EQ(90, v);

    /* disposing the reader settles every pending read: a read-all move, a read and a
     * wait-to-read; buffered items are dropped and writers refused */
    s = td_channel_read_all(ch);
    m = td_stream_move_next(s);
    td_task_i64 rd = td_channel_read(ch, td_cancel_none());
    td_task_i64 wt = td_channel_wait_to_read(ch, td_cancel_none());
    SMOKE_EQ(TD_PENDING, smoke_status(m.task));
    SMOKE_EQ(TD_PENDING, smoke_status(rd.task));
    SMOKE_EQ(TD_PENDING, smoke_status(wt.task));
    td_channel_dispose_reader(ch);
    SMOKE_EQ(TD_OK, td_task_i64_get(m, &o));
    SMOKE_EQ(TD_CANCELED, o.status);
    SMOKE_EQ(TD_OK, td_task_i64_get(rd, &o));
    SMOKE_EQ(TD_CANCELED, o.status);
    SMOKE_EQ(TD_OK, td_task_i64_get(wt, &o));
    SMOKE_EQ(TD_CANCELED, o.status);
    SMOKE_TRUE(td_stream_dispose(s).source == NULL);
    SMOKE_EQ(TD_E_STALE, td_channel_try_write(ch, 91));
    SMOKE_EQ(TD_OK, td_task_i64_get(td_channel_read(ch, td_cancel_none()), &o));
    SMOKE_EQ(TD_CANCELED, o.status);
    td_channel_free(ch);

    ch = td_channel_create_bounded(1);
    SMOKE_EQ(TD_OK, td_channel_try_write(ch, 1));
    td_task wfull = td_channel_write(ch, 2, td_cancel_none());
    td_channel_dispose_reader(ch);
    SMOKE_EQ(TD_OK, td_task_get(wfull, &o));
    SMOKE_EQ(TD_FAULTED, o.status);
    SMOKE_EQ(TD_ERR_CHANNEL_CLOSED, o.error.code);
    SMOKE_EQ(TD_E_STALE, td_channel_try_read(ch, &v));   /* the buffered item was dropped */
    td_channel_free(ch);
}
