/* Worker pool, thread switches and run-on-pool (SMOKE 21, 22, 23): thread identities,
 * outcomes, completion threads and context flow. Built with TSan too; stress loops are
 * bounded in rounds and time, and every round asserts its value. */
#include <tandem/tandem.h>
#include <time.h>
#include <sched.h>
#include "td_test.h"
#include "td_test_runtime.h"

/* ---- SMOKE 21: switch to the pool and back ------------------------------------------- */

typedef struct { uintptr_t before, on_pool, back; int64_t worker_flag; } hop_frame;
static void hop_step(td_runner *r, hop_frame *f)
{
    TD_BEGIN(r);
    f->before = td_thread_self();
    TD_AWAIT(r, td_switch_to_thread_pool());
    f->on_pool = td_thread_self();
    f->worker_flag = td_is_worker_thread();
    TD_AWAIT(r, td_switch_to_main_thread(TD_TIMING_UPDATE));
    f->back = td_thread_self();
    TD_RETURN_VALUE(r, (f->before != f->on_pool) * 100 + (f->back == f->before) * 10 + f->worker_flag);
    TD_END(r);
}
TD_METHOD_DEFINE(hop, hop_frame, hop_step);

static void switch_round_trip(void)
{
    for (int round = 0; round < 200; round++) {
        td_runner *r = td_runner_rent(&hop_method);
        td_task_i64 t = td_runner_start_i64(r);
        TD_CHECK(t.task.source != NULL);          /* the switch is never inline */
        TD_CHECK(pump_until_done(t.task));
        td_outcome o;
        TD_CHECK_EQ(TD_OK, td_task_i64_get(t, &o));
        TD_CHECK_EQ(TD_SUCCEEDED, o.status);
        TD_CHECK_EQ(111, o.value);                 /* different thread, back on main, a worker */
    }
    TD_CHECK(td_is_worker_thread() == 0);
}

typedef struct { int64_t unused; } inline_frame;
static void inline_main_step(td_runner *r, inline_frame *f)
{
    (void)f;
    TD_BEGIN(r);
    TD_AWAIT(r, td_switch_to_main_thread(TD_TIMING_PRE_UPDATE));
    TD_RETURN_VALUE(r, 5);
    TD_END(r);
}
TD_METHOD_DEFINE(inline_main, inline_frame, inline_main_step);

static void switch_to_main_is_inline_on_main(void)
{
    uint32_t frame = td_loop_frame(td_loop_main());
    td_runner *r = td_runner_rent(&inline_main_method);
    td_task_i64 t = td_runner_start_i64(r);
    TD_CHECK(t.task.source == NULL);             /* completed synchronously */
    TD_CHECK_EQ(5, t.value);
    TD_CHECK_EQ(frame, td_loop_frame(td_loop_main()));
    td_status st;
    TD_CHECK_EQ(TD_OK, td_task_status(td_switch_to_main_thread(TD_TIMING_UPDATE), &st));
    TD_CHECK_EQ(TD_SUCCEEDED, st);
    TD_CHECK_EQ(TD_OK, td_task_status(td_switch_to_thread_pool(), &st));
    TD_CHECK_EQ(TD_PENDING, st);
}

/* The main-thread switch from a worker resumes at the asked timing, on the main thread. */
static volatile uint32_t timing_seen = 0xFFFFFFFFu;
static uintptr_t timing_thread;
static void note_timing(void *arg)
{
    (void)arg;
    timing_thread = td_thread_self();
    td_atomic_store_u32(&timing_seen, (uint32_t)td_loop_current_timing(td_loop_main()));
}
static void post_main_switch(void *arg)
{
    (void)arg;
    td_task t = td_switch_to_main_thread(TD_TIMING_LAST_PRE_LATE_UPDATE);
    td_status st;
    if (td_task_status(t, &st) == TD_OK && st == TD_PENDING)
        td_task_on_completed(t, note_timing, NULL);
}

