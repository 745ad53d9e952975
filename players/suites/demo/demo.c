/*
 * demo.c - the quick-start demo: a real frame loop driving async methods, narrated
 * frame by frame through host->log. The same file runs on both players (clang AOT
 * module and libtcc JIT), so the two narrations must match line for line.
 *
 * Cast: a "walker" that awaits next_frame three times, a "waiter" that awaits a gate the
 * walker opens, and a "racer" that races a 2-frame delay against a 5-frame delay.
 * The suite checks every outcome and reports it as one case, "demo".
 */
#include <stdio.h>
#include <tandem/tandem.h>
#include "tandem_player.h"

typedef struct demo_log { const td_player_host *host; void *ctx; } demo_log;
static demo_log demo_out;

static void demo_say(const char *what)
{
    char line[160];
    snprintf(line, sizeof line, "frame %u: %s", td_loop_frame(td_loop_main()), what);
    demo_out.host->log(demo_out.ctx, TD_PLAYER_LOG_INFO, line);
}

static td_completion_source *demo_gate;

typedef struct { int step; } demo_walker_frame;
static void demo_walker_step(td_runner *r, demo_walker_frame *f)
{
    TD_BEGIN(r);
    demo_say("walker starts");
    for (f->step = 1; f->step <= 3; f->step++) {
        TD_AWAIT(r, td_next_frame(TD_TIMING_UPDATE));
        demo_say(f->step == 3 ? "walker took step 3 and opens the gate" : "walker took a step");
    }
    td_completion_source_set_result(demo_gate, 40);
    TD_RETURN_VALUE(r, f->step - 1);
    TD_END(r);
}
TD_METHOD_DEFINE(demo_walker, demo_walker_frame, demo_walker_step);

typedef struct { int64_t got; } demo_waiter_frame;
static void demo_waiter_step(td_runner *r, demo_waiter_frame *f)
{
    TD_BEGIN(r);
    demo_say("waiter waits at the gate");
    TD_AWAIT_VALUE(r, td_completion_source_task_i64(demo_gate), f->got);
    demo_say("waiter passed the gate");
    TD_RETURN_VALUE(r, f->got + 2);
    TD_END(r);
}
TD_METHOD_DEFINE(demo_waiter, demo_waiter_frame, demo_waiter_step);

typedef struct { td_task in[2]; int64_t winner; } demo_racer_frame;
static void demo_racer_step(td_runner *r, demo_racer_frame *f)
{
    TD_BEGIN(r);
    f->in[0] = td_delay_frame(5, TD_TIMING_UPDATE);
    f->in[1] = td_delay_frame(2, TD_TIMING_UPDATE);
    demo_say("racer races a 5-frame delay against a 2-frame delay");
    TD_AWAIT_VALUE(r, td_when_any(f->in, 2), f->winner);
    demo_say(f->winner == 1 ? "racer: the 2-frame delay won" : "racer: the 5-frame delay won");
    TD_RETURN_VALUE(r, f->winner);
    TD_END(r);
}
TD_METHOD_DEFINE(demo_racer, demo_racer_frame, demo_racer_step);

static td_status demo_status(td_task t)
{
    td_status st = TD_PENDING;
    td_task_status(t, &st);
    return st;
}

static void demo_case(const td_player_host *host, void *ctx, void *arg)
{
    (void)arg;
    demo_gate = td_completion_source_new();
    td_task_i64 walker, waiter, racer;   /* each method's own start (TD_METHOD_DEFINE) */
    TD_METHOD_START_I64(demo_walker, td_runner_rent(&demo_walker_method), walker);
    TD_METHOD_START_I64(demo_waiter, td_runner_rent(&demo_waiter_method), waiter);
    TD_METHOD_START_I64(demo_racer, td_runner_rent(&demo_racer_method), racer);
    int frames = 0;
    while ((demo_status(walker.task) == TD_PENDING || demo_status(waiter.task) == TD_PENDING ||
            demo_status(racer.task) == TD_PENDING) && frames < 20) {
        td_loop_run_frame(td_loop_main());
        frames++;
    }
    td_outcome a, b, c;
    if (TD_PCHECK_I64(host, ctx, TD_OK, td_task_i64_get(walker, &a)) &&
        TD_PCHECK_I64(host, ctx, TD_OK, td_task_i64_get(waiter, &b)) &&
        TD_PCHECK_I64(host, ctx, TD_OK, td_task_i64_get(racer, &c))) {
        char line[160];
        snprintf(line, sizeof line, "done after %d frames: walker %lld steps, waiter %lld, racer winner %lld",
                 frames, (long long)a.value, (long long)b.value, (long long)c.value);
        host->log(ctx, TD_PLAYER_LOG_INFO, line);
        TD_PCHECK_I64(host, ctx, 3, a.value);
        TD_PCHECK_I64(host, ctx, 42, b.value);
        TD_PCHECK_I64(host, ctx, 1, c.value);
        TD_PCHECK_I64(host, ctx, 3, frames);
    }
    td_completion_source_free(demo_gate);
}

int td_suite_demo(const td_player_host *host, void *ctx)
{
    td_settings s;
    td_settings_defaults(&s);
    if (td_runtime_init(&s) != TD_OK)
        return TD_PLAYER_E_SETUP;
    demo_out.host = host;
    demo_out.ctx = ctx;
    host->expect_cases(ctx, 1);
    td_player_run_case(host, ctx, "demo", demo_case, NULL);
    td_runtime_shutdown();
    return TD_PLAYER_OK;
}
