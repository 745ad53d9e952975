/*
 * smoke_tasks.c - smoke cases on task values, runners and their pools:
 * 1 (synchronous), 2 (gate and stale tokens), 3 (foreign awaitable), 6-7 (immediate pool
 * return), 8-9 (consume and re-rent during step), 14 (yield), 15 (init-free values).
 */
#include "smoke.h"

/* A typed method: awaits `in` (typed) and returns its value + add. */
typedef struct { td_task_i64 in; int64_t add, got; } smoke_plus_frame;
static void smoke_plus_step(td_runner *r, smoke_plus_frame *f)
{
    TD_BEGIN(r);
    TD_AWAIT_VALUE(r, f->in, f->got);
    TD_RETURN_VALUE(r, f->got + f->add);
    TD_END(r);
}
TD_METHOD_DEFINE(smoke_plus, smoke_plus_frame, smoke_plus_step);

/* An untyped method: awaits `in`, counts its passes. */
typedef struct { td_task in; int *passes; } smoke_pass_frame;
static void smoke_pass_step(td_runner *r, smoke_pass_frame *f)
{
    TD_BEGIN(r);
    TD_AWAIT(r, f->in);
    if (f->passes)
        (*f->passes)++;
    TD_END(r);
}
TD_METHOD_DEFINE(smoke_pass, smoke_pass_frame, smoke_pass_step);

static td_task_i64 smoke_plus(td_task_i64 in, int64_t add)
{
    td_runner *r = td_runner_rent(&smoke_plus_method);
    TD_FRAME(r, smoke_plus_frame)->in = in;
    TD_FRAME(r, smoke_plus_frame)->add = add;
    td_task_i64 t;
    TD_METHOD_START_I64(smoke_plus, r, t);   /* the method's own start (TD_METHOD_DEFINE) */
    return t;
}

static td_task smoke_pass(td_task in, int *passes)
{
    td_runner *r = td_runner_rent(&smoke_pass_method);
    TD_FRAME(r, smoke_pass_frame)->in = in;
    TD_FRAME(r, smoke_pass_frame)->passes = passes;
    td_task t;
    TD_METHOD_START(smoke_pass, r, t);
    return t;
}

void smoke_case_1(SMOKE_ARGS)
{
    td_loop *loop = smoke_loop_begin(1, NULL);
    uint32_t frame = td_loop_frame(loop);
    td_task_i64 typed = smoke_plus(td_from_result(16), 1);
    int passes = 0;
    td_task untyped = smoke_pass(td_completed(), &passes);
    SMOKE_EQ(TD_SUCCEEDED, smoke_status(typed.task));
    SMOKE_EQ(TD_SUCCEEDED, smoke_status(untyped));
    SMOKE_TRUE(typed.task.source == NULL && untyped.source == NULL);   /* completed inline */
    td_outcome o;
    SMOKE_EQ(TD_OK, td_task_i64_get(typed, &o));
    SMOKE_EQ(17, o.value);
    SMOKE_EQ(1, passes);
    SMOKE_EQ(frame, td_loop_frame(loop));                              /* no frame passed */
    smoke_loop_end(loop);
}

void smoke_case_2(SMOKE_ARGS)
{
    td_completion_source *gate = td_completion_source_new();
    td_task_i64 t = smoke_plus(td_completion_source_task_i64(gate), 3);
    SMOKE_EQ(TD_PENDING, smoke_status(t.task));
    td_completion_source_set_result(gate, 20);
    td_outcome o;
    SMOKE_EQ(TD_OK, td_task_i64_get(t, &o));
    SMOKE_EQ(23, o.value);
    td_status st;
    SMOKE_EQ(TD_E_STALE, td_task_status(t.task, &st));
    SMOKE_EQ(TD_E_STALE, td_task_i64_get(t, &o));
    SMOKE_EQ(TD_E_STALE, td_task_on_completed(t.task, NULL, NULL));
    td_completion_source_free(gate);
}

/* A foreign awaitable: it offers only "call me when done" (no status query). */
typedef struct smoke_foreign {
    td_source source;
    td_continuation_fn fn;
    void *arg;
    int done;
} smoke_foreign;

