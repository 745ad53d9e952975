/* Cross-thread edges of the loop (issue 12): a worker posting while the loop is retired,
 * and waits armed from a worker while the loop runs frames (the clocks and the running
 * timing are read by the worker). Built with TSan too: before the fix the inbox was freed
 * without its lock and the clocks and `current` were plain fields (TSan data races, once
 * a heap-use-after-free under ASan). Bounded: fixed rounds, 10 s waits. */
#include <tandem/tandem.h>
#include "td_test.h"
#include "td_test_runtime.h"

typedef struct {
    td_loop *loop;
    volatile uint32_t accepted;     /* posts that returned TD_OK */
    volatile uint32_t ran;          /* continuations that ran */
    volatile uint32_t refused;      /* posts refused with TD_E_RETIRED */
    volatile uint32_t other;        /* any other return code */
} poster;

static void count_ran(void *arg)
{
    poster *p = (poster *)arg;
    td_atomic_fetch_add_u32(&p->ran, 1);
}

static void *post_until_retired(void *arg)
{
    poster *p = (poster *)arg;
    for (;;) {
        int rc = td_loop_post(p->loop, TD_TIMING_UPDATE, count_ran, p);
        if (rc == TD_OK) {
            td_atomic_fetch_add_u32(&p->accepted, 1);
            continue;
        }
        if (rc == TD_E_RETIRED)
            td_atomic_fetch_add_u32(&p->refused, 1);
        else
            td_atomic_fetch_add_u32(&p->other, 1);
        return NULL;
    }
}

static void worker_posts_while_loop_retires(void)
{
    td_loop *main_loop = td_loop_main();
    for (int round = 0; round < 50; round++) {
        poster p;
        memset(&p, 0, sizeof(p));
        p.loop = fresh_loop_with(NULL, 1);
        td_loop_set_main(main_loop);
        pthread_t th;
        TD_CHECK(pthread_create(&th, NULL, post_until_retired, &p) == 0);
        for (int f = 0; f < 1 + round % 5; f++)
            td_loop_run_frame(p.loop);
        td_loop_destroy(p.loop);
        pthread_join(th, NULL);
        TD_CHECK_EQ(0, p.other);
        TD_CHECK_EQ(1, p.refused);
        /* every accepted post ran exactly once: in a frame, or by the retirement */
        TD_CHECK_EQ(p.accepted, p.ran);
    }
}

typedef struct {
    volatile uint32_t stop;
    volatile uint32_t armed;
    volatile uint32_t finished;
    volatile uint32_t failures;
} armer;

static void *arm_waits(void *arg)
{
    armer *a = (armer *)arg;
    while (!td_atomic_load_u32(&a->stop) && td_atomic_load_u32(&a->armed) < 200) {
        td_task waits[3];
        waits[0] = td_delay(1000, TD_CLOCK_SCALED, NULL);
        waits[1] = td_delay(1000, TD_CLOCK_UNSCALED, NULL);
        waits[2] = td_yield(TD_TIMING_UPDATE);
        td_atomic_fetch_add_u32(&a->armed, 1);
        for (int i = 0; i < 3; i++) {
            td_status st = TD_PENDING;
            int64_t end = now_ns() + 10000000000LL;
            while (td_task_status(waits[i], &st) == TD_OK && st == TD_PENDING && now_ns() < end)
                sched_yield();
            td_outcome o;
            if (td_task_get(waits[i], &o) != TD_OK || o.status != TD_SUCCEEDED)
                td_atomic_fetch_add_u32(&a->failures, 1);
        }
        td_atomic_fetch_add_u32(&a->finished, 1);
    }
    return NULL;
}

static void waits_armed_from_a_worker(void)
{
    armer a;
    memset(&a, 0, sizeof(a));
    pthread_t th;
    TD_CHECK(pthread_create(&th, NULL, arm_waits, &a) == 0);
    int64_t end = now_ns() + 20000000000LL;
    while (td_atomic_load_u32(&a.finished) < 200 && now_ns() < end) {
        td_loop_run_frame(td_loop_main());
        sched_yield();
    }
    td_atomic_store_u32(&a.stop, 1);
    pthread_join(th, NULL);
    TD_CHECK_EQ(200, a.finished);
    TD_CHECK_EQ(0, a.failures);
}

int main(void)
{
    if (td_runtime_init(NULL) != TD_OK)
        return 2;
    TD_RUN(worker_posts_while_loop_retires);
    TD_RUN(waits_armed_from_a_worker);
    td_runtime_shutdown();
    return TD_TEST_SUMMARY();
}
