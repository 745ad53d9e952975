#include "tl_fs.h"

#include "tl_err.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int tl_strlist_push(tl_strlist *l, const char *s)
{
    if (l->n == l->cap) {
        size_t nc = l->cap ? l->cap * 2 : 64;
        char **nv = realloc(l->v, nc * sizeof *nv);
        if (!nv)
            return -1;
        l->v = nv;
        l->cap = nc;
    }
    char *c = strdup(s);
    if (!c)
        return -1;
    l->v[l->n++] = c;
    return 0;
}

int tl_strcmp_ptr(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void tl_strlist_sort(tl_strlist *l)
{
    if (l->n > 1)
        qsort(l->v, l->n, sizeof *l->v, tl_strcmp_ptr);
}

void tl_strlist_free(tl_strlist *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
    l->v = NULL;
    l->n = l->cap = 0;
}

int tl_rel_path_ok(const char *rel, const char **why)
{
    const char *w = NULL;
    if (!rel || !rel[0])
        w = "empty path";
    else if (rel[0] == '/')
        w = "absolute path";
    else if (strlen(rel) >= PATH_MAX)
        w = "path too long";
    else {
        for (const unsigned char *p = (const unsigned char *)rel; *p && !w; p++) {
            if (*p < 0x20 || *p == 0x7f)
                w = "control character in path";
            else if (*p == '\\')
                w = "backslash in path";
        }
        const char *c = rel;
        while (!w) {
            const char *e = strchr(c, '/');
            size_t len = e ? (size_t)(e - c) : strlen(c);
            if (len == 0)
                w = "empty path component";
            else if (len == 1 && c[0] == '.')
                w = "'.' path component";
            else if (len == 2 && c[0] == '.' && c[1] == '.')
                w = "'..' path component escapes the root";
            if (!e)
                break;
            c = e + 1;
        }
    }
    if (why)
        *why = w;
    return w == NULL;
}

char *tl_join(const char *a, const char *b)
{
    if (!b || !b[0])
        return strdup(a);
    size_t la = strlen(a), lb = strlen(b);
    char *r = malloc(la + lb + 2);
    if (!r)
        return NULL;
    memcpy(r, a, la);
    size_t o = la;
    if (la && a[la - 1] != '/')
        r[o++] = '/';
    memcpy(r + o, b, lb + 1);
    return r;
}

int tl_mkdirs(const char *dir)
{
    char tmp[PATH_MAX];
    if (snprintf(tmp, sizeof tmp, "%s", dir) >= (int)sizeof tmp)
        return ENAMETOOLONG;
    size_t len = strlen(tmp);
    while (len > 1 && tmp[len - 1] == '/')
        tmp[--len] = '\0';
    for (char *p = tmp + 1; *p; p++) {
        if (*p == '/') {
            *p = '\0';
            if (mkdir(tmp, 0755) != 0 && errno != EEXIST)
                return errno;
            *p = '/';
        }
    }
    if (mkdir(tmp, 0755) != 0 && errno != EEXIST)
        return errno;
    return tl_is_dir(tmp) ? 0 : ENOTDIR;
}

int tl_mkdirs_parent(const char *filepath)
{
    char tmp[PATH_MAX];
    if (snprintf(tmp, sizeof tmp, "%s", filepath) >= (int)sizeof tmp)
        return ENAMETOOLONG;
    char *s = strrchr(tmp, '/');
    if (!s || s == tmp)
        return 0;
    *s = '\0';
    return tl_mkdirs(tmp);
}

static int rm_cb(const char *p, const struct stat *sb, int flag, struct FTW *f)
{
    (void)sb;
    (void)f;
    int r = (flag == FTW_DP) ? rmdir(p) : unlink(p);
    return r == 0 || errno == ENOENT ? 0 : errno;
}

int tl_rm_rf(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return errno == ENOENT ? 0 : errno;
    if (!S_ISDIR(st.st_mode))
        return unlink(path) == 0 ? 0 : errno;
    return nftw(path, rm_cb, 32, FTW_DEPTH | FTW_PHYS);
}

int tl_is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int tl_is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static int path_inside(const char *real, const char *confine)
{
    size_t n = strlen(confine);
    if (n == 1 && confine[0] == '/')
        return 1;
    return strncmp(real, confine, n) == 0 && (real[n] == '/' || real[n] == '\0');
}

static int walk_rec(const char *base, const char *rel, int policy, const char *confine, const char *const *skip_top,
                    tl_strlist *out, int depth)
{
    char *dirpath = tl_join(base, rel);
    if (!dirpath)
        return 1;
    DIR *d = opendir(dirpath);
    if (!d) {
        tl_error(dirpath, NULL, "cannot open directory: %s", strerror(errno));
        free(dirpath);
        return 1;
    }
    if (depth > 256) {
        tl_error(dirpath, NULL, "directory nesting too deep");
        closedir(d);
        free(dirpath);
        return 1;
    }
    int rc = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        if ((!rel || !rel[0]) && skip_top) {
            int skip = 0;
            for (const char *const *s = skip_top; *s; s++)
                if (!strcmp(*s, e->d_name))
                    skip = 1;
            if (skip)
                continue;
        }
        char *crel = tl_join(rel ? rel : "", e->d_name);
        char *full = tl_join(base, crel);
        const char *why;
        struct stat st;
        if (!crel || !full) {
            rc = 1;
        } else if (!tl_rel_path_ok(crel, &why)) {
            tl_error(full, NULL, "refused: %s", why);
            rc = 1;
        } else if (lstat(full, &st) != 0) {
            tl_error(full, NULL, "cannot stat: %s", strerror(errno));
            rc = 1;
        } else if (S_ISDIR(st.st_mode)) {
            rc |= walk_rec(base, crel, policy, confine, skip_top, out, depth + 1);
        } else if (S_ISREG(st.st_mode)) {
            if (tl_strlist_push(out, crel) != 0)
                rc = 1;
        } else if (S_ISLNK(st.st_mode)) {
            if (policy != TL_WALK_FOLLOW_INSIDE) {
                tl_error(full, NULL, "refused: symbolic link");
                rc = 1;
            } else {
                char *real = realpath(full, NULL);
                struct stat ts;
                if (!real) {
                    tl_error(full, NULL, "refused: dangling symbolic link");
                    rc = 1;
                } else if (!confine || !path_inside(real, confine)) {
                    tl_error(full, NULL, "refused: symbolic link points outside the root (to %s)", real);
                    rc = 1;
                } else if (stat(real, &ts) != 0 || !S_ISREG(ts.st_mode)) {
                    tl_error(full, NULL, "refused: symbolic link to a non-regular file (%s)", real);
                    rc = 1;
                } else if (tl_strlist_push(out, crel) != 0) {
                    rc = 1;
                }
                free(real);
            }
        } else {
            tl_error(full, NULL, "refused: not a regular file (%s)",
                     S_ISFIFO(st.st_mode) ? "fifo" : S_ISSOCK(st.st_mode) ? "socket" : "device");
            rc = 1;
        }
        free(crel);
        free(full);
    }
    closedir(d);
    free(dirpath);
    return rc;
}

