/*
 * tandem_subject.c - the runtime as a benchmark subject (players/include/td_subject.h).
 * Async methods are TD_METHOD_DEFINE step functions with pooled runners; frame waits are
 * the runtime's stateless markers on its main loop; gates are manual completion sources.
 * The runtime of this TU is initialised once (init) with the default settings.
 */
#include "td_libc.h"

#include "tandem/tandem.h"
#include "td_bench.h"

/* ---- async methods ---------------------------------------------------------------- */

typedef struct tsub_plain_frame { int64_t value; } tsub_plain_frame;

static void tsub_done_step(td_runner *r, tsub_plain_frame *f)
{
    TD_BEGIN(r);
    (void)f;
    TD_RETURN(r);
    TD_END(r);
}
TD_METHOD_DEFINE(tsub_done, tsub_plain_frame, tsub_done_step);

static void tsub_done_i64_step(td_runner *r, tsub_plain_frame *f)
{
    TD_BEGIN(r);
    TD_RETURN_VALUE(r, f->value);
    TD_END(r);
}
TD_METHOD_DEFINE(tsub_done_i64, tsub_plain_frame, tsub_done_i64_step);

static void tsub_nf_step(td_runner *r, tsub_plain_frame *f)
{
    TD_BEGIN(r);
    (void)f;
    TD_AWAIT_NEXT_FRAME(r, TD_TIMING_UPDATE);
    TD_RETURN(r);
    TD_END(r);
}
TD_METHOD_DEFINE(tsub_nf, tsub_plain_frame, tsub_nf_step);

static void tsub_nf_i64_step(td_runner *r, tsub_plain_frame *f)
{
    TD_BEGIN(r);
    TD_AWAIT_NEXT_FRAME(r, TD_TIMING_UPDATE);
    TD_RETURN_VALUE(r, f->value);
    TD_END(r);
}
TD_METHOD_DEFINE(tsub_nf_i64, tsub_plain_frame, tsub_nf_i64_step);

/* gates: method i awaits gate (i, k) for k < susp */
static td_completion_source *tsub_gates[TD_SUBJECT_MAX_COHORT * TD_SUBJECT_MAX_SUSPENSIONS];

typedef struct tsub_gate_frame {
    uint32_t slot, susp, k;
    int64_t v, acc;
} tsub_gate_frame;

static void tsub_gate_step(td_runner *r, tsub_gate_frame *f)
{
    TD_BEGIN(r);
    for (f->k = 0; f->k < f->susp; f->k++)
        TD_AWAIT(r, td_completion_source_task(tsub_gates[f->slot * TD_SUBJECT_MAX_SUSPENSIONS + f->k]));
    TD_RETURN(r);
    TD_END(r);
}
TD_METHOD_DEFINE(tsub_gate, tsub_gate_frame, tsub_gate_step);

static void tsub_gate_i64_step(td_runner *r, tsub_gate_frame *f)
{
    TD_BEGIN(r);
    for (f->k = 0; f->k < f->susp; f->k++) {
        TD_AWAIT_VALUE(r, td_completion_source_task_i64(tsub_gates[f->slot * TD_SUBJECT_MAX_SUSPENSIONS + f->k]),
                       f->v);
        f->acc += f->v;
    }
    TD_RETURN_VALUE(r, f->acc);
    TD_END(r);
}
TD_METHOD_DEFINE(tsub_gate_i64, tsub_gate_frame, tsub_gate_i64_step);

/* throughput loops */
typedef struct tsub_loop_frame { uint32_t i, awaits; int kind; } tsub_loop_frame;

static void tsub_loop_step(td_runner *r, tsub_loop_frame *f)
{
    TD_BEGIN(r);
    for (f->i = 0; f->i < f->awaits; f->i++) {
        if (f->kind == TD_LOOP_YIELD)
            TD_AWAIT_YIELD(r, TD_TIMING_UPDATE);
        else
            TD_AWAIT_NEXT_FRAME(r, TD_TIMING_UPDATE);
    }
    if (f->kind == TD_LOOP_NEXTFRAME_I64)
        TD_RETURN_VALUE(r, 42);
    TD_RETURN(r);
    TD_END(r);
}
TD_METHOD_DEFINE(tsub_loop, tsub_loop_frame, tsub_loop_step);

