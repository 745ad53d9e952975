/*
 * buildercycle.c - one suspension at N = 128 (untyped), with separate scheduling,
 * gate-completion and consumption windows (report-only). The round itself is the
 * builderlifecycle round (tb_gate_round in td_bench.h). A sample is at least `reps`
 * rounds and as many more as make each of the three meters 1 ms (tb_sample).
 */
#include "td_bench.h"

typedef struct bc_unit {
    const char *row;
    uint32_t n;
    tb_meter m[3];
    int64_t check;
} bc_unit;

static int bc_round(tb_run *r, void *arg)
{
    bc_unit *u = arg;
    return tb_gate_round(r, u->row, 0, u->n, 1, NULL, &u->m[1], &u->m[0], &u->m[2], &u->check);
}

int td_suite_buildercycle(const td_player_host *host, void *ctx)
{
    static const char *const names[3] = { "Cycle scheduling N=128", "Cycle gate-completion N=128",
                                          "Cycle consumption N=128" };
    tb_run r;
    int rc = tb_begin(&r, host, ctx);
    if (rc) return rc;
    const uint32_t n = 128, reps = r.quick ? 1 : 64;
    if (!td_subject.gates_start) {
        for (int i = 0; i < 3; i++) tb_na(&r, names[i]);
        return tb_end(&r);
    }
    /* the three windows are one round: it runs when any of them is wanted */
    int wanted = 0;
    for (int i = 0; i < 3; i++) wanted |= tb_want(&r, names[i]);
    if (!wanted) return tb_end(&r);
    bc_unit u = { 0 };
    int64_t warm = 0;
    uint32_t k = 0;
    u.row = names[0];
    u.n = n;
    tb_meter *ms[3];
    for (int i = 0; i < 3; i++) {
        tb_meter_slot(&u.m[i], i);   /* the three windows interleave: one slot each */
        ms[i] = &u.m[i];
    }
    if (tb_gate_round(&r, names[0], 0, n, 1, NULL, NULL, NULL, NULL, &warm) == 0) k = tb_sample(&r, ms, 3, reps, bc_round, &u);
    for (int i = 0; i < 3; i++)
        if (tb_want(&r, names[i])) tb_emit(&r, names[i], &u.m[i], (uint64_t)n * k, u.check, 0, 0, 0, u.m[i].retained);
    return tb_end(&r);
}
