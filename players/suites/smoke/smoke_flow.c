/*
 * smoke_flow.c - ambient context flow: 19 (on, off, suppressed, across a worker),
 * 20 (isolation and restoration across awaited calls).
 */
#include "smoke.h"

static int smoke_ctx_a, smoke_ctx_b, smoke_ctx_w, smoke_ctx_x, smoke_ctx_y, smoke_ctx_m;
#define SMOKE_CTX(name) ((void *)&smoke_ctx_##name)

/* Await a gate, then record the context seen at resumption. */
typedef struct { td_task gate; void *seen; } smoke_seen_frame;
static void smoke_seen_step(td_runner *r, smoke_seen_frame *f)
{
    TD_BEGIN(r);
    TD_AWAIT(r, f->gate);
    f->seen = td_context_current();
    TD_RETURN_VALUE(r, (intptr_t)f->seen);
    TD_END(r);
}
TD_METHOD_DEFINE(smoke_seen, smoke_seen_frame, smoke_seen_step);

static td_task_i64 smoke_seen_start(td_completion_source *gate)
{
    td_runner *r = td_runner_rent(&smoke_seen_method);
    TD_FRAME(r, smoke_seen_frame)->gate = td_completion_source_task(gate);
    return td_runner_start_i64(r);
}

typedef struct smoke_worker_gate {
    td_completion_source *gate;
    void *after;           /* the worker's context after the completion returned */
} smoke_worker_gate;

static void *smoke_complete_with_context(void *arg)
{
    smoke_worker_gate *w = (smoke_worker_gate *)arg;
    td_context_set(SMOKE_CTX(w));
    td_completion_source_set_result(w->gate, 0);     /* the method resumes here */
    w->after = td_context_current();
    return NULL;
}

/* Start a method with context `at_start`, switch the main context to `meanwhile`,
 * complete the gate on the main thread or a worker; return the context it saw. */
static void *smoke_flow_round(int on_worker, int suppress, void **worker_after)
{
    td_completion_source *gate = td_completion_source_new();
    td_context_set(SMOKE_CTX(a));
    int prev = suppress ? td_flow_suppress() : 0;
    td_task_i64 t = smoke_seen_start(gate);
    if (suppress)
        td_flow_restore(prev);
    td_context_set(SMOKE_CTX(b));
    if (on_worker) {
        smoke_worker_gate w = { gate, NULL };
        pthread_t th;
        if (smoke_thread_start(&th, smoke_complete_with_context, &w))
            smoke_thread_join(th);
        *worker_after = w.after;
    } else {
        td_completion_source_set_result(gate, 0);
    }
    td_outcome o;
    void *seen = td_task_i64_get(t, &o) == TD_OK ? (void *)(intptr_t)o.value : NULL;
    td_completion_source_free(gate);
    return seen;
}

void smoke_case_19(SMOKE_ARGS)
{
    void *after = NULL;
    td_flow_set(1);
    void *on_main = smoke_flow_round(0, 0, &after);
    void *main_now = td_context_current();
    void *on_worker = smoke_flow_round(1, 0, &after);
    void *worker_after = after;
    void *suppressed = smoke_flow_round(0, 1, &after);
    void *suppressed_worker = smoke_flow_round(1, 1, &after);
    td_flow_set(0);
    void *off = smoke_flow_round(0, 0, &after);
    td_context_set(NULL);
    SMOKE_TRUE(on_main == SMOKE_CTX(a));          /* flow on: the captured context */
    SMOKE_TRUE(main_now == SMOKE_CTX(b));         /* the completer keeps its own */
    SMOKE_TRUE(on_worker == SMOKE_CTX(a));        /* resumed on a worker: still the captured one */
    SMOKE_TRUE(worker_after == SMOKE_CTX(w));     /* no leak into the worker */
    SMOKE_TRUE(suppressed == SMOKE_CTX(b));       /* suppression holds: nothing captured */
    SMOKE_TRUE(suppressed_worker == SMOKE_CTX(w));
    SMOKE_TRUE(off == SMOKE_CTX(b));              /* flow off: the resuming thread's context */
}

/* inner: changes the context, suspends on a gate. outer: sets X, awaits inner, records. */
static td_completion_source *smoke_inner_gate;

typedef struct { int unused; } smoke_inner_frame;
static void smoke_inner_step(td_runner *r, smoke_inner_frame *f)
{
    (void)f;
    TD_BEGIN(r);
    td_context_set(SMOKE_CTX(y));
    TD_AWAIT(r, td_completion_source_task(smoke_inner_gate));
    TD_END(r);
}
TD_METHOD_DEFINE(smoke_inner, smoke_inner_frame, smoke_inner_step);

typedef struct { void *after; } smoke_outer_frame;
static void smoke_outer_step(td_runner *r, smoke_outer_frame *f)
{
    TD_BEGIN(r);
    td_context_set(SMOKE_CTX(x));
    TD_AWAIT(r, td_runner_start(td_runner_rent(&smoke_inner_method)));
    f->after = td_context_current();
    TD_RETURN_VALUE(r, (intptr_t)f->after);
    TD_END(r);
}
TD_METHOD_DEFINE(smoke_outer, smoke_outer_frame, smoke_outer_step);

static void *smoke_isolation_round(void **caller_after)
{
    smoke_inner_gate = td_completion_source_new();
    td_context_set(SMOKE_CTX(m));
    td_task_i64 t = td_runner_start_i64(td_runner_rent(&smoke_outer_method));
    *caller_after = td_context_current();
    td_completion_source_set_result(smoke_inner_gate, 0);
    td_outcome o;
    void *seen = td_task_i64_get(t, &o) == TD_OK ? (void *)(intptr_t)o.value : NULL;
    td_completion_source_free(smoke_inner_gate);
    td_context_set(NULL);
    return seen;
}

void smoke_case_20(SMOKE_ARGS)
{
    void *caller_on, *caller_off;
    td_flow_set(1);
    void *on = smoke_isolation_round(&caller_on);
    td_flow_set(0);
    void *off = smoke_isolation_round(&caller_off);
    SMOKE_TRUE(caller_on == SMOKE_CTX(m));     /* the caller's context survives the call */
    SMOKE_TRUE(on == SMOKE_CTX(x));            /* restored after the awaited call changed it */
    SMOKE_TRUE(caller_off == SMOKE_CTX(y));    /* flow off: changes persist ... */
    SMOKE_TRUE(off == SMOKE_CTX(y));           /* ... into the awaiting method too */
}
