/* tl_archive.c - reproducible archives (tl_pack_write) and safe extraction
 * (tl_archive_extract) through libarchive; `git archive` reading is tl_git_archive.c. */
#include "tl_archive.h"
#include "tl_archive_int.h"

#include "tl_err.h"
#include "tl_hash.h"

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
 * below and tl_git_archive.c's run under C.UTF-8 for the calling thread only (uselocale);
 * the process locale is untouched. When C.UTF-8 is missing, non-ASCII names are refused
 * as before. */
locale_t tl_archive_utf8_begin(void)
{
    static locale_t loc;
    if (!loc)
        loc = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
    return loc ? uselocale(loc) : (locale_t)0;
}

void tl_archive_utf8_end(locale_t old)
{
    if (old)
        uselocale(old);
}

/* The archive's format: zip (deflate) or pax tar through zstd, names in UTF-8. */
static int pack_set_format(struct archive *a, tl_archive_format fmt, const char *out_path)
{
    if (fmt == TL_FMT_ZIP) {
        /* hdrcharset=UTF-8: a non-ASCII name is written as UTF-8 with the zip's UTF-8 flag
         * (general purpose bit 11); ASCII names are unchanged (same bytes as before) */
        if (archive_write_set_format_zip(a) != ARCHIVE_OK ||
            archive_write_set_format_option(a, "zip", "compression", "deflate") != ARCHIVE_OK ||
            archive_write_set_format_option(a, "zip", "hdrcharset", "UTF-8") != ARCHIVE_OK) {
            tl_error(out_path, NULL, "zip format: %s", archive_error_string(a));
            return 1;
        }
    } else {
        if (archive_write_set_format_pax_restricted(a) != ARCHIVE_OK ||
            archive_write_set_format_option(a, "pax", "hdrcharset", "UTF-8") != ARCHIVE_OK ||
            archive_write_add_filter_zstd(a) != ARCHIVE_OK) {
            tl_error(out_path, NULL, "tar.zst format: %s", archive_error_string(a));
            return 1;
        }
    }
    return 0;
}

/* Copy st_size bytes of fd into the archive entry, hashing them; the file must hold
 * exactly that many and, when `sha` is given, hash to it. 0 ok, 1 reported. */
static int pack_copy_data(struct archive *a, int fd, const char *full, int64_t size, const char *sha,
                          unsigned char *buf)
{
    tl_sha256 h;
    tl_sha256_init(&h);
    int64_t left = size;
    while (left > 0) {
        ssize_t r = read(fd, buf, TL_READ_CHUNK);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0 || r > left) {
            tl_error(full, NULL, "changed size while being archived");
            tl_sha256_abort(&h);
            return 1;
        }
        tl_sha256_update(&h, buf, (size_t)r);
        if (archive_write_data(a, buf, (size_t)r) != r) {
            tl_error(full, NULL, "archive write failed: %s", archive_error_string(a));
            tl_sha256_abort(&h);
            return 1;
        }
        left -= r;
    }
    char hex[TL_SHA256_HEX];
    tl_sha256_final(&h, hex);
    if (sha && strcmp(hex, sha)) {
        tl_error(full, NULL, "changed while being archived (sha256 differs from files.sha256)");
        return 1;
    }
    return 0;
}

/* One file of dir as an entry: a plain relative UTF-8 name, a regular file (not followed
 * through a link), fixed mtime and owner, perms 0644 or 0755. 0 ok, 1 reported. */
