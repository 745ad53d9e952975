/*
 * smoke_shared.c - shared handles and stateless frame waits: 4-5 (exclusivity and
 * recycling, typed and untyped), 13 (stateless default frame waits).
 */
#include "smoke.h"

/* A method awaiting `gate`, returning its value + 10 (typed) or nothing (untyped). */
typedef struct { td_task_i64 gate; int64_t got; } smoke_gated_frame;
static void smoke_gated_step(td_runner *r, smoke_gated_frame *f)
{
    TD_BEGIN(r);
    TD_AWAIT_VALUE(r, f->gate, f->got);
    TD_RETURN_VALUE(r, f->got + 10);
    TD_END(r);
}
TD_METHOD_DEFINE(smoke_gated, smoke_gated_frame, smoke_gated_step);

static td_task_i64 smoke_gated(td_completion_source *gate)
{
    td_runner *r = td_runner_rent(&smoke_gated_method);
    TD_FRAME(r, smoke_gated_frame)->gate = td_completion_source_task_i64(gate);
    return td_runner_start_i64(r);
}

/* A reader: awaits a (shared) task and returns what it read. */
typedef struct { td_task_i64 in; int64_t got; } smoke_reader_frame;
static void smoke_reader_step(td_runner *r, smoke_reader_frame *f)
{
    TD_BEGIN(r);
    TD_AWAIT_VALUE(r, f->in, f->got);
    TD_RETURN_VALUE(r, f->got);
    TD_END(r);
}
TD_METHOD_DEFINE(smoke_reader, smoke_reader_frame, smoke_reader_step);

static td_task_i64 smoke_reader(td_task_i64 in)
{
    td_runner *r = td_runner_rent(&smoke_reader_method);
    TD_FRAME(r, smoke_reader_frame)->in = in;
    return td_runner_start_i64(r);
}

static int smoke_native_calls;
static void smoke_native_waiter(void *arg) { (void)arg; smoke_native_calls++; }

static void smoke_shared_case(const td_player_host *host, void *ctx, int typed)
{
    td_completion_source *gate = td_completion_source_new();
    td_task_i64 t = smoke_gated(gate);
    td_runner *runner = (td_runner *)t.task.source;
    td_shared *h = typed ? td_task_share_i64(t) : td_task_share(t.task);
    SMOKE_TRUE(h != NULL);
    /* the original is now the handle's: single-consumer use is rejected */
    td_outcome o;
    td_shared *again = NULL;
    SMOKE_EQ(TD_E_SHARED, td_task_on_completed(t.task, smoke_native_waiter, NULL));
    SMOKE_EQ(TD_E_SHARED, td_task_i64_get(t, &o));
    SMOKE_EQ(TD_E_SHARED, td_task_share_rc(t, &again));          /* preserve again */
    /* many readers */
    td_task_i64 r1 = smoke_reader(typed ? td_shared_task_i64(h) : td_task_i64_of(td_shared_task(h)));
    td_task_i64 r2 = smoke_reader(typed ? td_shared_task_i64(h) : td_task_i64_of(td_shared_task(h)));
    SMOKE_EQ(TD_PENDING, smoke_status(r1.task));
    td_completion_source_set_result(gate, 30);
    SMOKE_EQ(TD_OK, td_task_i64_get(r1, &o));
    if (typed)
        SMOKE_EQ(40, o.value);
    SMOKE_EQ(TD_OK, td_task_i64_get(r2, &o));
    if (typed)
        SMOKE_EQ(40, o.value);
    SMOKE_EQ(TD_OK, td_shared_outcome(h, &o));                    /* read again */
    SMOKE_EQ(TD_SUCCEEDED, o.status);
    /* the runner was recycled at completion: the old token is dead, the runner pooled */
    td_status st;
    SMOKE_EQ(TD_E_STALE, td_task_status(t.task, &st));
    td_shared_release(h);
    td_runner *next = td_runner_rent(&smoke_gated_method);           /* the pool gives it back */
    SMOKE_TRUE(next == runner);
    TD_FRAME(next, smoke_gated_frame)->gate = td_from_result(0);
    td_task_forget_result(td_runner_start(next));                    /* completes inline */
    /* a native waiter registered first blocks sharing */
    td_completion_source_reset(gate);
    td_task_i64 t2 = smoke_gated(gate);
    smoke_native_calls = 0;
    SMOKE_EQ(TD_OK, td_task_on_completed(t2.task, smoke_native_waiter, NULL));
    SMOKE_EQ(TD_E_AWAITED, td_task_share_rc(t2, &again));
    SMOKE_TRUE(again == NULL);
    td_completion_source_set_result(gate, 1);
    SMOKE_EQ(1, smoke_native_calls);
    SMOKE_EQ(TD_OK, td_task_i64_get(t2, &o));
    SMOKE_EQ(11, o.value);
    td_completion_source_free(gate);
}