static void switch_to_main_from_worker_uses_timing(void)
{
    TD_CHECK_EQ(TD_OK, td_thread_pool_post(post_main_switch, NULL));
    int64_t end = now_ns() + 10000000000LL;
    while (td_atomic_load_u32(&timing_seen) == 0xFFFFFFFFu && now_ns() < end) {
        td_loop_run_frame(td_loop_main());
        sched_yield();
    }
    TD_CHECK_EQ(TD_TIMING_LAST_PRE_LATE_UPDATE, td_atomic_load_u32(&timing_seen));
    TD_CHECK(timing_thread == td_main_thread_id());
}

/* ---- SMOKE 22: run on the pool ---------------------------------------------------------- */

static volatile uint32_t work_runs;
static uintptr_t work_thread;

static td_status square_work(void *arg, td_cancel_token ct, int64_t *result, td_error *err)
{
    (void)ct;
    (void)err;
    work_thread = td_thread_self();
    td_atomic_fetch_add_u32(&work_runs, 1);
    int64_t x = (int64_t)(intptr_t)arg;
    *result = x * x;
    return TD_SUCCEEDED;
}

/* Held until the test has registered its continuation, so the completion thread is
 * decided by the runtime, not by who wins a race with the registration. */
static volatile uint32_t square_gate = 1;
static td_status gated_square_work(void *arg, td_cancel_token ct, int64_t *result, td_error *err)
{
    while (!td_atomic_load_u32(&square_gate))
        sched_yield();
    return square_work(arg, ct, result, err);
}

static td_status failing_work(void *arg, td_cancel_token ct, td_error *err)
{
    (void)arg;
    (void)ct;
    td_atomic_fetch_add_u32(&work_runs, 1);
    err->code = TD_ERR_USER + 7;
    err->message = "work failed";
    return TD_FAULTED;
}

/* Observes its token and reports cancellation itself. */
static td_status cooperative_work(void *arg, td_cancel_token ct, td_error *err)
{
    (void)err;
    td_cancel_source_cancel((td_cancel_source *)arg);    /* cancelled while running */
    td_atomic_fetch_add_u32(&work_runs, 1);
    return td_cancel_is_requested(ct) ? TD_CANCELED : TD_SUCCEEDED;
}

static uintptr_t completed_on;
static volatile uint32_t completed_flag;
static void note_completion(void *arg)
{
    (void)arg;
    completed_on = td_thread_self();
    td_atomic_store_u32(&completed_flag, 1);
}

static void run_on_pool_pre_cancel(void)
{
    td_cancel_source *cs = td_cancel_source_new();
    td_cancel_source_cancel(cs);
    uint32_t runs = td_atomic_load_u32(&work_runs);
    td_task_i64 t = td_run_on_thread_pool_i64(square_work, (void *)(intptr_t)3, 1, td_cancel_source_token(cs));
    td_outcome o;
    TD_CHECK_EQ(TD_OK, td_task_i64_get(t, &o));   /* already complete: no frame, no worker */
    TD_CHECK_EQ(TD_CANCELED, o.status);
    TD_CHECK(o.error.cancel == cs);
    td_task u = td_run_on_thread_pool(failing_work, NULL, 0, td_cancel_source_token(cs));
    TD_CHECK_EQ(TD_OK, td_task_get(u, &o));
    TD_CHECK_EQ(TD_CANCELED, o.status);
    TD_CHECK_EQ(runs, td_atomic_load_u32(&work_runs));
    td_cancel_source_free(cs);
}

