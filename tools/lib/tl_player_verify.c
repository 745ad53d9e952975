/* tl_player_verify.c - the players of a folder against their binary manifests and
 * staging (tl_players_verify), the player shell a build copies, and the reuse rule. */
#include "tl_manifest.h"

#include "tl_err.h"
#include "tl_fs.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

static int is_manifest_name(const char *n)
{
    size_t l = strlen(n);
    return l > 21 && !strncmp(n, "binary-manifest-", 16) && !strcmp(n + l - 5, ".json");
}

/* Folders under player_dir that hold manifests: player_dir itself, or else its subfolders. */
static void manifest_dirs(const char *player_dir, tl_strlist *dirs)
{
    DIR *d = opendir(player_dir);
    struct dirent *e;
    int here = 0;
    tl_strlist subs = { 0 };
    if (!d)
        return;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char *f = tl_join(player_dir, e->d_name);
        struct stat st;
        if (lstat(f, &st) == 0) {
            if (S_ISREG(st.st_mode) && is_manifest_name(e->d_name))
                here = 1;
            else if (S_ISDIR(st.st_mode))
                tl_strlist_push(&subs, f);
        }
        free(f);
    }
    closedir(d);
    if (here) {
        tl_strlist_push(dirs, player_dir);
    } else {
        tl_strlist_sort(&subs);
        for (size_t i = 0; i < subs.n; i++) {
            DIR *sd = opendir(subs.v[i]);
            int has = 0;
            while (sd && (e = readdir(sd)) != NULL)
                if (is_manifest_name(e->d_name))
                    has = 1;
            if (sd)
                closedir(sd);
            if (has)
                tl_strlist_push(dirs, subs.v[i]);
        }
    }
    tl_strlist_free(&subs);
}

static int verify_one_dir(const char *dir, const char *staging_override, tl_report *rep, tl_strlist *staging_done,
                          int *nman)
{
    tl_strlist names = { 0 };
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL)
        if (is_manifest_name(e->d_name))
            tl_strlist_push(&names, e->d_name);
    if (d)
        closedir(d);
    tl_strlist_sort(&names);
    /* Union of listed files for the extra check. */
    tl_file_rec *all = NULL;
    size_t nall = 0;
    int rc = 0;
    for (size_t i = 0; i < names.n; i++) {
        char *mpath = tl_join(dir, names.v[i]);
        tl_bmanifest m;
        (*nman)++;
        if (tl_bmanifest_load(mpath, &m)) {
            tl_mismatch(rep, "invalid", mpath, "manifest cannot be used (see above)");
            free(mpath);
            rc = 1;
            continue;
        }
        char expect[64];
        snprintf(expect, sizeof expect, "binary-manifest-%s.json", m.backend);
        if (strcmp(expect, names.v[i]))
            tl_mismatch(rep, "invalid", mpath, "backend \"%s\" does not match the file name", m.backend);
        /* Binaries: changed / missing (extra checked over the union below). */
        for (size_t k = 0; k < m.nfiles; k++) {
            tl_file_rec *na = realloc(all, (nall + 1) * sizeof *all);
            if (!na)
                break;
            all = na;
            all[nall] = m.files[k];
            all[nall].path = strdup(m.files[k].path);
            nall++;
        }
        /* Staging. */
        const char *sdir = staging_override ? staging_override : m.staging_dir;
        if (!sdir) {
            tl_mismatch(rep, "invalid", mpath, "stagingDir not recorded; pass --staging DIR");
        } else {
            char *abs = tl_abspath(sdir);
            tl_staging st;
            int seen = 0;
            for (size_t k = 0; k < staging_done->n; k++)
                if (!strcmp(staging_done->v[k], abs))
                    seen = 1;
            memset(&st, 0, sizeof st);
            if (!seen) {
                tl_strlist_push(staging_done, abs);
                tl_staging_verify(abs, &st, rep);
            } else {
                if (tl_staging_load(abs, &st))
                    memset(&st, 0, sizeof st);
            }
            if (st.staging_hash[0] && strcmp(st.staging_hash, m.staging_hash))
                tl_mismatch(rep, "changed", mpath,
                            "stagingHash %.16s... differs from the staging %s (stagingHash %.16s...): staged sources "
                            "are not the ones this player was built from",
                            m.staging_hash, abs, st.staging_hash);
            tl_staging_free(&st);
            free(abs);
        }
        tl_bmanifest_free(&m);
        free(mpath);
    }
    /* Check the player files against the union of manifests. */
    if (nall > 1)
        qsort(all, nall, sizeof *all, tl_file_rec_cmp);
    size_t k = 0;
    for (size_t i = 0; i < nall; i++) {
        if (k && !strcmp(all[k - 1].path, all[i].path)) {
            if (strcmp(all[k - 1].sha256, all[i].sha256)) {
                char *f = tl_join(dir, all[i].path);
                tl_mismatch(rep, "invalid", f, "listed by two manifests with different hashes");
                free(f);
            }
            free(all[i].path);
            continue;
        }
        all[k++] = all[i];
    }
    nall = k;
    if (tl_files_check(dir, all, nall, NULL, is_manifest_name, rep))
        rc = 1;
    tl_file_recs_free(all, nall);
    tl_strlist_free(&names);
    return rc;
}

