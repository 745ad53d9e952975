/*
 * td_bench.h - the benchmark harness every bench suite shares (one copy per translation
 * unit: the suites of a subject are compiled together with it, by the same backend).
 *
 *   tb_begin        per run_suite call: checks the host, initialises the subject once,
 *                   records settings.
 *   tb_meter        a timed region, possibly made of several segments
 *                   (tb_start/tb_stop pairs): CLOCK_MONOTONIC ns, the allocation
 *                   counter deltas and the live-heap delta (retained bytes) of exactly
 *                   those segments, and the number of segments.
 *   meter slots     under the instruction meter (--meter instructions, callgrind) the
 *                   shell collects one slot per pass over the suite call: meters whose
 *                   segments interleave or nest (scheduling / get-result, lifecycle /
 *                   resumption) need different slots (tb_meter_slot); a meter in slot
 *                   TB_SLOT_NONE (throughput's idle control) is never collected.
 *   tb_sample       long samples: repeats a row's unit (its cohort, round or call, which
 *                   times its own segments) until every meter of the row has timed at
 *                   least TB_MIN_SAMPLE_NS (1 ms), so the clock's cost and granularity
 *                   stay small beside the sample; the untimed work between segments
 *                   (frames, gate resets, validation) is left out of the timing. Under
 *                   the instruction meter: exactly the suite's minimum count (every pass
 *                   over the suite must see the same operations, counts per op).
 *   tb_emit         one row sample (raw ns, ops, allocations, check, control, gated,
 *                   retained bytes) to the host, with its segments and units.
 *   tb_fail         a wrong result, a missing callback or a wrong frame count: the
 *                   report becomes completed:false.
 *   tb_na, tb_want  a row the subject cannot express is reported NA first (tb_na, also in
 *                   a support-only call); a supported row runs when tb_want says so
 *                   (host->filter, then host->row_wanted: the rows the shell asks for).
 *   tb_retain_*     matched retention around a 1,024- or 4,096-operation cohort.
 *   TB_OPAQUE(x)    hides a value from the optimiser (the workload must really run).
 * Raw times include the harness's call overhead; the empty-loop control is reported as
 * its own row, never subtracted (throughput subtracts its idle frames, as SUITES.md says).
 * Compiles under clang -O2 and tcc.
 */
#ifndef TD_BENCH_H
#define TD_BENCH_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* snprintf (the suites' row names) and vsnprintf (tb_fail) are declared here rather than
 * with <stdio.h>: under libtcc every header is parsed at the JIT player's start, and
 * <stdio.h> is the largest one these files need for nothing else. C11 7.1.4 lets a program
 * declare a library function itself; these are the standard prototypes (the names in
 * parentheses: a C library may also define them as macros). */
int (snprintf)(char *restrict buf, size_t size, const char *restrict fmt, ...);
int (vsnprintf)(char *restrict buf, size_t size, const char *restrict fmt, va_list ap);

#include "tandem_player.h"
#include "td_subject.h"

/* This harness's version (see "THE ABI VERSIONS" in tandem_player.h): bump it when what a
 * row sample means changes (its units, segments, minimum length, meters or slots), since
 * the player's reports and the gate read samples with this meaning. */
#define TD_BENCH_ABI_VERSION 1u

#define TB_OPAQUE(x) TD_OPAQUE(x)      /* runtime/port/td_port.h */

typedef struct tb_run {
    const td_player_host *host;
    void *ctx;
    int quick;
    int matched;          /* retention matched (default) */
    int flow;             /* --flow for rows without their own flow arm */
    int failed;           /* a validation failed during this call */
    int measured;         /* a measured call (host->sample_index >= 0), not a warm-up */
    void (*meter_on)(int32_t slot);   /* instruction meter (NULL: off) */
    void (*meter_off)(int32_t slot);
    void (*sample_shape)(void *ctx, const char *name, uint64_t segments, uint64_t units);
    int32_t (*row_wanted)(void *ctx, const char *name);   /* host->row_wanted (NULL: every row) */
    int support_only;     /* host->support_only: report the unsupported rows, run nothing */
} tb_run;

#define TB_SLOT_NONE (-1)

typedef struct tb_meter {
    uint64_t ns, allocs, frees, bytes;
    uint64_t segments;    /* tb_start/tb_stop pairs */
    uint64_t units;       /* repetitions of the row's unit (tb_sample); 1 when not set */
    int64_t retained;     /* live-heap delta summed over the segments (may be negative) */
    uint64_t t0;
    int64_t live0;
    td_player_alloc_counts a0;
    int32_t slot;         /* instruction-meter slot (0 unless tb_meter_slot) */
} tb_meter;

static int tb_subject_ready;

static void tb_meter_reset(tb_meter *m) { *m = (tb_meter){ 0 }; }
static void tb_meter_slot(tb_meter *m, int32_t slot) { m->slot = slot; }

static void tb_start(const tb_run *r, tb_meter *m)
{
    r->host->alloc_read(&m->a0);
    m->live0 = r->host->alloc_live_bytes();
    m->t0 = r->host->now_ns();
    if (r->meter_on) r->meter_on(m->slot);
}

