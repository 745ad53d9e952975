/*
 * stale_table.h - the staleness table: every public way to make a task, driven to each
 * final state it can reach, consumed once, then queried with the old token (issue 40).
 *
 * task.h's consumption invariant: "Every later query with the old token fails with
 * TD_E_STALE, never reads another rental's result". A row names the constructor it covers
 * (STALE_ROW's first argument, which tests/runtime/stale_table_coverage.py compares with
 * the constructors declared in runtime/include/tandem/ headers), the state it reaches and how
 * (`make`), and what the queries after the consumption must answer: TD_E_STALE for get
 * and result (inline and out of line), status, on_completed and share, unless the row gives a
 * documented exception (a stale_expect naming the header line that says so).
 * After the queries the row's pending inputs are finished and frames run (stale_finish):
 * a source freed too early is touched then, which the ASan builds report.
 *
 * The same table runs in tests/runtime/test_stale_table.c (clang, tcc, ASan+UBSan, TSan)
 * and in the players' suite players/suites/stale (AOT and JIT): one header, one table.
 * Everything here is static and prefixed stale_ (the players compile suites into one TU).
 * Needs a runtime initialised with at least one worker thread (the thread-pool rows).
 */
#ifndef STALE_TABLE_H
#define STALE_TABLE_H

#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <tandem/tandem.h>

/* ---- a row ------------------------------------------------------------------------- */

/* Everything a row may leave behind for stale_finish to complete and free. */
typedef struct stale_fx {
    td_task_i64 t;                      /* the task under test (untyped: t.task) */
    int typed;
    td_completion_source *gate[3];      /* inputs; stale_finish answers the pending ones */
    td_cancel_source *cancel[2];        /* freed once everything registered has completed */
    td_future *future;
    td_adapt_done_fn cb_done;           /* a callback API's answer still to give */
    void *cb_arg;
    int cb_status;                      /* the callback API's inline answer (from_callback) */
    td_channel *chan;
    td_stream *stream;                  /* disposed and drained by stale_finish */
    td_stream_writer *writer;           /* the create-stream producer's writer */
    td_task_i64 moves[2];               /* move tasks the row left unconsumed */
    int nmoves;
    int stream_disposed;
    td_task dispose;                    /* a dispose task the row left unconsumed */
    td_task extra;                      /* another task to consume in stale_finish */
    td_shared *shared;                  /* a shared handle the row holds */
    int64_t results[4];                 /* when_all_i64's storage, to_array's items */
    int winner;
    int64_t counter;                    /* wait_until_value_changed, predicates, work */
    volatile uint32_t hold_workers;     /* 1: jobs hold every worker (run-on-pool rows) */
    td_i64_array growable;
    /* the row being run, for a consumption inside a continuation (STALE_IN_CONTINUATION) */
    const struct stale_row *row;
    struct stale_report *rep;
    int pass;                           /* STALE_PASS_* */
    int consumed;
} stale_fx;

/* 0: the task is in fx->t and in its final state; else the row could not set itself up.
 * fx->row is the row being made: its typed, input and how choose the maker's variant. */
typedef int (*stale_make_fn)(stale_fx *fx);

/* The answers after the one consumption, where a kind documents other ones than stale. */
typedef struct stale_expect {
    int get_again;          /* the second get, inline and out of line */
    int result;             /* td_task_result / td_task_i64_result, inline and out of line */
    int status;
    int on_completed;
    int share;              /* td_task_share_rc */
    const char *contract;   /* the header line that documents it */
} stale_expect;

enum {
    STALE_HELD = 1,             /* consumed while an input or a loop item still holds it */
    STALE_RELEASE_SHARED = 2,   /* the consumption is the handle's release (shared.h) */
    STALE_STATUS_PENDING = 4,   /* its status reads pending before the get (a switch) */
    STALE_IN_CONTINUATION = 8   /* consumed by its continuation, inside the completing call */
};

typedef struct stale_row {
    const char *ctor;           /* the public constructor covered */
    const char *variant;        /* the state and how it is reached */
    td_status final;
    stale_make_fn make;         /* reads the three below through fx->row */
    int typed;                  /* the constructor's typed form (where it has both) */
    td_status input;            /* the state the maker completes the row's input in */
    int how;                    /* the maker's own choice (its options, a kind, a mode) */
    const stale_expect *expect; /* NULL: the invariant, TD_E_STALE for every query */
    int flags;
} stale_row;

