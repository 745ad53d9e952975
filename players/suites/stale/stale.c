/*
 * stale.c - the staleness table (stale_table.h, issue 40) as a players' suite: one case per
 * row and pass, in the single-unit builds a user ships (AOT module, JIT translation unit).
 *
 * The same rows run in tests/runtime/test_stale_table.c against the runtime's own builds;
 * here each row is a case ("<ctor> [<variant>] pooled|unpooled|shared") reported through the
 * host, so `tandem smoke` on a project whose smoke suite is this one prints the per-row table
 * (tests/smoke/stale_players.sh). The passes are the test's (stale_table.h, STALE_PASS_*).
 */
#include <stdio.h>
#include <tandem/tandem.h>
#include "tandem_player.h"
#include "stale_table.h"

typedef struct stale_case_env {
    const td_player_host *host;
    void *ctx;
    int pass;
} stale_case_env;

/* A wrong answer of the case's row (the host keeps the first of a case). */
static void stale_case_fail(void *ctx, const stale_row *row, const char *query, long long want, long long got,
                            int line)
{
    stale_case_env *env = (stale_case_env *)ctx;
    char expected[160], actual[32];
    (void)row;
    snprintf(expected, sizeof expected, "%s: %lld", query, want);
    snprintf(actual, sizeof actual, "%lld", got);
    env->host->case_fail(env->ctx, "players/suites/stale/stale_table.h", line, expected, actual);
}

static stale_case_env stale_env;

static void stale_case(const td_player_host *host, void *ctx, void *arg)
{
    stale_report rep;
    stale_env.host = host;
    stale_env.ctx = ctx;
    memset(&rep, 0, sizeof rep);
    rep.fail = stale_case_fail;
    rep.ctx = &stale_env;
    stale_run_row((const stale_row *)arg, &rep, stale_env.pass);
}

/* The cases of every pass (expect_cases). */
static int stale_case_count(void)
{
    int n = 0;
    for (int pass = 0; pass < STALE_PASSES; pass++)
        for (int a = 0; a < STALE_AREAS; a++)
            for (int i = 0; i < stale_area_sizes[a]; i++)
                n += stale_row_in_pass(&stale_areas[a][i], pass);
    return n;
}

/* One pass on a fresh runtime (the unpooled one with pools that keep nothing). */
static int stale_pass(const td_player_host *host, void *ctx, int pass)
{
    td_settings s;
    td_settings_defaults(&s);
    s.worker_threads = 1;                   /* the thread-pool rows */
    if (td_runtime_init(&s) != TD_OK)
        return TD_PLAYER_E_SETUP;
    if (pass == STALE_PASS_UNPOOLED)
        td_set_source_pool_capacity(0);
    stale_env.pass = pass;
    for (int a = 0; a < STALE_AREAS; a++)
        for (int i = 0; i < stale_area_sizes[a]; i++) {
            const stale_row *row = &stale_areas[a][i];
            char name[240];
            if (!stale_row_in_pass(row, pass))
                continue;
            snprintf(name, sizeof name, "%s [%s] %s", row->ctor, row->variant, stale_pass_names[pass]);
            td_player_run_case(host, ctx, name, stale_case, (void *)row);
        }
    td_runtime_shutdown();
    return TD_PLAYER_OK;
}

int td_suite_stale(const td_player_host *host, void *ctx)
{
    /* Cases are recorded from the first measured call only: run the table once. */
    if (host->sample_index != 0)
        return TD_PLAYER_OK;
    host->expect_cases(ctx, stale_case_count());
    for (int pass = 0; pass < STALE_PASSES; pass++) {
        int rc = stale_pass(host, ctx, pass);
        if (rc)
            return rc;
    }
    return TD_PLAYER_OK;
}
