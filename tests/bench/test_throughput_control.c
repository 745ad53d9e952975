/*
 * test_throughput_control.c - the throughput suite's idle control under a scripted clock.
 *
 * The suite (players/suites/throughput/throughput.c, compiled in here) runs against a fake
 * subject whose frames advance a fake clock: 1,000 ns per frame while loops are pending,
 * 10 ns per idle frame. One idle frame of the sample is "preempted" (5 ms), as a busy host
 * does; the emitted control must still be the idle cost (160 ns per cohort) times the
 * cohorts, below the measurement, with no failure (summing the idle runs, as the suite once
 * did, reports a control above the measurement, a report the gate refuses). A clock whose
 * idle frames cost more than the loops' fails the row with its reason and emits nothing.
 */
#include "../runtime/td_test.h"
#include "fake_host.h"
#include "../../players/suites/throughput/throughput.c"

/* ---- the fake clock and subject --------------------------------------------------------- */

static uint64_t clock_ns;
static uint64_t busy_frame_ns = 1000, idle_frame_ns = 10;
static uint64_t idle_frames, preempt_at = 100, preempt_ns = 5000000;  /* the 100th idle frame */
static uint32_t loops_n, loops_awaits, loops_frames;

static int fake_loops_start(int kind, uint32_t n, uint32_t awaits)
{
    (void)kind;
    loops_n = n;
    loops_awaits = awaits;
    loops_frames = 0;
    return 0;
}

static void fake_frame(void)
{
    if (loops_n && loops_frames < loops_awaits) {
        loops_frames++;
        clock_ns += busy_frame_ns;
        return;
    }
    idle_frames++;
    clock_ns += idle_frame_ns + (idle_frames == preempt_at ? preempt_ns : 0);
}

static uint32_t fake_loops_pending(uint32_t n) { return loops_frames < loops_awaits ? n : 0; }

static int64_t fake_loops_get(int kind, uint32_t n)
{
    loops_n = 0;
    return kind == TD_LOOP_NEXTFRAME_I64 ? 42 * (int64_t)n : (int64_t)n;
}

const td_subject_ops td_subject = {
    .frame = fake_frame,
    .loops_start = fake_loops_start,
    .loops_pending = fake_loops_pending,
    .loops_get = fake_loops_get,
};

/* ---- the fake host ------------------------------------------------------------------- */

static uint64_t got_ns, got_control, got_units, got_ops;
static int got_rows, got_fails, got_subtract;
static char got_fail[512];

static uint64_t fake_now(void) { return clock_ns; }
static int64_t fake_live(void) { return 0; }

static void fake_row_ext(void *ctx, const td_player_row *row, const td_player_row_ext *ext)
{
    (void)ctx;
    if (!strncmp(row->name, "(meter)", 7)) return;   /* the meter's own row, under the meter */
    got_rows++;
    got_ns = row->ns;
    got_ops = row->ops;
    got_control = (uint64_t)ext->control_ns;
    got_subtract = ext->subtract_control;
}

static void fake_fail(void *ctx, const char *row, const char *message)
{
    (void)ctx, (void)row;
    got_fails++;
    snprintf(got_fail, sizeof got_fail, "%s", message);
}

static void fake_shape(void *ctx, const char *name, uint64_t segments, uint64_t units)
{
    (void)ctx, (void)name, (void)segments;
    got_units = units;
}

static int meter_segments;
static void fake_meter_on(int32_t slot) { (void)slot; }
static void fake_meter_off(int32_t slot) { (void)slot; meter_segments++; }
static void fake_meter_row(void *ctx, const char *name, int32_t slot, uint64_t segments)
{
    (void)ctx, (void)name, (void)slot, (void)segments;
}

static int metered;   /* run under the (fake) instruction meter */

static void run(void)
{
    td_player_host h = fake_host("nextframe N=1024", fake_now, fake_live, fake_row_ext, fake_fail);
    h.sample_shape = fake_shape;
    if (metered) {
        h.meter_on = fake_meter_on;
        h.meter_off = fake_meter_off;
        h.meter_row = fake_meter_row;
    }
    got_rows = got_fails = got_subtract = 0;
    got_units = 0;
    TD_CHECK(td_suite_throughput(&h, NULL) == TD_PLAYER_OK);
}

/* a preempted idle run: the control is the undisturbed idle cost per cohort */
static void preempted_idle_run(void)
{
    run();
    if (td_test_failed_flag) return;
    TD_CHECK(got_rows == 1 && got_fails == 0);
    TD_CHECK(got_subtract == 1);
    TD_CHECK(got_units >= 1);
    TD_CHECK(got_ns == got_units * TP_AWAITS * busy_frame_ns);
    TD_CHECK(got_ops == got_units * 1024u * TP_AWAITS);
    TD_CHECK(got_control == got_units * TP_AWAITS * idle_frame_ns);
    TD_CHECK(got_control < got_ns);
    TD_CHECK(idle_frames >= preempt_at);     /* the preemption happened inside the sample */
    printf("preempted idle run: %llu cohorts, ns %llu, control %llu\n", (unsigned long long)got_units,
           (unsigned long long)got_ns, (unsigned long long)got_control);
}

/* idle frames dearer than the loops': refused with the reason, nothing emitted */
static void idle_dearer_than_loops(void)
{
    idle_frame_ns = 2000;
    preempt_at = 0;
    run();
    if (td_test_failed_flag) return;
    TD_CHECK(got_rows == 0 && got_fails == 1);
    TD_CHECK(strstr(got_fail, "idle control") && strstr(got_fail, "is not below the measurement"));
    printf("idle dearer than the loops: %s\n", got_fail);
}

/* the same clock under the instruction meter: the row is emitted, no control, no failure */
static void idle_dearer_under_the_meter(void)
{
    idle_frame_ns = 2000;
    preempt_at = 0;
    metered = 1;
    meter_segments = 0;
    run();
    metered = 0;
    if (td_test_failed_flag) return;
    TD_CHECK(meter_segments > 0);            /* the meter really was on */
    TD_CHECK(got_fails == 0);
    TD_CHECK(got_rows == 1);
    TD_CHECK(got_ns > 0 && got_control == 0 && got_subtract == 0);
    printf("idle dearer under the meter: %d row(s), control %llu, not subtracted\n", got_rows,
           (unsigned long long)got_control);
}

int main(void)
{
    TD_RUN(preempted_idle_run);
    TD_RUN(idle_dearer_than_loops);
    TD_RUN(idle_dearer_under_the_meter);
    return TD_TEST_SUMMARY();
}
