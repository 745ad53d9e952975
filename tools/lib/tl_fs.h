/*
 * tl_fs.h - path safety, sorted recursive listing, file copy/read/write helpers.
 * Relative paths use '/' and are compared bytewise (strcmp) when sorted.
 */
#ifndef TL_FS_H
#define TL_FS_H
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "tl_hash.h"
#include "tl_safe.h"

/* A growable list of strings. */
typedef struct tl_strlist {
    char **v;
    size_t n, cap;
} tl_strlist;

int tl_strlist_push(tl_strlist *l, const char *s); /* copies s; 0 ok */
void tl_strlist_sort(tl_strlist *l);               /* bytewise */
void tl_strlist_free(tl_strlist *l);
int tl_strcmp_ptr(const void *a, const void *b); /* qsort helper for char** */

/* Is rel a safe relative path: non-empty, not absolute, no "", "." or ".." component,
 * no backslash, no control character? Returns 1 if safe; otherwise 0 and *why says why. */
int tl_rel_path_ok(const char *rel, const char **why);

char *tl_join(const char *a, const char *b); /* "a/b" (malloc), b may be NULL or "" */

int tl_mkdirs(const char *dir);             /* mkdir -p; 0 ok, errno on failure */
int tl_mkdirs_parent(const char *filepath); /* mkdir -p of dirname(filepath) */
int tl_rm_rf(const char *path);             /* recursive remove, never follows symlinks */
int tl_is_dir(const char *path);
int tl_is_file(const char *path);

/* Listing policy for symlinks met while walking. */
enum {
    TL_WALK_REFUSE_SYMLINKS = 0, /* any symlink is an error */
    TL_WALK_FOLLOW_INSIDE = 1    /* a symlink to a regular file whose real path is inside
                                    `confine` is listed like a file; others are errors */
};

/* List the regular files under base/rel (rel may be NULL/"" for base itself) as paths
 * relative to base (prefixed with rel), appended to out. Refuses non-regular files and
 * symlinks (per policy), reporting "path: reason". Skips entries named in skip_top
 * (NULL-terminated) when they sit directly in base. Returns 0 ok, 1 error. Sort after. */
int tl_walk(const char *base, const char *rel, int policy, const char *confine, const char *const *skip_top,
            tl_strlist *out);

/* Read a whole regular file (NUL-terminated for convenience), symbolic links followed,
 * through tl_read_file (never blocks on a FIFO). 0 ok, else a code for tl_strerror(). */
int tl_read_all(const char *path, char **buf, size_t *len);
/* Write through a temporary file and rename. 0 ok, errno on failure. */
int tl_write_atomic(const char *path, const void *buf, size_t len, mode_t mode);
/* Copy the regular file src to dst (dst's parent created), hashing the bytes written.
 * 0 ok, else a code for tl_strerror(). */
int tl_copy_hash(const char *src, const char *dst, mode_t mode, char hex[TL_SHA256_HEX], uint64_t *bytes);

/* Make an absolute, normalised path (no symlink resolution needed to exist). malloc. */
char *tl_abspath(const char *path);

#endif
