/*
 * builderlifecycle.c - typed and untyped async methods that suspend 1 or 4 times on
 * preallocated manual gates, N = 1, 128, 4096 concurrent calls, flow off and on
 * (24 arms). Two metrics per arm (48):
 *   "Lifecycle ..."   per call: start, every resumption, consumption and the library's
 *                     deferred return work before reuse (gated: flow off, N >= 128);
 *   "Resumption ..."  per resumption: the gate-completion windows only (report-only).
 * Gates are reset outside the timing; after the start every call must be suspended,
 * after each completion round still suspended until the last, then complete; the
 * consumed checksum is validated. A sample is at least `reps` rounds and as many more as
 * make both meters 1 ms (tb_sample).
 */
#include "td_bench.h"

typedef struct bl_unit {
    const char *row;
    int typed;
    uint32_t n, susp;
    tb_meter life, res;
    int64_t check;
} bl_unit;

static int bl_round(tb_run *r, void *arg)
{
    bl_unit *u = arg;
    return tb_gate_round(r, u->row, u->typed, u->n, u->susp, &u->life, &u->res, NULL, NULL, &u->check);
}

static void bl_arm(tb_run *r, int flow, int typed, uint32_t susp, uint32_t n)
{
    char lname[128], rname[128];
    const char *t = typed ? "typed" : "untyped";
    const char *f = flow ? "on" : "off";
    snprintf(lname, sizeof lname, "Lifecycle %s suspensions=%u N=%u flow %s", t, susp, n, f);
    snprintf(rname, sizeof rname, "Resumption %s suspensions=%u N=%u flow %s", t, susp, n, f);
    if (!td_subject.gates_start) {
        tb_na(r, lname);
        tb_na(r, rname);
        return;
    }
    if (!tb_want(r, lname) && !tb_want(r, rname)) return;
    uint32_t reps = n == 1 ? (r->quick ? 64 : 4096) : n <= 128 ? (r->quick ? 1 : 32) : (r->quick ? 1 : 2), k = 0;
    int64_t warm = 0;
    bl_unit u = { 0 };
    u.row = lname;
    u.typed = typed;
    u.n = n;
    u.susp = susp;
    tb_meter_slot(&u.res, 1);   /* nested in life's segments: its own slot */
    tb_meter *ms[2] = { &u.life, &u.res };
    tb_set_flow(r, flow);
    tb_retain_begin(r, n);
    if (tb_gate_round(r, lname, typed, n, susp, NULL, NULL, NULL, NULL, &warm) == 0)
        k = tb_sample(r, ms, 2, reps, bl_round, &u);
    tb_retain_end(r, n);
    tb_set_flow(r, r->flow);
    int gated = !flow && n >= 128;
    tb_emit(r, lname, &u.life, (uint64_t)n * k, u.check, gated, 0, 0, u.life.retained);
    tb_emit(r, rname, &u.res, (uint64_t)n * k * susp, u.check, 0, 0, 0, u.res.retained);
}

int td_suite_builderlifecycle(const td_player_host *host, void *ctx)
{
    tb_run r;
    int rc = tb_begin(&r, host, ctx);
    if (rc) return rc;
    static const uint32_t sizes[3] = { 1, 128, 4096 };
    static const uint32_t susps[2] = { 1, 4 };
    for (int flow = 0; flow < 2; flow++)
        for (int typed = 0; typed < 2; typed++)
            for (int s = 0; s < 2; s++)
                for (int z = 0; z < 3; z++) bl_arm(&r, flow, typed, susps[s], sizes[z]);
    return tb_end(&r);
}
