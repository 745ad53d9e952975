/* tl_stage_verify.c - re-hashing a folder against file records (tl_files_check) and a
 * staging folder against its staging.json. */
#include "tl_manifest.h"

#include "tl_err.h"
#include "tl_fs.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tl_files_check(const char *dir, const tl_file_rec *recs, size_t n, const char *const *skip_top,
                   int (*skip_fn)(const char *top_name), tl_report *rep)
{
    tl_strlist disk = { 0 };
    int rc = 0;
    if (!tl_is_dir(dir)) {
        tl_mismatch(rep, "missing", dir, "folder not found");
        return 0;
    }
    if (tl_walk(dir, NULL, TL_WALK_REFUSE_SYMLINKS, NULL, skip_top, &disk)) {
        tl_mismatch(rep, "invalid", dir, "folder holds entries that cannot be verified (see above)");
    }
    if (skip_fn) {
        size_t k = 0;
        for (size_t i = 0; i < disk.n; i++) {
            if (!strchr(disk.v[i], '/') && skip_fn(disk.v[i]))
                free(disk.v[i]);
            else
                disk.v[k++] = disk.v[i];
        }
        disk.n = k;
    }
    tl_strlist_sort(&disk);
    /* Hash the listed files that exist. */
    char **full = calloc(n ? n : 1, sizeof *full);
    tl_hash_result *res = calloc(n ? n : 1, sizeof *res);
    if (!full || !res) {
        rc = 1;
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        full[i] = tl_join(dir, recs[i].path);
    tl_hash_files_flags((const char *const *)full, n, res, 0, TL_OPEN_NOFOLLOW); /* a staged file is never a link */
    for (size_t i = 0; i < n; i++) {
        if (res[i].err == ENOENT || res[i].err == ENOTDIR)
            tl_mismatch(rep, "missing", full[i], NULL);
        else if (res[i].err)
            tl_mismatch(rep, "unreadable", full[i], "%s", tl_strerror(res[i].err));
        else if (strcmp(res[i].hex, recs[i].sha256) || (recs[i].bytes != UINT64_MAX && res[i].bytes != recs[i].bytes))
        {
            if (recs[i].bytes == UINT64_MAX)
                tl_mismatch(rep, "changed", full[i], "expected sha256 %.16s..., found %.16s...", recs[i].sha256,
                            res[i].hex);
            else
                tl_mismatch(rep, "changed", full[i],
                            "expected %llu bytes sha256 %.16s..., found %llu bytes sha256 %.16s...",
                            (unsigned long long)recs[i].bytes, recs[i].sha256, (unsigned long long)res[i].bytes,
                            res[i].hex);
        }
    }
    /* Extra: on disk, not in recs (both sorted). */
    size_t j = 0;
    for (size_t i = 0; i < disk.n; i++) {
        while (j < n && strcmp(recs[j].path, disk.v[i]) < 0)
            j++;
        if (j < n && !strcmp(recs[j].path, disk.v[i]))
            continue;
        char *f = tl_join(dir, disk.v[i]);
        tl_mismatch(rep, "extra", f, "not listed");
        free(f);
    }
out:
    if (full)
        for (size_t i = 0; i < n; i++)
            free(full[i]);
    free(full);
    free(res);
    tl_strlist_free(&disk);
    return rc;
}

int tl_staging_verify(const char *staging_dir, tl_staging *loaded_out, tl_report *rep)
{
    tl_staging st;
    unsigned before = rep->count;
    char *sj = tl_join(staging_dir, TL_STAGING_JSON);
    if (tl_staging_load(staging_dir, &st)) {
        tl_mismatch(rep, "invalid", sj, "staging.json cannot be used (see above)");
        free(sj);
        return 1;
    }
    free(sj);
    static const char *const skip[] = { TL_STAGING_JSON, NULL };
    if (tl_files_check(staging_dir, st.files, st.nfiles, skip, NULL, rep))
        tl_mismatch(rep, "invalid", staging_dir, "cannot check the staged files");
    if (loaded_out)
        *loaded_out = st;
    else
        tl_staging_free(&st);
    return rep->count != before;
}
