/*
 * smoke_loop.c - smoke cases on the player loop: 16 (timings install on use, items,
 * posts), 18 (timed waits, predicates, timeouts), 28 (frame distances), 29 (paused clock
 * cancellation, reentrant deferral), 30-31 (loop retirement), 34 (no end-of-frame phase).
 */
#include "smoke.h"

typedef struct smoke_thread_log { uintptr_t thread[32]; volatile uint32_t count; } smoke_thread_log;

static void smoke_log_thread(void *arg)
{
    smoke_thread_log *l = (smoke_thread_log *)arg;
    uint32_t i = td_atomic_fetch_add_u32(&l->count, 1);
    if (i < 32)
        l->thread[i] = td_thread_self();
}

static int smoke_all_on_main(const smoke_thread_log *l)
{
    for (uint32_t i = 0; i < l->count && i < 32; i++)
        if (l->thread[i] != td_main_thread_id())
            return 0;
    return 1;
}

static int smoke_item_runs;
static int smoke_item_thrice(void *arg) { (void)arg; return ++smoke_item_runs < 3; }

static void *smoke_post_from_worker(void *arg)
{
    td_loop_post(td_loop_main(), TD_TIMING_UPDATE, smoke_log_thread, arg);
    return NULL;
}

void smoke_case_16(SMOKE_ARGS)
{
    td_loop *loop = smoke_loop_begin(1, NULL);
    /* One log per post (same callback, different arguments), so a post that runs twice
     * cannot hide one that never ran. */
    smoke_thread_log resumes, main_post, worker_post;
    memset(&resumes, 0, sizeof(resumes));
    memset(&main_post, 0, sizeof(main_post));
    memset(&worker_post, 0, sizeof(worker_post));
    for (int t = 3; t <= 18; t++)
        SMOKE_TRUE(!td_loop_is_installed(loop, (td_timing)t));
    for (int t = 3; t <= 18; t++) {
        SMOKE_EQ(TD_OK, td_task_on_completed(td_yield((td_timing)t), smoke_log_thread, &resumes));
        SMOKE_TRUE(td_loop_is_installed(loop, (td_timing)t));
    }
    smoke_item_runs = 0;
    td_loop_add_item(loop, TD_TIMING_UPDATE, smoke_item_thrice, NULL);
    SMOKE_EQ(TD_OK, td_loop_post(loop, TD_TIMING_UPDATE, smoke_log_thread, &main_post));
    pthread_t th;
    SMOKE_TRUE(smoke_thread_start(&th, smoke_post_from_worker, &worker_post));
    smoke_thread_join(th);
    for (int i = 0; i < 5; i++)
        td_loop_run_frame(loop);
    SMOKE_EQ(16, resumes.count);
    SMOKE_TRUE(smoke_all_on_main(&resumes));
    SMOKE_EQ(3, smoke_item_runs);
    SMOKE_EQ(1, main_post.count);                        /* each post ran once ... */
    SMOKE_EQ(1, worker_post.count);
    SMOKE_TRUE(main_post.thread[0] == td_main_thread_id());   /* ... on the main thread */
    SMOKE_TRUE(worker_post.thread[0] == td_main_thread_id());
    smoke_loop_end(loop);
}

static int smoke_timer_fires;
static void smoke_count_fire(td_timer *t, void *arg) { (void)t; (void)arg; smoke_timer_fires++; }

static int smoke_state;
static int smoke_state_ready(void *arg) { (void)arg; return smoke_state == 3; }
static int64_t smoke_value;
static int64_t smoke_read_value(void *arg) { (void)arg; return smoke_value; }

