/* tl_archive_int.h - what tl_archive.c (packing, extraction) and tl_git_archive.c (reading
 * `git archive`) share; not part of the tools' API (tl_archive.h). */
#ifndef TL_ARCHIVE_INT_H
#define TL_ARCHIVE_INT_H
#include <locale.h>

/* Run libarchive's name conversions under C.UTF-8 for the calling thread only: begin
 * returns the locale to restore with end ((locale_t)0 when C.UTF-8 is missing). */
locale_t tl_archive_utf8_begin(void);
void tl_archive_utf8_end(locale_t old);
/* An entry name without leading "./" and trailing '/' (malloc'd). */
char *tl_archive_norm_name(const char *n);

#endif
