/*
 * stale_rows_waits.h - the staleness table's rows for frame waits, timed and predicate
 * waits, thread switches and run-on-pool (stale_table.h).
 *
 * A wait with a cancel token is a pooled source that its loop item also holds: consumed
 * after an immediate cancellation, the item still points at it until the next frame (the
 * STALE_HELD rows; issue 40's delay reproduction). Without a token a frame wait is the
 * loop's stateless marker, which documents repeated reads.
 */

/* loop.h:13 "No pooled object is involved; the task can be copied, read repeatedly and
 * forgotten"; shared.h:9 "Stateless custom sources (frame waits ...) are multi-reader
 * already: the handle just subscribes to them". */
static const stale_expect stale_frame_marker = { TD_OK, TD_OK, TD_DONE, TD_OK,
                                                 "loop.h:13 read repeatedly (SMOKE.md 13/14)" };

/* Options: 0 none, 1 a token never cancelled, 2 cancelled at the next frame, 3 cancelled
 * immediately (the loop item still holds the wait when it is consumed). */
enum { STALE_OPT_NONE, STALE_OPT_TOKEN, STALE_OPT_CANCEL_FRAME, STALE_OPT_CANCEL_NOW };

static const td_wait_options *stale_opts(stale_fx *fx, td_wait_options *o, int mode)
{
    if (mode == STALE_OPT_NONE)
        return NULL;
    *o = stale_options(fx, mode == STALE_OPT_CANCEL_NOW);
    return o;
}

/* Cancel per mode, then run frames until the task completed. */
static int stale_wait_done(stale_fx *fx, td_task t, int mode)
{
    stale_set_untyped(fx, t);
    if (mode >= STALE_OPT_CANCEL_FRAME)
        td_cancel_source_cancel(fx->cancel[0]);
    return !stale_pump(t);
}

typedef enum { STALE_YIELD_EX, STALE_NEXT_FRAME_EX, STALE_DELAY_FRAME_EX, STALE_END_OF_FRAME,
               STALE_DELAY } stale_wait_kind;

static int stale_wait(stale_fx *fx, stale_wait_kind kind, int mode)
{
    td_wait_options o;
    const td_wait_options *op = stale_opts(fx, &o, mode);
    td_task t;
    switch (kind) {
    case STALE_YIELD_EX: t = td_yield_ex(op); break;
    case STALE_NEXT_FRAME_EX: t = td_next_frame_ex(op); break;
    case STALE_DELAY_FRAME_EX: t = td_delay_frame_ex(2, op); break;
    case STALE_END_OF_FRAME: t = td_wait_for_end_of_frame(op); break;
    default: t = td_delay(1000, TD_CLOCK_REALTIME, op); break;
    }
    return stale_wait_done(fx, t, mode);
}

static int stale_make_yield(stale_fx *fx) { return stale_wait_done(fx, td_yield(TD_TIMING_UPDATE), 0); }
static int stale_make_next_frame(stale_fx *fx) { return stale_wait_done(fx, td_next_frame(TD_TIMING_UPDATE), 0); }
static int stale_make_delay_frame(stale_fx *fx) { return stale_wait_done(fx, td_delay_frame(2, TD_TIMING_UPDATE), 0); }
static int stale_yield_ex(stale_fx *fx) { return stale_wait(fx, STALE_YIELD_EX, STALE_OPT_NONE); }
static int stale_yield_ex_ok(stale_fx *fx) { return stale_wait(fx, STALE_YIELD_EX, STALE_OPT_TOKEN); }
static int stale_yield_ex_cancel(stale_fx *fx) { return stale_wait(fx, STALE_YIELD_EX, STALE_OPT_CANCEL_FRAME); }
static int stale_yield_ex_now(stale_fx *fx) { return stale_wait(fx, STALE_YIELD_EX, STALE_OPT_CANCEL_NOW); }
static int stale_next_ex(stale_fx *fx) { return stale_wait(fx, STALE_NEXT_FRAME_EX, STALE_OPT_NONE); }
static int stale_next_ex_ok(stale_fx *fx) { return stale_wait(fx, STALE_NEXT_FRAME_EX, STALE_OPT_TOKEN); }
static int stale_next_ex_cancel(stale_fx *fx) { return stale_wait(fx, STALE_NEXT_FRAME_EX, STALE_OPT_CANCEL_FRAME); }
static int stale_next_ex_now(stale_fx *fx) { return stale_wait(fx, STALE_NEXT_FRAME_EX, STALE_OPT_CANCEL_NOW); }
static int stale_dframe_ex(stale_fx *fx) { return stale_wait(fx, STALE_DELAY_FRAME_EX, STALE_OPT_NONE); }
static int stale_dframe_ex_ok(stale_fx *fx) { return stale_wait(fx, STALE_DELAY_FRAME_EX, STALE_OPT_TOKEN); }
static int stale_dframe_ex_cancel(stale_fx *fx) { return stale_wait(fx, STALE_DELAY_FRAME_EX, STALE_OPT_CANCEL_FRAME); }
static int stale_dframe_ex_now(stale_fx *fx) { return stale_wait(fx, STALE_DELAY_FRAME_EX, STALE_OPT_CANCEL_NOW); }
static int stale_eof(stale_fx *fx) { return stale_wait(fx, STALE_END_OF_FRAME, STALE_OPT_NONE); }
static int stale_eof_ok(stale_fx *fx) { return stale_wait(fx, STALE_END_OF_FRAME, STALE_OPT_TOKEN); }
static int stale_eof_cancel(stale_fx *fx) { return stale_wait(fx, STALE_END_OF_FRAME, STALE_OPT_CANCEL_FRAME); }
static int stale_eof_now(stale_fx *fx) { return stale_wait(fx, STALE_END_OF_FRAME, STALE_OPT_CANCEL_NOW); }
static int stale_delay(stale_fx *fx) { return stale_wait(fx, STALE_DELAY, STALE_OPT_NONE); }
static int stale_delay_ok(stale_fx *fx) { return stale_wait(fx, STALE_DELAY, STALE_OPT_TOKEN); }
static int stale_delay_cancel(stale_fx *fx) { return stale_wait(fx, STALE_DELAY, STALE_OPT_CANCEL_FRAME); }
static int stale_delay_now(stale_fx *fx) { return stale_wait(fx, STALE_DELAY, STALE_OPT_CANCEL_NOW); }

