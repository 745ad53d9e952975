/*
 * stage.c - `tandem stage`: copy the sources byte-identically into a staging folder and
 * record every path with its SHA-256 in staging.json (see lib/tl_manifest.h).
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

#include "stage_project.h"

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

typedef struct src {
    char *path;
    uint64_t bytes;
    char sha[TL_SHA256_HEX];
    int exec;
    const tl_mem_file *mem; /* in memory: a revision's (--from-git) or generated (link.libs) */
} src;

static int src_cmp(const void *a, const void *b)
{
    return strcmp(((const src *)a)->path, ((const src *)b)->path);
}

/* Append in-memory files (a revision's, or generated) to the sources; they stay owned by
 * their array. 0 ok, 1 out of memory (reported). */
static int src_append_mem(src **s, size_t *ns, const tl_mem_file *m, size_t n)
{
    src *grown = realloc(*s, (*ns + n + 1) * sizeof **s);
    if (!grown) {
        tl_error("tandem stage", NULL, "out of memory");
        return 1;
    }
    *s = grown;
    for (size_t i = 0; i < n; i++) {
        src *e = &grown[(*ns)++];
        memset(e, 0, sizeof *e);
        e->path = m[i].path;
        e->bytes = m[i].len;
        e->exec = m[i].exec;
        e->mem = &m[i];
        tl_sha256_buf(m[i].data, m[i].len, e->sha);
    }
    return 0;
}

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

static void remove_empty_parents(const char *top, const char *file)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", file);
    for (;;) {
        char *s = strrchr(buf, '/');
        if (!s)
            return;
        *s = '\0';
        if (strlen(buf) <= strlen(top))
            return;
        if (rmdir(buf) != 0)
            return;
    }
}

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

/* The working-tree files under the staged paths (unmapped) into g->listed, sorted, each
 * once. 0 ok, 1 refused (reported). */
static int stage_list_tree(stage_run *g)
{
    int bad = g->mapped ? stage_mounts_list(&g->tree_ms, &g->listed) : 0;
    for (size_t i = 0; !g->mapped && i < g->paths.n; i++) {
        char *full = tl_join(g->root, g->paths.v[i]);
        struct stat sb;
        lstat(full, &sb);
        if (S_ISDIR(sb.st_mode)) {
            bad |= tl_walk(g->root, g->paths.v[i], TL_WALK_FOLLOW_INSIDE, g->root, NULL, &g->listed);
        } else if (S_ISREG(sb.st_mode)) {
            tl_strlist_push(&g->listed, g->paths.v[i]);
        } else if (S_ISLNK(sb.st_mode)) {
            struct stat ts;
            if (stat(full, &ts) == 0 && S_ISREG(ts.st_mode))
                tl_strlist_push(&g->listed, g->paths.v[i]);
            else {
                tl_error(full, NULL, "refused: symbolic link to a folder or nothing");
                bad = 1;
            }
        } else {
            tl_error(full, NULL, "refused: not a regular file");
            bad = 1;
        }
        free(full);
    }
    if (bad)
        return 1;
    tl_strlist *l = &g->listed;
    tl_strlist_sort(l);
    size_t k = 0;
    for (size_t i = 0; i < l->n; i++) {
        if (k && !strcmp(l->v[k - 1], l->v[i])) {
            free(l->v[i]);
            continue;
        }
        l->v[k++] = l->v[i];
    }
    l->n = k;
    return 0;
}

/* The working-tree sources (listed and hashed where their mount has them) into g->s.
 * 0 ok, 1 refused or unreadable (reported). */
static int stage_collect_tree(stage_run *g)
{
    if (stage_list_tree(g))
        return 1;
    size_t ns = g->ns = g->listed.n;
    int bad = 0;
    g->s = calloc(ns ? ns : 1, sizeof *g->s);
    char **full = calloc(ns ? ns : 1, sizeof *full);
    tl_hash_result *res = calloc(ns ? ns : 1, sizeof *res);
    for (size_t i = 0; i < ns; i++)
        full[i] = stage_mount_source(g->root, g->mapped ? &g->ms : NULL, g->listed.v[i]);
    tl_hash_files((const char *const *)full, ns, res, 0);
    for (size_t i = 0; i < ns; i++) {
        struct stat sb;
        src *e = &g->s[i];
        e->path = g->listed.v[i];
        e->bytes = res[i].bytes;
        memcpy(e->sha, res[i].hex, TL_SHA256_HEX);
        e->exec = stat(full[i], &sb) == 0 && (sb.st_mode & 0111);
        if (res[i].err) {
            tl_error(full[i], NULL, "cannot read: %s", tl_strerror(res[i].err));
            bad = 1;
        }
    }
    for (size_t i = 0; i < ns; i++)
        free(full[i]);
    free(full);
    free(res);
    return bad;
}

/* --from-git: the revision's sources (every path, or the mounts inside the project's
 * folder) appended to g->s. 0 ok, 1 failed (reported). */