static void tb_stop(const tb_run *r, tb_meter *m)
{
    if (r->meter_off) r->meter_off(m->slot);
    uint64_t t1 = r->host->now_ns();
    td_player_alloc_counts a1;
    r->host->alloc_read(&a1);
    m->retained += r->host->alloc_live_bytes() - m->live0;
    m->ns += t1 - m->t0;
    m->allocs += (a1.allocs - m->a0.allocs) + (a1.reallocs - m->a0.reallocs);
    m->frees += a1.frees - m->a0.frees;
    m->bytes += a1.bytes - m->a0.bytes;
    m->segments++;
}

static void tb_fail(tb_run *r, const char *row, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    r->failed = 1;
    r->host->fail(r->ctx, row, msg);
}

/* 1 when `got` is `want`; else a validation failure of `row`. */
static int tb_check(tb_run *r, const char *row, const char *what, int64_t want, int64_t got)
{
    if (want == got) return 1;
    tb_fail(r, row, "%s: expected %lld, got %lld", what, (long long)want, (long long)got);
    return 0;
}

/* Run the row `name`? host->filter (only rows whose name contains it), then the shell's
 * row_wanted (the rows asked for); never in a support-only call. A suite asks after it has
 * checked that the subject supports the row (an unsupported row is reported, tb_na, before
 * any of this: the shell learns the rows a subject supports from a support-only call). */
static int tb_want(const tb_run *r, const char *name)
{
    if (r->support_only || !td_player_name_selected(name, r->host->filter)) return 0;
    return !r->row_wanted || r->row_wanted(r->ctx, name);
}

/* `retained`: pass m->retained (the timed segments' live-heap delta). */
static void tb_emit(const tb_run *r, const char *name, const tb_meter *m, uint64_t ops, int64_t check,
                    int gated, int64_t control_ns, int subtract, int64_t retained)
{
    td_player_row row = { 0 };
    td_player_row_ext ext = { 0 };
    if (r->meter_on) r->host->meter_row(r->ctx, name, m->slot, m->segments);
    if (r->sample_shape) r->sample_shape(r->ctx, name, m->segments, m->units ? m->units : 1);
    row.name = name;
    row.ops = ops;
    row.ns = m->ns;
    row.allocs = m->allocs;
    row.frees = m->frees;
    row.bytes = m->bytes;
    row.check = check;
    ext.control_ns = control_ns;
    ext.subtract_control = subtract;
    ext.gated = gated;
    ext.retained_bytes = retained;
    r->host->row_ext(r->ctx, &row, &ext);
}

/* The row is NA for this subject (a NULL entry of td_subject): reported within host->filter. */
static void tb_na(const tb_run *r, const char *name)
{
    if (!td_player_name_selected(name, r->host->filter)) return;
    r->host->row_unsupported(r->ctx, name, td_subject.na_reason ? td_subject.na_reason : "not expressible");
}

/* Matched retention: pools raised to the cohort before a 1,024+ cohort, restored after. */
static void tb_retain_begin(const tb_run *r, uint32_t cohort)
{
    if (r->matched && cohort >= 1024 && td_subject.retain) td_subject.retain(cohort);
}
static void tb_retain_end(const tb_run *r, uint32_t cohort)
{
    if (r->matched && cohort >= 1024 && td_subject.retain) td_subject.retain(0);
}

static void tb_set_flow(const tb_run *r, int on)
{
    if (td_subject.set_flow && !r->support_only) td_subject.set_flow(on); /* support-only: not initialised */
}

/* Per run_suite call. Returns 0, or a TD_PLAYER_E_* code. */
static int tb_begin(tb_run *r, const td_player_host *host, void *ctx)
{
    *r = (tb_run){ 0 };
    r->host = host;
    r->ctx = ctx;
    if (host->size < TD_PLAYER_HOST_BENCH_SIZE || !host->row_ext || !host->fail || !host->alloc_live_bytes) {
        host->log(ctx, TD_PLAYER_LOG_ERROR, "the player shell is too old for benchmark suites");
        return TD_PLAYER_E_ABI;
    }
    r->quick = host->quick;
    r->measured = host->sample_index >= 0;
    r->matched = !host->retention || !td_player_name_is(host->retention, "default");
    r->flow = host->flow;
    if (host->size >= TD_PLAYER_HOST_METER_SIZE && host->meter_on && host->meter_off && host->meter_row) {
        r->meter_on = host->meter_on;
        r->meter_off = host->meter_off;
    }
    if (host->size >= TD_PLAYER_HOST_SHAPE_SIZE) r->sample_shape = host->sample_shape;
    if (host->size >= TD_PLAYER_HOST_WANT_SIZE) {
        r->row_wanted = host->row_wanted;
        r->support_only = host->support_only != 0;
    }
    /* a support-only call reads the subject's table only: no init, no settings, no flow */
    if (r->support_only) return TD_PLAYER_OK;
    if (!tb_subject_ready) {
        if (td_subject.init && td_subject.init() != 0) {
            host->log(ctx, TD_PLAYER_LOG_ERROR, "subject initialisation failed");
            return TD_PLAYER_E_SETUP;
        }
        tb_subject_ready = 1;
    }
    if (host->setting) {
        host->setting(ctx, "kind", td_subject.kind);
        host->setting(ctx, "poolCapacities", td_subject.capacities ? td_subject.capacities() : "none");
        host->setting(ctx, "retention", r->matched ? "matched" : "default");
    }
    tb_set_flow(r, r->flow);
    return TD_PLAYER_OK;
}