/* ---- predicate waits: fx->counter drives them ------------------------------------------ */

static int stale_counter_set(void *arg) { return ((stale_fx *)arg)->counter != 0; }
static int stale_counter_zero(void *arg) { return ((stale_fx *)arg)->counter == 0; }
static int64_t stale_counter_read(void *arg) { return ((stale_fx *)arg)->counter; }

/* kind 0 wait_until, 1 wait_while, 2 wait_until_value_changed; the counter changes to
 * satisfy it unless the mode cancels. */
static int stale_predicate(stale_fx *fx, int kind, int mode)
{
    td_wait_options o;
    const td_wait_options *op = stale_opts(fx, &o, mode);
    td_task t;
    if (kind == 0)
        t = td_wait_until(stale_counter_set, fx, op);
    else if (kind == 1)
        t = td_wait_while(stale_counter_zero, fx, op);
    else
        t = td_wait_until_value_changed(stale_counter_read, fx, op).task;
    if (mode < STALE_OPT_CANCEL_FRAME)
        fx->counter = 1;
    int rc = stale_wait_done(fx, t, mode);
    fx->typed = kind == 2;
    return rc;
}
static int stale_until_ok(stale_fx *fx) { return stale_predicate(fx, 0, STALE_OPT_NONE); }
static int stale_until_cancel(stale_fx *fx) { return stale_predicate(fx, 0, STALE_OPT_CANCEL_FRAME); }
static int stale_until_now(stale_fx *fx) { return stale_predicate(fx, 0, STALE_OPT_CANCEL_NOW); }
static int stale_while_ok(stale_fx *fx) { return stale_predicate(fx, 1, STALE_OPT_TOKEN); }
static int stale_while_cancel(stale_fx *fx) { return stale_predicate(fx, 1, STALE_OPT_CANCEL_FRAME); }
static int stale_while_now(stale_fx *fx) { return stale_predicate(fx, 1, STALE_OPT_CANCEL_NOW); }
static int stale_changed_ok(stale_fx *fx) { return stale_predicate(fx, 2, STALE_OPT_NONE); }
static int stale_changed_cancel(stale_fx *fx) { return stale_predicate(fx, 2, STALE_OPT_CANCEL_FRAME); }
static int stale_changed_now(stale_fx *fx) { return stale_predicate(fx, 2, STALE_OPT_CANCEL_NOW); }

/* ---- without a main loop (faulted) and on a retired loop (canceled) ------------------- */

/* loop.h: with no main loop, waits without an explicit loop "return a task FAULTED with
 * TD_ERR_NO_LOOP" (a pooled fault, so stale once consumed). The main loop is put back. */
