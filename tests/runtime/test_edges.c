/* The runtime at its edges (issue 12): loop retirement from inside a frame, work on a
 * retired loop, waits without a main loop, cancelled and "forever" timeouts, abandoned
 * delays, channel settle order, a stream after its producer's fault, a second awaiter,
 * the runner-pool capacity setter, and use before td_runtime_init. Each test failed on the
 * runtime before these fixes (double free, TD_OK with nothing run, NULL dereference,
 * TD_ERR_TIMEOUT, immediate completion, 1,001 clock reads, 2-1-0, a clean end,
 * TD_E_PENDING, capacity 128, a 0-byte object). */
#include <stdint.h>
#include <tandem/tandem.h>
#include "td_test.h"
#include "td_test_runtime.h"

static int64_t fake_now;
static uint32_t clock_reads;
static int64_t fake_clock(void *arg) { (void)arg; clock_reads++; return fake_now; }

static td_loop *fresh_loop(void)
{
    fake_now = 0;
    return fresh_loop_with(fake_clock, 1);
}

static td_outcome outcome_of(td_task t)
{
    td_outcome o;
    memset(&o, 0, sizeof(o));
    o.status = (td_status)-1;
    if (td_task_get(t, &o) != TD_OK)
        o.status = (td_status)-1;
    return o;
}

/* ---- 1. destroy from the loop's own frame ------------------------------------------- */

static td_loop *victim;
static int ran_after;
static void destroy_victim(void *arg) { (void)arg; td_loop_destroy(victim); }
static void count_ran(void *arg) { (void)arg; ran_after++; }
static int destroy_victim_item(void *arg) { (void)arg; td_loop_destroy(victim); return 1; }

static void destroy_from_own_continuation(void)
{
    td_loop *main_loop = td_loop_main();
    victim = fresh_loop();
    td_loop_run_frame(victim);
    td_task wait = td_next_frame(TD_TIMING_LAST_UPDATE);    /* later in the same frame */
    ran_after = 0;
    TD_CHECK_EQ(TD_OK, td_loop_post(victim, TD_TIMING_UPDATE, destroy_victim, NULL));
    TD_CHECK_EQ(TD_OK, td_loop_post(victim, TD_TIMING_UPDATE, count_ran, NULL));
    TD_CHECK_EQ(TD_OK, td_loop_post(victim, TD_TIMING_LAST_UPDATE, count_ran, NULL));
    td_loop_run_frame(victim);          /* was: the drain's queue freed twice */
    TD_CHECK(td_loop_is_retired(victim));
    TD_CHECK_EQ(2, ran_after);          /* the rest ran once, by the retirement */
    TD_CHECK_EQ(TD_CANCELED, status_of(wait));
    td_loop_run_frame(victim);          /* a retired loop runs nothing */
    TD_CHECK_EQ(2, ran_after);
    td_loop_set_main(main_loop);

    victim = fresh_loop();
    TD_CHECK_EQ(TD_OK, td_loop_add_item(victim, TD_TIMING_UPDATE, destroy_victim_item, NULL));
    TD_CHECK_EQ(TD_OK, td_loop_post(victim, TD_TIMING_LAST_UPDATE, count_ran, NULL));
    ran_after = 0;
    td_loop_run_frame(victim);
    TD_CHECK(td_loop_is_retired(victim));
    TD_CHECK_EQ(1, ran_after);
    td_loop_set_main(main_loop);
}

/* ---- 3. work on a retired loop ----------------------------------------------------------- */

static int never_item(void *arg) { (void)arg; ran_after++; return 1; }
static void timer_fn(td_timer *t, void *arg) { (void)t; (void)arg; ran_after++; }

