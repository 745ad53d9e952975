/*
 * cancellation.c - what cancellation costs (issue 44; FlowTask's "Performance and memory"
 * page measures the same on .NET and IL2CPP). Rows:
 *
 *   "Cancel <shape> <typed> N=n"    per method: a group of n suspended methods (td_subject.h,
 *                                   TD_CANCEL_*) started, its token cancelled, the frame that
 *                                   delivers it, the group consumed. Its controlNs (stated,
 *                                   not subtracted) is the same group completed normally in
 *                                   the same sample, so (ns - controlNs) / ops is the cost
 *                                   per cancelled method as FlowTask defines it: (cancelled -
 *                                   completed normally) / N (`tandem bench` prints it).
 *   "Complete <shape> <typed> N=n"  the control on its own: started, the frame that completes
 *                                   it, consumed.
 *   "Screen transition N=500 cancelling frame"
 *                                   500 suspended methods side by side, untyped: the wall
 *                                   time of the cancelling frame (cancel + frame) per frame.
 *   "Race per frame <loser> loser"  each frame a race of a next-frame wait against a signal
 *                                   that never comes, the loser a leaf wait or an async
 *                                   method; start, frame, consumption per frame. controlNs: an
 *                                   idle frame per frame, stated, not subtracted.
 * Shapes: side-by-side (n methods under one when_all) and nested (a chain of depth n), n =
 * 1, 100, 500, 4096. Every round is validated: every method suspended after the start and
 * finished after the frame, each cleanup run exactly once, every method and the group read
 * CANCELED with the group's token (or all succeeded, with the expected values, for the
 * control), the race won by the frame wait with its loser cancelled, and nothing left on the
 * heap by a measured round (the live-heap delta of the whole round, untimed parts included,
 * is 0 once warm). Matched retention raises the subject's pools to the group's size for
 * every group over the default capacities (so the 500-method groups are measured at equal
 * retention too); default retention keeps them.
 */
#include "td_bench.h"

/* CX_DEFAULT_POOL: the smallest default pool a group's methods come from (the runtime's
 * RunnerPoolCapacity, the stackful peers' coroutine pool); a larger group is matched. */
enum { CX_DEFAULT_POOL = 128, CX_RACE_FRAMES = 64 };

typedef struct cx_arm {
    const char *row;
    int typed, shape;
    uint32_t n;
    tb_meter cancel, complete, frame;   /* frame: the cancelling frame alone (its own row) */
    int64_t check;
    int steady;                         /* warm: a round must leave the heap as it found it */
} cx_arm;

static int cx_tally_ok(tb_run *r, const char *row, const cx_arm *a, int canceled, const td_cancel_tally *t)
{
    int64_t n = a->n, want_value = 0;
    if (a->typed && !canceled) want_value = a->shape == TD_CANCEL_NESTED ? n : n * (n + 1) / 2;
    return tb_check(r, row, "group outcome", canceled ? TD_TALLY_CANCELED : TD_TALLY_SUCCEEDED, t->status) &&
           tb_check(r, row, "group outcome names the token", canceled, t->token_ok) &&
           tb_check(r, row, "cleanups run", n, t->cleanups) &&
           tb_check(r, row, "methods read CANCELED with the token", canceled ? n : 0, t->canceled) &&
           tb_check(r, row, "group value", want_value, t->value);
}

static void cx_segment_start(tb_run *r, tb_meter *a, tb_meter *b)
{
    if (a) tb_start(r, a);
    if (b) tb_start(r, b);
}

static void cx_segment_stop(tb_run *r, tb_meter *a, tb_meter *b)
{
    if (b) tb_stop(r, b);
    if (a) tb_stop(r, a);
}

/* One group: start, (cancel +) frame, consume, each phase timed into `life` (and the frame
 * into `frame`); any meter may be NULL. 0, or -1 after reporting the validation failure. */