static void run_on_pool_success_completion_threads(void)
{
    for (int return_to_main = 0; return_to_main < 2; return_to_main++) {
        for (int round = 1; round <= 50; round++) {
            td_atomic_store_u32(&completed_flag, 0);
            td_atomic_store_u32(&square_gate, 0);
            td_task_i64 t = td_run_on_thread_pool_i64(gated_square_work, (void *)(intptr_t)round, return_to_main, td_cancel_none());
            TD_CHECK_EQ(TD_OK, td_task_on_completed(t.task, note_completion, NULL));
            td_atomic_store_u32(&square_gate, 1);
            if (return_to_main) {
                TD_CHECK(pump_until_done(t.task));
            } else {
                TD_CHECK(spin_until(&completed_flag, 1));
            }
            TD_CHECK(spin_until(&completed_flag, 1));
            TD_CHECK(work_thread != td_main_thread_id());
            if (return_to_main)
                TD_CHECK(completed_on == td_main_thread_id());
            else
                TD_CHECK(completed_on == work_thread);
            td_outcome o;
            TD_CHECK_EQ(TD_OK, td_task_i64_get(t, &o));
            TD_CHECK_EQ(TD_SUCCEEDED, o.status);
            TD_CHECK_EQ((int64_t)round * round, o.value);
            TD_CHECK_EQ(TD_E_STALE, td_task_i64_get(t, &o));
        }
    }
}

static void run_on_pool_held_return_waits_for_frame(void)
{
    uint32_t runs = td_atomic_load_u32(&work_runs);
    td_task_i64 t = td_run_on_thread_pool_i64(square_work, (void *)(intptr_t)9, 1, td_cancel_none());
    TD_CHECK(spin_until(&work_runs, runs + 1));
    /* The work has run; without a frame the outcome stays held for the main thread. */
    td_status st;
    for (int i = 0; i < 1000; i++)
        sched_yield();
    TD_CHECK_EQ(TD_OK, td_task_status(t.task, &st));
    TD_CHECK_EQ(TD_PENDING, st);
    td_loop_run_frame(td_loop_main());
    TD_CHECK_EQ(TD_OK, td_task_status(t.task, &st));
    TD_CHECK_EQ(TD_SUCCEEDED, st);
    td_outcome o;
    TD_CHECK_EQ(TD_OK, td_task_i64_get(t, &o));
    TD_CHECK_EQ(81, o.value);
}

static void run_on_pool_fault_and_cancel(void)
{
    for (int return_to_main = 0; return_to_main < 2; return_to_main++) {
        td_task t = td_run_on_thread_pool(failing_work, NULL, return_to_main, td_cancel_none());
        TD_CHECK(pump_until_done(t));
        td_outcome o;
        TD_CHECK_EQ(TD_OK, td_task_get(t, &o));
        TD_CHECK_EQ(TD_FAULTED, o.status);
        TD_CHECK_EQ(TD_ERR_USER + 7, o.error.code);
        TD_CHECK(strcmp(o.error.message, "work failed") == 0);

        td_cancel_source *cs = td_cancel_source_new();
        t = td_run_on_thread_pool(cooperative_work, cs, return_to_main, td_cancel_source_token(cs));
        TD_CHECK(pump_until_done(t));
        TD_CHECK_EQ(TD_OK, td_task_get(t, &o));
        TD_CHECK_EQ(TD_CANCELED, o.status);
        TD_CHECK_EQ(TD_ERR_CANCELED, o.error.code);
        TD_CHECK(o.error.cancel == cs);
        td_cancel_source_free(cs);
    }
}

/* Cancelled while queued behind a busy pool: canceled, the work never runs. */
static volatile uint32_t gate_open, gates_entered;
static void block_worker(void *arg)
{
    (void)arg;
    td_atomic_fetch_add_u32(&gates_entered, 1);
    spin_until(&gate_open, 1);
}

static void run_on_pool_cancel_while_queued(void)
{
    uint32_t n = td_thread_pool_size();
    td_atomic_store_u32(&gate_open, 0);
    td_atomic_store_u32(&gates_entered, 0);
    for (uint32_t i = 0; i < n; i++)
        TD_CHECK_EQ(TD_OK, td_thread_pool_post(block_worker, NULL));
    TD_CHECK(spin_until(&gates_entered, n));
    td_cancel_source *cs = td_cancel_source_new();
    uint32_t runs = td_atomic_load_u32(&work_runs);
    td_task_i64 t = td_run_on_thread_pool_i64(square_work, (void *)(intptr_t)4, 0, td_cancel_source_token(cs));
    td_cancel_source_cancel(cs);
    td_atomic_store_u32(&gate_open, 1);
    TD_CHECK(pump_until_done(t.task));
    td_outcome o;
    TD_CHECK_EQ(TD_OK, td_task_i64_get(t, &o));
    TD_CHECK_EQ(TD_CANCELED, o.status);
    TD_CHECK(o.error.cancel == cs);
    TD_CHECK_EQ(runs, td_atomic_load_u32(&work_runs));
    td_cancel_source_free(cs);
}

