/*
 * pack_raw.h - the raw archives of a published packet (issue 41), for `tandem pack`.
 *
 * A packet's raw runs (runs.zip, about 0.9 MB a packet, which git cannot delta) are not
 * committed: they are kept outside the repository (scripts/publish-packet.sh --raw-to DIR)
 * and the packet's files.sha256 lists their hashes twice over: the archive's own line
 * ("<sha256>  runs.zip") and one line per member ("<sha256>  runs.zip/<member>"). So a top-level
 * name that other lines of files.sha256 extend with '/' is a *raw archive*: the folder may
 * lack it (the committed files are then verified and the raw hashes said not verified);
 * when it is present, in the folder or in `--raw DIR`, its bytes and every member must
 * match, none missing, none extra. `tandem pack DIR --raw-archive FILE` writes those lines.
 */
#ifndef PACK_RAW_H
#define PACK_RAW_H
#include <stddef.h>

#include "tl_archive.h"
#include "tl_err.h"
#include "tl_manifest.h"

/* What a line of files.sha256 is. */
enum { PK_COMMITTED, PK_RAW, PK_MEMBER };

/* kind[i] for each of the n lines v[] (sorted by path, as read_sums checks). Returns the
 * count of raw archives. */
size_t pk_classify(const tl_file_rec *v, size_t n, unsigned char *kind);

/* Extract archive safely (tl_archive_extract, lim) into a new temporary folder under
 * $TMPDIR (default /tmp), returned in *tmp_out (the caller removes it with tl_rm_rf). A
 * stop signal removes it and fails. 0 ok, 1 refused or failed (reported, nothing left). */
int pk_extract_tmp(const char *archive, const tl_extract_limits *lim, char **tmp_out);

/* Append a line (path owned by the list from now on; hash only, no size). */
void pk_push(tl_file_rec **recs, size_t *n, char *path, const char *hex);

/* The lines of a raw archive at path, listed under name: its own line and one per member
 * ("<name>/<member>"), appended to *recs (grown, *n updated; paths malloc'd). 0 ok,
 * 1 refused (reported). */
int pk_raw_recs(const char *path, const char *name, const tl_extract_limits *lim, tl_file_rec **recs, size_t *n);

/* Verify the raw archives of the listing v[] (kind from pk_classify) whose folder is dir:
 * each is looked for in dir, then in raw_dir (NULL: not given). A mismatch, a missing or
 * extra member, or an archive named by raw_dir but absent goes to rep, with both hashes.
 * Prints to stdout what was verified and what was not present. Returns the count of
 * raw archives not present (their hashes not verified). */
size_t pk_check_raw(const char *dir, const char *label, const char *raw_dir, const tl_file_rec *v, size_t n,
                    const unsigned char *kind, const tl_extract_limits *lim, tl_report *rep);

#endif
