/*
 * completion.c - manual and auto-reset completion sources (include/tandem/completion.h).
 * Producers may race (a cancel against a result), so both use td_source_try_complete.
 */
#include "../port/td_libc.h"
#include "td_internal.h"

struct td_completion_source {
    td_source source;
};

/* Consumption leaves a manual source consumed until its owner resets it. */
static void completion_manual_release(td_source *s) { td_source_keep_consumed_(s); }

static const td_source_ops completion_manual_ops = { completion_manual_release, NULL, NULL, NULL, "completion-source" };

td_completion_source *td_completion_source_new(void)
{
    td_completion_source *cs = (td_completion_source *)malloc(sizeof(*cs));
    if (cs) {
        td_source_init(&cs->source, &completion_manual_ops);
        TD_SOURCE_OWN_(&cs->source);
    }
    return cs;
}

void td_completion_source_free(td_completion_source *cs) { free(cs); }
/* The resetting thread owns the new version (task.h): nobody else holds its token yet. */
void td_completion_source_reset(td_completion_source *cs)
{
    td_source_recycle(&cs->source);
    TD_SOURCE_OWN_(&cs->source);
}

/* The tasks are written field by field: td_task_of / td_task_i64_of would be calls under tcc. */
td_task td_completion_source_task(td_completion_source *cs)
{
    td_task t;
    t.source = &cs->source;
    t.token = td_source_token(&cs->source);
    return t;
}

td_task_i64 td_completion_source_task_i64(td_completion_source *cs)
{
    td_task_i64 t;
    t.task.source = &cs->source;
    t.value = 0;
    t.task.token = td_source_token(&cs->source);
    return t;
}

/* In the main thread's window on an owned manual source whose pending word is `w`, with a
 * runner `r` of this thread waiting on it: `r` is handed the value as its awaited task, the
 * source-free task the consumption would have given it, and the source is released for it in
 * the store that publishes the success (mode CONSUMED, as completion_manual_release stores),
 * so the resumption has nothing to take; then the window closes. The source's value slot is
 * not written: consumed at once, the source answers every query with TD_E_STALE until its
 * reset (task.h's value-slot invariant names this exception). A macro: tcc pays no call. */
#define completion_hand_over_(s, w, r, v)                                               \
    do {                                                                                \
        (r)->awaiting.task.source = NULL;                                               \
        (r)->awaiting.value = (v);                                                      \
        TD_WORD_STORE_((s), TD_ACTOR_HANDOVER, TD_WORD_OWNED_DONE_((w), TD_SUCCEEDED, \
                                                    (const td_error *)NULL) | TD_MODE_CONSUMED); \
        TD_MAIN_OWNS_END_();                                                            \
    } while (0)

/* The result, past the fast path below, inside the window it opened on an owned source
 * (`w` the word read there): a waiting runner of this thread (its continuation
 * td_runner_resume_, or td_runner_move_next, which every registration with flow on takes) is
 * handed the value (completion_hand_over_) and resumed; td_runner_resume_'s body is called
 * in place. td_runner_move_next is public, so a runner is handed the value only if it awaits
 * this source. Anything else completes as an owned source does. A statement that returns
 * from its caller (TD_OK or TD_DONE) on every path, the window closed on every path. */
#define completion_set_result_owned_return_(s, w, value)                                \
    do {                                                                                \
        if (TD_LIKELY(TD_WORD_STATUS(w) == TD_PENDING)) {                               \
            if (TD_WORD_OWNED_HAS_CONTINUATION_(w)) {                                   \
                td_runner *ro_r_ = (td_runner *)(s)->cont_arg;                          \
                if ((s)->cont_fn == td_runner_resume_) {                                \
                    completion_hand_over_((s), (w), ro_r_, (value));                    \
                    ro_r_->method->step(ro_r_, ro_r_->frame);                           \
                    return TD_OK;                                                       \
                }                                                                       \
                if ((s)->cont_fn == td_runner_move_next && ro_r_->awaiting.task.source == (s)) { \
                    completion_hand_over_((s), (w), ro_r_, (value));                    \
                    td_runner_move_next(ro_r_);                                         \
                    return TD_OK;                                                       \
                }                                                                       \
            }                                                                           \
            TD_SOURCE_COMPLETE_OWNED_((s), (w), TD_SUCCEEDED, (value), (const td_error *)NULL); \
            return TD_OK;                                                               \
        }                                                                               \
        TD_MAIN_OWNS_END_();                                                            \
        return TD_DONE;                                                                 \
    } while (0)

