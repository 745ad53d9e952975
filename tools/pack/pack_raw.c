/*
 * pack_raw.c - the raw archives of a published packet: their lines in files.sha256 and
 * their verification (pack_raw.h says what a raw archive is and why).
 */
#include "pack_raw.h"

#include "tl_fs.h"
#include "tl_hash.h"
#include "tl_safe.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

size_t pk_classify(const tl_file_rec *v, size_t n, unsigned char *kind)
{
    size_t nraw = 0;
    for (size_t i = 0; i < n; i++)
        kind[i] = PK_COMMITTED;
    for (size_t i = 0; i < n; i++) {
        const char *slash = strchr(v[i].path, '/');
        if (!slash)
            continue;
        /* the first component, looked up among the lines (sorted by path) */
        char *top = strndup(v[i].path, (size_t)(slash - v[i].path));
        tl_file_rec key = { top, 0, "" };
        const tl_file_rec *a = bsearch(&key, v, n, sizeof *v, tl_file_rec_cmp);
        free(top);
        if (!a)
            continue;
        kind[i] = PK_MEMBER;
        if (kind[a - v] != PK_RAW)
            nraw++;
        kind[a - v] = PK_RAW;
    }
    return nraw;
}

int pk_extract_tmp(const char *archive, const tl_extract_limits *lim, char **tmp_out)
{
    const char *tmpd = getenv("TMPDIR");
    char *tmpl = tl_join(tmpd && *tmpd ? tmpd : "/tmp", "tandem-check-XXXXXX");
    *tmp_out = NULL;
    tl_catch_stop_signals(); /* before the folder exists: a signal never leaves it behind */
    if (!mkdtemp(tmpl)) {
        tl_error(tmpl, NULL, "cannot create a temporary folder: %s", tl_strerror(errno));
        free(tmpl);
        return 1;
    }
    if (tl_archive_extract(archive, tmpl, lim) || tl_stop_signal) {
        tl_rm_rf(tmpl);
        free(tmpl);
        return 1;
    }
    *tmp_out = tmpl;
    return 0;
}

/* The members of an archive: their paths (sorted) and SHA-256. 0 ok, 1 refused (reported). */
static int pk_members(const char *archive, const tl_extract_limits *lim, tl_strlist *names, tl_hash_result **res)
{
    char *tmp;
    *res = NULL;
    if (pk_extract_tmp(archive, lim, &tmp))
        return 1;
    int rc = tl_walk(tmp, NULL, TL_WALK_REFUSE_SYMLINKS, NULL, NULL, names);
    tl_strlist_sort(names);
    char **full = calloc(names->n + 1, sizeof *full);
    *res = calloc(names->n + 1, sizeof **res);
    for (size_t i = 0; i < names->n; i++)
        full[i] = tl_join(tmp, names->v[i]);
    if (!rc)
        tl_hash_files_flags((const char *const *)full, names->n, *res, 0, TL_OPEN_NOFOLLOW);
    for (size_t i = 0; i < names->n; i++) {
        if (!rc && (*res)[i].err) {
            tl_error(archive, names->v[i], "cannot read the extracted member: %s", tl_strerror((*res)[i].err));
            rc = 1;
        }
        free(full[i]);
    }
    free(full);
    tl_rm_rf(tmp);
    free(tmp);
    return rc;
}

void pk_push(tl_file_rec **recs, size_t *n, char *path, const char *hex)
{
    *recs = realloc(*recs, (*n + 1) * sizeof **recs);
    (*recs)[*n].path = path;
    (*recs)[*n].bytes = UINT64_MAX;
    memcpy((*recs)[*n].sha256, hex, TL_SHA256_HEX);
    (*n)++;
}

int pk_raw_recs(const char *path, const char *name, const tl_extract_limits *lim, tl_file_rec **recs, size_t *n)
{
    char hex[TL_SHA256_HEX];
    uint64_t bytes;
    int e = tl_sha256_file(path, hex, &bytes);
    if (e) {
        tl_error(path, "--raw-archive", "cannot read: %s", tl_strerror(e));
        return 1;
    }
    tl_strlist names = { 0 };
    tl_hash_result *res;
    if (pk_members(path, lim, &names, &res)) {
        tl_error(path, "--raw-archive", "not an archive that extracts safely (above)");
        tl_strlist_free(&names);
        free(res);
        return 1;
    }
    pk_push(recs, n, strdup(name), hex);
    for (size_t i = 0; i < names.n; i++)
        pk_push(recs, n, tl_join(name, names.v[i]), res[i].hex);
    tl_strlist_free(&names);
    free(res);
    return 0;
}