void smoke_case_18(SMOKE_ARGS)
{
    int64_t now = 0;
    td_loop *loop = smoke_loop_begin(1, &now);
    td_task real = td_delay(30 * 1000000LL, TD_CLOCK_REALTIME, NULL);
    td_task seconds = td_delay(1000000000LL, TD_CLOCK_UNSCALED, NULL);   /* wait for 1 s */
    smoke_state = 0;
    td_task until = td_wait_until(smoke_state_ready, NULL, NULL);
    smoke_value = 1;
    td_task_i64 changed = td_wait_until_value_changed(smoke_read_value, NULL, NULL);
    td_completion_source *never = td_completion_source_new();
    td_task_i64 timeout = td_timeout_i64(td_completion_source_task_i64(never), 500 * 1000000LL,
                                         TD_CLOCK_UNSCALED, 0, NULL);
    smoke_timer_fires = 0;
    td_timer *timer = td_timer_create(loop, 100 * 1000000LL, TD_CLOCK_UNSCALED, 1, smoke_count_fire, NULL);
    SMOKE_TRUE(timer != NULL);
    SMOKE_EQ(TD_OK, td_timer_start(timer));
    td_loop_set_time_scale(loop, 0.0);                 /* unscaled and realtime ignore it */
    int frames_real = -1, frames_seconds = -1, frames_until = -1, frames_changed = -1, frames_timeout = -1;
    for (int frame = 1; frame <= 70; frame++) {
        now += 16 * 1000000LL;                           /* 16 ms frames */
        if (frame == 5) smoke_state = 3;
        if (frame == 7) smoke_value = 2;
        td_loop_run_frame(loop);
        if (frames_real < 0 && smoke_status(real) == TD_SUCCEEDED) frames_real = frame;
        if (frames_seconds < 0 && smoke_status(seconds) == TD_SUCCEEDED) frames_seconds = frame;
        if (frames_until < 0 && smoke_status(until) == TD_SUCCEEDED) frames_until = frame;
        if (frames_changed < 0 && smoke_status(changed.task) == TD_SUCCEEDED) frames_changed = frame;
        if (frames_timeout < 0 && smoke_status(timeout.task) == TD_SUCCEEDED) frames_timeout = frame;
    }
    td_outcome o;
    SMOKE_EQ(2, frames_real);           /* 32 ms >= 30 ms */
    SMOKE_EQ(63, frames_seconds);       /* 63 x 16 ms >= 1 s */
    SMOKE_EQ(5, frames_until);
    SMOKE_EQ(7, frames_changed);
    SMOKE_EQ(32, frames_timeout);       /* 32 x 16 ms >= 500 ms */
    /* the repeating timer re-arms from the firing frame: every 7 frames (112 ms) */
    SMOKE_EQ(10, smoke_timer_fires);
    SMOKE_EQ(10, td_timer_fired(timer));
    td_timer_free(timer);
    SMOKE_EQ(TD_OK, td_task_i64_get(changed, &o));
    SMOKE_EQ(2, o.value);
    SMOKE_EQ(TD_OK, td_task_i64_get(timeout, &o));
    SMOKE_TRUE(td_outcome_timed_out(&o));
    td_task_forget_result(real);
    td_task_forget_result(seconds);
    td_task_forget_result(until);
    td_completion_source_set_result(never, 0);   /* the timed-out producer still finishes */
    td_completion_source_free(never);
    smoke_loop_end(loop);
}

void smoke_case_28(SMOKE_ARGS)
{
    td_loop *loop = smoke_loop_begin(1, NULL);
    td_loop_run_frame(loop);
    SMOKE_TRUE(td_delay_frame(0, TD_TIMING_UPDATE).source == NULL);      /* inline */
    uint32_t start = td_loop_frame(loop);
    td_task next = td_next_frame(TD_TIMING_UPDATE);
    td_task two = td_delay_frame(2, TD_TIMING_UPDATE);
    int f_next = smoke_run_until(loop, next, 10);
    SMOKE_TRUE(f_next >= 1);
    SMOKE_TRUE(td_loop_frame(loop) - start >= 1);
    int f_two = f_next + smoke_run_until(loop, two, 10);
    SMOKE_TRUE(f_two >= 2);
    SMOKE_EQ(TD_SUCCEEDED, smoke_status(two));
    smoke_loop_end(loop);
}

typedef struct smoke_deferral {
    td_cancel_source *cs;
    td_task wait;
    int in_drain_status;
} smoke_deferral;

static void smoke_register_in_drain(void *arg)
{
    smoke_deferral *d = (smoke_deferral *)arg;
    td_wait_options o = td_wait_defaults();
    o.cancel = td_cancel_source_token(d->cs);
    d->wait = td_delay_frame_ex(100, &o);
    td_cancel_source_cancel(d->cs);                 /* cancelled during this drain */
    d->in_drain_status = (int)smoke_status(d->wait);
}

static void *smoke_cancel_from_worker(void *arg)
{
    td_cancel_source_cancel((td_cancel_source *)arg);
    return NULL;
}