/* An async method awaiting run-on-pool with return-to-main resumes on the main thread. */
typedef struct { int64_t sum; int i; uintptr_t resumed; } sum_frame;
static void sum_step(td_runner *r, sum_frame *f)
{
    int64_t v = 0;
    TD_BEGIN(r);
    for (f->i = 1; f->i <= 5; f->i++) {
        TD_AWAIT_VALUE(r, td_run_on_thread_pool_i64(square_work, (void *)(intptr_t)f->i, 1, td_cancel_none()), v);
        f->sum += v;
        if (td_thread_self() != td_main_thread_id())
            TD_FAIL(r, TD_ERR_USER, "resumed off the main thread");
    }
    TD_RETURN_VALUE(r, f->sum);
    TD_END(r);
}
TD_METHOD_DEFINE(sum, sum_frame, sum_step);

static void run_on_pool_awaited_by_method(void)
{
    td_runner *r = td_runner_rent(&sum_method);
    td_task_i64 t = td_runner_start_i64(r);
    TD_CHECK(pump_until_done(t.task));
    td_outcome o;
    TD_CHECK_EQ(TD_OK, td_task_i64_get(t, &o));
    TD_CHECK_EQ(TD_SUCCEEDED, o.status);
    TD_CHECK_EQ(1 + 4 + 9 + 16 + 25, o.value);
}

static void run_on_pool_stress(void)
{
    int64_t end = now_ns() + 20000000000LL;
    for (int round = 0; round < 1000 && now_ns() < end; round++) {
        td_task_i64 t = td_run_on_thread_pool_i64(square_work, (void *)(intptr_t)round, round & 1, td_cancel_none());
        TD_CHECK(pump_until_done(t.task));
        td_outcome o;
        TD_CHECK_EQ(TD_OK, td_task_i64_get(t, &o));
        TD_CHECK_EQ((int64_t)round * round, o.value);
    }
}

/* ---- SMOKE 23: context flow across run-on-pool ---------------------------------------- */

static void *seen_context;
static td_status read_context(void *arg, td_cancel_token ct, td_error *err)
{
    (void)arg;
    (void)ct;
    (void)err;
    seen_context = td_context_current();
    return TD_SUCCEEDED;
}
static void *leaked_context = (void *)1;
static volatile uint32_t leak_checked;
static void check_leak(void *arg)
{
    (void)arg;
    leaked_context = td_context_current();
    td_atomic_store_u32(&leak_checked, 1);
}

static void run_on_pool_context_flow(void)
{
    static int ctx_a;
    td_context_set(&ctx_a);
    for (int flow = 1; flow >= 0; flow--) {
        td_flow_set(flow);
        seen_context = (void *)1;
        td_task t = td_run_on_thread_pool(read_context, NULL, 1, td_cancel_none());
        TD_CHECK(pump_until_done(t));
        td_task_forget_result(t);
        TD_CHECK(seen_context == (flow ? (void *)&ctx_a : NULL));
        TD_CHECK(td_context_current() == &ctx_a);   /* the caller's context is untouched */
        /* Suppressed flow: nothing is captured. */
        int was = td_flow_suppress();
        t = td_run_on_thread_pool(read_context, NULL, 0, td_cancel_none());
        td_flow_restore(was);
        TD_CHECK(pump_until_done(t));
        td_task_forget_result(t);
        TD_CHECK(seen_context == NULL);
        /* The flowed context does not leak into later jobs (every worker checked). */
        for (uint32_t i = 0; i < td_thread_pool_size() * 4; i++) {
            td_atomic_store_u32(&leak_checked, 0);
            TD_CHECK_EQ(TD_OK, td_thread_pool_post(check_leak, NULL));
            TD_CHECK(spin_until(&leak_checked, 1));
            TD_CHECK(leaked_context == NULL);
        }
    }
    td_flow_set(0);
    td_context_set(NULL);
}