#define STALE_ROW(ctor, variant, final, make, typed, input, how, expect, flags) \
    { ctor, variant, final, make, typed, input, how, expect, flags }

/* ---- reporting ------------------------------------------------------------------------ */

/* A wrong answer: the row, the query, expected and actual (the test prints it, the player
 * suite reports it through its host). */
typedef void (*stale_fail_fn)(void *ctx, const stale_row *row, const char *query, long long want,
                              long long got, int line);
typedef struct stale_report {
    stale_fail_fn fail;
    void *ctx;
    int failures;               /* of the row being run */
} stale_report;

static void stale_expect_eq(stale_report *rep, const stale_row *row, const char *query, long long want,
                            long long got, int line)
{
    if (want == got)
        return;
    rep->failures++;
    rep->fail(rep->ctx, row, query, want, got, line);
}
#define STALE_EQ(query, want, got) stale_expect_eq(rep, row, (query), (want), (got), __LINE__)

/* ---- helpers the rows share ----------------------------------------------------------- */

static int64_t stale_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The status of t, or -1 when the query fails. */
static int stale_status_of(td_task t)
{
    td_status st = TD_PENDING;
    return td_task_status(t, &st) == TD_OK ? (int)st : -1;
}

/* Run frames of the main loop until t is no longer pending (bounded: 10 s). 1: done. */
static int stale_pump(td_task t)
{
    int64_t end = stale_now_ns() + 10000000000LL;
    while (stale_status_of(t) == TD_PENDING) {
        if (stale_now_ns() > end)
            return 0;
        td_loop_run_frame(td_loop_main());
        sched_yield();
    }
    return 1;
}

static void stale_frames(int n)
{
    for (int i = 0; i < n; i++)
        td_loop_run_frame(td_loop_main());
}

static void stale_set_untyped(stale_fx *fx, td_task t) { fx->t = td_task_i64_of(t); fx->typed = 0; }
static void stale_set_typed(stale_fx *fx, td_task_i64 t) { fx->t = t; fx->typed = 1; }

static td_completion_source *stale_gate(stale_fx *fx, int i)
{
    fx->gate[i] = td_completion_source_new();
    return fx->gate[i];
}

static td_cancel_source *stale_cancel(stale_fx *fx, int i)
{
    fx->cancel[i] = td_cancel_source_new();
    return fx->cancel[i];
}

/* Options carrying fx's cancel source 0 (made here), cancelled at once or at the next frame. */
static td_wait_options stale_options(stale_fx *fx, int immediately)
{
    td_wait_options o = td_wait_defaults();
    o.cancel = td_cancel_source_token(stale_cancel(fx, 0));
    o.cancel_immediately = immediately;
    return o;
}

/* Complete a gate in the given state (a value for success). */
static void stale_settle(td_completion_source *g, td_status st)
{
    if (st == TD_SUCCEEDED)
        td_completion_source_set_result(g, 7);
    else if (st == TD_FAULTED)
        td_completion_source_set_error(g, TD_ERR_USER, "stale row fault");
    else
        td_completion_source_set_canceled(g, NULL);
}

static void stale_noop(void *arg) { (void)arg; }

/* Consume a task nobody else will: pump it to completion, then get it. */
static void stale_drain(td_task t)
{
    td_outcome o;
    if (t.source == NULL)
        return;
    stale_pump(t);
    td_task_get(t, &o);
}

/* ---- the check and the finish --------------------------------------------------------- */

/* The pending inputs answered, the streams disposed and drained, frames run, all freed. */
static void stale_finish(stale_fx *fx)
{
    /* a disposal first: it cancels a create-stream producer's token and settles its writes */
    if (fx->stream && !fx->stream_disposed) {
        fx->dispose = td_stream_dispose(fx->stream);
        fx->stream_disposed = 1;
    }
    for (int i = 0; i < 3; i++)
        if (fx->gate[i])
            td_completion_source_set_result(fx->gate[i], 99);   /* late answers */
    if (fx->cb_done)
        fx->cb_done(fx->cb_arg, TD_ADAPT_OK, 5);
    if (fx->future)
        td_future_set(fx->future, TD_ADAPT_OK, 5);
    for (int i = 0; i < fx->nmoves; i++)
        stale_drain(fx->moves[i].task);
    stale_drain(fx->extra);             /* a producer's write: before the stream goes back */
    stale_drain(fx->dispose);
    stale_frames(3);                    /* loop items see their waits consumed and detach */
    if (fx->shared)
        td_shared_release(fx->shared);
    for (int i = 0; i < 3; i++)
        if (fx->gate[i])
            td_completion_source_free(fx->gate[i]);
    if (fx->future)
        td_future_free(fx->future);
    if (fx->chan)
        td_channel_free(fx->chan);
    td_i64_array_free(&fx->growable);
    for (int i = 0; i < 2; i++)
        if (fx->cancel[i])
            td_cancel_source_free(fx->cancel[i]);
}

