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

/* when_all: input 0 completes in state st, input 1 succeeds: both done. `cont`: consumed
 * by its continuation, inside input 1's completion (STALE_IN_CONTINUATION). */
static int stale_all(stale_fx *fx, int typed, td_status st, int cont)
{
    if (typed) {
        td_task_i64 in[2];
        stale_inputs_i64(fx, in);
        stale_set_untyped(fx, td_when_all_i64(in, 2, fx->results));
    } else {
        td_task in[2];
        stale_inputs(fx, in);
        stale_set_untyped(fx, td_when_all(in, 2));
    }
    if (cont && stale_subscribe(fx))
        return 1;
    stale_settle(fx->gate[0], st);
    stale_settle(fx->gate[1], TD_SUCCEEDED);
    return 0;
}
static int stale_all_ok(stale_fx *fx) { return stale_all(fx, 0, TD_SUCCEEDED, 0); }
static int stale_all_fault(stale_fx *fx) { return stale_all(fx, 0, TD_FAULTED, 0); }
static int stale_all_cancel(stale_fx *fx) { return stale_all(fx, 0, TD_CANCELED, 0); }
static int stale_all_i64_ok(stale_fx *fx) { return stale_all(fx, 1, TD_SUCCEEDED, 0); }
static int stale_all_i64_fault(stale_fx *fx) { return stale_all(fx, 1, TD_FAULTED, 0); }
static int stale_all_i64_cancel(stale_fx *fx) { return stale_all(fx, 1, TD_CANCELED, 0); }
static int stale_all_cont(stale_fx *fx) { return stale_all(fx, 0, TD_SUCCEEDED, 1); }

/* when_any (kind 0), when_any_i64 (1), race (2): input 0 wins in state st, input 1 stays
 * pending (the loser still holds the promise). kind 3: when_any consumed by its
 * continuation, inside the winner's completion. */
static int stale_any(stale_fx *fx, int kind, td_status st)
{
    if (kind == 1) {
        td_task_i64 in[2];
        stale_inputs_i64(fx, in);
        stale_set_typed(fx, td_when_any_i64(in, 2, &fx->winner));
    } else {
        td_task in[2];
        stale_inputs(fx, in);
        stale_set_typed(fx, kind == 2 ? td_race(in, 2, stale_cancel(fx, 0)) : td_when_any(in, 2));
    }
    if (kind == 3 && stale_subscribe(fx))
        return 1;
    stale_settle(fx->gate[0], st);
    return 0;
}
static int stale_any_ok(stale_fx *fx) { return stale_any(fx, 0, TD_SUCCEEDED); }
static int stale_any_fault(stale_fx *fx) { return stale_any(fx, 0, TD_FAULTED); }
static int stale_any_cancel(stale_fx *fx) { return stale_any(fx, 0, TD_CANCELED); }
static int stale_any_i64_ok(stale_fx *fx) { return stale_any(fx, 1, TD_SUCCEEDED); }
static int stale_any_i64_fault(stale_fx *fx) { return stale_any(fx, 1, TD_FAULTED); }
static int stale_any_i64_cancel(stale_fx *fx) { return stale_any(fx, 1, TD_CANCELED); }
static int stale_race_ok(stale_fx *fx) { return stale_any(fx, 2, TD_SUCCEEDED); }
static int stale_race_fault(stale_fx *fx) { return stale_any(fx, 2, TD_FAULTED); }
static int stale_race_cancel(stale_fx *fx) { return stale_any(fx, 2, TD_CANCELED); }
static int stale_any_cont(stale_fx *fx) { return stale_any(fx, 3, TD_SUCCEEDED); }

/* timeout over gate 0. how: 0 the producer completes in state st first (a long delay);
 * 1 timed out with error, 2 timed out without (the producer still pending);
 * 3 the options' token cancelled immediately (the producer still pending). */
static int stale_timeout(stale_fx *fx, int typed, int how, td_status st)
{
    td_wait_options o;
    const td_wait_options *op = how == 3 ? (o = stale_options(fx, 1), &o) : NULL;
    int64_t ns = how == 0 ? 1000000000000LL : 1000;
    td_completion_source *g = stale_gate(fx, 0);
    if (typed)
        stale_set_typed(fx, td_timeout_i64(td_completion_source_task_i64(g), ns, TD_CLOCK_REALTIME, how != 2, op));
    else
        stale_set_untyped(fx, td_timeout(td_completion_source_task(g), ns, TD_CLOCK_REALTIME, how != 2, op));
    if (how == 0)
        stale_settle(g, st);
    else if (how == 3)
        td_cancel_source_cancel(fx->cancel[0]);
    return !stale_pump(fx->t.task);
}
static int stale_timeout_ok(stale_fx *fx) { return stale_timeout(fx, 0, 0, TD_SUCCEEDED); }
static int stale_timeout_fault(stale_fx *fx) { return stale_timeout(fx, 0, 0, TD_FAULTED); }
static int stale_timeout_cancel(stale_fx *fx) { return stale_timeout(fx, 0, 0, TD_CANCELED); }
static int stale_timeout_error(stale_fx *fx) { return stale_timeout(fx, 0, 1, TD_FAULTED); }
static int stale_timeout_flag(stale_fx *fx) { return stale_timeout(fx, 0, 2, TD_SUCCEEDED); }
static int stale_timeout_token(stale_fx *fx) { return stale_timeout(fx, 0, 3, TD_CANCELED); }
static int stale_timeout_i64_ok(stale_fx *fx) { return stale_timeout(fx, 1, 0, TD_SUCCEEDED); }
static int stale_timeout_i64_fault(stale_fx *fx) { return stale_timeout(fx, 1, 0, TD_FAULTED); }
static int stale_timeout_i64_error(stale_fx *fx) { return stale_timeout(fx, 1, 1, TD_FAULTED); }
static int stale_timeout_i64_flag(stale_fx *fx) { return stale_timeout(fx, 1, 2, TD_SUCCEEDED); }
static int stale_timeout_i64_token(stale_fx *fx) { return stale_timeout(fx, 1, 3, TD_CANCELED); }

