/* Loop timers and value-change waits (SMOKE 18): a repeating timer on an injected clock,
 * one-shot, stop/restart, paused scaled clock, free from the callback, loop retirement;
 * wait_until_value_changed with its value, cancellation and pre-cancellation. */
#include <tandem/tandem.h>
#include "td_alloc_count.h"
#include "td_test.h"

static int64_t fake_now;
static int64_t fake_clock(void *arg) { (void)arg; return fake_now; }

static td_loop *make_loop(void)
{
    td_loop_config cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.has_end_of_frame = 1;
    cfg.now = fake_clock;
    return td_loop_create(&cfg);
}

/* Advance the fake clock by `ns` and run one frame. */
static void step(td_loop *loop, int64_t ns)
{
    fake_now += ns;
    td_loop_run_frame(loop);
}

static uint32_t fire_frames[16];
static int fire_count;
static td_loop *fire_loop;
static void on_fire(td_timer *t, void *arg)
{
    (void)t;
    (void)arg;
    if (fire_count < 16)
        fire_frames[fire_count] = td_loop_frame(fire_loop);
    fire_count++;
}

#define MS 1000000LL

static void periodic_timer_fires_each_interval(void)
{
    td_loop *loop = make_loop();
    fire_loop = loop;
    fire_count = 0;
    td_timer *t = td_timer_create(loop, 10 * MS, TD_CLOCK_UNSCALED, 1, on_fire, NULL);
    TD_CHECK(t != NULL);
    TD_CHECK(!td_timer_is_running(t));
    TD_CHECK_EQ(TD_OK, td_timer_start(t));
    uint32_t f0 = td_loop_frame(loop);
    for (int i = 0; i < 12; i++)
        step(loop, 5 * MS);               /* two frames per interval */
    TD_CHECK_EQ(6, fire_count);
    TD_CHECK_EQ(6, td_timer_fired(t));
    for (int i = 0; i < 6; i++)
        TD_CHECK_EQ(f0 + 2 * (i + 1), fire_frames[i]);
    /* A long frame fires once and re-arms from now (no catch-up). */
    step(loop, 100 * MS);
    TD_CHECK_EQ(7, fire_count);
    step(loop, 5 * MS);
    TD_CHECK_EQ(7, fire_count);
    step(loop, 5 * MS);
    TD_CHECK_EQ(8, fire_count);
    /* Stop: nothing more; restart: interval counted from the restart. */
    td_timer_stop(t);
    for (int i = 0; i < 6; i++)
        step(loop, 5 * MS);
    TD_CHECK_EQ(8, fire_count);
    TD_CHECK_EQ(TD_OK, td_timer_start(t));
    step(loop, 5 * MS);
    TD_CHECK_EQ(8, fire_count);
    step(loop, 5 * MS);
    TD_CHECK_EQ(9, fire_count);
    /* Stop and restart within one frame keeps a single item. */
    td_timer_stop(t);
    TD_CHECK_EQ(TD_OK, td_timer_start(t));
    step(loop, 10 * MS);
    TD_CHECK_EQ(10, fire_count);
    td_timer_free(t);                    /* attached: freed by its next tick */
    step(loop, 10 * MS);
    TD_CHECK_EQ(10, fire_count);
    td_loop_destroy(loop);
}

static void one_shot_and_paused_clock(void)
{
    td_loop *loop = make_loop();
    fire_loop = loop;
    fire_count = 0;
    td_timer *once = td_timer_create(loop, 20 * MS, TD_CLOCK_UNSCALED, 0, on_fire, NULL);
    td_timer_start(once);
    for (int i = 0; i < 10; i++)
        step(loop, 10 * MS);
    TD_CHECK_EQ(1, fire_count);
    TD_CHECK(!td_timer_is_running(once));
    td_timer_free(once);                 /* detached: freed now */
    /* Scaled clock, scale 0: never fires; scale 1 again: fires. */
    fire_count = 0;
    td_timer *scaled = td_timer_create(loop, 10 * MS, TD_CLOCK_SCALED, 1, on_fire, NULL);
    td_loop_set_time_scale(loop, 0.0);
    td_timer_start(scaled);
    for (int i = 0; i < 10; i++)
        step(loop, 10 * MS);
    TD_CHECK_EQ(0, fire_count);
    td_loop_set_time_scale(loop, 1.0);
    step(loop, 10 * MS);
    TD_CHECK_EQ(1, fire_count);
    /* Loop retirement stops it; it is freed afterwards. */
    td_loop_destroy(loop);
    TD_CHECK(!td_timer_is_running(scaled));
    td_timer_free(scaled);
}

