/*
 * smoke_threads.c - the thread pool: 17 (immediate cancellation on the cancelling
 * thread), 21 (switches), 22 (run-on-pool outcomes and completion threads), 23 (context
 * flow across run-on-pool), 25 (untyped WhenAny with a worker winner).
 */
#include "smoke.h"

typedef struct smoke_where { uintptr_t thread; volatile uint32_t hits; } smoke_where;

static void smoke_note_where(void *arg)
{
    smoke_where *w = (smoke_where *)arg;
    w->thread = td_thread_self();
    td_atomic_fetch_add_u32(&w->hits, 1);
}

typedef struct smoke_canceller { td_cancel_source *cs; uintptr_t thread; } smoke_canceller;

static void *smoke_cancel_on_worker(void *arg)
{
    smoke_canceller *c = (smoke_canceller *)arg;
    c->thread = td_thread_self();
    td_cancel_source_cancel(c->cs);
    return NULL;
}

void smoke_case_17(SMOKE_ARGS)
{
    td_loop *loop = smoke_loop_begin(1, NULL);
    for (int round = 0; round < 32; round++) {
        td_cancel_source *cs = td_cancel_source_new();
        td_wait_options o = td_wait_defaults();
        o.cancel = td_cancel_source_token(cs);
        o.cancel_immediately = 1;
        td_task wait = round % 2 ? td_next_frame_ex(&o) : td_delay_frame_ex(1000, &o);
        smoke_where where;
        memset(&where, 0, sizeof(where));
        SMOKE_EQ(TD_OK, td_task_on_completed(wait, smoke_note_where, &where));
        smoke_canceller c = { cs, 0 };
        pthread_t th;
        SMOKE_TRUE(smoke_thread_start(&th, smoke_cancel_on_worker, &c));
        smoke_thread_join(th);
        SMOKE_EQ(1, where.hits);                         /* published by the cancel call ... */
        SMOKE_TRUE(where.thread == c.thread);            /* ... on the cancelling worker */
        td_outcome out;
        SMOKE_EQ(TD_OK, td_task_get(wait, &out));
        SMOKE_EQ(TD_CANCELED, out.status);
        SMOKE_TRUE(out.error.cancel == cs);              /* the same token */
        /* the next rental must not be completed early by the stale entry */
        td_task next = td_delay_frame(2, TD_TIMING_UPDATE);
        td_wait_options o2 = td_wait_defaults();
        td_cancel_source *cs2 = td_cancel_source_new();
        o2.cancel = td_cancel_source_token(cs2);
        td_task fresh = td_delay_frame_ex(3, &o2);
        td_loop_run_frame(loop);
        SMOKE_EQ(TD_PENDING, smoke_status(fresh));
        smoke_run_until(loop, fresh, 5);
        SMOKE_EQ(TD_SUCCEEDED, smoke_status(fresh));
        SMOKE_EQ(TD_SUCCEEDED, smoke_status(next));
        td_task_forget_result(fresh);
        td_loop_run_frame(loop);
        td_cancel_source_free(cs2);
        td_cancel_source_free(cs);
    }
    smoke_loop_end(loop);
}

/* main -> pool -> main, recording the thread at each stage */
typedef struct { uintptr_t before, on_pool, back; int pool_flag; } smoke_switch_frame;
static void smoke_switch_step(td_runner *r, smoke_switch_frame *f)
{
    TD_BEGIN(r);
    f->before = td_thread_self();
    TD_AWAIT(r, td_switch_to_thread_pool());
    f->on_pool = td_thread_self();
    f->pool_flag = td_is_worker_thread();
    TD_AWAIT(r, td_switch_to_main_thread(TD_TIMING_UPDATE));
    f->back = td_thread_self();
    TD_END(r);
}
TD_METHOD_DEFINE(smoke_switch, smoke_switch_frame, smoke_switch_step);

void smoke_case_21(SMOKE_ARGS)
{
    td_loop *loop = smoke_loop_begin(1, NULL);
    td_runner *r = td_runner_rent(&smoke_switch_method);
    smoke_switch_frame *f = TD_FRAME(r, smoke_switch_frame);
    td_task t = td_runner_start(r);
    SMOKE_TRUE(t.source != NULL);                     /* never completes inline */
    for (int i = 0; i < 200 && smoke_status(t) == TD_PENDING; i++) {
        td_loop_run_frame(loop);
        if (smoke_status(t) == TD_PENDING) {
            struct timespec ts = { 0, 1000000 };
            nanosleep(&ts, NULL);
        }
    }
    SMOKE_EQ(TD_SUCCEEDED, smoke_status(t));
    uintptr_t before = f->before, on_pool = f->on_pool, back = f->back;
    int flag = f->pool_flag;
    td_outcome o;
    SMOKE_EQ(TD_OK, td_task_get(t, &o));
    SMOKE_TRUE(before == td_main_thread_id());
    SMOKE_TRUE(on_pool != before);                   /* a different thread afterwards */
    SMOKE_EQ(1, flag);
    SMOKE_TRUE(back == td_main_thread_id());         /* the round trip returns to main */
    smoke_loop_end(loop);
}

