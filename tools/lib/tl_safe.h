/*
 * tl_safe.h - the one way the tools open a path they read (issue 18: a FIFO, a device
 * or a link where a file is expected must be refused at once, not block or follow).
 *
 * tl_open_regular() opens with O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY (plus
 * O_NOFOLLOW with TL_OPEN_NOFOLLOW), checks with fstat that it is a regular file, then
 * clears O_NONBLOCK. Failures are error codes that tl_strerror() words clearly:
 * errno values, or the TL_E_* codes below (never confused with errno values).
 */
#ifndef TL_SAFE_H
#define TL_SAFE_H
#include <stddef.h>
#include <sys/stat.h>

enum {
    TL_OPEN_FOLLOW = 0,   /* a symbolic link to a regular file is accepted (user arguments) */
    TL_OPEN_NOFOLLOW = 1, /* the last component must not be a symbolic link (files the tools wrote) */
};

enum {
    TL_E_BASE = 0x10000,
    TL_E_FIFO,    /* a FIFO (named pipe) */
    TL_E_DIR,     /* a directory */
    TL_E_DEVICE,  /* a character or block device */
    TL_E_SOCKET,  /* a socket */
    TL_E_SYMLINK, /* a symbolic link where none is expected */
    TL_E_TOOBIG,  /* larger than the caller's limit */
    TL_E_UTF8,    /* text that is not valid UTF-8 */
};

/* Open path for reading; fd >= 0, or -code (errno or TL_E_*). st (may be NULL) gets fstat. */
int tl_open_regular(const char *path, int flags, struct stat *st);
/* The words for an errno value or a TL_E_* code. */
const char *tl_strerror(int code);
/* Refuse anything but a regular file at path without opening it (lstat when nofollow).
 * 0 ok, else a code as above. */
int tl_check_regular(const char *path, int flags);

/* Read a whole regular file (NUL-terminated), refusing more than max bytes (0: 1 GiB).
 * 0 ok, else a code as above. */
int tl_read_file(const char *path, int flags, size_t max, char **buf, size_t *len);

/* SIGINT/SIGTERM while a long read runs (extraction, hashing): the handler only records
 * the signal here; the loops that read check it and stop, so the caller can remove its
 * temporary files and exit 1. tl_catch_stop_signals() installs the handler (no SA_RESTART). */
#include <signal.h>
extern volatile sig_atomic_t tl_stop_signal;
void tl_catch_stop_signals(void);

/* Is [s, s+n) valid UTF-8 (no overlongs, no surrogates, <= U+10FFFF)? 1 yes. */
int tl_utf8_valid(const char *s, size_t n);

#endif