TD_METHOD_DECLARE(tsub_cancel);   /* the cancellation groups' method and the race's loser, below */
TD_METHOD_DECLARE(tsub_waiter);
static td_method *const tsub_methods[] = {
    &tsub_done_method, &tsub_done_i64_method, &tsub_nf_method, &tsub_nf_i64_method,
    &tsub_gate_method, &tsub_gate_i64_method, &tsub_loop_method, &tsub_cancel_method, &tsub_waiter_method,
};
#define TSUB_NMETHODS (sizeof tsub_methods / sizeof tsub_methods[0])

/* the cohort's tasks (preallocated) */
static td_task_i64 tsub_tasks[TD_SUBJECT_MAX_COHORT];

/* Start n runners of method `name` into the cohort: rent, `setup` (an expression on r and i:
 * the frame's arguments), then the method's own start (TD_METHOD_DEFINE: the step called
 * directly). */
#define TSUB_START_COHORT(name, n, setup)                                               \
    do {                                                                                \
        td_task_i64 *t = tsub_tasks;                                                    \
        for (uint32_t i = 0; i < (n); i++, t++) {                                       \
            td_runner *r = td_runner_rent(&name##_method);                              \
            setup;                                                                      \
            TD_METHOD_START_I64(name, r, *t);                                           \
        }                                                                               \
    } while (0)

/* ---- lifetime and settings ----------------------------------------------------------- */

static int tsub_init(void)
{
    for (size_t i = 0; i < TSUB_NMETHODS; i++) td_method_register(tsub_methods[i]);
    if (td_runtime_init(NULL) != TD_OK) return -1;
    for (size_t i = 0; i < TD_SUBJECT_MAX_COHORT * TD_SUBJECT_MAX_SUSPENSIONS; i++) {
        tsub_gates[i] = td_completion_source_new();
        if (!tsub_gates[i]) return -1;
    }
    return 0;
}

static void tsub_set_flow(int on) { td_flow_set(on); }

static void tsub_retain(uint32_t cohort)
{
    if (cohort == 0) {
        td_set_source_pool_capacity(TD_DEFAULT_SOURCE_POOL_CAPACITY);
        td_set_runner_pool_capacity(TD_DEFAULT_RUNNER_POOL_CAPACITY);
        return;
    }
    td_set_source_pool_capacity(cohort > TD_DEFAULT_SOURCE_POOL_CAPACITY ? cohort : TD_DEFAULT_SOURCE_POOL_CAPACITY);
    td_set_runner_pool_capacity(cohort > TD_DEFAULT_RUNNER_POOL_CAPACITY ? cohort : TD_DEFAULT_RUNNER_POOL_CAPACITY);
}

static const char *tsub_capacities(void)
{
    static char buf[96];
    snprintf(buf, sizeof buf, "SourcePoolCapacity=%u RunnerPoolCapacity=%u", TD_DEFAULT_SOURCE_POOL_CAPACITY,
             TD_DEFAULT_RUNNER_POOL_CAPACITY);
    return buf;
}

/* ---- synchronous rows ------------------------------------------------------------------ */

static int64_t tsub_completed_get(uint32_t n)
{
    int64_t sum = 0;
    for (uint32_t i = 0; i < n; i++) {
        td_task t = td_completed();
        td_outcome o;
        TB_OPAQUE(t.source);
        if (td_task_get(t, &o) == TD_OK) sum += o.status;
    }
    return sum;
}

static int64_t tsub_from_result_get(uint32_t n)
{
    int64_t sum = 0;
    for (uint32_t i = 0; i < n; i++) {
        td_task_i64 t = td_from_result(i);
        td_outcome o;
        TB_OPAQUE(t.task.source);
        if (td_task_i64_get(t, &o) == TD_OK && o.status == TD_SUCCEEDED) sum += o.value;
    }
    return sum;
}

static int64_t tsub_method_completed_get(uint32_t n)
{
    int64_t ok = 0;
    for (uint32_t i = 0; i < n; i++) {
        td_runner *r = td_runner_rent(&tsub_done_method);
        td_task t;
        TD_METHOD_START(tsub_done, r, t);
        td_outcome o;
        if (td_task_get(t, &o) == TD_OK && o.status == TD_SUCCEEDED) ok++;
    }
    return ok;
}

static int64_t tsub_method_completed_i64_get(uint32_t n)
{
    int64_t sum = 0;
    for (uint32_t i = 0; i < n; i++) {
        td_runner *r = td_runner_rent(&tsub_done_i64_method);
        TD_FRAME(r, tsub_plain_frame)->value = i;
        td_task_i64 t;
        TD_METHOD_START_I64(tsub_done_i64, r, t);
        td_outcome o;
        if (td_task_i64_get(t, &o) == TD_OK && o.status == TD_SUCCEEDED) sum += o.value;
    }
    return sum;
}

/* ---- frame waits ------------------------------------------------------------------------ */

static int tsub_wait_schedule(int wl, uint32_t n)
{
    if (wl == TD_WL_NEXTFRAME) {
        for (uint32_t i = 0; i < n; i++) tsub_tasks[i].task = td_next_frame(TD_TIMING_UPDATE);
        return 0;
    }
    if (wl == TD_WL_METHOD_NEXTFRAME)
        TSUB_START_COHORT(tsub_nf, n, TD_FRAME(r, tsub_plain_frame)->value = (int64_t)i + 1);
    else
        TSUB_START_COHORT(tsub_nf_i64, n, TD_FRAME(r, tsub_plain_frame)->value = (int64_t)i + 1);
    return 0;
}

static void tsub_frame(void) { td_loop_run_frame(td_loop_main()); }

static uint32_t tsub_pending(uint32_t n)
{
    uint32_t p = 0;
    for (uint32_t i = 0; i < n; i++) {
        td_status st;
        if (td_task_status(tsub_tasks[i].task, &st) != TD_OK || st != TD_SUCCEEDED) p++;
    }
    return p;
}

static uint32_t tsub_wait_pending(int wl, uint32_t n) { (void)wl; return tsub_pending(n); }

/* The frame waits', gates' and loops' consumption, which the get-result rows time: the result
 * queries (td_task_result, td_task_i64_result), whose TD_OK is a success, so a fault or a
 * cancellation fails the row even where a recycled runner's value slot still holds the
 * expected value. The outcome queries (td_task_get, as the synchronous rows above use) made
 * clang 14 merge the inline fast path's outcome with the out-of-line one's into selects here
 * (4-5 instructions per get on AOT, with the status tested per get or summed after). */
static int64_t tsub_wait_get(int wl, uint32_t n)
{
    int64_t sum = 0;
    if (wl == TD_WL_METHOD_NEXTFRAME_I64) {
        for (uint32_t i = 0; i < n; i++) {
            int64_t v;
            if (td_task_i64_result(tsub_tasks[i], &v, NULL) != TD_OK) return -1;
            sum += v;
        }
        return sum;
    }
    /* to the first failure, one pointer: a for loop with a return in it made clang keep a
     * flag of the early exit (five instructions more per get), an index one add more */
    const td_task_i64 *t = tsub_tasks, *end = tsub_tasks + n;
    while (t < end && td_task_result(t->task, NULL) == TD_OK) t++;
    return t == end ? (int64_t)n : -1;
}

/* ---- gates ------------------------------------------------------------------------------- */

static int tsub_gates_reset(uint32_t n, uint32_t susp)
{
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t k = 0; k < susp; k++) td_completion_source_reset(tsub_gates[i * TD_SUBJECT_MAX_SUSPENSIONS + k]);
    return 0;
}

