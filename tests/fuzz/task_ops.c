/*
 * task_ops.c - decode an input into public API operations, run them, check each answer
 * against the model (task_model.h). See task_ops.h for the input format.
 */
#include "task_ops.h"
#include "task_model.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tandem/tandem.h>

/* ---- a small async method: awaits a gate, returns its value + 1 --------------------------- */

typedef struct gate_frame { td_task_i64 gate; int64_t got; } gate_frame;
static void gate_step(td_runner *r, gate_frame *f)
{
    TD_BEGIN(r);
    TD_AWAIT_VALUE(r, f->gate, f->got);
    TD_RETURN_VALUE(r, f->got + 1);
    TD_END(r);
}
TD_METHOD_DEFINE(tf_gate, gate_frame, gate_step);

/* ---- the executor's state ---------------------------------------------------------------- */

typedef struct tf_handle {
    td_task_i64 t;
    int typed;                          /* read with td_task_i64_get, else td_task_get */
    td_completion_source *manual;       /* MANUAL's source, or a runner's gate */
    td_auto_source *autos;
    td_future *future;
    td_adapt_done_fn done;              /* a callback's answer, until given */
    void *done_arg;
    int inline_answer, inline_status;   /* a callback that answers before it returns */
    int64_t inline_value;
    td_shared *shared;
    uint32_t cont_runs;                 /* user continuations that ran */
} tf_handle;

typedef struct tf_state {
    tm_model m;
    tf_handle h[TM_MAX_HANDLES];
    td_cancel_source *cs[TM_MAX_CS];
    td_cancel_registration reg[TM_MAX_USER_REGS];
    uint32_t reg_runs[TM_MAX_USER_REGS];
    int64_t now;
    int op_index, op;
    int lenient, mismatches;
    int trace;                          /* TASK_FUZZ_TRACE=1: print every operation */
    const char *abort_match;            /* TASK_FUZZ_ABORT_MATCH (mismatch) */
    int sweep_consumed;                 /* TASK_FUZZ_SWEEP_CONSUMED=0: the sweep leaves
                                         * consumed tasks to the explicit queries */
} tf_state;

static const char *const op_names[TF_OP_COUNT] = {
    "make", "make", "complete", "fault", "cancel_producer", "cancel", "on_completed", "get",
    "get", "status", "share", "run_frame", "advance_clock", "capacity", "retire_loop",
    "cancel_register", "cancel_unregister", "cancel_after", "linked", "forget", "reset", "result"
};

const char *tf_op_name(int op) { return (unsigned)op < TF_OP_COUNT ? op_names[op] : "teardown"; }

static int64_t fake_now(void *arg) { return ((tf_state *)arg)->now; }
static void count_run(void *arg) { (*(uint32_t *)arg)++; }

/* ---- mismatch reports -------------------------------------------------------------------------- */

/* 1 when `msg` contains one of the '|'-separated `patterns`. */
static int matches_any(const char *msg, const char *patterns)
{
    char one[128];
    while (*patterns) {
        size_t n = strcspn(patterns, "|");
        if (n > 0 && n < sizeof(one)) {
            memcpy(one, patterns, n);
            one[n] = 0;
            if (strstr(msg, one) != NULL)
                return 1;
        }
        patterns += n + (patterns[n] == '|');
    }
    return 0;
}

static void mismatch(tf_state *st, int h, const char *what, long long expected, long long actual)
{
    char msg[256];
    const char *kind = h >= 0 ? tm_kind_name(st->m.h[h].kind) : "-";
    snprintf(msg, sizeof(msg), "op #%d (%s), handle %d (%s): %s expected %lld, actual %lld",
             st->op_index, tf_op_name(st->op), h, kind, what, expected, actual);
    fprintf(stderr, "task_fuzz: MISMATCH at %s\n", msg);
    st->mismatches++;
    /* TASK_FUZZ_ABORT_MATCH: abort only on mismatches whose report contains it (to time the
     * search for one particular wrong answer); the others are reported and counted. */
    if (!st->lenient && (st->abort_match == NULL || matches_any(msg, st->abort_match)))
        abort();
}

static void check_eq(tf_state *st, int h, const char *what, long long expected, long long actual)
{
    if (expected != actual)
        mismatch(st, h, what, expected, actual);
}

