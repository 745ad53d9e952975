/*
 * tl_srcmap.h - from a staged file back to the user's own (issue 43, item 3): a compile
 * error names the staged copy (`.../staging/players/subjects/mylib/mylib_subject.c:42:20`),
 * whose edits are lost at the next stage; the terminal names the file the user edits.
 *
 * staging.json says where each staged file came from: a mapped staging (a project whose
 * folders are not at their staged places) records its "mounts", [{"path": staged folder or
 * file, "from": absolute source}]; any other file is sourceRoot/path. Staging copies bytes
 * unchanged, so line and column numbers carry over.
 */
#ifndef TL_SRCMAP_H
#define TL_SRCMAP_H
#include <stddef.h>

#include "tl_manifest.h"

/* The mounts of a mapped staging as staging.json records them (cJSON array, owned by the
 * caller): from[i] was staged at dest[i]. */
struct cJSON *tl_srcmap_mounts(const char *const *from, const char *const *dest, size_t n);

/* The user's file of staged path rel (malloc'd). */
char *tl_srcmap_source(const tl_staging *st, const char *rel);

/* text with every "<prefix><rel>" that names a staged file (prefix: the staging folder, or
 * a player folder's copy of it, each ending in '/') replaced by the user's file. malloc'd. */
char *tl_srcmap_text(const tl_staging *st, const char *text, const char *const *prefixes, size_t nprefixes);

#endif
