/* Shared handles (SMOKE 4, 5, 13): exclusivity on the original, many readers, repeated
 * reads, runner recycling with the old token dead, a native waiter blocking sharing,
 * stateless frame waits shared, handle pooling, zero allocation once warm. */
#include <tandem/tandem.h>
#include "td_alloc_count.h"
#include "td_test.h"
#include "td_test_gated.h"

TD_TEST_GATED_METHOD(gated);

/* A reader: awaits a shared task and returns its value plus its own offset. */
typedef struct { td_task_i64 in; int64_t offset, v; } reader_frame;
static void reader_step(td_runner *r, reader_frame *f)
{
    TD_BEGIN(r);
    TD_AWAIT_VALUE(r, f->in, f->v);
    TD_RETURN_VALUE(r, f->v + f->offset);
    TD_END(r);
}
TD_METHOD_DEFINE(reader, reader_frame, reader_step);

static td_task_i64 start_reader(td_task_i64 in, int64_t offset)
{
    td_runner *r = td_runner_rent(&reader_method);
    TD_FRAME(r, reader_frame)->in = in;
    TD_FRAME(r, reader_frame)->offset = offset;
    return td_runner_start_i64(r);
}

static volatile uint32_t direct_calls;
static void direct_waiter(void *arg) { (void)arg; direct_calls++; }

static void shared_exclusivity_and_recycling(void)
{
    for (int typed = 1; typed >= 0; typed--) {
        td_auto_source *g = td_auto_source_rent();
        td_task_i64 gt = td_auto_source_task_i64(g);
        td_runner *r = td_runner_rent(&gated_method);
        TD_FRAME(r, gate_frame)->gate = gt;
        td_task_i64 orig = td_runner_start_i64(r);
        TD_CHECK(orig.task.source == &r->source);
        td_shared *h = typed ? td_task_share_i64(orig) : td_task_share(orig.task);
        TD_CHECK(h != NULL);
        /* The original now belongs to the handle. */
        td_outcome o;
        td_status st;
        TD_CHECK_EQ(TD_E_SHARED, td_task_i64_get(orig, &o));
        TD_CHECK_EQ(TD_E_SHARED, td_task_get(orig.task, &o));
        TD_CHECK_EQ(TD_E_SHARED, td_task_status(orig.task, &st));
        TD_CHECK_EQ(TD_E_SHARED, td_task_on_completed(orig.task, direct_waiter, NULL));
        td_shared *again;
        TD_CHECK_EQ(TD_E_SHARED, td_task_share_rc(orig, &again));
        TD_CHECK(again == NULL);
        TD_CHECK(td_task_preserve(orig.task) == NULL);
        /* Many readers, one direct waiter. */
        td_task_i64 st_task = td_shared_task_i64(h);
        td_task_i64 a = start_reader(st_task, 100);
        td_task_i64 b = start_reader(st_task, 200);
        direct_calls = 0;
        TD_CHECK_EQ(TD_OK, td_task_on_completed(st_task.task, direct_waiter, NULL));
        TD_CHECK_EQ(TD_E_PENDING, td_task_i64_get(st_task, &o));
        TD_CHECK_EQ(TD_OK, td_task_status(st_task.task, &st));
        TD_CHECK_EQ(TD_PENDING, st);
        uint32_t pooled = td_pool_count(&gated_method.pool);
        TD_CHECK_EQ(TD_OK, td_auto_source_set_result(g, gt.task.token, 23));
        /* The handle consumed the original: runner pooled, its old token dead. */
        TD_CHECK_EQ(pooled + 1, td_pool_count(&gated_method.pool));
        TD_CHECK_EQ(TD_E_STALE, td_task_status(orig.task, &st));
        TD_CHECK_EQ(TD_E_STALE, td_task_i64_get(orig, &o));
        TD_CHECK(td_runner_rent(&gated_method) == r);     /* recycled: the next rental */
        TD_FRAME(r, gate_frame)->gate = td_from_result(0);
        TD_CHECK(td_runner_start_i64(r).task.source == NULL);
        TD_CHECK_EQ(1, direct_calls);
        TD_CHECK_EQ(TD_OK, td_task_i64_get(a, &o));
        TD_CHECK_EQ(123, o.value);
        TD_CHECK_EQ(TD_OK, td_task_i64_get(b, &o));
        TD_CHECK_EQ(223, o.value);
        /* Repeated reads. */
        for (int i = 0; i < 3; i++) {
            TD_CHECK_EQ(TD_OK, td_task_i64_get(st_task, &o));
            TD_CHECK_EQ(TD_SUCCEEDED, o.status);
            TD_CHECK_EQ(typed ? 23 : 23, o.value);
        }
        /* A reader started after completion completes inline. */
        td_task_i64 c = start_reader(st_task, 1);
        TD_CHECK(c.task.source == NULL);
        TD_CHECK_EQ(24, c.value);
        TD_CHECK_EQ(TD_DONE, td_task_on_completed(st_task.task, direct_waiter, NULL));
        td_shared_release(h);
        TD_CHECK_EQ(TD_E_STALE, td_task_i64_get(st_task, &o));   /* the handle was recycled */
    }
}

static void native_waiter_blocks_sharing(void)
{
    td_auto_source *g = td_auto_source_rent();
    td_task_i64 gt = td_auto_source_task_i64(g);
    direct_calls = 0;
    TD_CHECK_EQ(TD_OK, td_task_on_completed(gt.task, direct_waiter, NULL));
    td_shared *h = (td_shared *)1;
    TD_CHECK_EQ(TD_E_AWAITED, td_task_share_rc(gt, &h));
    TD_CHECK(h == NULL);
    TD_CHECK(td_task_share(gt.task) == NULL);
    /* The waiter keeps its task. */
    TD_CHECK_EQ(TD_OK, td_auto_source_set_result(g, gt.task.token, 5));
    TD_CHECK_EQ(1, direct_calls);
    td_outcome o;
    TD_CHECK_EQ(TD_OK, td_task_i64_get(gt, &o));
    TD_CHECK_EQ(5, o.value);
    /* A consumed task cannot be shared either. */
    TD_CHECK_EQ(TD_E_STALE, td_task_share_rc(gt, &h));
}

