/*
 * stage.c - `tandem stage`: copy the sources byte-identically into a staging folder and
 * record every path with its SHA-256 in staging.json (see lib/tl_manifest.h). This file
 * holds the options, the paths, the provenance and the verb; its phases share stage_run.h.
 */
#include "tl_archive.h"
#include "tl_err.h"
#include "tl_fs.h"
#include "tl_hash.h"
#include "tl_home.h"
#include "tl_manifest.h"
#include "tl_opt.h"
#include "tl_proc.h"
#include "tl_project.h"
#include "tl_srcmap.h"

#include "stage_run.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>


/* A --root given without PATHS is a tree already in the staged layout (stage_project.h). */
static const char *const default_paths[] = { "runtime", "players/include", "players/suites", "players/subjects" };

static const tl_opt stage_opts[] = {
    { "project", 0, TL_OPT_PATH, "DIR", 0, 0, "the project (its tandem.json) whose folders are staged (default:\n"
      "the nearest tandem.json from the current folder upward, else Tandem's own)" },
    { "root", 0, TL_OPT_PATH, "DIR", 0, 0, "instead of a project: a tree in the staged layout (runtime/,\n"
      "players/include, players/suites, players/subjects), or the root PATHS are relative to" },
    { "out", 0, TL_OPT_PATH, "DIR", 0, 0, "staging folder (default: the project's results folder's staging/:\n"
      "<project>/.tandem/staging, or the build folder's for Tandem's own)" },
    { "from-git", 0, TL_OPT_PATH, "REV", 0, 0, "stage git revision REV (of the repository holding the project's\n"
      "folder, or --root) via `git archive` instead of the working tree; a\n"
      "project's folders outside its own folder (@tandem/...: Tandem's\n"
      "harness, peers, suites) come from the working tree" },
    { "dry-run", 0, TL_OPT_FLAG, NULL, 0, 0, "only report differences against the existing staging (exit 1 if any)" },
    { NULL, 0, 0, NULL, 0, 0, NULL }
};

static const tl_optspec stage_spec = {
    "tandem stage", "[--project DIR | --root DIR] [--out DIR] [--from-git REV] [--dry-run] [PATHS...]",
    "Copy the sources byte-identically into a staging folder and write staging.json\n"
    "(every path with bytes and SHA-256, gitHead, dirty flag, stagingHash).\n"
    "Bare, it stages the project's folders (tandem.json: runtime sources, include, port,\n"
    "contract, subjects, suites; Tandem's players/include) at their places of the staged\n"
    "layout: runtime/src, runtime/include, runtime/port, runtime/contract.json,\n"
    "players/include, players/subjects/NAME, players/suites/NAME.\n"
    "PATHS: paths relative to the root (--root, else the project's folder); with --root and\n"
    "no PATHS: runtime players/include players/suites players/subjects (a default path\n"
    "that does not exist is skipped, a given one is an error).",
    stage_opts,
    "Against an existing staging, differences are printed (different, missing, extra) and\n"
    "applied. Paths escaping the root, symlinks pointing outside it and non-regular files are\n"
    "refused. Exit: 0 staged, 1 refused or failed, 2 usage.",
    0, -1
};
static int path_inside(const char *p, const char *dir)
{
    size_t n = strlen(dir);
    return !strncmp(p, dir, n) && (p[n] == '/' || p[n] == '\0');
}

/* Make a user path relative to root, validated. Returns malloc'd or NULL (reported). */
static char *rel_to_root(const char *root, const char *p)
{
    char *r;
    if (p[0] == '/') {
        char *abs = tl_abspath(p);
        if (!path_inside(abs, root)) {
            tl_error(p, NULL, "refused: path escapes the root %s", root);
            free(abs);
            return NULL;
        }
        r = strdup(abs[strlen(root)] ? abs + strlen(root) + 1 : "");
        free(abs);
    } else {
        r = strdup(p);
    }
    size_t l = strlen(r);
    while (l > 0 && r[l - 1] == '/')
        r[--l] = '\0';
    while (r[0] == '.' && r[1] == '/')
        memmove(r, r + 2, strlen(r + 2) + 1);
    const char *why;
    if (!tl_rel_path_ok(r, &why)) {
        tl_error(p, NULL, "refused: %s", why);
        free(r);
        return NULL;
    }
    return r;
}