/* ---- pool lifetime ---------------------------------------------------------------------- */

static void pool_restart_and_no_pool(void)
{
    TD_CHECK_EQ(2, td_thread_pool_size());            /* started by td_runtime_init */
    TD_CHECK_EQ(TD_E_INVALID, td_thread_pool_start(3));
    td_thread_pool_stop();
    TD_CHECK_EQ(0, td_thread_pool_size());
    /* Without a pool: the switch fails instead of running inline; run-on-pool faults. */
    td_runner *r = td_runner_rent(&hop_method);
    td_task_i64 t = td_runner_start_i64(r);
    td_outcome o;
    TD_CHECK_EQ(TD_OK, td_task_i64_get(t, &o));
    TD_CHECK_EQ(TD_FAULTED, o.status);
    TD_CHECK_EQ(TD_E_NOT_SUPPORTED, o.error.code);
    t = td_run_on_thread_pool_i64(square_work, (void *)(intptr_t)2, 0, td_cancel_none());
    TD_CHECK_EQ(TD_OK, td_task_i64_get(t, &o));
    TD_CHECK_EQ(TD_FAULTED, o.status);
    TD_CHECK_EQ(TD_E_NOT_SUPPORTED, o.error.code);
    TD_CHECK_EQ(TD_E_NOT_SUPPORTED, td_thread_pool_post(check_leak, NULL));
    /* Explicit start. */
    TD_CHECK_EQ(TD_OK, td_thread_pool_start(3));
    TD_CHECK_EQ(3, td_thread_pool_size());
    t = td_run_on_thread_pool_i64(square_work, (void *)(intptr_t)12, 0, td_cancel_none());
    TD_CHECK(pump_until_done(t.task));
    TD_CHECK_EQ(TD_OK, td_task_i64_get(t, &o));
    TD_CHECK_EQ(144, o.value);
}

/* Stop runs what is queued: a burst larger than the ring's first size grows it. */
static volatile uint32_t burst_runs;
static void burst_job(void *arg) { (void)arg; td_atomic_fetch_add_u32(&burst_runs, 1); }

static void pool_stop_drains_queue(void)
{
    td_atomic_store_u32(&burst_runs, 0);
    for (int i = 0; i < 1000; i++)
        TD_CHECK_EQ(TD_OK, td_thread_pool_post(burst_job, NULL));
    td_thread_pool_stop();
    TD_CHECK_EQ(1000, td_atomic_load_u32(&burst_runs));
    TD_CHECK_EQ(TD_OK, td_thread_pool_start(2));
}

int main(void)
{
    if (runtime_init_with_workers(2) != TD_OK)
        return 2;
    TD_RUN(pool_restart_and_no_pool);
    TD_RUN(switch_round_trip);
    TD_RUN(switch_to_main_is_inline_on_main);
    TD_RUN(switch_to_main_from_worker_uses_timing);
    TD_RUN(run_on_pool_pre_cancel);
    TD_RUN(run_on_pool_success_completion_threads);
    TD_RUN(run_on_pool_held_return_waits_for_frame);
    TD_RUN(run_on_pool_fault_and_cancel);
    TD_RUN(run_on_pool_cancel_while_queued);
    TD_RUN(run_on_pool_awaited_by_method);
    TD_RUN(run_on_pool_context_flow);
    TD_RUN(pool_stop_drains_queue);
    TD_RUN(run_on_pool_stress);
    td_runtime_shutdown();
    return TD_TEST_SUMMARY();
}
