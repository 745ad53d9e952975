/*
 * test_threads_net.c - cross-thread behaviours the mutation check (scripts/mutate.py,
 * tests/mutation/mutants.txt) found unguarded by the other tests (issue 40): each test names
 * the mutant it kills. Built with TSan too.
 */
#include <pthread.h>
#include <time.h>
#include "td_test.h"
#include "td_test_runtime.h"
#include <tandem/tandem.h>

static void pause_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

/* ---- L01: the worker ring grows after wrapping around, in queue order -------------------- */

#define JOBS 700                             /* more than twice the ring's first 256 slots */
static volatile uint32_t gate_open, jobs_done;
static int job_order[JOBS];

static void gate_job(void *arg)
{
    (void)arg;
    while (!td_atomic_load_u32(&gate_open))
        pause_ms(1);
}

static void order_job(void *arg)
{
    uint32_t n = td_atomic_load_u32(&jobs_done);
    job_order[n] = (int)(intptr_t)arg;       /* one worker: the jobs run one at a time */
    td_atomic_store_release_u32(&jobs_done, n + 1);
}

static void worker_ring_grows_after_wrap(void)
{
    /* One worker, held by the first job: the head has moved (it popped that job) when the
     * ring fills and grows, twice. */
    TD_CHECK_EQ(TD_OK, td_thread_pool_start(1));
    TD_CHECK_EQ(TD_OK, td_thread_pool_post(gate_job, NULL));
    pause_ms(20);                            /* the worker pops the gate job (head 1) */
    for (int i = 0; i < JOBS; i++)
        TD_CHECK_EQ(TD_OK, td_thread_pool_post(order_job, (void *)(intptr_t)i));
    td_atomic_store_release_u32(&gate_open, 1);
    td_thread_pool_stop();                   /* runs what is queued, joins the worker */
    TD_CHECK_EQ(JOBS, td_atomic_load_u32(&jobs_done));
    for (int i = 0; i < JOBS; i++)
        TD_CHECK_EQ(i, job_order[i]);
}

/* ---- C01: td_cancel_unregister waits for the callback running on another thread -------- */

static volatile uint32_t callback_started, callback_finished;

static void slow_callback(void *arg)
{
    (void)arg;
    td_atomic_store_release_u32(&callback_started, 1);
    pause_ms(100);
    td_atomic_store_release_u32(&callback_finished, 1);
}

static void *cancel_on_thread(void *arg)
{
    td_cancel_source_cancel((td_cancel_source *)arg);
    return NULL;
}

static void unregister_waits_for_running_callback(void)
{
    td_cancel_source *cs = td_cancel_source_new();
    td_cancel_registration reg = td_cancel_register(td_cancel_source_token(cs), slow_callback, NULL);
    pthread_t th;
    TD_CHECK(pthread_create(&th, NULL, cancel_on_thread, cs) == 0);
    while (!td_atomic_load_u32(&callback_started))
        pause_ms(1);
    td_cancel_unregister(reg);               /* cancel.h: returns once the callback has */
    uint32_t finished = td_atomic_load_u32(&callback_finished);
    pthread_join(th, NULL);
    td_cancel_source_free(cs);
    TD_CHECK_EQ(1, finished);
}

/* ---- K03: a registration with a recycled token is stale on the CAS path too ------------- */

static td_task stale_task;
static int stale_rc;
static void noop(void *arg) { (void)arg; }

static void *register_on_thread(void *arg)
{
    (void)arg;
    stale_rc = td_task_on_completed(stale_task, noop, NULL);
    return NULL;
}

static void on_completed_stale_token_from_thread(void)
{
    td_completion_source *cs = td_completion_source_new();
    stale_task = td_completion_source_task(cs);
    td_completion_source_set_result(cs, 1);
    td_outcome o;
    TD_CHECK_EQ(TD_OK, td_task_get(stale_task, &o));
    td_completion_source_reset(cs);          /* the next version is pending */
    pthread_t th;
    TD_CHECK(pthread_create(&th, NULL, register_on_thread, NULL) == 0);
    pthread_join(th, NULL);
    td_completion_source_free(cs);
    TD_CHECK_EQ(TD_E_STALE, stale_rc);
}

/* ---- H01: a revocation waits for the main thread's window to close ---------------------- */

/* The main thread's window flag (ownership.c); the test holds it as a window would. */
extern volatile uint32_t td_main_busy_;
static td_completion_source *window_cs;
static volatile uint32_t window_set_done;

static void *set_result_on_thread(void *arg)
{
    (void)arg;
    td_completion_source_set_result(window_cs, 5);   /* takes the ownership away first */
    td_atomic_store_release_u32(&window_set_done, 1);
    return NULL;
}

static void disown_waits_for_open_window(void)
{
    if (td_main_writer_thread_ == 0)
        return;                                   /* no membarrier: no window is ever opened */
    window_cs = td_completion_source_new();       /* rented here: the main thread owns it */
    td_task_i64 t = td_completion_source_task_i64(window_cs);
    pthread_t th;
    td_atomic_store_release_u32(&td_main_busy_, 1);   /* as inside a window: no runtime call */
    if (pthread_create(&th, NULL, set_result_on_thread, NULL) != 0) {
        td_atomic_store_release_u32(&td_main_busy_, 0);
        TD_CHECK(0);
    }
    pause_ms(50);
    uint32_t done_in_window = td_atomic_load_u32(&window_set_done);
    td_atomic_store_release_u32(&td_main_busy_, 0);
    pthread_join(th, NULL);
    td_outcome o;
    int rc = td_task_i64_get(t, &o);
    td_completion_source_free(window_cs);
    TD_CHECK_EQ(0, done_in_window);               /* it waited for the window to close */
    TD_CHECK_EQ(TD_OK, rc);
    TD_CHECK_EQ(5, o.value);
}

int main(void)
{
    td_runtime_init(NULL);
    TD_RUN(worker_ring_grows_after_wrap);
    TD_RUN(unregister_waits_for_running_callback);
    TD_RUN(on_completed_stale_token_from_thread);
    TD_RUN(disown_waits_for_open_window);
    td_runtime_shutdown();
    return TD_TEST_SUMMARY();
}
