/*
 * stale_rows_compose.h - the staleness table's rows for the combinators (compose.h):
 * when_all, when_any, race, timeout, attach_cancel, suppress, typed and untyped.
 *
 * A combinator's promise is held by its pending inputs too: the STALE_HELD rows consume it
 * while an input (a when_any loser, a timed-out producer, an input an attached token beat)
 * still points at it; stale_finish then completes that input, whose continuation must
 * find the promise alive and not read by anyone (issue 40's reproductions 1 and 2). The
 * STALE_IN_CONTINUATION rows consume it in its continuation, which the completing input runs
 * before it drops its own hold on the promise.
 */

/* Two gate tasks, untyped and typed. */
static void stale_inputs(stale_fx *fx, td_task *in)
{
    in[0] = td_completion_source_task(stale_gate(fx, 0));
    in[1] = td_completion_source_task(stale_gate(fx, 1));
}
static void stale_inputs_i64(stale_fx *fx, td_task_i64 *in)
{
    in[0] = td_completion_source_task_i64(stale_gate(fx, 0));
    in[1] = td_completion_source_task_i64(stale_gate(fx, 1));
}

/* 1: the row's task is consumed by its continuation, inside its completing input's call. */
static int stale_subscribe_if(stale_fx *fx)
{
    return (fx->row->flags & STALE_IN_CONTINUATION) && stale_subscribe(fx);
}

/* when_all: input 0 completes in the row's input state, input 1 succeeds: both done. */
static int stale_all(stale_fx *fx)
{
    if (fx->row->typed) {
        td_task_i64 in[2];
        stale_inputs_i64(fx, in);
        stale_set_untyped(fx, td_when_all_i64(in, 2, fx->results));
    } else {
        td_task in[2];
        stale_inputs(fx, in);
        stale_set_untyped(fx, td_when_all(in, 2));
    }
    if (stale_subscribe_if(fx))
        return 1;
    stale_settle(fx->gate[0], fx->row->input);
    stale_settle(fx->gate[1], TD_SUCCEEDED);
    return 0;
}

/* when_any (how 0; typed: when_any_i64) or race (how 1): input 0 wins in the row's input
 * state, input 1 stays pending (the loser still holds the promise). */
static int stale_any(stale_fx *fx)
{
    if (fx->row->typed) {
        td_task_i64 in[2];
        stale_inputs_i64(fx, in);
        stale_set_typed(fx, td_when_any_i64(in, 2, &fx->winner));
    } else {
        td_task in[2];
        stale_inputs(fx, in);
        stale_set_typed(fx, fx->row->how == 1 ? td_race(in, 2, stale_cancel(fx, 0)) : td_when_any(in, 2));
    }
    if (stale_subscribe_if(fx))
        return 1;
    stale_settle(fx->gate[0], fx->row->input);
    return 0;
}

/* timeout over gate 0. how: 0 the producer completes in the row's input state first (a long
 * delay); 1 timed out with error, 2 timed out without (the producer still pending);
 * 3 the options' token cancelled immediately (the producer still pending). */
static int stale_timeout(stale_fx *fx)
{
    int how = fx->row->how;
    td_wait_options o;
    const td_wait_options *op = how == 3 ? (o = stale_options(fx, 1), &o) : NULL;
    int64_t ns = how == 0 ? 1000000000000LL : 1000;
    td_completion_source *g = stale_gate(fx, 0);
    if (fx->row->typed)
        stale_set_typed(fx, td_timeout_i64(td_completion_source_task_i64(g), ns, TD_CLOCK_REALTIME, how != 2, op));
    else
        stale_set_untyped(fx, td_timeout(td_completion_source_task(g), ns, TD_CLOCK_REALTIME, how != 2, op));
    if (how == 0)
        stale_settle(g, fx->row->input);
    else if (how == 3)
        td_cancel_source_cancel(fx->cancel[0]);
    return !stale_pump(fx->t.task);
}

/* attach_cancel over gate 0: the gate completes in the row's input state (how 0), or the
 * token cancels while the gate is pending (how 1). */
