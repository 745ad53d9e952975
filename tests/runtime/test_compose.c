/* Combinators and cancellation: when_all, when_any, race, timeout, tokens, suppression. */
#include <tandem/tandem.h>
#include "td_test.h"
#include "td_test_runtime.h"

static td_loop *fresh_loop(void) { return fresh_loop_with(NULL, 1); }

static void when_all_collects(void)
{
    td_completion_source *a = td_completion_source_new(), *b = td_completion_source_new();
    td_task_i64 in[3] = { td_completion_source_task_i64(a), td_from_result(5), td_completion_source_task_i64(b) };
    int64_t results[3] = { 0, 0, 0 };
    td_task all = td_when_all_i64(in, 3, results);
    td_status st;
    td_completion_source_set_result(b, 9);
    TD_CHECK_EQ(TD_OK, td_task_status(all, &st));
    TD_CHECK_EQ(TD_PENDING, st);
    td_completion_source_set_result(a, 4);
    td_outcome o;
    TD_CHECK_EQ(TD_OK, td_task_get(all, &o));
    TD_CHECK_EQ(TD_SUCCEEDED, o.status);
    TD_CHECK_EQ(4, results[0]);
    TD_CHECK_EQ(5, results[1]);
    TD_CHECK_EQ(9, results[2]);
    /* a fault wins over a cancellation */
    td_completion_source_reset(a);
    td_completion_source_reset(b);
    td_task u[2] = { td_completion_source_task(a), td_completion_source_task(b) };
    all = td_when_all(u, 2);
    td_completion_source_set_canceled(a, NULL);
    td_completion_source_set_error(b, TD_ERR_USER, "b broke");
    TD_CHECK_EQ(TD_OK, td_task_get(all, &o));
    TD_CHECK_EQ(TD_FAULTED, o.status);
    TD_CHECK_EQ(TD_ERR_USER, o.error.code);
    td_completion_source_free(a);
    td_completion_source_free(b);
}

static void when_any_winner_and_late_losers(void)
{
    td_auto_source *a = td_auto_source_rent(), *b = td_auto_source_rent();
    td_task_i64 in[2] = { td_auto_source_task_i64(a), td_auto_source_task_i64(b) };
    int winner = -1;
    td_task_i64 any = td_when_any_i64(in, 2, &winner);
    td_auto_source_set_result(b, in[1].task.token, 42);
    td_outcome o;
    TD_CHECK_EQ(TD_OK, td_task_i64_get(any, &o));
    TD_CHECK_EQ(1, winner);
    TD_CHECK_EQ(42, o.value);
    /* The late loser faults: it is consumed by the combinator (its source recycled). */
    td_auto_source_set_error(a, in[0].task.token, TD_ERR_USER, "late");
    td_status st;
    TD_CHECK_EQ(TD_E_STALE, td_task_status(in[0].task, &st));
    TD_CHECK_EQ(TD_E_STALE, td_task_status(in[1].task, &st));
    /* Untyped: the value is the winner's index; an already completed input wins at once. */
    td_task u[2] = { td_completed(), td_next_frame(TD_TIMING_UPDATE) };
    td_task_i64 any2 = td_when_any(u, 2);
    TD_CHECK_EQ(TD_OK, td_task_i64_get(any2, &o));
    TD_CHECK_EQ(0, o.value);
}

static void race_cancels_losers(void)
{
    td_loop *loop = fresh_loop();
    td_cancel_source *losers = td_cancel_source_new();
    td_wait_options o = td_wait_defaults();
    o.cancel = td_cancel_source_token(losers);
    o.cancel_immediately = 1;
    td_task in[2] = { td_delay_frame_ex(100, &o), td_next_frame(TD_TIMING_UPDATE) };
    td_task_i64 race = td_race(in, 2, losers);
    td_loop_run_frame(loop);
    td_outcome out;
    TD_CHECK_EQ(TD_OK, td_task_i64_get(race, &out));
    TD_CHECK_EQ(1, out.value);
    TD_CHECK(td_cancel_is_requested(td_cancel_source_token(losers)));
    td_status st;
    TD_CHECK_EQ(TD_E_STALE, td_task_status(in[0], &st));   /* the loser was consumed */
    td_loop_destroy(loop);
    td_cancel_source_free(losers);
}

static int64_t fake_now;
static int64_t fake_clock(void *arg) { (void)arg; return fake_now; }

