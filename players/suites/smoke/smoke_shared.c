/*
 * smoke_shared.c - shared handles and stateless frame waits: 4-5 (exclusivity and
 * recycling, typed and untyped), 13 (stateless default frame waits).
 */
#include "smoke.h"

/* A method awaiting `gate`, returning its value + 10 (typed). */
typedef struct { td_task_i64 gate; int64_t got; } smoke_gated_frame;
static void smoke_gated_step(td_runner *r, smoke_gated_frame *f)
{
    TD_BEGIN(r);
    TD_AWAIT_VALUE(r, f->gate, f->got);
    TD_RETURN_VALUE(r, f->got + 10);
    TD_END(r);
}
TD_METHOD_DEFINE(smoke_gated, smoke_gated_frame, smoke_gated_step);

/* The untyped gated method and reader: await `in` (untyped), count the pass. Two methods of
 * one step, so that each has its own pool (the recycling check rents the gated one's). */
typedef struct { td_task in; int *passes; } smoke_counted_frame;
static void smoke_counted_step(td_runner *r, smoke_counted_frame *f)
{
    TD_BEGIN(r);
    TD_AWAIT(r, f->in);
    (*f->passes)++;
    TD_END(r);
}
TD_METHOD_DEFINE(smoke_gated_untyped, smoke_counted_frame, smoke_counted_step);
TD_METHOD_DEFINE(smoke_reader_untyped, smoke_counted_frame, smoke_counted_step);

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

/* Case 4 (typed) or 5 (untyped): the shape decides every call below, so the untyped case
 * shares an untyped method's task through the untyped calls (td_task_share, td_shared_task,
 * td_task_get, td_task_preserve), never the typed ones. An untyped task travels as
 * td_task_i64_of's view, read only through `.task`. */
typedef struct smoke_shape {
    int typed;
    td_method *gated;       /* the method whose runner is shared */
    int passes;             /* the untyped methods' passes (gated and readers) */
} smoke_shape;

/* Start the rented runner r of one of the shape's methods, awaiting `in`. */
static td_task_i64 smoke_shape_start(smoke_shape *sh, td_runner *r, td_task_i64 in)
{
    if (sh->typed) {
        TD_FRAME(r, smoke_gated_frame)->gate = in;
        return td_runner_start_i64(r);
    }
    TD_FRAME(r, smoke_counted_frame)->in = in.task;
    TD_FRAME(r, smoke_counted_frame)->passes = &sh->passes;
    return td_task_i64_of(td_runner_start(r));
}

static td_task_i64 smoke_shape_gated(smoke_shape *sh, td_completion_source *gate)
{
    td_task_i64 in = sh->typed ? td_completion_source_task_i64(gate)
                               : td_task_i64_of(td_completion_source_task(gate));
    return smoke_shape_start(sh, td_runner_rent(sh->gated), in);
}

static td_task_i64 smoke_shape_reader(smoke_shape *sh, td_shared *h)
{
    if (sh->typed)
        return smoke_reader(td_shared_task_i64(h));
    td_runner *r = td_runner_rent(&smoke_reader_untyped_method);
    return smoke_shape_start(sh, r, td_task_i64_of(td_shared_task(h)));
}

static td_shared *smoke_shape_share(const smoke_shape *sh, td_task_i64 t)
{
    return sh->typed ? td_task_share_i64(t) : td_task_share(t.task);
}

static td_shared *smoke_shape_preserve(const smoke_shape *sh, td_task_i64 t)
{
    return sh->typed ? td_task_preserve_i64(t) : td_task_preserve(t.task);
}

static int smoke_shape_get(const smoke_shape *sh, td_task_i64 t, td_outcome *o)
{
    return sh->typed ? td_task_i64_get(t, o) : td_task_get(t.task, o);
}

/* Consume t of the shape: its typed value, or untyped the passes of the shape's methods so
 * far; -1 unless the get answered TD_OK with a success. */
static int64_t smoke_shape_take(smoke_shape *sh, td_task_i64 t)
{
    td_outcome o;
    if (smoke_shape_get(sh, t, &o) != TD_OK || o.status != TD_SUCCEEDED)
        return -1;
    return sh->typed ? o.value : sh->passes;
}

static int smoke_native_calls;
static void smoke_native_waiter(void *arg) { (void)arg; smoke_native_calls++; }

static void smoke_shared_case(const td_player_host *host, void *ctx, int typed)
{
    smoke_shape sh = { typed, typed ? &smoke_gated_method : &smoke_gated_untyped_method, 0 };
    td_completion_source *gate = td_completion_source_new();
    td_task_i64 t = smoke_shape_gated(&sh, gate);
    td_runner *runner = (td_runner *)t.task.source;
    td_shared *h = smoke_shape_share(&sh, t);
    SMOKE_TRUE(h != NULL);
    /* the original is now the handle's: single-consumer use is rejected */
    td_outcome o;
    td_shared *again = NULL;
    SMOKE_EQ(TD_E_SHARED, td_task_on_completed(t.task, smoke_native_waiter, NULL));
    SMOKE_EQ(TD_E_SHARED, smoke_shape_get(&sh, t, &o));
    SMOKE_TRUE(smoke_shape_preserve(&sh, t) == NULL);                 /* preserve again ... */
    SMOKE_EQ(TD_E_SHARED, td_task_share_rc(t, &again));               /* ... and why */
    /* many readers */
    td_task_i64 r1 = smoke_shape_reader(&sh, h);
    td_task_i64 r2 = smoke_shape_reader(&sh, h);
    SMOKE_EQ(TD_PENDING, smoke_status(r1.task));
    td_completion_source_set_result(gate, 30);
    /* typed: 30 + 10 read by both; untyped: the method and the two readers passed */
    SMOKE_EQ(typed ? 40 : 3, smoke_shape_take(&sh, r1));
    SMOKE_EQ(typed ? 40 : 3, smoke_shape_take(&sh, r2));
    SMOKE_EQ(TD_OK, td_shared_outcome(h, &o));                        /* read again */
    SMOKE_EQ(TD_SUCCEEDED, o.status);
    /* the runner was recycled at completion: the old token is dead, the runner pooled */
    td_status st;
    SMOKE_EQ(TD_E_STALE, td_task_status(t.task, &st));
    SMOKE_EQ(TD_E_STALE, smoke_shape_get(&sh, t, &o));
    td_shared_release(h);
    td_runner *next = td_runner_rent(sh.gated);                       /* the pool gives it back */
    SMOKE_TRUE(next == runner);
    td_task_forget_result(smoke_shape_start(&sh, next, td_from_result(0)).task);   /* inline */
    /* a native waiter registered first blocks sharing */
    td_completion_source_reset(gate);
    td_task_i64 t2 = smoke_shape_gated(&sh, gate);
    smoke_native_calls = 0;
    SMOKE_EQ(TD_OK, td_task_on_completed(t2.task, smoke_native_waiter, NULL));
    SMOKE_TRUE(smoke_shape_share(&sh, t2) == NULL);
    SMOKE_EQ(TD_E_AWAITED, td_task_share_rc(t2, &again));
    SMOKE_TRUE(again == NULL);
    td_completion_source_set_result(gate, 1);
    SMOKE_EQ(1, smoke_native_calls);
    SMOKE_EQ(typed ? 11 : 5, smoke_shape_take(&sh, t2));             /* untyped: the restart, t2 */
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