static int stale_attach(stale_fx *fx)
{
    td_completion_source *g = stale_gate(fx, 0);
    td_cancel_token tok = td_cancel_source_token(stale_cancel(fx, 0));
    stale_set_typed(fx, td_attach_cancel_i64(td_completion_source_task_i64(g), tok));
    if (stale_subscribe_if(fx))
        return 1;
    if (fx->row->how == 1)
        td_cancel_source_cancel(fx->cancel[0]);
    else
        stale_settle(g, fx->row->input);
    return 0;
}

/* suppress over gate 0 completed in the row's input state (a cancellation reads as a flagged
 * success), or (how 1) over an attach_cancel whose token beat the still pending gate: the
 * suppress promise is free once consumed, the attach promise under it is the one the gate
 * still holds. */
static int stale_suppress(stale_fx *fx)
{
    int held = fx->row->how == 1;
    td_completion_source *g = stale_gate(fx, 0);
    td_task_i64 in = td_completion_source_task_i64(g);
    if (held)
        in = td_attach_cancel_i64(in, td_cancel_source_token(stale_cancel(fx, 0)));
    stale_set_typed(fx, td_suppress_cancel_i64(in));
    if (stale_subscribe_if(fx))
        return 1;
    if (held)
        td_cancel_source_cancel(fx->cancel[0]);
    else
        stale_settle(g, fx->row->input);
    return 0;
}

#define STALE_CONT STALE_IN_CONTINUATION

