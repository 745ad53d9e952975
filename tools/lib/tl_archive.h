/*
 * tl_archive.h - reproducible archives, safe extraction and `git archive` reading,
 * all through libarchive.
 */
#ifndef TL_ARCHIVE_H
#define TL_ARCHIVE_H
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "tl_fs.h"

typedef enum { TL_FMT_ZIP, TL_FMT_TAR_ZST } tl_archive_format;

/* The fixed mtime of packed entries: $SOURCE_DATE_EPOCH when set to an integer, else
 * 315532800 (1980-01-01T00:00:00Z, the earliest time a zip entry can carry). */
time_t tl_pack_mtime(void);

/* Write an archive of dir holding exactly the files (relative, sorted) in order, with
 * fixed mtime, uid/gid 0, no user/group names, perms 0644 (0755 when the file is
 * executable). Each file's bytes are checked against sha[i] (64 hex) while written when
 * sha is not NULL. Written to a temporary file and renamed to out_path. 0 ok, 1 error. */
int tl_pack_write(const char *dir, const tl_strlist *files, const char *const *sha, tl_archive_format fmt,
                  const char *out_path);

/* Limits of an extraction (issue 18: a 149-byte tar.zst must not become a 200 GiB file). */
typedef struct tl_extract_limits {
    uint64_t max_total;  /* bytes extracted in all, holes of sparse entries counted */
    uint64_t max_entry;  /* bytes of one entry */
    double max_ratio;    /* extracted bytes other than runs of zeros per archive byte (checked
                            above 1 MiB): zeros are written as holes, so they cost no disk and
                            only the two limits above bound them; `tandem pack --check` then
                            accepts the archive `tandem pack` wrote of a large sparse file */
} tl_extract_limits;
#define TL_EXTRACT_MAX_TOTAL ((uint64_t)4 << 30)
#define TL_EXTRACT_MAX_ENTRY ((uint64_t)1 << 30)
#define TL_EXTRACT_MAX_RATIO 1000.0
void tl_extract_limits_default(tl_extract_limits *l);

/* Extract archive_path (tar, tar.*, zip) into out_dir (created if needed). First a
 * pre-check pass refuses the whole archive when any entry is absolute, has a ".."
 * component, is a symlink, hardlink or special file, repeats a path, uses a file as a
 * folder, or would be written through a symlink already in out_dir; then extraction
 * with ARCHIVE_EXTRACT_SECURE_NODOTDOT | SECURE_SYMLINKS | SECURE_NOABSOLUTEPATHS.
 * Sparse entries are refused; declared and actual sizes are held to lim (NULL: the
 * defaults); a stop signal (tl_stop_signal) ends it. The archive is opened with
 * tl_open_regular (a FIFO is refused at once).
 * Nothing is written outside out_dir. 0 ok, 1 refused or failed (reported). */
int tl_archive_extract(const char *archive_path, const char *out_dir, const tl_extract_limits *lim);

/* One regular file read from an archive stream into memory. */
typedef struct tl_mem_file {
    char *path;
    unsigned char *data;
    size_t len;
    int exec;
} tl_mem_file;

/* Run `git -C root archive --format=tar rev -- paths...` and read its stdout with
 * libarchive (archive_read_open_fd on the pipe). Regular files are returned sorted by
 * path; directories are skipped; a symlink is resolved lexically to a regular file of
 * the same archive, and refused when it is absolute, escapes the root, or points at
 * anything else; other entry types and unsafe names are refused. 0 ok, 1 error. */
int tl_git_archive_read(const char *root, const char *rev, const char *const *paths, size_t npaths,
                        tl_mem_file **out, size_t *nout);
void tl_mem_files_free(tl_mem_file *f, size_t n);

#endif
