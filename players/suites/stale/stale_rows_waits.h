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
static const stale_expect stale_frame_marker = { TD_OK, TD_OK, TD_OK, TD_DONE, TD_OK,
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

/* The frame and timed waits, the row's how the options mode (STALE_OPT_*); the plain frame
 * waits take none (their markers). */
static int stale_plain_frame(stale_fx *fx)
{
    td_task t = fx->row->how == 0 ? td_yield(TD_TIMING_UPDATE)
              : fx->row->how == 1 ? td_next_frame(TD_TIMING_UPDATE) : td_delay_frame(2, TD_TIMING_UPDATE);
    return stale_wait_done(fx, t, STALE_OPT_NONE);
}
static int stale_yield_ex(stale_fx *fx) { return stale_wait(fx, STALE_YIELD_EX, fx->row->how); }
static int stale_next_ex(stale_fx *fx) { return stale_wait(fx, STALE_NEXT_FRAME_EX, fx->row->how); }
static int stale_dframe_ex(stale_fx *fx) { return stale_wait(fx, STALE_DELAY_FRAME_EX, fx->row->how); }
static int stale_eof(stale_fx *fx) { return stale_wait(fx, STALE_END_OF_FRAME, fx->row->how); }
static int stale_delay(stale_fx *fx) { return stale_wait(fx, STALE_DELAY, fx->row->how); }

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
static int stale_until(stale_fx *fx) { return stale_predicate(fx, 0, fx->row->how); }
static int stale_while(stale_fx *fx) { return stale_predicate(fx, 1, fx->row->how); }
static int stale_changed(stale_fx *fx) { return stale_predicate(fx, 2, fx->row->how); }

/* ---- without a main loop (faulted) and on a retired loop (canceled) ------------------- */

/* loop.h: with no main loop, waits without an explicit loop "return a task FAULTED with
 * TD_ERR_NO_LOOP" (a pooled fault, so stale once consumed). The main loop is put back. */
static int stale_no_loop(stale_fx *fx)
{
    int kind = fx->row->how;
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
/* loop.h: a retired loop's frame waits "read canceled" (the marker: repeatedly), and a wait
 * pending on it "completes canceled" (a pooled wait: stale once consumed). A loop of the
 * row's own, retired while the wait is pending; its header lives until shutdown. */
static const stale_expect stale_retired_marker = { TD_OK, TD_E_CANCELED, TD_OK, TD_DONE, TD_OK,
                                                   "loop.h:13 read repeatedly; loop.h:80 frame waits on it read canceled" };

static int stale_retired(stale_fx *fx)
{
    int pooled = fx->row->how;
    td_wait_options o = pooled ? stale_options(fx, 0) : td_wait_defaults();
    o.loop = td_loop_create(NULL);
    if (o.loop == NULL)
        return 1;
    stale_set_untyped(fx, pooled ? td_delay(1000000000000LL, TD_CLOCK_REALTIME, &o) : td_yield_ex(&o));
    td_loop_destroy(o.loop);
    return 0;
}

/* ---- thread switches and run-on-pool ------------------------------------------------------ */

/* threads.h:17 "Both tasks may be copied, awaited any number of times and read repeatedly". */
static const stale_expect stale_switch_main = { TD_OK, TD_OK, TD_OK, TD_DONE, TD_OK,
                                                "threads.h:17 read repeatedly" };
/* threads.h:12 "Its status is always pending" and threads.h:17 "read repeatedly": the status
 * reads pending (TD_OK) before and after, every get answers success, a registration queues
 * the continuation for a worker (TD_OK), a share subscribes (TD_OK). */
static const stale_expect stale_switch_pool = { TD_OK, TD_OK, TD_OK, TD_OK, TD_OK,
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

/* A job that holds its worker until fx->hold_workers drops to 0. */
static void stale_hold_worker(void *arg)
{
    stale_fx *fx = (stale_fx *)arg;
    while (td_atomic_load_u32(&fx->hold_workers) != 0)
        sched_yield();
}

/* The work answers the row's input state; how 1: return to main; 2: the token is cancelled
 * before the call (canceled at once, the work never runs); 3: the token is cancelled while
 * the job waits in the queue behind jobs that hold every worker (canceled when a worker picks
 * it up, threads.h: "fn never runs"). */
static int stale_pool_run(stale_fx *fx)
{
    int typed = fx->row->typed, mode = fx->row->how;
    td_cancel_token tok = td_cancel_none();
    if (mode >= 2)
        tok = td_cancel_source_token(stale_cancel(fx, 0));
    if (mode == 2)
        td_cancel_source_cancel(fx->cancel[0]);
    if (mode == 3) {
        td_atomic_store_release_u32(&fx->hold_workers, 1);
        for (uint32_t i = 0; i < td_thread_pool_size(); i++)
            td_thread_pool_post(stale_hold_worker, fx);
    }
    fx->counter = fx->row->input;
    if (typed)
        stale_set_typed(fx, td_run_on_thread_pool_i64(stale_work_i64, fx, mode == 1, tok));
    else
        stale_set_untyped(fx, td_run_on_thread_pool(stale_work, fx, mode == 1, tok));
    if (mode == 3) {
        td_cancel_source_cancel(fx->cancel[0]);
        td_atomic_store_release_u32(&fx->hold_workers, 0);
    }
    return !stale_pump(fx->t.task);
}

static const stale_row stale_rows_waits[] = {
    /* ctor, variant, final, make, typed, input, how, expect, flags */
    STALE_ROW("td_yield", "succeeded (stateless marker)", STALE_OK, stale_plain_frame, 0, STALE_OK, 0, &stale_frame_marker, 0),
    STALE_ROW("td_next_frame", "succeeded (stateless marker)", STALE_OK, stale_plain_frame, 0, STALE_OK, 1, &stale_frame_marker, 0),
    STALE_ROW("td_delay_frame", "succeeded (stateless marker)", STALE_OK, stale_plain_frame, 0, STALE_OK, 2, &stale_frame_marker, 0),
    STALE_ROW("td_yield_ex", "succeeded, no options (marker)", STALE_OK, stale_yield_ex, 0, STALE_OK, STALE_OPT_NONE, &stale_frame_marker, 0),
    STALE_ROW("td_yield_ex", "succeeded, with a token", STALE_OK, stale_yield_ex, 0, STALE_OK, STALE_OPT_TOKEN, NULL, 0),
    STALE_ROW("td_yield_ex", "canceled at the next frame", STALE_CANCEL, stale_yield_ex, 0, STALE_CANCEL, STALE_OPT_CANCEL_FRAME, NULL, 0),
    STALE_ROW("td_yield_ex", "canceled immediately, loop item holds it", STALE_CANCEL, stale_yield_ex, 0, STALE_CANCEL, STALE_OPT_CANCEL_NOW, NULL, STALE_HELD),
    STALE_ROW("td_next_frame_ex", "succeeded, no options (marker)", STALE_OK, stale_next_ex, 0, STALE_OK, STALE_OPT_NONE, &stale_frame_marker, 0),
    STALE_ROW("td_next_frame_ex", "succeeded, with a token", STALE_OK, stale_next_ex, 0, STALE_OK, STALE_OPT_TOKEN, NULL, 0),
    STALE_ROW("td_next_frame_ex", "canceled at the next frame", STALE_CANCEL, stale_next_ex, 0, STALE_CANCEL, STALE_OPT_CANCEL_FRAME, NULL, 0),
    STALE_ROW("td_next_frame_ex", "canceled immediately, loop item holds it", STALE_CANCEL, stale_next_ex, 0, STALE_CANCEL, STALE_OPT_CANCEL_NOW, NULL, STALE_HELD),
    STALE_ROW("td_delay_frame_ex", "succeeded, no options (marker)", STALE_OK, stale_dframe_ex, 0, STALE_OK, STALE_OPT_NONE, &stale_frame_marker, 0),
    STALE_ROW("td_delay_frame_ex", "succeeded, with a token", STALE_OK, stale_dframe_ex, 0, STALE_OK, STALE_OPT_TOKEN, NULL, 0),
    STALE_ROW("td_delay_frame_ex", "canceled at the next frame", STALE_CANCEL, stale_dframe_ex, 0, STALE_CANCEL, STALE_OPT_CANCEL_FRAME, NULL, 0),
    STALE_ROW("td_delay_frame_ex", "canceled immediately, loop item holds it", STALE_CANCEL, stale_dframe_ex, 0, STALE_CANCEL, STALE_OPT_CANCEL_NOW, NULL, STALE_HELD),
    STALE_ROW("td_wait_for_end_of_frame", "succeeded, no options (marker)", STALE_OK, stale_eof, 0, STALE_OK, STALE_OPT_NONE, &stale_frame_marker, 0),
    STALE_ROW("td_wait_for_end_of_frame", "succeeded, with a token", STALE_OK, stale_eof, 0, STALE_OK, STALE_OPT_TOKEN, NULL, 0),
    STALE_ROW("td_wait_for_end_of_frame", "canceled at the next frame", STALE_CANCEL, stale_eof, 0, STALE_CANCEL, STALE_OPT_CANCEL_FRAME, NULL, 0),
    STALE_ROW("td_wait_for_end_of_frame", "canceled immediately, loop item holds it", STALE_CANCEL, stale_eof, 0, STALE_CANCEL, STALE_OPT_CANCEL_NOW, NULL, STALE_HELD),
    STALE_ROW("td_delay", "succeeded, no options", STALE_OK, stale_delay, 0, STALE_OK, STALE_OPT_NONE, NULL, 0),
    STALE_ROW("td_delay", "succeeded, with a token", STALE_OK, stale_delay, 0, STALE_OK, STALE_OPT_TOKEN, NULL, 0),
    STALE_ROW("td_delay", "canceled at the next frame", STALE_CANCEL, stale_delay, 0, STALE_CANCEL, STALE_OPT_CANCEL_FRAME, NULL, 0),
    STALE_ROW("td_delay", "canceled immediately, loop item holds it", STALE_CANCEL, stale_delay, 0, STALE_CANCEL, STALE_OPT_CANCEL_NOW, NULL, STALE_HELD),
    STALE_ROW("td_wait_until", "succeeded, no options", STALE_OK, stale_until, 0, STALE_OK, STALE_OPT_NONE, NULL, 0),
    STALE_ROW("td_wait_until", "succeeded, with a token", STALE_OK, stale_until, 0, STALE_OK, STALE_OPT_TOKEN, NULL, 0),
    STALE_ROW("td_wait_until", "canceled at the next frame", STALE_CANCEL, stale_until, 0, STALE_CANCEL, STALE_OPT_CANCEL_FRAME, NULL, 0),
    STALE_ROW("td_wait_until", "canceled immediately, loop item holds it", STALE_CANCEL, stale_until, 0, STALE_CANCEL, STALE_OPT_CANCEL_NOW, NULL, STALE_HELD),
    STALE_ROW("td_wait_while", "succeeded, no options", STALE_OK, stale_while, 0, STALE_OK, STALE_OPT_NONE, NULL, 0),
    STALE_ROW("td_wait_while", "succeeded, with a token", STALE_OK, stale_while, 0, STALE_OK, STALE_OPT_TOKEN, NULL, 0),
    STALE_ROW("td_wait_while", "canceled at the next frame", STALE_CANCEL, stale_while, 0, STALE_CANCEL, STALE_OPT_CANCEL_FRAME, NULL, 0),
    STALE_ROW("td_wait_while", "canceled immediately, loop item holds it", STALE_CANCEL, stale_while, 0, STALE_CANCEL, STALE_OPT_CANCEL_NOW, NULL, STALE_HELD),
    STALE_ROW("td_wait_until_value_changed", "succeeded, no options", STALE_OK, stale_changed, 0, STALE_OK, STALE_OPT_NONE, NULL, 0),
    STALE_ROW("td_wait_until_value_changed", "succeeded, with a token", STALE_OK, stale_changed, 0, STALE_OK, STALE_OPT_TOKEN, NULL, 0),
    STALE_ROW("td_wait_until_value_changed", "canceled at the next frame", STALE_CANCEL, stale_changed, 0, STALE_CANCEL, STALE_OPT_CANCEL_FRAME, NULL, 0),
    STALE_ROW("td_wait_until_value_changed", "canceled immediately, loop item holds it", STALE_CANCEL, stale_changed, 0, STALE_CANCEL, STALE_OPT_CANCEL_NOW, NULL, STALE_HELD),
    STALE_ROW("td_yield", "faulted: no main loop", STALE_FAULT, stale_no_loop, 0, STALE_FAULT, 0, NULL, 0),
    STALE_ROW("td_next_frame", "faulted: no main loop", STALE_FAULT, stale_no_loop, 0, STALE_FAULT, 1, NULL, 0),
    STALE_ROW("td_delay_frame", "faulted: no main loop", STALE_FAULT, stale_no_loop, 0, STALE_FAULT, 2, NULL, 0),
    STALE_ROW("td_wait_for_end_of_frame", "faulted: no main loop", STALE_FAULT, stale_no_loop, 0, STALE_FAULT, 3, NULL, 0),
    STALE_ROW("td_delay", "faulted: no main loop", STALE_FAULT, stale_no_loop, 0, STALE_FAULT, 4, NULL, 0),
    STALE_ROW("td_wait_until", "faulted: no main loop", STALE_FAULT, stale_no_loop, 0, STALE_FAULT, 5, NULL, 0),
    STALE_ROW("td_wait_until_value_changed", "faulted: no main loop", STALE_FAULT, stale_no_loop, 0, STALE_FAULT, 6, NULL, 0),
    STALE_ROW("td_yield_ex", "canceled: its loop retired (marker)", STALE_CANCEL, stale_retired, 0, STALE_CANCEL, 0, &stale_retired_marker, 0),
    STALE_ROW("td_delay", "canceled: its loop retired while pending", STALE_CANCEL, stale_retired, 0, STALE_CANCEL, 1, NULL, 0),
    STALE_ROW("td_switch_to_main_thread", "succeeded on the main thread (stateless)", STALE_OK, stale_make_switch_main, 0, STALE_OK, 0, &stale_switch_main, 0),
    STALE_ROW("td_switch_to_thread_pool", "status pending, get succeeded (stateless)", STALE_OK, stale_make_switch_pool, 0, STALE_OK, 0, &stale_switch_pool, STALE_STATUS_PENDING),
    STALE_ROW("td_run_on_thread_pool", "succeeded on the worker", STALE_OK, stale_pool_run, 0, STALE_OK, 0, NULL, 0),
    STALE_ROW("td_run_on_thread_pool", "succeeded, returned to main", STALE_OK, stale_pool_run, 0, STALE_OK, 1, NULL, 0),
    STALE_ROW("td_run_on_thread_pool", "faulted", STALE_FAULT, stale_pool_run, 0, STALE_FAULT, 0, NULL, 0),
    STALE_ROW("td_run_on_thread_pool", "canceled by the work", STALE_CANCEL, stale_pool_run, 0, STALE_CANCEL, 0, NULL, 0),
    STALE_ROW("td_run_on_thread_pool", "canceled by a token cancelled before the call", STALE_CANCEL, stale_pool_run, 0, STALE_OK, 2, NULL, 0),
    STALE_ROW("td_run_on_thread_pool", "canceled by a token cancelled while queued", STALE_CANCEL, stale_pool_run, 0, STALE_OK, 3, NULL, 0),
    STALE_ROW("td_run_on_thread_pool_i64", "canceled by a token cancelled while queued", STALE_CANCEL, stale_pool_run, 1, STALE_OK, 3, NULL, 0),
    STALE_ROW("td_run_on_thread_pool_i64", "succeeded on the worker", STALE_OK, stale_pool_run, 1, STALE_OK, 0, NULL, 0),
    STALE_ROW("td_run_on_thread_pool_i64", "faulted, returned to main", STALE_FAULT, stale_pool_run, 1, STALE_FAULT, 1, NULL, 0),
    STALE_ROW("td_run_on_thread_pool_i64", "canceled by the work", STALE_CANCEL, stale_pool_run, 1, STALE_CANCEL, 0, NULL, 0),
};
