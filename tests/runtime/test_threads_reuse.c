/* Runner reuse while a step is still unwinding (SMOKE 6-12): immediate pool return, consume
 * and re-rent inside the continuation (same thread), a worker held inside the step while the
 * main thread consumes and re-rents, and 1,000 worker-complete / main-consume cycles.
 * Built with TSan too; every round asserts its value and the runner's identity. */
#include <tandem/tandem.h>
#include <time.h>
#include <sched.h>
#include "td_test.h"
#include "td_test_runtime.h"
#include "td_test_gated.h"

TD_TEST_GATED_METHOD(gated);

static void gate_untyped_step(td_runner *r, gate_frame *f)
{
    TD_BEGIN(r);
    TD_AWAIT(r, f->gate.task);
    TD_RETURN(r);
    TD_END(r);
}
TD_METHOD_DEFINE(gated_untyped, gate_frame, gate_untyped_step);

/* ---- SMOKE 6/7: the runner returns to its pool at consumption -------------------------- */

static void immediate_pool_return(void)
{
    for (int typed = 1; typed >= 0; typed--) {
        td_method *m = typed ? &gated_method : &gated_untyped_method;
        td_auto_source *g = td_auto_source_rent();
        td_task_i64 gt = td_auto_source_task_i64(g);
        td_runner *r = td_runner_rent(m);
        TD_FRAME(r, gate_frame)->gate = gt;
        uint32_t held = td_pool_count(&m->pool);
        td_task_i64 t = td_runner_start_i64(r);
        TD_CHECK(t.task.source == &r->source);
        TD_CHECK_EQ(TD_OK, td_auto_source_set_result(g, gt.task.token, 44));
        td_outcome o;
        TD_CHECK_EQ(TD_OK, td_task_i64_get(t, &o));
        TD_CHECK_EQ(typed ? 44 : 0, o.value);
        TD_CHECK_EQ(held + 1, td_pool_count(&m->pool));   /* back at consumption */
        TD_CHECK(td_runner_rent(m) == r);                  /* the next start reuses it */
        TD_CHECK_EQ(TD_E_STALE, td_task_i64_get(t, &o));
        /* Give it back unused (a rental that never starts). */
        TD_FRAME(r, gate_frame)->gate = td_from_result(1);
        td_task_i64 done = td_runner_start_i64(r);
        TD_CHECK(done.task.source == NULL);
        TD_CHECK(td_runner_rent(m) == r);
        TD_FRAME(r, gate_frame)->gate = td_from_result(2);
        TD_CHECK(td_runner_start_i64(r).task.source == NULL);
    }
}

/* ---- SMOKE 8/9: consume and re-rent inside the continuation, same thread --------------- */

typedef struct {
    td_method *m;
    td_task_i64 first;
    td_runner *first_runner;
    td_auto_source *gate2;
    td_task_i64 second;
    td_runner *second_runner;
    td_outcome first_outcome;
    int rc;
} rerent_ctx;

static void rerent_in_continuation(void *arg)
{
    rerent_ctx *c = (rerent_ctx *)arg;
    /* The first runner's step is still on the stack (it is completing right now). */
    c->rc = td_task_i64_get(c->first, &c->first_outcome);
    c->second_runner = td_runner_rent(c->m);
    c->gate2 = td_auto_source_rent();
    TD_FRAME(c->second_runner, gate_frame)->gate = td_auto_source_task_i64(c->gate2);
    c->second = td_runner_start_i64(c->second_runner);
}

static void consume_and_rerent_during_step(void)
{
    for (int typed = 1; typed >= 0; typed--) {
        rerent_ctx c;
        memset(&c, 0, sizeof(c));
        c.m = typed ? &gated_method : &gated_untyped_method;
        td_auto_source *g = td_auto_source_rent();
        td_task_i64 gt = td_auto_source_task_i64(g);
        c.first_runner = td_runner_rent(c.m);
        TD_FRAME(c.first_runner, gate_frame)->gate = gt;
        c.first = td_runner_start_i64(c.first_runner);
        TD_CHECK_EQ(TD_OK, td_task_on_completed(c.first.task, rerent_in_continuation, &c));
        TD_CHECK_EQ(TD_OK, td_auto_source_set_result(g, gt.task.token, 58));
        TD_CHECK_EQ(TD_OK, c.rc);
        TD_CHECK_EQ(typed ? 58 : 0, c.first_outcome.value);
        TD_CHECK(c.second_runner == c.first_runner);          /* the same runner, re-rented */
        TD_CHECK(c.second.task.source == &c.first_runner->source);
        TD_CHECK(c.second.task.token != c.first.task.token);
        td_status st;
        TD_CHECK_EQ(TD_OK, td_task_status(c.second.task, &st));
        TD_CHECK_EQ(TD_PENDING, st);                           /* unwinding did not complete it */
        TD_CHECK_EQ(TD_OK, td_auto_source_set_result(c.gate2, td_auto_source_task(c.gate2).token, 59));
        td_outcome o;
        TD_CHECK_EQ(TD_OK, td_task_i64_get(c.second, &o));
        TD_CHECK_EQ(TD_SUCCEEDED, o.status);
        TD_CHECK_EQ(typed ? 59 : 0, o.value);
        TD_CHECK_EQ(TD_E_STALE, td_task_i64_get(c.first, &o));
    }
}

/* ---- SMOKE 10/11/12: a worker held inside the step ------------------------------------- */

/* Completes on a worker: switch to the pool, then return the frame's value. */
typedef struct { int64_t v; volatile uint32_t *go; } pool_frame;

/* Holds the worker until the main thread has registered its continuation (go == 1). */
static void pool_wait_go(pool_frame *f)
{
    if (f->go)
        spin_until(f->go, 1);
}

