/*
 * throughput.c - N concurrent loops of 16 awaits of next_frame() or yield() under the
 * subject's real loop, from the scheduling frame to the frame in which every loop
 * completed and was consumed, minus idle control frames measured beside it (16 idle
 * frames after each cohort; the fastest cohort's idle time times the cohorts is reported as
 * controlNs and subtracted). Reported per await. All 5 arms gated.
 * Validation: after 15 frames every loop is still pending (checked outside the timing),
 * after the 16th every loop completes; the consumed checksum (typed: 42 each) is checked.
 * A sample is at least `reps` cohorts and as many more as make the measured total 1 ms
 * (tb_sample); each cohort's idle control frames are measured right after it.
 * The control takes the fastest idle run, not the sum: a preemption inside a few
 * microseconds of idle frames (a busy host) would otherwise count milliseconds of another
 * process as idle cost and could subtract more than the sample measured (the gate refuses
 * such a report). Interference only ever adds time, so the fastest run is the idle cost.
 */
#include "td_bench.h"

#define TP_AWAITS 16u

static int tp_cohort(tb_run *r, const char *row, int kind, uint32_t n, tb_meter *m, int64_t *check)
{
    int64_t want = kind == TD_LOOP_NEXTFRAME_I64 ? 42 * (int64_t)n : (int64_t)n;
    if (m) tb_start(r, m);
    int rc = td_subject.loops_start(kind, n, TP_AWAITS);
    for (uint32_t f = 0; f + 1 < TP_AWAITS; f++) td_subject.frame();
    if (m) tb_stop(r, m);
    if (!tb_check(r, row, "start", 0, rc)) return -1;
    if (!tb_check(r, row, "pending after 15 frames", n, td_subject.loops_pending(n))) return -1;
    if (m) tb_start(r, m);
    td_subject.frame();
    int64_t got = td_subject.loops_get(kind, n);
    if (m) tb_stop(r, m);
    if (!tb_check(r, row, "consumed checksum after 16 frames", want, got)) return -1;
    *check += got;
    return 0;
}

typedef struct tp_unit {
    const char *row;
    int kind;
    uint32_t n;
    tb_meter m;
    uint64_t idle_min;    /* the fastest cohort's idle control frames, ns (UINT64_MAX: none) */
    int64_t check;
} tp_unit;

/* One timed cohort, then its idle control frames (timed, never instruction-counted: the
 * control is beside the sample, not part of it). */
static int tp_unit_run(tb_run *r, void *arg)
{
    tp_unit *u = arg;
    if (tp_cohort(r, u->row, u->kind, u->n, &u->m, &u->check)) return -1;
    tb_meter idle;
    tb_meter_reset(&idle);
    tb_meter_slot(&idle, TB_SLOT_NONE);
    tb_start(r, &idle);
    for (uint32_t f = 0; f < TP_AWAITS; f++) td_subject.frame();
    tb_stop(r, &idle);
    if (idle.ns < u->idle_min) u->idle_min = idle.ns;
    return 0;
}

static void tp_arm(tb_run *r, const char *name, int kind, uint32_t n)
{
    if (!td_subject.loops_start) {
        tb_na(r, name);
        return;
    }
    if (!tb_want(r, name)) return;
    uint32_t reps = r->quick ? 1 : 4, k = 0;
    int64_t warm = 0;
    tp_unit u = { 0 };
    u.row = name;
    u.kind = kind;
    u.n = n;
    u.idle_min = UINT64_MAX;
    tb_meter *m = &u.m;
    tb_retain_begin(r, n);
    if (tp_cohort(r, name, kind, n, NULL, &warm) == 0) k = tb_sample(r, &m, 1, reps, tp_unit_run, &u);
    tb_retain_end(r, n);
    /* Under the instruction meter the clock measures nothing (callgrind runs the code tens of
     * times slower, and a busy host once made the idle frames read dearer than the cohorts
     * there, failing the instruction arm): the control is neither checked nor subtracted. */
    int timed = !r->meter_on;
    uint64_t control = k && timed ? u.idle_min * k : 0;
    if (k && timed && control >= u.m.ns) {
        /* idle frames never cost more than a cohort's: a clock that says so is not trusted */
        tb_fail(r, name, "idle control %llu ns is not below the measurement %llu ns",
                (unsigned long long)control, (unsigned long long)u.m.ns);
        return;
    }
    tb_emit(r, name, &u.m, (uint64_t)n * TP_AWAITS * k, u.check, 1, (int64_t)control, timed, u.m.retained);
}

int td_suite_throughput(const td_player_host *host, void *ctx)
{
    tb_run r;
    int rc = tb_begin(&r, host, ctx);
    if (rc) return rc;
    tp_arm(&r, "nextframe N=1024", TD_LOOP_NEXTFRAME, 1024);
    tp_arm(&r, "nextframe N=4096", TD_LOOP_NEXTFRAME, 4096);
    tp_arm(&r, "yield N=1024", TD_LOOP_YIELD, 1024);
    tp_arm(&r, "yield N=4096", TD_LOOP_YIELD, 4096);
    tp_arm(&r, "nextframe typed N=1024", TD_LOOP_NEXTFRAME_I64, 1024);
    return tb_end(&r);
}
