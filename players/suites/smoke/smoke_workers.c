/*
 * smoke_workers.c - cases where a worker thread completes a runner while the main thread
 * consumes and re-rents it: 10-11 (held-worker immediate reuse), 12 (x1000).
 * The runtime's invariant under test: once a step function has completed its runner,
 * nothing on the completing thread touches the runner again (async.h).
 */
#include "smoke.h"

/* The typed method: await `gate`, return `v` + the gate's value. */
typedef struct { td_task_i64 gate; int64_t v, got; } smoke_held_frame;
static void smoke_held_step(td_runner *r, smoke_held_frame *f)
{
    TD_BEGIN(r);
    TD_AWAIT_VALUE(r, f->gate, f->got);
    TD_RETURN_VALUE(r, f->v + f->got);
    TD_END(r);
}
TD_METHOD_DEFINE(smoke_held, smoke_held_frame, smoke_held_step);

static td_task_i64 smoke_held_start(td_task_i64 gate, int64_t v)
{
    td_runner *r = td_runner_rent(&smoke_held_method);
    TD_FRAME(r, smoke_held_frame)->gate = gate;
    TD_FRAME(r, smoke_held_frame)->v = v;
    td_task_i64 t;
    TD_METHOD_START_I64(smoke_held, r, t);   /* the method's own start (TD_METHOD_DEFINE) */
    return t;
}

/* The untyped method: await `gate` and finish through TD_END. It has no result, so each
 * rental reports through its own record: how often its body was entered, and the tag it
 * wrote when it finished (a corrupted frame or resume point shows there). */
typedef struct smoke_held_log { int entered, finished; int64_t tag; } smoke_held_log;
typedef struct { td_task gate; int64_t tag; smoke_held_log *log; } smoke_held_untyped_frame;
static void smoke_held_untyped_step(td_runner *r, smoke_held_untyped_frame *f)
{
    TD_BEGIN(r);
    f->log->entered++;
    TD_AWAIT(r, f->gate);
    f->log->finished++;
    f->log->tag = f->tag;
    TD_END(r);
}
TD_METHOD_DEFINE(smoke_held_untyped, smoke_held_untyped_frame, smoke_held_untyped_step);

static td_task smoke_held_untyped_start(td_task gate, int64_t tag, smoke_held_log *log)
{
    td_runner *r = td_runner_rent(&smoke_held_untyped_method);
    TD_FRAME(r, smoke_held_untyped_frame)->gate = gate;
    TD_FRAME(r, smoke_held_untyped_frame)->tag = tag;
    TD_FRAME(r, smoke_held_untyped_frame)->log = log;
    td_task t;
    TD_METHOD_START(smoke_held_untyped, r, t);
    return t;
}

/* The hold: a continuation on the method's task, so the completing worker is held inside
 * the statement that completed the runner (TD_RETURN_VALUE / TD_END), deeper in the step
 * function than anything the runtime still runs on that thread afterwards. */
static volatile uint32_t smoke_hold_reached, smoke_hold_release;
static uintptr_t smoke_hold_thread;

static void smoke_hold_in_completion(void *arg)
{
    (void)arg;
    smoke_hold_thread = td_thread_self();
    td_atomic_store_u32(&smoke_hold_reached, 1);
    while (!td_is_main_thread() && !td_atomic_load_u32(&smoke_hold_release))
        td_cpu_relax();
}

typedef struct { td_auto_source *s; uint32_t token; int64_t value; } smoke_completion;

static void *smoke_complete_on_worker(void *arg)
{
    smoke_completion *c = (smoke_completion *)arg;
    td_auto_source_set_result(c->s, c->token, c->value);
    return NULL;
}

/* Case 10 (typed: TD_METHOD_START_I64, td_task_i64_get, values 7 and 50 + 9) and case 11
 * (untyped: TD_METHOD_START, td_task_get, tags 7 and 59 in per-rental records). */