/* attach_cancel over gate 0: the gate completes in state st, or (held 1) the token cancels
 * while the gate is pending; held 2: the gate completes, consumed by the continuation. */
static int stale_attach(stale_fx *fx, int held, td_status st)
{
    td_completion_source *g = stale_gate(fx, 0);
    td_cancel_token tok = td_cancel_source_token(stale_cancel(fx, 0));
    stale_set_typed(fx, td_attach_cancel_i64(td_completion_source_task_i64(g), tok));
    if (held == 2 && stale_subscribe(fx))
        return 1;
    if (held == 1)
        td_cancel_source_cancel(fx->cancel[0]);
    else
        stale_settle(g, st);
    return 0;
}
static int stale_attach_ok(stale_fx *fx) { return stale_attach(fx, 0, TD_SUCCEEDED); }
static int stale_attach_fault(stale_fx *fx) { return stale_attach(fx, 0, TD_FAULTED); }
static int stale_attach_cancel(stale_fx *fx) { return stale_attach(fx, 0, TD_CANCELED); }
static int stale_attach_held(stale_fx *fx) { return stale_attach(fx, 1, TD_CANCELED); }
static int stale_attach_cont(stale_fx *fx) { return stale_attach(fx, 2, TD_SUCCEEDED); }

/* suppress over gate 0 completed in state st (a cancellation reads as a flagged success),
 * or over an attach_cancel whose token beat the still pending gate: the suppress promise
 * is free once consumed, the attach promise under it is the one the gate still holds. */
static int stale_suppress(stale_fx *fx, int held, td_status st, int cont)
{
    td_completion_source *g = stale_gate(fx, 0);
    td_task_i64 in = td_completion_source_task_i64(g);
    if (held)
        in = td_attach_cancel_i64(in, td_cancel_source_token(stale_cancel(fx, 0)));
    stale_set_typed(fx, td_suppress_cancel_i64(in));
    if (cont && stale_subscribe(fx))
        return 1;
    if (held)
        td_cancel_source_cancel(fx->cancel[0]);
    else
        stale_settle(g, st);
    return 0;
}
static int stale_suppress_ok(stale_fx *fx) { return stale_suppress(fx, 0, TD_SUCCEEDED, 0); }
static int stale_suppress_fault(stale_fx *fx) { return stale_suppress(fx, 0, TD_FAULTED, 0); }
static int stale_suppress_cancel(stale_fx *fx) { return stale_suppress(fx, 0, TD_CANCELED, 0); }
static int stale_suppress_held(stale_fx *fx) { return stale_suppress(fx, 1, TD_CANCELED, 0); }
static int stale_suppress_cont_ok(stale_fx *fx) { return stale_suppress(fx, 0, TD_SUCCEEDED, 1); }
static int stale_suppress_cont_fault(stale_fx *fx) { return stale_suppress(fx, 0, TD_FAULTED, 1); }
static int stale_suppress_cont_cancel(stale_fx *fx) { return stale_suppress(fx, 0, TD_CANCELED, 1); }

