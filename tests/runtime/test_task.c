/* Task values, the completion protocol, stale tokens and completion sources. */
#include <tandem/tandem.h>
#include "td_test.h"

/* Compile-time constants: usable in static data before the runtime exists. */
static const td_task static_completed = TD_COMPLETED_INIT;
static const td_task_i64 static_result = TD_FROM_RESULT_INIT(17);

static void constants_need_no_runtime(void)
{
    td_outcome o;
    td_status st;
    TD_CHECK_EQ(TD_OK, td_task_status(static_completed, &st));
    TD_CHECK_EQ(TD_SUCCEEDED, st);
    TD_CHECK_EQ(TD_OK, td_task_i64_get(static_result, &o));
    TD_CHECK_EQ(TD_SUCCEEDED, o.status);
    TD_CHECK_EQ(17, o.value);
    /* Repeatable: a completed task has no source to recycle. */
    TD_CHECK_EQ(TD_OK, td_task_i64_get(static_result, &o));
    TD_CHECK_EQ(17, o.value);
    TD_CHECK_EQ(TD_DONE, td_task_on_completed(td_completed(), NULL, NULL));
}

static void from_error_and_canceled(void)
{
    td_outcome o;
    td_task t = td_from_error(TD_ERR_USER + 1, "boom");
    td_status st;
    TD_CHECK_EQ(TD_OK, td_task_status(t, &st));
    TD_CHECK_EQ(TD_FAULTED, st);
    TD_CHECK_EQ(TD_OK, td_task_get(t, &o));
    TD_CHECK_EQ(TD_FAULTED, o.status);
    TD_CHECK_EQ(TD_ERR_USER + 1, o.error.code);
    TD_CHECK(strcmp(o.error.message, "boom") == 0);
    TD_CHECK_EQ(TD_E_STALE, td_task_get(t, &o));

    td_cancel_source *cs = td_cancel_source_new();
    td_task_i64 c = td_from_canceled_i64(cs);
    TD_CHECK_EQ(TD_OK, td_task_i64_get(c, &o));
    TD_CHECK_EQ(TD_CANCELED, o.status);
    TD_CHECK(o.error.cancel == cs);
    td_cancel_source_free(cs);
}

static int cont_calls;
static void count_cont(void *arg) { cont_calls += *(int *)arg; }

static void manual_source_protocol(void)
{
    td_completion_source *cs = td_completion_source_new();
    td_task t = td_completion_source_task(cs);
    td_status st;
    td_outcome o;
    TD_CHECK_EQ(TD_OK, td_task_status(t, &st));
    TD_CHECK_EQ(TD_PENDING, st);
    TD_CHECK_EQ(TD_E_PENDING, td_task_get(t, &o));
    int one = 1;
    cont_calls = 0;
    TD_CHECK_EQ(TD_OK, td_task_on_completed(t, count_cont, &one));
    /* A second single-consumer waiter is rejected. */
    TD_CHECK_EQ(TD_E_AWAITED, td_task_on_completed(t, count_cont, &one));
    TD_CHECK_EQ(TD_OK, td_completion_source_set_result(cs, 23));
    TD_CHECK_EQ(1, cont_calls);
    /* Racing completers: the first wins. */
    TD_CHECK_EQ(TD_DONE, td_completion_source_set_result(cs, 99));
    TD_CHECK_EQ(TD_DONE, td_completion_source_set_error(cs, 5, "late"));
    TD_CHECK_EQ(TD_OK, td_task_get(t, &o));
    TD_CHECK_EQ(TD_SUCCEEDED, o.status);
    TD_CHECK_EQ(23, o.value);
    /* After consumption every query reports a stale token. */
    TD_CHECK_EQ(TD_E_STALE, td_task_get(t, &o));
    TD_CHECK_EQ(TD_E_STALE, td_task_status(t, &st));
    TD_CHECK_EQ(TD_E_STALE, td_task_on_completed(t, count_cont, &one));
    /* Reset: a new round with a new token; the old token stays stale. */
    td_completion_source_reset(cs);
    td_task t2 = td_completion_source_task(cs);
    TD_CHECK(t2.token != t.token);
    TD_CHECK_EQ(TD_E_STALE, td_task_status(t, &st));
    TD_CHECK_EQ(TD_OK, td_completion_source_set_canceled(cs, NULL));
    TD_CHECK_EQ(TD_OK, td_task_get(t2, &o));
    TD_CHECK_EQ(TD_CANCELED, o.status);
    TD_CHECK_EQ(TD_ERR_CANCELED, o.error.code);
    td_completion_source_free(cs);
}