static int tsub_gates_start(int typed, uint32_t n, uint32_t susp)
{
#define TSUB_GATE_FRAME_SET(r, i) (TD_FRAME(r, tsub_gate_frame)->slot = (i), TD_FRAME(r, tsub_gate_frame)->susp = susp)
    if (typed)
        TSUB_START_COHORT(tsub_gate_i64, n, TSUB_GATE_FRAME_SET(r, i));
    else
        TSUB_START_COHORT(tsub_gate, n, TSUB_GATE_FRAME_SET(r, i));
#undef TSUB_GATE_FRAME_SET
    return 0;
}

/* To the first failure (the row fails then), the gates through a pointer, a while loop as in
 * tsub_wait_get: a flag of failure carried through the loop cost clang three register copies
 * per completion, a for loop with a return in it a flag of the early exit. */
static int tsub_gates_complete(uint32_t n, uint32_t k)
{
    td_completion_source **g = tsub_gates + k, **end = g + (size_t)n * TD_SUBJECT_MAX_SUSPENSIONS;
    int64_t v = k;
    while (g < end && td_completion_source_set_result(*g, v) == TD_OK) {
        g += TD_SUBJECT_MAX_SUSPENSIONS;
        v++;
    }
    return g < end ? -1 : 0;
}

static uint32_t tsub_gates_pending(uint32_t n) { return tsub_pending(n); }