/* Long samples: the smallest timed total of a row's sample, and a bound on the units of one
 * sample (reached only with a clock that does not advance). */
#define TB_MIN_SAMPLE_NS TD_PLAYER_MIN_SAMPLE_NS
#define TB_MAX_UNITS (1u << 24)

/* One unit of a row: a cohort, round or call that times its own segments into the row's
 * meters. 0 ok, -1 after reporting a validation failure. */
typedef int (*tb_unit_fn)(tb_run *r, void *arg);

/* Runs `unit` at least `min_units` times and, in a measured call under the time meter,
 * until each of the `nm` meters has timed TB_MIN_SAMPLE_NS (a warm-up call's rows are
 * discarded: it runs the minimum, warming the same code at a fraction of the time);
 * records the count in every meter (m->units) and returns it (the units that completed:
 * a failed unit stops the sample). */
static uint32_t tb_sample(tb_run *r, tb_meter *const *ms, int nm, uint32_t min_units, tb_unit_fn unit, void *arg)
{
    uint32_t k = 0;
    for (;;) {
        if (k >= min_units) {
            int enough = 1;
            if (!r->meter_on && r->measured && k < TB_MAX_UNITS)
                for (int i = 0; i < nm; i++)
                    if (ms[i]->ns < TB_MIN_SAMPLE_NS) enough = 0;
            if (enough) break;
        }
        if (unit(r, arg)) break;
        k++;
    }
    for (int i = 0; i < nm; i++) ms[i]->units = k;
    return k;
}

/* Under the instruction meter: 1,000 empty segments as the row "(meter) empty segment",
 * the meter's own cost per segment (reported beside every row, never subtracted). */
static void tb_meter_calibrate(tb_run *r)
{
    if (!r->meter_on) return;
    tb_meter m;
    tb_meter_reset(&m);
    for (int i = 0; i < 1000; i++) {
        tb_start(r, &m);
        tb_stop(r, &m);
    }
    tb_emit(r, "(meter) empty segment", &m, m.segments, 0, 0, 0, 0, 0);
}

static int tb_end(tb_run *r)
{
    if (r->support_only) return TD_PLAYER_OK;
    tb_meter_calibrate(r);
    tb_set_flow(r, r->flow);
    return TD_PLAYER_OK;
}

/* The empty-loop control: n iterations of an opaque counter (reported, never subtracted). */
static uint64_t tb_empty_loop(uint64_t n)
{
    uint64_t s = 0;
    for (uint64_t i = 0; i < n; i++) {
        s += i;
        TB_OPAQUE(s);
    }
    return s;
}

/* builderlifecycle / buildercycle: one round of n gate methods. Any meter may be NULL.
 * Returns 0, or -1 after reporting the validation failure. */
static int tb_gate_round(tb_run *r, const char *row, int typed, uint32_t n, uint32_t susp, tb_meter *life,
                    tb_meter *res, tb_meter *start, tb_meter *consume, int64_t *check)
{
    int64_t want = 0;
    if (typed)
        for (uint32_t i = 0; i < n; i++)
            for (uint32_t k = 0; k < susp; k++) want += (int64_t)(i + k);
    else
        want = n;
    if (!tb_check(r, row, "gates reset", 0, td_subject.gates_reset(n, susp))) return -1;
    if (life) tb_start(r, life);
    if (start) tb_start(r, start);
    int rc = td_subject.gates_start(typed, n, susp);
    if (start) tb_stop(r, start);
    if (life) tb_stop(r, life);
    if (!tb_check(r, row, "start", 0, rc)) return -1;
    if (!tb_check(r, row, "suspended after start", n, td_subject.gates_pending(n))) return -1;
    for (uint32_t k = 0; k < susp; k++) {
        if (life) tb_start(r, life);
        if (res) tb_start(r, res);
        rc = td_subject.gates_complete(n, k);
        if (res) tb_stop(r, res);
        if (life) tb_stop(r, life);
        if (!tb_check(r, row, "gate completion", 0, rc)) return -1;
        if (!tb_check(r, row, "pending after a gate round", k + 1 < susp ? n : 0, td_subject.gates_pending(n)))
            return -1;
    }
    if (life) tb_start(r, life);
    if (consume) tb_start(r, consume);
    int64_t got = td_subject.gates_get(typed, n, susp);
    if (consume) tb_stop(r, consume);
    if (life) tb_stop(r, life);
    if (!tb_check(r, row, "consumed checksum", want, got)) return -1;
    *check += got;
    return 0;
}

#endif /* TD_BENCH_H */