/* The options into g. 0 ok, else the verb's exit code (help: 0 through *exit_now). */
static int stage_options(stage_run *g, int argc, char **argv, int *exit_now)
{
    tl_optres o;
    int prc = tl_opt_parse(&stage_spec, argc, argv, &o);
    if (prc) { tl_opt_free(&o); *exit_now = 1; return prc == TL_OPT_HELP ? 0 : 2; }
    g->project_arg = tl_opt_str(&o, "project", NULL);
    g->root_given = tl_opt_given(&o, "root") > 0;
    if (g->project_arg && g->root_given) {
        tl_opt_fail(&o, "--project", "give --project or --root, not both");
        tl_opt_free(&o);
        *exit_now = 1;
        return 2;
    }
    g->root_arg = tl_opt_str(&o, "root", g->root_arg);
    g->out_arg = tl_opt_str(&o, "out", g->out_arg);
    g->rev = tl_opt_str(&o, "from-git", NULL);
    g->dry = tl_opt_given(&o, "dry-run") > 0;
    for (int i = 0; i < o.npos; i++) tl_strlist_push(&g->user_paths, o.pos[i]);
    tl_opt_free(&o);
    if (g->rev && (g->rev[0] == '-' || strchr(g->rev, ' '))) {
        fprintf(stderr, "tandem stage: --from-git: invalid revision '%s'\n", g->rev);
        *exit_now = 1;
        return 2;
    }
    return 0;
}

/* Bare (no --root, no PATHS... or PATHS relative to the project): the project's layout.
 * 0 ok, 1 failed (reported). */
static int stage_open_project(stage_run *g)
{
    if (!g->root_given) {
        if (tl_project_open(g->project_arg, tl_home(), &g->proj))
            return 1;
        g->have_proj = 1;
        g->root_arg = g->proj.root;
        if (g->user_paths.n == 0 && stage_mounts_from_project(&g->proj, &g->ms))
            return 1;
    }
    g->mapped = g->ms.n > 0 && !g->ms.identity;
    return 0;
}

/* --from-git: a commit of the repository holding the root, or nothing is read.
 * 0 ok, 1 not a commit (reported). */
static int stage_check_rev(const stage_run *g)
{
    char spec[1024], head0[128] = "";
    snprintf(spec, sizeof spec, "%s^{commit}", g->rev);
    const char *gargv[] = { "git", "-C", g->root, "rev-parse", "--verify", "-q", spec, NULL };
    if (tl_run_capture(gargv, head0, sizeof head0, NULL) != 0 || !head0[0]) {
        tl_error(g->root, "--from-git", "'%s' is not a commit of the git repository holding this folder (or it is "
                 "in none)", g->rev);
        return 1;
    }
    return 0;
}

/* Whether path r (relative to the root, validated) exists in the revision or the working
 * tree: 1 yes, 0 no, -1 refused (it resolves outside the root or overlaps --out; reported). */
static int stage_path_exists(const stage_run *g, const char *r, const char *full)
{
    if (g->rev) {
        char spec[4096];
        snprintf(spec, sizeof spec, "%s:%s", g->rev, r);
        const char *cargv[] = { "git", "-C", g->root, "cat-file", "-e", spec, NULL };
        return tl_run_capture(cargv, NULL, 0, NULL) == 0;
    }
    struct stat sb;
    if (lstat(full, &sb) != 0)
        return 0;
    char *real = realpath(full, NULL);
    int ok = 0;
    if (!real || !path_inside(real, g->root))
        tl_error(full, NULL, "refused: resolves outside the root (to %s)", real ? real : "nothing");
    else if (path_inside(g->out, real) || path_inside(real, g->out))
        tl_error(g->out, "--out", "overlaps the staged path %s", full);
    else
        ok = 1;
    free(real);
    return ok ? 1 : -1;
}

/* The root, the staging folder and the paths to stage (sorted): the mounts' places, or the
 * given (or default) paths relative to the root. 0 ok, 1 refused (reported). */
