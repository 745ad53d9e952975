/*
 * test_threads_no_main_loop.c - three bugs of issue 40, each found against the headers alone:
 *   - a switch to the main thread with no main loop carried on on the worker, SUCCEEDED
 *     (threads.h: it completes FAULTED with TD_ERR_NO_LOOP; run-on-pool with return_to_main
 *     likewise publishes that reason instead of the work's outcome);
 *   - TD_TIMING_COUNT was accepted as a timing by post, post_at and add_item (loop.h:
 *     TD_E_INVALID), and then never ran;
 *   - freeing a source armed with cancel_after from another thread raced the loop item's
 *     read of free_requested (TSan: this file is built with it, test_threads_*).
 */
#include <tandem/tandem.h>
#include "td_test.h"
#include "td_test_runtime.h"

typedef struct { int64_t unused; } hop_frame;
static void hop_step(td_runner *r, hop_frame *f)
{
    (void)f;
    TD_BEGIN(r);
    TD_AWAIT(r, td_switch_to_thread_pool());
    TD_AWAIT(r, td_switch_to_main_thread(TD_TIMING_UPDATE));
    TD_RETURN_VALUE(r, td_is_main_thread());
    TD_END(r);
}
TD_METHOD_DEFINE(hop, hop_frame, hop_step);

/* The method's task, waited for by polling: no main loop runs frames any more. */
static int wait_done(td_task t)
{
    int64_t end = now_ns() + 10000000000LL;
    while (status_of(t) == TD_PENDING && now_ns() < end)
        sched_yield();
    return status_of(t) != TD_PENDING;
}

/* The runtime with one worker and its main loop destroyed. */
static int init_without_main_loop(void)
{
    if (runtime_init_with_workers(1) != TD_OK)
        return 0;
    td_loop_destroy(td_loop_main());
    return td_loop_main() == NULL;
}

/* t, made with no main loop, ends FAULTED with TD_ERR_NO_LOOP (the runtime then shut down). */
static int ends_without_main_loop(td_task_i64 t)
{
    int done = wait_done(t.task);
    td_outcome o;
    int rc = td_task_i64_get(t, &o);
    td_runtime_shutdown();
    if (!done || rc != TD_OK || o.status != TD_FAULTED || o.error.code != TD_ERR_NO_LOOP) {
        fprintf(stderr, "done %d, rc %d, status %d, error %d\n", done, rc, (int)o.status, o.error.code);
        return 0;
    }
    return 1;
}

static void switch_to_main_without_main_loop_faults(void)
{
    TD_CHECK(init_without_main_loop());
    TD_CHECK(ends_without_main_loop(td_runner_start_i64(td_runner_rent(&hop_method))));
}

static td_status work_returns_7(void *arg, td_cancel_token cancel, int64_t *result, td_error *error)
{
    (void)arg; (void)cancel; (void)error;
    *result = 7;
    return TD_SUCCEEDED;
}

static void return_to_main_without_main_loop_faults(void)
{
    TD_CHECK(init_without_main_loop());
    TD_CHECK(ends_without_main_loop(td_run_on_thread_pool_i64(work_returns_7, NULL, 1, td_cancel_none())));
}

/* Without a main loop the return is refused; with one it still publishes on the main thread. */
static void return_to_main_with_main_loop_succeeds(void)
{
    TD_CHECK_EQ(TD_OK, runtime_init_with_workers(1));
    td_task_i64 t = td_run_on_thread_pool_i64(work_returns_7, NULL, 1, td_cancel_none());
    int done = pump_until_done(t.task);
    td_outcome o;
    int rc = td_task_i64_get(t, &o);
    td_runtime_shutdown();
    TD_CHECK(done);
    TD_CHECK_EQ(TD_OK, rc);
    TD_CHECK_EQ(TD_SUCCEEDED, o.status);
    TD_CHECK_EQ(7, o.value);
}

static void count_run(void *arg) { (*(int *)arg)++; }
static int item_counts(void *arg) { (*(int *)arg)++; return 1; }

static void timing_count_is_no_timing(void)
{
    TD_CHECK_EQ(TD_OK, td_runtime_init(NULL));
    int ran = 0;
    for (int eof = 0; eof < 2; eof++) {
        td_loop *loop = fresh_loop_with(NULL, eof);
        TD_CHECK_EQ(TD_E_INVALID, td_loop_post(loop, TD_TIMING_COUNT, count_run, &ran));
        TD_CHECK_EQ(TD_E_INVALID, td_loop_post_at(loop, TD_TIMING_COUNT, td_loop_frame(loop) + 1, count_run, &ran));
        TD_CHECK_EQ(TD_E_INVALID, td_loop_add_item(loop, TD_TIMING_COUNT, item_counts, &ran));
        TD_CHECK_EQ(TD_E_INVALID, td_loop_post(loop, (td_timing)(TD_TIMING_COUNT + 1), count_run, &ran));
        TD_CHECK_EQ(0, td_loop_is_installed(loop, TD_TIMING_COUNT));
        /* the last timing is still one */
        TD_CHECK_EQ(TD_OK, td_loop_post(loop, TD_TIMING_LATE_UPDATE_AFTER_SCRIPT, count_run, &ran));
        td_loop_run_frame(loop);
        td_loop_run_frame(loop);
        TD_CHECK_EQ(eof + 1, ran);
        td_loop_destroy(loop);
    }
    td_runtime_shutdown();
}

/* An end-of-frame wait still runs in its phase (the slot behind TD_TIMING_COUNT is the
 * runtime's own), and the phase reads TD_TIMING_COUNT as documented. */
static void end_of_frame_waits_still_run(void)
{
    TD_CHECK_EQ(TD_OK, td_runtime_init(NULL));
    td_task t = td_wait_for_end_of_frame(NULL);
    td_loop_run_frame(td_loop_main());
    td_loop_run_frame(td_loop_main());
    td_outcome o;
    int rc = td_task_get(t, &o);
    td_runtime_shutdown();
    TD_CHECK_EQ(TD_OK, rc);
    TD_CHECK_EQ(TD_SUCCEEDED, o.status);
}

typedef struct { td_cancel_source *cs; volatile uint32_t freed; } freer;

static void *free_on_thread(void *arg)
{
    freer *f = (freer *)arg;
    td_cancel_source_free(f->cs);
    td_atomic_store_release_u32(&f->freed, 1);
    return NULL;
}

static void cancel_after_freed_on_another_thread(void)
{
    TD_CHECK_EQ(TD_OK, td_runtime_init(NULL));
    for (int round = 0; round < 50; round++) {
        freer f = { td_cancel_source_new(), 0 };
        TD_CHECK(f.cs != NULL);
        TD_CHECK_EQ(TD_OK, td_cancel_source_cancel_after(f.cs, 1000000000, TD_CLOCK_REALTIME, td_loop_main()));
        pthread_t th;
        TD_CHECK(pthread_create(&th, NULL, free_on_thread, &f) == 0);
        while (!td_atomic_load_u32(&f.freed))
            td_loop_run_frame(td_loop_main());
        pthread_join(th, NULL);
        td_loop_run_frame(td_loop_main());      /* the item sees the free and destroys */
    }
    td_runtime_shutdown();
}

int main(void)
{
    TD_RUN(switch_to_main_without_main_loop_faults);
    TD_RUN(return_to_main_without_main_loop_faults);
    TD_RUN(return_to_main_with_main_loop_succeeds);
    TD_RUN(timing_count_is_no_timing);
    TD_RUN(end_of_frame_waits_still_run);
    TD_RUN(cancel_after_freed_on_another_thread);
    return TD_TEST_SUMMARY();
}
