/*
 * stale_rows_sources.h - the staleness table's rows for task values, completion and auto
 * sources, runners (async methods), shared handles and the adapters (stale_table.h).
 */

/* A task with no source is a constant (task.h:6, "A task with no source is already completed
 * successfully"; from_result is a compile-time constant): every read answers its success,
 * a registration is refused as done, and a share holds the value (shared.c: TD_DONE inside). */
static const stale_expect stale_constant = { TD_OK, TD_OK, TD_OK, TD_DONE, TD_OK,
                                             "task.h:6 a task with no source is already completed" };
/* A bridge answered inside td_from_callback hands back a source-free success (adapter.c,
 * adapter_task), which is the constant above (task.h:6). */
static const stale_expect stale_adapter_inline = { TD_OK, TD_OK, TD_OK, TD_DONE, TD_OK,
                                                   "task.h:6 an answered bridge is a source-free task" };

/* The task values: how 0 td_completed, 1 from_result, 2 from_error, 3 from_canceled (with a
 * token); the typed forms where the row says so. */
static int stale_value(stale_fx *fx)
{
    const stale_row *r = fx->row;
    if (r->how == 0)
        stale_set_untyped(fx, td_completed());
    else if (r->how == 1)
        stale_set_typed(fx, td_from_result(5));
    else if (r->how == 2 && r->typed)
        stale_set_typed(fx, td_from_error_i64(TD_ERR_USER, "e"));
    else if (r->how == 2)
        stale_set_untyped(fx, td_from_error(TD_ERR_USER, "e"));
    else if (r->typed)
        stale_set_typed(fx, td_from_canceled_i64(stale_cancel(fx, 0)));
    else
        stale_set_untyped(fx, td_from_canceled(NULL));
    return 0;
}

/* ---- completion sources: manual (keeps its outcome) and auto (pooled) ---------------- */

static int stale_manual(stale_fx *fx)
{
    td_completion_source *g = stale_gate(fx, 0);
    if (fx->row->typed)
        stale_set_typed(fx, td_completion_source_task_i64(g));
    else
        stale_set_untyped(fx, td_completion_source_task(g));
    stale_settle(g, fx->row->input);
    return 0;
}

static int stale_auto(stale_fx *fx)
{
    td_auto_source *s = td_auto_source_rent();
    if (s == NULL)
        return 1;
    if (fx->row->typed)
        stale_set_typed(fx, td_auto_source_task_i64(s));
    else
        stale_set_untyped(fx, td_auto_source_task(s));
    uint32_t token = fx->t.task.token;
    if (fx->row->input == TD_SUCCEEDED)
        return td_auto_source_set_result(s, token, 7);
    if (fx->row->input == TD_FAULTED)
        return td_auto_source_set_error(s, token, TD_ERR_USER, "auto fault");
    return td_auto_source_set_canceled(s, token, NULL);
}

/* ---- runners: a method that awaits a gate, so its task has a source ------------------ */

typedef struct { td_task_i64 gate; int64_t got; } stale_await_frame;
static void stale_await_i64_step(td_runner *r, stale_await_frame *f)
{
    TD_BEGIN(r);
    TD_AWAIT_VALUE(r, f->gate, f->got);
    TD_RETURN_VALUE(r, f->got + 1);
    TD_END(r);
}
TD_METHOD_DEFINE(stale_await_i64, stale_await_frame, stale_await_i64_step);

static void stale_await_step(td_runner *r, stale_await_frame *f)
{
    TD_BEGIN(r);
    TD_AWAIT(r, f->gate.task);
    TD_RETURN(r);
    TD_END(r);
}
TD_METHOD_DEFINE(stale_await, stale_await_frame, stale_await_step);

/* The method suspended on gate 0, which then completes in the row's input state (a fault or
 * a cancellation propagates to the method's task). */
static int stale_runner(stale_fx *fx)
{
    td_completion_source *g = stale_gate(fx, 0);
    td_runner *r = td_runner_rent(fx->row->typed ? &stale_await_i64_method : &stale_await_method);
    if (r == NULL)
        return 1;
    TD_FRAME(r, stale_await_frame)->gate = td_completion_source_task_i64(g);
    if (fx->row->typed)
        stale_set_typed(fx, td_runner_start_i64(r));
    else
        stale_set_untyped(fx, td_runner_start(r));
    if (fx->t.task.source == NULL)
        return 2;                       /* it must suspend */
    stale_settle(g, fx->row->input);
    return 0;
}

/* ---- shared handles ------------------------------------------------------------------- */

/* A handle's task reads repeatedly while the handle lives (shared.h:13 "repeated reads (get
 * does not consume)"; shared.h:9 "other handles are multi-reader already": a share of it
 * subscribes). */
static const stale_expect stale_shared_live = { TD_OK, TD_OK, TD_OK, TD_DONE, TD_OK,
                                                "shared.h:13 repeated reads (get does not consume)" };

