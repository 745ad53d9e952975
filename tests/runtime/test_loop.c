/* The player loop: timings, frame waits, clocks, predicates, items, posts, retirement. */
#include <tandem/tandem.h>
#include "td_test.h"
#include "td_test_runtime.h"

static int64_t fake_now;
static int64_t fake_clock(void *arg) { (void)arg; return fake_now; }

static td_loop *fresh_loop(int end_of_frame)
{
    fake_now = 0;
    return fresh_loop_with(fake_clock, end_of_frame);
}

static int order_log[64], order_len;
static void log_timing(void *arg) { order_log[order_len++] = (int)(intptr_t)arg; }

static void timings_run_in_order(void)
{
    td_loop *loop = fresh_loop(1);
    order_len = 0;
    for (int i = TD_TIMING_COUNT - 1; i >= 0; i--)
        td_loop_post(loop, (td_timing)i, log_timing, (void *)(intptr_t)i);
    td_loop_run_frame(loop);
    TD_CHECK_EQ(TD_TIMING_COUNT, order_len);
    for (int i = 0; i < TD_TIMING_COUNT; i++)
        TD_CHECK_EQ(td_timing_order[i], order_log[i]);
    for (int i = 0; i < TD_TIMING_COUNT; i++)
        TD_CHECK(td_loop_is_installed(loop, (td_timing)i));
    td_loop_destroy(loop);
}

static void stateless_frame_waits(void)
{
    td_loop *loop = fresh_loop(1);
    td_loop_run_frame(loop);                 /* frame 1 done */
    td_task nf = td_next_frame(TD_TIMING_UPDATE);
    td_task copy = nf;                       /* a plain value: copies are fine */
    TD_CHECK(nf.source != NULL);
    TD_CHECK_EQ(TD_PENDING, status_of(nf));
    td_outcome o;
    TD_CHECK_EQ(TD_E_PENDING, td_task_get(nf, &o));
    td_loop_run_frame(loop);
    TD_CHECK_EQ(TD_SUCCEEDED, status_of(nf));
    /* Repeated get-result and a second consumer are fine. */
    TD_CHECK_EQ(TD_OK, td_task_get(nf, &o));
    TD_CHECK_EQ(TD_OK, td_task_get(copy, &o));
    TD_CHECK_EQ(TD_OK, td_task_get(nf, &o));

    TD_CHECK(td_delay_frame(0, TD_TIMING_UPDATE).source == NULL);
    td_task d2 = td_delay_frame(2, TD_TIMING_UPDATE);
    td_loop_run_frame(loop);
    TD_CHECK_EQ(TD_PENDING, status_of(d2));
    td_loop_run_frame(loop);
    TD_CHECK_EQ(TD_SUCCEEDED, status_of(d2));
    td_loop_destroy(loop);
}

/* yield from inside Update to LastUpdate completes in the same frame; to Update, the next. */
static td_task yield_same, yield_next;
static void in_update(void *arg)
{
    (void)arg;
    yield_same = td_yield(TD_TIMING_LAST_UPDATE);
    yield_next = td_yield(TD_TIMING_UPDATE);
}

static void yield_targets_next_run(void)
{
    td_loop *loop = fresh_loop(1);
    td_loop_post(loop, TD_TIMING_UPDATE, in_update, NULL);
    td_loop_run_frame(loop);
    TD_CHECK_EQ(TD_SUCCEEDED, status_of(yield_same));
    TD_CHECK_EQ(TD_PENDING, status_of(yield_next));
    td_loop_run_frame(loop);
    TD_CHECK_EQ(TD_SUCCEEDED, status_of(yield_next));
    td_loop_destroy(loop);
}

/* An async method counting frames across awaits of next_frame. */
typedef struct { int i, n; } frames_frame;
static void frames_step(td_runner *r, frames_frame *f)
{
    TD_BEGIN(r);
    for (f->i = 0; f->i < f->n; f->i++)
        TD_AWAIT(r, td_next_frame(TD_TIMING_UPDATE));
    TD_RETURN_VALUE(r, td_loop_frame(td_loop_main()));
    TD_END(r);
}
TD_METHOD_DEFINE(frames, frames_frame, frames_step);

static void method_over_frames(void)
{
    td_loop *loop = fresh_loop(1);
    td_runner *r = td_runner_rent(&frames_method);
    TD_FRAME(r, frames_frame)->n = 5;
    td_task_i64 t = td_runner_start_i64(r);
    int frames = 0;
    while (status_of(t.task) == TD_PENDING && frames < 100) {
        td_loop_run_frame(loop);
        frames++;
    }
    TD_CHECK_EQ(5, frames);
    td_outcome o;
    TD_CHECK_EQ(TD_OK, td_task_i64_get(t, &o));
    TD_CHECK_EQ(5, o.value);
    td_loop_destroy(loop);
}