int tl_walk(const char *base, const char *rel, int policy, const char *confine, const char *const *skip_top,
            tl_strlist *out)
{
    return walk_rec(base, rel, policy, confine, skip_top, out, 0);
}

int tl_read_all(const char *path, char **buf, size_t *len)
{
    return tl_read_file(path, TL_OPEN_FOLLOW, 0, buf, len);
}

static int write_full(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len) {
        ssize_t w = write(fd, p, len);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return errno;
        }
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

static int open_tmp(const char *path, char *tmp, size_t tmplen, mode_t mode)
{
    if (snprintf(tmp, tmplen, "%s.tmp.XXXXXX", path) >= (int)tmplen) {
        errno = ENAMETOOLONG;
        return -1;
    }
    int fd = mkstemp(tmp);
    if (fd >= 0)
        fchmod(fd, mode);
    return fd;
}

int tl_write_atomic(const char *path, const void *buf, size_t len, mode_t mode)
{
    int e = tl_mkdirs_parent(path);
    if (e)
        return e;
    char tmp[PATH_MAX + 32];
    int fd = open_tmp(path, tmp, sizeof tmp, mode);
    if (fd < 0)
        return errno;
    e = write_full(fd, buf, len);
    if (close(fd) != 0 && !e)
        e = errno;
    if (!e && rename(tmp, path) != 0)
        e = errno;
    if (e)
        unlink(tmp);
    return e;
}

int tl_copy_hash(const char *src, const char *dst, mode_t mode, char hex[TL_SHA256_HEX], uint64_t *bytes)
{
    int e = tl_mkdirs_parent(dst);
    if (e)
        return e;
    int in = tl_open_regular(src, TL_OPEN_FOLLOW, NULL);
    if (in < 0)
        return -in;
    /* dst may be an existing symlink planted in the staging: rename replaces the link itself. */
    char tmp[PATH_MAX + 32];
    int out = open_tmp(dst, tmp, sizeof tmp, mode);
    if (out < 0) {
        e = errno;
        close(in);
        return e;
    }
    unsigned char *buf = malloc(TL_READ_CHUNK);
    tl_sha256 h;
    uint64_t total = 0;
    if (!buf || tl_sha256_init(&h) != 0) {
        e = ENOMEM;
    } else {
        for (;;) {
            ssize_t r = read(in, buf, TL_READ_CHUNK);
            if (r < 0) {
                if (errno == EINTR)
                    continue;
                e = errno;
                break;
            }
            if (r == 0)
                break;
            tl_sha256_update(&h, buf, (size_t)r);
            total += (uint64_t)r;
            if ((e = write_full(out, buf, (size_t)r)) != 0)
                break;
        }
        if (e)
            tl_sha256_abort(&h);
        else
            tl_sha256_final(&h, hex);
    }
    free(buf);
    close(in);
    if (close(out) != 0 && !e)
        e = errno;
    if (!e && rename(tmp, dst) != 0)
        e = errno;
    if (e)
        unlink(tmp);
    else if (bytes)
        *bytes = total;
    return e;
}

char *tl_abspath(const char *path)
{
    char *r = realpath(path, NULL);
    if (r)
        return r;
    char cwd[PATH_MAX];
    if (path[0] == '/' || !getcwd(cwd, sizeof cwd))
        return strdup(path);
    return tl_join(cwd, path);
}
