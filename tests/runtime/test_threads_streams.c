/* Cross-thread streams, channels and adapters (built with TSan too): an every-update
 * stream disposed from a worker while the loop runs (SMOKE 37), a channel between a worker
 * writer and a main-thread reader with cancellation races (SMOKE 39), a callback answered
 * and a future completed on pthreads (SMOKE 38). Bounded rounds; every round asserts. */
#include <tandem/tandem.h>
#include "td_test.h"
#include "td_test_runtime.h"
#include "td_test_wait.h"

/* Spin (bounded) until t is no longer pending; the loop keeps running if given. */
static int settle(td_task t, td_loop *loop)
{
    uint32_t turn = 0;
    for (long i = 0; i < 50000000L; i++) {
        if (status_of(t) != TD_PENDING)
            return 1;
        if (loop)
            td_loop_run_frame(loop);
        else
            td_test_wait_turn(&turn);
    }
    return 0;
}

/* ---- every-update disposed from a worker ------------------------------------------------- */

static volatile uint32_t cleanups;
static volatile uintptr_t cleanup_thread;
static void count_cleanup(void *arg)
{
    (void)arg;
    td_atomic_fetch_add_u32(&cleanups, 1);
    td_atomic_store_ptr((void *volatile *)&cleanup_thread, (void *)td_thread_self());
}

typedef struct { td_stream *s; volatile uint32_t go; td_task result; } disposer;
static void *dispose_on_worker(void *arg)
{
    disposer *d = (disposer *)arg;
    for (uint32_t turn = 0; !td_atomic_load_u32(&d->go);)
        td_test_wait_turn(&turn);
    d->result = td_stream_dispose(d->s);
    return NULL;
}

static void every_update_disposed_from_worker(void)
{
    td_loop_config cfg;
    memset(&cfg, 0, sizeof(cfg));
    td_loop *loop = td_loop_create(&cfg);
    td_outcome o;
    int canceled_rounds = 0;
    for (int round = 0; round < 200; round++) {
        td_atomic_store_u32(&cleanups, 0);
        disposer d;
        memset(&d, 0, sizeof(d));
        d.s = td_stream_every_update(loop, TD_TIMING_UPDATE, count_cleanup, NULL);
        /* two items on the main thread first */
        for (int i = 0; i < 2; i++) {
            td_task_i64 m = td_stream_move_next(d.s);
            TD_CHECK(settle(m.task, loop));
            TD_CHECK_EQ(TD_OK, td_task_i64_get(m, &o));
            TD_CHECK_EQ(1, o.value);
            TD_CHECK_EQ(td_loop_frame(loop), td_stream_current(d.s));
        }
        td_task_i64 m = td_stream_move_next(d.s);
        pthread_t th;
        TD_CHECK(pthread_create(&th, NULL, dispose_on_worker, &d) == 0);
        td_atomic_store_u32(&d.go, 1);
        if (round % 2 == 0) {
            /* the loop keeps running while the worker disposes: either outcome may win */
            for (int f = 0; f < 3; f++)
                td_loop_run_frame(loop);
        }
        pthread_join(th, NULL);
        TD_CHECK(d.result.source == NULL);           /* dispose completed on the worker */
        TD_CHECK(settle(m.task, NULL));
        TD_CHECK_EQ(TD_OK, td_task_i64_get(m, &o));
        TD_CHECK(o.status == TD_CANCELED || (o.status == TD_SUCCEEDED && o.value == 1));
        if (round % 2 == 1)                          /* no frame ran: it must be canceled */
            TD_CHECK_EQ(TD_CANCELED, o.status);
        canceled_rounds += o.status == TD_CANCELED;
        TD_CHECK_EQ(1, td_atomic_load_u32(&cleanups));
        TD_CHECK(td_atomic_load_ptr((void *volatile *)&cleanup_thread) != (void *)td_thread_self());
        td_loop_run_frame(loop);                     /* the item detaches */
        TD_CHECK_EQ(1, td_atomic_load_u32(&cleanups));
    }
    TD_CHECK(canceled_rounds >= 100);
    td_loop_destroy(loop);
}