/* A handle over gate 0's task, the gate completed in the row's input state; the row's task is
 * the handle's. With STALE_RELEASE_SHARED the consumption is the last release: shared.h:15
 * "then it is recycled (pooled) and its tasks turn stale". */
static int stale_shared(stale_fx *fx)
{
    td_completion_source *g = stale_gate(fx, 0);
    fx->shared = td_task_share(td_completion_source_task(g));
    if (fx->shared == NULL)
        return 1;
    stale_settle(g, fx->row->input);
    if (fx->row->typed)
        stale_set_typed(fx, td_shared_task_i64(fx->shared));
    else
        stale_set_untyped(fx, td_shared_task(fx->shared));
    return 0;
}

/* ---- adapters: callback-style APIs and futures ----------------------------------------- */

#define STALE_CB_LATER 100      /* the API keeps its answer for later (fx->cb_done) */

static void stale_cb_api(void *arg, td_adapt_done_fn done, void *cb_arg)
{
    stale_fx *fx = (stale_fx *)arg;
    if (fx->cb_status == STALE_CB_LATER) {
        fx->cb_done = done;
        fx->cb_arg = cb_arg;
    } else {
        done(cb_arg, fx->cb_status, 5);
    }
}

/* The adapters' answer for the row's input state. */
static int stale_adapt_status(td_status st)
{
    return st == TD_SUCCEEDED ? TD_ADAPT_OK : st == TD_FAULTED ? 42 : TD_ADAPT_CANCELED;
}

/* how 0: the API answers later, once the task is made; 1: inline; 2: its token is cancelled
 * while the API still holds the answer (stale_finish answers). */
static int stale_callback(stale_fx *fx)
{
    int how = fx->row->how, status = stale_adapt_status(fx->row->input);
    td_cancel_token tok = how == 2 ? td_cancel_source_token(stale_cancel(fx, 0)) : td_cancel_none();
    fx->cb_status = how == 1 ? status : STALE_CB_LATER;
    stale_set_typed(fx, td_from_callback(stale_cb_api, fx, tok));
    if (how == 2) {
        td_cancel_source_cancel(fx->cancel[0]);
    } else if (how == 0) {
        td_adapt_done_fn done = fx->cb_done;
        fx->cb_done = NULL;
        done(fx->cb_arg, status, 5);
    }
    return 0;
}

/* how 0: the future is set; 2: the task's token is cancelled first (stale_finish sets it). */
static int stale_future(stale_fx *fx)
{
    td_cancel_token tok = fx->row->how == 2 ? td_cancel_source_token(stale_cancel(fx, 0)) : td_cancel_none();
    fx->future = td_future_new();
    stale_set_typed(fx, td_future_task(fx->future, tok));
    if (fx->row->how == 2)
        td_cancel_source_cancel(fx->cancel[0]);
    else
        td_future_set(fx->future, stale_adapt_status(fx->row->input), 5);
    return 0;
}