static void retired_loop_refuses_work(void)
{
    td_loop *main_loop = td_loop_main();
    td_loop *loop = fresh_loop();
    td_loop_set_main(main_loop);
    td_cancel_source *late = td_cancel_source_new();
    TD_CHECK_EQ(TD_OK, td_cancel_source_cancel_after(late, INT64_C(3600000000000), TD_CLOCK_UNSCALED, loop));
    td_timer *timer = td_timer_create(loop, 1000, TD_CLOCK_UNSCALED, 1, timer_fn, NULL);
    TD_CHECK(timer != NULL);
    td_loop_destroy(loop);
    /* cancel_after armed before the retirement: cancelled by it, and its free completes */
    TD_CHECK(td_cancel_is_requested(td_cancel_source_token(late)));
    td_cancel_source_free(late);

    ran_after = 0;
    TD_CHECK_EQ(TD_E_RETIRED, td_loop_post(loop, TD_TIMING_UPDATE, count_ran, NULL));
    TD_CHECK_EQ(TD_E_RETIRED, td_loop_post_at(loop, TD_TIMING_UPDATE, 5, count_ran, NULL));
    TD_CHECK_EQ(TD_E_RETIRED, td_loop_add_item(loop, TD_TIMING_UPDATE, never_item, NULL));
    TD_CHECK_EQ(TD_E_RETIRED, td_timer_start(timer));
    TD_CHECK(!td_timer_is_running(timer));
    td_timer_free(timer);
    td_cancel_source *cs = td_cancel_source_new();
    TD_CHECK_EQ(TD_E_RETIRED, td_cancel_source_cancel_after(cs, 0, TD_CLOCK_UNSCALED, loop));
    td_cancel_source_free(cs);

    td_wait_options o = td_wait_defaults();
    o.loop = loop;
    td_outcome r = outcome_of(td_delay(1000, TD_CLOCK_UNSCALED, &o));
    TD_CHECK_EQ(TD_CANCELED, r.status);                  /* was: pending forever */
    r = outcome_of(td_next_frame_ex(&o));
    TD_CHECK_EQ(TD_CANCELED, r.status);
    td_loop_run_frame(loop);
    TD_CHECK_EQ(0, ran_after);
}

/* ---- 4. waits without a main loop --------------------------------------------------------- */

static int always(void *arg) { (void)arg; return 1; }

static void waits_without_main_loop(void)
{
    td_loop *main_loop = td_loop_main();
    td_loop_set_main(NULL);
    td_task waits[6];
    waits[0] = td_next_frame(TD_TIMING_UPDATE);
    waits[1] = td_yield(TD_TIMING_UPDATE);
    waits[2] = td_delay_frame(3, TD_TIMING_UPDATE);
    waits[3] = td_delay(1000, TD_CLOCK_SCALED, NULL);
    waits[4] = td_wait_until(always, NULL, NULL);
    waits[5] = td_next_frame_ex(NULL);
    td_loop_set_main(main_loop);
    for (int i = 0; i < 6; i++) {
        td_outcome o = outcome_of(waits[i]);
        TD_CHECK_EQ(TD_FAULTED, o.status);
        TD_CHECK_EQ(TD_ERR_NO_LOOP, o.error.code);
    }
    td_timer *t = NULL;
    td_loop_set_main(NULL);
    t = td_timer_create(NULL, 10, TD_CLOCK_SCALED, 0, timer_fn, NULL);
    td_cancel_source *cs = td_cancel_source_new();
    int rc = td_cancel_source_cancel_after(cs, 10, TD_CLOCK_SCALED, NULL);
    td_loop_set_main(main_loop);
    td_cancel_source_free(cs);
    TD_CHECK(t == NULL);
    TD_CHECK_EQ(TD_E_INVALID, rc);
}

/* ---- 5, 6, 7. timeouts -------------------------------------------------------------------- */

/* One timeout on a producer that has not finished; `cancel` cancelled before (pre) or
 * after the first frame. Returns the timeout's outcome; the producer is then finished. */
