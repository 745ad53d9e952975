#include "tl_archive.h"

#include "tl_err.h"
#include "tl_hash.h"
#include "tl_spawn.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

time_t tl_pack_mtime(void)
{
    const char *s = getenv("SOURCE_DATE_EPOCH");
    if (s && *s) {
        char *end;
        long long v = strtoll(s, &end, 10);
        if (*end == '\0' && v >= 0)
            return (time_t)v;
    }
    return (time_t)315532800;
}

/* Names in archives are UTF-8 (issue 18). libarchive converts names between an archive's
 * charset and the current locale's, and the tools never call setlocale: in the "C" (ASCII)
 * locale every non-ASCII name failed ("Can't translate pathname"). The archive functions
 * below run under C.UTF-8 for the calling thread only (uselocale); the process locale is
 * untouched. When C.UTF-8 is missing, non-ASCII names are refused as before. */
static locale_t utf8_begin(void)
{
    static locale_t loc;
    if (!loc)
        loc = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
    return loc ? uselocale(loc) : (locale_t)0;
}

static void utf8_end(locale_t old)
{
    if (old)
        uselocale(old);
}

static int pack_write(const char *dir, const tl_strlist *files, const char *const *sha, tl_archive_format fmt,
                      const char *out_path)
{
    char tmp[PATH_MAX + 32];
    snprintf(tmp, sizeof tmp, "%s.tmp.XXXXXX", out_path);
    int tfd = mkstemp(tmp);
    if (tfd < 0) {
        tl_error(out_path, NULL, "cannot create: %s", tl_strerror(errno));
        return 1;
    }
    fchmod(tfd, 0644);
    struct archive *a = archive_write_new();
    int rc = 1;
    unsigned char *buf = malloc(TL_READ_CHUNK);
    if (!a || !buf)
        goto out;
    if (fmt == TL_FMT_ZIP) {
        /* hdrcharset=UTF-8: a non-ASCII name is written as UTF-8 with the zip's UTF-8 flag
         * (general purpose bit 11); ASCII names are unchanged (same bytes as before) */
        if (archive_write_set_format_zip(a) != ARCHIVE_OK ||
            archive_write_set_format_option(a, "zip", "compression", "deflate") != ARCHIVE_OK ||
            archive_write_set_format_option(a, "zip", "hdrcharset", "UTF-8") != ARCHIVE_OK) {
            tl_error(out_path, NULL, "zip format: %s", archive_error_string(a));
            goto out;
        }
    } else {
        if (archive_write_set_format_pax_restricted(a) != ARCHIVE_OK ||
            archive_write_set_format_option(a, "pax", "hdrcharset", "UTF-8") != ARCHIVE_OK ||
            archive_write_add_filter_zstd(a) != ARCHIVE_OK) {
            tl_error(out_path, NULL, "tar.zst format: %s", archive_error_string(a));
            goto out;
        }
    }
    /* No padding surprises: libarchive's default tar block padding is fixed anyway. */
    if (archive_write_open_fd(a, tfd) != ARCHIVE_OK) {
        tl_error(out_path, NULL, "cannot open archive: %s", archive_error_string(a));
        goto out;
    }
    time_t mt = tl_pack_mtime();
    for (size_t i = 0; i < files->n; i++) {
        const char *rel = files->v[i], *why;
        if (!tl_rel_path_ok(rel, &why)) {
            tl_error(rel, NULL, "refused: %s", why);
            goto out;
        }
        if (!tl_utf8_valid(rel, strlen(rel))) {
            tl_error(rel, NULL, "refused: the name is not valid UTF-8 (archive names are UTF-8)");
            goto out;
        }
        char *full = tl_join(dir, rel);
        int fd = open(full, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
            tl_error(full, NULL, "refused: %s", fd < 0 ? tl_strerror(errno) : "not a regular file");
            if (fd >= 0)
                close(fd);
            free(full);
            goto out;
        }
        struct archive_entry *e = archive_entry_new();
        archive_entry_set_pathname_utf8(e, rel);
        archive_entry_set_filetype(e, AE_IFREG);
        archive_entry_set_perm(e, (st.st_mode & 0111) ? 0755 : 0644);
        archive_entry_set_size(e, st.st_size);
        archive_entry_set_mtime(e, mt, 0);
        archive_entry_set_uid(e, 0);
        archive_entry_set_gid(e, 0);
        int bad = archive_write_header(a, e) != ARCHIVE_OK;
        archive_entry_free(e);
        if (bad) {
            tl_error(full, NULL, "cannot add to archive: %s", archive_error_string(a));
            close(fd);
            free(full);
            goto out;
        }
        tl_sha256 h;
        tl_sha256_init(&h);
        int64_t left = st.st_size;
        while (left > 0) {
            ssize_t r = read(fd, buf, TL_READ_CHUNK);
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0 || r > left) {
                tl_error(full, NULL, "changed size while being archived");
                bad = 1;
                break;
            }
            tl_sha256_update(&h, buf, (size_t)r);
            if (archive_write_data(a, buf, (size_t)r) != r) {
                tl_error(full, NULL, "archive write failed: %s", archive_error_string(a));
                bad = 1;
                break;
            }
            left -= r;
        }
        close(fd);
        char hex[TL_SHA256_HEX];
        if (bad) {
            tl_sha256_abort(&h);
        } else {
            tl_sha256_final(&h, hex);
            if (sha && sha[i] && strcmp(hex, sha[i])) {
                tl_error(full, NULL, "changed while being archived (sha256 differs from files.sha256)");
                bad = 1;
            }
        }
        free(full);
        if (bad)
            goto out;
    }
    if (archive_write_close(a) != ARCHIVE_OK) {
        tl_error(out_path, NULL, "cannot finish archive: %s", archive_error_string(a));
        goto out;
    }
    rc = 0;
