/*
 * stale_rows_sources.h - the staleness table's rows for task values, completion and auto
 * sources, runners (async methods), shared handles and the adapters (stale_table.h).
 */

/* A task with no source is a constant (task.h:6, "A task with no source is already completed
 * successfully"; from_result is a compile-time constant): every read answers its success,
 * a registration is refused as done, and a share holds the value (shared.c: TD_DONE inside). */
static const stale_expect stale_constant = { TD_OK, TD_OK, TD_DONE, TD_OK,
                                             "task.h:6 a task with no source is already completed" };
/* A bridge answered inside td_from_callback hands back a source-free success (adapter.c,
 * adapter_task), which is the constant above (task.h:6). */
static const stale_expect stale_adapter_inline = { TD_OK, TD_OK, TD_DONE, TD_OK,
                                                   "task.h:6 an answered bridge is a source-free task" };

static int stale_make_completed(stale_fx *fx) { stale_set_untyped(fx, td_completed()); return 0; }
static int stale_make_from_result(stale_fx *fx) { stale_set_typed(fx, td_from_result(5)); return 0; }
static int stale_make_from_error(stale_fx *fx) { stale_set_untyped(fx, td_from_error(TD_ERR_USER, "e")); return 0; }
static int stale_make_from_error_i64(stale_fx *fx) { stale_set_typed(fx, td_from_error_i64(TD_ERR_USER, "e")); return 0; }
static int stale_make_from_canceled(stale_fx *fx) { stale_set_untyped(fx, td_from_canceled(NULL)); return 0; }
static int stale_make_from_canceled_i64(stale_fx *fx)
{
    stale_set_typed(fx, td_from_canceled_i64(stale_cancel(fx, 0)));
    return 0;
}

/* ---- completion sources: manual (keeps its outcome) and auto (pooled) ---------------- */

static int stale_manual(stale_fx *fx, int typed, td_status st)
{
    td_completion_source *g = stale_gate(fx, 0);
    if (typed)
        stale_set_typed(fx, td_completion_source_task_i64(g));
    else
        stale_set_untyped(fx, td_completion_source_task(g));
    stale_settle(g, st);
    return 0;
}
static int stale_manual_ok(stale_fx *fx) { return stale_manual(fx, 0, TD_SUCCEEDED); }
static int stale_manual_fault(stale_fx *fx) { return stale_manual(fx, 0, TD_FAULTED); }
static int stale_manual_cancel(stale_fx *fx) { return stale_manual(fx, 0, TD_CANCELED); }
static int stale_manual_i64_ok(stale_fx *fx) { return stale_manual(fx, 1, TD_SUCCEEDED); }
static int stale_manual_i64_fault(stale_fx *fx) { return stale_manual(fx, 1, TD_FAULTED); }
static int stale_manual_i64_cancel(stale_fx *fx) { return stale_manual(fx, 1, TD_CANCELED); }

static int stale_auto(stale_fx *fx, int typed, td_status st)
{
    td_auto_source *s = td_auto_source_rent();
    if (s == NULL)
        return 1;
    if (typed)
        stale_set_typed(fx, td_auto_source_task_i64(s));
    else
        stale_set_untyped(fx, td_auto_source_task(s));
    uint32_t token = fx->t.task.token;
    if (st == TD_SUCCEEDED)
        return td_auto_source_set_result(s, token, 7);
    if (st == TD_FAULTED)
        return td_auto_source_set_error(s, token, TD_ERR_USER, "auto fault");
    return td_auto_source_set_canceled(s, token, NULL);
}
static int stale_auto_ok(stale_fx *fx) { return stale_auto(fx, 0, TD_SUCCEEDED); }
static int stale_auto_fault(stale_fx *fx) { return stale_auto(fx, 0, TD_FAULTED); }
static int stale_auto_cancel(stale_fx *fx) { return stale_auto(fx, 0, TD_CANCELED); }
static int stale_auto_i64_ok(stale_fx *fx) { return stale_auto(fx, 1, TD_SUCCEEDED); }
static int stale_auto_i64_fault(stale_fx *fx) { return stale_auto(fx, 1, TD_FAULTED); }
static int stale_auto_i64_cancel(stale_fx *fx) { return stale_auto(fx, 1, TD_CANCELED); }

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

/* The method suspended on gate 0, which then completes in state st (a fault or a
 * cancellation propagates to the method's task). */
static int stale_runner(stale_fx *fx, int typed, td_status st)
{
    td_completion_source *g = stale_gate(fx, 0);
    td_runner *r = td_runner_rent(typed ? &stale_await_i64_method : &stale_await_method);
    if (r == NULL)
        return 1;
    TD_FRAME(r, stale_await_frame)->gate = td_completion_source_task_i64(g);
    if (typed)
        stale_set_typed(fx, td_runner_start_i64(r));
    else
        stale_set_untyped(fx, td_runner_start(r));
    if (fx->t.task.source == NULL)
        return 2;                       /* it must suspend */
    stale_settle(g, st);
    return 0;
}
static int stale_runner_ok(stale_fx *fx) { return stale_runner(fx, 0, TD_SUCCEEDED); }
static int stale_runner_fault(stale_fx *fx) { return stale_runner(fx, 0, TD_FAULTED); }
static int stale_runner_cancel(stale_fx *fx) { return stale_runner(fx, 0, TD_CANCELED); }
static int stale_runner_i64_ok(stale_fx *fx) { return stale_runner(fx, 1, TD_SUCCEEDED); }
static int stale_runner_i64_fault(stale_fx *fx) { return stale_runner(fx, 1, TD_FAULTED); }
static int stale_runner_i64_cancel(stale_fx *fx) { return stale_runner(fx, 1, TD_CANCELED); }

