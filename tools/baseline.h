/*
 * baseline.h - a baseline revision of the runtime as a subject (DESIGN.md "subjects"):
 * `tandem bench --baseline REV` and `tandem attempt --baseline REV` (tools/baseline.c).
 *
 * FOLDER/staging/       runtime/ of REV (git archive, the --from-git machinery) with the
 *                       current staging's players/include, players/suites and, by default,
 *                       players/subjects/tandem (the adapter; REV's own when the current
 *                       one does not compile against REV's runtime); staging.json hashes
 *                       every file, gitHead = REV's commit
 * FOLDER/<backend>/     `tandem build --subject tandem --label tandem@<short>`: the module
 *                       reports the subject "tandem@<short>"; binary-manifest-<backend>.json
 * FOLDER/baseline.json  revision, commit, name, adapter, the harness staging's hash
 * FOLDER/build-<backend>-<adapter>.log   the compiler's output of each build tried
 * Both folders are reused under the reuse rule (staging byte-identical, binaries matching).
 */
#ifndef TD_BASELINE_H
#define TD_BASELINE_H
#include <limits.h>
#include <cjson/cJSON.h>

#define TD_BASELINE_MAX_BACKENDS 2

typedef struct td_baseline {
    char rev[128];                     /* as given */
    char commit[48];                   /* 40 hex */
    char name[32];                     /* tandem@<7 hex> */
    char folder[PATH_MAX];
    char staging[PATH_MAX];
    const char *adapter;               /* "current" or "revision" */
    char harness_hash[65];             /* stagingHash of the current staging */
    int nb;
    char backend[TD_BASELINE_MAX_BACKENDS][8];
    char dir[TD_BASELINE_MAX_BACKENDS][PATH_MAX];    /* player folder */
    char module[TD_BASELINE_MAX_BACKENDS][PATH_MAX]; /* AOT .so, JIT TU (its folder is its root) */
    int reused[TD_BASELINE_MAX_BACKENDS];
} td_baseline;

/* Resolve REV in the git repository `repo` (commit, name). 0, or 1 after an error naming
 * the revision and why (not a commit there, not a revision name). */
int td_baseline_resolve(const char *repo, const char *rev, td_baseline *b);

/* Stage and build (or reuse) the baseline into `folder` for the backends, with the suites
 * (NULL-terminated) and the harness of `current_staging`. 0 ready; 1 refused: REV has no
 * runtime/, or its runtime does not build or load as a subject against this tree's player
 * ABI / subject interface (the message names the file, the compiler's first error and the
 * log). Call td_baseline_resolve first. */
int td_baseline_prepare(td_baseline *b, const char *repo, const char *current_staging, const char *folder,
                        const char *const *backends, int nb, const char *const *suites);

/* The module (AOT) or TU (JIT) of backend `backend`; NULL when not prepared. */
const char *td_baseline_module(const td_baseline *b, const char *backend);

/* The record written to baseline.json and into attempt manifests (caller owns). */
cJSON *td_baseline_json(const td_baseline *b);

/* The git repository a staging folder came from (its staging.json's sourceRoot), else the
 * source tree tandem was built from. Caller frees. */
char *td_baseline_repo(const char *staging);

#endif