static void check_outcome(tf_state *st, int h, const tm_outcome *e, const td_outcome *a)
{
    check_eq(st, h, "outcome status", e->status, a->status);
    if (e->status != (int)a->status)
        return;
    if (e->status == TD_SUCCEEDED && e->value_known && st->h[h].typed)
        check_eq(st, h, "outcome value", e->value, a->value);
    check_eq(st, h, "outcome error code", e->code, a->error.code);
}

/* After every operation: every continuation and cancellation callback ran as often as the
 * model says, the unobserved-fault count agrees, and every task we may query reads the
 * status the model has for it (td_task_status never consumes). */
static void sweep(tf_state *st)
{
    for (int i = 0; i < st->m.nh; i++) {
        check_eq(st, i, "continuation runs", st->m.h[i].cont_expected, st->h[i].cont_runs);
        if (!tm_may_query(&st->m, i) || (st->m.h[i].consumed && !st->sweep_consumed))
            continue;
        int est = -1, ast = -1;
        td_status s = TD_PENDING;
        int erc = tm_status(&st->m, i, &est);
        int arc = td_task_status(st->h[i].t.task, &s);
        check_eq(st, i, "status rc", erc, arc);
        if (erc == TD_OK && arc == TD_OK) {
            ast = (int)s;
            check_eq(st, i, "status", est, ast);
        }
    }
    for (int r = 0; r < st->m.nur; r++)
        check_eq(st, -1, "cancel callback runs", st->m.ur[r].runs_expected, st->reg_runs[r]);
    check_eq(st, -1, "unobserved faults", st->m.unobserved, td_unobserved_error_count());
}

/* ---- argument decoding -------------------------------------------------------------------------- */

static int pick_handle(const tf_state *st, uint8_t b) { return st->m.nh ? b % st->m.nh : -1; }
static int pick_cs(const tf_state *st, uint8_t b) { return st->m.ncs ? b % st->m.ncs : -1; }

static td_wait_options wait_options(tf_state *st, int cs, int immediate)
{
    td_wait_options o = td_wait_defaults();
    if (cs >= 0)
        o.cancel = td_cancel_source_token(st->cs[cs]);
    o.cancel_immediately = immediate;
    return o;
}

static td_cancel_token token_of(tf_state *st, int cs)
{
    return cs >= 0 ? td_cancel_source_token(st->cs[cs]) : td_cancel_none();
}

/* A callback-style API: answers at once when told to, else keeps `done` for a later op. */
static void callback_api(void *arg, td_adapt_done_fn done, void *cb_arg)
{
    tf_handle *h = (tf_handle *)arg;
    if (h->inline_answer) {
        done(cb_arg, h->inline_status, h->inline_value);
        return;
    }
    h->done = done;
    h->done_arg = cb_arg;
}

static const int adapt_statuses[3] = { TD_ADAPT_OK, 1001, TD_ADAPT_CANCELED };

/* ---- making tasks -------------------------------------------------------------------------------- */

static int make_runner(tf_state *st, tm_kind kind)
{
    int i = tm_make_manual(&st->m, kind);
    if (i < 0)
        return -1;
    tf_handle *h = &st->h[i];
    h->manual = td_completion_source_new();
    td_runner *r = td_runner_rent(&tf_gate_method);
    TD_FRAME(r, gate_frame)->gate = td_completion_source_task_i64(h->manual);
    if (kind == TM_RUNNER_I64) {
        h->t = td_runner_start_i64(r);
        h->typed = 1;
    } else {
        h->t = td_task_i64_of(td_runner_start(r));
    }
    return i;
}

/* Choose up to `want` inputs for a combinator, from handle `from` on. */
static int choose_inputs(tf_state *st, int from, int want, int *inputs)
{
    int n = 0;
    for (int k = 0; k < st->m.nh && n < want; k++) {
        int i = (from + k) % st->m.nh;
        if (tm_input_ok(&st->m, i, inputs, n))
            inputs[n++] = i;
    }
    return n;
}

