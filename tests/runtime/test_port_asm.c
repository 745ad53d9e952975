/*
 * test_port_asm.c - the consumption's two paths give the same answers on the same words.
 * Under tcc (release) the fast path is the port's assembly (td_port_tcc_asm.h); under clang it
 * is the inline C of task.h; in the debug builds it is the C the state table checks. Each
 * case makes two identical sources in one state of the word's table (detail/word.h), consumes
 * one through the fast path (td_task_get, a macro) and the other through the out-of-line C
 * function ((td_task_get)), and compares the return code, the outcome and the word each
 * leaves; the same for the typed get and both result queries, with the task's own token and
 * a stale one.
 */
#include "td_test.h"
#include <tandem/tandem.h>

static void test_release(td_source *s) { td_source_recycle(s); }
static const td_source_ops test_protocol_ops = { test_release, NULL, NULL, NULL, "test-protocol" };

/* A stamp source (a frame marker's kind, loop.c: a custom source whose ops answer from the
 * stamp too, for the paths that do not test it inline). */
static int stamp_reached(td_source *s, uint32_t token)
{
    return (int32_t)(*(volatile uint32_t *)s->cont_arg - token) >= 0;
}
static int stamp_status(td_source *s, uint32_t token, td_status *out)
{
    *out = stamp_reached(s, token) ? TD_SUCCEEDED : TD_PENDING;
    return TD_OK;
}
static int stamp_on_completed(td_source *s, uint32_t token, td_continuation_fn fn, void *arg)
{ (void)s; (void)token; (void)fn; (void)arg; return TD_E_NOT_SUPPORTED; }
static int stamp_get(td_source *s, uint32_t token, td_outcome *out)
{
    if (!stamp_reached(s, token))
        return TD_E_PENDING;
    memset(out, 0, sizeof(*out));
    out->status = TD_SUCCEEDED;
    return TD_OK;
}
static const td_source_ops test_stamp_ops = { test_release, stamp_status, stamp_on_completed, stamp_get, "test-stamp" };

#define V3 (3u * TD_TOKEN_STEP)
static volatile uint32_t test_stamp;

typedef struct word_case { const char *name; uint32_t word; int stamp; } word_case;

static const word_case word_cases[] = {
    { "pending", V3, 0 },
    { "pending awaited", V3 | TD_MODE_AWAITED, 0 },
    { "pending claimed", V3 | TD_WORD_CLAIMED, 0 },
    { "succeeded", V3 | TD_SUCCEEDED, 0 },
    { "succeeded awaited", V3 | TD_SUCCEEDED | TD_MODE_AWAITED, 0 },
    { "succeeded awaited, resumes a runner", V3 | TD_SUCCEEDED | TD_MODE_AWAITED | TD_WORD_RESUMES_RUNNER, 0 },
    { "succeeded with a record", V3 | TD_SUCCEEDED | TD_WORD_RECORD, 0 },
    { "succeeded, pooled at success", V3 | TD_SUCCEEDED | TD_WORD_POOLED, 0 },
    { "succeeded awaited, pooled at success", V3 | TD_SUCCEEDED | TD_WORD_POOLED | TD_MODE_AWAITED, 0 },
    { "faulted", V3 | TD_FAULTED, 0 },
    { "canceled", V3 | TD_CANCELED, 0 },
    { "consumed", V3 | TD_SUCCEEDED | TD_MODE_CONSUMED, 0 },
    { "shared", V3 | TD_SUCCEEDED | TD_MODE_SHARED, 0 },
    { "immortal faulted", TD_WORD_IMMORTAL | TD_FAULTED, 0 },
    { "stamp reached", TD_WORD_STAMPED, 1 },
    { "stamp not reached", TD_WORD_STAMPED, 2 },
};

static void make_source(td_source *s, const word_case *c)
{
    memset(s, 0, sizeof(*s));
    s->word = c->word;
    s->value = 77;
    s->ops = c->stamp ? &test_stamp_ops : &test_protocol_ops;
    if (c->stamp)
        s->cont_arg = (void *)&test_stamp;
    if ((c->word & TD_WORD_STATUS_MASK) == TD_FAULTED || (c->word & TD_WORD_RECORD)) {
        s->error.code = 1001;
        s->error.message = "recorded";
    }
}

/* The token a case is queried with: the source's version, one stale version, and for a
 * stamp source the frame the stamp has or has not reached. */
static uint32_t case_token(const word_case *c, int stale)
{
    if (c->stamp)
        return c->stamp == 1 ? 5u : 9u;
    return (c->word & TD_WORD_VERSION_MASK) + (stale ? TD_TOKEN_STEP : 0u);
}

static int same_outcome(const td_outcome *a, const td_outcome *b)
{
    return a->status == b->status && a->value == b->value && a->error.code == b->error.code &&
           a->error.message == b->error.message && a->error.cancel == b->error.cancel;
}

static void both_paths_agree_on_every_word(void)
{
    test_stamp = 7;     /* tokens 5 reached, 9 not */
    for (size_t i = 0; i < sizeof(word_cases) / sizeof(word_cases[0]); i++) {
        const word_case *c = &word_cases[i];
        for (int stale = 0; stale < 2; stale++) {
            uint32_t token = case_token(c, stale);
            for (int query = 0; query < 4; query++) {
                td_source fast, slow;
                make_source(&fast, c);
                make_source(&slow, c);
                td_outcome of, os;
                td_error ef, es;
                int64_t vf = -1, vs = -1;
                memset(&of, 0x5a, sizeof(of));
                memset(&os, 0x5a, sizeof(os));
                memset(&ef, 0, sizeof(ef));
                memset(&es, 0, sizeof(es));
                td_task tf = td_task_of(&fast, token), ts = td_task_of(&slow, token);
                int rf = 0, rs = 0;
                switch (query) {
                case 0: rf = td_task_get(tf, &of); rs = (td_task_get)(ts, &os); break;
                case 1: rf = td_task_i64_get(td_task_i64_of(tf), &of);
                        rs = (td_task_i64_get)(td_task_i64_of(ts), &os); break;
                case 2: rf = td_task_result(tf, &ef); rs = (td_task_result)(ts, &es); break;
                case 3: rf = td_task_i64_result(td_task_i64_of(tf), &vf, &ef);
                        rs = (td_task_i64_result)(td_task_i64_of(ts), &vs, &es); break;
                }
                if (rf != rs || fast.word != slow.word ||
                    (query < 2 && rf == TD_OK && !same_outcome(&of, &os)) ||
                    (query >= 2 && (vf != vs || ef.code != es.code || ef.message != es.message))) {
                    fprintf(stderr, "case '%s'%s, query %d: fast rc %d word 0x%x, slow rc %d word 0x%x\n",
                            c->name, stale ? " (stale token)" : "", query, rf, fast.word, rs, slow.word);
                    TD_CHECK(0);
                }
            }
        }
    }
}

int main(void)
{
    TD_RUN(both_paths_agree_on_every_word);
    return TD_TEST_SUMMARY();
}
