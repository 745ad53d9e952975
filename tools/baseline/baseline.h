/*
 * baseline.h - a baseline revision of the project's runtime as a subject (DESIGN.md
 * "subjects"): `tandem bench --baseline REV` and `tandem attempt --baseline REV`
 * (baseline.c). REV is a revision of the git repository the current staging came
 * from (its staging.json sourceRoot: the project's folder).
 *
 * FOLDER/staging/       the project's runtime at REV (`git archive REV` of its folders named
 *                       by the current tandem.json: runtime.sources, runtime.include, and
 *                       runtime.port / runtime.contract when the project's folder holds
 *                       them; the staged places runtime/src, runtime/include, runtime/port,
 *                       runtime/contract.json) with the current staging's harness:
 *                       players/include, the measured suites, Tandem's runtime/port when the
 *                       project has none of its own, and by default the gate subject's
 *                       folder players/subjects/<subject> (the adapter; REV's own when the
 *                       current one does not compile against REV's runtime); staging.json
 *                       hashes every file, gitHead = REV's commit
 * FOLDER/<backend>/     `tandem build --subject <subject> --label <subject>@<short>`: the
 *                       module reports the subject "<subject>@<short>";
 *                       binary-manifest-<backend>.json
 * FOLDER/baseline.json  revision, commit, name, adapter, the harness staging's hash
 * FOLDER/build-<backend>-<adapter>.log   the compiler's output of each build tried
 * Both folders are reused under the reuse rule (staging byte-identical, binaries matching,
 * the suites built in).
 *
 * Refused (with the reason): a repository that is not git, an unknown revision, a runtime
 * folder outside the project's folder (an @tandem/ path of another repository: REV does not
 * hold it), a revision without those folders, a runtime that does not build or load against
 * this tree's player ABI and subject interface.
 */
#ifndef TD_BASELINE_H
#define TD_BASELINE_H
#include <limits.h>
#include <cjson/cJSON.h>

#include "tl_project.h"

#define TD_BASELINE_MAX_BACKENDS 2
#define TD_BASELINE_MAX_PARTS 4

/* A folder (or file) of the project taken from REV: its path relative to the repository
 * folder, and its place in the staged layout. */
typedef struct td_baseline_part {
    char rel[PATH_MAX];
    char dest[64];
    const char *field;                 /* the tandem.json field naming it */
} td_baseline_part;

typedef struct td_baseline {
    char rev[128];                     /* as given */
    char commit[48];                   /* 40 hex */
    char subject[64];                  /* the project's gate subject */
    char name[128];                    /* <subject>@<7 hex> */
    char repo[PATH_MAX];               /* the repository folder REV is read from */
    char project[PATH_MAX];            /* its tandem.json */
    td_baseline_part parts[TD_BASELINE_MAX_PARTS];
    int nparts;
    char adapter_rel[PATH_MAX];        /* the subject's folder in the repository; "" outside */
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

/* Resolve REV in the git repository at `repo` (the folder the current staging came from,
 * td_baseline_repo) for the project p (its runtime folders, relative to its own folder, are
 * read at the same places under `repo`; its gate subject is the baseline's): commit, name,
 * parts. 0, or 1 after an error naming the revision, the folder or the field and why. */
int td_baseline_resolve(const char *repo, const tl_project *p, const char *rev, td_baseline *b);

/* Stage and build (or reuse) the baseline into `folder` for the backends, with the suites
 * (NULL-terminated, at least one) and the harness of `current_staging`. 0 ready; 1 refused:
 * REV lacks a runtime folder, or its runtime does not build or load as a subject against
 * this tree's player ABI / subject interface (the message names the file, the compiler's
 * first error and the log). Call td_baseline_resolve first. */
int td_baseline_prepare(td_baseline *b, const char *current_staging, const char *folder, const char *const *backends,
                        int nb, const char *const *suites);

/* The module (AOT) or TU (JIT) of backend `backend`; NULL when not prepared. */
const char *td_baseline_module(const td_baseline *b, const char *backend);

/* The record written to baseline.json and into attempt manifests (caller owns). */
cJSON *td_baseline_json(const td_baseline *b);

/* The folder a staging came from (its staging.json's sourceRoot), else the source tree
 * tandem was built from. Caller frees. */
char *td_baseline_repo(const char *staging);

#endif
