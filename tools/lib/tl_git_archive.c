/* tl_git_archive.c - a git revision's files read into memory: `git archive` into a pipe,
 * the tar stream read by libarchive, symbolic links resolved to the files they name. */
#include "tl_archive.h"
#include "tl_archive_int.h"

#include "tl_err.h"
#include "tl_spawn.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

void tl_mem_files_free(tl_mem_file *f, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(f[i].path);
        free(f[i].data);
    }
    free(f);
}

static int mem_cmp(const void *a, const void *b)
{
    return strcmp(((const tl_mem_file *)a)->path, ((const tl_mem_file *)b)->path);
}

/* Resolve link target t relative to the folder of entry p, lexically. NULL if it escapes. */
static char *resolve_link(const char *p, const char *t)
{
    if (t[0] == '/')
        return NULL;
    char buf[PATH_MAX * 2];
    const char *slash = strrchr(p, '/');
    int n = slash ? snprintf(buf, sizeof buf, "%.*s/%s", (int)(slash - p), p, t) : snprintf(buf, sizeof buf, "%s", t);
    if (n >= (int)sizeof buf)
        return NULL;
    char *parts[512];
    int np = 0;
    char *save, *tok = strtok_r(buf, "/", &save);
    while (tok) {
        if (!strcmp(tok, ".")) {
        } else if (!strcmp(tok, "..")) {
            if (np == 0)
                return NULL;
            np--;
        } else {
            if (np == 512)
                return NULL;
            parts[np++] = tok;
        }
        tok = strtok_r(NULL, "/", &save);
    }
    if (np == 0)
        return NULL;
    size_t len = 0;
    for (int i = 0; i < np; i++)
        len += strlen(parts[i]) + 1;
    char *r = malloc(len + 1);
    r[0] = '\0';
    for (int i = 0; i < np; i++) {
        if (i)
            strcat(r, "/");
        strcat(r, parts[i]);
    }
    return r;
}

/* What git_archive_read gathers from the tar stream: the regular files, the symbolic links
 * (resolved once every file is known) and whether anything was refused. */
typedef struct git_read {
    const char *label;                  /* "git archive REV": the errors' subject */
    tl_mem_file *v;
    size_t n, cap;
    struct { char *path, *target; } *links;
    size_t nl;
    int bad;
} git_read;

static tl_mem_file *git_read_slot(git_read *g)
{
    if (g->n == g->cap) {
        g->cap = g->cap ? g->cap * 2 : 64;
        g->v = realloc(g->v, g->cap * sizeof *g->v);
    }
    return &g->v[g->n++];
}

/* Start `git -C root archive --format=tar rev -- paths...` writing into a pipe; its read
 * end in *rfd. 0 ok, 1 reported. */
static int git_archive_spawn(const char *root, const char *rev, const char *const *paths, size_t npaths, int *rfd,
                             pid_t *pid)
{
    int pfd[2];
    if (pipe(pfd) != 0) {
        tl_error("git archive", NULL, "pipe: %s", tl_strerror(errno));
        return 1;
    }
    const char *const head[] = { "git", "-C", root, "archive", "--format=tar", rev, "--" };
    size_t k = sizeof head / sizeof *head;
    const char **argv = calloc(npaths + k + 1, sizeof *argv);
    memcpy(argv, head, sizeof head);
    for (size_t i = 0; i < npaths; i++)
        argv[k++] = paths[i];
    argv[k] = NULL;
    pid_t parent = getpid();
    *pid = fork();
    if (*pid < 0) {
        tl_error("git archive", NULL, "fork: %s", tl_strerror(errno));
        close(pfd[0]);
        close(pfd[1]);
        free(argv);
        return 1;
    }
    if (*pid == 0) {   /* git and its children die with the tool (tl_spawn.h) */
        if (tl_spawn_child_init(parent)) _exit(127);
        dup2(pfd[1], 1);
        close(pfd[0]);
        close(pfd[1]);
        tl_spawn_exec_guarded((char *const *)argv, NULL);
    }
    free(argv);
    close(pfd[1]);
    *rfd = pfd[0];
    return 0;
}

/* One tar entry: a folder is skipped, a symbolic link kept for later, a regular file read
 * into memory; anything else (absolute, escaping, hard link, device...) refused. */
static void git_read_entry(git_read *g, struct archive *a, struct archive_entry *e)
{
    const char *raw = archive_entry_pathname(e);
    char *nm = tl_archive_norm_name(raw ? raw : "");
    mode_t t = archive_entry_filetype(e);
    const char *why = NULL;
    if (raw && raw[0] == '/')
        why = "absolute path";
    else if (t == AE_IFDIR) {
        free(nm);
        return;
    } else if (!tl_rel_path_ok(nm, &why))
        ;
    else if (archive_entry_hardlink(e))
        why = "hard link entry";
    else if (t == AE_IFLNK) {
        g->links = realloc(g->links, (g->nl + 1) * sizeof *g->links);
        g->links[g->nl].path = nm;
        g->links[g->nl].target = strdup(archive_entry_symlink(e) ? archive_entry_symlink(e) : "");
        g->nl++;
        return;
    } else if (t != AE_IFREG)
        why = "not a regular file";
    if (why) {
        tl_error(g->label, raw ? raw : "(entry)", "refused: %s", why);
        g->bad = 1;
        free(nm);
        return;
    }
    la_int64_t sz = archive_entry_size(e);
    unsigned char *data = malloc(sz > 0 ? (size_t)sz : 1);
    size_t got = 0;
    for (;;) {
        la_ssize_t rr = archive_read_data(a, data + got, (size_t)sz - got);
        if (rr < 0) {
            tl_error(g->label, nm, "read failed: %s", archive_error_string(a));
            g->bad = 1;
            break;
        }
        if (rr == 0)
            break;
        got += (size_t)rr;
        if (got == (size_t)sz)
            break;
    }
    tl_mem_file *f = git_read_slot(g);
    f->path = nm;
    f->data = data;
    f->len = got;
    f->exec = (archive_entry_perm(e) & 0111) != 0;
}