typedef struct smoke_work {
    int mode;                  /* 0 success, 1 cancel, 2 fault, 3 held return */
    volatile uint32_t release, ran;
    void *context_seen;
} smoke_work;

static td_status smoke_work_fn(void *arg, td_cancel_token cancel, int64_t *result, td_error *error)
{
    smoke_work *w = (smoke_work *)arg;
    (void)cancel;
    td_atomic_store_u32(&w->ran, 1);
    w->context_seen = td_context_current();
    /* Held until the caller has subscribed, so the completion thread is observed, never
     * raced past. */
    while (!td_atomic_load_u32(&w->release))
        td_cpu_relax();
    if (w->mode == 1)
        return TD_CANCELED;
    if (w->mode == 2) {
        error->code = TD_ERR_USER + 22;
        error->message = "work fault";
        return TD_FAULTED;
    }
    *result = 22;
    return TD_SUCCEEDED;
}

/* What a held-return round saw: the status and the completions once the work had finished
 * on its worker (before any frame), and after exactly one main frame. */
typedef struct smoke_held_seen {
    td_status after_work, after_frame;
    uint32_t hits_after_work, hits_after_frame;
    int restarted;
} smoke_held_seen;

/* Run one job and wait for its outcome; records the completion thread. In mode 3 the pool
 * is stopped (its workers joined) once the job was released, so the worker has certainly
 * finished the job before the first frame runs; then one frame, then the pool restarts. */
static int smoke_pool_round(td_loop *loop, smoke_work *w, int to_main, td_cancel_token token,
                            td_outcome *o, uintptr_t *completed_on, smoke_held_seen *held)
{
    td_task_i64 t = td_run_on_thread_pool_i64(smoke_work_fn, w, to_main, token);
    smoke_where where;
    memset(&where, 0, sizeof(where));
    int rc = td_task_on_completed(t.task, smoke_note_where, &where);
    if (rc == TD_DONE)                       /* only a pre-cancelled call completes inline */
        where.thread = td_thread_self(), where.hits = 1;
    td_atomic_store_u32(&w->release, 1);
    if (w->mode == 3) {
        uint32_t workers = td_thread_pool_size();
        td_thread_pool_stop();
        held->after_work = smoke_status(t.task);
        held->hits_after_work = td_atomic_load_u32(&where.hits);
        td_loop_run_frame(loop);
        held->after_frame = smoke_status(t.task);
        held->hits_after_frame = td_atomic_load_u32(&where.hits);
        held->restarted = td_thread_pool_start(workers) == TD_OK;
    }
    for (int i = 0; i < 2000 && td_atomic_load_u32(&where.hits) == 0; i++) {
        td_loop_run_frame(loop);
        struct timespec ts = { 0, 200000 };
        nanosleep(&ts, NULL);
    }
    *completed_on = where.thread;
    return td_task_i64_get(t, o);
}

void smoke_case_22(SMOKE_ARGS)
{
    td_loop *loop = smoke_loop_begin(1, NULL);
    td_outcome o;
    uintptr_t on;
    smoke_work w;
    smoke_held_seen held;
    /* pre-cancel: canceled, the work never runs */
    td_cancel_source *pre = td_cancel_source_new();
    td_cancel_source_cancel(pre);
    memset(&w, 0, sizeof(w));
    SMOKE_EQ(TD_OK, smoke_pool_round(loop, &w, 1, td_cancel_source_token(pre), &o, &on, &held));
    SMOKE_EQ(TD_CANCELED, o.status);
    SMOKE_TRUE(o.error.cancel == pre);
    SMOKE_EQ(0, w.ran);
    for (int to_main = 0; to_main <= 1; to_main++) {
        for (int mode = 0; mode <= 3; mode++) {
            memset(&w, 0, sizeof(w));
            memset(&held, 0, sizeof(held));
            w.mode = mode;
            td_cancel_source *cs = td_cancel_source_new();
            SMOKE_EQ(TD_OK, smoke_pool_round(loop, &w, to_main, td_cancel_source_token(cs), &o, &on, &held));
            SMOKE_EQ(1, w.ran);
            if (mode == 0 || mode == 3) {
                SMOKE_EQ(TD_SUCCEEDED, o.status);
                SMOKE_EQ(22, o.value);
            } else if (mode == 1) {
                SMOKE_EQ(TD_CANCELED, o.status);
                SMOKE_TRUE(o.error.cancel == cs);
            } else {
                SMOKE_EQ(TD_FAULTED, o.status);
                SMOKE_EQ(TD_ERR_USER + 22, o.error.code);
            }
            if (mode == 3)
                SMOKE_EQ(1, held.restarted);
            if (mode == 3 && to_main) {
                /* held return: the finished result is not observed before the next main
                 * frame, and is once that frame ran */
                SMOKE_EQ(TD_PENDING, held.after_work);
                SMOKE_EQ(0, held.hits_after_work);
                SMOKE_EQ(TD_SUCCEEDED, held.after_frame);
                SMOKE_EQ(1, held.hits_after_frame);
            } else if (mode == 3) {
                /* not asked: published by the worker itself, no frame needed */
                SMOKE_EQ(TD_SUCCEEDED, held.after_work);
                SMOKE_EQ(1, held.hits_after_work);
            }
            /* the completion thread is the main thread exactly when asked */
            SMOKE_EQ(to_main, on == td_main_thread_id());
            td_cancel_source_free(cs);
        }
    }
    td_cancel_source_free(pre);
    smoke_loop_end(loop);
}

