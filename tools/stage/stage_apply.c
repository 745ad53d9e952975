/*
 * stage_apply.c - `tandem stage` against the staging folder (stage_run.h): whether it may be
 * staged into, its files compared with the sources (different, missing, extra), and the
 * differences applied.
 */
#include "tl_err.h"
#include "tl_fs.h"
#include "tl_hash.h"
#include "tl_manifest.h"

#include "stage_run.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
int stage_existing(stage_run *g)
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
void stage_compare(stage_run *g)
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
int stage_apply(stage_run *g)
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

