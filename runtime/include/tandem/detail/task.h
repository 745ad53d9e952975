/*
 * detail/task.h - the task queries' fast paths: internal, exposed for inlining.
 *
 * Included by task.h after the API. Where the compiler inlines (TD_PORT_INLINES) the
 * queries are the inline functions here, which answer a source-free task, a reached stamp
 * and a succeeded protocol source without a call and call the out-of-line function for the
 * rest; under tcc the consumption's common cases are the port's assembly functions
 * (port/td_port_tcc_asm.h). The word's rules are detail/word.h's.
 */
#ifndef TANDEM_DETAIL_TASK_H
#define TANDEM_DETAIL_TASK_H

#ifndef TANDEM_TASK_H
#error "detail/task.h is included by tandem/task.h, not directly"
#endif

/* 1 when s is a stamp source whose stamp reached `token` (TD_WORD_STAMPED). This and the
 * next are macros, not inline functions: tcc, which never inlines, would pay a call for each
 * on every query. */
#define td_source_stamp_reached_(s, token)                                              \
    ({  const td_source *td_sr_ = (s);                                                  \
        (td_atomic_load_u32((volatile uint32_t *)&td_sr_->word) & TD_WORD_STAMPED) &&   \
        td_source_stamp_at_(td_sr_, (token)); })
/* ... given that s is one: its stamp (at cont_arg) reached `token` */
#define td_source_stamp_at_(s, token)                                                   \
    ((int32_t)(td_atomic_load_u32((volatile uint32_t *)(s)->cont_arg) - (token)) >= 0)

/* A succeeded outcome with `value` and no error record. */
#if defined(td_port_store_tag_value_zero24_)    /* tcc: one asm block (td_port.h) */
typedef char td_outcome_layout_[(offsetof(td_outcome, value) == 8 &&
                                 offsetof(td_outcome, error) == 16 && sizeof(td_outcome) == 40) ? 1 : -1];
#define td_outcome_succeeded_(out, v) td_port_store_tag_value_zero24_((out), TD_SUCCEEDED, (v))
#else
#define td_outcome_succeeded_(out, v)                                                   \
    do {                                                                                \
        td_outcome *td_os_ = (out);                                                     \
        td_os_->status = TD_SUCCEEDED;                                                  \
        td_os_->value = (v);                                                            \
        td_zero_24(&td_os_->error);     /* code, message, cancel */                     \
    } while (0)
#endif

TD_INLINE int td_task_status_fast_(td_task t, td_status *out)
{
    if (t.source == NULL || td_source_stamp_reached_(t.source, t.token)) {
        *out = TD_SUCCEEDED;
        return TD_OK;
    }
    return (td_task_status)(t, out);
}

/* The inline queries write a success's outcome only at the end, from a value held in a
 * register across the release; the out-of-line rest writes a local of its own, so the
 * caller's outcome never escapes and can live in registers. */
TD_INLINE int td_task_get_fast_(td_task t, td_outcome *out)
{
    int64_t v = 0;
    if (t.source != NULL) {
        uint32_t w = td_atomic_load_u32(&t.source->word);  /* one read for both tests */
        if (!TD_SOURCE_GET_WORD_ORDERED_(t.source, w, t.token, v = td_cs_->value)) {
            td_outcome o;
            int rc = (td_task_get)(t, &o);
            *out = o;
            return rc;
        }
    }
    td_outcome_succeeded_(out, v);
    return TD_OK;
}

TD_INLINE int td_task_i64_get_fast_(td_task_i64 t, td_outcome *out)
{
    int64_t v = t.value;
    if (t.task.source != NULL) {
        if (TD_SOURCE_GET_SUCCESS_(t.task.source, t.task.token, &v))
            ;
        else if (td_source_stamp_reached_(t.task.source, t.task.token))
            v = 0;
        else {
            td_outcome o;
            int rc = (td_task_i64_get)(t, &o);
            *out = o;
            return rc;
        }
    }
    td_outcome_succeeded_(out, v);
    return TD_OK;
}

/* The result queries' common cases: no source, a succeeded protocol source consumed in place
 * (and, untyped, a reached stamp); the out-of-line function for anything else. Only the
 * return code and the value leave them: no outcome to merge with the rest's. */
TD_INLINE int td_task_result_fast_(td_task t, td_error *err)
{
    if (t.source != NULL) {
        uint32_t w = td_atomic_load_u32(&t.source->word);
        if (!TD_SOURCE_GET_WORD_ORDERED_(t.source, w, t.token, (void)0))
            return (td_task_result)(t, err);
    }
    return TD_OK;
}

TD_INLINE int td_task_i64_result_fast_(td_task_i64 t, int64_t *value, td_error *err)
{
    int64_t v = t.value;
    if (t.task.source != NULL && !TD_SOURCE_GET_SUCCESS_(t.task.source, t.task.token, &v)) {
        int64_t rest;   /* the rest's own: v, never addressed, stays in a register */
        int rc = (td_task_i64_result)(t, &rest, err);
        if (rc != TD_OK)
            return rc;
        v = rest;
    }
    *value = v;
    return TD_OK;
}

TD_INLINE int td_task_on_completed_fast_(td_task t, td_continuation_fn fn, void *arg)
{
    if (t.source == NULL || td_source_stamp_reached_(t.source, t.token))
        return TD_DONE;
    return (td_task_on_completed)(t, fn, arg);
}

#if TD_PORT_INLINES     /* where the compiler inlines (td_port.h); else plain calls */
#define td_task_status(t, out) td_task_status_fast_((t), (out))
#define td_task_get(t, out) td_task_get_fast_((t), (out))
#define td_task_i64_get(t, out) td_task_i64_get_fast_((t), (out))
#define td_task_on_completed(t, fn, arg) td_task_on_completed_fast_((t), (fn), (arg))
#define td_task_result(t, err) td_task_result_fast_((t), (err))
#define td_task_i64_result(t, valp, err) td_task_i64_result_fast_((t), (valp), (err))
#elif defined(TD_PORT_DEFINE_TASK_GETS_)
/* tcc: the consumption's common cases in assembly (td_port_tcc_asm.h, defined in task.c), which
 * tail-jump to the out-of-line functions for the rest. */
int td_port_task_get_(td_task t, td_outcome *out);
int td_port_task_i64_get_(td_task_i64 t, td_outcome *out);
int td_port_task_result_(td_task t, td_error *err);
int td_port_task_i64_result_(td_task_i64 t, int64_t *value, td_error *err);
#define td_task_get(t, out) td_port_task_get_((t), (out))
#define td_task_i64_get(t, out) td_port_task_i64_get_((t), (out))
#define td_task_result(t, err) td_port_task_result_((t), (err))
#define td_task_i64_result(t, valp, err) td_port_task_i64_result_((t), (valp), (err))
#endif

#endif /* TANDEM_DETAIL_TASK_H */