static int64_t tsub_gates_get(int typed, uint32_t n, uint32_t susp)
{
    (void)susp;
    return tsub_wait_get(typed ? TD_WL_METHOD_NEXTFRAME_I64 : TD_WL_METHOD_NEXTFRAME, n);
}

/* ---- throughput loops ---------------------------------------------------------------------- */

static int tsub_loops_start(int kind, uint32_t n, uint32_t awaits)
{
    TSUB_START_COHORT(tsub_loop, n,
                      (TD_FRAME(r, tsub_loop_frame)->awaits = awaits, TD_FRAME(r, tsub_loop_frame)->kind = kind));
    return 0;
}

static uint32_t tsub_loops_pending(uint32_t n) { return tsub_pending(n); }

static int64_t tsub_loops_get(int kind, uint32_t n)
{
    return tsub_wait_get(kind == TD_LOOP_NEXTFRAME_I64 ? TD_WL_METHOD_NEXTFRAME_I64 : TD_WL_METHOD_NEXTFRAME, n);
}

/* ---- whenany ---------------------------------------------------------------------------------- */

static int64_t tsub_whenany(int typed, uint32_t inputs, uint32_t reps)
{
    td_auto_source *src[TD_SUBJECT_MAX_WHENANY];
    uint32_t tok[TD_SUBJECT_MAX_WHENANY];
    td_task in[TD_SUBJECT_MAX_WHENANY];
    td_task_i64 in64[TD_SUBJECT_MAX_WHENANY];
    int64_t sum = 0;
    for (uint32_t rep = 0; rep < reps; rep++) {
        for (uint32_t j = 0; j < inputs; j++) {
            src[j] = td_auto_source_rent();
            in[j] = td_auto_source_task(src[j]);
            in64[j] = td_task_i64_of(in[j]);
            tok[j] = in[j].token;
        }
        int winner = -1;
        td_task_i64 w = typed ? td_when_any_i64(in64, (int)inputs, &winner) : td_when_any(in, (int)inputs);
        for (uint32_t j = inputs; j-- > 0;) td_auto_source_set_result(src[j], tok[j], 100 + (int64_t)j);
        td_outcome o;
        if (td_task_i64_get(w, &o) != TD_OK || o.status != TD_SUCCEEDED) return -1;
        if (typed && winner != (int)inputs - 1) return -2;
        sum += o.value;
    }
    return sum;
}

/* ---- cancellation groups and per-frame races ---------------------------------------------- */

/* The group's token and what its methods' cleanups saw (td_cancel_tally). */
static td_cancel_source *tsub_group_cs;
static td_task_i64 tsub_group;
static td_task tsub_group_inputs[TD_SUBJECT_MAX_COHORT];    /* the untyped when_all's inputs */
static int64_t tsub_group_results[TD_SUBJECT_MAX_COHORT];   /* the typed when_all's results */
static uint32_t tsub_group_n, tsub_cleanups, tsub_canceled_seen;
static int tsub_group_shape;

/* The cleanup step (a `finally`): runs once per method, whatever the outcome it is given. */
static void tsub_cleanup(const td_outcome *o, const td_cancel_source *group)
{
    tsub_cleanups++;
    tsub_canceled_seen += o->status == TD_CANCELED && o->error.cancel == group;
}

/* A method ends with its awaited outcome: cancelled or faulted alike, else its value. */
#define TSUB_FINISH_AS(r, o, value)                                                    \
    do {                                                                                \
        if ((o).status == TD_CANCELED) TD_CANCEL(r, (o).error.cancel);                  \
        if ((o).status != TD_SUCCEEDED) TD_FAIL(r, (o).error.code, (o).error.message);  \
        TD_RETURN_VALUE(r, value);                                                      \
    } while (0)

/* The leaf's wait: the next frame, observing `cs` (a pooled wait; cancellation is seen at
 * the frame, as an uncancelled wait completes then). */