static int make_combinator(tf_state *st, tm_kind kind, uint8_t b, uint8_t c)
{
    int inputs[TM_MAX_INPUTS];
    int want = (kind == TM_WHEN_ALL || kind == TM_WHEN_ANY || kind == TM_RACE) ? 1 + b % 3 : 1;
    if (st->m.nh == 0 || st->m.nh >= TM_MAX_HANDLES)
        return -1;
    int n = choose_inputs(st, c % st->m.nh, want, inputs);
    if (n == 0)
        return -1;
    /* a timeout's own delay is frame-driven: its producer must not be (tm_input_ok) */
    if (kind == TM_TIMEOUT && st->m.h[inputs[0]].frame_driven)
        return -1;
    td_task untyped[TM_MAX_INPUTS];
    for (int k = 0; k < n; k++)
        untyped[k] = st->h[inputs[k]].t.task;
    td_task_i64 in0 = st->h[inputs[0]].t;
    int cs = (kind == TM_RACE || kind == TM_ATTACH) ? pick_cs(st, b >> 2) : -1;
    int64_t ns = (int64_t)(b % 8) * 1000000;
    int with_error = c & 1;
    int immediate = (c >> 2) & 1;
    if (kind == TM_TIMEOUT && (c & 2))      /* a timeout with a token in its options */
        cs = pick_cs(st, c >> 3);
    td_wait_options opts = wait_options(st, cs, immediate);
    int i = tm_make_combinator(&st->m, kind, inputs, n, cs, ns, with_error, immediate);
    if (i < 0)
        return -1;
    tf_handle *h = &st->h[i];
    h->typed = kind != TM_WHEN_ALL;
    switch (kind) {
    case TM_WHEN_ALL: h->t = td_task_i64_of(td_when_all(untyped, n)); break;
    case TM_WHEN_ANY: h->t = td_when_any(untyped, n); break;
    case TM_RACE: h->t = td_race(untyped, n, cs >= 0 ? st->cs[cs] : NULL); break;
    case TM_TIMEOUT:
        h->t = td_timeout_i64(in0, ns, TD_CLOCK_REALTIME, with_error, cs >= 0 ? &opts : NULL);
        break;
    case TM_ATTACH: h->t = td_attach_cancel_i64(in0, token_of(st, cs)); break;
    default: h->t = td_suppress_cancel_i64(in0); break;
    }
    check_eq(st, i, "source-free task", st->m.h[i].sourceless, h->t.task.source == NULL);
    return i;
}

static int make_wait(tf_state *st, tm_kind kind, uint8_t b, uint8_t c)
{
    int cs = kind == TM_FRAME_TOKEN || (c & 1) ? pick_cs(st, c >> 1) : -1;
    int immediate = (c >> 4) & 1;
    if (kind == TM_FRAME_TOKEN && cs < 0)
        return -1;
    int variant = b % 3;                    /* frame waits: yield_ex, next_frame_ex, delay_frame_ex */
    uint32_t frames = variant == 2 ? 1 + (uint32_t)(b >> 2) % 3 : 1;
    int64_t ns = (int64_t)(b % 8) * 1000000;
    int i = tm_make_wait(&st->m, kind, frames, ns, cs, immediate);
    if (i < 0)
        return -1;
    td_wait_options o = wait_options(st, cs, immediate);
    td_task t;
    if (kind == TM_DELAY)
        t = td_delay(ns, TD_CLOCK_REALTIME, &o);
    else if (variant == 0)
        t = td_yield_ex(&o);
    else if (variant == 1)
        t = td_next_frame_ex(&o);
    else
        t = td_delay_frame_ex(frames, &o);
    st->h[i].t = td_task_i64_of(t);
    return i;
}

static int make_adapter(tf_state *st, tm_kind kind, uint8_t b, uint8_t c)
{
    int cs = (b & 1) ? pick_cs(st, b >> 1) : -1;
    int inline_answer = kind == TM_CALLBACK && (c & 1);
    int status = adapt_statuses[(c >> 1) % 3];
    int64_t value = (int64_t)(c >> 3);
    int i = tm_make_adapter(&st->m, kind, cs, inline_answer, status, value);
    if (i < 0)
        return -1;
    tf_handle *h = &st->h[i];
    h->typed = 1;
    if (kind == TM_CALLBACK) {
        h->inline_answer = inline_answer;
        h->inline_status = status;
        h->inline_value = value;
        h->t = td_from_callback(callback_api, h, token_of(st, cs));
    } else {
        h->future = td_future_new();
        h->t = td_future_task(h->future, token_of(st, cs));
    }
    check_eq(st, i, "source-free task", st->m.h[i].sourceless, h->t.task.source == NULL);
    return i;
}