static void pool_step(td_runner *r, pool_frame *f)
{
    TD_BEGIN(r);
    TD_AWAIT(r, td_switch_to_thread_pool());
    pool_wait_go(f);
    TD_RETURN_VALUE(r, f->v);
    TD_END(r);
}
TD_METHOD_DEFINE(pooled, pool_frame, pool_step);

static void pool_untyped_step(td_runner *r, pool_frame *f)
{
    TD_BEGIN(r);
    TD_AWAIT(r, td_switch_to_thread_pool());
    pool_wait_go(f);
    if (f->v < 0)
        TD_FAIL(r, (int)-f->v, "negative");
    TD_RETURN(r);
    TD_END(r);
}
TD_METHOD_DEFINE(pooled_untyped, pool_frame, pool_untyped_step);

typedef struct {
    volatile uint32_t completed;   /* the worker is inside the continuation */
    volatile uint32_t release;     /* the main thread has re-rented: unwind now */
    volatile uint32_t go;          /* the continuation is registered: complete now */
    volatile uint32_t left;        /* the worker no longer touches this context */
    uintptr_t worker;
} hold_ctx;

static void hold_worker(void *arg)
{
    hold_ctx *h = (hold_ctx *)arg;
    h->worker = td_thread_self();
    td_atomic_store_u32(&h->completed, 1);
    spin_until(&h->release, 1);
    td_atomic_store_u32(&h->left, 1);
}

/* One cycle: returns 0 on success, else the line that failed. */
static int held_worker_cycle(td_method *m, int64_t v, int64_t next_v, int typed)
{
    hold_ctx h;
    memset(&h, 0, sizeof(h));
    td_runner *r = td_runner_rent(m);
    TD_FRAME(r, pool_frame)->v = v;
    TD_FRAME(r, pool_frame)->go = &h.go;
    td_task_i64 t = td_runner_start_i64(r);
    if (t.task.source != &r->source)
        return __LINE__;
    if (td_task_on_completed(t.task, hold_worker, &h) != TD_OK)
        return __LINE__;
    td_atomic_store_u32(&h.go, 1);
    if (!spin_until(&h.completed, 1))
        return __LINE__;
    /* The worker completed the method and is held inside its step function. */
    td_outcome o;
    if (td_task_i64_get(t, &o) != TD_OK)
        return __LINE__;
    if (typed ? (o.status != TD_SUCCEEDED || o.value != v)
              : (o.status != (v < 0 ? TD_FAULTED : TD_SUCCEEDED) || (v < 0 && o.error.code != (int)-v)))
        return __LINE__;
    td_runner *again = td_runner_rent(m);
    if (again != r)
        return __LINE__;
    TD_FRAME(again, pool_frame)->v = next_v;
    td_task_i64 t2 = td_runner_start_i64(again);
    /* The other worker may finish the new rental before start returns: then start hands
     * back a completed task and the runner is already pooled again. */
    if (t2.task.source != NULL && (t2.task.source != &r->source || t2.task.token == t.task.token))
        return __LINE__;
    td_atomic_store_u32(&h.release, 1);      /* the old step unwinds now */
    if (!spin_until(&h.left, 1))
        return __LINE__;
    if (h.worker == td_main_thread_id())
        return __LINE__;
    if (!pump_until_done(t2.task))
        return __LINE__;
    if (td_task_i64_get(t2, &o) != TD_OK)
        return __LINE__;
    if (typed ? (o.status != TD_SUCCEEDED || o.value != next_v)
              : (o.status != (next_v < 0 ? TD_FAULTED : TD_SUCCEEDED)))
        return __LINE__;
    if (td_task_i64_get(t, &o) != TD_E_STALE)
        return __LINE__;
    return 0;
}

static void held_worker_immediate_reuse(void)
{
    TD_CHECK_EQ(0, held_worker_cycle(&pooled_method, 59, 60, 1));
    TD_CHECK_EQ(0, held_worker_cycle(&pooled_untyped_method, 1, -1042, 0));
    TD_CHECK_EQ(0, held_worker_cycle(&pooled_untyped_method, -1043, 2, 0));
}

static void worker_unwind_and_rerent_x1000(void)
{
    int64_t end = now_ns() + 60000000000LL;
    for (int i = 1; i <= 1000 && now_ns() < end; i++) {
        int line = held_worker_cycle(&pooled_method, i, -i, 1);
        if (line) {
            fprintf(stderr, "round %d failed at line %d\n", i, line);
            TD_CHECK_EQ(0, line);
        }
    }
    /* Free-running: the worker completes while the main thread polls and re-rents. */
    for (int i = 1; i <= 1000 && now_ns() < end; i++) {
        int64_t v = (i & 1) ? i : -i;
        td_runner *r = td_runner_rent(&pooled_method);
        TD_FRAME(r, pool_frame)->v = v;
        td_task_i64 t = td_runner_start_i64(r);
        TD_CHECK(pump_until_done(t.task));
        td_outcome o;
        TD_CHECK_EQ(TD_OK, td_task_i64_get(t, &o));
        TD_CHECK_EQ(v, o.value);
    }
}

int main(void)
{
    if (runtime_init_with_workers(2) != TD_OK)
        return 2;
    td_method_register(&gated_method);
    td_method_register(&gated_untyped_method);
    td_method_register(&pooled_method);
    td_method_register(&pooled_untyped_method);
    TD_RUN(immediate_pool_return);
    TD_RUN(consume_and_rerent_during_step);
    TD_RUN(held_worker_immediate_reuse);
    TD_RUN(worker_unwind_and_rerent_x1000);
    td_runtime_shutdown();
    return TD_TEST_SUMMARY();
}
