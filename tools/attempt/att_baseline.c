/*
 * att_baseline.c - `tandem attempt --baseline REV`: the project's runtime at REV as the
 * subject <gate subject>@<rev> (tools/baseline/) in <attempt>/baseline/ (its staging.json hashes every
 * staged file; its players carry binary manifests; files.sha256 covers the folder), loaded
 * in the same interleaved processes as the current runtime (att_player_argv) and in the
 * instruction arm; the gate judges it apart from the peers (gate_baseline.c).
 */
#include "att_run.h"
#include "../baseline/baseline.h"

#include "tl_fs.h"
#include "tl_json.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int att_stage_baseline(att *a)
{
    if (!a->baseline) return 0;
    att_manifest_set_str(a, "stage", "baseline");
    static td_baseline B;
    char *sd = att_path(a, "staging"), *folder = att_path(a, "baseline");
    char *repo = td_baseline_repo(sd);
    att_log(a, 1, "baseline %s: staging the project's runtime at that revision from %s with this tree's harness",
            a->baseline, repo);
    const char *suites[TL_PROJECT_MAX + 1];   /* every measured suite, as `tandem bench --baseline` builds it */
    tl_project_measured_suites(&a->proj, suites, TL_PROJECT_MAX + 1);
    int rc = td_baseline_resolve(repo, &a->proj, a->baseline, &B);
    if (!rc) rc = td_baseline_prepare(&B, sd, folder, a->backends, a->nb, suites);
    free(repo);
    free(sd);
    free(folder);
    if (rc) {
        att_log(a, 1, "baseline %s refused: it cannot be staged or built as a subject (see above)", a->baseline);
        att_manifest_set_str(a, "stage", "baseline-refused");
        return 1;
    }
    a->bl = &B;
    cJSON_DeleteItemFromObjectCaseSensitive(a->man, "baseline");
    cJSON_AddItemToObject(a->man, "baseline", td_baseline_json(&B));
    att_log(a, 1, "baseline %s = %s (%s adapter): players %s", a->baseline, B.name, B.adapter, B.folder);
    return 0;
}

const char *att_baseline_verdict(att *a)
{
    if (!a->bl) return NULL;
    char *p = att_path(a, "gate/gate-summary.json");
    cJSON *d = NULL;
    if (!tl_is_file(p) || tl_json_load(p, &d) || gate_summary_baseline_of(d, a->base_verdict, sizeof a->base_verdict) ||
        !a->base_verdict[0])
        snprintf(a->base_verdict, sizeof a->base_verdict, "not judged");
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(d, "baseline"), *c = cJSON_GetObjectItemCaseSensitive(b, "counts");
    const cJSON *reach = cJSON_GetObjectItemCaseSensitive(b, "timeReach");
    const char *verdict = a->base_verdict;
    const cJSON *ng = cJSON_GetObjectItemCaseSensitive(c, "gated"), *nr = cJSON_GetObjectItemCaseSensitive(c, "regressions"),
                *ni = cJSON_GetObjectItemCaseSensitive(c, "improved"), *nl = cJSON_GetObjectItemCaseSensitive(c, "layout");
    const cJSON *rr = cJSON_GetObjectItemCaseSensitive(reach, "rows"), *rm = cJSON_GetObjectItemCaseSensitive(reach, "median");
    /* the time arm's reach (gate_baseline.c reach_of): what "no regression" by time can mean here */
    char said[128] = "";
    if (cJSON_IsNumber(rr) && rr->valueint > 0 && cJSON_IsNumber(rm))
        snprintf(said, sizeof said, "the time arm sees only a change beyond x%.2f on the median row here", rm->valuedouble);
    else if (cJSON_IsNumber(rr))
        snprintf(said, sizeof said, "one layout: time decides no row here, instructions only");
    att_log(a, 1, "baseline %s: %s (%d gated rows x backends: %d regression(s), %d improved, %d layout%s%s; gate/gate.md)",
            a->bl->name, verdict, cJSON_IsNumber(ng) ? ng->valueint : 0, cJSON_IsNumber(nr) ? nr->valueint : 0,
            cJSON_IsNumber(ni) ? ni->valueint : 0, cJSON_IsNumber(nl) ? nl->valueint : 0, said[0] ? "; " : "", said);
    printf("attempt: baseline %s: %s%s%s%s\n", a->bl->name, verdict, said[0] ? " (" : "", said,
           !said[0] ? "" : rr->valueint > 0 ? "; gate.md)" : ")");
    att_manifest_set_str(a, "baselineVerdict", verdict);
    cJSON_Delete(d);
    free(p);
    return verdict;
}
