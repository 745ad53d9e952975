/*
 * stage_project.c - the mounts of a project's staging (see stage_project.h).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "stage_project.h"

#include "tl_err.h"
#include "tl_proc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int add(stage_mounts *ms, const char *from, const char *dest)
{
    if (ms->n == STAGE_MAX_MOUNTS) { tl_error(dest, NULL, "too many staged folders"); return 1; }
    stage_mount *m = &ms->m[ms->n];
    m->from = realpath(from, NULL);   /* the project validated that it exists */
    m->dest = strdup(dest);
    if (!m->from || !m->dest) {
        tl_error(from, NULL, "cannot resolve the path");
        free(m->from);
        free(m->dest);
        return 1;
    }
    ms->n++;
    return 0;
}

static int cmp_dest(const void *a, const void *b)
{
    return strcmp(((const stage_mount *)a)->dest, ((const stage_mount *)b)->dest);
}

int stage_mounts_from_project(const tl_project *p, stage_mounts *ms)
{
    memset(ms, 0, sizeof *ms);
    char dest[512];
    int bad = add(ms, p->sources, "runtime/src") | add(ms, p->include, "runtime/include");
    /* The player's headers include runtime/port/td_port.h (the compiler shims both
     * backends need); a library without a port layer of its own uses Tandem's. */
    char *port = p->port ? strdup(p->port) : tl_join(p->tandem_root, "runtime/port");
    bad |= add(ms, port, "runtime/port");
    free(port);
    if (p->contract) bad |= add(ms, p->contract, "runtime/contract.json");
    /* The module/host ABI headers are the player's: always Tandem's own. */
    char *inc = tl_join(p->tandem_root, "players/include");
    bad |= add(ms, inc, "players/include");
    free(inc);
    for (int i = 0; i < p->nsubjects; i++) {
        snprintf(dest, sizeof dest, "players/subjects/%s", p->subjects[i].name);
        bad |= add(ms, p->subjects[i].folder, dest);
    }
    for (int i = 0; i < p->nsuites; i++) {
        snprintf(dest, sizeof dest, "players/suites/%s", p->suites[i].name);
        bad |= add(ms, p->suites[i].folder, dest);
    }
    if (bad) { stage_mounts_free(ms); return 1; }
    qsort(ms->m, ms->n, sizeof ms->m[0], cmp_dest);
    char *root = realpath(p->root, NULL);
    ms->identity = root != NULL;
    for (size_t i = 0; root && i < ms->n; i++) {
        char *same = tl_join(root, ms->m[i].dest);
        if (!same || strcmp(same, ms->m[i].from)) ms->identity = 0;
        free(same);
    }
    free(root);
    return 0;
}

void stage_mounts_free(stage_mounts *ms)
{
    for (size_t i = 0; i < ms->n; i++) { free(ms->m[i].from); free(ms->m[i].dest); }
    ms->n = 0;
}

/* The mount holding dest: dest equals its dest or lies under it. */
static const stage_mount *find(const stage_mounts *ms, const char *dest)
{
    for (size_t i = 0; ms && i < ms->n; i++) {
        size_t l = strlen(ms->m[i].dest);
        if (!strncmp(dest, ms->m[i].dest, l) && (dest[l] == '/' || dest[l] == '\0')) return &ms->m[i];
    }
    return NULL;
}

char *stage_mount_source(const char *root, const stage_mounts *ms, const char *dest)
{
    const stage_mount *m = find(ms, dest);
    if (!m) return tl_join(root, dest);
    const char *rest = dest + strlen(m->dest);
    return rest[0] ? tl_join(m->from, rest + 1) : strdup(m->from);
}

int td_verb_stage(int argc, char **argv);

int stage_project_run(const char *project, const char *out)
{
    char *argv[] = { "stage", "--out", (char *)out, project ? "--project" : NULL, (char *)project, NULL };
    return td_verb_stage(project ? 5 : 3, argv);
}