static int stage_collect_rev(stage_run *g)
{
    const stage_mounts *ms = &g->ms;
    if (!g->mapped) {
        if (g->paths.n == 0) {
            tl_error(g->root, "--from-git", "no path to stage exists in %s", g->rev);
            return 1;
        }
        if (tl_git_archive_read(g->root, g->rev, (const char *const *)g->paths.v, g->paths.n, &g->mem, &g->nmem))
            return 1;
    }
    for (size_t i = 0; g->mapped && i < ms->n; i++) {
        if (!g->in_rev[i])
            continue;
        const char *rel = ms->m[i].from + strlen(g->root) + 1;
        tl_mem_file *part = NULL;
        size_t np = 0;
        if (stage_git_read_as(g->root, g->rev, rel, ms->m[i].dest, &part, &np)) {
            tl_mem_files_free(part, np);
            return 1;
        }
        if (!np) {
            tl_error(g->proj.file, ms->m[i].dest, "%s is not in revision %s (the project's folder %s holds it in the "
                     "working tree only)", rel, g->rev, g->root);
            tl_mem_files_free(part, np);
            return 1;
        }
        tl_mem_file *grown = realloc(g->mem, (g->nmem + np) * sizeof *g->mem);
        if (!grown) {
            tl_mem_files_free(part, np);
            tl_error(g->out, NULL, "out of memory");
            return 1;
        }
        g->mem = grown;
        memcpy(g->mem + g->nmem, part, np * sizeof *part);   /* the paths and data move to mem */
        g->nmem += np;
        free(part);
    }
    return src_append_mem(&g->s, &g->ns, g->mem, g->nmem);
}

/* The files tandem.json generates (a subject's link libraries, stage_project.h): one of
 * that path from the sources is not staged (refused from the working tree, where the
 * project file refuses it too; left out of a revision older than the link field).
 * 0 ok, 1 refused or failed (reported). */
static int stage_collect_generated(stage_run *g)
{
    size_t k = 0;
    int bad = 0;
    for (size_t i = 0; i < g->ns; i++) {
        const src *e = &g->s[i];
        const char *by = stage_project_generated_by(&g->proj, e->path);
        if (!by) {
            g->s[k++] = *e;
        } else if (g->rev) {
            fprintf(stderr, "tandem stage: note: %s of %s is not staged: subject %s links what %s says "
                    "(subjects.%s.link)\n", e->path, g->rev, by, g->proj.file, by);
        } else {
            tl_error(e->path, NULL, "refused: subject %s's link libraries are named in %s (subjects.%s.link)",
                     by, g->proj.file, by);
            bad = 1;
        }
    }
    g->ns = k;
    if (bad || stage_project_generated(&g->proj, &g->gen, &g->ngen))
        return 1;
    return src_append_mem(&g->s, &g->ns, g->gen, g->ngen);
}

/* Every source, sorted; none where the staging's own manifest sits at the top (it would be
 * clobbered). 0 ok, 1 refused (reported). */
