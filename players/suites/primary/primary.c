/*
 * primary.c - the primary suite (SUITES.md): 24 rows, 16 gated, plus the empty-loop
 * control (report-only, never subtracted).
 *   N = 1 synchronous rows: 1,000,000 calls a unit (quick: 20,000).
 *   NextFrame / async-method NextFrame rows at N = 128 and 4096 concurrent waits:
 *   "scheduling" times starting (an async method's run to its first suspension) and
 *   storing the awaiter; the loop is ticked outside the timing (exactly one frame, and
 *   every wait must be pending before it and complete after it); "get-result" times
 *   consumption and release. Each sample runs one untimed warm cohort, then at least
 *   `reps` timed cohorts and as many more as make each of the two meters 1 ms (tb_sample).
 *   The 8 async-method rows run again with context flow on (report-only).
 */
#include "td_bench.h"

typedef int64_t (*primary_sync_fn)(uint32_t n);

/* One unit of a synchronous row (or of the empty-loop control: fn NULL): n calls, timed. */
typedef struct primary_sync {
    const char *name;
    primary_sync_fn fn;
    uint32_t n;
    int64_t want, check;
    tb_meter m;
} primary_sync;

static int primary_sync_unit(tb_run *r, void *arg)
{
    primary_sync *u = arg;
    tb_start(r, &u->m);
    int64_t got = u->fn ? u->fn(u->n) : (int64_t)tb_empty_loop(u->n);
    tb_stop(r, &u->m);
    u->check += got;
    return tb_check(r, u->name, u->fn ? "checksum" : "sum", u->want, got) ? 0 : -1;
}

static void primary_sync_row(tb_run *r, const char *name, primary_sync_fn fn, uint32_t n, int64_t want, int control)
{
    if (!fn && !control) {
        tb_na(r, name);
        return;
    }
    if (!tb_want(r, name)) return;
    primary_sync u = { name, fn, n, want, 0, { 0 } };
    tb_meter *m = &u.m;
    uint32_t k = tb_sample(r, &m, 1, 1, primary_sync_unit, &u);
    tb_emit(r, name, &u.m, (uint64_t)n * k, u.check, !control, 0, 0, control ? 0 : u.m.retained);
}

static const char *const primary_wl_names[] = { "NextFrame", "Async method NextFrame", "Async method<int> NextFrame" };

/* One cohort: schedule (timed), one frame (untimed, validated), get-result (timed). */
static int primary_cohort(tb_run *r, const char *row, int wl, uint32_t n, tb_meter *ms, tb_meter *mg, int64_t *check)
{
    int64_t want = wl == TD_WL_METHOD_NEXTFRAME_I64 ? (int64_t)n * (n + 1) / 2 : (int64_t)n;
    if (ms) tb_start(r, ms);
    int rc = td_subject.wait_schedule(wl, n);
    if (ms) tb_stop(r, ms);
    if (!tb_check(r, row, "schedule", 0, rc)) return -1;
    if (!tb_check(r, row, "pending before the frame", n, td_subject.wait_pending(wl, n))) return -1;
    td_subject.frame();
    if (!tb_check(r, row, "pending after one frame", 0, td_subject.wait_pending(wl, n))) return -1;
    if (mg) tb_start(r, mg);
    int64_t got = td_subject.wait_get(wl, n);
    if (mg) tb_stop(r, mg);
    if (!tb_check(r, row, "get-result checksum", want, got)) return -1;
    *check += got;
    return 0;
}

typedef struct primary_frames {
    const char *row;
    int wl;
    uint32_t n;
    tb_meter ms, mg;
    int64_t check;
} primary_frames;

static int primary_frames_unit(tb_run *r, void *arg)
{
    primary_frames *u = arg;
    return primary_cohort(r, u->row, u->wl, u->n, &u->ms, &u->mg, &u->check);
}

static void primary_frame_rows(tb_run *r, int wl, uint32_t n, int flow)
{
    char sname[128], gname[128];
    snprintf(sname, sizeof sname, "%s scheduling N=%u%s", primary_wl_names[wl], n, flow ? " flow on" : "");
    snprintf(gname, sizeof gname, "%s get-result N=%u%s", primary_wl_names[wl], n, flow ? " flow on" : "");
    if (!td_subject.wait_schedule) {
        tb_na(r, sname);
        tb_na(r, gname);
        return;
    }
    if (!tb_want(r, sname) && !tb_want(r, gname)) return;
    uint32_t reps = r->quick ? 1 : (n <= 128 ? 64 : 4), k = 0;
    int64_t warm = 0;
    primary_frames u = { 0 };
    u.row = sname;
    u.wl = wl;
    u.n = n;
    tb_meter_slot(&u.mg, 1);   /* scheduling and get-result segments interleave: two slots */
    tb_meter *ms[2] = { &u.ms, &u.mg };
    tb_set_flow(r, flow);
    tb_retain_begin(r, n);
    if (primary_cohort(r, sname, wl, n, NULL, NULL, &warm) == 0) k = tb_sample(r, ms, 2, reps, primary_frames_unit, &u);
    tb_retain_end(r, n);
    tb_set_flow(r, r->flow);
    int gated = !flow;
    tb_emit(r, sname, &u.ms, (uint64_t)n * k, u.check, gated, 0, 0, u.ms.retained);
    tb_emit(r, gname, &u.mg, (uint64_t)n * k, u.check, gated, 0, 0, u.mg.retained);
}

int td_suite_primary(const td_player_host *host, void *ctx)
{
    tb_run r;
    int rc = tb_begin(&r, host, ctx);
    if (rc) return rc;
    uint32_t n = r.quick ? 20000 : 1000000;
    int64_t tri = (int64_t)n * (n - 1) / 2;
    tb_set_flow(&r, 0);
    primary_sync_row(&r, "Completed get-result", td_subject.completed_get, n, n, 0);
    primary_sync_row(&r, "FromResult<int> get-result", td_subject.from_result_get, n, tri, 0);
    primary_sync_row(&r, "Async method completed get-result", td_subject.method_completed_get, n, n, 0);
    primary_sync_row(&r, "Async method completed<int> get-result", td_subject.method_completed_i64_get, n, tri, 0);
    primary_sync_row(&r, "empty-loop control", NULL, n, tri, 1);
    static const uint32_t sizes[2] = { 128, 4096 };
    for (int flow = 0; flow < 2; flow++)
        for (int wl = flow ? TD_WL_METHOD_NEXTFRAME : TD_WL_NEXTFRAME; wl <= TD_WL_METHOD_NEXTFRAME_I64; wl++)
            for (int s = 0; s < 2; s++) primary_frame_rows(&r, wl, sizes[s], flow);
    return tb_end(&r);
}