static void clocks_and_delays(void)
{
    td_loop *loop = fresh_loop(1);
    td_task scaled = td_delay(100, TD_CLOCK_SCALED, NULL);
    td_task unscaled = td_delay(100, TD_CLOCK_UNSCALED, NULL);
    td_task real = td_delay(250, TD_CLOCK_REALTIME, NULL);
    td_loop_set_time_scale(loop, 0.5);
    fake_now = 100;
    td_loop_run_frame(loop);
    TD_CHECK_EQ(50, td_loop_time(loop, TD_CLOCK_SCALED));
    TD_CHECK_EQ(100, td_loop_time(loop, TD_CLOCK_UNSCALED));
    TD_CHECK_EQ(TD_PENDING, status_of(scaled));
    TD_CHECK_EQ(TD_SUCCEEDED, status_of(unscaled));
    TD_CHECK_EQ(TD_PENDING, status_of(real));
    fake_now = 200;
    td_loop_run_frame(loop);
    TD_CHECK_EQ(TD_SUCCEEDED, status_of(scaled));
    TD_CHECK_EQ(TD_PENDING, status_of(real));
    /* Paused clock: scaled time stands still. */
    td_loop_set_time_scale(loop, 0.0);
    td_task paused = td_delay(1, TD_CLOCK_SCALED, NULL);
    fake_now = 10000;
    td_loop_run_frame(loop);
    TD_CHECK_EQ(TD_PENDING, status_of(paused));
    TD_CHECK_EQ(TD_SUCCEEDED, status_of(real));
    td_task_forget_result(scaled);
    td_task_forget_result(unscaled);
    td_task_forget_result(real);
    td_outcome o;
    TD_CHECK_EQ(TD_E_STALE, td_task_get(real, &o));
    td_loop_destroy(loop);           /* retires the paused delay: canceled */
    TD_CHECK_EQ(TD_CANCELED, status_of(paused));
    td_task_forget_result(paused);
}

static int flag;
static int flag_set(void *arg) { (void)arg; return flag; }
static int64_t counter;
static int64_t read_counter(void *arg) { (void)arg; return counter; }

static void predicates(void)
{
    td_loop *loop = fresh_loop(1);
    flag = 0;
    counter = 7;
    td_task until = td_wait_until(flag_set, NULL, NULL);
    td_task whilst = td_wait_while(flag_set, NULL, NULL);
    td_task_i64 changed = td_wait_until_value_changed(read_counter, NULL, NULL);
    td_loop_run_frame(loop);
    TD_CHECK_EQ(TD_PENDING, status_of(until));
    TD_CHECK_EQ(TD_SUCCEEDED, status_of(whilst));
    TD_CHECK_EQ(TD_PENDING, status_of(changed.task));
    flag = 1;
    counter = 9;
    td_loop_run_frame(loop);
    TD_CHECK_EQ(TD_SUCCEEDED, status_of(until));
    td_outcome o;
    TD_CHECK_EQ(TD_OK, td_task_i64_get(changed, &o));
    TD_CHECK_EQ(9, o.value);
    td_task_forget_result(until);
    td_task_forget_result(whilst);
    td_loop_destroy(loop);
}

static int item_runs;
static int item_three_times(void *arg) { (void)arg; return ++item_runs < 3; }
static int drain_runs;
static void reposts_itself(void *arg)
{
    (void)arg;
    drain_runs++;
    td_loop_post(td_loop_main(), TD_TIMING_UPDATE, reposts_itself, NULL);
}

static void items_and_reentrant_posts(void)
{
    td_loop *loop = fresh_loop(1);
    item_runs = 0;
    td_loop_add_item(loop, TD_TIMING_PRE_UPDATE, item_three_times, NULL);
    drain_runs = 0;
    td_loop_post(loop, TD_TIMING_UPDATE, reposts_itself, NULL);
    for (int i = 0; i < 5; i++)
        td_loop_run_frame(loop);
    TD_CHECK_EQ(3, item_runs);
    /* A continuation posted during a drain runs in a later drain, once per frame. */
    TD_CHECK_EQ(5, drain_runs);
    td_loop_destroy(loop);
}

static void end_of_frame_support(void)
{
    td_loop *loop = fresh_loop(0);
    td_cancel_source *cs = td_cancel_source_new();
    td_cancel_source_cancel(cs);
    td_wait_options o = td_wait_defaults();
    o.cancel = td_cancel_source_token(cs);
    td_outcome out;
    TD_CHECK_EQ(TD_OK, td_task_get(td_wait_for_end_of_frame(&o), &out));
    TD_CHECK_EQ(TD_FAULTED, out.status);
    TD_CHECK_EQ(TD_ERR_NOT_SUPPORTED, out.error.code);
    td_loop_destroy(loop);

    loop = fresh_loop(1);
    order_len = 0;
    td_task eof = td_wait_for_end_of_frame(NULL);
    td_loop_run_frame(loop);
    TD_CHECK_EQ(TD_SUCCEEDED, status_of(eof));
    td_loop_destroy(loop);
    td_cancel_source_free(cs);
}

static void retirement_cancels_with_token(void)
{
    td_loop *loop = fresh_loop(1);
    td_cancel_source *cs = td_cancel_source_new();
    td_wait_options o = td_wait_defaults();
    o.cancel = td_cancel_source_token(cs);
    td_task w = td_delay_frame_ex(100, &o);
    td_task stateless = td_next_frame(TD_TIMING_UPDATE);
    td_loop_run_frame(loop);
    td_loop_destroy(loop);
    td_outcome out;
    TD_CHECK_EQ(TD_OK, td_task_get(w, &out));
    TD_CHECK_EQ(TD_CANCELED, out.status);
    TD_CHECK(out.error.cancel == cs);
    /* The stateless wait had completed before retirement (frame 1 ran). */
    TD_CHECK_EQ(TD_SUCCEEDED, status_of(stateless));
    td_cancel_source_free(cs);
}

int main(void)
{
    if (td_runtime_init(NULL) != TD_OK)
        return 2;
    TD_RUN(timings_run_in_order);
    TD_RUN(stateless_frame_waits);
    TD_RUN(yield_targets_next_run);
    TD_RUN(method_over_frames);
    TD_RUN(clocks_and_delays);
    TD_RUN(predicates);
    TD_RUN(items_and_reentrant_posts);
    TD_RUN(end_of_frame_support);
    TD_RUN(retirement_cancels_with_token);
    td_runtime_shutdown();
    return TD_TEST_SUMMARY();
}
