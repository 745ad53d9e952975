/*
 * whenany.c - untyped/typed x 2, 16, 32 inputs: construct over pending producers,
 * complete every producer in reverse order (the last one wins), consume the winner
 * (report-only). Validated: the winner index (typed: its value 100 + index) every rep.
 * A unit is one timed call of `reps` constructions; a sample is as many units as make it
 * 1 ms (tb_sample).
 */
#include "td_bench.h"

typedef struct wa_unit {
    const char *row;
    int typed;
    uint32_t inputs, reps;
    int64_t want, check;
    tb_meter m;
} wa_unit;

static int wa_call(tb_run *r, void *arg)
{
    wa_unit *u = arg;
    tb_start(r, &u->m);
    int64_t got = td_subject.whenany(u->typed, u->inputs, u->reps);
    tb_stop(r, &u->m);
    u->check += got;
    return tb_check(r, u->row, "winner checksum", u->want, got) ? 0 : -1;
}

static void wa_row(tb_run *r, int typed, uint32_t inputs)
{
    char name[96];
    snprintf(name, sizeof name, "WhenAny %s inputs=%u", typed ? "typed" : "untyped", inputs);
    if (!td_subject.whenany) {
        tb_na(r, name);
        return;
    }
    if (!tb_want(r, name)) return;
    uint32_t reps = r->quick ? 64 : 65536 / inputs;
    int64_t per = typed ? 100 + (int64_t)inputs - 1 : (int64_t)inputs - 1;
    tb_check(r, name, "warm-up winner checksum", per * 16, td_subject.whenany(typed, inputs, 16));
    wa_unit u = { 0 };
    u.row = name;
    u.typed = typed;
    u.inputs = inputs;
    u.reps = reps;
    u.want = per * reps;
    tb_meter *m = &u.m;
    uint32_t k = tb_sample(r, &m, 1, 1, wa_call, &u);
    tb_emit(r, name, &u.m, (uint64_t)reps * k, u.check, 0, 0, 0, u.m.retained);
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