/* ---- channel across threads ---------------------------------------------------------------- */

#define ITEMS 20000
static void *channel_writer(void *arg)
{
    td_channel *ch = (td_channel *)arg;
    for (int64_t i = 0; i < ITEMS; i++) {
        td_task w = td_channel_write(ch, i, td_cancel_none());
        for (uint32_t turn = 0; status_of(w) == TD_PENDING;)
            td_test_wait_turn(&turn);
        td_outcome o;
        if (td_task_get(w, &o) != TD_OK || o.status != TD_SUCCEEDED)
            return (void *)1;
    }
    td_channel_complete(ch, NULL);
    return NULL;
}

static void channel_worker_writer_main_reader(void)
{
    td_channel *ch = td_channel_create_bounded(8);
    pthread_t th;
    TD_CHECK(pthread_create(&th, NULL, channel_writer, ch) == 0);
    td_outcome o;
    int64_t expect = 0;
    for (;;) {
        td_task_i64 r = td_channel_read(ch, td_cancel_none());
        TD_CHECK(settle(r.task, NULL));
        TD_CHECK_EQ(TD_OK, td_task_i64_get(r, &o));
        if (o.status == TD_FAULTED) {
            TD_CHECK_EQ(TD_ERR_CHANNEL_CLOSED, o.error.code);
            break;
        }
        TD_CHECK_EQ(expect, o.value);               /* FIFO across threads */
        expect++;
    }
    void *rc;
    pthread_join(th, &rc);
    TD_CHECK(rc == NULL);
    TD_CHECK_EQ(ITEMS, expect);
    td_channel_free(ch);
}

typedef struct { td_cancel_source *cs; td_channel *ch; volatile uint32_t go; int64_t item; } race;
static void *cancel_or_write(void *arg)
{
    race *r = (race *)arg;
    for (uint32_t turn = 0; !td_atomic_load_u32(&r->go);)
        td_test_wait_turn(&turn);
    if (r->item & 1) {
        td_cancel_source_cancel(r->cs);
        td_channel_try_write(r->ch, r->item);
    } else {
        td_channel_try_write(r->ch, r->item);
        td_cancel_source_cancel(r->cs);
    }
    return NULL;
}

static void channel_reader_cancel_races_write(void)
{
    td_channel *ch = td_channel_create_unbounded();
    td_outcome o;
    int got_item = 0, got_cancel = 0;
    for (int64_t round = 0; round < 1000; round++) {
        race rc;
        rc.cs = td_cancel_source_new();
        rc.ch = ch;
        rc.go = 0;
        rc.item = round;
        td_task_i64 r = td_channel_read(ch, td_cancel_source_token(rc.cs));
        pthread_t th;
        TD_CHECK(pthread_create(&th, NULL, cancel_or_write, &rc) == 0);
        td_atomic_store_u32(&rc.go, 1);
        pthread_join(th, NULL);
        TD_CHECK_EQ(TD_OK, td_task_i64_get(r, &o));
        if (o.status == TD_SUCCEEDED) {
            TD_CHECK_EQ(round, o.value);
            got_item++;
        } else {
            /* cancelled: the item was not lost, it waits in the channel */
            TD_CHECK_EQ(TD_CANCELED, o.status);
            TD_CHECK(o.error.cancel == rc.cs);
            int64_t v;
            TD_CHECK_EQ(TD_OK, td_channel_try_read(ch, &v));
            TD_CHECK_EQ(round, v);
            got_cancel++;
        }
        int64_t v;
        TD_CHECK_EQ(TD_E_PENDING, td_channel_try_read(ch, &v));
        td_cancel_source_free(rc.cs);
    }
    TD_CHECK_EQ(1000, got_item + got_cancel);
    td_channel_free(ch);
}

/* ---- adapters answered on pthreads ---------------------------------------------------------- */