static td_task_i64 tsub_group_wait(td_cancel_source *cs)
{
    td_wait_options o = td_wait_defaults();
    o.cancel = td_cancel_source_token(cs);
    return td_task_i64_of(td_next_frame_ex(&o));
}

/* depth 0: suspended on the group's wait, returns `value`; depth d: awaits a method of depth
 * d - 1 and returns its value + 1. Untyped groups ignore the values. */
typedef struct tsub_cancel_frame { uint32_t depth; int64_t value; } tsub_cancel_frame;

static td_task_i64 tsub_cancel_call(uint32_t depth, int64_t value);

static void tsub_cancel_step(td_runner *r, tsub_cancel_frame *f)
{
    TD_BEGIN(r);
    if (f->depth == 0) {
        TD_AWAIT_OUTCOME(r, tsub_group_wait(tsub_group_cs));
    } else {
        TD_AWAIT_OUTCOME(r, tsub_cancel_call(f->depth - 1, 1));
        f->value = r->last.value + 1;
    }
    tsub_cleanup(&r->last, tsub_group_cs);
    TSUB_FINISH_AS(r, r->last, f->value);
    TD_END(r);
}
TD_METHOD_DEFINE(tsub_cancel, tsub_cancel_frame, tsub_cancel_step);

static td_task_i64 tsub_cancel_call(uint32_t depth, int64_t value)
{
    td_runner *r = td_runner_rent(&tsub_cancel_method);
    TD_FRAME(r, tsub_cancel_frame)->depth = depth;
    TD_FRAME(r, tsub_cancel_frame)->value = value;
    td_task_i64 t;
    TD_METHOD_START_I64(tsub_cancel, r, t);
    return t;
}

static int tsub_cancel_start(int typed, int shape, uint32_t n)
{
    if (n == 0 || n > TD_SUBJECT_MAX_COHORT || (shape != TD_CANCEL_SIDE_BY_SIDE && shape != TD_CANCEL_NESTED) ||
        tsub_group_cs)
        return -1;
    tsub_group_cs = td_cancel_source_new();
    if (!tsub_group_cs) return -1;
    tsub_group_n = n;
    tsub_group_shape = shape;
    tsub_cleanups = tsub_canceled_seen = 0;
    if (shape == TD_CANCEL_NESTED) {
        tsub_group = tsub_cancel_call(n - 1, 1);
        return 0;
    }
    TSUB_START_COHORT(tsub_cancel, n,
                      (TD_FRAME(r, tsub_cancel_frame)->depth = 0, TD_FRAME(r, tsub_cancel_frame)->value = (int64_t)i + 1));
    if (typed) {
        tsub_group = td_task_i64_of(td_when_all_i64(tsub_tasks, (int)n, tsub_group_results));
        return 0;
    }
    /* td_when_all takes untyped tasks: the cohort's are typed views of them */
    for (uint32_t i = 0; i < n; i++) tsub_group_inputs[i] = tsub_tasks[i].task;
    tsub_group = td_task_i64_of(td_when_all(tsub_group_inputs, (int)n));
    return 0;
}

static int tsub_cancel_request(void) { return tsub_group_cs && td_cancel_source_cancel(tsub_group_cs) == 1 ? 0 : -1; }

static uint32_t tsub_cancel_pending(void) { return tsub_group_n - tsub_cleanups; }

static int32_t tsub_tally_status(td_status st)
{
    return st == TD_SUCCEEDED ? TD_TALLY_SUCCEEDED : st == TD_CANCELED ? TD_TALLY_CANCELED
         : st == TD_PENDING ? TD_TALLY_PENDING : TD_TALLY_OTHER;
}

static int tsub_cancel_get(int typed, td_cancel_tally *out)
{
    td_outcome o;
    if (!tsub_group_cs || td_task_i64_get(tsub_group, &o) != TD_OK) return -1;
    out->status = tsub_tally_status(o.status);
    out->token_ok = o.status == TD_CANCELED && o.error.cancel == tsub_group_cs;
    out->cleanups = tsub_cleanups;
    out->canceled = tsub_canceled_seen;
    out->value = 0;
    if (typed && o.status == TD_SUCCEEDED) {
        /* nested: the outermost method's value; side by side: the when_all's results */
        out->value = tsub_group_shape == TD_CANCEL_NESTED ? o.value : 0;
        if (tsub_group_shape == TD_CANCEL_SIDE_BY_SIDE)
            for (uint32_t i = 0; i < tsub_group_n; i++) out->value += tsub_group_results[i];
    }
    /* every wait observing the token has completed (in the frame): the source may go */
    td_cancel_source_free(tsub_group_cs);
    tsub_group_cs = NULL;
    return 0;
}

