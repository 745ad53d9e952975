/*
 * inspect_auto.c - what `tandem inspect` checks when run bare: the working tree staged
 * into WORK/staging, the AOT player of subject 'tandem' built there (or reused: the reuse
 * rule, `tandem verify --players-from`) into WORK/aot, and from them the inputs: the
 * staged runtime/contract.json, the generated translation unit, its LLVM IR and remarks,
 * and the include paths both backends compile it with. WORK is <build>/inspect.
 */
#include "inspect_auto.h"

#include "backend.h"
#include "tl_err.h"
#include "tl_fs.h"
#include "tl_json.h"
#include "tl_manifest.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef TANDEM_BINARY_DIR
#define TANDEM_BINARY_DIR "build"
#endif

int td_verb_build(int argc, char **argv);
int td_verb_stage(int argc, char **argv);

/* The subject's entry of player-aot.json: its TU, IR and remarks (relative names). */
static int player_entry(const char *players, const char *subject, ti_auto *out)
{
    char *pj = tl_join(players, "player-aot.json");
    cJSON *d = NULL;
    int rc = tl_json_load(pj, &d);
    if (rc) { free(pj); return 1; }
    const cJSON *e, *hit = NULL;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(d, "subjects")) {
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(e, "name");
        if (cJSON_IsString(n) && !strcmp(n->valuestring, subject)) hit = e;
    }
    static const char *const keys[3] = { "tu", "ir", "remarks" };
    char **dst[3] = { &out->tu, &out->ir, &out->remarks };
    for (int k = 0; k < 3 && hit; k++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(hit, keys[k]);
        if (!cJSON_IsString(v) || !v->valuestring[0] || strchr(v->valuestring, '/')) {
            tl_error(pj, keys[k], "subject '%s': missing or not a file name", subject);
            rc = 1;
            break;
        }
        *dst[k] = tl_join(players, v->valuestring);
    }
    if (!hit) { tl_error(pj, "subjects", "no subject '%s'", subject); rc = 1; }
    cJSON_Delete(d);
    free(pj);
    return rc;
}

int ti_auto_prepare(ti_auto *out)
{
    memset(out, 0, sizeof *out);
    char *work = tl_abspath(TANDEM_BINARY_DIR "/inspect");
    out->work = work;
    out->staging = tl_join(work, "staging");
    out->players = tl_join(work, "aot");
    printf("tandem inspect: staging the working tree into %s\n", out->staging);
    fflush(stdout);
    char *sargv[] = { "stage", "--out", out->staging, NULL };
    if (td_verb_stage(3, sargv) != 0) { tl_error(out->staging, NULL, "staging failed"); return 1; }

    char why[1024] = "";
    int reuse = tl_is_dir(out->players) && tl_players_reusable(out->players, out->staging, why, sizeof why);
    if (reuse) {
        printf("tandem inspect: reusing the AOT player %s (%s)\n", out->players, why);
    } else {
        printf("tandem inspect: building the AOT player of subject tandem into %s\n", out->players);
        fflush(stdout);
        char *bargv[] = { "build", "--backend", "aot", "--staging", out->staging, "--out", out->players,
                          "--subject", "tandem", NULL };
        if (td_verb_build(9, bargv) != 0) { tl_error(out->players, NULL, "the AOT build failed"); return 1; }
    }
    if (player_entry(out->players, "tandem", out)) return 1;
    out->contract = tl_join(out->staging, "runtime/contract.json");
    if (!tl_is_file(out->contract)) { tl_error(out->contract, NULL, "the staged contract is missing"); return 1; }
    out->ninc = td_backend_include_dirs(out->staging, out->inc, TI_AUTO_MAX_INC);
    out->out = tl_join(work, "report");
    return 0;
}

void ti_auto_free(ti_auto *a)
{
    free(a->work);
    free(a->staging);
    free(a->players);
    free(a->contract);
    free(a->tu);
    free(a->ir);
    free(a->remarks);
    free(a->out);
    for (int i = 0; i < a->ninc; i++) free(a->inc[i]);
    memset(a, 0, sizeof *a);
}