static int pack_add_file(struct archive *a, const char *dir, const char *rel, const char *sha, time_t mt,
                         unsigned char *buf)
{
    const char *why;
    if (!tl_rel_path_ok(rel, &why)) {
        tl_error(rel, NULL, "refused: %s", why);
        return 1;
    }
    if (!tl_utf8_valid(rel, strlen(rel))) {
        tl_error(rel, NULL, "refused: the name is not valid UTF-8 (archive names are UTF-8)");
        return 1;
    }
    char *full = tl_join(dir, rel);
    int fd = open(full, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        tl_error(full, NULL, "refused: %s", fd < 0 ? tl_strerror(errno) : "not a regular file");
        if (fd >= 0)
            close(fd);
        free(full);
        return 1;
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
    if (bad)
        tl_error(full, NULL, "cannot add to archive: %s", archive_error_string(a));
    else
        bad = pack_copy_data(a, fd, full, st.st_size, sha, buf);
    close(fd);
    free(full);
    return bad;
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
    if (!a || !buf || pack_set_format(a, fmt, out_path))
        goto out;
    /* No padding surprises: libarchive's default tar block padding is fixed anyway. */
    if (archive_write_open_fd(a, tfd) != ARCHIVE_OK) {
        tl_error(out_path, NULL, "cannot open archive: %s", archive_error_string(a));
        goto out;
    }
    time_t mt = tl_pack_mtime();
    for (size_t i = 0; i < files->n; i++)
        if (pack_add_file(a, dir, files->v[i], sha ? sha[i] : NULL, mt, buf))
            goto out;
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
char *tl_archive_norm_name(const char *n)
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
        char *nm = tl_archive_norm_name(raw);
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
    locale_t old = tl_archive_utf8_begin();
    int rc = pack_write(dir, files, sha, fmt, out_path);
    tl_archive_utf8_end(old);
    return rc;
}

/* An extraction in progress: the reader, the disk writer, the limits and what was
 * extracted so far (holes included; `dense`: bytes other than zero runs). */
typedef struct extract_run {
    const char *archive_path;
    struct archive *a, *w;
    tl_extract_limits lim;
    uint64_t asize, total, dense;
} extract_run;

/* Why extraction must stop after `end` bytes of the current entry, or NULL. */
static const char *extract_over_limit(const extract_run *x, uint64_t end)
{
    return tl_stop_signal ? "interrupted"
           : end > x->lim.max_entry ? "refused: larger than the per-entry limit (--max-entry)"
           : x->total > x->lim.max_total ? "refused: more than the total limit (--max-total)"
           : x->dense > ((uint64_t)1 << 20) && (double)x->dense > x->lim.max_ratio * (double)(x->asize ? x->asize : 1)
               ? "refused: expands more than the ratio limit (--max-ratio)"
               : NULL;
}

/* The data blocks of entry nm, written to disk within the limits. 0 ok, 1 reported. */
static int extract_data(extract_run *x, const char *nm)
{
    const void *blk;
    size_t sz;
    la_int64_t off;
    int dr;
    uint64_t end = 0; /* bytes of this entry so far, holes included */
    while ((dr = archive_read_data_block(x->a, &blk, &sz, &off)) == ARCHIVE_OK) {
        uint64_t nend = (uint64_t)(off < 0 ? 0 : off) + sz;
        if (nend > end) {
            x->total += nend - end;
            end = nend;
        }
        x->dense += nonzero_bytes(blk, sz);
        const char *lw = extract_over_limit(x, end);
        if (lw) {
            tl_error(x->archive_path, nm, "%s after %llu bytes", lw, (unsigned long long)x->total);
            unlink(nm);   /* not left half-written (sparse extraction sizes it in full) */
            return 1;
        }
        if (archive_write_data_block(x->w, blk, sz, off) != ARCHIVE_OK) {
            tl_error(x->archive_path, nm, "write failed: %s", archive_error_string(x->w));
            return 1;
        }
    }
    if (dr != ARCHIVE_EOF) {
        tl_error(x->archive_path, nm, "corrupt data: %s", archive_error_string(x->a));
        return 1;
    }
    return 0;
}

/* One entry (already pre-checked): its normalised name, perms 0755 or 0644, its data. */
static int extract_entry(extract_run *x, struct archive_entry *ent)
{
    char *nm = tl_archive_norm_name(archive_entry_pathname(ent));
    int rc = 1;
    if (!nm[0]) {
        free(nm);
        return 0;
    }
    archive_entry_set_pathname(ent, nm);
    int isdir = archive_entry_filetype(ent) == AE_IFDIR;
    archive_entry_set_perm(ent, isdir ? 0755 : (archive_entry_perm(ent) & 0111) ? 0755 : 0644);
    if (archive_write_header(x->w, ent) != ARCHIVE_OK)
        tl_error(x->archive_path, nm, "refused by libarchive: %s", archive_error_string(x->w));
    else if (extract_data(x, nm))
        ;
    else if (archive_write_finish_entry(x->w) != ARCHIVE_OK)
        tl_error(x->archive_path, nm, "cannot finish: %s", archive_error_string(x->w));
    else
        rc = 0;
    free(nm);
    return rc;
}

static int archive_extract(const char *archive_path, const char *out_dir, const tl_extract_limits *limits)
{
    extract_run x = { archive_path, NULL, NULL, { 0, 0, 0 }, 0, 0, 0 };
    if (limits)
        x.lim = *limits;
    else
        tl_extract_limits_default(&x.lim);
    int e = tl_mkdirs(out_dir);
    if (e) {
        tl_error(out_dir, NULL, "cannot create: %s", tl_strerror(e));
        return 1;
    }
    char *abs_arch = tl_abspath(archive_path);
    char *abs_out = tl_abspath(out_dir);
    int rc = 1;
    int cwd = -1, afd = -1;
    if (precheck(abs_arch, abs_out, &x.lim))
        goto out;
    x.a = open_reader(abs_arch, &afd, &x.asize);
    if (!x.a)
        goto out;
    x.w = archive_write_disk_new();
    /* SPARSE: runs of zeros become holes, so they take no disk (the ratio limit skips them) */
    archive_write_disk_set_options(x.w, ARCHIVE_EXTRACT_SECURE_NODOTDOT | ARCHIVE_EXTRACT_SECURE_SYMLINKS |
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
    while ((r = archive_read_next_header(x.a, &ent)) == ARCHIVE_OK || r == ARCHIVE_WARN)
        if (extract_entry(&x, ent))
            goto out;
    if (r != ARCHIVE_EOF) {
        tl_error(archive_path, NULL, "corrupt archive: %s", archive_error_string(x.a));
        goto out;
    }
    rc = 0;
out:
    if (cwd >= 0) {
        if (fchdir(cwd) != 0)
            tl_error(".", NULL, "cannot return to the working directory");
        close(cwd);
    }
    if (x.w) {
        archive_write_close(x.w);
        archive_write_free(x.w);
    }
    close_reader(x.a, afd);
    free(abs_arch);
    free(abs_out);
    return rc;
}

int tl_archive_extract(const char *archive_path, const char *out_dir, const tl_extract_limits *limits)
{
    locale_t old = tl_archive_utf8_begin();
    int rc = archive_extract(archive_path, out_dir, limits);
    tl_archive_utf8_end(old);
    return rc;
}