/* The race's signal: never raised, so its waits always lose to the next frame. */
static int tsub_signal_raised;
static int tsub_signal_is_raised(void *arg) { return *(const int *)arg; }
static td_cancel_source *tsub_race_cs;
static td_task_i64 tsub_race;

/* The leaf loser: a wait on the signal, cancelled the moment the race cancels its token. */
static td_task tsub_signal_wait(td_cancel_source *cs)
{
    td_wait_options o = td_wait_defaults();
    o.cancel = td_cancel_source_token(cs);
    o.cancel_immediately = 1;
    return td_wait_until(tsub_signal_is_raised, &tsub_signal_raised, &o);
}

/* The method loser: awaits the signal, with a cleanup step. */
typedef struct tsub_waiter_frame { td_cancel_source *cs; } tsub_waiter_frame;

static void tsub_waiter_step(td_runner *r, tsub_waiter_frame *f)
{
    TD_BEGIN(r);
    TD_AWAIT_OUTCOME(r, td_task_i64_of(tsub_signal_wait(f->cs)));
    tsub_cleanup(&r->last, f->cs);
    TSUB_FINISH_AS(r, r->last, 0);
    TD_END(r);
}
TD_METHOD_DEFINE(tsub_waiter, tsub_waiter_frame, tsub_waiter_step);

static int tsub_race_start(int loser)
{
    if ((loser != TD_RACE_LEAF && loser != TD_RACE_METHOD) || tsub_race_cs || !(tsub_race_cs = td_cancel_source_new()))
        return -1;
    tsub_cleanups = tsub_canceled_seen = 0;
    td_task in[2];
    in[0] = td_next_frame(TD_TIMING_UPDATE);
    if (loser == TD_RACE_METHOD) {
        td_runner *r = td_runner_rent(&tsub_waiter_method);
        TD_FRAME(r, tsub_waiter_frame)->cs = tsub_race_cs;
        td_task_i64 t;
        TD_METHOD_START_I64(tsub_waiter, r, t);
        in[1] = t.task;
    } else {
        in[1] = tsub_signal_wait(tsub_race_cs);
    }
    tsub_race = td_race(in, 2, tsub_race_cs);
    return 0;
}

static int tsub_race_get(int loser, td_cancel_tally *out)
{
    td_outcome o;
    if (!tsub_race_cs || td_task_i64_get(tsub_race, &o) != TD_OK) return -1;
    out->status = tsub_tally_status(o.status);
    out->value = o.value;
    out->cleanups = tsub_cleanups;
    /* the method loser's cleanup saw its outcome; the leaf loser was consumed by the race,
     * which cancelled the token it observes */
    out->canceled = loser == TD_RACE_METHOD ? tsub_canceled_seen
                                            : (uint32_t)td_cancel_is_requested(td_cancel_source_token(tsub_race_cs));
    out->token_ok = 0;
    /* the loser completed on the cancel call (cancel_immediately): the source may go */
    td_cancel_source_free(tsub_race_cs);
    tsub_race_cs = NULL;
    return 0;
}

const td_subject_ops td_subject = {
    "tandem", "stackless",
    tsub_init, tsub_set_flow, tsub_retain, tsub_capacities,
    tsub_completed_get, tsub_from_result_get, tsub_method_completed_get, tsub_method_completed_i64_get,
    tsub_wait_schedule, tsub_frame, tsub_wait_pending, tsub_wait_get,
    tsub_gates_reset, tsub_gates_start, tsub_gates_complete, tsub_gates_pending, tsub_gates_get,
    tsub_loops_start, tsub_loops_pending, tsub_loops_get,
    tsub_whenany,
    tsub_cancel_start, tsub_cancel_request, tsub_cancel_pending, tsub_cancel_get,
    tsub_race_start, tsub_race_get,
    NULL,
};