static int make_simple(tf_state *st, tm_kind kind, uint8_t b)
{
    int i;
    if (kind == TM_MANUAL || kind == TM_AUTO)
        i = tm_make_manual(&st->m, kind);
    else if (kind == TM_FROM_RESULT || kind == TM_FROM_ERROR || kind == TM_FROM_CANCELED)
        i = tm_make_value(&st->m, kind, (int64_t)b, 1000 + b % 4);
    else
        i = tm_make_frame(&st->m, kind, 1 + (uint32_t)b % 3);
    if (i < 0)
        return -1;
    tf_handle *h = &st->h[i];
    h->typed = 1;
    switch (kind) {
    case TM_MANUAL:
        h->manual = td_completion_source_new();
        h->t = td_completion_source_task_i64(h->manual);
        break;
    case TM_AUTO:
        h->autos = td_auto_source_rent();
        h->t = td_auto_source_task_i64(h->autos);
        break;
    case TM_FROM_RESULT: h->t = td_from_result((int64_t)b); break;
    case TM_FROM_ERROR: h->t = td_from_error_i64(1000 + b % 4, "fuzz fault"); break;
    case TM_FROM_CANCELED: h->t = td_from_canceled_i64(NULL); break;
    default:
        h->typed = 0;
        if (kind == TM_NEXT_FRAME)
            h->t = td_task_i64_of(td_next_frame(TD_TIMING_UPDATE));
        else if (kind == TM_YIELD)
            h->t = td_task_i64_of(td_yield(TD_TIMING_UPDATE));
        else
            h->t = td_task_i64_of(td_delay_frame(1 + (uint32_t)b % 3, TD_TIMING_UPDATE));
        break;
    }
    return i;
}

static void op_make(tf_state *st, uint8_t a, uint8_t b, uint8_t c)
{
    tm_kind kind = (tm_kind)(a % (TM_KIND_COUNT - 1));      /* TM_SHARED comes from share */
    if (st->m.nh >= TM_MAX_HANDLES)
        return;
    switch (kind) {
    case TM_RUNNER: case TM_RUNNER_I64: make_runner(st, kind); break;
    case TM_FRAME_TOKEN: case TM_DELAY: make_wait(st, kind, b, c); break;
    case TM_WHEN_ALL: case TM_WHEN_ANY: case TM_RACE: case TM_TIMEOUT: case TM_ATTACH:
    case TM_SUPPRESS:
        make_combinator(st, kind, b, c);
        break;
    case TM_CALLBACK: case TM_FUTURE: make_adapter(st, kind, b, c); break;
    default: make_simple(st, kind, b); break;
    }
}

/* ---- producers ------------------------------------------------------------------------------- */

/* Complete h's producer with `o` (kind TF_COMPLETE, TF_FAULT or TF_CANCEL_PRODUCER). */
static void op_produce(tf_state *st, int i, const tm_outcome *o)
{
    if (i < 0 || !tm_can_produce(&st->m, i))
        return;
    tf_handle *h = &st->h[i];
    tm_kind kind = st->m.h[i].kind;
    int code = o->code;
    int expected = tm_produce(&st->m, i, o);
    int rc = TD_OK;
    if (kind == TM_MANUAL || kind == TM_RUNNER || kind == TM_RUNNER_I64) {
        if (o->status == TD_SUCCEEDED)
            rc = td_completion_source_set_result(h->manual, o->value);
        else if (o->status == TD_FAULTED)
            rc = td_completion_source_set_error(h->manual, code, "fuzz fault");
        else
            rc = td_completion_source_set_canceled(h->manual, NULL);
    } else if (kind == TM_AUTO) {
        uint32_t token = h->t.task.token;
        if (o->status == TD_SUCCEEDED)
            rc = td_auto_source_set_result(h->autos, token, o->value);
        else if (o->status == TD_FAULTED)
            rc = td_auto_source_set_error(h->autos, token, code, "fuzz fault");
        else
            rc = td_auto_source_set_canceled(h->autos, token, NULL);
    } else {
        int status = o->status == TD_SUCCEEDED ? TD_ADAPT_OK
                   : o->status == TD_FAULTED ? code : TD_ADAPT_CANCELED;
        if (kind == TM_FUTURE) {
            rc = td_future_set(h->future, status, o->value);
        } else {
            td_adapt_done_fn done = h->done;
            h->done = NULL;
            done(h->done_arg, status, o->value);
        }
    }
    check_eq(st, i, "producer rc", expected, rc);
}