static void smoke_held_reuse(const td_player_host *host, void *ctx, int typed)
{
    smoke_hold_reached = 0;
    smoke_hold_release = 0;
    smoke_hold_thread = 0;
    smoke_held_log first, second;
    memset(&first, 0, sizeof(first));
    memset(&second, 0, sizeof(second));
    td_auto_source *g1 = td_auto_source_rent();
    smoke_completion c = { g1, td_auto_source_task(g1).token, 7 };
    td_task t = typed ? smoke_held_start(td_auto_source_task_i64(g1), 0).task
                      : smoke_held_untyped_start(td_auto_source_task(g1), 7, &first);
    td_source *runner = t.source;
    SMOKE_TRUE(runner != NULL);                          /* suspended on the gate */
    SMOKE_EQ(TD_OK, td_task_on_completed(t, smoke_hold_in_completion, NULL));
    pthread_t th;
    SMOKE_TRUE(smoke_thread_start(&th, smoke_complete_on_worker, &c));
    int held = smoke_wait_flag(&smoke_hold_reached, 1);
    /* The worker is held inside the step: consume and re-rent on the main thread. */
    td_outcome o, o2;
    memset(&o, 0, sizeof(o));
    memset(&o2, 0, sizeof(o2));
    int rc = typed ? td_task_i64_get(td_task_i64_of(t), &o) : td_task_get(t, &o);
    td_auto_source *g2 = td_auto_source_rent();
    td_task t2 = typed ? smoke_held_start(td_auto_source_task_i64(g2), 50).task
                       : smoke_held_untyped_start(td_auto_source_task(g2), 59, &second);
    td_atomic_store_u32(&smoke_hold_release, 1);
    smoke_thread_join(th);
    /* The worker has unwound: everything below is after it left the step function. */
    td_status st2 = smoke_status(t2);
    int rc2 = td_auto_source_set_result(g2, td_auto_source_task(g2).token, 9);
    int rc3 = typed ? td_task_i64_get(td_task_i64_of(t2), &o2) : td_task_get(t2, &o2);
    SMOKE_TRUE(held);
    SMOKE_TRUE(smoke_hold_thread != td_main_thread_id());   /* completed on the worker */
    SMOKE_EQ(TD_OK, rc);
    SMOKE_EQ(TD_SUCCEEDED, o.status);
    SMOKE_TRUE(t2.source == runner);                    /* the same runner, re-rented */
    SMOKE_EQ(TD_PENDING, st2);                          /* the unwinding worker did not complete it */
    SMOKE_EQ(TD_OK, rc2);
    SMOKE_EQ(TD_OK, rc3);
    SMOKE_EQ(TD_SUCCEEDED, o2.status);
    if (typed) {
        SMOKE_EQ(7, o.value);
        SMOKE_EQ(59, o2.value);                         /* 50 + 9: its frame is intact */
    } else {
        SMOKE_EQ(1, first.entered);
        SMOKE_EQ(1, first.finished);
        SMOKE_EQ(7, first.tag);
        SMOKE_EQ(1, second.entered);                    /* its resume point was left alone */
        SMOKE_EQ(1, second.finished);
        SMOKE_EQ(59, second.tag);                       /* its frame is intact */
    }
}

void smoke_case_10(SMOKE_ARGS) { smoke_held_reuse(host, ctx, 1); }
void smoke_case_11(SMOKE_ARGS) { smoke_held_reuse(host, ctx, 0); }

/* Case 12: a persistent worker completes gates on request. */
typedef struct smoke_pump {
    td_auto_source *volatile source;
    volatile uint32_t token;
    volatile uint32_t request, served, stop;
    int64_t value;
} smoke_pump;

static void *smoke_pump_main(void *arg)
{
    smoke_pump *p = (smoke_pump *)arg;
    uint32_t seen = 0;
    while (!td_atomic_load_u32(&p->stop)) {
        uint32_t req = td_atomic_load_u32(&p->request);
        if (req == seen) {
            td_cpu_relax();
            continue;
        }
        td_auto_source_set_result((td_auto_source *)td_atomic_load_ptr((void *volatile *)&p->source),
                                  td_atomic_load_u32(&p->token), p->value);
        seen = req;
        td_atomic_store_u32(&p->served, req);
    }
    return NULL;
}

static int smoke_pump_round(smoke_pump *p, uint32_t round, int64_t value, int64_t *result)
{
    td_auto_source *g = td_auto_source_rent();
    td_task_i64 gt = td_auto_source_task_i64(g);
    p->value = value;
    td_atomic_store_ptr((void *volatile *)&p->source, g);
    td_atomic_store_u32(&p->token, gt.task.token);
    td_atomic_store_u32(&p->request, round);     /* the worker may complete at once */
    td_task_i64 t = smoke_held_start(gt, 0);
    while (smoke_status(t.task) == TD_PENDING)
        td_cpu_relax();
    td_outcome o;
    int rc = td_task_i64_get(t, &o);
    *result = o.value;
    if (!smoke_wait_flag(&p->served, round))
        return -100;
    return rc;
}

void smoke_case_12(SMOKE_ARGS)
{
    smoke_pump p;
    memset(&p, 0, sizeof(p));
    pthread_t th;
    SMOKE_TRUE(smoke_thread_start(&th, smoke_pump_main, &p));
    int bad_round = 0, rc = 0;
    int64_t got = 0, expected = 0;
    uint32_t round = 0;
    for (int i = 1; i <= 1000 && !bad_round; i++) {
        for (int sign = 1; sign >= -1 && !bad_round; sign -= 2) {
            expected = sign * i;
            rc = smoke_pump_round(&p, ++round, expected, &got);
            if (rc != TD_OK || got != expected)
                bad_round = i;
        }
    }
    td_atomic_store_u32(&p.stop, 1);
    smoke_thread_join(th);
    SMOKE_EQ(0, bad_round);
    SMOKE_EQ(TD_OK, rc);
    SMOKE_EQ(expected, got);
}
