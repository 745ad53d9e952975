/* Fire-and-forget and the unobserved-error handler (SMOKE 24's "a faulting loser is not
 * reported"): a forgotten fault is reported exactly once, successes and cancellations never;
 * combinators and explicit reads observe; records are pooled. */
#include <tandem/tandem.h>
#include "td_alloc_count.h"
#include "td_test.h"
#include "td_test_gated.h"

static int reports;
static int last_code;
static void *last_arg;
static void on_unobserved(const td_error *e, void *arg)
{
    reports++;
    last_code = e->code;
    last_arg = arg;
}

TD_TEST_GATED_METHOD(gated);

static td_task_i64 start_gated(td_auto_source **g_out, uint32_t *token_out)
{
    td_auto_source *g = td_auto_source_rent();
    td_task_i64 gt = td_auto_source_task_i64(g);
    td_runner *r = td_runner_rent(&gated_method);
    TD_FRAME(r, gate_frame)->gate = gt;
    *g_out = g;
    *token_out = gt.task.token;
    return td_runner_start_i64(r);
}

static int marker;

static void forgotten_fault_reported_once(void)
{
    reports = 0;
    td_set_unobserved_error_handler(on_unobserved, &marker);
    td_auto_source *g;
    uint32_t tok;
    td_task_i64 t = start_gated(&g, &tok);
    uint32_t pooled = td_pool_count(&gated_method.pool);
    td_task_forget_i64(t);
    TD_CHECK_EQ(0, reports);
    td_auto_source_set_error(g, tok, TD_ERR_USER + 1, "lost");
    TD_CHECK_EQ(1, reports);
    TD_CHECK_EQ(TD_ERR_USER + 1, last_code);
    TD_CHECK(last_arg == &marker);
    TD_CHECK_EQ(pooled + 1, td_pool_count(&gated_method.pool));   /* consumed: runner pooled */
    td_status st;
    TD_CHECK_EQ(TD_E_STALE, td_task_status(t.task, &st));
    /* Already faulted at forget: reported at once. */
    td_task_forget(td_from_error(TD_ERR_USER + 2, "early"));
    TD_CHECK_EQ(2, reports);
    TD_CHECK_EQ(TD_ERR_USER + 2, last_code);
    TD_CHECK(td_unobserved_error_count() >= 2);
}

static void success_and_cancel_not_reported(void)
{
    reports = 0;
    td_set_unobserved_error_handler(on_unobserved, NULL);
    td_auto_source *g;
    uint32_t tok;
    td_task_i64 t = start_gated(&g, &tok);
    td_task_forget_i64(t);
    td_auto_source_set_result(g, tok, 3);
    t = start_gated(&g, &tok);
    td_task_forget_i64(t);
    td_auto_source_set_canceled(g, tok, NULL);
    td_task_forget(td_from_canceled(NULL));
    td_task_forget(td_completed());
    TD_CHECK_EQ(0, reports);
    td_outcome o;
    TD_CHECK_EQ(TD_E_STALE, td_task_i64_get(t, &o));
}