/* ---- queries ---------------------------------------------------------------------------------- */

static void op_get(tf_state *st, int i)
{
    if (i < 0 || !tm_may_query(&st->m, i))
        return;
    tm_outcome e;
    td_outcome o;
    memset(&o, 0, sizeof(o));
    int expected = tm_get(&st->m, i, &e);
    int rc = st->h[i].typed ? td_task_i64_get(st->h[i].t, &o) : td_task_get(st->h[i].t.task, &o);
    check_eq(st, i, "get rc", expected, rc);
    if (expected == TD_OK && rc == TD_OK)
        check_outcome(st, i, &e, &o);
}

/* td_task_result: get's answer, with a fault or cancellation as its own return code. */
static void op_result(tf_state *st, int i)
{
    if (i < 0 || !tm_may_query(&st->m, i))
        return;
    tm_outcome e;
    td_error err;
    int64_t v = 0;
    memset(&err, 0, sizeof(err));
    int expected = tm_get(&st->m, i, &e);
    if (expected == TD_OK && e.status == TD_FAULTED)
        expected = TD_E_FAULTED;
    else if (expected == TD_OK && e.status == TD_CANCELED)
        expected = TD_E_CANCELED;
    int rc = st->h[i].typed ? td_task_i64_result(st->h[i].t, &v, &err)
                            : td_task_result(st->h[i].t.task, &err);
    check_eq(st, i, "result rc", expected, rc);
    if (rc != expected)
        return;
    if (rc == TD_OK && e.value_known && st->h[i].typed)
        check_eq(st, i, "result value", e.value, v);
    if (rc == TD_E_FAULTED || rc == TD_E_CANCELED)
        check_eq(st, i, "result error code", e.code, err.code);
}

static void op_reset(tf_state *st, int i)
{
    if (i < 0 || !tm_may_reset(&st->m, i))
        return;
    int n = tm_reset(&st->m, i);
    tf_handle *h = &st->h[n];
    h->manual = st->h[i].manual;            /* the new round owns the source now */
    st->h[i].manual = NULL;
    td_completion_source_reset(h->manual);
    h->t = td_completion_source_task_i64(h->manual);
    h->typed = 1;
}

static void op_status(tf_state *st, int i)
{
    if (i < 0 || !tm_may_query(&st->m, i))
        return;
    int est = -1;
    td_status s = TD_PENDING;
    int expected = tm_status(&st->m, i, &est);
    int rc = td_task_status(st->h[i].t.task, &s);
    check_eq(st, i, "status rc", expected, rc);
    if (expected == TD_OK && rc == TD_OK)
        check_eq(st, i, "status", est, (int)s);
}

static void op_on_completed(tf_state *st, int i)
{
    if (i < 0 || !tm_may_query(&st->m, i) || !tm_can_subscribe(&st->m, i))
        return;
    int expected = tm_on_completed(&st->m, i);
    int rc = td_task_on_completed(st->h[i].t.task, count_run, &st->h[i].cont_runs);
    check_eq(st, i, "on_completed rc", expected, rc);
}

static void op_share(tf_state *st, int i)
{
    if (i < 0 || !tm_may_query(&st->m, i) || !tm_can_subscribe(&st->m, i) ||
        st->m.nh >= TM_MAX_HANDLES)
        return;
    int s = -1;
    int expected = tm_share(&st->m, i, &s);
    td_shared *sh = NULL;
    int rc = td_task_share_rc(st->h[i].t, &sh);
    check_eq(st, i, "share rc", expected, rc);
    if (s >= 0 && sh != NULL) {
        st->h[s].shared = sh;
        st->h[s].typed = 1;
        st->h[s].t = td_shared_task_i64(sh);
    } else if (sh != NULL) {
        td_shared_release(sh);
    }
}

static void op_forget(tf_state *st, int i)
{
    if (i < 0 || !tm_may_forget(&st->m, i))
        return;
    tm_forget(&st->m, i);
    td_task_forget_i64(st->h[i].t);
}

/* ---- cancellation ------------------------------------------------------------------------------ */

static void op_cancel(tf_state *st, int c)
{
    if (c < 0)
        return;
    int expected = tm_cancel(&st->m, c);
    check_eq(st, -1, "cancel result", expected, td_cancel_source_cancel(st->cs[c]));
}

