/*
 * tl_redact.h - replacing machine paths by placeholders in a folder of published evidence
 * (issue 18: a packet must not carry the absolute paths of the machine that ran it).
 */
#ifndef TL_REDACT_H
#define TL_REDACT_H
#include <stddef.h>

/* One machine path and its placeholder, e.g. {"/home/me/tandem/build/attempts/a", "<attempt>"}. */
typedef struct tl_redaction {
    const char *path;        /* absolute, normalised, not "/" */
    const char *placeholder; /* "<" [a-z-]+ ">" */
} tl_redaction;

/* Check a "PATH=<name>" argument (split at the last '='): PATH absolute and longer than
 * "/", no trailing '/', no control character; the placeholder "<" [a-z-]{1,32} ">".
 * 1 ok (r->path and r->placeholder point into arg, which is modified), 0 with *why set. */
int tl_redaction_parse(char *arg, tl_redaction *r, const char **why);

/* Redact every file of dir (recursively; symbolic links and special files refused):
 *  - *.json: parsed with cJSON; every string value and key has each path replaced where it
 *    stands as a whole path or a path prefix (the character before is not part of a name
 *    and the one after is '/', the end, or not a name character), longest path first;
 *    written back in tl_json_save's format only when something changed. Invalid JSON is
 *    refused (it could not be redacted safely).
 *  - *.md, *.txt, *.svg, *.log, *.csv: the same replacement on the bytes.
 *  - archives (*.zip, *.tar.zst, *.tar.gz, *.tar): left as they are (their bytes are the
 *    evidence their hashes bind).
 * Then every file but the archives is scanned for each path's bytes (and its JSON-escaped
 * form): any left is refused, naming the file. skip_top (NULL-terminated, may be NULL)
 * names files at the top of dir left out entirely. *nchanged gets the number of files
 * rewritten. 0 ok, 1 refused or failed (reported). */
int tl_redact_dir(const char *dir, const tl_redaction *r, size_t n, const char *const *skip_top, size_t *nchanged);

#endif