static int smoke_ctx_caller, smoke_ctx_meanwhile;

/* Await a run-on-pool task; record the context and the thread the method resumed in. */
typedef struct { td_task_i64 work; void *resumed; int resumed_on_worker; } smoke_pool_seen_frame;
static void smoke_pool_seen_step(td_runner *r, smoke_pool_seen_frame *f)
{
    TD_BEGIN(r);
    TD_AWAIT(r, f->work.task);
    f->resumed = td_context_current();
    f->resumed_on_worker = td_is_worker_thread();
    TD_END(r);
}
TD_METHOD_DEFINE(smoke_pool_seen, smoke_pool_seen_frame, smoke_pool_seen_step);

/* What one round of case 23 saw: the work function's context, the context of the method's
 * code after its await (resumed on the worker that ran the work: return-to-main not asked),
 * and the caller's own after the start. */
typedef struct smoke_pool_flow {
    void *work, *resumed, *caller;
    int resumed_on_worker, succeeded;
} smoke_pool_flow;

/* Case 19 across run-on-pool: with the main thread's context `caller`, make the work
 * (flow suppressed for the call when suppress_work) and start a method awaiting it (flow
 * suppressed for the start, so for its await, when suppress_await); then the main thread
 * switches to another context, and the work, held until then, finishes on a worker. */
static void smoke_pool_flow_round(int suppress_work, int suppress_await, smoke_pool_flow *seen)
{
    smoke_work w;
    memset(&w, 0, sizeof(w));
    memset(seen, 0, sizeof(*seen));
    td_context_set(&smoke_ctx_caller);
    int prev = suppress_work ? td_flow_suppress() : 0;
    td_task_i64 work = td_run_on_thread_pool_i64(smoke_work_fn, &w, 0, td_cancel_none());
    if (suppress_work)
        td_flow_restore(prev);
    prev = suppress_await ? td_flow_suppress() : 0;
    td_runner *r = td_runner_rent(&smoke_pool_seen_method);
    smoke_pool_seen_frame *f = TD_FRAME(r, smoke_pool_seen_frame);
    f->work = work;
    td_task t = td_runner_start(r);
    if (suppress_await)
        td_flow_restore(prev);
    seen->caller = td_context_current();
    td_context_set(&smoke_ctx_meanwhile);    /* what the main thread has, never the method */
    td_atomic_store_u32(&w.release, 1);
    for (int i = 0; i < 5000 && smoke_status(t) == TD_PENDING; i++) {
        struct timespec ts = { 0, 1000000 };
        nanosleep(&ts, NULL);
    }
    seen->work = w.context_seen;
    seen->resumed = f->resumed;              /* the frame stays readable until the get */
    seen->resumed_on_worker = f->resumed_on_worker;
    td_outcome o;
    seen->succeeded = td_task_get(t, &o) == TD_OK && o.status == TD_SUCCEEDED;
    td_context_set(NULL);
}

/* A probe on every worker at once: each worker runs exactly one (held until all of them
 * hold one), so a context left on any worker is seen, whichever ran the earlier jobs. */
typedef struct smoke_worker_probe {
    uint32_t workers;
    volatile uint32_t arrived, met, leaked, done;
} smoke_worker_probe;