static int stale_no_loop(stale_fx *fx, int kind)
{
    td_loop *main_loop = td_loop_main();
    td_loop_set_main(NULL);
    td_task t;
    switch (kind) {
    case 0: t = td_yield(TD_TIMING_UPDATE); break;
    case 1: t = td_next_frame(TD_TIMING_UPDATE); break;
    case 2: t = td_delay_frame(2, TD_TIMING_UPDATE); break;
    case 3: t = td_wait_for_end_of_frame(NULL); break;
    case 4: t = td_delay(1000, TD_CLOCK_REALTIME, NULL); break;
    case 5: t = td_wait_until(stale_counter_set, fx, NULL); break;
    default: t = td_wait_until_value_changed(stale_counter_read, fx, NULL).task; break;
    }
    td_loop_set_main(main_loop);
    stale_set_untyped(fx, t);
    fx->typed = kind == 6;
    return 0;
}
static int stale_yield_no_loop(stale_fx *fx) { return stale_no_loop(fx, 0); }
static int stale_next_no_loop(stale_fx *fx) { return stale_no_loop(fx, 1); }
static int stale_dframe_no_loop(stale_fx *fx) { return stale_no_loop(fx, 2); }
static int stale_eof_no_loop(stale_fx *fx) { return stale_no_loop(fx, 3); }
static int stale_delay_no_loop(stale_fx *fx) { return stale_no_loop(fx, 4); }
static int stale_until_no_loop(stale_fx *fx) { return stale_no_loop(fx, 5); }
static int stale_changed_no_loop(stale_fx *fx) { return stale_no_loop(fx, 6); }

/* loop.h: a retired loop's frame waits "read canceled" (the marker: repeatedly), and a wait
 * pending on it "completes canceled" (a pooled wait: stale once consumed). A loop of the
 * row's own, retired while the wait is pending; its header lives until shutdown. */
static const stale_expect stale_retired_marker = { TD_OK, TD_OK, TD_DONE, TD_OK,
                                                   "loop.h:13 read repeatedly; loop.h:80 frame waits on it read canceled" };

static int stale_retired(stale_fx *fx, int pooled)
{
    td_wait_options o = pooled ? stale_options(fx, 0) : td_wait_defaults();
    o.loop = td_loop_create(NULL);
    if (o.loop == NULL)
        return 1;
    stale_set_untyped(fx, pooled ? td_delay(1000000000000LL, TD_CLOCK_REALTIME, &o) : td_yield_ex(&o));
    td_loop_destroy(o.loop);
    return 0;
}
static int stale_yield_retired(stale_fx *fx) { return stale_retired(fx, 0); }
static int stale_delay_retired(stale_fx *fx) { return stale_retired(fx, 1); }

/* ---- thread switches and run-on-pool ------------------------------------------------------ */

/* threads.h:17 "Both tasks may be copied, awaited any number of times and read repeatedly". */
static const stale_expect stale_switch_main = { TD_OK, TD_OK, TD_DONE, TD_OK,
                                                "threads.h:17 read repeatedly" };
/* threads.h:12 "Its status is always pending" and threads.h:17 "read repeatedly": the status
 * reads pending (TD_OK) before and after, every get answers success, a registration queues
 * the continuation for a worker (TD_OK), a share subscribes (TD_OK). */
static const stale_expect stale_switch_pool = { TD_OK, TD_OK, TD_OK, TD_OK,
                                                "threads.h:12 status always pending, threads.h:17 read repeatedly" };

static int stale_make_switch_main(stale_fx *fx)
{
    stale_set_untyped(fx, td_switch_to_main_thread(TD_TIMING_UPDATE));
    return 0;
}
static int stale_make_switch_pool(stale_fx *fx) { stale_set_untyped(fx, td_switch_to_thread_pool()); return 0; }

/* The work answers the state in fx->counter (a td_status). */
static td_status stale_work(void *arg, td_cancel_token cancel, td_error *error)
{
    (void)cancel;
    td_status st = (td_status)((stale_fx *)arg)->counter;
    if (st == TD_FAULTED) {
        error->code = TD_ERR_USER;
        error->message = "work fault";
    }
    return st;
}
static td_status stale_work_i64(void *arg, td_cancel_token cancel, int64_t *result, td_error *error)
{
    *result = 9;
    return stale_work(arg, cancel, error);
}