static td_outcome timeout_with_cancel(td_loop *loop, int with_error, int pre, td_cancel_source **by)
{
    td_completion_source *producer = td_completion_source_new();
    td_cancel_source *cs = td_cancel_source_new();
    td_wait_options o = td_wait_defaults();
    o.cancel = td_cancel_source_token(cs);
    if (pre)
        td_cancel_source_cancel(cs);
    td_task t = td_timeout(td_completion_source_task(producer), 1000000, TD_CLOCK_UNSCALED, with_error, &o);
    td_loop_run_frame(loop);
    td_status before = status_of(t);
    td_cancel_source_cancel(cs);
    pump_until_done(t);
    td_outcome r = outcome_of(t);
    if (!pre && before != TD_PENDING)
        r.status = (td_status)-1;            /* it had to wait for the cancellation */
    td_completion_source_set_result(producer, 1);    /* the combinator consumes it */
    td_completion_source_free(producer);
    *by = cs;
    return r;
}

static void cancelled_timeout_reads_canceled(void)
{
    td_loop *loop = fresh_loop();
    for (int with_error = 0; with_error < 2; with_error++) {
        for (int pre = 0; pre < 2; pre++) {
            td_cancel_source *cs;
            td_outcome r = timeout_with_cancel(loop, with_error, pre, &cs);
            /* was: FAULTED with TD_ERR_TIMEOUT, or (pre-cancelled) SUCCEEDED timed out */
            TD_CHECK_EQ(TD_CANCELED, r.status);
            TD_CHECK(r.error.cancel == cs);
            TD_CHECK(!td_outcome_timed_out(&r));
            td_cancel_source_free(cs);
        }
    }
    td_loop_destroy(loop);
}

static int64_t forever_fired;
static void forever_timer(td_timer *t, void *arg) { (void)t; (void)arg; forever_fired++; }

static void forever_never_fires(void)
{
    td_loop *loop = fresh_loop();
    fake_now = 5000000000;
    td_loop_run_frame(loop);                    /* every clock is past zero now */
    td_completion_source *never = td_completion_source_new();
    td_task waits[3];
    waits[0] = td_delay(INT64_MAX, TD_CLOCK_SCALED, NULL);
    waits[1] = td_delay(INT64_MAX, TD_CLOCK_REALTIME, NULL);
    waits[2] = td_timeout(td_completion_source_task(never), INT64_MAX, TD_CLOCK_UNSCALED, 1, NULL);
    td_cancel_source *cs = td_cancel_source_new();
    TD_CHECK_EQ(TD_OK, td_cancel_source_cancel_after(cs, INT64_MAX, TD_CLOCK_UNSCALED, loop));
    forever_fired = 0;
    td_timer *t = td_timer_create(loop, INT64_MAX, TD_CLOCK_UNSCALED, 1, forever_timer, NULL);
    TD_CHECK_EQ(TD_OK, td_timer_start(t));
    for (int i = 0; i < 5; i++) {
        fake_now += 1000000000;
        td_loop_run_frame(loop);
    }
    for (int i = 0; i < 3; i++)
        TD_CHECK_EQ(TD_PENDING, status_of(waits[i]));   /* was: done on the next frame */
    TD_CHECK(!td_cancel_is_requested(td_cancel_source_token(cs)));
    TD_CHECK_EQ(0, forever_fired);
    td_timer_free(t);
    td_loop_destroy(loop);                      /* the waits complete canceled */
    for (int i = 0; i < 3; i++)
        TD_CHECK_EQ(TD_CANCELED, outcome_of(waits[i]).status);
    td_cancel_source_free(cs);
    td_completion_source_set_result(never, 1);       /* the timeout consumes its input */
    td_completion_source_free(never);
}

enum { ABANDON_N = 1000 };

static void won_timeout_stops_its_delay(void)
{
    td_loop *loop = fresh_loop();
    td_loop_run_frame(loop);
    for (int i = 0; i < ABANDON_N; i++) {
        td_auto_source *s = td_auto_source_rent();
        td_task in = td_auto_source_task(s);
        td_task t = td_timeout(in, INT64_C(3600000000000), TD_CLOCK_REALTIME, 1, NULL);
        TD_CHECK_EQ(TD_OK, td_auto_source_set_result(s, in.token, i));
        td_outcome r = outcome_of(t);
        TD_CHECK_EQ(TD_SUCCEEDED, r.status);
    }
    td_loop_run_frame(loop);                    /* abandoned delays detach here */
    clock_reads = 0;
    td_loop_run_frame(loop);
    TD_CHECK(clock_reads <= 2);                 /* was: 1 + 1,000 */
    td_loop_destroy(loop);
}

