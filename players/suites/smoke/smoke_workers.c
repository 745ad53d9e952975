/*
 * smoke_workers.c - cases where a worker thread completes a runner while the main thread
 * consumes and re-rents it: 10-11 (held-worker immediate reuse), 12 (x1000).
 * The runtime's invariant under test: once a step function has completed its runner,
 * nothing on the completing thread touches the runner again (async.h).
 */
#include "smoke.h"

/* The method: await `gate`, return `v` (+ the gate's value). Its step is wrapped so that a
 * worker can be held inside the step function after the runner has completed. */
typedef struct { td_task_i64 gate; int64_t v, got; } smoke_held_frame;

static volatile uint32_t smoke_hold_armed, smoke_hold_reached, smoke_hold_release;

static void smoke_held_inner(td_runner *r, smoke_held_frame *f)
{
    TD_BEGIN(r);
    TD_AWAIT_VALUE(r, f->gate, f->got);
    TD_RETURN_VALUE(r, f->v + f->got);
    TD_END(r);
}

static void smoke_held_step(td_runner *r, smoke_held_frame *f)
{
    smoke_held_inner(r, f);
    /* r and f belong to whoever consumes the task now: only the hold flags are touched. */
    if (td_atomic_load_u32(&smoke_hold_armed) && !td_is_main_thread()) {
        td_atomic_store_u32(&smoke_hold_reached, 1);
        while (!td_atomic_load_u32(&smoke_hold_release))
            td_cpu_relax();
    }
}
TD_METHOD_DEFINE(smoke_held, smoke_held_frame, smoke_held_step);

static td_task_i64 smoke_held_start(td_task_i64 gate, int64_t v)
{
    td_runner *r = td_runner_rent(&smoke_held_method);
    TD_FRAME(r, smoke_held_frame)->gate = gate;
    TD_FRAME(r, smoke_held_frame)->v = v;
    return td_runner_start_i64(r);
}

typedef struct { td_auto_source *s; uint32_t token; int64_t value; } smoke_completion;

static void *smoke_complete_on_worker(void *arg)
{
    smoke_completion *c = (smoke_completion *)arg;
    td_auto_source_set_result(c->s, c->token, c->value);
    return NULL;
}

static void smoke_held_reuse(const td_player_host *host, void *ctx, int typed)
{
    smoke_hold_armed = 1;
    smoke_hold_reached = 0;
    smoke_hold_release = 0;
    td_auto_source *g1 = td_auto_source_rent();
    smoke_completion c = { g1, td_auto_source_task(g1).token, typed ? 7 : 0 };
    td_task_i64 t = smoke_held_start(td_auto_source_task_i64(g1), 0);
    td_source *runner = t.task.source;
    pthread_t th;
    SMOKE_TRUE(smoke_thread_start(&th, smoke_complete_on_worker, &c));
    int held = smoke_wait_flag(&smoke_hold_reached, 1);
    /* The worker is held inside the step: consume and re-rent on the main thread. */
    td_outcome o;
    int rc = td_task_i64_get(t, &o);
    td_auto_source *g2 = td_auto_source_rent();
    td_task_i64 t2 = smoke_held_start(td_auto_source_task_i64(g2), typed ? 50 : 0);
    td_atomic_store_u32(&smoke_hold_release, 1);
    smoke_thread_join(th);
    smoke_hold_armed = 0;
    SMOKE_TRUE(held);
    SMOKE_EQ(TD_OK, rc);
    SMOKE_EQ(TD_SUCCEEDED, o.status);
    SMOKE_EQ(typed ? 7 : 0, o.value);
    SMOKE_TRUE(t2.task.source == runner);               /* the same runner, re-rented */
    SMOKE_EQ(TD_PENDING, smoke_status(t2.task));        /* the unwinding worker left it alone */
    td_auto_source_set_result(g2, td_auto_source_task(g2).token, typed ? 9 : 0);
    SMOKE_EQ(TD_OK, td_task_i64_get(t2, &o));
    SMOKE_EQ(TD_SUCCEEDED, o.status);
    SMOKE_EQ(typed ? 59 : 0, o.value);
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