void smoke_case_29(SMOKE_ARGS)
{
    td_loop *loop = smoke_loop_begin(1, NULL);
    td_loop_set_time_scale(loop, 0.0);
    td_cancel_source *cs = td_cancel_source_new();
    td_wait_options o = td_wait_defaults();
    o.cancel = td_cancel_source_token(cs);
    td_task paused = td_delay(1000, TD_CLOCK_SCALED, &o);
    smoke_thread_log where;
    memset(&where, 0, sizeof(where));
    SMOKE_EQ(TD_OK, td_task_on_completed(paused, smoke_log_thread, &where));
    td_loop_run_frame(loop);
    SMOKE_EQ(TD_PENDING, smoke_status(paused));          /* the clock is paused */
    /* Cancelled from a worker: the cancelling thread must not publish it ... */
    pthread_t th;
    SMOKE_TRUE(smoke_thread_start(&th, smoke_cancel_from_worker, cs));
    smoke_thread_join(th);
    SMOKE_EQ(1, td_cancel_is_requested(o.cancel));
    SMOKE_EQ(0, where.count);
    SMOKE_EQ(TD_PENDING, smoke_status(paused));          /* still pending until the main frame */
    td_loop_run_frame(loop);
    SMOKE_EQ(1, where.count);                            /* ... the next main frame does, */
    SMOKE_TRUE(where.thread[0] == td_main_thread_id());  /* on the main thread */
    td_outcome out;
    SMOKE_EQ(TD_OK, td_task_get(paused, &out));
    SMOKE_EQ(TD_CANCELED, out.status);
    SMOKE_TRUE(out.error.cancel == cs);

    smoke_deferral d;
    memset(&d, 0, sizeof(d));
    d.cs = td_cancel_source_new();
    td_loop_post(loop, TD_TIMING_UPDATE, smoke_register_in_drain, &d);
    uint32_t frame = td_loop_frame(loop) + 1;
    td_loop_run_frame(loop);
    SMOKE_EQ(TD_PENDING, d.in_drain_status);
    SMOKE_EQ(TD_PENDING, smoke_status(d.wait));          /* not completed in the current drain */
    td_loop_run_frame(loop);
    SMOKE_EQ(TD_CANCELED, smoke_status(d.wait));         /* a later frame */
    SMOKE_TRUE(td_loop_frame(loop) > frame);
    td_task_forget_result(d.wait);
    td_loop_run_frame(loop);
    td_cancel_source_free(d.cs);
    td_cancel_source_free(cs);
    smoke_loop_end(loop);
}

void smoke_case_30(SMOKE_ARGS)
{
    td_loop *loop = smoke_loop_begin(1, NULL);
    td_cancel_source *cs = td_cancel_source_new();
    td_wait_options o = td_wait_defaults();
    o.cancel = td_cancel_source_token(cs);
    td_task wait = td_delay_frame_ex(100, &o);
    td_completion_source *op = td_completion_source_new();
    td_task observed[2] = { td_completion_source_task(op), td_delay_frame_ex(100, &o) };
    td_task_i64 any = td_when_any(observed, 2);
    td_loop_run_frame(loop);
    smoke_loop_end(loop);                                 /* retire the loop */
    td_outcome out;
    SMOKE_EQ(TD_OK, td_task_get(wait, &out));
    SMOKE_EQ(TD_CANCELED, out.status);
    SMOKE_TRUE(out.error.cancel == cs);                  /* the caller's token */
    SMOKE_EQ(TD_OK, td_task_i64_get(any, &out));
    SMOKE_EQ(TD_CANCELED, out.status);
    SMOKE_TRUE(out.error.cancel == cs);
    /* the operation that was observed still finishes, and is consumed */
    SMOKE_EQ(TD_OK, td_completion_source_set_result(op, 5));
    td_status st;
    SMOKE_EQ(TD_E_STALE, td_task_status(observed[0], &st));
    td_completion_source_free(op);
    td_cancel_source_free(cs);
}

static int smoke_flag;
static int smoke_flag_set(void *arg) { (void)arg; return smoke_flag; }

void smoke_case_31(SMOKE_ARGS)
{
    td_loop *old = smoke_loop_begin(1, NULL);
    smoke_flag = 0;
    td_task first = td_wait_until(smoke_flag_set, NULL, NULL);
    td_loop_run_frame(old);
    SMOKE_EQ(TD_PENDING, smoke_status(first));
    smoke_loop_end(old);
    SMOKE_EQ(TD_CANCELED, smoke_status(first));           /* retired with its loop */
    td_task_forget_result(first);
    td_loop *fresh = smoke_loop_begin(1, NULL);
    td_task second = td_wait_until(smoke_flag_set, NULL, NULL);
    td_loop_run_frame(fresh);
    SMOKE_EQ(TD_PENDING, smoke_status(second));
    smoke_flag = 1;
    td_loop_run_frame(fresh);
    SMOKE_EQ(TD_SUCCEEDED, smoke_status(second));
    td_task_forget_result(second);
    smoke_loop_end(fresh);
}

void smoke_case_34(SMOKE_ARGS)
{
    td_loop *loop = smoke_loop_begin(0, NULL);
    td_cancel_source *cs = td_cancel_source_new();
    td_cancel_source_cancel(cs);
    td_wait_options o = td_wait_defaults();
    o.cancel = td_cancel_source_token(cs);
    td_outcome out;
    SMOKE_EQ(TD_OK, td_task_get(td_wait_for_end_of_frame(&o), &out));
    SMOKE_EQ(TD_FAULTED, out.status);
    SMOKE_EQ(TD_ERR_NOT_SUPPORTED, out.error.code);
    SMOKE_EQ(TD_OK, td_task_get(td_wait_for_end_of_frame(NULL), &out));
    SMOKE_EQ(TD_FAULTED, out.status);
    SMOKE_EQ(TD_ERR_NOT_SUPPORTED, out.error.code);
    td_cancel_source_free(cs);
    smoke_loop_end(loop);
}