void smoke_case_4(SMOKE_ARGS) { smoke_shared_case(host, ctx, 1); }
void smoke_case_5(SMOKE_ARGS) { smoke_shared_case(host, ctx, 0); }

typedef struct smoke_from_worker { td_task wait; uintptr_t ran_on; volatile uint32_t ran; } smoke_from_worker;

static void smoke_worker_wait_done(void *arg)
{
    smoke_from_worker *w = (smoke_from_worker *)arg;
    w->ran_on = td_thread_self();
    td_atomic_store_u32(&w->ran, 1);
}

static void *smoke_register_from_worker(void *arg)
{
    smoke_from_worker *w = (smoke_from_worker *)arg;
    td_task_on_completed(w->wait, smoke_worker_wait_done, w);
    return NULL;
}

void smoke_case_13(SMOKE_ARGS)
{
    td_loop *loop = smoke_loop_begin(1, NULL);
    td_loop_run_frame(loop);
    td_task nf = td_next_frame(TD_TIMING_UPDATE);
    /* no pooled object: the same per-timing marker serves every wait */
    SMOKE_TRUE(nf.source != NULL && nf.source == td_next_frame(TD_TIMING_UPDATE).source);
    td_task copy = nf;                                           /* a preserved copy */
    td_shared *h = td_task_preserve(nf);                          /* a shared handle */
    SMOKE_TRUE(h != NULL);
    td_task_i64 c1 = smoke_reader(td_task_i64_of(nf));            /* two consumers */
    td_task_i64 c2 = smoke_reader(td_task_i64_of(copy));
    td_task_i64 c3 = smoke_reader(td_task_i64_of(td_shared_task(h)));
    td_task_forget(td_next_frame(TD_TIMING_UPDATE));              /* fire-and-forget */
    smoke_from_worker w;
    memset(&w, 0, sizeof(w));
    w.wait = nf;
    pthread_t th;
    SMOKE_TRUE(smoke_thread_start(&th, smoke_register_from_worker, &w));
    smoke_thread_join(th);
    SMOKE_EQ(TD_PENDING, smoke_status(c1.task));
    td_loop_run_frame(loop);
    SMOKE_EQ(TD_SUCCEEDED, smoke_status(c1.task));
    SMOKE_EQ(TD_SUCCEEDED, smoke_status(c2.task));
    SMOKE_EQ(TD_SUCCEEDED, smoke_status(c3.task));
    SMOKE_EQ(1, w.ran);
    SMOKE_TRUE(w.ran_on == td_main_thread_id());                 /* resumed on the main thread */
    td_outcome o;
    SMOKE_EQ(TD_OK, td_task_get(nf, &o));                         /* repeated get-result */
    SMOKE_EQ(TD_OK, td_task_get(nf, &o));
    SMOKE_EQ(TD_OK, td_task_get(copy, &o));
    SMOKE_EQ(TD_SUCCEEDED, o.status);
    SMOKE_EQ(TD_OK, td_task_i64_get(c1, &o));
    SMOKE_EQ(TD_OK, td_task_i64_get(c2, &o));
    SMOKE_EQ(TD_OK, td_task_i64_get(c3, &o));
    td_shared_release(h);
    SMOKE_EQ(0, td_unobserved_error_count());
    smoke_loop_end(loop);
}