static void auto_source_recycles(void)
{
    td_auto_source *s = td_auto_source_rent();
    td_task_i64 t = td_auto_source_task_i64(s);
    td_outcome o;
    TD_CHECK_EQ(TD_OK, td_auto_source_set_result(s, t.task.token, -7));
    TD_CHECK_EQ(TD_OK, td_task_i64_get(t, &o));
    TD_CHECK_EQ(-7, o.value);
    /* Back in the pool: the next rental is the same object with a new version. */
    td_auto_source *s2 = td_auto_source_rent();
    TD_CHECK(s2 == s);
    td_task_i64 t2 = td_auto_source_task_i64(s2);
    TD_CHECK(t2.task.token != t.task.token);
    /* Completing through the old token is rejected, never applied to the new rental. */
    TD_CHECK_EQ(TD_E_STALE, td_auto_source_set_result(s2, t.task.token, 1));
    td_status st;
    TD_CHECK_EQ(TD_OK, td_task_status(t2.task, &st));
    TD_CHECK_EQ(TD_PENDING, st);
    TD_CHECK_EQ(TD_E_STALE, td_task_i64_get(t, &o));
    TD_CHECK_EQ(TD_OK, td_auto_source_set_error(s2, t2.task.token, 42, "x"));
    TD_CHECK_EQ(TD_OK, td_task_i64_get(t2, &o));
    TD_CHECK_EQ(TD_FAULTED, o.status);
    TD_CHECK_EQ(42, o.error.code);
}

static void version_wraps_and_stays_distinct(void)
{
    td_completion_source *cs = td_completion_source_new();
    td_task first = td_completion_source_task(cs);
    td_status st;
    for (int i = 0; i < 1000; i++)
        td_completion_source_reset(cs);
    TD_CHECK_EQ(TD_E_STALE, td_task_status(first, &st));
    TD_CHECK_EQ(first.token + 1000 * TD_TOKEN_STEP, td_completion_source_task(cs).token);
    td_completion_source_free(cs);
}

/* A token is the version in place (task.h): its low bits are zero, and a value with one of
 * them set is no token: every query refuses it (stale), on the inline and out-of-line
 * paths alike, and the task stays consumable with its own token. */
static void token_is_the_version_in_place(void)
{
    td_completion_source *cs = td_completion_source_new();
    td_completion_source_reset(cs);
    td_task t = td_completion_source_task(cs);
    TD_CHECK_EQ(0u, t.token & ~TD_WORD_VERSION_MASK);
    TD_CHECK_EQ(t.token, td_atomic_load_u32(&t.source->word) & TD_WORD_VERSION_MASK);
    TD_CHECK_EQ(TD_OK, td_completion_source_set_result(cs, 5));
    td_outcome o;
    td_status st;
    for (uint32_t bit = 1; bit < TD_TOKEN_STEP; bit <<= 1) {
        td_task forged = td_task_of(t.source, t.token | bit);
        TD_CHECK_EQ(TD_E_STALE, td_task_status(forged, &st));
        TD_CHECK_EQ(TD_E_STALE, td_task_get(forged, &o));
        TD_CHECK_EQ(TD_E_STALE, (td_task_get)(forged, &o));
        TD_CHECK_EQ(TD_E_STALE, td_task_i64_get(td_task_i64_of(forged), &o));
    }
    TD_CHECK_EQ(TD_OK, td_task_get(t, &o));
    TD_CHECK_EQ(TD_SUCCEEDED, o.status);
    td_completion_source_free(cs);
}

/* The consumption's release at the last version (TD_WORD_VERSION_MASK): a pooled source's next
 * word, computed inline from the expected word, wraps to version 0 with the flag kept; any
 * other source's release is called. A hand-built protocol source, its word set directly. */
static int wrap_releases;
static void wrap_release(td_source *s) { wrap_releases++; td_atomic_store_release_u32(&s->word, 0); }
static const td_source_ops wrap_ops = { wrap_release, NULL, NULL, NULL, "wrap" };

/* One consumption of t by query kind q: the outcome queries inline and out of line, typed and
 * untyped, then the result queries the same way (tandem/task.h); *value gets the value read. */
enum { QUERY_KINDS = 8 };
static int query_consume(int q, td_task_i64 t, int64_t *value)
{
    td_outcome o;
    int rc;
    o.value = -1;
    switch (q) {
    case 0: rc = td_task_i64_get(t, &o); break;
    case 1: rc = (td_task_i64_get)(t, &o); break;
    case 2: rc = td_task_get(t.task, &o); o.value = 0; break;
    case 3: rc = (td_task_get)(t.task, &o); o.value = 0; break;
    case 4: return td_task_i64_result(t, value, NULL);
    case 5: return (td_task_i64_result)(t, value, NULL);
    case 6: *value = 0; return td_task_result(t.task, NULL);
    default: *value = 0; return (td_task_result)(t.task, NULL);
    }
    if (rc == TD_OK && o.status != TD_SUCCEEDED) rc = -100;
    *value = o.value;
    return rc;
}