/* The queries after the consumption: each reads TD_E_STALE, or the row's documented answer. */
static void stale_query_after(const stale_row *row, stale_fx *fx, stale_report *rep)
{
    static const stale_expect stale_invariant = { TD_E_STALE, TD_E_STALE, TD_E_STALE, TD_E_STALE, TD_E_STALE,
                                                  "task.h" };
    const stale_expect *e = row->expect ? row->expect : &stale_invariant;
    td_outcome o;
    td_status st;
    int rc = fx->typed ? td_task_i64_get(fx->t, &o) : td_task_get(fx->t.task, &o);
    STALE_EQ("second get", e->get_again, rc);
    rc = fx->typed ? (td_task_i64_get)(fx->t, &o) : (td_task_get)(fx->t.task, &o);
    STALE_EQ("second get (out of line)", e->get_again, rc);
    int64_t v;
    td_error err;
    rc = fx->typed ? td_task_i64_result(fx->t, &v, &err) : td_task_result(fx->t.task, &err);
    STALE_EQ("result", e->result, rc);
    rc = fx->typed ? (td_task_i64_result)(fx->t, &v, &err) : (td_task_result)(fx->t.task, &err);
    STALE_EQ("result (out of line)", e->result, rc);
    STALE_EQ("status", e->status, td_task_status(fx->t.task, &st));
    STALE_EQ("status (out of line)", e->status, (td_task_status)(fx->t.task, &st));
    STALE_EQ("on_completed", e->on_completed, td_task_on_completed(fx->t.task, stale_noop, NULL));
    STALE_EQ("on_completed (out of line)", e->on_completed, (td_task_on_completed)(fx->t.task, stale_noop, NULL));
    td_shared *h = NULL;
    STALE_EQ("share", e->share, td_task_share_rc(fx->t, &h));
    if (h)
        td_shared_release(h);
}

/* The passes over the table. POOLED: the default source pools, a consumed source recycled
 * under its old token. UNPOOLED: pools that keep nothing (td_set_source_pool_capacity(0)), so
 * a source released by its consumption is freed and ASan sees a later touch; task.h forbids
 * querying a freed object, so only the rows whose object something else still holds
 * (STALE_HELD, STALE_IN_CONTINUATION) or that document other answers (never freed) are
 * queried there. SHARED: the consumption is a share of the completed task (shared.h: "When
 * the original completes, the handle consumes it ..., its old token dead"), for the rows
 * that expect the invariant. */
enum { STALE_PASS_POOLED, STALE_PASS_UNPOOLED, STALE_PASS_SHARED, STALE_PASSES };
static const char *const stale_pass_names[STALE_PASSES] = { "pooled", "unpooled", "shared" };

/* 1 when the row runs in that pass */
static int stale_row_in_pass(const stale_row *row, int pass)
{
    return pass != STALE_PASS_SHARED ||
           (row->expect == NULL && !(row->flags & (STALE_RELEASE_SHARED | STALE_IN_CONTINUATION)));
}

/* The one consumption: a get, or (the shared pass) a share that the handle takes at once. */
static void stale_consume(const stale_row *row, stale_fx *fx, stale_report *rep, int pass)
{
    td_outcome o;
    memset(&o, 0, sizeof o);
    int rc;
    if (pass == STALE_PASS_SHARED) {
        STALE_EQ("share", TD_OK, td_task_share_rc(fx->t, &fx->shared));
        rc = fx->shared ? td_shared_outcome(fx->shared, &o) : TD_E_INVALID;
        STALE_EQ("the handle's outcome", TD_OK, rc);
    } else {
        rc = fx->typed ? td_task_i64_get(fx->t, &o) : td_task_get(fx->t.task, &o);
        STALE_EQ("first get", TD_OK, rc);
    }
    if (rc == TD_OK)
        STALE_EQ("the consumption's status", row->final, o.status);
    if (row->flags & STALE_RELEASE_SHARED) {
        td_shared_release(fx->shared);
        fx->shared = NULL;
    }
}

