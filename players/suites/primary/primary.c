/*
 * primary.c - the primary suite (SUITES.md): 24 rows, 16 gated, plus the empty-loop
 * control (report-only, never subtracted).
 *   N = 1 synchronous rows: 1,000,000 calls a sample (quick: 20,000).
 *   NextFrame / async-method NextFrame rows at N = 128 and 4096 concurrent waits:
 *   "scheduling" times starting (an async method's run to its first suspension) and
 *   storing the awaiter; the loop is ticked outside the timing (exactly one frame, and
 *   every wait must be pending before it and complete after it); "get-result" times
 *   consumption and release. Each sample runs one untimed warm cohort, then `reps`
 *   timed cohorts. The 8 async-method rows run again with context flow on (report-only).
 */
#include "td_bench.h"

typedef int64_t (*primary_sync_fn)(uint32_t n);

static void primary_sync_row(tb_run *r, const char *name, primary_sync_fn fn, uint32_t n, int64_t want)
{
    if (!tb_want(r, name)) return;
    if (!fn) {
        tb_na(r, name);
        return;
    }
    tb_meter m;
    tb_meter_reset(&m);
    tb_start(r, &m);
    int64_t got = fn(n);
    tb_stop(r, &m);
    tb_check(r, name, "checksum", want, got);
    tb_emit(r, name, &m, n, got, 1, 0, 0, m.retained);
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

static void primary_frame_rows(tb_run *r, int wl, uint32_t n, int flow)
{
    char sname[128], gname[128];
    snprintf(sname, sizeof sname, "%s scheduling N=%u%s", primary_wl_names[wl], n, flow ? " flow on" : "");
    snprintf(gname, sizeof gname, "%s get-result N=%u%s", primary_wl_names[wl], n, flow ? " flow on" : "");
    if (!tb_want(r, sname) && !tb_want(r, gname)) return;
    if (!td_subject.wait_schedule) {
        tb_na(r, sname);
        tb_na(r, gname);
        return;
    }
    uint32_t reps = r->quick ? 1 : (n <= 128 ? 64 : 4);
    int64_t check = 0, warm = 0;
    tb_meter ms, mg;
    tb_meter_reset(&ms);
    tb_meter_reset(&mg);
    tb_meter_slot(&mg, 1);   /* scheduling and get-result segments interleave: two slots */
    tb_set_flow(r, flow);
    tb_retain_begin(r, n);
    if (primary_cohort(r, sname, wl, n, NULL, NULL, &warm) == 0)
        for (uint32_t k = 0; k < reps; k++)
            if (primary_cohort(r, sname, wl, n, &ms, &mg, &check)) break;
    tb_retain_end(r, n);
    tb_set_flow(r, r->flow);
    int gated = !flow;
    tb_emit(r, sname, &ms, (uint64_t)n * reps, check, gated, 0, 0, ms.retained);
    tb_emit(r, gname, &mg, (uint64_t)n * reps, check, gated, 0, 0, mg.retained);
}

int td_suite_primary(const td_player_host *host, void *ctx)
{
    tb_run r;
    int rc = tb_begin(&r, host, ctx);
    if (rc) return rc;
    uint32_t n = r.quick ? 20000 : 1000000;
    int64_t tri = (int64_t)n * (n - 1) / 2;
    tb_set_flow(&r, 0);
    primary_sync_row(&r, "Completed get-result", td_subject.completed_get, n, n);
    primary_sync_row(&r, "FromResult<int> get-result", td_subject.from_result_get, n, tri);
    primary_sync_row(&r, "Async method completed get-result", td_subject.method_completed_get, n, n);
    primary_sync_row(&r, "Async method completed<int> get-result", td_subject.method_completed_i64_get, n, tri);
    if (tb_want(&r, "empty-loop control")) {
        tb_meter m;
        tb_meter_reset(&m);
        tb_start(&r, &m);
        uint64_t s = tb_empty_loop(n);
        tb_stop(&r, &m);
        tb_check(&r, "empty-loop control", "sum", tri, (int64_t)s);
        tb_emit(&r, "empty-loop control", &m, n, (int64_t)s, 0, 0, 0, 0);
    }
    static const uint32_t sizes[2] = { 128, 4096 };
    for (int flow = 0; flow < 2; flow++)
        for (int wl = flow ? TD_WL_METHOD_NEXTFRAME : TD_WL_NEXTFRAME; wl <= TD_WL_METHOD_NEXTFRAME_I64; wl++)
            for (int s = 0; s < 2; s++) primary_frame_rows(&r, wl, sizes[s], flow);
    return tb_end(&r);
}
