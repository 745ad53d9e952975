/*
 * stage_run.h - the state of one `tandem stage` and its phases, shared by stage.c (options,
 * paths, provenance, the verb), stage_sources.c (collecting and hashing the sources) and
 * stage_apply.c (the existing staging, the comparison, writing and removing).
 */
#ifndef TD_STAGE_RUN_H
#define TD_STAGE_RUN_H
#include <stddef.h>
#include <stdint.h>

#include "tl_archive.h"
#include "tl_fs.h"
#include "tl_hash.h"
#include "tl_manifest.h"
#include "tl_project.h"

#include "stage_project.h"

typedef struct src {
    char *path;
    uint64_t bytes;
    char sha[TL_SHA256_HEX];
    int exec;
    const tl_mem_file *mem; /* in memory: a revision's (--from-git) or generated (link.libs) */
} src;

/* The state of one `tandem stage`, shared by its phases in the order td_verb_stage runs them. */
typedef struct stage_run {
    /* the options (stage_options) */
    const char *root_arg, *out_arg, *rev, *project_arg;
    int root_given, dry;
    tl_strlist user_paths;
    /* the project and its mounts (stage_open_project) */
    tl_project proj;
    int have_proj;
    stage_mounts ms;
    /* mapped: the project's folders are not at their staged places (another library's
     * layout, or Tandem's harness outside the project): each file's source is its mount's. */
    int mapped;
    /* mapped with --from-git: a mount inside the project's folder is read from the revision
     * (at its path there), one outside it (Tandem's harness, @tandem/...) from the working
     * tree; tree_ms holds the latter (its entries are ms's, not owned) */
    stage_mounts tree_ms;
    int in_rev[STAGE_MAX_MOUNTS];
    /* the root, the staging folder and the staged paths (stage_resolve_paths) */
    char *root, *out;
    int using_defaults;
    tl_strlist paths;
    /* the sources, sorted by path (stage_collect_*): their paths belong to listed or mem */
    tl_strlist listed;
    src *s;
    size_t ns;
    tl_mem_file *mem, *gen;
    size_t nmem, ngen;
    /* the new manifest (stage_provenance, stage_manifest_files) */
    tl_staging st;
    uint64_t total;
    /* the existing staging (stage_existing) and its comparison with the sources (stage_compare) */
    int fresh;
    tl_strlist disk;
    tl_hash_result *dres;
    char *todo;
    size_t ndiff, nmiss, nextra;
} stage_run;

/* Every source, sorted, in g->s (stage_sources.c): the working tree's, a revision's
 * (--from-git), the generated ones. 0 ok, 1 refused or failed (reported). */
int stage_collect(stage_run *g);

/* The existing staging, if any: its files (g->disk, sorted) and their hashes (g->dres)
 * (stage_apply.c). 0 ok, 1 refused (reported). */
int stage_existing(stage_run *g);

/* Merge: sources g->s (sorted) vs staging g->disk (sorted); prints every difference and
 * marks the sources to write in g->todo (stage_apply.c). */
void stage_compare(stage_run *g);

/* Apply the comparison: write the marked sources, remove the extras (stage_apply.c).
 * 0 ok, 1 failed (reported). */
int stage_apply(stage_run *g);

#endif
