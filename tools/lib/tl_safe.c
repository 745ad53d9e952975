/* tl_safe.c - safe opening of files to read, UTF-8 validation (see tl_safe.h). */
#include "tl_safe.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int type_code(mode_t m)
{
    if (S_ISREG(m)) return 0;
    if (S_ISFIFO(m)) return TL_E_FIFO;
    if (S_ISDIR(m)) return TL_E_DIR;
    if (S_ISCHR(m) || S_ISBLK(m)) return TL_E_DEVICE;
    if (S_ISSOCK(m)) return TL_E_SOCKET;
    if (S_ISLNK(m)) return TL_E_SYMLINK;
    return TL_E_DEVICE;
}

int tl_check_regular(const char *path, int flags)
{
    struct stat st;
    int r = (flags & TL_OPEN_NOFOLLOW) ? lstat(path, &st) : stat(path, &st);
    if (r != 0) return errno;
    return type_code(st.st_mode);
}

int tl_open_regular(const char *path, int flags, struct stat *st)
{
    int of = O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY;
    if (flags & TL_OPEN_NOFOLLOW) of |= O_NOFOLLOW;
    int fd = open(path, of);
    if (fd < 0) {
        int e = errno;
        struct stat ls;
        if ((e == ELOOP || e == EMLINK) && (flags & TL_OPEN_NOFOLLOW) && lstat(path, &ls) == 0 && S_ISLNK(ls.st_mode))
            return -TL_E_SYMLINK;
        return -e;
    }
    struct stat s;
    if (fstat(fd, &s) != 0) {
        int e = errno;
        close(fd);
        return -e;
    }
    int code = type_code(s.st_mode);
    if (code) {
        close(fd);
        return -code;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0) fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    if (st) *st = s;
    return fd;
}

const char *tl_strerror(int code)
{
    switch (code) {
    case TL_E_FIFO: return "not a regular file (a FIFO)";
    case TL_E_DIR: return "not a regular file (a directory)";
    case TL_E_DEVICE: return "not a regular file (a device)";
    case TL_E_SOCKET: return "not a regular file (a socket)";
    case TL_E_SYMLINK: return "refused: a symbolic link";
    case TL_E_TOOBIG: return "too large";
    case TL_E_UTF8: return "not valid UTF-8";
    default: return strerror(code);
    }
}

int tl_read_file(const char *path, int flags, size_t max, char **buf, size_t *len)
{
    *buf = NULL;
    *len = 0;
    if (!max) max = (size_t)1 << 30;
    struct stat st;
    int fd = tl_open_regular(path, flags, &st);
    if (fd < 0) return -fd;
    if ((uint64_t)st.st_size > max) {
        close(fd);
        return TL_E_TOOBIG;
    }
    size_t cap = (size_t)st.st_size + 1, n = 0;
    char *b = malloc(cap + 1);
    if (!b) {
        close(fd);
        return ENOMEM;
    }
    for (;;) {
        if (n == cap) { /* the file grew while read */
            if (cap > max) {
                free(b);
                close(fd);
                return TL_E_TOOBIG;
            }
            char *nb = realloc(b, cap * 2 + 1);
            if (!nb) {
                free(b);
                close(fd);
                return ENOMEM;
            }
            b = nb;
            cap *= 2;
        }
        ssize_t r = read(fd, b + n, cap - n);
        if (r < 0) {
            if (errno == EINTR) continue;
            int e = errno;
            free(b);
            close(fd);
            return e;
        }
        if (r == 0) break;
        n += (size_t)r;
    }
    close(fd);
    if (n > max) {
        free(b);
        return TL_E_TOOBIG;
    }
    b[n] = '\0';
    *buf = b;
    *len = n;
    return 0;
}

volatile sig_atomic_t tl_stop_signal;

static void on_stop(int sig) { tl_stop_signal = sig; }

void tl_catch_stop_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

int tl_utf8_valid(const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s, *e = p + n;
    while (p < e) {
        unsigned c = *p;
        if (c < 0x80) { p++; continue; }
        size_t k;
        uint32_t cp, min;
        if (c >= 0xc2 && c <= 0xdf) { k = 1; cp = c & 0x1f; min = 0x80; }
        else if (c >= 0xe0 && c <= 0xef) { k = 2; cp = c & 0x0f; min = 0x800; }
        else if (c >= 0xf0 && c <= 0xf4) { k = 3; cp = c & 0x07; min = 0x10000; }
        else return 0;
        if ((size_t)(e - p) <= k) return 0;
        for (size_t i = 1; i <= k; i++) {
            if ((p[i] & 0xc0) != 0x80) return 0;
            cp = (cp << 6) | (p[i] & 0x3f);
        }
        if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
        p += k + 1;
    }
    return 1;
}