/* mode 1: return to main; 2: the token is cancelled before the call (canceled at once). */
static int stale_pool_run(stale_fx *fx, int typed, td_status st, int mode)
{
    td_cancel_token tok = td_cancel_none();
    if (mode == 2) {
        tok = td_cancel_source_token(stale_cancel(fx, 0));
        td_cancel_source_cancel(fx->cancel[0]);
    }
    fx->counter = st;
    if (typed)
        stale_set_typed(fx, td_run_on_thread_pool_i64(stale_work_i64, fx, mode == 1, tok));
    else
        stale_set_untyped(fx, td_run_on_thread_pool(stale_work, fx, mode == 1, tok));
    return !stale_pump(fx->t.task);
}
static int stale_pool_ok(stale_fx *fx) { return stale_pool_run(fx, 0, TD_SUCCEEDED, 0); }
static int stale_pool_main_ok(stale_fx *fx) { return stale_pool_run(fx, 0, TD_SUCCEEDED, 1); }
static int stale_pool_fault(stale_fx *fx) { return stale_pool_run(fx, 0, TD_FAULTED, 0); }
static int stale_pool_cancel(stale_fx *fx) { return stale_pool_run(fx, 0, TD_CANCELED, 0); }
static int stale_pool_token(stale_fx *fx) { return stale_pool_run(fx, 0, TD_SUCCEEDED, 2); }
static int stale_pool_i64_ok(stale_fx *fx) { return stale_pool_run(fx, 1, TD_SUCCEEDED, 0); }
static int stale_pool_i64_main_fault(stale_fx *fx) { return stale_pool_run(fx, 1, TD_FAULTED, 1); }
static int stale_pool_i64_cancel(stale_fx *fx) { return stale_pool_run(fx, 1, TD_CANCELED, 0); }