static void share_completed_values_and_faults(void)
{
    td_outcome o;
    td_shared *h = td_task_share_i64(td_from_result(77));
    TD_CHECK(h != NULL);
    TD_CHECK_EQ(TD_OK, td_shared_outcome(h, &o));
    TD_CHECK_EQ(77, o.value);
    td_shared_release(h);
    /* Completed but not yet consumed: consumed at once by the handle. */
    td_auto_source *g = td_auto_source_rent();
    td_task_i64 gt = td_auto_source_task_i64(g);
    td_auto_source_set_error(g, gt.task.token, TD_ERR_USER + 3, "boom");
    h = td_task_share_i64(gt);
    TD_CHECK(h != NULL);
    TD_CHECK_EQ(TD_E_STALE, td_task_i64_get(gt, &o));
    td_task_i64 r = start_reader(td_shared_task_i64(h), 1);
    TD_CHECK_EQ(TD_OK, td_task_i64_get(r, &o));                 /* the fault propagates */
    TD_CHECK_EQ(TD_FAULTED, o.status);
    TD_CHECK_EQ(TD_ERR_USER + 3, o.error.code);
    TD_CHECK_EQ(TD_OK, td_task_i64_get(td_shared_task_i64(h), &o));
    TD_CHECK_EQ(TD_FAULTED, o.status);
    TD_CHECK(strcmp(o.error.message, "boom") == 0);
    td_shared_release(h);
}

/* SMOKE 13: a stateless frame wait shared, preserved, read twice, forgotten. */
static void share_frame_wait(void)
{
    td_loop *loop = td_loop_main();
    uint32_t frame = td_loop_frame(loop);
    td_task nf = td_next_frame(TD_TIMING_UPDATE);
    td_shared *h = td_task_share(nf);
    td_shared *p = td_task_preserve(nf);          /* a marker stays multi-reader */
    TD_CHECK(h != NULL && p != NULL && h != p);
    td_task_i64 a = start_reader(td_shared_task_i64(h), 1);
    td_task_i64 b = start_reader(td_shared_task_i64(p), 2);
    td_task_forget(nf);
    td_loop_run_frame(loop);
    TD_CHECK_EQ(frame + 1, td_loop_frame(loop));
    td_outcome o;
    TD_CHECK_EQ(TD_OK, td_task_i64_get(a, &o));
    TD_CHECK_EQ(1, o.value);
    TD_CHECK_EQ(TD_OK, td_task_i64_get(b, &o));
    TD_CHECK_EQ(2, o.value);
    TD_CHECK_EQ(TD_OK, td_task_get(nf, &o));      /* the marker itself reads again */
    TD_CHECK_EQ(TD_OK, td_task_get(nf, &o));
    TD_CHECK_EQ(TD_SUCCEEDED, o.status);
    td_shared_release(h);
    td_shared_release(p);
}

/* Handles are pooled: the same handle comes back with a new token; once warm a share /
 * await / release round allocates nothing. */
static void handle_pooling_and_zero_alloc(void)
{
    td_auto_source *g = td_auto_source_rent();
    td_task_i64 gt = td_auto_source_task_i64(g);
    td_shared *h = td_task_share_i64(gt);
    td_task first = td_shared_task(h);
    td_auto_source_set_result(g, gt.task.token, 1);
    td_shared_release(h);
    g = td_auto_source_rent();
    gt = td_auto_source_task_i64(g);
    td_shared *h2 = td_task_share_i64(gt);
    TD_CHECK(h2 == h);
    TD_CHECK(td_shared_task(h2).token != first.token);
    td_status st;
    TD_CHECK_EQ(TD_E_STALE, td_task_status(first, &st));
    td_auto_source_set_result(g, gt.task.token, 2);
    td_shared_release(h2);

    uint32_t before = 0;
    for (int round = 0; round < 200; round++) {
        if (round == 100)
            before = td_alloc_count();
        g = td_auto_source_rent();
        gt = td_auto_source_task_i64(g);
        td_runner *r = td_runner_rent(&gated_method);
        TD_FRAME(r, gate_frame)->gate = gt;
        td_task_i64 orig = td_runner_start_i64(r);
        h = td_task_share_i64(orig);
        td_task_i64 readers[3];
        for (int i = 0; i < 3; i++)
            readers[i] = start_reader(td_shared_task_i64(h), i);
        td_auto_source_set_result(g, gt.task.token, round);
        for (int i = 0; i < 3; i++) {
            td_outcome o;
            TD_CHECK_EQ(TD_OK, td_task_i64_get(readers[i], &o));
            TD_CHECK_EQ(round + i, o.value);
        }
        td_shared_release(h);
    }
    if (td_alloc_counting())
        TD_CHECK_EQ(before, td_alloc_count());
}

int main(void)
{
    if (td_runtime_init(NULL) != TD_OK)
        return 2;
    td_method_register(&gated_method);
    td_method_register(&reader_method);
    TD_RUN(shared_exclusivity_and_recycling);
    TD_RUN(native_waiter_blocks_sharing);
    TD_RUN(share_completed_values_and_faults);
    TD_RUN(share_frame_wait);
    TD_RUN(handle_pooling_and_zero_alloc);
    td_runtime_shutdown();
    return TD_TEST_SUMMARY();
}