out:
    if (a)
        archive_write_free(a);
    free(buf);
    close(tfd);
    if (rc == 0 && rename(tmp, out_path) != 0) {
        tl_error(out_path, NULL, "cannot write: %s", tl_strerror(errno));
        rc = 1;
    }
    if (rc)
        unlink(tmp);
    return rc;
}

void tl_extract_limits_default(tl_extract_limits *l)
{
    l->max_total = TL_EXTRACT_MAX_TOTAL;
    l->max_entry = TL_EXTRACT_MAX_ENTRY;
    l->max_ratio = TL_EXTRACT_MAX_RATIO;
}

/* Open an archive file for reading: a regular file only (tl_open_regular), its fd in *fd
 * (closed by close_reader). *size gets the archive's size in bytes. */
static struct archive *open_reader(const char *path, int *fd, uint64_t *size)
{
    struct stat st;
    *fd = tl_open_regular(path, TL_OPEN_FOLLOW, &st);
    if (*fd < 0) {
        tl_error(path, NULL, "cannot open archive: %s", tl_strerror(-*fd));
        return NULL;
    }
    if (size)
        *size = (uint64_t)st.st_size;
    struct archive *a = archive_read_new();
    archive_read_support_filter_all(a);
    archive_read_support_format_tar(a);
    archive_read_support_format_zip(a);
    if (archive_read_open_fd(a, *fd, 65536) != ARCHIVE_OK) {
        tl_error(path, NULL, "cannot open archive: %s", archive_error_string(a));
        archive_read_free(a);
        close(*fd);
        *fd = -1;
        return NULL;
    }
    return a;
}

static void close_reader(struct archive *a, int fd)
{
    if (a)
        archive_read_free(a);
    if (fd >= 0)
        close(fd);
}

/* Normalise an entry name: drop leading "./" and trailing '/'. Returns malloc'd string. */
static char *norm_name(const char *n)
{
    while (n[0] == '.' && n[1] == '/')
        n += 2;
    char *s = strdup(n);
    size_t l = strlen(s);
    while (l > 0 && s[l - 1] == '/')
        s[--l] = '\0';
    return s;
}

typedef struct pentry {
    char *name;
    int is_dir;
} pentry;

static int pentry_cmp(const void *a, const void *b)
{
    return strcmp(((const pentry *)a)->name, ((const pentry *)b)->name);
}

/* Does any existing component of out_dir/name (excluding out_dir) be a symlink? */
static const char *symlink_on_path(const char *out_dir, const char *name, char *buf, size_t len)
{
    char rel[PATH_MAX];
    snprintf(rel, sizeof rel, "%s", name);
    for (char *p = rel;; p++) {
        if (*p == '/' || *p == '\0') {
            char c = *p;
            *p = '\0';
            snprintf(buf, len, "%s/%s", out_dir, rel);
            struct stat st;
            if (lstat(buf, &st) == 0 && S_ISLNK(st.st_mode))
                return buf;
            *p = c;
            if (c == '\0')
                break;
        }
    }
    return NULL;
}

/* The bytes of a data block outside its all-zero 4 KiB pieces (those libarchive writes as
 * holes with ARCHIVE_EXTRACT_SPARSE): what an extraction costs on disk. */
static uint64_t nonzero_bytes(const void *blk, size_t sz)
{
    static const unsigned char zero[4096];
    const unsigned char *p = blk;
    uint64_t n = 0;
    for (size_t at = 0; at < sz; at += sizeof zero) {
        size_t len = sz - at < sizeof zero ? sz - at : sizeof zero;
        if (memcmp(p + at, zero, len)) n += len;
    }
    return n;
}

