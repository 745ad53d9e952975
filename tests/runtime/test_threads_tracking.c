/* Active-task tracking (off by default): entries with method and start site, removal at
 * consumption, nothing recorded when off, starts and releases from workers (TSan). */
#include <tandem/tandem.h>
#include <sched.h>
#include "td_test.h"
#include "td_test_gated.h"

TD_TEST_GATED_METHOD(tracked_gate);

typedef struct { int64_t v; } pool_frame;
static void pool_step(td_runner *r, pool_frame *f)
{
    TD_BEGIN(r);
    TD_AWAIT(r, td_switch_to_thread_pool());
    TD_RETURN_VALUE(r, f->v);
    TD_END(r);
}
TD_METHOD_DEFINE(tracked_pool, pool_frame, pool_step);

static const td_tracking_entry *found[8];
static td_tracking_entry seen[8];
static int seen_n;
static void collect(const td_tracking_entry *e, void *arg)
{
    (void)arg;
    if (seen_n < 8)
        seen[seen_n] = *e;
    found[seen_n < 8 ? seen_n : 7] = e;
    seen_n++;
}

/* The gated method started on a fresh auto source, then its gate completed with v and its
 * task consumed (the value read back; -1 when the consumption failed). */
typedef struct { td_auto_source *g; td_task_i64 gt, t; td_runner *r; } gated_run;
static gated_run gated_start(void)
{
    gated_run x;
    x.g = td_auto_source_rent();
    x.gt = td_auto_source_task_i64(x.g);
    x.r = td_runner_rent(&tracked_gate_method);
    TD_FRAME(x.r, gate_frame)->gate = x.gt;
    x.t = TD_START_I64(x.r);
    return x;
}
static int64_t gated_finish(gated_run *x, int64_t v)
{
    td_auto_source_set_result(x->g, x->gt.task.token, v);
    td_outcome o;
    return td_task_i64_get(x->t, &o) == TD_OK && o.status == TD_SUCCEEDED ? o.value : -1;
}

static void off_by_default_records_nothing(void)
{
    TD_CHECK_EQ(0, td_runtime_settings.tracking);
    gated_run x = gated_start();
    TD_CHECK_EQ(0, td_tracking_count());
    TD_CHECK_EQ(1, gated_finish(&x, 1));
}

static void entries_with_sites_until_consumed(void)
{
    td_tracking_enable(1);
    td_auto_source *g1 = td_auto_source_rent(), *g2 = td_auto_source_rent();
    td_task_i64 gt1 = td_auto_source_task_i64(g1), gt2 = td_auto_source_task_i64(g2);
    td_runner *r1 = td_runner_rent(&tracked_gate_method);
    TD_FRAME(r1, gate_frame)->gate = gt1;
    int line1 = __LINE__ + 1;
    td_task_i64 t1 = TD_START_I64(r1);
    td_runner *r2 = td_runner_rent(&tracked_gate_method);
    TD_FRAME(r2, gate_frame)->gate = gt2;
    td_task_i64 t2 = td_runner_start_i64(r2);            /* no site */
    /* A method that completes synchronously is never left behind. */
    td_runner *r3 = td_runner_rent(&tracked_gate_method);
    TD_FRAME(r3, gate_frame)->gate = td_from_result(3);
    TD_CHECK(TD_START_I64(r3).task.source == NULL);
    TD_CHECK_EQ(2, td_tracking_count());
    seen_n = 0;
    TD_CHECK_EQ(2, td_tracking_foreach(collect, NULL));
    TD_CHECK_EQ(2, seen_n);
    TD_CHECK(seen[0].runner == r1);                       /* oldest first */
    TD_CHECK_EQ(t1.task.token, seen[0].token);
    TD_CHECK(strcmp(seen[0].method, "tracked_gate") == 0);
    TD_CHECK(seen[0].file != NULL && strstr(seen[0].file, "test_threads_tracking.c") != NULL);
    TD_CHECK_EQ(line1, seen[0].line);
    TD_CHECK(seen[1].runner == r2);
    TD_CHECK(seen[1].file == NULL);
    TD_CHECK_EQ(0, seen[1].line);
    TD_CHECK(seen[1].serial > seen[0].serial);
    /* Completion alone keeps the entry; consumption removes it. */
    td_auto_source_set_result(g1, gt1.task.token, 10);
    TD_CHECK_EQ(2, td_tracking_count());
    td_outcome o;
    TD_CHECK_EQ(TD_OK, td_task_i64_get(t1, &o));
    TD_CHECK_EQ(1, td_tracking_count());
    td_auto_source_set_result(g2, gt2.task.token, 20);
    td_task_forget_i64(t2);
    TD_CHECK_EQ(0, td_tracking_count());
    td_tracking_enable(0);
}