static void timeouts_four_shapes(void)
{
    fake_now = 0;
    td_loop *loop = fresh_loop_with(fake_clock, 0);
    td_completion_source *gate = td_completion_source_new();
    td_outcome o;

    td_task t1 = td_timeout(td_completion_source_task(gate), 100, TD_CLOCK_UNSCALED, 1, NULL);
    fake_now = 150;
    td_loop_run_frame(loop);
    TD_CHECK_EQ(TD_OK, td_task_get(t1, &o));
    TD_CHECK_EQ(TD_FAULTED, o.status);
    TD_CHECK_EQ(TD_ERR_TIMEOUT, o.error.code);
    td_completion_source_set_result(gate, 1);      /* the timed-out input still finishes */

    td_completion_source_reset(gate);
    td_task_i64 t2 = td_timeout_i64(td_completion_source_task_i64(gate), 100, TD_CLOCK_UNSCALED, 0, NULL);
    fake_now = 300;
    td_loop_run_frame(loop);
    TD_CHECK_EQ(TD_OK, td_task_i64_get(t2, &o));
    TD_CHECK(td_outcome_timed_out(&o));
    td_completion_source_set_result(gate, 1);

    /* The producer's own fault keeps its identity through a timeout. */
    td_completion_source_reset(gate);
    td_task_i64 t3 = td_timeout_i64(td_completion_source_task_i64(gate), 100, TD_CLOCK_UNSCALED, 1, NULL);
    td_completion_source_set_error(gate, TD_ERR_USER + 3, "producer");
    TD_CHECK_EQ(TD_OK, td_task_i64_get(t3, &o));
    TD_CHECK_EQ(TD_FAULTED, o.status);
    TD_CHECK_EQ(TD_ERR_USER + 3, o.error.code);

    td_completion_source_reset(gate);
    td_task_i64 t4 = td_timeout_i64(td_completion_source_task_i64(gate), 100, TD_CLOCK_UNSCALED, 0, NULL);
    td_completion_source_set_result(gate, 77);
    TD_CHECK_EQ(TD_OK, td_task_i64_get(t4, &o));
    TD_CHECK_EQ(TD_SUCCEEDED, o.status);
    TD_CHECK(!td_outcome_timed_out(&o));
    TD_CHECK_EQ(77, o.value);
    /* let the losing delays finish and be consumed before the loop goes */
    fake_now = 1000;
    td_loop_run_frame(loop);
    td_loop_destroy(loop);
    td_completion_source_free(gate);
}

static int order[8], order_len;
static void record(void *arg) { order[order_len++] = (int)(intptr_t)arg; }

static void tokens_registrations_and_links(void)
{
    td_cancel_source *cs = td_cancel_source_new();
    order_len = 0;
    td_cancel_register(td_cancel_source_token(cs), record, (void *)1);
    td_cancel_registration r2 = td_cancel_register(td_cancel_source_token(cs), record, (void *)2);
    td_cancel_register(td_cancel_source_token(cs), record, (void *)3);
    td_cancel_unregister(r2);
    td_cancel_token tk = td_cancel_source_token(cs);
    td_cancel_source *linked = td_cancel_source_linked(&tk, 1);
    td_cancel_register(td_cancel_source_token(linked), record, (void *)4);
    TD_CHECK_EQ(1, td_cancel_source_cancel(cs));
    TD_CHECK_EQ(0, td_cancel_source_cancel(cs));
    /* newest first: the link (registered last) fires 4, then 3, then 1 */
    TD_CHECK_EQ(3, order_len);
    TD_CHECK_EQ(4, order[0]);
    TD_CHECK_EQ(3, order[1]);
    TD_CHECK_EQ(1, order[2]);
    TD_CHECK(td_cancel_is_requested(td_cancel_source_token(linked)));
    /* registering on a cancelled token runs at once */
    td_cancel_register(td_cancel_source_token(cs), record, (void *)5);
    TD_CHECK_EQ(5, order[3]);
    td_cancel_source_free(linked);
    td_cancel_source_free(cs);
}

static void cancel_after_and_wait_cancellation(void)
{
    td_loop *loop = fresh_loop();
    td_cancel_source *cs = td_cancel_source_new();
    td_cancel_source_cancel_after(cs, 0, TD_CLOCK_UNSCALED, loop);
    td_wait_options o = td_wait_defaults();
    o.cancel = td_cancel_source_token(cs);
    td_task w = td_delay_frame_ex(50, &o);
    td_loop_run_frame(loop);
    td_loop_run_frame(loop);
    TD_CHECK(td_cancel_is_requested(o.cancel));
    td_outcome out;
    TD_CHECK_EQ(TD_OK, td_task_get(w, &out));
    TD_CHECK_EQ(TD_CANCELED, out.status);
    TD_CHECK(out.error.cancel == cs);
    td_cancel_source_free(cs);

    /* cancel_immediately completes on the cancelling call, not at the next frame */
    cs = td_cancel_source_new();
    o.cancel = td_cancel_source_token(cs);
    o.cancel_immediately = 1;
    w = td_delay_frame_ex(50, &o);
    td_cancel_source_cancel(cs);
    td_status st;
    TD_CHECK_EQ(TD_OK, td_task_status(w, &st));
    TD_CHECK_EQ(TD_CANCELED, st);
    td_task_forget_result(w);
    td_loop_run_frame(loop);
    td_cancel_source_free(cs);
    td_loop_destroy(loop);
}