static int precheck(const char *path, const char *out_dir, const tl_extract_limits *lim)
{
    int fd;
    uint64_t asize = 0;
    struct archive *a = open_reader(path, &fd, &asize);
    if (!a)
        return 1;
    uint64_t declared = 0;
    /* what the entries may declare in all: the total limit. The ratio limit counts the
     * bytes other than zeros (tl_extract_limits), known only while extracting. */
    uint64_t allowed = lim->max_total;
    pentry *v = NULL;
    size_t n = 0, cap = 0;
    int bad = 0;
    struct archive_entry *e;
    int r;
    while ((r = archive_read_next_header(a, &e)) == ARCHIVE_OK || r == ARCHIVE_WARN) {
        const char *raw = archive_entry_pathname(e);
        if (!raw) {
            tl_error(path, "(entry)", "refused: entry without a name");
            bad = 1;
            continue;
        }
        char *nm = norm_name(raw);
        const char *why = NULL;
        mode_t t = archive_entry_filetype(e);
        if (nm[0] == '\0' && t == AE_IFDIR) {
            free(nm);
            continue;
        }
        if (raw[0] == '/')
            why = "absolute path";
        else if (!tl_rel_path_ok(nm, &why))
            ;
        else if (archive_entry_hardlink(e))
            why = "hard link entry";
        else if (t == AE_IFLNK || archive_entry_symlink(e))
            why = "symbolic link entry (links are never extracted)";
        else if (t != AE_IFREG && t != AE_IFDIR)
            why = "not a regular file or folder";
        else if (archive_entry_sparse_count(e) > 0)
            why = "a sparse entry (its holes would be written out in full)";
        else if (archive_entry_size_is_set(e) && (uint64_t)archive_entry_size(e) > lim->max_entry)
            why = "larger than the per-entry limit (--max-entry)";
        if (!why && archive_entry_size_is_set(e) && archive_entry_size(e) > 0 &&
            (declared += (uint64_t)archive_entry_size(e)) > allowed)
            why = "the entries declare more than the total limit (--max-total)";
        if (tl_stop_signal)
            why = "interrupted";
        if (why) {
            tl_error(path, raw, "refused: %s", why);
            bad = 1;
            free(nm);
            continue;
        }
        char sb[PATH_MAX * 2];
        const char *sl = symlink_on_path(out_dir, nm, sb, sizeof sb);
        if (sl) {
            tl_error(path, raw, "refused: would be written through the symbolic link %s", sl);
            bad = 1;
        }
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            v = realloc(v, cap * sizeof *v);
        }
        v[n].name = nm;
        v[n].is_dir = t == AE_IFDIR;
        n++;
    }
    if (r != ARCHIVE_EOF) {
        tl_error(path, NULL, "corrupt or unreadable archive: %s", archive_error_string(a));
        bad = 1;
    }
    close_reader(a, fd);
    if (n > 1)
        qsort(v, n, sizeof *v, pentry_cmp);
    for (size_t i = 0; i < n; i++) {
        if (i && !strcmp(v[i - 1].name, v[i].name) && !(v[i].is_dir && v[i - 1].is_dir)) {
            tl_error(path, v[i].name, "refused: entry repeated");
            bad = 1;
        }
        /* A file used as a folder: "a" (file) and "a/..." */
        if (!v[i].is_dir) {
            size_t l = strlen(v[i].name);
            for (size_t j = i + 1; j < n && !strncmp(v[j].name, v[i].name, l); j++)
                if (v[j].name[l] == '/') {
                    tl_error(path, v[j].name, "refused: %s is a file in the archive", v[i].name);
                    bad = 1;
                    break;
                }
        }
    }
    for (size_t i = 0; i < n; i++)
        free(v[i].name);
    free(v);
    return bad;
}

int tl_pack_write(const char *dir, const tl_strlist *files, const char *const *sha, tl_archive_format fmt,
                  const char *out_path)
{
    locale_t old = utf8_begin();
    int rc = pack_write(dir, files, sha, fmt, out_path);
    utf8_end(old);
    return rc;
}