/* ---- 9. channel completion settles writers first in, first out ----------------------------- */

static int settle_log[8], settle_len;
static void log_settle(void *arg) { if (settle_len < 8) settle_log[settle_len++] = (int)(intptr_t)arg; }

static void channel_writers_settle_fifo(void)
{
    td_channel *ch = td_channel_create_bounded(1);
    TD_CHECK_EQ(TD_OK, td_channel_try_write(ch, 100));
    td_task w[3];
    for (int i = 0; i < 3; i++) {
        w[i] = td_channel_write(ch, i, td_cancel_none());
        TD_CHECK_EQ(TD_OK, td_task_on_completed(w[i], log_settle, (void *)(intptr_t)i));
    }
    settle_len = 0;
    TD_CHECK_EQ(TD_OK, td_channel_complete(ch, NULL));
    TD_CHECK_EQ(3, settle_len);
    for (int i = 0; i < 3; i++) {
        TD_CHECK_EQ(i, settle_log[i]);                   /* was: 2, 1, 0 */
        TD_CHECK_EQ(TD_FAULTED, outcome_of(w[i]).status);
    }
    int64_t item;
    TD_CHECK_EQ(TD_OK, td_channel_try_read(ch, &item));
    TD_CHECK_EQ(100, item);
    td_channel_free(ch);
}

/* ---- 10. a stream after its producer's fault ----------------------------------------------- */

typedef struct { td_stream_writer *w; } faulty_frame;
static void faulty_step(td_runner *r, faulty_frame *f)
{
    TD_BEGIN(r);
    TD_AWAIT(r, td_stream_writer_write(f->w, 1));
    TD_FAIL(r, TD_ERR_USER + 12, "producer failed");
    TD_END(r);
}
TD_METHOD_DEFINE(faulty, faulty_frame, faulty_step);
static td_task start_faulty(td_stream_writer *w, td_cancel_token token, void *arg)
{
    (void)token;
    (void)arg;
    td_runner *r = td_runner_rent(&faulty_method);
    TD_FRAME(r, faulty_frame)->w = w;
    return td_runner_start(r);
}

static void stream_fault_is_sticky(void)
{
    td_stream *s = td_stream_create(start_faulty, NULL, NULL, NULL);
    td_task_i64 m = td_stream_move_next(s);
    TD_CHECK(m.task.source == NULL && m.value == 1);
    td_outcome o;
    for (int i = 0; i < 3; i++) {                       /* was: a clean end after the first */
        m = td_stream_move_next(s);
        TD_CHECK_EQ(TD_OK, td_task_i64_get(m, &o));
        TD_CHECK_EQ(TD_FAULTED, o.status);
        TD_CHECK_EQ(TD_ERR_USER + 12, o.error.code);
    }
    td_outcome d = outcome_of(td_stream_dispose(s));
    TD_CHECK_EQ(TD_SUCCEEDED, d.status);
}

/* ---- 11. a second awaiter ------------------------------------------------------------------- */

typedef struct { td_task t; } await_frame;
static void await_step(td_runner *r, await_frame *f)
{
    TD_BEGIN(r);
    TD_AWAIT(r, f->t);
    TD_END(r);
}
TD_METHOD_DEFINE(await_one, await_frame, await_step);
static void noop(void *arg) { (void)arg; }

