/*
 * whenany.c - untyped/typed x 2, 16, 32 inputs: construct over pending producers,
 * complete every producer in reverse order (the last one wins), consume the winner
 * (report-only). Validated: the winner index (typed: its value 100 + index) every rep.
 */
#include "td_bench.h"

static void wa_row(tb_run *r, int typed, uint32_t inputs)
{
    char name[96];
    snprintf(name, sizeof name, "WhenAny %s inputs=%u", typed ? "typed" : "untyped", inputs);
    if (!tb_want(r, name)) return;
    if (!td_subject.whenany) {
        tb_na(r, name);
        return;
    }
    uint32_t reps = r->quick ? 64 : 65536 / inputs;
    int64_t per = typed ? 100 + (int64_t)inputs - 1 : (int64_t)inputs - 1;
    tb_check(r, name, "warm-up winner checksum", per * 16, td_subject.whenany(typed, inputs, 16));
    tb_meter m;
    tb_meter_reset(&m);
    tb_start(r, &m);
    int64_t got = td_subject.whenany(typed, inputs, reps);
    tb_stop(r, &m);
    tb_check(r, name, "winner checksum", per * reps, got);
    tb_emit(r, name, &m, reps, got, 0, 0, 0, m.retained);
}

int td_suite_whenany(const td_player_host *host, void *ctx)
{
    static const uint32_t ins[3] = { 2, 16, 32 };
    tb_run r;
    int rc = tb_begin(&r, host, ctx);
    if (rc) return rc;
    for (int typed = 0; typed < 2; typed++)
        for (int i = 0; i < 3; i++) wa_row(&r, typed, ins[i]);
    return tb_end(&r);
}