static void op_cancel_register(tf_state *st, int c)
{
    if (c < 0)
        return;
    int r = tm_cancel_register(&st->m, c);
    if (r < 0)
        return;
    st->reg_runs[r] = 0;
    st->reg[r] = td_cancel_register(td_cancel_source_token(st->cs[c]), count_run, &st->reg_runs[r]);
}

static void op_cancel_unregister(tf_state *st, uint8_t b)
{
    if (st->m.nur == 0)
        return;
    int r = b % st->m.nur;
    tm_cancel_unregister(&st->m, r);
    td_cancel_unregister(st->reg[r]);
    st->reg[r].node = NULL;
}

static void op_cancel_after(tf_state *st, int c, uint8_t b)
{
    if (c < 0 || !tm_may_cancel_after(&st->m, c))
        return;
    int64_t ns = (int64_t)(b % 8) * 1000000;
    tm_cancel_after(&st->m, c, ns);
    int rc = td_cancel_source_cancel_after(st->cs[c], ns, TD_CLOCK_REALTIME, NULL);
    check_eq(st, -1, "cancel_after rc", TD_OK, rc);
}

static void op_linked(tf_state *st, int a, int b)
{
    if (a < 0 || b < 0 || st->m.ncs >= TM_MAX_CS)
        return;
    int c = tm_linked(&st->m, a, b);
    td_cancel_token parents[2];
    parents[0] = td_cancel_source_token(st->cs[a]);
    parents[1] = td_cancel_source_token(st->cs[b]);
    st->cs[c] = td_cancel_source_linked(parents, 2);
    check_eq(st, -1, "linked source cancelled", st->m.cs[c].cancelled,
             td_cancel_is_requested(td_cancel_source_token(st->cs[c])));
}

/* ---- the loop and the pools -------------------------------------------------------------------- */

static void install_loop(tf_state *st)
{
    td_loop_config cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.now = fake_now;
    cfg.now_arg = st;
    td_loop_set_main(td_loop_create(&cfg));    /* freed at shutdown once retired */
}

static void op_retire(tf_state *st)
{
    tm_retire_loop(&st->m);
    td_loop_destroy(td_loop_main());
    install_loop(st);
}

static const uint32_t capacities[4] = { 0, 1, 2, TD_DEFAULT_SOURCE_POOL_CAPACITY };

static void op_capacity(tf_state *st, uint8_t a, uint8_t b)
{
    uint32_t cap = capacities[b % 4];
    if (a & 1) {
        tm_set_runner_capacity(&st->m, cap);
        check_eq(st, -1, "runner capacity rc", TD_OK, td_set_runner_pool_capacity(cap));
    } else {
        tm_set_source_capacity(&st->m, cap);
        check_eq(st, -1, "source capacity rc", TD_OK, td_set_source_pool_capacity(cap));
    }
}

/* ---- one operation ------------------------------------------------------------------------------- */

static void run_op(tf_state *st, int op, uint8_t a, uint8_t b, uint8_t c)
{
    int h = pick_handle(st, a);
    if (st->trace)
        fprintf(stderr, "op #%d %s a=%u b=%u c=%u (handle %d)\n", st->op_index, tf_op_name(op),
                a, b, c, h);
    tm_outcome o;
    memset(&o, 0, sizeof(o));
    switch (op) {
    case TF_MAKE: case TF_MAKE_AGAIN: op_make(st, a, b, c); break;
    case TF_COMPLETE:
        o.status = TD_SUCCEEDED; o.value = b; o.value_known = 1;
        op_produce(st, h, &o);
        break;
    case TF_FAULT:
        o.status = TD_FAULTED; o.code = 1000 + b % 4;
        op_produce(st, h, &o);
        break;
    case TF_CANCEL_PRODUCER:
        o.status = TD_CANCELED; o.code = TD_ERR_CANCELED;
        op_produce(st, h, &o);
        break;
    case TF_CANCEL: op_cancel(st, pick_cs(st, a)); break;
    case TF_ON_COMPLETED: op_on_completed(st, h); break;
    case TF_GET: case TF_GET_AGAIN: op_get(st, h); break;
    case TF_STATUS: op_status(st, h); break;
    case TF_SHARE: op_share(st, h); break;
    case TF_RUN_FRAME: tm_run_frame(&st->m); td_loop_run_frame(td_loop_main()); break;
    case TF_ADVANCE: tm_advance(&st->m, (int64_t)a * 1000000); st->now += (int64_t)a * 1000000; break;
    case TF_CAPACITY: op_capacity(st, a, b); break;
    case TF_RETIRE: op_retire(st); break;
    case TF_CANCEL_REGISTER: op_cancel_register(st, pick_cs(st, a)); break;
    case TF_CANCEL_UNREGISTER: op_cancel_unregister(st, a); break;
    case TF_CANCEL_AFTER: op_cancel_after(st, pick_cs(st, a), b); break;
    case TF_LINKED: op_linked(st, pick_cs(st, a), pick_cs(st, b)); break;
    case TF_FORGET: op_forget(st, h); break;
    case TF_RESET: op_reset(st, h); break;
    default: op_result(st, h); break;
    }
    sweep(st);
}