static void consumption_at_the_last_version(void)
{
    td_source s;
    td_source_init(&s, &wrap_ops);
    for (int q = 0; q < QUERY_KINDS; q++) {
        int typed = (q & 2) == 0;
        for (int pooled = 0; pooled <= 1; pooled++) {
            /* awaited: the inline queries leave mode AWAITED to their out-of-line rest */
            for (int awaited = 0; awaited <= 1; awaited++) {
                int64_t v = -2;
                s.value = 77;
                s.word = TD_WORD_VERSION_MASK | (uint32_t)TD_SUCCEEDED |
                         (pooled ? TD_WORD_POOLED : 0u) | (awaited ? TD_MODE_AWAITED : 0u);
                wrap_releases = 0;
                td_task_i64 t = td_task_i64_of(td_task_of(&s, TD_WORD_VERSION_MASK));
                TD_CHECK_EQ(TD_OK, query_consume(q, t, &v));
                TD_CHECK_EQ(typed ? 77 : 0, v);
                TD_CHECK_EQ(pooled ? 0 : 1, wrap_releases);
                TD_CHECK_EQ(pooled ? TD_WORD_POOLED : 0u, s.word);   /* version 0, pending */
                TD_CHECK_EQ(TD_E_STALE, query_consume(q, t, &v));
            }
        }
    }
}

/* The result queries: TD_OK and the value for a success; TD_E_FAULTED / TD_E_CANCELED for the
 * other outcomes, consumed, the record in *err only then; anything else as td_task_get's
 * with nothing consumed and nothing written. */
static void result_queries(void)
{
    td_completion_source *cs = td_completion_source_new();
    td_cancel_source *by = td_cancel_source_new();
    td_error err;
    int64_t v;
    for (int inline_ = 0; inline_ <= 1; inline_++) {
#define RESULT_I64(t, vp, e) (inline_ ? td_task_i64_result((t), (vp), (e)) : (td_task_i64_result)((t), (vp), (e)))
#define RESULT(t, e) (inline_ ? td_task_result((t), (e)) : (td_task_result)((t), (e)))
        v = 5;
        TD_CHECK_EQ(TD_OK, RESULT_I64(td_from_result(-9), &v, NULL));
        TD_CHECK_EQ(-9, v);
        TD_CHECK_EQ(TD_OK, RESULT(td_completed(), NULL));

        /* pending: nothing consumed, nothing written */
        td_completion_source_reset(cs);
        td_task_i64 t = td_completion_source_task_i64(cs);
        v = 5;
        err.code = 12345;
        TD_CHECK_EQ(TD_E_PENDING, RESULT_I64(t, &v, &err));
        TD_CHECK_EQ(5, v);
        TD_CHECK_EQ(12345, err.code);
        TD_CHECK_EQ(TD_OK, td_completion_source_set_result(cs, 31));
        TD_CHECK_EQ(TD_OK, RESULT_I64(t, &v, &err));
        TD_CHECK_EQ(31, v);
        TD_CHECK_EQ(12345, err.code);
        TD_CHECK_EQ(TD_E_STALE, RESULT_I64(t, &v, &err));
        TD_CHECK_EQ(TD_E_STALE, RESULT(t.task, &err));

        /* a fault: consumed, the record written (and not needed: err NULL) */
        td_completion_source_reset(cs);
        t = td_completion_source_task_i64(cs);
        TD_CHECK_EQ(TD_OK, td_completion_source_set_error(cs, TD_ERR_USER + 3, "bad"));
        v = 5;
        TD_CHECK_EQ(TD_E_FAULTED, RESULT_I64(t, &v, &err));
        TD_CHECK_EQ(5, v);
        TD_CHECK_EQ(TD_ERR_USER + 3, err.code);
        TD_CHECK(strcmp(err.message, "bad") == 0);
        TD_CHECK_EQ(TD_E_STALE, RESULT_I64(t, &v, &err));
        td_task f = td_from_error(TD_ERR_USER + 4, "worse");
        TD_CHECK_EQ(TD_E_FAULTED, RESULT(f, NULL));
        TD_CHECK_EQ(TD_E_STALE, RESULT(f, NULL));

        /* a cancellation: its cancel source in the record */
        td_completion_source_reset(cs);
        t = td_completion_source_task_i64(cs);
        TD_CHECK_EQ(TD_OK, td_completion_source_set_canceled(cs, by));
        err.cancel = NULL;
        TD_CHECK_EQ(TD_E_CANCELED, RESULT(t.task, &err));
        TD_CHECK(err.cancel == by);
        TD_CHECK_EQ(TD_E_STALE, RESULT(t.task, &err));
#undef RESULT_I64
#undef RESULT
    }
    td_cancel_source_free(by);
    td_completion_source_free(cs);
}

int main(void)
{
    TD_RUN(constants_need_no_runtime);   /* before td_runtime_init on purpose */
    if (td_runtime_init(NULL) != TD_OK)
        return 2;
    TD_RUN(from_error_and_canceled);
    TD_RUN(manual_source_protocol);
    TD_RUN(auto_source_recycles);
    TD_RUN(version_wraps_and_stays_distinct);
    TD_RUN(token_is_the_version_in_place);
    TD_RUN(consumption_at_the_last_version);
    TD_RUN(result_queries);
    td_runtime_shutdown();
    return TD_TEST_SUMMARY();
}