/* The final state checked, the one consumption, the queries after it (see stale_run_row). */
static void stale_consume_and_query(const stale_row *row, stale_fx *fx, stale_report *rep, int pass)
{
    int before = (row->flags & STALE_STATUS_PENDING) ? TD_PENDING : (int)row->final;
    STALE_EQ("status before the consumption", before, stale_status_of(fx->t.task));
    stale_consume(row, fx, rep, pass);
    if (pass != STALE_PASS_UNPOOLED || (row->flags & (STALE_HELD | STALE_IN_CONTINUATION)) || row->expect)
        stale_query_after(row, fx, rep);
    fx->consumed = 1;
}

/* A STALE_IN_CONTINUATION row's continuation: the consumer resumed by the completion, inline
 * in the completer's call, while the completing input still holds the source. */
static void stale_consume_cont(void *arg)
{
    stale_fx *fx = (stale_fx *)arg;
    stale_consume_and_query(fx->row, fx, fx->rep, fx->pass);
}

/* For a STALE_IN_CONTINUATION row's make: subscribe before its inputs complete. */
static int stale_subscribe(stale_fx *fx)
{
    return td_task_on_completed(fx->t.task, stale_consume_cont, fx) != TD_OK;
}

/* One row in one pass: make, check the final state, consume once, query, finish (for ASan to
 * watch). Returns its failures. */
static int stale_run_row(const stale_row *row, stale_report *rep, int pass)
{
    stale_fx fx;
    memset(&fx, 0, sizeof fx);
    fx.row = row;
    fx.rep = rep;
    fx.pass = pass;
    rep->failures = 0;
    STALE_EQ("make", 0, row->make(&fx));
    if (rep->failures) {
        stale_finish(&fx);
        return rep->failures;
    }
    if (row->flags & STALE_IN_CONTINUATION)
        STALE_EQ("consumed in its continuation", 1, fx.consumed);
    else
        stale_consume_and_query(row, &fx, rep, pass);
    stale_finish(&fx);
    return rep->failures;
}

/* Short names for the row tables' states (undefined after them). */
#define STALE_OK TD_SUCCEEDED
#define STALE_FAULT TD_FAULTED
#define STALE_CANCEL TD_CANCELED
#include "stale_rows_sources.h"
#include "stale_rows_waits.h"
#include "stale_rows_compose.h"
#include "stale_rows_streams.h"

/* The table: every area's rows, in header order. */
static const stale_row *const stale_areas[] = {
    stale_rows_sources, stale_rows_waits, stale_rows_compose, stale_rows_streams
};
static const int stale_area_sizes[] = {
    (int)(sizeof stale_rows_sources / sizeof stale_rows_sources[0]),
    (int)(sizeof stale_rows_waits / sizeof stale_rows_waits[0]),
    (int)(sizeof stale_rows_compose / sizeof stale_rows_compose[0]),
    (int)(sizeof stale_rows_streams / sizeof stale_rows_streams[0])
};
#undef STALE_OK
#undef STALE_FAULT
#undef STALE_CANCEL
#define STALE_AREAS ((int)(sizeof stale_areas / sizeof stale_areas[0]))

/* Run every row of the pass whose name, "ctor [variant]", contains `filter` (NULL: all);
 * `row_done` (may be NULL) is told each row's outcome. Returns the number of rows that failed. */
static int stale_run_table(stale_report *rep, const char *filter, int pass,
                           void (*row_done)(void *ctx, const stale_row *row, int failures), void *ctx)
{
    int failed = 0;
    for (int a = 0; a < STALE_AREAS; a++)
        for (int i = 0; i < stale_area_sizes[a]; i++) {
            const stale_row *row = &stale_areas[a][i];
            char name[200];
            snprintf(name, sizeof name, "%s [%s]", row->ctor, row->variant);
            if ((filter && !strstr(name, filter)) || !stale_row_in_pass(row, pass))
                continue;
            int f = stale_run_row(row, rep, pass);
            failed += f != 0;
            if (row_done)
                row_done(ctx, row, f);
        }
    return failed;
}

#endif /* STALE_TABLE_H */