/* Read the tar stream from fd to its end-of-archive blocks. */
static void git_read_tar(git_read *g, int fd)
{
    struct archive *a = archive_read_new();
    archive_read_support_format_tar(a);
    if (archive_read_open_fd(a, fd, 65536) != ARCHIVE_OK) {
        tl_error(g->label, NULL, "cannot read the tar stream: %s", archive_error_string(a));
        g->bad = 1;
    } else {
        struct archive_entry *e;
        int r;
        while ((r = archive_read_next_header(a, &e)) == ARCHIVE_OK || r == ARCHIVE_WARN)
            git_read_entry(g, a, e);
        if (r != ARCHIVE_EOF) {
            tl_error(g->label, NULL, "corrupt tar stream: %s", archive_error_string(a));
            g->bad = 1;
        }
    }
    archive_read_free(a);
}

/* libarchive stops at the end-of-archive blocks; git may still be writing the record
 * padding. Drain the pipe so git never dies of SIGPIPE, then wait for git. */
static void git_archive_finish(git_read *g, int fd, pid_t pid, const char *root)
{
    char drain[65536];
    ssize_t got;
    while ((got = read(fd, drain, sizeof drain)) > 0 || (got < 0 && errno == EINTR))
        ;
    close(fd);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        tl_error(g->label, NULL, "git archive failed (exit %d) in %s", WIFEXITED(status) ? WEXITSTATUS(status) : -1,
                 root);
        g->bad = 1;
    }
}

/* Each symbolic link becomes a copy of the regular file it points to, inside the root and
 * among the paths read; any other link is refused. */
static void git_read_links(git_read *g)
{
    if (g->n > 1)
        qsort(g->v, g->n, sizeof *g->v, mem_cmp);
    size_t nreg = g->n;
    for (size_t i = 0; i < g->nl; i++) {
        const char *path = g->links[i].path, *target = g->links[i].target;
        char *res = resolve_link(path, target);
        tl_mem_file key = { res, NULL, 0, 0 };
        tl_mem_file *hit = res ? bsearch(&key, g->v, nreg, sizeof *g->v, mem_cmp) : NULL;
        if (!res) {
            tl_error(g->label, path, "refused: symbolic link points outside the root (to %s)", target);
            g->bad = 1;
        } else if (!hit) {
            tl_error(g->label, path, "refused: symbolic link to %s, which is not a regular file among the staged paths",
                     res);
            g->bad = 1;
        } else {
            size_t at = (size_t)(hit - g->v); /* the slot may move the array */
            tl_mem_file *f = git_read_slot(g);
            hit = &g->v[at];
            f->path = strdup(path);
            f->data = malloc(hit->len ? hit->len : 1);
            memcpy(f->data, hit->data, hit->len);
            f->len = hit->len;
            f->exec = hit->exec;
        }
        free(res);
        free(g->links[i].path);
        free(g->links[i].target);
    }
    free(g->links);
    g->links = NULL;
    g->nl = 0;
}

static int git_archive_read(const char *root, const char *rev, const char *const *paths, size_t npaths,
                        tl_mem_file **out, size_t *nout)
{
    *out = NULL;
    *nout = 0;
    int fd;
    pid_t pid;
    if (git_archive_spawn(root, rev, paths, npaths, &fd, &pid))
        return 1;
    char label[256];
    snprintf(label, sizeof label, "git archive %s", rev);
    git_read g = { 0 };
    g.label = label;
    git_read_tar(&g, fd);
    git_archive_finish(&g, fd, pid, root);
    git_read_links(&g);
    if (g.n > 1)
        qsort(g.v, g.n, sizeof *g.v, mem_cmp);
    for (size_t i = 1; i < g.n; i++)
        if (!strcmp(g.v[i - 1].path, g.v[i].path)) {
            tl_error(label, g.v[i].path, "refused: entry repeated");
            g.bad = 1;
        }
    if (g.bad) {
        tl_mem_files_free(g.v, g.n);
        return 1;
    }
    *out = g.v;
    *nout = g.n;
    return 0;
}

int tl_git_archive_read(const char *root, const char *rev, const char *const *paths, size_t npaths,
                        tl_mem_file **out, size_t *nout)
{
    locale_t old = tl_archive_utf8_begin();
    int rc = git_archive_read(root, rev, paths, npaths, out, nout);
    tl_archive_utf8_end(old);
    return rc;
}