typedef struct { td_adapt_done_fn done; void *cb_arg; int status; int64_t value; } answer;
static void *answer_later(void *arg)
{
    answer *a = (answer *)arg;
    a->done(a->cb_arg, a->status, a->value);
    return NULL;
}
static pthread_t answer_thread;
static answer answer_box;
static void api_threaded(void *arg, td_adapt_done_fn done, void *cb_arg)
{
    answer *a = (answer *)arg;
    answer_box = *a;
    answer_box.done = done;
    answer_box.cb_arg = cb_arg;
    pthread_create(&answer_thread, NULL, answer_later, &answer_box);
}

static void callback_answered_on_pthread(void)
{
    td_outcome o;
    for (int round = 0; round < 300; round++) {
        answer a;
        memset(&a, 0, sizeof(a));
        a.status = round % 3 == 0 ? TD_ADAPT_OK : round % 3 == 1 ? TD_ERR_USER + 1 : TD_ADAPT_CANCELED;
        a.value = round;
        td_cancel_source *cs = td_cancel_source_new();
        td_task_i64 t = td_from_callback(api_threaded, &a, td_cancel_source_token(cs));
        int cancel_race = round % 10 == 9;
        if (cancel_race)
            td_cancel_source_cancel(cs);             /* races the worker's answer */
        pthread_join(answer_thread, NULL);
        if (t.task.source) {
            TD_CHECK(settle(t.task, NULL));
            TD_CHECK_EQ(TD_OK, td_task_i64_get(t, &o));
        } else {
            o.status = TD_SUCCEEDED;
            o.value = t.value;
        }
        if (cancel_race && o.status == TD_CANCELED && o.error.cancel == cs) {
            /* the cancellation won */
        } else if (a.status == TD_ADAPT_OK) {
            TD_CHECK_EQ(TD_SUCCEEDED, o.status);
            TD_CHECK_EQ(round, o.value);
        } else if (a.status == TD_ADAPT_CANCELED) {
            TD_CHECK_EQ(TD_CANCELED, o.status);
        } else {
            TD_CHECK_EQ(TD_FAULTED, o.status);
            TD_CHECK_EQ(TD_ERR_USER + 1, o.error.code);
        }
        td_cancel_source_free(cs);
    }
}

typedef struct { td_future *f; int64_t value; } computation;
static void *compute(void *arg)
{
    computation *c = (computation *)arg;
    td_future_set(c->f, c->value < 0 ? TD_ERR_USER + 3 : TD_ADAPT_OK, c->value * 3);
    return NULL;
}

static void future_completed_by_pthread(void)
{
    td_outcome o;
    for (int round = 0; round < 300; round++) {
        computation c;
        c.f = td_future_new();
        c.value = round % 4 == 3 ? -1 : round;
        td_task_i64 t = td_future_task(c.f, td_cancel_none());
        pthread_t th;
        TD_CHECK(pthread_create(&th, NULL, compute, &c) == 0);
        int status;
        int64_t value;
        td_future_wait(c.f, &status, &value);        /* the blocking view agrees */
        pthread_join(th, NULL);
        TD_CHECK(settle(t.task, NULL) || t.task.source == NULL);
        TD_CHECK_EQ(TD_OK, td_task_i64_get(t, &o));
        if (c.value < 0) {
            TD_CHECK_EQ(TD_FAULTED, o.status);
            TD_CHECK_EQ(TD_ERR_USER + 3, o.error.code);
            TD_CHECK_EQ(TD_ERR_USER + 3, status);
        } else {
            TD_CHECK_EQ(TD_SUCCEEDED, o.status);
            TD_CHECK_EQ(3 * round, o.value);
            TD_CHECK_EQ(3 * round, value);
        }
        td_future_free(c.f);
    }
}

int main(void)
{
    if (td_runtime_init(NULL) != TD_OK)
        return 2;
    TD_RUN(every_update_disposed_from_worker);
    TD_RUN(channel_worker_writer_main_reader);
    TD_RUN(channel_reader_cancel_races_write);
    TD_RUN(callback_answered_on_pthread);
    TD_RUN(future_completed_by_pthread);
    td_runtime_shutdown();
    return TD_TEST_SUMMARY();
}