/* ---- shared handles ------------------------------------------------------------------- */

/* A handle's task reads repeatedly while the handle lives (shared.h:13 "repeated reads (get
 * does not consume)"; shared.h:9 "other handles are multi-reader already": a share of it
 * subscribes). */
static const stale_expect stale_shared_live = { TD_OK, TD_OK, TD_DONE, TD_OK,
                                                "shared.h:13 repeated reads (get does not consume)" };

/* A handle over gate 0's task, the gate completed in state st; the row's task is the
 * handle's. With STALE_RELEASE_SHARED the consumption is the last release: shared.h:14
 * "then it is recycled (pooled) and its tasks turn stale". */
static int stale_shared(stale_fx *fx, int typed, td_status st)
{
    td_completion_source *g = stale_gate(fx, 0);
    fx->shared = td_task_share(td_completion_source_task(g));
    if (fx->shared == NULL)
        return 1;
    stale_settle(g, st);
    if (typed)
        stale_set_typed(fx, td_shared_task_i64(fx->shared));
    else
        stale_set_untyped(fx, td_shared_task(fx->shared));
    return 0;
}
static int stale_shared_ok(stale_fx *fx) { return stale_shared(fx, 0, TD_SUCCEEDED); }
static int stale_shared_fault(stale_fx *fx) { return stale_shared(fx, 0, TD_FAULTED); }
static int stale_shared_cancel(stale_fx *fx) { return stale_shared(fx, 0, TD_CANCELED); }
static int stale_shared_i64_ok(stale_fx *fx) { return stale_shared(fx, 1, TD_SUCCEEDED); }
static int stale_shared_i64_fault(stale_fx *fx) { return stale_shared(fx, 1, TD_FAULTED); }

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

/* The API answers `status` (inline, or later: then once the task is made). */
static int stale_callback(stale_fx *fx, int status, int later)
{
    fx->cb_status = later ? STALE_CB_LATER : status;
    stale_set_typed(fx, td_from_callback(stale_cb_api, fx, td_cancel_none()));
    if (later) {
        td_adapt_done_fn done = fx->cb_done;
        fx->cb_done = NULL;
        done(fx->cb_arg, status, 5);
    }
    return 0;
}
static int stale_callback_ok(stale_fx *fx) { return stale_callback(fx, TD_ADAPT_OK, 1); }
static int stale_callback_ok_inline(stale_fx *fx) { return stale_callback(fx, TD_ADAPT_OK, 0); }
static int stale_callback_fault(stale_fx *fx) { return stale_callback(fx, 42, 1); }
static int stale_callback_cancel(stale_fx *fx) { return stale_callback(fx, TD_ADAPT_CANCELED, 1); }

/* Cancelled by its token while the API still holds the answer (stale_finish answers). */
static int stale_callback_token(stale_fx *fx)
{
    fx->cb_status = STALE_CB_LATER;
    stale_set_typed(fx, td_from_callback(stale_cb_api, fx, td_cancel_source_token(stale_cancel(fx, 0))));
    td_cancel_source_cancel(fx->cancel[0]);
    return 0;
}

static int stale_future(stale_fx *fx, int status)
{
    fx->future = td_future_new();
    stale_set_typed(fx, td_future_task(fx->future, td_cancel_none()));
    td_future_set(fx->future, status, 5);
    return 0;
}
static int stale_future_ok(stale_fx *fx) { return stale_future(fx, TD_ADAPT_OK); }
static int stale_future_fault(stale_fx *fx) { return stale_future(fx, 42); }
static int stale_future_cancel(stale_fx *fx) { return stale_future(fx, TD_ADAPT_CANCELED); }

/* Cancelled by its token before the future is set (stale_finish sets it). */
static int stale_future_token(stale_fx *fx)
{
    fx->future = td_future_new();
    stale_set_typed(fx, td_future_task(fx->future, td_cancel_source_token(stale_cancel(fx, 0))));
    td_cancel_source_cancel(fx->cancel[0]);
    return 0;
}