int tl_players_verify(const char *player_dir, const char *staging_override, tl_report *rep, int *nmanifests_out)
{
    unsigned before = rep->count;
    tl_strlist dirs = { 0 }, staging_done = { 0 };
    int nman = 0;
    if (!tl_is_dir(player_dir)) {
        tl_mismatch(rep, "missing", player_dir, "player folder not found");
        return 1;
    }
    manifest_dirs(player_dir, &dirs);
    if (dirs.n == 0)
        tl_mismatch(rep, "missing", player_dir, "no binary-manifest-*.json in it or its subfolders");
    for (size_t i = 0; i < dirs.n; i++)
        verify_one_dir(dirs.v[i], staging_override, rep, &staging_done, &nman);
    tl_strlist_free(&dirs);
    tl_strlist_free(&staging_done);
    if (nmanifests_out)
        *nmanifests_out = nman;
    return rep->count != before;
}

int tl_player_shell(const char *arg, char *out, size_t len)
{
    if (arg) return snprintf(out, len, "%s", arg), access(out, X_OK);
    const char *env = getenv("TANDEM_PLAYER");
    if (env && *env) return snprintf(out, len, "%s", env), access(out, X_OK);
    char self[PATH_MAX];
    snprintf(out, len, "tandem-player");   /* beside this tool, or nowhere: nothing compiled in */
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
        self[n] = 0;
        char *slash = strrchr(self, '/');
        if (slash) {
            *slash = 0;
            snprintf(out, len, "%s/tandem-player", self);
            if (access(out, X_OK) == 0) return 0;
        }
    }
    return access(out, X_OK);
}

/* Each player folder's shell (a manifest folder's tandem-player, as tandem build copies it)
 * against the one a build would copy now: 0 the same bytes (or no folder has one), else 1
 * with the reason in why. */
static int players_shell_current(const char *players_dir, char *why, size_t whylen)
{
    tl_strlist dirs = { 0 };
    char shell[PATH_MAX] = "", have[TL_SHA256_HEX], want[TL_SHA256_HEX] = "";
    int rc = 0;
    manifest_dirs(players_dir, &dirs);
    for (size_t i = 0; i < dirs.n && !rc; i++) {
        char *copy = tl_join(dirs.v[i], "tandem-player");
        rc = 1;
        if (!tl_is_file(copy))
            rc = 0;
        else if (!want[0] && tl_player_shell(NULL, shell, sizeof shell))
            snprintf(why, whylen, "not reusable: no player shell to compare %s with (%s is not executable)", copy,
                     shell);
        else if (!want[0] && tl_sha256_file(shell, want, NULL))
            snprintf(why, whylen, "not reusable: %s: cannot read the player shell", shell);
        else if (tl_sha256_file(copy, have, NULL))
            snprintf(why, whylen, "not reusable: %s: cannot read the players' shell", copy);
        else if (strcmp(have, want))
            snprintf(why, whylen, "not reusable: %s differs from the player shell a build copies now (%s, rebuilt "
                                  "since)", copy, shell);
        else
            rc = 0;
        free(copy);
    }
    tl_strlist_free(&dirs);
    return rc;
}

int tl_players_reusable(const char *players_dir, const char *staging_dir, char *why, size_t whylen)
{
    char first[1024] = "";
    char errbuf[1024] = "";
    tl_report rep = { NULL, NULL, first, sizeof first, 0 };
    int nman = 0;
    tl_err_capture(errbuf, sizeof errbuf, 1);
    int bad = tl_players_verify(players_dir, staging_dir, &rep, &nman);
    tl_err_capture(NULL, 0, 0);
    char shell_why[PATH_MAX + 256] = "";
    if (!bad && players_shell_current(players_dir, shell_why, sizeof shell_why))
        bad = 1;
    if (why && whylen) {
        if (shell_why[0])
            snprintf(why, whylen, "%s", shell_why);
        else if (bad)
            snprintf(why, whylen, "not reusable: %s%s%s", first, errbuf[0] ? ": " : "", errbuf);
        else
            snprintf(why, whylen, "reusable: %d manifest(s) in %s match their binaries and staging %s, and their "
                                  "shell is this toolchain's", nman, players_dir, staging_dir);
    }
    return !bad;
}