static const stale_row stale_rows_compose[] = {
    STALE_ROW("td_when_all", "succeeded", TD_SUCCEEDED, stale_all_ok, NULL, 0),
    STALE_ROW("td_when_all", "faulted", TD_FAULTED, stale_all_fault, NULL, 0),
    STALE_ROW("td_when_all", "canceled", TD_CANCELED, stale_all_cancel, NULL, 0),
    STALE_ROW("td_when_all_i64", "succeeded", TD_SUCCEEDED, stale_all_i64_ok, NULL, 0),
    STALE_ROW("td_when_all_i64", "faulted", TD_FAULTED, stale_all_i64_fault, NULL, 0),
    STALE_ROW("td_when_all_i64", "canceled", TD_CANCELED, stale_all_i64_cancel, NULL, 0),
    STALE_ROW("td_when_all", "succeeded, consumed in its continuation", TD_SUCCEEDED, stale_all_cont, NULL, STALE_IN_CONTINUATION),
    STALE_ROW("td_when_any", "succeeded, consumed in its continuation", TD_SUCCEEDED, stale_any_cont, NULL, STALE_IN_CONTINUATION),
    STALE_ROW("td_when_any", "succeeded, loser pending", TD_SUCCEEDED, stale_any_ok, NULL, STALE_HELD),
    STALE_ROW("td_when_any", "faulted, loser pending", TD_FAULTED, stale_any_fault, NULL, STALE_HELD),
    STALE_ROW("td_when_any", "canceled, loser pending", TD_CANCELED, stale_any_cancel, NULL, STALE_HELD),
    STALE_ROW("td_when_any_i64", "succeeded, loser pending", TD_SUCCEEDED, stale_any_i64_ok, NULL, STALE_HELD),
    STALE_ROW("td_when_any_i64", "faulted, loser pending", TD_FAULTED, stale_any_i64_fault, NULL, STALE_HELD),
    STALE_ROW("td_when_any_i64", "canceled, loser pending", TD_CANCELED, stale_any_i64_cancel, NULL, STALE_HELD),
    STALE_ROW("td_race", "succeeded, loser pending", TD_SUCCEEDED, stale_race_ok, NULL, STALE_HELD),
    STALE_ROW("td_race", "faulted, loser pending", TD_FAULTED, stale_race_fault, NULL, STALE_HELD),
    STALE_ROW("td_race", "canceled, loser pending", TD_CANCELED, stale_race_cancel, NULL, STALE_HELD),
    STALE_ROW("td_timeout", "succeeded, producer first", TD_SUCCEEDED, stale_timeout_ok, NULL, 0),
    STALE_ROW("td_timeout", "faulted, producer first", TD_FAULTED, stale_timeout_fault, NULL, 0),
    STALE_ROW("td_timeout", "canceled, producer first", TD_CANCELED, stale_timeout_cancel, NULL, 0),
    STALE_ROW("td_timeout", "faulted: timed out, producer pending", TD_FAULTED, stale_timeout_error, NULL, STALE_HELD),
    STALE_ROW("td_timeout", "succeeded flagged: timed out, producer pending", TD_SUCCEEDED, stale_timeout_flag, NULL, STALE_HELD),
    STALE_ROW("td_timeout", "canceled by the options' token, producer pending", TD_CANCELED, stale_timeout_token, NULL, STALE_HELD),
    STALE_ROW("td_timeout_i64", "succeeded, producer first", TD_SUCCEEDED, stale_timeout_i64_ok, NULL, 0),
    STALE_ROW("td_timeout_i64", "faulted, producer first", TD_FAULTED, stale_timeout_i64_fault, NULL, 0),
    STALE_ROW("td_timeout_i64", "faulted: timed out, producer pending", TD_FAULTED, stale_timeout_i64_error, NULL, STALE_HELD),
    STALE_ROW("td_timeout_i64", "succeeded flagged: timed out, producer pending", TD_SUCCEEDED, stale_timeout_i64_flag, NULL, STALE_HELD),
    STALE_ROW("td_timeout_i64", "canceled by the options' token, producer pending", TD_CANCELED, stale_timeout_i64_token, NULL, STALE_HELD),
    STALE_ROW("td_attach_cancel_i64", "succeeded", TD_SUCCEEDED, stale_attach_ok, NULL, 0),
    STALE_ROW("td_attach_cancel_i64", "faulted", TD_FAULTED, stale_attach_fault, NULL, 0),
    STALE_ROW("td_attach_cancel_i64", "canceled by the input", TD_CANCELED, stale_attach_cancel, NULL, 0),
    STALE_ROW("td_attach_cancel_i64", "canceled by the token, input pending", TD_CANCELED, stale_attach_held, NULL, STALE_HELD),
    STALE_ROW("td_attach_cancel_i64", "succeeded, consumed in its continuation", TD_SUCCEEDED, stale_attach_cont, NULL, STALE_IN_CONTINUATION),
    STALE_ROW("td_suppress_cancel_i64", "succeeded", TD_SUCCEEDED, stale_suppress_ok, NULL, 0),
    STALE_ROW("td_suppress_cancel_i64", "faulted", TD_FAULTED, stale_suppress_fault, NULL, 0),
    STALE_ROW("td_suppress_cancel_i64", "succeeded flagged: input canceled", TD_SUCCEEDED, stale_suppress_cancel, NULL, 0),
    STALE_ROW("td_suppress_cancel_i64", "succeeded flagged: attached token, input pending", TD_SUCCEEDED, stale_suppress_held, NULL, 0),
    STALE_ROW("td_suppress_cancel_i64", "succeeded, consumed in its continuation", TD_SUCCEEDED, stale_suppress_cont_ok, NULL, STALE_IN_CONTINUATION),
    STALE_ROW("td_suppress_cancel_i64", "faulted, consumed in its continuation", TD_FAULTED, stale_suppress_cont_fault, NULL, STALE_IN_CONTINUATION),
    STALE_ROW("td_suppress_cancel_i64", "succeeded flagged, consumed in its continuation", TD_SUCCEEDED, stale_suppress_cont_cancel, NULL, STALE_IN_CONTINUATION),
};
