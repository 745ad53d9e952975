/*
 * smoke_compose.c - smoke cases on combinators and cancellation: 24 (typed WhenAny with
 * mixed sources and late losers), 26 (external token identity, late faults), 27
 * (suppression), 32 (timeout shapes, producer identity), 33 (paused clocks, worker timing).
 */
#include "smoke.h"

/* A typed method that awaits one frame and returns v. */
typedef struct { int64_t v; } smoke_later_frame;
static void smoke_later_step(td_runner *r, smoke_later_frame *f)
{
    TD_BEGIN(r);
    TD_AWAIT(r, td_next_frame(TD_TIMING_UPDATE));
    TD_RETURN_VALUE(r, f->v);
    TD_END(r);
}
TD_METHOD_DEFINE(smoke_later, smoke_later_frame, smoke_later_step);

static td_task_i64 smoke_later(int64_t v)
{
    td_runner *r = td_runner_rent(&smoke_later_method);
    TD_FRAME(r, smoke_later_frame)->v = v;
    return td_runner_start_i64(r);
}

static int smoke_unobserved;
static void smoke_note_unobserved(const td_error *e, void *arg) { (void)e; (void)arg; smoke_unobserved++; }

void smoke_case_24(SMOKE_ARGS)
{
    td_loop *loop = smoke_loop_begin(1, NULL);
    smoke_unobserved = 0;
    td_set_unobserved_error_handler(smoke_note_unobserved, NULL);
    td_auto_source *a = td_auto_source_rent();
    td_task_i64 in[3] = { td_auto_source_task_i64(a), smoke_later(42),
                          td_task_i64_of(td_delay_frame(3, TD_TIMING_UPDATE)) };
    int winner = -1;
    td_task_i64 any = td_when_any_i64(in, 3, &winner);
    smoke_run_until(loop, any.task, 10);
    td_outcome o;
    SMOKE_EQ(TD_OK, td_task_i64_get(any, &o));
    SMOKE_EQ(1, winner);
    SMOKE_EQ(42, o.value);
    /* the late losers: the source faults, the delay finishes; both are consumed */
    SMOKE_EQ(TD_OK, td_auto_source_set_error(a, in[0].task.token, TD_ERR_USER, "late loser"));
    td_status st;
    SMOKE_EQ(TD_E_STALE, td_task_status(in[0].task, &st));
    for (int i = 0; i < 3; i++)
        td_loop_run_frame(loop);
    /* a fresh race */
    td_task_i64 in2[2] = { td_from_result(91), smoke_later(7) };
    any = td_when_any_i64(in2, 2, &winner);
    SMOKE_EQ(TD_OK, td_task_i64_get(any, &o));
    SMOKE_EQ(0, winner);
    SMOKE_EQ(91, o.value);
    smoke_run_until(loop, in2[1].task, 3);
    SMOKE_EQ(TD_E_STALE, td_task_status(in2[1].task, &st));   /* loser consumed */
    td_set_unobserved_error_handler(NULL, NULL);
    SMOKE_EQ(0, smoke_unobserved);             /* the faulting loser was observed */
    SMOKE_EQ(0, td_unobserved_error_count());
    smoke_loop_end(loop);
}

void smoke_case_26(SMOKE_ARGS)
{
    td_cancel_source *external = td_cancel_source_new();
    td_completion_source *producer = td_completion_source_new();
    td_task_i64 t = td_attach_cancel_i64(td_completion_source_task_i64(producer),
                                         td_cancel_source_token(external));
    td_cancel_source_cancel(external);
    td_outcome o;
    SMOKE_EQ(TD_OK, td_task_i64_get(t, &o));
    SMOKE_EQ(TD_CANCELED, o.status);
    SMOKE_TRUE(o.error.cancel == external);                /* that token, not another */
    /* the producer faults late: consumed by the combinator, nothing else happens */
    SMOKE_EQ(TD_OK, td_completion_source_set_error(producer, TD_ERR_USER, "late fault"));
    td_status st;
    SMOKE_EQ(TD_E_STALE, td_task_status(td_completion_source_task(producer), &st));
    /* a producer that already completed beats a pre-cancelled token */
    td_completion_source_reset(producer);
    td_completion_source_set_result(producer, 12);
    t = td_attach_cancel_i64(td_completion_source_task_i64(producer), td_cancel_source_token(external));
    SMOKE_EQ(TD_OK, td_task_i64_get(t, &o));
    SMOKE_EQ(TD_SUCCEEDED, o.status);
    SMOKE_EQ(12, o.value);
    td_completion_source_free(producer);
    td_cancel_source_free(external);
}