static void attach_and_suppress(void)
{
    td_cancel_source *cs = td_cancel_source_new();
    td_completion_source *gate = td_completion_source_new();
    td_outcome o;
    td_task_i64 t = td_attach_cancel_i64(td_completion_source_task_i64(gate), td_cancel_source_token(cs));
    td_cancel_source_cancel(cs);
    TD_CHECK_EQ(TD_OK, td_task_i64_get(t, &o));
    TD_CHECK_EQ(TD_CANCELED, o.status);
    TD_CHECK(o.error.cancel == cs);
    td_completion_source_set_result(gate, 3);        /* the operation still finishes */
    /* a producer that already completed beats a pre-cancelled token */
    td_completion_source_reset(gate);
    td_completion_source_set_result(gate, 8);
    t = td_attach_cancel_i64(td_completion_source_task_i64(gate), td_cancel_source_token(cs));
    TD_CHECK_EQ(TD_OK, td_task_i64_get(t, &o));
    TD_CHECK_EQ(TD_SUCCEEDED, o.status);
    TD_CHECK_EQ(8, o.value);
    /* suppression: canceled becomes a flagged success naming the token */
    td_completion_source_reset(gate);
    t = td_suppress_cancel_i64(td_completion_source_task_i64(gate));
    td_completion_source_set_canceled(gate, cs);
    TD_CHECK_EQ(TD_OK, td_task_i64_get(t, &o));
    TD_CHECK(td_outcome_canceled_flag(&o));
    TD_CHECK(o.error.cancel == cs);
    /* a fault whose record is a cancel stays faulted with the same record */
    td_completion_source_reset(gate);
    t = td_suppress_cancel_i64(td_completion_source_task_i64(gate));
    td_completion_source_set_error(gate, TD_ERR_CANCELED, "cancel record as fault");
    TD_CHECK_EQ(TD_OK, td_task_i64_get(t, &o));
    TD_CHECK_EQ(TD_FAULTED, o.status);
    TD_CHECK_EQ(TD_ERR_CANCELED, o.error.code);
    td_completion_source_free(gate);
    td_cancel_source_free(cs);
}

/* A wait unregisters its cancel registration lazily (when its loop item detaches), which
 * may be after the token's source was freed. With no pooling (capacity 0) the source's
 * memory is really gone: the sanitizer build catches any touch of it. */
static void lazy_unregister_after_source_freed(void)
{
    td_loop *loop = fresh_loop();
    TD_CHECK_EQ(TD_OK, td_set_source_pool_capacity(0));
    for (int round = 0; round < 20; round++) {
        td_cancel_source *cs = td_cancel_source_new();
        td_wait_options o = td_wait_defaults();
        o.cancel = td_cancel_source_token(cs);
        o.cancel_immediately = round % 2;
        td_task w = td_delay_frame_ex(1000, &o);
        td_cancel_source_cancel(cs);
        if (!o.cancel_immediately)
            td_loop_run_frame(loop);
        td_outcome out;
        TD_CHECK_EQ(TD_OK, td_task_get(w, &out));
        TD_CHECK_EQ(TD_CANCELED, out.status);
        td_cancel_source_free(cs);
        td_loop_run_frame(loop);          /* the item detaches and unregisters now */
    }
    TD_CHECK_EQ(TD_OK, td_set_source_pool_capacity(TD_DEFAULT_SOURCE_POOL_CAPACITY));
    td_loop_destroy(loop);
}

int main(void)
{
    if (td_runtime_init(NULL) != TD_OK)
        return 2;
    TD_RUN(when_all_collects);
    TD_RUN(when_any_winner_and_late_losers);
    TD_RUN(race_cancels_losers);
    TD_RUN(timeouts_four_shapes);
    TD_RUN(tokens_registrations_and_links);
    TD_RUN(cancel_after_and_wait_cancellation);
    TD_RUN(attach_and_suppress);
    TD_RUN(lazy_unregister_after_source_freed);
    td_runtime_shutdown();
    return TD_TEST_SUMMARY();
}
