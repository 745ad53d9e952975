/* Adapters: callback-style APIs and futures bridged into tasks with their actual outcomes
 * (success, fault, cancel), cancel tokens racing the answer, and a reusable completion
 * source across rounds (SMOKE 38; the pthread-completed cases are in test_threads_streams.c). */
#include <tandem/tandem.h>
#include "td_test.h"
#include "td_test_runtime.h"

/* A callback API that answers inline with a scripted (status, value). */
typedef struct { int status; int64_t value; } script;
static void api_inline(void *arg, td_adapt_done_fn done, void *cb_arg)
{
    script *s = (script *)arg;
    done(cb_arg, s->status, s->value);
}

/* A callback API that keeps the callback to answer later. */
static td_adapt_done_fn held_done;
static void *held_arg;
static int api_calls;
static void api_deferred(void *arg, td_adapt_done_fn done, void *cb_arg)
{
    (void)arg;
    api_calls++;
    held_done = done;
    held_arg = cb_arg;
}

static void callback_outcomes(void)
{
    td_outcome o;
    script ok = { TD_ADAPT_OK, 31 };
    td_task_i64 t = td_from_callback(api_inline, &ok, td_cancel_none());
    TD_CHECK(t.task.source == NULL);          /* answered inline: completed value */
    TD_CHECK_EQ(31, t.value);

    script bad = { TD_ERR_USER + 2, 0 };
    TD_CHECK_EQ(TD_OK, td_task_i64_get(td_from_callback(api_inline, &bad, td_cancel_none()), &o));
    TD_CHECK_EQ(TD_FAULTED, o.status);
    TD_CHECK_EQ(TD_ERR_USER + 2, o.error.code);

    script cancel = { TD_ADAPT_CANCELED, 0 };
    TD_CHECK_EQ(TD_OK, td_task_i64_get(td_from_callback(api_inline, &cancel, td_cancel_none()), &o));
    TD_CHECK_EQ(TD_CANCELED, o.status);

    /* answered later */
    t = td_from_callback(api_deferred, NULL, td_cancel_none());
    TD_CHECK_EQ(TD_PENDING, status_of(t.task));
    held_done(held_arg, TD_ADAPT_OK, 55);
    TD_CHECK_EQ(TD_OK, td_task_i64_get(t, &o));
    TD_CHECK_EQ(TD_SUCCEEDED, o.status);
    TD_CHECK_EQ(55, o.value);
    TD_CHECK_EQ(TD_E_STALE, td_task_i64_get(t, &o));
}

static void callback_cancellation(void)
{
    td_outcome o;
    td_cancel_source *cs = td_cancel_source_new();
    api_calls = 0;
    td_task_i64 t = td_from_callback(api_deferred, NULL, td_cancel_source_token(cs));
    TD_CHECK_EQ(1, api_calls);
    td_cancel_source_cancel(cs);
    TD_CHECK_EQ(TD_OK, td_task_i64_get(t, &o));
    TD_CHECK_EQ(TD_CANCELED, o.status);
    TD_CHECK(o.error.cancel == cs);
    /* the late answer is accepted and discarded; the next bridge is unaffected */
    held_done(held_arg, TD_ADAPT_OK, 1);
    script ok = { TD_ADAPT_OK, 8 };
    t = td_from_callback(api_inline, &ok, td_cancel_source_token(cs));   /* pre-cancelled */
    TD_CHECK_EQ(1, api_calls);
    TD_CHECK_EQ(TD_OK, td_task_i64_get(t, &o));
    TD_CHECK_EQ(TD_CANCELED, o.status);
    td_cancel_source_free(cs);

    /* the answer beats a later cancellation */
    cs = td_cancel_source_new();
    t = td_from_callback(api_deferred, NULL, td_cancel_source_token(cs));
    held_done(held_arg, TD_ADAPT_OK, 9);
    td_cancel_source_cancel(cs);
    TD_CHECK_EQ(TD_OK, td_task_i64_get(t, &o));
    TD_CHECK_EQ(TD_SUCCEEDED, o.status);
    TD_CHECK_EQ(9, o.value);
    td_cancel_source_free(cs);
}

