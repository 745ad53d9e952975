/*
 * stage_sources.c - the sources `tandem stage` stages (stage_run.h): the working tree's
 * files listed and hashed, a revision's read through `git archive` (--from-git), and the
 * files the project file generates; sorted, with the staging's own manifest name refused.
 */
#include "tl_err.h"
#include "tl_fs.h"
#include "tl_hash.h"
#include "tl_manifest.h"

#include "stage_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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
int stage_collect(stage_run *g)
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