/* Tracking switched between a start and its release: the start decides (a tracked runner
 * carries the tracked operations until its recycle gives it back its method's). */
static void switched_between_start_and_release(void)
{
    const td_source_ops *plain = &tracked_gate_method.ops->source;
    td_outcome o;
    /* started untracked, released tracked: never recorded, still the method's operations */
    gated_run x = gated_start();
    td_runner *r = x.r;
    TD_CHECK(r->source.ops == plain);
    td_tracking_enable(1);
    TD_CHECK_EQ(0, td_tracking_count());
    TD_CHECK_EQ(5, gated_finish(&x, 5));
    TD_CHECK_EQ(0, td_tracking_count());
    /* started tracked: the tracked operations until the release, then the method's again */
    x = gated_start();
    TD_CHECK(x.r == r);                                   /* the pool's last one back */
    TD_CHECK(r->source.ops != plain);
    TD_CHECK_EQ(1, td_tracking_count());
    td_tracking_enable(0);                                /* clears the table */
    TD_CHECK_EQ(6, gated_finish(&x, 6));
    TD_CHECK(r->source.ops == plain);                     /* pooled with its method's */
    TD_CHECK_EQ(TD_E_STALE, td_task_i64_get(x.t, &o));
    /* a tracked synchronous success goes back with its method's operations too */
    td_tracking_enable(1);
    td_runner *r3 = td_runner_rent(&tracked_gate_method);
    TD_CHECK(r3 == r);
    TD_FRAME(r3, gate_frame)->gate = td_from_result(7);
    td_task_i64 t = TD_START_I64(r3);
    TD_CHECK(t.task.source == NULL);
    TD_CHECK_EQ(7, t.value);
    TD_CHECK_EQ(0, td_tracking_count());
    TD_CHECK(r3->source.ops == plain);
    td_tracking_enable(0);
}

static void starts_and_releases_across_threads(void)
{
    td_tracking_enable(1);
    for (int round = 0; round < 500; round++) {
        td_runner *r = td_runner_rent(&tracked_pool_method);
        TD_FRAME(r, pool_frame)->v = round;
        td_task_i64 t = TD_START_I64(r);
        td_status st = TD_PENDING;
        while (td_task_status(t.task, &st) == TD_OK && st == TD_PENDING)
            sched_yield();
        td_outcome o;
        TD_CHECK_EQ(TD_OK, td_task_i64_get(t, &o));
        TD_CHECK_EQ(round, o.value);
        TD_CHECK_EQ(0, td_tracking_count());
    }
    td_tracking_enable(0);
}

/* Tracking on from the settings given to td_runtime_init (no td_tracking_enable call): the
 * start sees it (td_runner_observed_ follows every writer of the settings). */
static void on_from_the_settings(void)
{
    td_runtime_shutdown();
    td_settings s;
    td_settings_defaults(&s);
    s.tracking = 1;
    TD_CHECK_EQ(TD_OK, td_runtime_init(&s));
    gated_run x = gated_start();
    TD_CHECK_EQ(1, td_tracking_count());
    TD_CHECK_EQ(8, gated_finish(&x, 8));
    TD_CHECK_EQ(0, td_tracking_count());
    td_runtime_shutdown();
    td_settings_defaults(&s);
    TD_CHECK_EQ(TD_OK, td_runtime_init(&s));              /* off again: nothing recorded */
    x = gated_start();
    TD_CHECK_EQ(0, td_tracking_count());
    TD_CHECK_EQ(10, gated_finish(&x, 10));
}

int main(void)
{
    td_settings s;
    td_settings_defaults(&s);
    s.worker_threads = 2;
    if (td_runtime_init(&s) != TD_OK)
        return 2;
    td_method_register(&tracked_gate_method);
    td_method_register(&tracked_pool_method);
    TD_RUN(off_by_default_records_nothing);
    TD_RUN(entries_with_sites_until_consumed);
    TD_RUN(switched_between_start_and_release);
    TD_RUN(starts_and_releases_across_threads);
    TD_RUN(on_from_the_settings);
    td_runtime_shutdown();
    return TD_TEST_SUMMARY();
}