static int archive_extract(const char *archive_path, const char *out_dir, const tl_extract_limits *limits)
{
    tl_extract_limits lim;
    if (limits)
        lim = *limits;
    else
        tl_extract_limits_default(&lim);
    int e = tl_mkdirs(out_dir);
    if (e) {
        tl_error(out_dir, NULL, "cannot create: %s", tl_strerror(e));
        return 1;
    }
    char *abs_arch = tl_abspath(archive_path);
    char *abs_out = tl_abspath(out_dir);
    int rc = 1;
    struct archive *a = NULL, *w = NULL;
    int cwd = -1, afd = -1;
    uint64_t asize = 0, total = 0, dense = 0;
    if (precheck(abs_arch, abs_out, &lim))
        goto out;
    a = open_reader(abs_arch, &afd, &asize);
    if (!a)
        goto out;
    w = archive_write_disk_new();
    /* SPARSE: runs of zeros become holes, so they take no disk (the ratio limit skips them) */
    archive_write_disk_set_options(w, ARCHIVE_EXTRACT_SECURE_NODOTDOT | ARCHIVE_EXTRACT_SECURE_SYMLINKS |
                                          ARCHIVE_EXTRACT_SECURE_NOABSOLUTEPATHS | ARCHIVE_EXTRACT_SPARSE);
    /* libarchive resolves entry names against the working directory; SECURE_NOABSOLUTEPATHS
     * forbids an absolute prefix, so extract from inside out_dir and come back after. */
    cwd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (cwd < 0 || chdir(abs_out) != 0) {
        tl_error(abs_out, NULL, "cannot enter: %s", tl_strerror(errno));
        goto out;
    }
    struct archive_entry *ent;
    int r;
    while ((r = archive_read_next_header(a, &ent)) == ARCHIVE_OK || r == ARCHIVE_WARN) {
        char *nm = norm_name(archive_entry_pathname(ent));
        if (!nm[0]) {
            free(nm);
            continue;
        }
        archive_entry_set_pathname(ent, nm);
        int isdir = archive_entry_filetype(ent) == AE_IFDIR;
        archive_entry_set_perm(ent, isdir ? 0755 : (archive_entry_perm(ent) & 0111) ? 0755 : 0644);
        if (archive_write_header(w, ent) != ARCHIVE_OK) {
            tl_error(archive_path, nm, "refused by libarchive: %s", archive_error_string(w));
            free(nm);
            goto out;
        }
        const void *blk;
        size_t sz;
        la_int64_t off;
        int dr;
        uint64_t end = 0; /* bytes of this entry so far, holes included */
        while ((dr = archive_read_data_block(a, &blk, &sz, &off)) == ARCHIVE_OK) {
            uint64_t nend = (uint64_t)(off < 0 ? 0 : off) + sz;
            if (nend > end) {
                total += nend - end;
                end = nend;
            }
            dense += nonzero_bytes(blk, sz);
            const char *lw = tl_stop_signal ? "interrupted"
                             : end > lim.max_entry ? "refused: larger than the per-entry limit (--max-entry)"
                             : total > lim.max_total ? "refused: more than the total limit (--max-total)"
                             : dense > ((uint64_t)1 << 20) && (double)dense > lim.max_ratio * (double)(asize ? asize : 1)
                                 ? "refused: expands more than the ratio limit (--max-ratio)"
                                 : NULL;
            if (lw) {
                tl_error(archive_path, nm, "%s after %llu bytes", lw, (unsigned long long)total);
                unlink(nm);   /* not left half-written (sparse extraction sizes it in full) */
                free(nm);
                goto out;
            }
            if (archive_write_data_block(w, blk, sz, off) != ARCHIVE_OK) {
                tl_error(archive_path, nm, "write failed: %s", archive_error_string(w));
                free(nm);
                goto out;
            }
        }
        if (dr != ARCHIVE_EOF) {
            tl_error(archive_path, nm, "corrupt data: %s", archive_error_string(a));
            free(nm);
            goto out;
        }
        if (archive_write_finish_entry(w) != ARCHIVE_OK) {
            tl_error(archive_path, nm, "cannot finish: %s", archive_error_string(w));
            free(nm);
            goto out;
        }
        free(nm);
    }
    if (r != ARCHIVE_EOF) {
        tl_error(archive_path, NULL, "corrupt archive: %s", archive_error_string(a));
        goto out;
    }
    rc = 0;
out:
    if (cwd >= 0) {
        if (fchdir(cwd) != 0)
            tl_error(".", NULL, "cannot return to the working directory");
        close(cwd);
    }
    if (w) {
        archive_write_close(w);
        archive_write_free(w);
    }
    close_reader(a, afd);
    free(abs_arch);
    free(abs_out);
    return rc;
}

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

int tl_archive_extract(const char *archive_path, const char *out_dir, const tl_extract_limits *limits)
{
    locale_t old = utf8_begin();
    int rc = archive_extract(archive_path, out_dir, limits);
    utf8_end(old);
    return rc;
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
    const char **argv = calloc(npaths + 10, sizeof *argv);
    size_t k = 0;
    argv[k++] = "git";
    argv[k++] = "-C";
    argv[k++] = root;
    argv[k++] = "archive";
    argv[k++] = "--format=tar";
    argv[k++] = rev;
    argv[k++] = "--";
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
    char *nm = norm_name(raw ? raw : "");
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
    locale_t old = utf8_begin();
    int rc = git_archive_read(root, rev, paths, npaths, out, nout);
    utf8_end(old);
    return rc;
}