static const stale_row stale_rows_sources[] = {
    /* ctor, variant, final, make, typed, input, how, expect, flags */
    STALE_ROW("td_completed", "succeeded (constant)", STALE_OK, stale_value, 0, STALE_OK, 0, &stale_constant, 0),
    STALE_ROW("td_from_result", "succeeded (constant)", STALE_OK, stale_value, 1, STALE_OK, 1, &stale_constant, 0),
    STALE_ROW("td_from_error", "faulted", STALE_FAULT, stale_value, 0, STALE_FAULT, 2, NULL, 0),
    STALE_ROW("td_from_error_i64", "faulted", STALE_FAULT, stale_value, 1, STALE_FAULT, 2, NULL, 0),
    STALE_ROW("td_from_canceled", "canceled", STALE_CANCEL, stale_value, 0, STALE_CANCEL, 3, NULL, 0),
    STALE_ROW("td_from_canceled_i64", "canceled with a token", STALE_CANCEL, stale_value, 1, STALE_CANCEL, 3, NULL, 0),
    STALE_ROW("td_completion_source_task", "succeeded", STALE_OK, stale_manual, 0, STALE_OK, 0, NULL, 0),
    STALE_ROW("td_completion_source_task", "faulted", STALE_FAULT, stale_manual, 0, STALE_FAULT, 0, NULL, 0),
    STALE_ROW("td_completion_source_task", "canceled", STALE_CANCEL, stale_manual, 0, STALE_CANCEL, 0, NULL, 0),
    STALE_ROW("td_completion_source_task_i64", "succeeded", STALE_OK, stale_manual, 1, STALE_OK, 0, NULL, 0),
    STALE_ROW("td_completion_source_task_i64", "faulted", STALE_FAULT, stale_manual, 1, STALE_FAULT, 0, NULL, 0),
    STALE_ROW("td_completion_source_task_i64", "canceled", STALE_CANCEL, stale_manual, 1, STALE_CANCEL, 0, NULL, 0),
    STALE_ROW("td_auto_source_task", "succeeded", STALE_OK, stale_auto, 0, STALE_OK, 0, NULL, 0),
    STALE_ROW("td_auto_source_task", "faulted", STALE_FAULT, stale_auto, 0, STALE_FAULT, 0, NULL, 0),
    STALE_ROW("td_auto_source_task", "canceled", STALE_CANCEL, stale_auto, 0, STALE_CANCEL, 0, NULL, 0),
    STALE_ROW("td_auto_source_task_i64", "succeeded", STALE_OK, stale_auto, 1, STALE_OK, 0, NULL, 0),
    STALE_ROW("td_auto_source_task_i64", "faulted", STALE_FAULT, stale_auto, 1, STALE_FAULT, 0, NULL, 0),
    STALE_ROW("td_auto_source_task_i64", "canceled", STALE_CANCEL, stale_auto, 1, STALE_CANCEL, 0, NULL, 0),
    STALE_ROW("td_runner_start", "succeeded after a suspension", STALE_OK, stale_runner, 0, STALE_OK, 0, NULL, 0),
    STALE_ROW("td_runner_start", "faulted by the awaited gate", STALE_FAULT, stale_runner, 0, STALE_FAULT, 0, NULL, 0),
    STALE_ROW("td_runner_start", "canceled by the awaited gate", STALE_CANCEL, stale_runner, 0, STALE_CANCEL, 0, NULL, 0),
    STALE_ROW("td_runner_start_i64", "succeeded after a suspension", STALE_OK, stale_runner, 1, STALE_OK, 0, NULL, 0),
    STALE_ROW("td_runner_start_i64", "faulted by the awaited gate", STALE_FAULT, stale_runner, 1, STALE_FAULT, 0, NULL, 0),
    STALE_ROW("td_runner_start_i64", "canceled by the awaited gate", STALE_CANCEL, stale_runner, 1, STALE_CANCEL, 0, NULL, 0),
    STALE_ROW("td_shared_task", "succeeded, handle held", STALE_OK, stale_shared, 0, STALE_OK, 0, &stale_shared_live, 0),
    STALE_ROW("td_shared_task", "succeeded, handle released", STALE_OK, stale_shared, 0, STALE_OK, 0, NULL, STALE_RELEASE_SHARED),
    STALE_ROW("td_shared_task", "faulted, handle released", STALE_FAULT, stale_shared, 0, STALE_FAULT, 0, NULL, STALE_RELEASE_SHARED),
    STALE_ROW("td_shared_task", "canceled, handle released", STALE_CANCEL, stale_shared, 0, STALE_CANCEL, 0, NULL, STALE_RELEASE_SHARED),
    STALE_ROW("td_shared_task_i64", "succeeded, handle held", STALE_OK, stale_shared, 1, STALE_OK, 0, &stale_shared_live, 0),
    STALE_ROW("td_shared_task_i64", "succeeded, handle released", STALE_OK, stale_shared, 1, STALE_OK, 0, NULL, STALE_RELEASE_SHARED),
    STALE_ROW("td_shared_task_i64", "faulted, handle released", STALE_FAULT, stale_shared, 1, STALE_FAULT, 0, NULL, STALE_RELEASE_SHARED),
    STALE_ROW("td_from_callback", "succeeded, answered later", STALE_OK, stale_callback, 1, STALE_OK, 0, NULL, 0),
    STALE_ROW("td_from_callback", "succeeded, answered inline", STALE_OK, stale_callback, 1, STALE_OK, 1, &stale_adapter_inline, 0),
    STALE_ROW("td_from_callback", "faulted", STALE_FAULT, stale_callback, 1, STALE_FAULT, 0, NULL, 0),
    STALE_ROW("td_from_callback", "canceled by the API", STALE_CANCEL, stale_callback, 1, STALE_CANCEL, 0, NULL, 0),
    STALE_ROW("td_from_callback", "canceled by its token, answer pending", STALE_CANCEL, stale_callback, 1, STALE_CANCEL, 2, NULL, STALE_HELD),
    STALE_ROW("td_future_task", "succeeded", STALE_OK, stale_future, 1, STALE_OK, 0, NULL, 0),
    STALE_ROW("td_future_task", "faulted", STALE_FAULT, stale_future, 1, STALE_FAULT, 0, NULL, 0),
    STALE_ROW("td_future_task", "canceled by the future", STALE_CANCEL, stale_future, 1, STALE_CANCEL, 0, NULL, 0),
    STALE_ROW("td_future_task", "canceled by its token, future unset", STALE_CANCEL, stale_future, 1, STALE_CANCEL, 2, NULL, STALE_HELD),
};
