/*
 * test_threads_net.c - cross-thread behaviours the mutation check (scripts/mutate.py,
 * tests/mutation/mutants.txt) found unguarded by the other tests (issue 40): each test names
 * the mutant it kills. Built with TSan too.
 */
#include <pthread.h>
#include <time.h>
#include "td_test.h"
#include "td_test_runtime.h"
#include "td_test_rounds.h"
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

/* ---- K01, K02, K04: a completion on the CAS path racing a registration runs it once ------ */

#define RACE_ROUNDS 20000
static void race_release(td_source *s) { td_source_recycle(s); }
static const td_source_ops race_ops = { race_release, NULL, NULL, NULL, "net-race" };
static td_source race_source;                /* nobody owns it: every party takes the CAS path */
static td_task race_task;
static volatile uint32_t race_runs;
static volatile int64_t race_got;

static void race_continuation(void *arg)
{
    td_outcome o;
    (void)arg;
    race_got = td_task_get(race_task, &o) == TD_OK ? o.value : -1;
    td_atomic_fetch_add_u32(&race_runs, 1);
}

static void race_register(uint32_t round, void *arg)
{
    (void)round;
    (void)arg;
    if (td_task_on_completed(race_task, race_continuation, NULL) == TD_DONE)
        race_continuation(NULL);             /* complete already: consume it here */
}

/* Each round the worker registers as the main thread completes (td_source_complete, or in
 * every other pair of rounds td_source_try_complete's claim), with a delay on the main side
 * that differs from round to round so that each side wins in some rounds, and the
 * registration lands between the completer's read of the word and its CAS in a few (K01,
 * K02 and K04 were each caught within 2200 rounds in 3 runs of each). */
static void completion_races_registration_on_cas_path(void)
{
    td_test_rounds w;
    td_source_init(&race_source, &race_ops);
    TD_CHECK(td_test_rounds_start(&w, race_register, NULL) == 0);
    uint32_t bad = 0;
    for (uint32_t round = 1; round <= RACE_ROUNDS && !bad; round++) {
        race_task = td_task_of(&race_source, td_source_token(&race_source));
        uint32_t runs = td_atomic_load_u32(&race_runs);
        td_test_rounds_go(&w, round);
        for (uint32_t i = (round * 7919u) % (round & 1 ? 16u : 256u); i > 0; i--)
            td_cpu_relax();
        if (round & 2)
            td_source_try_complete(&race_source, race_task.token, TD_SUCCEEDED, (int64_t)round, NULL);
        else
            td_source_complete(&race_source, race_task.token, TD_SUCCEEDED, (int64_t)round, NULL);
        td_test_rounds_wait(&w, round);
        for (uint32_t turn = 0, turns = 0; td_atomic_load_u32(&race_runs) == runs && turns < 1000000u; turns++)
            td_test_wait_turn(&turn);
        if (td_atomic_load_u32(&race_runs) != runs + 1 || race_got != (int64_t)round)
            bad = round;                     /* a continuation lost (or run twice) */
    }
    td_test_rounds_stop(&w);
    TD_CHECK_EQ(0, bad);
}

/* ---- F05: when_any's inputs completed on two threads at once: one claim, one winner ------- */

#define CLAIM_ROUNDS 5000
static td_source claim_source[2];            /* nobody owns them: the CAS path on both threads */
static td_task claim_task[2];

static void claim_complete_second(uint32_t round, void *arg)
{
    (void)arg;
    td_source_complete(&claim_source[1], claim_task[1].token, TD_SUCCEEDED, 2000 + (int64_t)round, NULL);
}

/* The value reported and the winner index must name the same input: a second claimant would
 * overwrite the index after the first one completed the promise (TSan also sees the race on
 * a claim that is not atomic). */
static void when_any_claim_races_on_two_threads(void)
{
    td_test_rounds w;
    td_source_init(&claim_source[0], &race_ops);
    td_source_init(&claim_source[1], &race_ops);
    TD_CHECK(td_test_rounds_start(&w, claim_complete_second, NULL) == 0);
    uint32_t bad = 0;
    for (uint32_t round = 1; round <= CLAIM_ROUNDS && !bad; round++) {
        td_task_i64 in[2];
        int winner = -1;
        for (int i = 0; i < 2; i++) {
            claim_task[i] = td_task_of(&claim_source[i], td_source_token(&claim_source[i]));
            in[i] = td_task_i64_of(claim_task[i]);
        }
        td_task_i64 any = td_when_any_i64(in, 2, &winner);
        td_test_rounds_go(&w, round);
        for (uint32_t i = (round * 7919u) % (round & 1 ? 16u : 256u); i > 0; i--)
            td_cpu_relax();
        td_source_complete(&claim_source[0], claim_task[0].token, TD_SUCCEEDED, 1000 + (int64_t)round, NULL);
        td_test_rounds_wait(&w, round);
        td_outcome o;
        if (td_task_i64_get(any, &o) != TD_OK || winner < 0 || o.value != (winner + 1) * 1000 + (int64_t)round)
            bad = round;
    }
    td_test_rounds_stop(&w);
    TD_CHECK_EQ(0, bad);
}

int main(void)
{
    td_runtime_init(NULL);
    TD_RUN(worker_ring_grows_after_wrap);
    TD_RUN(unregister_waits_for_running_callback);
    TD_RUN(on_completed_stale_token_from_thread);
    TD_RUN(disown_waits_for_open_window);
    TD_RUN(completion_races_registration_on_cas_path);
    TD_RUN(when_any_claim_races_on_two_threads);
    td_runtime_shutdown();
    return TD_TEST_SUMMARY();
}
