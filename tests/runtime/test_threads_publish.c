/*
 * test_threads_publish.c - the publication of a completion to a registered waiter is an
 * atomic release store (task.h: "it publishes the status with a release store"), because
 * any thread may read the word meanwhile: a status query needs no ownership. A source
 * owned by the main thread, its waiter registered there (mode AWAITED), is completed on
 * another thread (which takes the ownership away first: the CAS protocol's publication,
 * task_publish) while a third thread polls its status. Built with TSan (test_threads_*): a
 * plain store there is a data race on the word (mutant K08, tests/mutation/mutants.txt).
 */
#include <tandem/tandem.h>
#include "td_test.h"
#include "td_test_runtime.h"

typedef struct {
    td_completion_source *cs;
    td_task task;
    volatile uint32_t go, polled_done;
    td_status seen;
} publish_round;

static void on_done(void *arg) { (void)arg; }

static void *complete_on_thread(void *arg)
{
    publish_round *p = (publish_round *)arg;
    while (!td_atomic_load_u32(&p->go))
        sched_yield();
    td_completion_source_set_result(p->cs, 42);
    return NULL;
}

static void *poll_status(void *arg)
{
    publish_round *p = (publish_round *)arg;
    td_status st = TD_PENDING;
    td_atomic_store_release_u32(&p->go, 1);
    int64_t end = now_ns() + 10000000000LL;
    while (st == TD_PENDING && now_ns() < end)
        if (td_task_status(p->task, &st) != TD_OK)
            break;
    p->seen = st;
    td_atomic_store_release_u32(&p->polled_done, 1);
    return NULL;
}

static void status_polled_while_another_thread_publishes(void)
{
    for (int round = 0; round < 200; round++) {
        publish_round p;
        memset(&p, 0, sizeof(p));
        p.cs = td_completion_source_new();
        TD_CHECK(p.cs != NULL);
        p.task = td_completion_source_task(p.cs);
        TD_CHECK_EQ(TD_OK, td_task_on_completed(p.task, on_done, NULL));   /* mode AWAITED */
        pthread_t completer, poller;
        TD_CHECK(pthread_create(&completer, NULL, complete_on_thread, &p) == 0);
        TD_CHECK(pthread_create(&poller, NULL, poll_status, &p) == 0);
        pthread_join(completer, NULL);
        pthread_join(poller, NULL);
        TD_CHECK_EQ(TD_SUCCEEDED, p.seen);
        td_completion_source_free(p.cs);
    }
}

int main(void)
{
    if (td_runtime_init(NULL) != TD_OK)
        return 1;
    TD_RUN(status_polled_while_another_thread_publishes);
    td_runtime_shutdown();
    return TD_TEST_SUMMARY();
}