static const stale_row stale_rows_sources[] = {
    STALE_ROW("td_completed", "succeeded (constant)", TD_SUCCEEDED, stale_make_completed, &stale_constant, 0),
    STALE_ROW("td_from_result", "succeeded (constant)", TD_SUCCEEDED, stale_make_from_result, &stale_constant, 0),
    STALE_ROW("td_from_error", "faulted", TD_FAULTED, stale_make_from_error, NULL, 0),
    STALE_ROW("td_from_error_i64", "faulted", TD_FAULTED, stale_make_from_error_i64, NULL, 0),
    STALE_ROW("td_from_canceled", "canceled", TD_CANCELED, stale_make_from_canceled, NULL, 0),
    STALE_ROW("td_from_canceled_i64", "canceled with a token", TD_CANCELED, stale_make_from_canceled_i64, NULL, 0),
    STALE_ROW("td_completion_source_task", "succeeded", TD_SUCCEEDED, stale_manual_ok, NULL, 0),
    STALE_ROW("td_completion_source_task", "faulted", TD_FAULTED, stale_manual_fault, NULL, 0),
    STALE_ROW("td_completion_source_task", "canceled", TD_CANCELED, stale_manual_cancel, NULL, 0),
    STALE_ROW("td_completion_source_task_i64", "succeeded", TD_SUCCEEDED, stale_manual_i64_ok, NULL, 0),
    STALE_ROW("td_completion_source_task_i64", "faulted", TD_FAULTED, stale_manual_i64_fault, NULL, 0),
    STALE_ROW("td_completion_source_task_i64", "canceled", TD_CANCELED, stale_manual_i64_cancel, NULL, 0),
    STALE_ROW("td_auto_source_task", "succeeded", TD_SUCCEEDED, stale_auto_ok, NULL, 0),
    STALE_ROW("td_auto_source_task", "faulted", TD_FAULTED, stale_auto_fault, NULL, 0),
    STALE_ROW("td_auto_source_task", "canceled", TD_CANCELED, stale_auto_cancel, NULL, 0),
    STALE_ROW("td_auto_source_task_i64", "succeeded", TD_SUCCEEDED, stale_auto_i64_ok, NULL, 0),
    STALE_ROW("td_auto_source_task_i64", "faulted", TD_FAULTED, stale_auto_i64_fault, NULL, 0),
    STALE_ROW("td_auto_source_task_i64", "canceled", TD_CANCELED, stale_auto_i64_cancel, NULL, 0),
    STALE_ROW("td_runner_start", "succeeded after a suspension", TD_SUCCEEDED, stale_runner_ok, NULL, 0),
    STALE_ROW("td_runner_start", "faulted by the awaited gate", TD_FAULTED, stale_runner_fault, NULL, 0),
    STALE_ROW("td_runner_start", "canceled by the awaited gate", TD_CANCELED, stale_runner_cancel, NULL, 0),
    STALE_ROW("td_runner_start_i64", "succeeded after a suspension", TD_SUCCEEDED, stale_runner_i64_ok, NULL, 0),
    STALE_ROW("td_runner_start_i64", "faulted by the awaited gate", TD_FAULTED, stale_runner_i64_fault, NULL, 0),
    STALE_ROW("td_runner_start_i64", "canceled by the awaited gate", TD_CANCELED, stale_runner_i64_cancel, NULL, 0),
    STALE_ROW("td_shared_task", "succeeded, handle held", TD_SUCCEEDED, stale_shared_ok, &stale_shared_live, 0),
    STALE_ROW("td_shared_task", "succeeded, handle released", TD_SUCCEEDED, stale_shared_ok, NULL, STALE_RELEASE_SHARED),
    STALE_ROW("td_shared_task", "faulted, handle released", TD_FAULTED, stale_shared_fault, NULL, STALE_RELEASE_SHARED),
    STALE_ROW("td_shared_task", "canceled, handle released", TD_CANCELED, stale_shared_cancel, NULL, STALE_RELEASE_SHARED),
    STALE_ROW("td_shared_task_i64", "succeeded, handle held", TD_SUCCEEDED, stale_shared_i64_ok, &stale_shared_live, 0),
    STALE_ROW("td_shared_task_i64", "succeeded, handle released", TD_SUCCEEDED, stale_shared_i64_ok, NULL, STALE_RELEASE_SHARED),
    STALE_ROW("td_shared_task_i64", "faulted, handle released", TD_FAULTED, stale_shared_i64_fault, NULL, STALE_RELEASE_SHARED),
    STALE_ROW("td_from_callback", "succeeded, answered later", TD_SUCCEEDED, stale_callback_ok, NULL, 0),
    STALE_ROW("td_from_callback", "succeeded, answered inline", TD_SUCCEEDED, stale_callback_ok_inline, &stale_adapter_inline, 0),
    STALE_ROW("td_from_callback", "faulted", TD_FAULTED, stale_callback_fault, NULL, 0),
    STALE_ROW("td_from_callback", "canceled by the API", TD_CANCELED, stale_callback_cancel, NULL, 0),
    STALE_ROW("td_from_callback", "canceled by its token, answer pending", TD_CANCELED, stale_callback_token, NULL, STALE_HELD),
    STALE_ROW("td_future_task", "succeeded", TD_SUCCEEDED, stale_future_ok, NULL, 0),
    STALE_ROW("td_future_task", "faulted", TD_FAULTED, stale_future_fault, NULL, 0),
    STALE_ROW("td_future_task", "canceled by the future", TD_CANCELED, stale_future_cancel, NULL, 0),
    STALE_ROW("td_future_task", "canceled by its token, future unset", TD_CANCELED, stale_future_token, NULL, STALE_HELD),
};
