/* Cross-thread protocol: a worker completes while the main thread registers its waiter;
 * loop posts and frame waits registered from a worker run on the main thread.
 * Bounded stress (fixed rounds); every round asserts its value. Built with TSan too. */
#include <pthread.h>
#include <tandem/tandem.h>
#include "td_test.h"
#include "td_test_rounds.h"

#define ROUNDS 5000

typedef struct { td_task_i64 gate; int64_t v; } wait_frame;
static void wait_step(td_runner *r, wait_frame *f)
{
    TD_BEGIN(r);
    TD_AWAIT_VALUE(r, f->gate, f->v);
    TD_RETURN_VALUE(r, -f->v);
    TD_END(r);
}
TD_METHOD_DEFINE(waiter, wait_frame, wait_step);

/* The source and token of the round (written before the round starts). */
typedef struct { td_auto_source *volatile source; volatile uint32_t token; } handoff;

static void complete_round(uint32_t round, void *arg)
{
    handoff *h = (handoff *)arg;
    td_auto_source_set_result((td_auto_source *)td_atomic_load_ptr((void *volatile *)&h->source),
                              td_atomic_load_u32(&h->token), round);
}

static void worker_completion_races_registration(void)
{
    handoff h;
    memset(&h, 0, sizeof(h));
    td_test_rounds w;
    TD_CHECK(td_test_rounds_start(&w, complete_round, &h) == 0);
    int bad = 0;
    for (uint32_t round = 1; round <= ROUNDS && !bad; round++) {
        td_auto_source *s = td_auto_source_rent();
        td_task_i64 g = td_auto_source_task_i64(s);
        td_atomic_store_ptr((void *volatile *)&h.source, s);
        td_atomic_store_u32(&h.token, g.task.token);
        td_test_rounds_go(&w, round);              /* the worker may complete right now */
        td_runner *r = td_runner_rent(&waiter_method);
        TD_FRAME(r, wait_frame)->gate = g;
        td_task_i64 t = td_runner_start_i64(r);
        td_status st = TD_PENDING;
        for (uint32_t turn = 0; td_task_status(t.task, &st) == TD_OK && st == TD_PENDING;)
            td_test_wait_turn(&turn);
        td_outcome o;
        if (td_task_i64_get(t, &o) != TD_OK || o.value != -(int64_t)round)
            bad = (int)round;
        td_test_rounds_wait(&w, round);
    }
    td_test_rounds_stop(&w);
    TD_CHECK_EQ(0, bad);
}

static uintptr_t ran_on[4];
static volatile uint32_t ran_count;
static void note_thread(void *arg) { ran_on[(intptr_t)arg] = td_thread_self(); td_atomic_fetch_add_u32(&ran_count, 1); }

static td_task worker_wait;
static void *post_from_worker(void *arg)
{
    td_loop *loop = (td_loop *)arg;
    td_loop_post(loop, TD_TIMING_UPDATE, note_thread, (void *)0);
    td_loop_post(loop, TD_TIMING_LAST_UPDATE, note_thread, (void *)1);
    worker_wait = td_next_frame(TD_TIMING_UPDATE);
    td_task_on_completed(worker_wait, note_thread, (void *)2);
    return NULL;
}

static void worker_posts_run_on_main_thread(void)
{
    td_loop *loop = td_loop_main();
    pthread_t th;
    TD_CHECK(pthread_create(&th, NULL, post_from_worker, loop) == 0);
    pthread_join(th, NULL);
    for (int i = 0; i < 4 && td_atomic_load_u32(&ran_count) < 3; i++)
        td_loop_run_frame(loop);
    TD_CHECK_EQ(3, ran_count);
    for (int i = 0; i < 3; i++)
        TD_CHECK(ran_on[i] == td_main_thread_id());
}

static void *cancel_from_worker(void *arg)
{
    td_cancel_source_cancel((td_cancel_source *)arg);
    return NULL;
}

static void cancel_immediately_from_worker(void)
{
    for (int round = 0; round < 200; round++) {
        td_cancel_source *cs = td_cancel_source_new();
        td_wait_options o = td_wait_defaults();
        o.cancel = td_cancel_source_token(cs);
        o.cancel_immediately = 1;
        td_task w = td_delay_frame_ex(100, &o);
        pthread_t th;
        TD_CHECK(pthread_create(&th, NULL, cancel_from_worker, cs) == 0);
        pthread_join(th, NULL);
        td_outcome out;
        TD_CHECK_EQ(TD_OK, td_task_get(w, &out));
        TD_CHECK_EQ(TD_CANCELED, out.status);
        TD_CHECK(out.error.cancel == cs);
        td_loop_run_frame(td_loop_main());
        td_cancel_source_free(cs);
    }
}

int main(void)
{
    if (td_runtime_init(NULL) != TD_OK)
        return 2;
    TD_RUN(worker_completion_races_registration);
    TD_RUN(worker_posts_run_on_main_thread);
    TD_RUN(cancel_immediately_from_worker);
    td_runtime_shutdown();
    return TD_TEST_SUMMARY();
}
