/*
 * test_token_wrap.c - the token's exact limit (task.h, TD_TOKEN_PERIOD): a source's version
 * has 22 bits, so a task value kept while its source moves through TD_TOKEN_PERIOD - 1
 * later rounds is still stale, and one more round brings its token back: it then reads
 * that round as its own. The test walks a manual completion source (td_completion_source_reset
 * moves it one version on) through the whole period, so both sides of the limit are checked
 * on every build, and a change of the word's layout that changes the period fails here
 * until task.h and the README say the new one.
 */
#include "td_test.h"
#include <tandem/tandem.h>

static void kept_task_is_stale_for_one_period_less_one(void)
{
    TD_CHECK_EQ(4194304u, TD_TOKEN_PERIOD);      /* 2^22: task.h and the README say so */
    td_completion_source *cs = td_completion_source_new();
    TD_CHECK(cs != NULL);
    td_task kept = td_completion_source_task(cs);
    TD_CHECK_EQ(TD_OK, td_completion_source_set_result(cs, 5));
    td_outcome o;
    TD_CHECK_EQ(TD_OK, td_task_get(kept, &o));
    td_status st;
    for (uint32_t round = 1; round < TD_TOKEN_PERIOD; round++) {
        td_completion_source_reset(cs);
        if (round == 1 || round == TD_TOKEN_PERIOD / 2 || round == TD_TOKEN_PERIOD - 1)
            TD_CHECK_EQ(TD_E_STALE, td_task_status(kept, &st));
    }
    TD_CHECK(td_completion_source_task(cs).token != kept.token);
    TD_CHECK_EQ(TD_E_STALE, td_task_get(kept, &o));
    /* one more round: the version wraps, the kept token is the new round's */
    td_completion_source_reset(cs);
    TD_CHECK_EQ(kept.token, td_completion_source_task(cs).token);
    TD_CHECK_EQ(TD_OK, td_task_status(kept, &st));
    TD_CHECK_EQ(TD_PENDING, st);
    TD_CHECK_EQ(TD_OK, td_completion_source_set_result(cs, 9));
    TD_CHECK_EQ(TD_OK, td_task_get(kept, &o));
    TD_CHECK_EQ(9, o.value);                      /* the later round's result: the limit */
    td_completion_source_free(cs);
}

int main(void)
{
    if (td_runtime_init(NULL) != TD_OK)
        return 1;
    TD_RUN(kept_task_is_stale_for_one_period_less_one);
    td_runtime_shutdown();
    return TD_TEST_SUMMARY();
}