static int smoke_foreign_status(td_source *s, uint32_t token, td_status *out)
{
    (void)s; (void)token; (void)out;
    return TD_E_NOT_SUPPORTED;
}

static int smoke_foreign_on_completed(td_source *s, uint32_t token, td_continuation_fn fn, void *arg)
{
    smoke_foreign *f = (smoke_foreign *)s;
    (void)token;
    f->fn = fn;
    f->arg = arg;
    return TD_OK;
}

static int smoke_foreign_get(td_source *s, uint32_t token, td_outcome *out)
{
    smoke_foreign *f = (smoke_foreign *)s;
    (void)token;
    if (!f->done)
        return TD_E_PENDING;
    memset(out, 0, sizeof(*out));
    out->status = TD_SUCCEEDED;
    out->value = 29;
    return TD_OK;
}

static void smoke_foreign_release(td_source *s) { (void)s; }

static const td_source_ops smoke_foreign_ops = {
    smoke_foreign_release, smoke_foreign_status, smoke_foreign_on_completed, smoke_foreign_get, "foreign"
};

void smoke_case_3(SMOKE_ARGS)
{
    smoke_foreign f;
    memset(&f, 0, sizeof(f));
    td_source_init(&f.source, &smoke_foreign_ops);
    td_task_i64 t = smoke_plus(td_task_i64_of(td_task_of(&f.source, 0)), 0);
    SMOKE_TRUE(f.fn != NULL);                 /* suspended: it registered its callback */
    SMOKE_EQ(TD_PENDING, smoke_status(t.task));
    f.done = 1;
    f.fn(f.arg);
    td_outcome o;
    SMOKE_EQ(TD_OK, td_task_i64_get(t, &o));
    SMOKE_EQ(TD_SUCCEEDED, o.status);
    SMOKE_EQ(29, o.value);
}

static void smoke_pool_return(const td_player_host *host, void *ctx, int typed)
{
    td_completion_source *gate = td_completion_source_new();
    td_runner *first;
    td_outcome o;
    td_method *m = typed ? &smoke_plus_method : &smoke_pass_method;
    uint32_t pooled = td_pool_count(&m->pool);
    if (typed) {
        td_task_i64 t = smoke_plus(td_completion_source_task_i64(gate), 1);
        first = (td_runner *)t.task.source;
        td_completion_source_set_result(gate, 1);
        SMOKE_EQ(TD_OK, td_task_i64_get(t, &o));
        SMOKE_EQ(2, o.value);
    } else {
        td_task t = smoke_pass(td_completion_source_task(gate), NULL);
        first = (td_runner *)t.source;
        td_completion_source_set_result(gate, 1);
        SMOKE_EQ(TD_OK, td_task_get(t, &o));
    }
    SMOKE_TRUE(first != NULL);
    /* consumed: the runner is back in its pool at once, and the next start takes it */
    SMOKE_EQ(pooled + (pooled > 0 ? 0 : 1), td_pool_count(&m->pool));
    td_completion_source_reset(gate);
    td_task again = typed ? smoke_plus(td_completion_source_task_i64(gate), 1).task
                          : smoke_pass(td_completion_source_task(gate), NULL);
    SMOKE_TRUE(again.source == &first->source);
    td_completion_source_set_result(gate, 5);
    SMOKE_EQ(TD_OK, td_task_get(again, &o));
    td_completion_source_free(gate);
}

void smoke_case_6(SMOKE_ARGS) { smoke_pool_return(host, ctx, 1); }
void smoke_case_7(SMOKE_ARGS) { smoke_pool_return(host, ctx, 0); }

/* Cases 8-9: a continuation consumes the task and re-rents the same runner while the
 * first rental's step function is still unwinding from its completion. */
typedef struct smoke_rerent {
    int typed;
    td_task_i64 first;
    td_task_i64 second;
    td_completion_source *gate2;
    td_outcome first_outcome;
    int rc;
} smoke_rerent;