static int cx_group(tb_run *r, cx_arm *a, int canceled, tb_meter *life, tb_meter *frame)
{
    int64_t live0 = r->host->alloc_live_bytes();
    cx_segment_start(r, life, NULL);
    int rc = td_subject.cancel_start(a->typed, a->shape, a->n);
    cx_segment_stop(r, life, NULL);
    if (!tb_check(r, a->row, "start", 0, rc) || !tb_check(r, a->row, "suspended after start", a->n, td_subject.cancel_pending()))
        return -1;
    cx_segment_start(r, life, frame);
    rc = canceled ? td_subject.cancel_request() : 0;
    td_subject.frame();
    cx_segment_stop(r, life, frame);
    if (!tb_check(r, a->row, "cancel request", 0, rc) || !tb_check(r, a->row, "finished after the frame", 0, td_subject.cancel_pending()))
        return -1;
    td_cancel_tally t = { 0 };
    cx_segment_start(r, life, NULL);
    rc = td_subject.cancel_get(a->typed, &t);
    cx_segment_stop(r, life, NULL);
    if (!tb_check(r, a->row, "consume", 0, rc) || !cx_tally_ok(r, a->row, a, canceled, &t)) return -1;
    /* a warm round returns everything it rented (not the first: retention refills the pools) */
    if (r->measured && a->steady && !tb_check(r, a->row, "bytes left on the heap by a round", 0, r->host->alloc_live_bytes() - live0))
        return -1;
    a->check += t.cleanups;
    return 0;
}

/* A unit: the group cancelled, then the same group completed normally (the control). */
static int cx_unit(tb_run *r, void *arg)
{
    cx_arm *a = arg;
    if (cx_group(r, a, 1, &a->cancel, NULL)) return -1;
    return cx_group(r, a, 0, &a->complete, NULL);
}

static int cx_transition_unit(tb_run *r, void *arg)
{
    cx_arm *a = arg;
    return cx_group(r, a, 1, NULL, &a->frame);
}

/* Matched retention for every group over the default pools (td_bench.h's tb_retain_* start
 * at 1,024): the 500-method groups measured at equal retention as well. */
static void cx_retain(const tb_run *r, uint32_t n, int begin)
{
    if (r->matched && n > CX_DEFAULT_POOL && td_subject.retain) td_subject.retain(begin ? n : 0);
}

static uint32_t cx_min_units(const tb_run *r, uint32_t n)
{
    if (r->quick) return n == 1 ? 4 : 1;
    return n == 1 ? 256 : n <= 100 ? 8 : n <= 500 ? 2 : 1;
}

static const char *const cx_shapes[2] = { "side-by-side", "nested" };

static void cx_arm_rows(tb_run *r, int shape, int typed, uint32_t n)
{
    char cname[96], kname[96];
    const char *t = typed ? "typed" : "untyped";
    snprintf(cname, sizeof cname, "Cancel %s %s N=%u", cx_shapes[shape], t, n);
    snprintf(kname, sizeof kname, "Complete %s %s N=%u", cx_shapes[shape], t, n);
    if (!td_subject.cancel_start) {
        tb_na(r, cname);
        tb_na(r, kname);
        return;
    }
    if (!tb_want(r, cname) && !tb_want(r, kname)) return;
    cx_arm a = { 0 };
    a.row = cname;
    a.typed = typed;
    a.shape = shape;
    a.n = n;
    tb_meter_slot(&a.complete, 1);   /* emitted after the cancel meter: its own slot */
    tb_meter *ms[2] = { &a.cancel, &a.complete };
    uint32_t k = 0;
    cx_retain(r, n, 1);
    if (cx_group(r, &a, 1, NULL, NULL) == 0 && cx_group(r, &a, 0, NULL, NULL) == 0) {
        a.check = 0;
        a.steady = 1;
        k = tb_sample(r, ms, 2, cx_min_units(r, n), cx_unit, &a);
    }
    cx_retain(r, n, 0);
    /* gated or not is the gate configuration's (N=1 and the controls are report-only) */
    int gated = n > 1;
    tb_emit(r, cname, &a.cancel, (uint64_t)n * k, a.check, gated, (int64_t)a.complete.ns, 0, a.cancel.retained);
    tb_emit(r, kname, &a.complete, (uint64_t)n * k, a.check, 0, 0, 0, a.complete.retained);
}

/* 1 when a single-row function runs: the subject supports the row (else it is NA, with the
 * subject's reason) and the row is wanted (tb_want). */
static int cx_row_runs(const tb_run *r, const char *name, int supported)
{
    if (!supported) {
        tb_na(r, name);
        return 0;
    }
    return tb_want(r, name);
}