static int stage_resolve_paths(stage_run *g)
{
    g->root = realpath(g->root_arg, NULL);
    if (!g->root_arg || !g->root || !tl_is_dir(g->root)) {
        if (g->root_arg) tl_error(g->root_arg, "--root", "not a folder");
        return 1;
    }
    if (g->out_arg) {
        g->out = tl_abspath(g->out_arg);
    } else {   /* the results folder of the project, or of Tandem's home for a bare --root */
        g->out = tl_home_work(g->have_proj ? g->proj.root : tl_home() ? tl_home() : g->root, "staging");
    }
    g->using_defaults = g->user_paths.n == 0 && !g->have_proj;
    const stage_mounts *ms = &g->ms;
    if (ms->n && !g->mapped)
        for (size_t i = 0; i < ms->n; i++) tl_strlist_push(&g->user_paths, ms->m[i].dest);
    if (g->rev && stage_check_rev(g))
        return 1;
    for (size_t i = 0; g->mapped && i < ms->n; i++) {
        g->in_rev[i] = g->rev && path_inside(ms->m[i].from, g->root) && ms->m[i].from[strlen(g->root)] == '/';
        if (!g->in_rev[i]) g->tree_ms.m[g->tree_ms.n++] = ms->m[i];
    }
    for (size_t i = 0; g->mapped && i < ms->n; i++) {
        if (path_inside(g->out, ms->m[i].from) || path_inside(ms->m[i].from, g->out)) {
            tl_error(g->out, "--out", "overlaps the staged folder %s", ms->m[i].from);
            return 1;
        }
        tl_strlist_push(&g->paths, ms->m[i].dest);
    }
    if (g->using_defaults)
        for (size_t i = 0; i < sizeof default_paths / sizeof *default_paths; i++)
            tl_strlist_push(&g->user_paths, default_paths[i]);
    for (size_t i = 0; i < g->user_paths.n; i++) {
        char *r = rel_to_root(g->root, g->user_paths.v[i]);
        if (!r)
            return 1;
        char *full = tl_join(g->root, r);
        int exists = stage_path_exists(g, r, full), bad = exists < 0;
        if (exists > 0) {
            tl_strlist_push(&g->paths, r);
        } else if (!exists && g->using_defaults) {
            fprintf(stderr, "tandem stage: note: default path %s not present%s%s, skipped\n", r,
                    g->rev ? " in " : "", g->rev ? g->rev : "");
        } else if (!exists) {
            tl_error(full, NULL, "not found%s%s", g->rev ? " in revision " : "", g->rev ? g->rev : "");
            bad = 1;
        }
        free(full);
        free(r);
        if (bad)
            return 1;
    }
    tl_strlist_sort(&g->paths);
    return 0;
}


/* The working tree's dirty flag: `git status --porcelain` over the staged paths (mapped: the
 * mounts' sources inside the project's tree; the others are not its). */
static int stage_tree_dirty(const stage_run *g)
{
    const char **sargv = calloc(g->paths.n + 8, sizeof *sargv);
    size_t k = 0;
    sargv[k++] = "git";
    sargv[k++] = "-C";
    sargv[k++] = g->root;
    sargv[k++] = "status";
    sargv[k++] = "--porcelain";
    sargv[k++] = "--";
    for (size_t i = 0; i < g->paths.n; i++) {
        if (!g->mapped) { sargv[k++] = g->paths.v[i]; continue; }
        const char *from = g->ms.m[i].from;
        if (path_inside(from, g->root) && from[strlen(g->root)]) sargv[k++] = from + strlen(g->root) + 1;
    }
    int nonempty = 0;
    int sr = tl_run_capture(sargv, NULL, 0, &nonempty);
    free(sargv);
    return sr != 0 || nonempty;
}

/* Provenance; a mapped staging says where each folder came from, so that a compile error
 * names the user's file, not the staged copy (tl_srcmap.h). 0 ok, 1 failed (reported). */
