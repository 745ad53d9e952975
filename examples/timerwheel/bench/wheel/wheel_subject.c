/*
 * wheel_subject.c - the timer wheel (src/, include/wheel/) as a Tandem subject: it
 * implements players/include/td_subject.h with the wheel's own idioms, so Tandem's suites
 * time and validate it beside `callback` (the lower bound) and `fcontext`.
 *
 *   frame waits (primary): each operation is a timer due in 1 tick whose callback records
 *     its result in the operation's slot; a frame is one wheel_tick().
 *   throughput loops: a timer's callback re-adds the same timer for the next tick until
 *     it has waited `awaits` ticks.
 * A timer wheel has no task values, gates, combinators or cancellation (a timer, once
 * added, fires: wheel.h has no way to remove it): those workloads are NULL, and their rows
 * are NA with the reason below. Everything is static (the slots and timers of
 * a cohort of TD_SUBJECT_MAX_COHORT): nothing is allocated while timing.
 */
#include <stdint.h>

#include "td_subject.h"
#include "wheel/wheel.h"

typedef struct wheel_slot {
    wheel_timer timer;
    int32_t done;
    uint32_t waited, awaits;
    int64_t value;
} wheel_slot;

static wheel wheel_main;
static wheel_slot wheel_slots[TD_SUBJECT_MAX_COHORT];

static int wheel_subject_init(void)
{
    wheel_init(&wheel_main);
    return 0;
}

static const char *wheel_capacities(void) { return "none (caller-owned timers, no pools)"; }

static void wheel_frame(void) { wheel_tick(&wheel_main); }

/* ---- frame waits: one timer due next tick per operation ---- */

static void wheel_on_due(void *arg) { ((wheel_slot *)arg)->done = 1; }

static int wheel_wait_schedule(int wl, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        wheel_slot *s = &wheel_slots[i];
        s->done = 0;
        s->value = wl == TD_WL_METHOD_NEXTFRAME_I64 ? (int64_t)i + 1 : 0;
        if (wheel_add(&wheel_main, &s->timer, 1, wheel_on_due, s)) return -1;
    }
    return 0;
}

static uint32_t wheel_pending(uint32_t n)
{
    uint32_t p = 0;
    for (uint32_t i = 0; i < n; i++) p += !wheel_slots[i].done;
    return p;
}

static uint32_t wheel_wait_pending(int wl, uint32_t n)
{
    (void)wl;
    return wheel_pending(n);
}

/* consumption: read each fired slot's result and release it */
static int64_t wheel_consume(int typed, uint32_t n)
{
    int64_t sum = 0;
    for (uint32_t i = 0; i < n; i++) {
        wheel_slot *s = &wheel_slots[i];
        if (!s->done) continue;
        s->done = 0;
        sum += typed ? s->value : 1;
    }
    return sum;
}

static int64_t wheel_wait_get(int wl, uint32_t n) { return wheel_consume(wl == TD_WL_METHOD_NEXTFRAME_I64, n); }

/* ---- throughput: a timer that re-arms itself for `awaits` ticks ---- */

static void wheel_on_loop(void *arg)
{
    wheel_slot *s = arg;
    if (++s->waited < s->awaits) {
        wheel_add(&wheel_main, &s->timer, 1, wheel_on_loop, s);
        return;
    }
    s->done = 1;
}

static int wheel_loops_start(int kind, uint32_t n, uint32_t awaits)
{
    for (uint32_t i = 0; i < n; i++) {
        wheel_slot *s = &wheel_slots[i];
        s->done = 0;
        s->waited = 0;
        s->awaits = awaits;
        s->value = kind == TD_LOOP_NEXTFRAME_I64 ? 42 : 0;
        if (wheel_add(&wheel_main, &s->timer, 1, wheel_on_loop, s)) return -1;
    }
    return 0;
}

static int64_t wheel_loops_get(int kind, uint32_t n) { return wheel_consume(kind == TD_LOOP_NEXTFRAME_I64, n); }

const td_subject_ops td_subject = {
    .name = "wheel",
    .kind = "callbacks",
    .init = wheel_subject_init,
    .capacities = wheel_capacities,
    .wait_schedule = wheel_wait_schedule,
    .frame = wheel_frame,
    .wait_pending = wheel_wait_pending,
    .wait_get = wheel_wait_get,
    .loops_start = wheel_loops_start,
    .loops_pending = wheel_pending,
    .loops_get = wheel_loops_get,
    .na_reason = "a timer wheel has no task values, gates, combinators or cancellation (examples/timerwheel)",
};
