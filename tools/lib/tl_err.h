/*
 * tl_err.h - error and mismatch reporting for the tool library.
 *
 * Errors read "file: field: reason" (field omitted when there is none), on stderr.
 * A caller that wants the first error as text (e.g. the reuse rule's `why`) can
 * capture it with tl_err_capture().
 */
#ifndef TL_ERR_H
#define TL_ERR_H
#include <stddef.h>
#include <stdio.h>

#if defined(__GNUC__)
#define TL_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define TL_PRINTF(a, b)
#endif

/* Report an error "file: field: reason". file or field may be NULL. */
void tl_error(const char *file, const char *field, const char *fmt, ...) TL_PRINTF(3, 4);

/* While a capture is set, tl_error() also keeps the first message in buf (and still
 * prints it unless quiet is set). tl_err_capture(NULL, 0, 0) ends the capture. */
void tl_err_capture(char *buf, size_t len, int quiet);

/* A mismatch report: every mismatch is printed as "kind: name (detail)" to out and
 * counted; the first one is kept in first (when not NULL). */
typedef struct tl_report {
    FILE *out;          /* NULL: do not print */
    const char *prefix; /* printed before each line when not NULL, e.g. "staging /x" */
    char *first;
    size_t firstlen;
    unsigned count;
} tl_report;

void tl_mismatch(tl_report *r, const char *kind, const char *name, const char *fmt, ...) TL_PRINTF(4, 5);

#endif