static void cx_transition_row(tb_run *r)
{
    const char *name = "Screen transition N=500 cancelling frame";
    if (!cx_row_runs(r, name, td_subject.cancel_start != NULL)) return;
    cx_arm a = { 0 };
    a.row = name;
    a.shape = TD_CANCEL_SIDE_BY_SIDE;
    a.n = 500;
    tb_meter *m = &a.frame;
    uint32_t k = 0;
    cx_retain(r, a.n, 1);
    if (cx_group(r, &a, 1, NULL, NULL) == 0) {
        a.check = 0;
        a.steady = 1;
        k = tb_sample(r, &m, 1, r->quick ? 1 : 4, cx_transition_unit, &a);
    }
    cx_retain(r, a.n, 0);
    tb_emit(r, name, &a.frame, k, a.check, 1, 0, 0, a.frame.retained);
}

/* ---- per-frame races ---------------------------------------------------------------------- */

typedef struct cx_race {
    const char *row;
    int loser;
    tb_meter race, idle;
    int64_t check;
    int steady;
} cx_race;

static int cx_race_frame(tb_run *r, cx_race *u)
{
    td_cancel_tally t = { 0 };
    tb_start(r, &u->race);
    int rc = td_subject.race_start(u->loser);
    td_subject.frame();
    int got = rc ? rc : td_subject.race_get(u->loser, &t);
    tb_stop(r, &u->race);
    int method = u->loser == TD_RACE_METHOD;
    if (!tb_check(r, u->row, "race start and consumption", 0, got) ||
        !tb_check(r, u->row, "race outcome", TD_TALLY_SUCCEEDED, t.status) ||
        !tb_check(r, u->row, "winner (the frame wait)", 0, t.value) ||
        !tb_check(r, u->row, "loser cancelled", 1, t.canceled) ||
        !tb_check(r, u->row, "loser cleanups", method, t.cleanups))
        return -1;
    u->check += t.canceled;
    return 0;
}

/* A unit: CX_RACE_FRAMES raced frames, then as many idle frames (the control). */
static int cx_race_unit(tb_run *r, void *arg)
{
    cx_race *u = arg;
    int64_t live0 = r->host->alloc_live_bytes();
    for (int f = 0; f < CX_RACE_FRAMES; f++)
        if (cx_race_frame(r, u)) return -1;
    for (int f = 0; f < CX_RACE_FRAMES; f++) {
        tb_start(r, &u->idle);
        td_subject.frame();
        tb_stop(r, &u->idle);
    }
    if (r->measured && u->steady && !tb_check(r, u->row, "bytes left on the heap by the races", 0, r->host->alloc_live_bytes() - live0))
        return -1;
    return 0;
}

static void cx_race_row(tb_run *r, int loser)
{
    const char *name = loser == TD_RACE_METHOD ? "Race per frame async-method loser" : "Race per frame leaf-wait loser";
    if (!cx_row_runs(r, name, td_subject.race_start != NULL)) return;
    cx_race u = { 0 };
    u.row = name;
    u.loser = loser;
    tb_meter *ms[2] = { &u.race, &u.idle };
    uint32_t k = 0;
    if (cx_race_unit(r, &u) == 0) {
        tb_meter_reset(&u.race);
        tb_meter_reset(&u.idle);
        /* the idle control is stated beside the row, never a row: never collected */
        tb_meter_slot(&u.idle, TB_SLOT_NONE);
        u.check = 0;
        u.steady = 1;
        k = tb_sample(r, ms, 2, r->quick ? 1 : 2, cx_race_unit, &u);
    }
    tb_emit(r, name, &u.race, (uint64_t)CX_RACE_FRAMES * k, u.check, 0, (int64_t)u.idle.ns, 0, u.race.retained);
}

int td_suite_cancellation(const td_player_host *host, void *ctx)
{
    static const uint32_t sizes[4] = { 1, 100, 500, 4096 };
    tb_run r;
    int rc = tb_begin(&r, host, ctx);
    if (rc) return rc;
    for (int shape = 0; shape < 2; shape++)
        for (int typed = 0; typed < 2; typed++)
            for (int z = 0; z < 4; z++) cx_arm_rows(&r, shape, typed, sizes[z]);
    cx_transition_row(&r);
    cx_race_row(&r, TD_RACE_LEAF);
    cx_race_row(&r, TD_RACE_METHOD);
    return tb_end(&r);
}