/* One raw archive at path against its line (self) and its members' lines m[0..nm). */
static void pk_check_one(const char *path, const tl_file_rec *self, const tl_file_rec *m, size_t nm,
                         const tl_extract_limits *lim, tl_report *rep)
{
    char hex[TL_SHA256_HEX];
    uint64_t bytes;
    int e = tl_sha256_file(path, hex, &bytes);
    if (e) {
        tl_mismatch(rep, "unreadable", path, "%s", tl_strerror(e));
        return;
    }
    if (strcmp(hex, self->sha256))
        tl_mismatch(rep, "changed", path, "expected sha256 %s, found %s", self->sha256, hex);
    tl_strlist names = { 0 };
    tl_hash_result *res;
    if (pk_members(path, lim, &names, &res)) {
        tl_mismatch(rep, "invalid", path, "its members cannot be read (above)");
        tl_strlist_free(&names);
        free(res);
        return;
    }
    /* both sorted: the listed members (after "<name>/") against the extracted ones */
    size_t pre = strlen(self->path) + 1, i = 0, k = 0;
    while (i < nm || k < names.n) {
        int c = i == nm ? 1 : k == names.n ? -1 : strcmp(m[i].path + pre, names.v[k]);
        char *shown = tl_join(path, c <= 0 ? m[i].path + pre : names.v[k]);
        if (c < 0)
            tl_mismatch(rep, "missing", shown, "expected sha256 %s, not in the archive", m[i].sha256);
        else if (c > 0)
            tl_mismatch(rep, "extra", shown, "sha256 %s, not listed", res[k].hex);
        else if (strcmp(m[i].sha256, res[k].hex))
            tl_mismatch(rep, "changed", shown, "expected sha256 %s, found %s", m[i].sha256, res[k].hex);
        free(shown);
        i += c <= 0;
        k += c >= 0;
    }
    tl_strlist_free(&names);
    free(res);
}

static int pk_under(const char *path, const char *name, size_t len)
{
    return !strncmp(path, name, len) && path[len] == '/';
}

static int pk_exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

size_t pk_check_raw(const char *dir, const char *label, const char *raw_dir, const tl_file_rec *v, size_t n,
                    const unsigned char *kind, const tl_extract_limits *lim, tl_report *rep)
{
    size_t absent = 0;
    for (size_t i = 0; i < n; i++) {
        if (kind[i] != PK_RAW)
            continue;
        /* its members: the lines under "<name>/", one block in sorted order */
        size_t len = strlen(v[i].path), first = i + 1, nm = 0;
        while (first < n && !pk_under(v[first].path, v[i].path, len))
            first++;
        while (first + nm < n && pk_under(v[first + nm].path, v[i].path, len))
            nm++;
        const tl_file_rec *m = v + first;
        char *in_dir = tl_join(dir, v[i].path), *in_raw = raw_dir ? tl_join(raw_dir, v[i].path) : NULL;
        int found = 0;
        const char *const where[] = { in_dir, in_raw };
        for (int w = 0; w < 2; w++) {
            if (!where[w] || !pk_exists(where[w]))
                continue;
            found = 1;
            pk_check_one(where[w], &v[i], m, nm, lim, rep);
            printf("pack --check %s: raw %s checked (%zu members listed)\n", label, where[w], nm);
        }
        if (in_raw && !pk_exists(in_raw))
            tl_mismatch(rep, "missing", in_raw, "raw archive not in --raw %s, expected sha256 %s", raw_dir,
                        v[i].sha256);
        else if (!found) {
            printf("pack --check %s: raw runs not present: %s and its %zu members not verified (their hashes are in "
                   "files.sha256; --raw DIR names the folder holding it)\n",
                   label, v[i].path, nm);
            absent++;
        }
        free(in_dir);
        free(in_raw);
    }
    return absent;
}