static int stage_collect(stage_run *g)
{
    if ((!g->rev || g->mapped) && stage_collect_tree(g))
        return 1;
    if (g->rev && stage_collect_rev(g))
        return 1;
    if (g->ms.n && stage_collect_generated(g))
        return 1;
    if (g->ns > 1)
        qsort(g->s, g->ns, sizeof *g->s, src_cmp);
    for (size_t i = 0; i < g->ns; i++) {
        const char *p = g->s[i].path;
        size_t k = strlen(TL_STAGING_JSON);
        if (!strncmp(p, TL_STAGING_JSON, k) && (p[k] == '\0' || p[k] == '/')) {
            tl_error(p, NULL, "refused: %s at the top of the staging is the staging's own manifest; rename "
                     "it, or stage from a --root where it is not at the top", TL_STAGING_JSON);
            return 1;
        }
    }
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

/* Whether the staging folder may be staged into: absent, empty, or holding a staging.json
 * (then g->fresh is 0). 0 ok, 1 refused (reported). */
static int stage_out_usable(stage_run *g)
{
    char *sj = tl_join(g->out, TL_STAGING_JSON);
    struct stat ob;
    int bad = 0;
    g->fresh = 1;
    if (lstat(g->out, &ob) == 0) {
        if (!S_ISDIR(ob.st_mode)) {
            tl_error(g->out, "--out", "exists and is not a folder");
            bad = 1;
        } else if (tl_is_file(sj)) {
            g->fresh = 0;
        } else {
            tl_strlist any = { 0 };
            tl_walk(g->out, NULL, TL_WALK_REFUSE_SYMLINKS, NULL, NULL, &any);
            int nonempty = any.n > 0;
            tl_strlist_free(&any);
            if (nonempty) {
                tl_error(g->out, "--out", "not empty and holds no staging.json: refusing to stage into it");
                bad = 1;
            }
        }
    }
    free(sj);
    return bad;
}

/* The existing staging, if any: its files (g->disk, sorted) and their hashes (g->dres).
 * 0 ok, 1 refused (reported). */
static int stage_existing(stage_run *g)
{
    static const char *const skip[] = { TL_STAGING_JSON, NULL };
    if (stage_out_usable(g))
        return 1;
    if (g->fresh)
        return 0;
    tl_staging old;
    tl_err_capture(NULL, 0, 0);
    if (tl_staging_load(g->out, &old) == 0) {
        if (strcmp(old.staging_hash, g->st.staging_hash))
            printf("stagingHash: was %s\n", old.staging_hash);
        tl_staging_free(&old);
    } else {
        fprintf(stderr, "tandem stage: the existing staging.json is invalid; it will be rewritten\n");
    }
    tl_strlist *disk = &g->disk;
    if (tl_walk(g->out, NULL, TL_WALK_REFUSE_SYMLINKS, NULL, skip, disk)) {
        tl_error(g->out, NULL, "the staging holds entries that cannot be reconciled (see above); remove them");
        return 1;
    }
    tl_strlist_sort(disk);
    char **full = calloc(disk->n ? disk->n : 1, sizeof *full);
    g->dres = calloc(disk->n ? disk->n : 1, sizeof *g->dres);
    for (size_t i = 0; i < disk->n; i++)
        full[i] = tl_join(g->out, disk->v[i]);
    tl_hash_files((const char *const *)full, disk->n, g->dres, 0);
    for (size_t i = 0; i < disk->n; i++)
        free(full[i]);
    free(full);
    return 0;
}

/* Merge: sources g->s (sorted) vs staging g->disk (sorted); prints every difference and
 * marks the sources to write in g->todo. */
static void stage_compare(stage_run *g)
{
    const tl_strlist *disk = &g->disk;
    g->todo = calloc(g->ns ? g->ns : 1, 1);
    size_t j = 0;
    for (size_t i = 0; i < g->ns; i++) {
        const src *e = &g->s[i];
        while (j < disk->n && strcmp(disk->v[j], e->path) < 0) {
            printf("extra: %s (in the staging, not in the sources)\n", disk->v[j]);
            g->nextra++;
            j++;
        }
        if (j < disk->n && !strcmp(disk->v[j], e->path)) {
            const tl_hash_result *d = &g->dres[j];
            if (d->err || strcmp(d->hex, e->sha) || d->bytes != e->bytes) {
                printf("different: %s (staging sha256 %.16s..., source sha256 %.16s...)\n", e->path,
                       d->err ? "unreadable" : d->hex, e->sha);
                g->ndiff++;
                g->todo[i] = 1;
            }
            j++;
        } else {
            if (!g->fresh)
                printf("missing: %s (in the sources, not in the staging)\n", e->path);
            g->nmiss++;
            g->todo[i] = 1;
        }
    }
    for (; j < disk->n; j++) {
        printf("extra: %s (in the staging, not in the sources)\n", disk->v[j]);
        g->nextra++;
    }
}

/* Write source e (from memory, or copied from its file, checked against its hash) to the
 * staging. 0 ok, 1 failed (reported). */
static int stage_write_one(const stage_run *g, const src *e)
{
    int bad = 0, err;
    char *dst = tl_join(g->out, e->path);
    mode_t mode = e->exec ? 0755 : 0644;
    if (e->mem) {
        err = tl_write_atomic(dst, e->mem->data, e->mem->len, mode);
        if (err) {
            tl_error(dst, NULL, "cannot write: %s", tl_strerror(err));
            bad = 1;
        }
    } else {
        char *srcp = stage_mount_source(g->root, g->mapped ? &g->ms : NULL, e->path);
        char hex[TL_SHA256_HEX];
        uint64_t n;
        err = tl_copy_hash(srcp, dst, mode, hex, &n);
        if (err) {
            tl_error(dst, NULL, "cannot copy from %s: %s", srcp, tl_strerror(err));
            bad = 1;
        } else if (strcmp(hex, e->sha) || n != e->bytes) {
            tl_error(srcp, NULL, "changed while being staged; stage again");
            bad = 1;
        }
        free(srcp);
    }
    free(dst);
    return bad;
}

/* Apply the comparison: write the marked sources, remove the extras.
 * 0 ok, 1 failed (reported). */
static int stage_apply(stage_run *g)
{
    int e = tl_mkdirs(g->out);
    if (e) {
        tl_error(g->out, "--out", "cannot create: %s", tl_strerror(e));
        return 1;
    }
    int bad = 0;
    for (size_t i = 0; i < g->ns && !bad; i++)
        if (g->todo[i])
            bad = stage_write_one(g, &g->s[i]);
    size_t j = 0;
    for (size_t i = 0; i < g->disk.n && !bad; i++) {
        while (j < g->ns && strcmp(g->s[j].path, g->disk.v[i]) < 0)
            j++;
        if (j < g->ns && !strcmp(g->s[j].path, g->disk.v[i]))
            continue;
        char *f = tl_join(g->out, g->disk.v[i]);
        if (unlink(f) != 0) {
            tl_error(f, NULL, "cannot remove: %s", tl_strerror(errno));
            bad = 1;
        } else {
            remove_empty_parents(g->out, f);
        }
        free(f);
    }
    return bad;
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