static const stale_row stale_rows_compose[] = {
    /* ctor, variant, final, make, typed, input, how, expect, flags */
    STALE_ROW("td_when_all", "succeeded", STALE_OK, stale_all, 0, STALE_OK, 0, NULL, 0),
    STALE_ROW("td_when_all", "faulted", STALE_FAULT, stale_all, 0, STALE_FAULT, 0, NULL, 0),
    STALE_ROW("td_when_all", "canceled", STALE_CANCEL, stale_all, 0, STALE_CANCEL, 0, NULL, 0),
    STALE_ROW("td_when_all_i64", "succeeded", STALE_OK, stale_all, 1, STALE_OK, 0, NULL, 0),
    STALE_ROW("td_when_all_i64", "faulted", STALE_FAULT, stale_all, 1, STALE_FAULT, 0, NULL, 0),
    STALE_ROW("td_when_all_i64", "canceled", STALE_CANCEL, stale_all, 1, STALE_CANCEL, 0, NULL, 0),
    STALE_ROW("td_when_all", "succeeded, consumed in its continuation", STALE_OK, stale_all, 0, STALE_OK, 0, NULL, STALE_CONT),
    STALE_ROW("td_when_any", "succeeded, consumed in its continuation", STALE_OK, stale_any, 0, STALE_OK, 0, NULL, STALE_CONT),
    STALE_ROW("td_when_any", "succeeded, loser pending", STALE_OK, stale_any, 0, STALE_OK, 0, NULL, STALE_HELD),
    STALE_ROW("td_when_any", "faulted, loser pending", STALE_FAULT, stale_any, 0, STALE_FAULT, 0, NULL, STALE_HELD),
    STALE_ROW("td_when_any", "canceled, loser pending", STALE_CANCEL, stale_any, 0, STALE_CANCEL, 0, NULL, STALE_HELD),
    STALE_ROW("td_when_any_i64", "succeeded, loser pending", STALE_OK, stale_any, 1, STALE_OK, 0, NULL, STALE_HELD),
    STALE_ROW("td_when_any_i64", "faulted, loser pending", STALE_FAULT, stale_any, 1, STALE_FAULT, 0, NULL, STALE_HELD),
    STALE_ROW("td_when_any_i64", "canceled, loser pending", STALE_CANCEL, stale_any, 1, STALE_CANCEL, 0, NULL, STALE_HELD),
    STALE_ROW("td_race", "succeeded, loser pending", STALE_OK, stale_any, 0, STALE_OK, 1, NULL, STALE_HELD),
    STALE_ROW("td_race", "faulted, loser pending", STALE_FAULT, stale_any, 0, STALE_FAULT, 1, NULL, STALE_HELD),
    STALE_ROW("td_race", "canceled, loser pending", STALE_CANCEL, stale_any, 0, STALE_CANCEL, 1, NULL, STALE_HELD),
    STALE_ROW("td_timeout", "succeeded, producer first", STALE_OK, stale_timeout, 0, STALE_OK, 0, NULL, 0),
    STALE_ROW("td_timeout", "faulted, producer first", STALE_FAULT, stale_timeout, 0, STALE_FAULT, 0, NULL, 0),
    STALE_ROW("td_timeout", "canceled, producer first", STALE_CANCEL, stale_timeout, 0, STALE_CANCEL, 0, NULL, 0),
    STALE_ROW("td_timeout", "faulted: timed out, producer pending", STALE_FAULT, stale_timeout, 0, STALE_OK, 1, NULL, STALE_HELD),
    STALE_ROW("td_timeout", "succeeded flagged: timed out, producer pending", STALE_OK, stale_timeout, 0, STALE_OK, 2, NULL, STALE_HELD),
    STALE_ROW("td_timeout", "canceled by the options' token, producer pending", STALE_CANCEL, stale_timeout, 0, STALE_OK, 3, NULL, STALE_HELD),
    STALE_ROW("td_timeout_i64", "succeeded, producer first", STALE_OK, stale_timeout, 1, STALE_OK, 0, NULL, 0),
    STALE_ROW("td_timeout_i64", "faulted, producer first", STALE_FAULT, stale_timeout, 1, STALE_FAULT, 0, NULL, 0),
    STALE_ROW("td_timeout_i64", "faulted: timed out, producer pending", STALE_FAULT, stale_timeout, 1, STALE_OK, 1, NULL, STALE_HELD),
    STALE_ROW("td_timeout_i64", "succeeded flagged: timed out, producer pending", STALE_OK, stale_timeout, 1, STALE_OK, 2, NULL, STALE_HELD),
    STALE_ROW("td_timeout_i64", "canceled by the options' token, producer pending", STALE_CANCEL, stale_timeout, 1, STALE_OK, 3, NULL, STALE_HELD),
    STALE_ROW("td_attach_cancel_i64", "succeeded", STALE_OK, stale_attach, 1, STALE_OK, 0, NULL, 0),
    STALE_ROW("td_attach_cancel_i64", "faulted", STALE_FAULT, stale_attach, 1, STALE_FAULT, 0, NULL, 0),
    STALE_ROW("td_attach_cancel_i64", "canceled by the input", STALE_CANCEL, stale_attach, 1, STALE_CANCEL, 0, NULL, 0),
    STALE_ROW("td_attach_cancel_i64", "canceled by the token, input pending", STALE_CANCEL, stale_attach, 1, STALE_OK, 1, NULL, STALE_HELD),
    STALE_ROW("td_attach_cancel_i64", "succeeded, consumed in its continuation", STALE_OK, stale_attach, 1, STALE_OK, 0, NULL, STALE_CONT),
    STALE_ROW("td_suppress_cancel_i64", "succeeded", STALE_OK, stale_suppress, 1, STALE_OK, 0, NULL, 0),
    STALE_ROW("td_suppress_cancel_i64", "faulted", STALE_FAULT, stale_suppress, 1, STALE_FAULT, 0, NULL, 0),
    STALE_ROW("td_suppress_cancel_i64", "succeeded flagged: input canceled", STALE_OK, stale_suppress, 1, STALE_CANCEL, 0, NULL, 0),
    STALE_ROW("td_suppress_cancel_i64", "succeeded flagged: attached token, input pending", STALE_OK, stale_suppress, 1, STALE_OK, 1, NULL, 0),
    STALE_ROW("td_suppress_cancel_i64", "succeeded, consumed in its continuation", STALE_OK, stale_suppress, 1, STALE_OK, 0, NULL, STALE_CONT),
    STALE_ROW("td_suppress_cancel_i64", "faulted, consumed in its continuation", STALE_FAULT, stale_suppress, 1, STALE_FAULT, 0, NULL, STALE_CONT),
    STALE_ROW("td_suppress_cancel_i64", "succeeded flagged, consumed in its continuation", STALE_OK, stale_suppress, 1, STALE_CANCEL, 0, NULL, STALE_CONT),
};

#undef STALE_CONT