static void observers_do_not_report(void)
{
    reports = 0;
    td_set_unobserved_error_handler(on_unobserved, NULL);
    /* when_any: a late loser that faults is consumed by the combinator, not reported. */
    td_auto_source *g1, *g2;
    uint32_t t1, t2;
    td_task_i64 in[2];
    in[0] = start_gated(&g1, &t1);
    in[1] = start_gated(&g2, &t2);
    int winner = -1;
    td_task_i64 any = td_when_any_i64(in, 2, &winner);
    td_auto_source_set_result(g2, t2, 42);
    td_outcome o;
    TD_CHECK_EQ(TD_OK, td_task_i64_get(any, &o));
    TD_CHECK_EQ(1, winner);
    TD_CHECK_EQ(42, o.value);
    td_auto_source_set_error(g1, t1, TD_ERR_USER + 9, "late loser");
    TD_CHECK_EQ(0, reports);
    /* when_all's fault is observed by its consumer; forgetting the when_all reports once. */
    in[0] = start_gated(&g1, &t1);
    in[1] = start_gated(&g2, &t2);
    td_task all = td_when_all_i64(in, 2, NULL);
    td_task_forget(all);
    td_auto_source_set_error(g1, t1, TD_ERR_USER + 10, "first");
    td_auto_source_set_error(g2, t2, TD_ERR_USER + 11, "second");
    TD_CHECK_EQ(1, reports);
    TD_CHECK_EQ(TD_ERR_USER + 10, last_code);
    /* Explicit reads observe. */
    td_task_forget_result(td_from_error(TD_ERR_USER + 12, "read"));
    TD_CHECK_EQ(TD_OK, td_task_get(td_from_error(TD_ERR_USER + 13, "got"), &o));
    TD_CHECK_EQ(1, reports);
}

static void forget_what_it_cannot_own(void)
{
    reports = 0;
    td_set_unobserved_error_handler(on_unobserved, NULL);
    /* Frame waits: nothing to consume, still readable. */
    td_task nf = td_next_frame(TD_TIMING_UPDATE);
    td_task_forget(nf);
    td_loop_run_frame(td_loop_main());
    td_outcome o;
    TD_CHECK_EQ(TD_OK, td_task_get(nf, &o));
    TD_CHECK_EQ(TD_SUCCEEDED, o.status);
    /* A shared original belongs to its handle: forget leaves it alone. */
    td_auto_source *g = td_auto_source_rent();
    td_task_i64 gt = td_auto_source_task_i64(g);
    td_shared *h = td_task_share_i64(gt);
    uint32_t pooled = td_pool_count(&gated_method.pool);
    td_task_forget_i64(gt);
    td_auto_source_set_error(g, gt.task.token, TD_ERR_USER + 20, "shared fault");
    TD_CHECK_EQ(0, reports);                       /* the handle observed it */
    TD_CHECK_EQ(TD_OK, td_shared_outcome(h, &o));
    TD_CHECK_EQ(TD_FAULTED, o.status);
    TD_CHECK_EQ(TD_ERR_USER + 20, o.error.code);
    td_shared_release(h);
    TD_CHECK_EQ(pooled, td_pool_count(&gated_method.pool));
    /* No handler: dropped, still counted. */
    td_set_unobserved_error_handler(NULL, NULL);
    uint32_t count = td_unobserved_error_count();
    td_task_forget(td_from_error(TD_ERR_USER, "nobody listens"));
    TD_CHECK_EQ(count + 1, td_unobserved_error_count());
    TD_CHECK_EQ(0, reports);
}

static void forget_zero_alloc_once_warm(void)
{
    td_set_unobserved_error_handler(on_unobserved, NULL);
    reports = 0;
    uint32_t before = 0;
    for (int round = 0; round < 300; round++) {
        if (round == 100)
            before = td_alloc_count();
        td_auto_source *g;
        uint32_t tok;
        td_task_i64 t = start_gated(&g, &tok);
        td_task_forget_i64(t);
        if (round % 3 == 0)
            td_auto_source_set_error(g, tok, TD_ERR_USER, "x");
        else
            td_auto_source_set_result(g, tok, round);
    }
    TD_CHECK_EQ(100, reports);
    if (td_alloc_counting())
        TD_CHECK_EQ(before, td_alloc_count());
}

int main(void)
{
    if (td_runtime_init(NULL) != TD_OK)
        return 2;
    td_method_register(&gated_method);
    TD_RUN(forgotten_fault_reported_once);
    TD_RUN(success_and_cancel_not_reported);
    TD_RUN(observers_do_not_report);
    TD_RUN(forget_what_it_cannot_own);
    TD_RUN(forget_zero_alloc_once_warm);
    td_runtime_shutdown();
    return TD_TEST_SUMMARY();
}