#if TD_PORT_INLINES
/* Where the compiler inlines, the rest is out of line, so that the fast path inlines into its
 * callers: the window's one call (completion_set_result_owned ends it before calling
 * anything, the window's rule, td_internal.h). Reopening the window here instead cost a
 * second one (some ten instructions) on every completion the fast path does not take.
 * Under tcc, which inlines nothing, the rest stays in place: a call cost twenty. */
static TD_NOINLINE int completion_set_result_owned(td_source *s, uint32_t w, int64_t value)
{
    completion_set_result_owned_return_(s, w, value);
}
#define completion_set_result_rest_return_(s, w, value) return completion_set_result_owned((s), (w), (value))
#else
#define completion_set_result_rest_return_(s, w, value) completion_set_result_owned_return_((s), (w), (value))
#endif

/* The common case first: the main thread's window on an owned source, pending with a
 * runner of this thread waiting (mode AWAITED with TD_WORD_RESUMES_RUNNER: continuation
 * td_runner_resume_, task.h). One test of the word for all three, cont_fn not loaded;
 * anything else in the window is the rest's (above), a source not owned here
 * td_source_try_succeed_current_'s. Kept apart so that this path has no merged return value
 * to carry across the step's call. */
int td_completion_source_set_result(td_completion_source *cs, int64_t value)
{
    td_source *s = &cs->source;
    if (TD_MAIN_OWNS_BEGIN_(s)) {
        uint32_t w = td_atomic_load_u32(&s->word);
        if (TD_LIKELY((w & (TD_WORD_STATUS_MASK | TD_MODE_AWAITED | TD_WORD_RESUMES_RUNNER)) ==
                      (TD_MODE_AWAITED | TD_WORD_RESUMES_RUNNER))) {
            td_runner *r = (td_runner *)s->cont_arg;
            completion_hand_over_(s, w, r, value);
            r->method->step(r, r->frame);
            return TD_OK;
        }
        completion_set_result_rest_return_(s, w, value);
    }
    return td_source_try_succeed_current_(s, value);
}

int td_completion_source_set_error(td_completion_source *cs, int code, const char *message)
{
    td_error e;
    e.code = code;
    e.message = message;
    e.cancel = NULL;
    return td_source_try_complete(&cs->source, td_source_token(&cs->source), TD_FAULTED, 0, &e);
}

int td_completion_source_set_canceled(td_completion_source *cs, td_cancel_source *by)
{
    td_error e = td_cancel_error(by);
    return td_source_try_complete(&cs->source, td_source_token(&cs->source), TD_CANCELED, 0, &e);
}

/* ---- auto-reset ------------------------------------------------------------------- */

struct td_auto_source {
    td_source source;
};

static void completion_auto_release(td_source *s)
{
    td_source_recycle(s);
    td_pool_return(&td_auto_source_pool, s);
}

static const td_source_ops completion_auto_ops = { completion_auto_release, NULL, NULL, NULL, "auto-source" };

td_auto_source *td_auto_source_rent(void)
{
    td_source *s = (td_source *)td_pool_rent(&td_auto_source_pool);
    if (s == NULL)
        return NULL;
    if (s->ops == NULL)
        s->ops = &completion_auto_ops;
    TD_SOURCE_OWN_(s);
    return (td_auto_source *)s;
}

td_task td_auto_source_task(td_auto_source *s)
{
    td_task t;
    t.source = &s->source;
    t.token = td_source_token(&s->source);
    return t;
}

td_task_i64 td_auto_source_task_i64(td_auto_source *s)
{
    td_task_i64 t;
    t.task.source = &s->source;
    t.value = 0;
    t.task.token = td_source_token(&s->source);
    return t;
}

int td_auto_source_set_result(td_auto_source *s, uint32_t token, int64_t value)
{
    return td_source_try_succeed_(&s->source, token, value);
}

int td_auto_source_set_error(td_auto_source *s, uint32_t token, int code, const char *message)
{
    td_error e;
    e.code = code;
    e.message = message;
    e.cancel = NULL;
    return td_source_try_complete(&s->source, token, TD_FAULTED, 0, &e);
}

int td_auto_source_set_canceled(td_auto_source *s, uint32_t token, td_cancel_source *by)
{
    td_error e = td_cancel_error(by);
    return td_source_try_complete(&s->source, token, TD_CANCELED, 0, &e);
}