static void second_awaiter_gets_awaited(void)
{
    td_completion_source *cs = td_completion_source_new();
    td_task t = td_completion_source_task(cs);
    TD_CHECK_EQ(TD_OK, td_task_on_completed(t, noop, NULL));
    TD_CHECK_EQ(TD_E_AWAITED, td_task_on_completed(t, noop, NULL));
    td_outcome o;
    TD_CHECK_EQ(TD_E_AWAITED, td_task_get(t, &o));       /* was: TD_E_PENDING */
    td_runner *r = td_runner_rent(&await_one_method);
    TD_FRAME(r, await_frame)->t = t;
    td_outcome m = outcome_of(td_runner_start(r));
    TD_CHECK_EQ(TD_FAULTED, m.status);
    TD_CHECK_EQ(TD_E_AWAITED, m.error.code);
    td_completion_source_set_result(cs, 1);
    TD_CHECK_EQ(TD_SUCCEEDED, outcome_of(t).status);

    td_completion_source_reset(cs);
    td_task pair[2];
    pair[0] = pair[1] = td_completion_source_task(cs);
    td_task all = td_when_all(pair, 2);
    td_completion_source_set_result(cs, 1);
    m = outcome_of(all);
    TD_CHECK_EQ(TD_FAULTED, m.status);
    TD_CHECK_EQ(TD_E_AWAITED, m.error.code);
    td_completion_source_free(cs);
}

/* ---- 12. the runner-pool capacity setter reaches methods not used yet ---------------------- */

typedef struct { int unused; } quick_frame;
static void quick_step(td_runner *r, quick_frame *f)
{
    (void)f;
    TD_BEGIN(r);
    TD_END(r);
}
TD_METHOD_DEFINE(quick, quick_frame, quick_step);
enum { QUICK_N = 300 };

static void capacity_setter_reaches_unused_methods(void)
{
    TD_CHECK_EQ(TD_OK, td_set_runner_pool_capacity(QUICK_N));
    static td_runner *rs[QUICK_N];
    for (int i = 0; i < QUICK_N; i++)
        rs[i] = td_runner_rent(&quick_method);
    for (int i = 0; i < QUICK_N; i++)
        TD_CHECK(td_runner_start(rs[i]).source == NULL);
    TD_CHECK_EQ(QUICK_N, td_pool_capacity(&quick_method.pool));    /* was: 128 */
    TD_CHECK_EQ(QUICK_N, td_pool_count(&quick_method.pool));
    TD_CHECK_EQ(TD_OK, td_set_runner_pool_capacity(TD_DEFAULT_RUNNER_POOL_CAPACITY));
    TD_CHECK_EQ(TD_DEFAULT_RUNNER_POOL_CAPACITY, td_pool_capacity(&quick_method.pool));
}

/* ---- 13. before td_runtime_init (and after shutdown) --------------------------------------- */

static void uninitialised_runtime_reports_errors(void)
{
    td_outcome o = outcome_of(td_from_error(TD_ERR_USER, "x"));
    TD_CHECK_EQ(TD_FAULTED, o.status);
    TD_CHECK_EQ(TD_ERR_NOT_INITIALIZED, o.error.code);
    o = outcome_of(td_from_canceled(NULL));
    TD_CHECK_EQ(TD_FAULTED, o.status);
    TD_CHECK_EQ(TD_ERR_NOT_INITIALIZED, o.error.code);
    TD_CHECK(td_cancel_source_new() == NULL);
    o = outcome_of(td_next_frame(TD_TIMING_UPDATE));
    TD_CHECK_EQ(TD_FAULTED, o.status);
    o = outcome_of(td_delay(10, TD_CLOCK_SCALED, NULL));
    TD_CHECK_EQ(TD_FAULTED, o.status);
}

int main(void)
{
    TD_RUN(uninitialised_runtime_reports_errors);
    if (td_runtime_init(NULL) != TD_OK)
        return 2;
    TD_RUN(destroy_from_own_continuation);
    TD_RUN(retired_loop_refuses_work);
    TD_RUN(waits_without_main_loop);
    TD_RUN(cancelled_timeout_reads_canceled);
    TD_RUN(forever_never_fires);
    TD_RUN(won_timeout_stops_its_delay);
    TD_RUN(channel_writers_settle_fifo);
    TD_RUN(stream_fault_is_sticky);
    TD_RUN(second_awaiter_gets_awaited);
    TD_RUN(capacity_setter_reaches_unused_methods);
    td_runtime_shutdown();
    TD_RUN(uninitialised_runtime_reports_errors);
    return TD_TEST_SUMMARY();
}
