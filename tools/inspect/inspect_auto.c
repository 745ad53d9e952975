/*
 * inspect_auto.c - what `tandem inspect` checks when run bare: the project (--project, else
 * the nearest tandem.json upward, else Tandem's own) staged into WORK/staging, the AOT
 * player of its gate subject built there (or reused: the reuse rule, `tandem verify
 * --players-from`) into WORK/aot, and from them the inputs: the staged contract
 * (runtime/contract.json, the project's runtime.contract), the generated translation unit,
 * its LLVM IR and remarks, and the include paths both backends compile it with. WORK is
 * the project's results folder's inspect/ (tl_home.h: <project>/.tandem/inspect, or
 * <build>/inspect for Tandem's own project in a build tree).
 */
#include "inspect_auto.h"

#include "backend.h"
#include "stage/stage_project.h"
#include "tl_err.h"
#include "tl_fs.h"
#include "tl_hash.h"
#include "tl_home.h"
#include "tl_json.h"
#include "tl_manifest.h"
#include "tl_project.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int td_verb_build(int argc, char **argv);

/* The subject's entry of player-aot.json: its TU, IR and remarks (relative names). With
 * out NULL: only whether the player has the subject (0 yes), nothing reported. */
static int player_entry(const char *players, const char *subject, ti_auto *out)
{
    char *pj = tl_join(players, "player-aot.json");
    cJSON *d = NULL;
    tl_err_capture(NULL, 0, !out);
    int rc = tl_json_load(pj, &d);
    tl_err_capture(NULL, 0, 0);
    if (rc) { free(pj); return 1; }
    const cJSON *e, *hit = NULL;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(d, "subjects")) {
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(e, "name");
        if (cJSON_IsString(n) && !strcmp(n->valuestring, subject)) hit = e;
    }
    if (!out) {
        cJSON_Delete(d);
        free(pj);
        return !hit;
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


int ti_auto_prepare(ti_auto *out, const char *project, int contract_given)
{
    memset(out, 0, sizeof *out);
    tl_project p;
    if (tl_project_open(project, tl_home(), &p)) {
        tl_project_free(&p);
        return 1;
    }
    int rc = 1;
    out->project = strdup(p.file);
    out->subject = strdup(p.gate_subject);
    if (!p.contract && !contract_given) {
        tl_error(p.file, "runtime.contract", "the project names no codegen contract, so a bare `tandem inspect` has "
                 "nothing to check: name one there (see tandem inspect --help), or give --contract FILE");
        goto done;
    }
    out->work = tl_home_work(p.root, "inspect");   /* each project its own: never one staging */
    if (!out->work) { tl_error(p.root, NULL, "out of memory"); goto done; }
    out->staging = tl_join(out->work, "staging");
    out->players = tl_join(out->work, "aot");
    printf("tandem inspect: staging the project %s into %s\n", p.file, out->staging);
    fflush(stdout);
    if (stage_project_run(p.root, out->staging) != 0) { tl_error(out->staging, NULL, "staging failed"); goto done; }

    char why[1024] = "";
    int reuse = tl_is_dir(out->players) && tl_players_reusable(out->players, out->staging, why, sizeof why);
    if (reuse && player_entry(out->players, out->subject, NULL)) reuse = 0; /* built for another subject */
    if (reuse) {
        printf("tandem inspect: reusing the AOT player %s (%s)\n", out->players, why);
    } else {
        printf("tandem inspect: building the AOT player of subject %s (the project's gate subject) into %s\n",
               out->subject, out->players);
        fflush(stdout);
        char *bargv[] = { "build", "--backend", "aot", "--staging", out->staging, "--out", out->players,
                          "--subject", out->subject, NULL };
        if (td_verb_build(9, bargv) != 0) { tl_error(out->players, NULL, "the AOT build failed"); goto done; }
    }
    if (player_entry(out->players, out->subject, out)) goto done;
    if (p.contract) {
        out->contract = tl_join(out->staging, "runtime/contract.json");
        if (!tl_is_file(out->contract)) { tl_error(out->contract, NULL, "the staged contract is missing"); goto done; }
    }
    out->ninc = td_backend_include_dirs(out->staging, out->inc, TI_AUTO_MAX_INC);
    out->out = tl_join(out->work, "report");
    rc = 0;
done:
    tl_project_free(&p);
    return rc;
}

void ti_auto_free(ti_auto *a)
{
    free(a->work);
    free(a->project);
    free(a->subject);
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