static void smoke_rerent_continuation(void *arg)
{
    smoke_rerent *s = (smoke_rerent *)arg;
    s->rc = td_task_i64_get(s->first, &s->first_outcome);
    s->second = s->typed ? smoke_plus(td_completion_source_task_i64(s->gate2), 0)
                         : td_task_i64_of(smoke_pass(td_completion_source_task(s->gate2), NULL));
}

static void smoke_rerent_case(const td_player_host *host, void *ctx, int typed)
{
    td_completion_source *gate1 = td_completion_source_new();
    smoke_rerent s;
    memset(&s, 0, sizeof(s));
    s.typed = typed;
    s.gate2 = td_completion_source_new();
    s.first = typed ? smoke_plus(td_completion_source_task_i64(gate1), 50)
                    : td_task_i64_of(smoke_pass(td_completion_source_task(gate1), NULL));
    td_source *runner = s.first.task.source;
    SMOKE_EQ(TD_OK, td_task_on_completed(s.first.task, smoke_rerent_continuation, &s));
    td_completion_source_set_result(gate1, 1);     /* completes; the continuation re-rents */
    SMOKE_EQ(TD_OK, s.rc);
    SMOKE_EQ(TD_SUCCEEDED, s.first_outcome.status);
    if (typed)
        SMOKE_EQ(51, s.first_outcome.value);
    SMOKE_TRUE(s.second.task.source == runner);     /* the same runner, rented again */
    SMOKE_EQ(TD_PENDING, smoke_status(s.second.task));
    td_completion_source_set_result(s.gate2, 59);
    td_outcome o;
    SMOKE_EQ(TD_OK, td_task_i64_get(s.second, &o));
    SMOKE_EQ(TD_SUCCEEDED, o.status);
    if (typed)
        SMOKE_EQ(59, o.value);
    td_completion_source_free(gate1);
    td_completion_source_free(s.gate2);
}

void smoke_case_8(SMOKE_ARGS) { smoke_rerent_case(host, ctx, 1); }
void smoke_case_9(SMOKE_ARGS) { smoke_rerent_case(host, ctx, 0); }

void smoke_case_14(SMOKE_ARGS)
{
    td_loop *loop = smoke_loop_begin(1, NULL);
    int passes = 0;
    td_task t = smoke_pass(td_yield(TD_TIMING_UPDATE), &passes);
    SMOKE_EQ(0, passes);
    td_loop_run_frame(loop);
    SMOKE_EQ(1, passes);                                  /* resumed within one frame */
    td_outcome o;
    SMOKE_EQ(TD_OK, td_task_get(t, &o));
    td_task y = td_yield(TD_TIMING_PRE_UPDATE);           /* a yield as a task value */
    td_loop_run_frame(loop);
    SMOKE_EQ(TD_OK, td_task_get(y, &o));
    SMOKE_EQ(TD_SUCCEEDED, o.status);
    SMOKE_EQ(TD_OK, td_task_get(y, &o));                  /* read twice */
    SMOKE_EQ(TD_SUCCEEDED, o.status);
    smoke_loop_end(loop);
}

static const td_task smoke_static_completed = TD_COMPLETED_INIT;
static const td_task_i64 smoke_static_result = TD_FROM_RESULT_INIT(15);

void smoke_case_15(SMOKE_ARGS)
{
    /* Shut the runtime down first: these values need no initialisation at all. */
    td_runtime_shutdown();
    td_outcome o;
    int rc1 = td_task_get(smoke_static_completed, &o);
    int st1 = o.status;
    int rc2 = td_task_i64_get(smoke_static_result, &o);
    int64_t v = o.value;
    int rc3 = td_task_i64_get(td_from_result(7), &o);
    int64_t v3 = o.value;
    td_settings s;
    smoke_settings(&s);
    td_runtime_init(&s);                      /* the suite shuts it down after the case */
    SMOKE_EQ(TD_OK, rc1);
    SMOKE_EQ(TD_SUCCEEDED, st1);
    SMOKE_EQ(TD_OK, rc2);
    SMOKE_EQ(15, v);
    SMOKE_EQ(TD_OK, rc3);
    SMOKE_EQ(7, v3);
}