static void smoke_probe_worker(void *arg)
{
    smoke_worker_probe *p = (smoke_worker_probe *)arg;
    if (td_context_current() != NULL)
        td_atomic_fetch_add_u32(&p->leaked, 1);
    td_atomic_fetch_add_u32(&p->arrived, 1);
    if (smoke_wait_flag(&p->arrived, p->workers))
        td_atomic_fetch_add_u32(&p->met, 1);
    td_atomic_fetch_add_u32(&p->done, 1);
}

void smoke_case_23(SMOKE_ARGS)
{
    td_loop *loop = smoke_loop_begin(1, NULL);
    smoke_pool_flow on, off, suppressed, work_only;
    td_flow_set(1);
    smoke_pool_flow_round(0, 0, &on);
    smoke_pool_flow_round(1, 1, &suppressed);
    smoke_pool_flow_round(0, 1, &work_only);
    td_flow_set(0);
    smoke_pool_flow_round(0, 0, &off);
    static smoke_worker_probe probe;        /* static: a probe held past a failed wait stays valid */
    memset(&probe, 0, sizeof(probe));
    probe.workers = td_thread_pool_size();
    for (uint32_t i = 0; i < probe.workers; i++)
        SMOKE_EQ(TD_OK, td_thread_pool_post(smoke_probe_worker, &probe));
    SMOKE_TRUE(smoke_wait_flag(&probe.done, probe.workers) || smoke_wait_flag(&probe.done, probe.workers));
    SMOKE_EQ(1, on.succeeded && off.succeeded && suppressed.succeeded && work_only.succeeded);
    SMOKE_EQ(1, on.resumed_on_worker && off.resumed_on_worker && suppressed.resumed_on_worker &&
                work_only.resumed_on_worker);
    SMOKE_TRUE(on.caller == &smoke_ctx_caller && off.caller == &smoke_ctx_caller &&
               suppressed.caller == &smoke_ctx_caller && work_only.caller == &smoke_ctx_caller);
    /* flow on: the work and the code after the await see the caller's context */
    SMOKE_TRUE(on.work == &smoke_ctx_caller);
    SMOKE_TRUE(on.resumed == &smoke_ctx_caller);
    /* flow off: the worker's own (none), in the work and after the await */
    SMOKE_TRUE(off.work == NULL);
    SMOKE_TRUE(off.resumed == NULL);
    /* suppressed: nothing flows */
    SMOKE_TRUE(suppressed.work == NULL);
    SMOKE_TRUE(suppressed.resumed == NULL);
    /* the work's context is current while it runs and only then: an await that captured
     * nothing resumes after it in the worker's own */
    SMOKE_TRUE(work_only.work == &smoke_ctx_caller);
    SMOKE_TRUE(work_only.resumed == NULL);
    /* no leak into the workers: every one of them has no context after its jobs */
    SMOKE_EQ(probe.workers, probe.met);
    SMOKE_EQ(0, probe.leaked);
    smoke_loop_end(loop);
}

static td_status smoke_quick_work(void *arg, td_cancel_token cancel, td_error *error)
{
    (void)cancel; (void)error;
    while (!td_atomic_load_u32((volatile uint32_t *)arg))   /* until the caller subscribed */
        td_cpu_relax();
    return TD_SUCCEEDED;
}

void smoke_case_25(SMOKE_ARGS)
{
    td_loop *loop = smoke_loop_begin(1, NULL);
    td_completion_source *gate = td_completion_source_new();
    volatile uint32_t subscribed = 0;
    td_task in[3] = { td_completion_source_task(gate),
                      td_run_on_thread_pool(smoke_quick_work, (void *)&subscribed, 0, td_cancel_none()),
                      td_delay_frame(3, TD_TIMING_UPDATE) };
    td_task_i64 any = td_when_any(in, 3);
    smoke_where where;
    memset(&where, 0, sizeof(where));
    SMOKE_EQ(TD_OK, td_task_on_completed(any.task, smoke_note_where, &where));
    td_atomic_store_u32(&subscribed, 1);
    SMOKE_TRUE(smoke_wait_flag(&where.hits, 1));
    td_outcome o;
    SMOKE_EQ(TD_OK, td_task_i64_get(any, &o));
    SMOKE_EQ(1, o.value);                                  /* the worker's job won */
    SMOKE_TRUE(where.thread != td_main_thread_id());       /* published on a worker */
    /* late losers complete safely and are consumed */
    td_completion_source_set_result(gate, 1);
    for (int i = 0; i < 4; i++)
        td_loop_run_frame(loop);
    td_status st;
    SMOKE_EQ(TD_E_STALE, td_task_status(in[0], &st));
    SMOKE_EQ(TD_SUCCEEDED, smoke_status(in[2]));           /* stateless: still answers */
    td_completion_source_free(gate);
    smoke_loop_end(loop);
}
