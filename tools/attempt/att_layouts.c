/*
 * att_layouts.c - `tandem attempt --baseline REV --layouts K` (issue 42): the gate subject
 * and the baseline each measured in K layouts of the same code, so that the baseline verdict
 * reads a time ratio across layouts (gate_baseline.c) and not one placement's luck.
 *
 * Layout k has the seed td_layout_seed_derive(S, k + 1) of one attempt seed S (--layout-seed
 * S, else drawn; printed and in attempt.json "layouts"): a pad before each source of the
 * unit (players/include/td_layout.h), drawn per side (td_layout_unit_seed mixes in the
 * subject's label), so that no placement favours one side in every layout. The JIT player
 * re-lays its units itself (--layout-seed); AOT modules are built once per layout and side
 * into layouts/<k>/<side>-aot/. Gated round r runs layout (r - 1) % K, the load order still
 * alternating (att_player_argv); report-only processes run layout 0. Only the layouts some
 * planned round runs are built (min(K, rounds)); rounds the sequential rule adds cycle over
 * those. With one layout measured (--quick) nothing is built: the default build, unseeded.
 */
#include "att.h"
#include "att_run.h"
#include "../baseline/baseline.h"
#include "backend.h"
#include "tl_safe.h"

#include <cjson/cJSON.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The layouts some gated round runs: min(K, rounds). */
static int layouts_used(const att *a)
{
    return a->layouts < a->rounds ? a->layouts : a->rounds;
}

/* Over the layouts built: the sequential rule's processes (att_sequential.c) continue the
 * rounds past --rounds. */
int att_layout_of(const att *a, const aproc *q)
{
    int used = layouts_used(a);
    return q->round > 0 && used > 1 ? (q->round - 1) % used : 0;
}

static int layout_side_dir(const att *a, int b, int k, int side, char *out, size_t len)
{
    return snprintf(out, len, "%s/layouts/%d/%s-%s", a->dir, k, side ? "baseline" : "current", a->backends[b]) >=
           (int)len;
}

const char *att_layout_module(const att *a, int b, int k, int side, char *store, size_t len)
{
    char dir[PATH_MAX];
    if (k < 0 || k >= ATT_MAX_LAYOUTS || !a->seeds[k] || strcmp(a->backends[b], "aot") || (side && !a->bl) ||
        layout_side_dir(a, b, k, side, dir, sizeof dir))
        return NULL;
    snprintf(store, len, "%s/%s.so", dir, side ? a->bl->subject : a->subjects[0]);
    return store;
}

/* `tandem build` of one side's AOT module in layout k. 0 ok. */
static int layout_build(att *a, int b, int k, int side)
{
    char out[PATH_MAX], seed[32];
    layout_side_dir(a, b, k, side, out, sizeof out);
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)a->seeds[k]);
    char *sd = att_path(a, "staging"), *args[ATT_BUILD_ARGS];
    int n = att_build_args_begin(a, b, side ? a->bl->staging : sd, out, args);
    args[n++] = "--subject";
    args[n++] = side ? a->bl->subject : a->subjects[0];
    if (side) { args[n++] = "--label"; args[n++] = a->bl->name; }
    args[n++] = "--layout-seed";
    args[n++] = seed;
    att_build_args_end(a, args, n);
    int r = att_run_tool(a, args);
    free(sd);
    if (r && !tl_stop_signal)
        att_log(a, 1, "layout %d (seed %s): the %s build of the %s failed (exit %d); see attempt.log", k, seed,
                a->backends[b], side ? a->bl->name : a->subjects[0], r);
    return r != 0;
}

int att_stage_layouts(att *a)
{
    if (!a->bl || a->layouts < 2) return 0;
    att_manifest_set_str(a, "stage", "layouts");
    if (a->layout_seed < 0) /* drawn: the time and the process, reproducible through the manifest */
        a->layout_seed = (long long)((att_now_ns() ^ ((uint64_t)getpid() << 32)) & TD_LAYOUT_SEED_MAX);
    int used = layouts_used(a);
    cJSON *jl = cJSON_CreateObject(), *js = cJSON_CreateArray();
    cJSON_AddNumberToObject(jl, "count", a->layouts);
    cJSON_AddNumberToObject(jl, "measured", used);
    cJSON_AddNumberToObject(jl, "seed", (double)a->layout_seed);
    for (int k = 0; k < a->layouts; k++) { /* one layout measured: the default build */
        a->seeds[k] = used > 1 ? td_layout_seed_derive((uint64_t)a->layout_seed, (unsigned)k + 1) : 0;
        cJSON_AddItemToArray(js, cJSON_CreateNumber((double)a->seeds[k]));
    }
    cJSON_AddItemToObject(jl, "seeds", js);
    cJSON_DeleteItemFromObjectCaseSensitive(a->man, "layouts");
    cJSON_AddItemToObject(a->man, "layouts", jl);
    printf("attempt: %d layouts (%d measured in %d round(s)), seed %lld (--layout-seed %lld reproduces them)\n",
           a->layouts, used, a->rounds, a->layout_seed, a->layout_seed);
    att_log(a, 0, "layouts: %d, attempt seed %lld, measured %d", a->layouts, a->layout_seed, used);
    uint64_t t0 = att_now_ns();
    int bad = 0;
    for (int k = 0; k < used && !bad; k++)
        for (int b = 0; b < a->nb && !bad; b++)
            for (int side = 0; side < 2 && !bad; side++) {
                char m[PATH_MAX];
                if (!att_layout_module(a, b, k, side, m, sizeof m)) continue;
                att_log(a, 1, "layout %d (seed %llu): building the %s %s module", k, (unsigned long long)a->seeds[k],
                        a->backends[b], side ? a->bl->name : a->subjects[0]);
                bad = layout_build(a, b, k, side) || tl_stop_signal;
            }
    cJSON_AddNumberToObject(jl, "buildSeconds", (double)((att_now_ns() - t0) / 1000000) / 1000);
    if (bad) att_manifest_set_str(a, "stage", "layouts-failed");
    return bad;
}
