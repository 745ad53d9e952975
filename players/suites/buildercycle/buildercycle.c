/*
 * buildercycle.c - one suspension at N = 128 (untyped), with separate scheduling,
 * gate-completion and consumption windows (report-only). The round itself is the
 * builderlifecycle round (tb_gate_round in td_bench.h).
 */
#include "td_bench.h"


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
    tb_meter m[3];
    int64_t check = 0, warm = 0;
    for (int i = 0; i < 3; i++) {
        tb_meter_reset(&m[i]);
        tb_meter_slot(&m[i], i);   /* the three windows interleave: one slot each */
    }
    if (tb_gate_round(&r, names[0], 0, n, 1, NULL, NULL, NULL, NULL, &warm) == 0)
        for (uint32_t k = 0; k < reps; k++)
            if (tb_gate_round(&r, names[0], 0, n, 1, NULL, &m[1], &m[0], &m[2], &check)) break;
    for (int i = 0; i < 3; i++)
        if (tb_want(&r, names[i])) tb_emit(&r, names[i], &m[i], (uint64_t)n * reps, check, 0, 0, 0, m[i].retained);
    return tb_end(&r);
}