static int stage_provenance(stage_run *g)
{
    char head[128] = "";
    tl_staging *st = &g->st;
    st->source_root = strdup(g->root);
    if (g->mapped) {
        const char *from[STAGE_MAX_MOUNTS], *dest[STAGE_MAX_MOUNTS];
        for (size_t i = 0; i < g->ms.n; i++) from[i] = g->ms.m[i].from, dest[i] = g->ms.m[i].dest;
        st->mounts = tl_srcmap_mounts(from, dest, g->ms.n);
    }
    if (g->rev) {
        char spec[1024];
        snprintf(spec, sizeof spec, "%s^{commit}", g->rev);
        const char *gargv[] = { "git", "-C", g->root, "rev-parse", "--verify", "-q", spec, NULL };
        if (tl_run_capture(gargv, head, sizeof head, NULL) != 0 || !head[0]) {
            tl_error(g->root, "--from-git", "cannot resolve revision '%s'", g->rev);
            return 1;
        }
        st->git_head = strdup(head);
        st->git_rev = strdup(g->rev);
        st->dirty = 0;
    } else {
        const char *gargv[] = { "git", "-C", g->root, "rev-parse", "--verify", "-q", "HEAD", NULL };
        if (tl_run_capture(gargv, head, sizeof head, NULL) == 0 && head[0]) {
            st->git_head = strdup(head);
            st->dirty = stage_tree_dirty(g);
        }
    }
    return 0;
}

/* The manifest's paths and files, its stagingHash and the sources' total bytes. */
static void stage_manifest_files(stage_run *g)
{
    tl_staging *st = &g->st;
    st->npaths = g->paths.n;
    st->paths = calloc(g->paths.n ? g->paths.n : 1, sizeof *st->paths);
    for (size_t i = 0; i < g->paths.n; i++)
        st->paths[i] = strdup(g->paths.v[i]);
    st->nfiles = g->ns;
    st->files = calloc(g->ns ? g->ns : 1, sizeof *st->files);
    for (size_t i = 0; i < g->ns; i++) {
        st->files[i].path = strdup(g->s[i].path);
        st->files[i].bytes = g->s[i].bytes;
        memcpy(st->files[i].sha256, g->s[i].sha, TL_SHA256_HEX);
        g->total += g->s[i].bytes;
    }
    tl_staging_hash(st->files, st->nfiles, st->staging_hash);
}

static void stage_run_free(stage_run *g)
{
    free(g->s); /* the paths belong to listed or mem */
    free(g->todo);
    free(g->dres);
    tl_mem_files_free(g->mem, g->nmem);
    tl_mem_files_free(g->gen, g->ngen);
    tl_staging_free(&g->st);
    tl_strlist_free(&g->user_paths);
    tl_strlist_free(&g->paths);
    tl_strlist_free(&g->listed);
    tl_strlist_free(&g->disk);
    stage_mounts_free(&g->ms);
    tl_project_free(&g->proj);
    free(g->root);
    free(g->out);
}

int td_verb_stage(int argc, char **argv)
{
    stage_run *g = calloc(1, sizeof *g);
    if (!g) {
        tl_error("tandem stage", NULL, "out of memory");
        return 1;
    }
    g->root_arg = tl_home();
    int exit_now = 0, rc = stage_options(g, argc, argv, &exit_now);
    if (exit_now) {
        stage_run_free(g);
        free(g);
        return rc;
    }
    rc = 1;
    if (stage_open_project(g) || stage_resolve_paths(g) || stage_collect(g) || stage_provenance(g))
        goto done;
    stage_manifest_files(g);
    if (stage_existing(g))
        goto done;
    stage_compare(g);
    if (g->dry) {
        int changes = g->ndiff + g->nmiss + g->nextra > 0;
        printf("stage --dry-run: %zu files, %zu different, %zu missing, %zu extra; stagingHash %s\n", g->ns,
               g->ndiff, g->nmiss, g->nextra, g->st.staging_hash);
        rc = changes ? 1 : 0;
        goto done;
    }
    if (stage_apply(g) || tl_staging_save(g->out, &g->st))
        goto done;
    if (g->fresh)
        printf("staged %zu files (%llu bytes) from %s%s%s into %s\n", g->ns, (unsigned long long)g->total, g->root,
               g->rev ? " at " : "", g->rev ? g->rev : "", g->out);
    else
        printf("staging %s updated: %zu files, %zu different, %zu missing, %zu extra applied\n", g->out, g->ns,
               g->ndiff, g->nmiss, g->nextra);
    printf("stagingHash %s%s\n", g->st.staging_hash, g->st.dirty ? " (working tree dirty)" : "");
    rc = 0;
done:
    stage_run_free(g);
    free(g);
    return rc;
}
