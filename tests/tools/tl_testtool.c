/*
 * tl_testtool.c - helper for the tools tests: crafts hostile archives with libarchive and
 * drives the binary-manifest API (tl_manifest_write, tl_players_reusable) directly.
 *
 *   tl_testtool evil KIND OUT.tar [ABS_TARGET]   KIND: dotdot | abs | symlink | hardlink | dup
 *   tl_testtool manifest PLAYER_DIR BACKEND STAGING_DIR COMPILER FLAGS FILE...
 *   tl_testtool reusable PLAYERS_DIR STAGING_DIR     exit 0 reusable, 1 not (prints why)
 */
#include "tl_manifest.h"

#include <archive.h>
#include <archive_entry.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void add(struct archive *a, const char *name, int type, const char *data, const char *link)
{
    struct archive_entry *e = archive_entry_new();
    archive_entry_set_pathname(e, name);
    archive_entry_set_filetype(e, (unsigned)type);
    archive_entry_set_perm(e, type == AE_IFDIR ? 0755 : 0644);
    archive_entry_set_size(e, data ? (la_int64_t)strlen(data) : 0);
    if (link && type == AE_IFLNK)
        archive_entry_set_symlink(e, link);
    if (link && type == AE_IFREG)
        archive_entry_set_hardlink(e, link);
    if (archive_write_header(a, e) != ARCHIVE_OK)
        fprintf(stderr, "header %s: %s\n", name, archive_error_string(a));
    if (data)
        archive_write_data(a, data, strlen(data));
    archive_entry_free(e);
}

static int evil(const char *kind, const char *out, const char *abs)
{
    struct archive *a = archive_write_new();
    archive_write_set_format_pax_restricted(a);
    if (archive_write_open_filename(a, out) != ARCHIVE_OK) {
        fprintf(stderr, "%s: %s\n", out, archive_error_string(a));
        return 1;
    }
    add(a, "ok.txt", AE_IFREG, "fine\n", NULL);
    if (!strcmp(kind, "dotdot")) {
        add(a, "../escaped.txt", AE_IFREG, "pwned\n", NULL);
        add(a, "sub/../../escaped2.txt", AE_IFREG, "pwned\n", NULL);
    } else if (!strcmp(kind, "abs")) {
        add(a, abs, AE_IFREG, "pwned\n", NULL);
    } else if (!strcmp(kind, "symlink")) {
        add(a, "link", AE_IFLNK, NULL, abs);
        add(a, "link/through.txt", AE_IFREG, "pwned\n", NULL);
    } else if (!strcmp(kind, "hardlink")) {
        add(a, "hl", AE_IFREG, NULL, abs);
    } else if (!strcmp(kind, "dup")) {
        add(a, "ok.txt", AE_IFREG, "again\n", NULL);
    } else if (!strcmp(kind, "fileasdir")) {
        add(a, "ok.txt/inner", AE_IFREG, "x\n", NULL);
    } else {
        fprintf(stderr, "unknown kind %s\n", kind);
        return 2;
    }
    archive_write_close(a);
    archive_write_free(a);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 4 && !strcmp(argv[1], "evil"))
        return evil(argv[2], argv[3], argc > 4 ? argv[4] : "/tmp/tandem-evil-abs.txt");
    if (argc >= 7 && !strcmp(argv[1], "manifest")) {
        char id[65];
        int rc = tl_manifest_write(argv[2], argv[3], argv[4], argv[5], argv[6], (const char *const *)argv + 7,
                                   (size_t)(argc - 7), id);
        if (rc == 0)
            printf("buildId %s\n", id);
        return rc;
    }
    if (argc == 4 && !strcmp(argv[1], "reusable")) {
        char why[2048];
        int ok = tl_players_reusable(argv[2], argv[3], why, sizeof why);
        printf("%s\n", why);
        return ok ? 0 : 1;
    }
    fprintf(stderr, "usage: see tl_testtool.c\n");
    return 2;
}