void smoke_case_27(SMOKE_ARGS)
{
    td_cancel_source *cs = td_cancel_source_new();
    td_completion_source *src = td_completion_source_new();
    td_outcome o;
    td_task_i64 t = td_suppress_cancel_i64(td_completion_source_task_i64(src));
    td_completion_source_set_canceled(src, cs);
    SMOKE_EQ(TD_OK, td_task_i64_get(t, &o));
    SMOKE_EQ(TD_SUCCEEDED, o.status);                     /* no error path */
    SMOKE_TRUE(td_outcome_canceled_flag(&o));
    SMOKE_TRUE(o.error.cancel == cs);
    td_completion_source_reset(src);
    t = td_suppress_cancel_i64(td_completion_source_task_i64(src));
    td_completion_source_set_result(src, 33);
    SMOKE_EQ(TD_OK, td_task_i64_get(t, &o));
    SMOKE_TRUE(!td_outcome_canceled_flag(&o));
    SMOKE_EQ(33, o.value);
    /* a fault whose error is a cancel record stays faulted with the same record */
    td_completion_source_reset(src);
    t = td_suppress_cancel_i64(td_completion_source_task_i64(src));
    static const char record[] = "cancel record";
    td_completion_source_set_error(src, TD_ERR_CANCELED, record);
    SMOKE_EQ(TD_OK, td_task_i64_get(t, &o));
    SMOKE_EQ(TD_FAULTED, o.status);
    SMOKE_EQ(TD_ERR_CANCELED, o.error.code);
    SMOKE_TRUE(o.error.message == record);
    td_completion_source_free(src);
    td_cancel_source_free(cs);
}

/* One timeout shape: returns the outcome after the timeout fired (producer pending). */
static int smoke_timeout_fire(td_loop *loop, int64_t *now, int typed, int with_error, td_outcome *o,
                              td_completion_source *producer)
{
    td_task t = typed ? td_timeout_i64(td_completion_source_task_i64(producer), 100, TD_CLOCK_UNSCALED, with_error, NULL).task
                      : td_timeout(td_completion_source_task(producer), 100, TD_CLOCK_UNSCALED, with_error, NULL);
    *now += 200;
    td_loop_run_frame(loop);
    int rc = td_task_get(t, o);
    td_completion_source_set_result(producer, 1);      /* the producer finishes later */
    td_completion_source_reset(producer);
    return rc;
}

void smoke_case_32(SMOKE_ARGS)
{
    int64_t now = 0;
    td_loop *loop = smoke_loop_begin(1, &now);
    td_completion_source *p = td_completion_source_new();
    td_outcome o;
    for (int typed = 0; typed <= 1; typed++) {
        SMOKE_EQ(TD_OK, smoke_timeout_fire(loop, &now, typed, 1, &o, p));
        SMOKE_EQ(TD_FAULTED, o.status);
        SMOKE_EQ(TD_ERR_TIMEOUT, o.error.code);
        SMOKE_EQ(TD_OK, smoke_timeout_fire(loop, &now, typed, 0, &o, p));
        SMOKE_TRUE(td_outcome_timed_out(&o));
    }
    /* producer identity: its fault and its cancellation pass through unchanged */
    static const char why[] = "producer fault";
    td_task_i64 t = td_timeout_i64(td_completion_source_task_i64(p), 100, TD_CLOCK_UNSCALED, 1, NULL);
    td_completion_source_set_error(p, TD_ERR_USER + 32, why);
    SMOKE_EQ(TD_OK, td_task_i64_get(t, &o));
    SMOKE_EQ(TD_FAULTED, o.status);
    SMOKE_EQ(TD_ERR_USER + 32, o.error.code);
    SMOKE_TRUE(o.error.message == why);
    td_completion_source_reset(p);
    td_cancel_source *cs = td_cancel_source_new();
    t = td_timeout_i64(td_completion_source_task_i64(p), 100, TD_CLOCK_UNSCALED, 0, NULL);
    td_completion_source_set_canceled(p, cs);
    SMOKE_EQ(TD_OK, td_task_i64_get(t, &o));
    SMOKE_EQ(TD_CANCELED, o.status);
    SMOKE_TRUE(o.error.cancel == cs);
    now += 1000;
    td_loop_run_frame(loop);                            /* the losing delays finish */
    td_cancel_source_free(cs);
    td_completion_source_free(p);
    smoke_loop_end(loop);
}