static int self_free_calls;
static void free_self(td_timer *t, void *arg)
{
    (void)arg;
    self_free_calls++;
    td_timer_free(t);
}
static void restart_self(td_timer *t, void *arg)
{
    int *n = (int *)arg;
    if (++*n < 3)
        td_timer_start(t);               /* one-shot re-armed from its own callback */
}

static void callback_frees_or_restarts(void)
{
    td_loop *loop = make_loop();
    self_free_calls = 0;
    td_timer *t = td_timer_create(loop, 1 * MS, TD_CLOCK_UNSCALED, 1, free_self, NULL);
    td_timer_start(t);
    for (int i = 0; i < 5; i++)
        step(loop, 1 * MS);
    TD_CHECK_EQ(1, self_free_calls);
    int n = 0;
    td_timer *r = td_timer_create(loop, 1 * MS, TD_CLOCK_UNSCALED, 0, restart_self, &n);
    td_timer_start(r);
    for (int i = 0; i < 10; i++)
        step(loop, 1 * MS);
    TD_CHECK_EQ(3, n);
    TD_CHECK_EQ(3, td_timer_fired(r));
    td_timer_free(r);
    td_loop_destroy(loop);
}

static void timer_zero_alloc_once_warm(void)
{
    td_loop *loop = make_loop();
    fire_loop = loop;
    fire_count = 0;
    td_timer *t = td_timer_create(loop, 1 * MS, TD_CLOCK_UNSCALED, 1, on_fire, NULL);
    td_timer_start(t);
    step(loop, 1 * MS);
    uint32_t before = td_alloc_count();
    for (int i = 0; i < 100; i++) {
        step(loop, 1 * MS);
        if (i % 10 == 0) {
            td_timer_stop(t);
            step(loop, 1 * MS);
            td_timer_start(t);
        }
    }
    if (td_alloc_counting())
        TD_CHECK_EQ(before, td_alloc_count());
    TD_CHECK(fire_count >= 90);
    td_timer_free(t);
    td_loop_destroy(loop);
}

/* ---- wait_until_value_changed ------------------------------------------------------------ */

static int64_t watched;
static int64_t read_watched(void *arg) { (void)arg; return watched; }

static void value_changed_wait(void)
{
    td_loop *loop = make_loop();
    td_wait_options o = td_wait_defaults();
    o.loop = loop;
    watched = 5;
    td_task_i64 t = td_wait_until_value_changed(read_watched, NULL, &o);
    td_status st;
    for (int i = 0; i < 3; i++) {
        step(loop, MS);
        TD_CHECK_EQ(TD_OK, td_task_status(t.task, &st));
        TD_CHECK_EQ(TD_PENDING, st);
    }
    watched = 9;
    step(loop, MS);
    td_outcome out;
    TD_CHECK_EQ(TD_OK, td_task_i64_get(t, &out));
    TD_CHECK_EQ(TD_SUCCEEDED, out.status);
    TD_CHECK_EQ(9, out.value);
    /* Cancelled while waiting (observed at the next frame), and pre-cancelled. */
    td_cancel_source *cs = td_cancel_source_new();
    o.cancel = td_cancel_source_token(cs);
    t = td_wait_until_value_changed(read_watched, NULL, &o);
    step(loop, MS);
    td_cancel_source_cancel(cs);
    step(loop, MS);
    TD_CHECK_EQ(TD_OK, td_task_i64_get(t, &out));
    TD_CHECK_EQ(TD_CANCELED, out.status);
    TD_CHECK(out.error.cancel == cs);
    t = td_wait_until_value_changed(read_watched, NULL, &o);
    TD_CHECK_EQ(TD_OK, td_task_i64_get(t, &out));
    TD_CHECK_EQ(TD_CANCELED, out.status);
    TD_CHECK(out.error.cancel == cs);
    td_cancel_source_free(cs);
    /* Retired with its loop: canceled. */
    o.cancel = td_cancel_none();
    t = td_wait_until_value_changed(read_watched, NULL, &o);
    td_loop_destroy(loop);
    TD_CHECK_EQ(TD_OK, td_task_i64_get(t, &out));
    TD_CHECK_EQ(TD_CANCELED, out.status);
}

int main(void)
{
    if (td_runtime_init(NULL) != TD_OK)
        return 2;
    TD_RUN(periodic_timer_fires_each_interval);
    TD_RUN(one_shot_and_paused_clock);
    TD_RUN(callback_frees_or_restarts);
    TD_RUN(timer_zero_alloc_once_warm);
    TD_RUN(value_changed_wait);
    td_runtime_shutdown();
    return TD_TEST_SUMMARY();
}
