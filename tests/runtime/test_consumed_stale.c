/*
 * test_consumed_stale.c - the reproductions of the consumption invariant's break (723d20d):
 * a consumed task of a source with several owners (a combinator's pending inputs, a wait's
 * loop item) read TD_OK on a second get, which dropped an ownership twice and freed the
 * source under its other owners. task.h: every later query with the old token is stale.
 */
#include "td_test.h"
#include "td_test_runtime.h"
#include <tandem/tandem.h>

static uint32_t default_source_pool_capacity(void)
{
    td_settings s;
    td_settings_defaults(&s);
    return s.source_pool_capacity;
}

static void when_any_second_get_is_stale(void)
{
    td_completion_source *g1 = td_completion_source_new(), *g2 = td_completion_source_new();
    td_task in[2] = { td_completion_source_task(g1), td_completion_source_task(g2) };
    td_task_i64 any = td_when_any(in, 2);
    td_completion_source_set_result(g1, 1);
    td_outcome o;
    TD_CHECK_EQ(TD_OK, td_task_i64_get(any, &o));
    TD_CHECK_EQ(0, o.value);
    TD_CHECK_EQ(TD_E_STALE, td_task_i64_get(any, &o));
    td_status st;
    TD_CHECK_EQ(TD_E_STALE, td_task_status(any.task, &st));
    td_completion_source_set_result(g2, 2);     /* the loser's continuation: the promise lives */
    td_completion_source_free(g1);
    td_completion_source_free(g2);
}

/* With no pool to keep it, a promise released twice was freed while the loser held it. */
static void when_any_unpooled_loser_after_two_gets(void)
{
    uint32_t cap = default_source_pool_capacity();
    TD_CHECK_EQ(TD_OK, td_set_source_pool_capacity(0));
    td_completion_source *g1 = td_completion_source_new(), *g2 = td_completion_source_new();
    td_task in[2] = { td_completion_source_task(g1), td_completion_source_task(g2) };
    td_task_i64 any = td_when_any(in, 2);
    td_completion_source_set_result(g1, 1);
    td_outcome o;
    int first = td_task_i64_get(any, &o);
    int second = td_task_i64_get(any, &o);
    td_completion_source_set_result(g2, 2);
    td_completion_source_free(g1);
    td_completion_source_free(g2);
    TD_CHECK_EQ(TD_OK, td_set_source_pool_capacity(cap));
    TD_CHECK_EQ(TD_OK, first);
    TD_CHECK_EQ(TD_E_STALE, second);
}

/* A wait cancelled at once is consumed while its loop item still holds it. */
static void cancelled_delay_second_get_is_stale(void)
{
    uint32_t cap = default_source_pool_capacity();
    TD_CHECK_EQ(TD_OK, td_set_source_pool_capacity(0));
    td_cancel_source *cs = td_cancel_source_new();
    td_wait_options opt = td_wait_defaults();
    opt.cancel = td_cancel_source_token(cs);
    opt.cancel_immediately = 1;
    td_task d = td_delay(1000000000, TD_CLOCK_REALTIME, &opt);
    td_cancel_source_cancel(cs);
    td_outcome o;
    int first = td_task_get(d, &o);
    td_status status_first = o.status;
    int second = td_task_get(d, &o);
    td_loop_run_frame(td_loop_main());          /* the item detaches: the wait is freed once */
    td_cancel_source_free(cs);
    TD_CHECK_EQ(TD_OK, td_set_source_pool_capacity(cap));
    TD_CHECK_EQ(TD_OK, first);
    TD_CHECK_EQ(TD_CANCELED, status_first);
    TD_CHECK_EQ(TD_E_STALE, second);
}

int main(void)
{
    td_runtime_init(NULL);
    TD_RUN(when_any_second_get_is_stale);
    TD_RUN(when_any_unpooled_loser_after_two_gets);
    TD_RUN(cancelled_delay_second_get_is_stale);
    td_runtime_shutdown();
    return TD_TEST_SUMMARY();
}