typedef struct smoke_armed {
    td_completion_source *producer;
    td_task timeout;
    uintptr_t fired_on;
    volatile uint32_t fired;
} smoke_armed;

static void smoke_note_fired(void *arg)
{
    smoke_armed *a = (smoke_armed *)arg;
    a->fired_on = td_thread_self();
    td_atomic_store_u32(&a->fired, 1);
}

static void smoke_arm(smoke_armed *a)
{
    a->timeout = td_timeout(td_completion_source_task(a->producer), 100, TD_CLOCK_UNSCALED, 1, NULL);
    td_task_on_completed(a->timeout, smoke_note_fired, a);
}

static void *smoke_arm_on_worker(void *arg) { smoke_arm((smoke_armed *)arg); return NULL; }
static void smoke_arm_in_drain(void *arg) { smoke_arm((smoke_armed *)arg); }

void smoke_case_33(SMOKE_ARGS)
{
    int64_t now = 0;
    td_loop *loop = smoke_loop_begin(1, &now);
    td_completion_source *p = td_completion_source_new();
    /* paused scaled clock: a scaled timeout does not fire */
    td_loop_set_time_scale(loop, 0.0);
    td_task t = td_timeout(td_completion_source_task(p), 100, TD_CLOCK_SCALED, 1, NULL);
    for (int i = 0; i < 5; i++) {
        now += 1000;
        td_loop_run_frame(loop);
    }
    SMOKE_EQ(TD_PENDING, smoke_status(t));
    td_completion_source_set_result(p, 4);
    td_outcome o;
    SMOKE_EQ(TD_OK, td_task_get(t, &o));
    SMOKE_EQ(TD_SUCCEEDED, o.status);
    td_loop_set_time_scale(loop, 1.0);
    now += 1000;
    td_loop_run_frame(loop);
    /* armed from a worker, and armed inside a drain: both fire on the main thread */
    smoke_armed w, d;
    memset(&w, 0, sizeof(w));
    memset(&d, 0, sizeof(d));
    w.producer = td_completion_source_new();
    d.producer = td_completion_source_new();
    pthread_t th;
    SMOKE_TRUE(smoke_thread_start(&th, smoke_arm_on_worker, &w));
    smoke_thread_join(th);
    td_loop_post(loop, TD_TIMING_UPDATE, smoke_arm_in_drain, &d);
    for (int i = 0; i < 4; i++) {
        now += 100;
        td_loop_run_frame(loop);
    }
    SMOKE_EQ(1, w.fired);
    SMOKE_EQ(1, d.fired);
    SMOKE_TRUE(w.fired_on == td_main_thread_id());
    SMOKE_TRUE(d.fired_on == td_main_thread_id());
    SMOKE_EQ(TD_OK, td_task_get(w.timeout, &o));
    SMOKE_EQ(TD_ERR_TIMEOUT, o.error.code);
    SMOKE_EQ(TD_OK, td_task_get(d.timeout, &o));
    SMOKE_EQ(TD_ERR_TIMEOUT, o.error.code);
    td_completion_source_set_result(w.producer, 0);
    td_completion_source_set_result(d.producer, 0);
    td_completion_source_free(w.producer);
    td_completion_source_free(d.producer);
    td_completion_source_free(p);
    smoke_loop_end(loop);
}