static const stale_row stale_rows_waits[] = {
    STALE_ROW("td_yield", "succeeded (stateless marker)", TD_SUCCEEDED, stale_make_yield, &stale_frame_marker, 0),
    STALE_ROW("td_next_frame", "succeeded (stateless marker)", TD_SUCCEEDED, stale_make_next_frame, &stale_frame_marker, 0),
    STALE_ROW("td_delay_frame", "succeeded (stateless marker)", TD_SUCCEEDED, stale_make_delay_frame, &stale_frame_marker, 0),
    STALE_ROW("td_yield_ex", "succeeded, no options (marker)", TD_SUCCEEDED, stale_yield_ex, &stale_frame_marker, 0),
    STALE_ROW("td_yield_ex", "succeeded, with a token", TD_SUCCEEDED, stale_yield_ex_ok, NULL, 0),
    STALE_ROW("td_yield_ex", "canceled at the next frame", TD_CANCELED, stale_yield_ex_cancel, NULL, 0),
    STALE_ROW("td_yield_ex", "canceled immediately, loop item holds it", TD_CANCELED, stale_yield_ex_now, NULL, STALE_HELD),
    STALE_ROW("td_next_frame_ex", "succeeded, no options (marker)", TD_SUCCEEDED, stale_next_ex, &stale_frame_marker, 0),
    STALE_ROW("td_next_frame_ex", "succeeded, with a token", TD_SUCCEEDED, stale_next_ex_ok, NULL, 0),
    STALE_ROW("td_next_frame_ex", "canceled at the next frame", TD_CANCELED, stale_next_ex_cancel, NULL, 0),
    STALE_ROW("td_next_frame_ex", "canceled immediately, loop item holds it", TD_CANCELED, stale_next_ex_now, NULL, STALE_HELD),
    STALE_ROW("td_delay_frame_ex", "succeeded, no options (marker)", TD_SUCCEEDED, stale_dframe_ex, &stale_frame_marker, 0),
    STALE_ROW("td_delay_frame_ex", "succeeded, with a token", TD_SUCCEEDED, stale_dframe_ex_ok, NULL, 0),
    STALE_ROW("td_delay_frame_ex", "canceled at the next frame", TD_CANCELED, stale_dframe_ex_cancel, NULL, 0),
    STALE_ROW("td_delay_frame_ex", "canceled immediately, loop item holds it", TD_CANCELED, stale_dframe_ex_now, NULL, STALE_HELD),
    STALE_ROW("td_wait_for_end_of_frame", "succeeded, no options (marker)", TD_SUCCEEDED, stale_eof, &stale_frame_marker, 0),
    STALE_ROW("td_wait_for_end_of_frame", "succeeded, with a token", TD_SUCCEEDED, stale_eof_ok, NULL, 0),
    STALE_ROW("td_wait_for_end_of_frame", "canceled at the next frame", TD_CANCELED, stale_eof_cancel, NULL, 0),
    STALE_ROW("td_wait_for_end_of_frame", "canceled immediately, loop item holds it", TD_CANCELED, stale_eof_now, NULL, STALE_HELD),
    STALE_ROW("td_delay", "succeeded, no options", TD_SUCCEEDED, stale_delay, NULL, 0),
    STALE_ROW("td_delay", "succeeded, with a token", TD_SUCCEEDED, stale_delay_ok, NULL, 0),
    STALE_ROW("td_delay", "canceled at the next frame", TD_CANCELED, stale_delay_cancel, NULL, 0),
    STALE_ROW("td_delay", "canceled immediately, loop item holds it", TD_CANCELED, stale_delay_now, NULL, STALE_HELD),
    STALE_ROW("td_wait_until", "succeeded, no options", TD_SUCCEEDED, stale_until_ok, NULL, 0),
    STALE_ROW("td_wait_until", "canceled at the next frame", TD_CANCELED, stale_until_cancel, NULL, 0),
    STALE_ROW("td_wait_until", "canceled immediately, loop item holds it", TD_CANCELED, stale_until_now, NULL, STALE_HELD),
    STALE_ROW("td_wait_while", "succeeded, with a token", TD_SUCCEEDED, stale_while_ok, NULL, 0),
    STALE_ROW("td_wait_while", "canceled at the next frame", TD_CANCELED, stale_while_cancel, NULL, 0),
    STALE_ROW("td_wait_while", "canceled immediately, loop item holds it", TD_CANCELED, stale_while_now, NULL, STALE_HELD),
    STALE_ROW("td_wait_until_value_changed", "succeeded, no options", TD_SUCCEEDED, stale_changed_ok, NULL, 0),
    STALE_ROW("td_wait_until_value_changed", "canceled at the next frame", TD_CANCELED, stale_changed_cancel, NULL, 0),
    STALE_ROW("td_wait_until_value_changed", "canceled immediately, loop item holds it", TD_CANCELED, stale_changed_now, NULL, STALE_HELD),
    STALE_ROW("td_yield", "faulted: no main loop", TD_FAULTED, stale_yield_no_loop, NULL, 0),
    STALE_ROW("td_next_frame", "faulted: no main loop", TD_FAULTED, stale_next_no_loop, NULL, 0),
    STALE_ROW("td_delay_frame", "faulted: no main loop", TD_FAULTED, stale_dframe_no_loop, NULL, 0),
    STALE_ROW("td_wait_for_end_of_frame", "faulted: no main loop", TD_FAULTED, stale_eof_no_loop, NULL, 0),
    STALE_ROW("td_delay", "faulted: no main loop", TD_FAULTED, stale_delay_no_loop, NULL, 0),
    STALE_ROW("td_wait_until", "faulted: no main loop", TD_FAULTED, stale_until_no_loop, NULL, 0),
    STALE_ROW("td_wait_until_value_changed", "faulted: no main loop", TD_FAULTED, stale_changed_no_loop, NULL, 0),
    STALE_ROW("td_yield_ex", "canceled: its loop retired (marker)", TD_CANCELED, stale_yield_retired, &stale_retired_marker, 0),
    STALE_ROW("td_delay", "canceled: its loop retired while pending", TD_CANCELED, stale_delay_retired, NULL, 0),
    STALE_ROW("td_switch_to_main_thread", "succeeded on the main thread (stateless)", TD_SUCCEEDED, stale_make_switch_main, &stale_switch_main, 0),
    STALE_ROW("td_switch_to_thread_pool", "status pending, get succeeded (stateless)", TD_SUCCEEDED, stale_make_switch_pool, &stale_switch_pool, STALE_STATUS_PENDING),
    STALE_ROW("td_run_on_thread_pool", "succeeded on the worker", TD_SUCCEEDED, stale_pool_ok, NULL, 0),
    STALE_ROW("td_run_on_thread_pool", "succeeded, returned to main", TD_SUCCEEDED, stale_pool_main_ok, NULL, 0),
    STALE_ROW("td_run_on_thread_pool", "faulted", TD_FAULTED, stale_pool_fault, NULL, 0),
    STALE_ROW("td_run_on_thread_pool", "canceled by the work", TD_CANCELED, stale_pool_cancel, NULL, 0),
    STALE_ROW("td_run_on_thread_pool", "canceled by a token cancelled before the call", TD_CANCELED, stale_pool_token, NULL, 0),
    STALE_ROW("td_run_on_thread_pool_i64", "succeeded on the worker", TD_SUCCEEDED, stale_pool_i64_ok, NULL, 0),
    STALE_ROW("td_run_on_thread_pool_i64", "faulted, returned to main", TD_FAULTED, stale_pool_i64_main_fault, NULL, 0),
    STALE_ROW("td_run_on_thread_pool_i64", "canceled by the work", TD_CANCELED, stale_pool_i64_cancel, NULL, 0),
};
