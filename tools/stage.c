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

int td_verb_stage(int argc, char **argv)
{
    const char *root_arg = tl_home(), *out_arg = NULL, *rev = NULL;
    tl_strlist user_paths = { 0 };
    tl_optres o;
    int prc = tl_opt_parse(&stage_spec, argc, argv, &o);
    if (prc) { tl_opt_free(&o); return prc == TL_OPT_HELP ? 0 : 2; }
    const char *project_arg = tl_opt_str(&o, "project", NULL);
    int root_given = tl_opt_given(&o, "root") > 0;
    if (project_arg && root_given) {
        tl_opt_fail(&o, "--project", "give --project or --root, not both");
        tl_opt_free(&o);
        return 2;
    }
    root_arg = tl_opt_str(&o, "root", root_arg);
    out_arg = tl_opt_str(&o, "out", out_arg);
    rev = tl_opt_str(&o, "from-git", NULL);
    int dry = tl_opt_given(&o, "dry-run") > 0;
    for (int i = 0; i < o.npos; i++) tl_strlist_push(&user_paths, o.pos[i]);
    tl_opt_free(&o);
    if (rev && (rev[0] == '-' || strchr(rev, ' '))) {
        fprintf(stderr, "tandem stage: --from-git: invalid revision '%s'\n", rev);
        return 2;
    }

    /* Bare (no --root, no PATHS... or PATHS relative to the project): the project's layout. */
    tl_project proj;
    stage_mounts ms = { 0 };
    int have_proj = 0;
    memset(&proj, 0, sizeof proj);
    if (!root_given) {
        if (tl_project_open(project_arg, tl_home(), &proj)) {
            tl_project_free(&proj);
            tl_strlist_free(&user_paths);
            return 1;
        }
        have_proj = 1;
        root_arg = proj.root;
        if (user_paths.n == 0 && stage_mounts_from_project(&proj, &ms)) {
            tl_project_free(&proj);
            tl_strlist_free(&user_paths);
            return 1;
        }
    }
    /* mapped: the project's folders are not at their staged places (another library's
     * layout, or Tandem's harness outside the project): each file's source is its mount's. */
    int mapped = ms.n > 0 && !ms.identity;

    int rc = 1;
    char *root = realpath(root_arg, NULL);
    char *out = NULL;
    tl_strlist paths = { 0 }, listed = { 0 }, disk = { 0 };
    src *s = NULL;
    size_t ns = 0;
    tl_mem_file *mem = NULL, *gen = NULL;
    size_t nmem = 0, ngen = 0;
    tl_staging st = { 0 };
    if (!root_arg || !root || !tl_is_dir(root)) {
        if (root_arg) tl_error(root_arg, "--root", "not a folder");
        goto done;
    }
    if (out_arg) {
        out = tl_abspath(out_arg);
    } else {   /* the results folder of the project, or of Tandem's home for a bare --root */
        out = tl_home_work(have_proj ? proj.root : tl_home() ? tl_home() : root, "staging");
    }
    int using_defaults = user_paths.n == 0 && !have_proj;
    if (ms.n && !mapped)
        for (size_t i = 0; i < ms.n; i++) tl_strlist_push(&user_paths, ms.m[i].dest);
    if (rev) { /* a commit of the repository holding the root, or nothing is read */
        char spec[1024], head0[128] = "";
        snprintf(spec, sizeof spec, "%s^{commit}", rev);
        const char *gargv[] = { "git", "-C", root, "rev-parse", "--verify", "-q", spec, NULL };
        if (tl_run_capture(gargv, head0, sizeof head0, NULL) != 0 || !head0[0]) {
            tl_error(root, "--from-git", "'%s' is not a commit of the git repository holding this folder (or it is "
                     "in none)", rev);
            goto done;
        }
    }
    /* mapped with --from-git: a mount inside the project's folder is read from the revision
     * (at its path there), one outside it (Tandem's harness, @tandem/...) from the working
     * tree; tree_ms holds the latter (its entries are ms's, not owned) */
    stage_mounts tree_ms;
    memset(&tree_ms, 0, sizeof tree_ms);
    int in_rev[STAGE_MAX_MOUNTS] = { 0 };
    for (size_t i = 0; mapped && i < ms.n; i++) {
        in_rev[i] = rev && path_inside(ms.m[i].from, root) && ms.m[i].from[strlen(root)] == '/';
        if (!in_rev[i]) tree_ms.m[tree_ms.n++] = ms.m[i];
    }
    for (size_t i = 0; mapped && i < ms.n; i++) {
        if (path_inside(out, ms.m[i].from) || path_inside(ms.m[i].from, out)) {
            tl_error(out, "--out", "overlaps the staged folder %s", ms.m[i].from);
            goto done;
        }
        tl_strlist_push(&paths, ms.m[i].dest);
    }
    if (using_defaults)
        for (size_t i = 0; i < sizeof default_paths / sizeof *default_paths; i++)
            tl_strlist_push(&user_paths, default_paths[i]);
    for (size_t i = 0; i < user_paths.n; i++) {
        char *r = rel_to_root(root, user_paths.v[i]);
        if (!r)
            goto done;
        char *full = tl_join(root, r);
        int exists;
        if (rev) {
            char spec[4096];
            snprintf(spec, sizeof spec, "%s:%s", rev, r);
            const char *cargv[] = { "git", "-C", root, "cat-file", "-e", spec, NULL };
            exists = tl_run_capture(cargv, NULL, 0, NULL) == 0;
        } else {
            struct stat sb;
            exists = lstat(full, &sb) == 0;
            if (exists) {
                char *real = realpath(full, NULL);
                if (!real || !path_inside(real, root)) {
                    tl_error(full, NULL, "refused: resolves outside the root (to %s)", real ? real : "nothing");
                    free(real);
                    free(full);
                    free(r);
                    goto done;
                }
                if (path_inside(out, real) || path_inside(real, out)) {
                    tl_error(out, "--out", "overlaps the staged path %s", full);
                    free(real);
                    free(full);
                    free(r);
                    goto done;
                }
                free(real);
            }
        }
        if (!exists) {
            if (using_defaults) {
                fprintf(stderr, "tandem stage: note: default path %s not present%s%s, skipped\n", r,
                        rev ? " in " : "", rev ? rev : "");
            } else {
                tl_error(full, NULL, "not found%s%s", rev ? " in revision " : "", rev ? rev : "");
                free(full);
                free(r);
                goto done;
            }
        } else {
            tl_strlist_push(&paths, r);
        }
        free(full);
        free(r);
    }
    tl_strlist_sort(&paths);

    /* Collect the sources: working-tree files (listed, hashed where their mount has them)
     * and, with --from-git, the revision's (mem). */
    if (!rev || mapped) {
        int bad = mapped ? stage_mounts_list(&tree_ms, &listed) : 0;
        for (size_t i = 0; !mapped && i < paths.n; i++) {
            char *full = tl_join(root, paths.v[i]);
            struct stat sb;
            lstat(full, &sb);
            if (S_ISDIR(sb.st_mode)) {
                bad |= tl_walk(root, paths.v[i], TL_WALK_FOLLOW_INSIDE, root, NULL, &listed);
            } else if (S_ISREG(sb.st_mode)) {
                tl_strlist_push(&listed, paths.v[i]);
            } else if (S_ISLNK(sb.st_mode)) {
                struct stat ts;
                if (stat(full, &ts) == 0 && S_ISREG(ts.st_mode))
                    tl_strlist_push(&listed, paths.v[i]);
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
            goto done;
        tl_strlist_sort(&listed);
        size_t k = 0;
        for (size_t i = 0; i < listed.n; i++) {
            if (k && !strcmp(listed.v[k - 1], listed.v[i])) {
                free(listed.v[i]);
                continue;
            }
            listed.v[k++] = listed.v[i];
        }
        listed.n = k;
        ns = listed.n;
        s = calloc(ns ? ns : 1, sizeof *s);
        char **full = calloc(ns ? ns : 1, sizeof *full);
        tl_hash_result *res = calloc(ns ? ns : 1, sizeof *res);
        for (size_t i = 0; i < ns; i++)
            full[i] = stage_mount_source(root, mapped ? &ms : NULL, listed.v[i]);
        tl_hash_files((const char *const *)full, ns, res, 0);
        for (size_t i = 0; i < ns; i++) {
            struct stat sb;
            s[i].path = listed.v[i];
            s[i].bytes = res[i].bytes;
            memcpy(s[i].sha, res[i].hex, TL_SHA256_HEX);
            s[i].exec = stat(full[i], &sb) == 0 && (sb.st_mode & 0111);
            if (res[i].err) {
                tl_error(full[i], NULL, "cannot read: %s", tl_strerror(res[i].err));
                bad = 1;
            }
        }
        for (size_t i = 0; i < ns; i++)
            free(full[i]);
        free(full);
        free(res);
        if (bad)
            goto done;
    }
    if (rev) {
        if (!mapped) {
            if (paths.n == 0) {
                tl_error(root, "--from-git", "no path to stage exists in %s", rev);
                goto done;
            }
            if (tl_git_archive_read(root, rev, (const char *const *)paths.v, paths.n, &mem, &nmem))
                goto done;
        }
        for (size_t i = 0; mapped && i < ms.n; i++) {
            if (!in_rev[i])
                continue;
            const char *rel = ms.m[i].from + strlen(root) + 1;
            tl_mem_file *part = NULL;
            size_t np = 0;
            if (stage_git_read_as(root, rev, rel, ms.m[i].dest, &part, &np)) {
                tl_mem_files_free(part, np);
                goto done;
            }
            if (!np) {
                tl_error(proj.file, ms.m[i].dest, "%s is not in revision %s (the project's folder %s holds it in the "
                         "working tree only)", rel, rev, root);
                tl_mem_files_free(part, np);
                goto done;
            }
            tl_mem_file *grown = realloc(mem, (nmem + np) * sizeof *mem);
            if (!grown) {
                tl_mem_files_free(part, np);
                tl_error(out, NULL, "out of memory");
                goto done;
            }
            mem = grown;
            memcpy(mem + nmem, part, np * sizeof *part);   /* the paths and data move to mem */
            nmem += np;
            free(part);
        }
        if (src_append_mem(&s, &ns, mem, nmem))
            goto done;
    }
    /* the files tandem.json generates (a subject's link libraries, stage_project.h): one of
     * that path from the sources is not staged (refused from the working tree, where the
     * project file refuses it too; left out of a revision older than the link field) */
    if (ms.n) {
        size_t k = 0;
        int bad = 0;
        for (size_t i = 0; i < ns; i++) {
            const char *by = stage_project_generated_by(&proj, s[i].path);
            if (!by) {
                s[k++] = s[i];
            } else if (rev) {
                fprintf(stderr, "tandem stage: note: %s of %s is not staged: subject %s links what %s says "
                        "(subjects.%s.link)\n", s[i].path, rev, by, proj.file, by);
            } else {
                tl_error(s[i].path, NULL, "refused: subject %s's link libraries are named in %s (subjects.%s.link)",
                         by, proj.file, by);
                bad = 1;
            }
        }
        ns = k;
        if (bad || stage_project_generated(&proj, &gen, &ngen))
            goto done;
        if (src_append_mem(&s, &ns, gen, ngen))
            goto done;
    }
    if (ns > 1)
        qsort(s, ns, sizeof *s, src_cmp);
    /* the staging's own manifest sits at the top: a source of that name would be clobbered */
    for (size_t i = 0; i < ns; i++) {
        size_t k = strlen(TL_STAGING_JSON);
        if (!strncmp(s[i].path, TL_STAGING_JSON, k) && (s[i].path[k] == '\0' || s[i].path[k] == '/')) {
            tl_error(s[i].path, NULL, "refused: %s at the top of the staging is the staging's own manifest; rename "
                     "it, or stage from a --root where it is not at the top", TL_STAGING_JSON);
            goto done;
        }
    }

    /* Provenance; a mapped staging says where each folder came from, so that a compile
     * error names the user's file, not the staged copy (tl_srcmap.h). */
    char head[128] = "";
    st.source_root = strdup(root);
    if (mapped) {
        const char *from[STAGE_MAX_MOUNTS], *dest[STAGE_MAX_MOUNTS];
        for (size_t i = 0; i < ms.n; i++) from[i] = ms.m[i].from, dest[i] = ms.m[i].dest;
        st.mounts = tl_srcmap_mounts(from, dest, ms.n);
    }
    if (rev) {
        char spec[1024];
        snprintf(spec, sizeof spec, "%s^{commit}", rev);
        const char *gargv[] = { "git", "-C", root, "rev-parse", "--verify", "-q", spec, NULL };
        if (tl_run_capture(gargv, head, sizeof head, NULL) != 0 || !head[0]) {
            tl_error(root, "--from-git", "cannot resolve revision '%s'", rev);
            goto done;
        }
        st.git_head = strdup(head);
        st.git_rev = strdup(rev);
        st.dirty = 0;
    } else {
        const char *gargv[] = { "git", "-C", root, "rev-parse", "--verify", "-q", "HEAD", NULL };
        if (tl_run_capture(gargv, head, sizeof head, NULL) == 0 && head[0]) {
            st.git_head = strdup(head);
            const char **sargv = calloc(paths.n + 8, sizeof *sargv);
            size_t k = 0;
            sargv[k++] = "git";
            sargv[k++] = "-C";
            sargv[k++] = root;
            sargv[k++] = "status";
            sargv[k++] = "--porcelain";
            sargv[k++] = "--";
            /* mapped: the mounts' sources inside the project's tree (the others are not its) */
            for (size_t i = 0; i < paths.n; i++) {
                if (!mapped) { sargv[k++] = paths.v[i]; continue; }
                const char *from = ms.m[i].from;
                if (path_inside(from, root) && from[strlen(root)]) sargv[k++] = from + strlen(root) + 1;
            }
            int nonempty = 0;
            int sr = tl_run_capture(sargv, NULL, 0, &nonempty);
            st.dirty = sr != 0 || nonempty;
            free(sargv);
        }
    }
    st.npaths = paths.n;
    st.paths = calloc(paths.n ? paths.n : 1, sizeof *st.paths);
    for (size_t i = 0; i < paths.n; i++)
        st.paths[i] = strdup(paths.v[i]);
    st.nfiles = ns;
    st.files = calloc(ns ? ns : 1, sizeof *st.files);
    uint64_t total = 0;
    for (size_t i = 0; i < ns; i++) {
        st.files[i].path = strdup(s[i].path);
        st.files[i].bytes = s[i].bytes;
        memcpy(st.files[i].sha256, s[i].sha, TL_SHA256_HEX);
        total += s[i].bytes;
    }
    tl_staging_hash(st.files, st.nfiles, st.staging_hash);

    /* The existing staging, if any. */
    int fresh = 1;
    char *sj = tl_join(out, TL_STAGING_JSON);
    struct stat ob;
    if (lstat(out, &ob) == 0) {
        if (!S_ISDIR(ob.st_mode)) {
            tl_error(out, "--out", "exists and is not a folder");
            free(sj);
            goto done;
        }
        if (tl_is_file(sj)) {
            fresh = 0;
        } else {
            tl_strlist any = { 0 };
            tl_walk(out, NULL, TL_WALK_REFUSE_SYMLINKS, NULL, NULL, &any);
            int nonempty = any.n > 0;
            tl_strlist_free(&any);
            if (nonempty) {
                tl_error(out, "--out", "not empty and holds no staging.json: refusing to stage into it");
                free(sj);
                goto done;
            }
        }
    }
    free(sj);
    static const char *const skip[] = { TL_STAGING_JSON, NULL };
    tl_hash_result *dres = NULL;
    if (!fresh) {
        tl_staging old;
        tl_err_capture(NULL, 0, 0);
        if (tl_staging_load(out, &old) == 0) {
            if (strcmp(old.staging_hash, st.staging_hash))
                printf("stagingHash: was %s\n", old.staging_hash);
            tl_staging_free(&old);
        } else {
            fprintf(stderr, "tandem stage: the existing staging.json is invalid; it will be rewritten\n");
        }
        if (tl_walk(out, NULL, TL_WALK_REFUSE_SYMLINKS, NULL, skip, &disk)) {
            tl_error(out, NULL, "the staging holds entries that cannot be reconciled (see above); remove them");
            goto done;
        }
        tl_strlist_sort(&disk);
        char **full = calloc(disk.n ? disk.n : 1, sizeof *full);
        dres = calloc(disk.n ? disk.n : 1, sizeof *dres);
        for (size_t i = 0; i < disk.n; i++)
            full[i] = tl_join(out, disk.v[i]);
        tl_hash_files((const char *const *)full, disk.n, dres, 0);
        for (size_t i = 0; i < disk.n; i++)
            free(full[i]);
        free(full);
    }
    /* Merge: sources s (sorted) vs staging disk (sorted). */
    size_t ndiff = 0, nmiss = 0, nextra = 0;
    char *todo = calloc(ns ? ns : 1, 1);
    size_t j = 0;
    for (size_t i = 0; i < ns; i++) {
        while (j < disk.n && strcmp(disk.v[j], s[i].path) < 0) {
            printf("extra: %s (in the staging, not in the sources)\n", disk.v[j]);
            nextra++;
            j++;
        }
        if (j < disk.n && !strcmp(disk.v[j], s[i].path)) {
            if (dres[j].err || strcmp(dres[j].hex, s[i].sha) || dres[j].bytes != s[i].bytes) {
                printf("different: %s (staging sha256 %.16s..., source sha256 %.16s...)\n", s[i].path,
                       dres[j].err ? "unreadable" : dres[j].hex, s[i].sha);
                ndiff++;
                todo[i] = 1;
            }
            j++;
        } else {
            if (!fresh)
                printf("missing: %s (in the sources, not in the staging)\n", s[i].path);
            nmiss++;
            todo[i] = 1;
        }
    }
    for (; j < disk.n; j++) {
        printf("extra: %s (in the staging, not in the sources)\n", disk.v[j]);
        nextra++;
    }
    if (dry) {
        int changes = ndiff + nmiss + nextra > 0;
        printf("stage --dry-run: %zu files, %zu different, %zu missing, %zu extra; stagingHash %s\n", ns, ndiff,
               nmiss, nextra, st.staging_hash);
        free(todo);
        free(dres);
        rc = changes ? 1 : 0;
        goto done;
    }
    int e = tl_mkdirs(out);
    if (e) {
        tl_error(out, "--out", "cannot create: %s", tl_strerror(e));
        free(todo);
        free(dres);
        goto done;
    }
    int bad = 0;
    for (size_t i = 0; i < ns && !bad; i++) {
        if (!todo[i])
            continue;
        char *dst = tl_join(out, s[i].path);
        mode_t mode = s[i].exec ? 0755 : 0644;
        if (s[i].mem) {
            e = tl_write_atomic(dst, s[i].mem->data, s[i].mem->len, mode);
            if (e) {
                tl_error(dst, NULL, "cannot write: %s", tl_strerror(e));
                bad = 1;
            }
        } else {
            char *srcp = stage_mount_source(root, mapped ? &ms : NULL, s[i].path);
            char hex[TL_SHA256_HEX];
            uint64_t n;
            e = tl_copy_hash(srcp, dst, mode, hex, &n);
            if (e) {
                tl_error(dst, NULL, "cannot copy from %s: %s", srcp, tl_strerror(e));
                bad = 1;
            } else if (strcmp(hex, s[i].sha) || n != s[i].bytes) {
                tl_error(srcp, NULL, "changed while being staged; stage again");
                bad = 1;
            }
            free(srcp);
        }
        free(dst);
    }
    /* Remove extras. */
    j = 0;
    for (size_t i = 0; i < disk.n && !bad; i++) {
        while (j < ns && strcmp(s[j].path, disk.v[i]) < 0)
            j++;
        if (j < ns && !strcmp(s[j].path, disk.v[i]))
            continue;
        char *f = tl_join(out, disk.v[i]);
        if (unlink(f) != 0) {
            tl_error(f, NULL, "cannot remove: %s", tl_strerror(errno));
            bad = 1;
        } else {
            remove_empty_parents(out, f);
        }
        free(f);
    }
    free(todo);
    free(dres);
    if (bad || tl_staging_save(out, &st))
        goto done;
    if (fresh)
        printf("staged %zu files (%llu bytes) from %s%s%s into %s\n", ns, (unsigned long long)total, root,
               rev ? " at " : "", rev ? rev : "", out);
    else
        printf("staging %s updated: %zu files, %zu different, %zu missing, %zu extra applied\n", out, ns, ndiff, nmiss,
               nextra);
    printf("stagingHash %s%s\n", st.staging_hash, st.dirty ? " (working tree dirty)" : "");
    rc = 0;
done:
    free(s); /* the paths belong to listed or mem */
    tl_mem_files_free(mem, nmem);
    tl_mem_files_free(gen, ngen);
    tl_staging_free(&st);
    tl_strlist_free(&user_paths);
    tl_strlist_free(&paths);
    tl_strlist_free(&listed);
    tl_strlist_free(&disk);
    stage_mounts_free(&ms);
    tl_project_free(&proj);
    free(root);
    free(out);
    return rc;
}