/* ---- setup and teardown --------------------------------------------------------------------------- */

static void setup(tf_state *st, int lenient)
{
    memset(st, 0, sizeof(*st));
    st->lenient = lenient;
    st->trace = getenv("TASK_FUZZ_TRACE") != NULL;
    st->abort_match = getenv("TASK_FUZZ_ABORT_MATCH");
    st->sweep_consumed = getenv("TASK_FUZZ_SWEEP_CONSUMED") == NULL ||
                         strcmp(getenv("TASK_FUZZ_SWEEP_CONSUMED"), "0") != 0;
    st->now = 1000000000;
    td_runtime_init(NULL);
    td_set_unobserved_error_handler(NULL, NULL);
    tm_init(&st->m, st->now);
    install_loop(st);
    for (int k = 0; k < 2; k++) {           /* two sources to start with; linked ones join */
        int c = tm_new_cancel(&st->m);
        st->cs[c] = td_cancel_source_new();
    }
}

/* Everything pending ends (checked as ordinary operations), then everything is freed. */
static void teardown(tf_state *st)
{
    tm_outcome o;
    memset(&o, 0, sizeof(o));
    o.status = TD_SUCCEEDED;
    o.value_known = 1;
    st->op = TF_OP_COUNT;
    for (int c = 0; c < st->m.ncs; c++) {
        op_cancel(st, c);
        sweep(st);
    }
    for (int i = 0; i < st->m.nh; i++) {
        if (st->m.h[i].kind != TM_AUTO || !st->m.h[i].consumed)
            op_produce(st, i, &o);
        sweep(st);
    }
    op_retire(st);
    sweep(st);
    for (int i = 0; i < st->m.nh; i++) {
        if (!st->m.h[i].multi_reader && !st->m.h[i].consumed)
            op_get(st, i);
    }
    sweep(st);
    for (int r = 0; r < st->m.nur; r++)
        td_cancel_unregister(st->reg[r]);
    for (int i = 0; i < st->m.nh; i++) {
        tf_handle *h = &st->h[i];
        if (h->shared)
            td_shared_release(h->shared);
        if (h->manual)
            td_completion_source_free(h->manual);
        if (h->future)
            td_future_free(h->future);
    }
    for (int c = 0; c < st->m.ncs; c++)
        td_cancel_source_free(st->cs[c]);
    td_loop_destroy(td_loop_main());        /* the fresh one: retired loops go at shutdown */
    td_runtime_shutdown();
}

int tf_run(const uint8_t *data, size_t size, int lenient)
{
    static tf_state state;                  /* large: not on the stack */
    tf_state *st = &state;
    setup(st, lenient);
    size_t nops = size / TF_OP_BYTES + (size % TF_OP_BYTES != 0);
    if (nops > TF_MAX_OPS)
        nops = TF_MAX_OPS;
    for (size_t k = 0; k < nops; k++) {
        uint8_t arg[TF_OP_BYTES];
        for (int j = 0; j < TF_OP_BYTES; j++) {
            size_t at = k * TF_OP_BYTES + (size_t)j;
            arg[j] = at < size ? data[at] : 0;
        }
        st->op_index = (int)k;
        st->op = arg[0] % TF_OP_COUNT;
        run_op(st, st->op, arg[1], arg[2], arg[3]);
    }
    st->op_index = (int)nops;
    teardown(st);
    return st->mismatches;
}