int stage_mounts_list(const stage_mounts *ms, tl_strlist *out)
{
    int bad = 0;
    for (size_t i = 0; i < ms->n; i++) {
        const stage_mount *m = &ms->m[i];
        if (!tl_is_dir(m->from)) {
            bad |= tl_strlist_push(out, m->dest) != 0;
            continue;
        }
        tl_strlist files = { 0 };
        bad |= tl_walk(m->from, "", TL_WALK_FOLLOW_INSIDE, m->from, NULL, &files);
        for (size_t k = 0; k < files.n; k++) {
            char *d = tl_join(m->dest, files.v[k]);
            bad |= !d || tl_strlist_push(out, d) != 0;
            free(d);
        }
        tl_strlist_free(&files);
    }
    return bad;
}

#define LINK_LIBS "link.libs"

const char *stage_project_generated_by(const tl_project *p, const char *path)
{
    static const char pre[] = "players/subjects/";
    if (strncmp(path, pre, sizeof pre - 1)) return NULL;
    const char *name = path + sizeof pre - 1, *slash = strchr(name, '/');
    if (!slash || strcmp(slash + 1, LINK_LIBS)) return NULL;
    for (int i = 0; i < p->nsubjects; i++)
        if (strlen(p->subjects[i].name) == (size_t)(slash - name) && !strncmp(p->subjects[i].name, name, slash - name))
            return p->subjects[i].name;
    return NULL;
}

int stage_project_generated(const tl_project *p, tl_mem_file **out, size_t *n)
{
    *out = calloc((size_t)p->nsubjects + 1, sizeof **out);
    *n = 0;
    if (!*out) { tl_error(p->file, "subjects", "out of memory"); return 1; }
    for (int i = 0; i < p->nsubjects; i++) {
        const tl_project_subject *s = &p->subjects[i];
        if (!s->nlink) continue;
        size_t len = 0;
        for (int k = 0; k < s->nlink; k++) len += strlen(s->link[k]) + 1;
        tl_mem_file *f = &(*out)[*n];
        char path[512];
        snprintf(path, sizeof path, "players/subjects/%s/" LINK_LIBS, s->name);
        f->path = strdup(path);
        f->data = malloc(len + 1);
        if (!f->path || !f->data) {
            free(f->path);
            free(f->data);
            tl_error(p->file, "subjects", "out of memory");
            return 1;
        }
        f->len = 0;
        for (int k = 0; k < s->nlink; k++)
            f->len += (size_t)sprintf((char *)f->data + f->len, "%s\n", s->link[k]);
        (*n)++;
    }
    return 0;
}

int stage_git_read_as(const char *root, const char *rev, const char *rel, const char *dest, tl_mem_file **out,
                      size_t *n)
{
    *out = NULL;
    *n = 0;
    char *spec = malloc(strlen(rev) + strlen(rel) + 4);
    if (!spec) { tl_error(root, rel, "out of memory"); return 1; }
    sprintf(spec, "%s:./%s", rev, rel);   /* ./: relative to root, which may be below the top */
    const char *ex[] = { "git", "-C", root, "cat-file", "-e", spec, NULL };
    int absent = tl_run_capture(ex, NULL, 0, NULL) != 0;
    free(spec);
    if (absent) return 0;
    const char *paths[] = { rel };
    if (tl_git_archive_read(root, rev, paths, 1, out, n)) return 1;
    size_t rl = strlen(rel);
    for (size_t i = 0; i < *n; i++) {
        tl_mem_file *f = &(*out)[i];
        const char *rest = f->path + rl;
        if (strncmp(f->path, rel, rl) || (rest[0] && rest[0] != '/')) {
            tl_error(root, rel, "git archive %s gave %s, which is not under it", rev, f->path);
            return 1;
        }
        char *np = malloc(strlen(dest) + strlen(rest) + 1);
        if (!np) { tl_error(root, rel, "out of memory"); return 1; }
        sprintf(np, "%s%s", dest, rest);
        free(f->path);
        f->path = np;
    }
    return 0;
}