static void future_on_one_thread(void)
{
    td_outcome o;
    td_future *f = td_future_new();
    td_task_i64 t = td_future_task(f, td_cancel_none());
    TD_CHECK_EQ(TD_PENDING, status_of(t.task));
    TD_CHECK_EQ(TD_OK, td_future_set(f, TD_ERR_USER + 4, 0));
    TD_CHECK_EQ(TD_DONE, td_future_set(f, TD_ADAPT_OK, 1));
    TD_CHECK_EQ(TD_OK, td_task_i64_get(t, &o));
    TD_CHECK_EQ(TD_FAULTED, o.status);
    TD_CHECK_EQ(TD_ERR_USER + 4, o.error.code);
    /* already set: a completed task */
    TD_CHECK_EQ(TD_OK, td_task_i64_get(td_future_task(f, td_cancel_none()), &o));
    TD_CHECK_EQ(TD_FAULTED, o.status);
    td_future_free(f);
}

/* A reusable completion source: each round's task is independent; old tokens are stale. */
typedef struct { td_task_i64 in; } relay_frame;
static void relay_step(td_runner *r, relay_frame *f)
{
    TD_BEGIN(r);
    TD_AWAIT_OUTCOME(r, f->in);
    if (r->last.status == TD_SUCCEEDED)
        TD_RETURN_VALUE(r, r->last.value * 2);
    if (r->last.status == TD_CANCELED)
        TD_CANCEL(r, r->last.error.cancel);
    TD_FAIL(r, r->last.error.code, r->last.error.message);
    TD_END(r);
}
TD_METHOD_DEFINE(relay, relay_frame, relay_step);

static void reusable_completion_source(void)
{
    td_completion_source *src = td_completion_source_new();
    td_cancel_source *cs = td_cancel_source_new();
    td_outcome o;
    td_task_i64 previous = td_from_result(0);
    for (int round = 0; round < 30; round++) {
        td_completion_source_reset(src);
        td_task_i64 in = td_completion_source_task_i64(src);
        if (round > 0) {
            TD_CHECK(in.task.token != previous.task.token);
            TD_CHECK_EQ(TD_E_STALE, td_task_i64_get(previous, &o));
        }
        td_runner *r = td_runner_rent(&relay_method);
        TD_FRAME(r, relay_frame)->in = in;
        td_task_i64 t = td_runner_start_i64(r);
        TD_CHECK_EQ(TD_PENDING, status_of(t.task));
        switch (round % 3) {
        case 0: td_completion_source_set_result(src, round); break;
        case 1: td_completion_source_set_error(src, TD_ERR_USER + round, "round failed"); break;
        default: td_completion_source_set_canceled(src, cs); break;
        }
        TD_CHECK_EQ(TD_DONE, td_completion_source_set_result(src, -1));  /* first wins */
        TD_CHECK_EQ(TD_OK, td_task_i64_get(t, &o));
        switch (round % 3) {
        case 0: TD_CHECK_EQ(TD_SUCCEEDED, o.status); TD_CHECK_EQ(2 * round, o.value); break;
        case 1: TD_CHECK_EQ(TD_FAULTED, o.status); TD_CHECK_EQ(TD_ERR_USER + round, o.error.code); break;
        default: TD_CHECK_EQ(TD_CANCELED, o.status); TD_CHECK(o.error.cancel == cs); break;
        }
        previous = in;
    }
    td_cancel_source_free(cs);
    td_completion_source_free(src);
}

int main(void)
{
    if (td_runtime_init(NULL) != TD_OK)
        return 2;
    TD_RUN(callback_outcomes);
    TD_RUN(callback_cancellation);
    TD_RUN(future_on_one_thread);
    TD_RUN(reusable_completion_source);
    td_runtime_shutdown();
    return TD_TEST_SUMMARY();
}
