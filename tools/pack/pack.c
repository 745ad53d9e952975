/*
 * pack.c - `tandem pack`: files.sha256 and a reproducible archive of a folder (zip or
 * tar.zst via libarchive); --check verifies a folder or archive against its
 * files.sha256; --extract extracts an archive safely. A published packet's raw archive
 * (runs.zip, kept outside the repository) is listed with its members: pack_raw.h.
 */
#include "tl_archive.h"
#include "tl_err.h"
#include "tl_opt.h"
#include "tl_fs.h"
#include "tl_hash.h"
#include "tl_manifest.h"
#include "tl_json.h"
#include "tl_redact.h"
#include "pack_raw.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SUMS "files.sha256"

/* The option table: `tandem pack --help` is generated from it (tl_opt.h). */
static const tl_opt pack_opts[] = {
    { "format", 0, TL_OPT_STR, "zip|tar.zst", 0, 0, "archive format (default: from --out's extension, else zip)" },
    { "out", 0, TL_OPT_PATH, "PATH", 0, 0, "the archive to write (pack), or the folder to extract into" },
    { "check", 0, TL_OPT_PATH, "DIR|ARCHIVE", 0, 0, "verify files.sha256 of a folder or an archive" },
    { "raw", 0, TL_OPT_PATH, "DIR", 0, 0, "with --check: the folder holding the packet's raw archive\n(runs.zip) when the packet does not" },
    { "raw-archive", 0, TL_OPT_PATH, "FILE", 0, 0, "with DIR: a raw archive kept outside DIR (runs.zip); files.sha256\nlists it and each member as <name>/<member>" },
    { "extract", 0, TL_OPT_PATH, "ARCHIVE", 0, 0, "extract an archive safely into --out DIR" },
    { "redact", 0, TL_OPT_PATH, "DIR", 0, 0, "replace machine paths in DIR (with --path)" },
    { "path", 0, TL_OPT_PATH, "PATH=<name>", 0, 0, "with --redact: a path and its placeholder (repeatable, at most 16)" },
    { "max-total", 0, TL_OPT_INT, "BYTES", 1, 9e18, "extraction limit: total bytes, holes of sparse entries counted\n(default 4 GiB)" },
    { "max-entry", 0, TL_OPT_INT, "BYTES", 1, 9e18, "extraction limit: bytes of one entry (default 1 GiB)" },
    { "max-ratio", 0, TL_OPT_INT, "N", 1, 1e9, "extraction limit: extracted bytes other than runs of zeros\n(written as holes) per archive byte, checked above 1 MiB\n(default 1000)" },
    { NULL, 0, 0, NULL, 0, 0, NULL }
};

static const tl_optspec pack_spec = {
    "tandem pack",
    "DIR [--format zip|tar.zst] [--out FILE] [--raw-archive FILE]\n"
    "--check DIR|ARCHIVE [--raw DIR] [LIMITS]\n"
    "--extract ARCHIVE --out DIR [LIMITS]\n"
    "--redact DIR --path PATH=<name> [--path PATH=<name>...]",
    "Pack: write DIR/files.sha256 (\"<sha256>  <path>\" per file, sorted by path, itself\n"
    "excluded) and a reproducible archive of DIR (sorted entries, fixed mtime\n"
    "$SOURCE_DATE_EPOCH or 1980-01-01, uid/gid 0, no owner names, perms 0644/0755):\n"
    "two packs of the same folder are byte-identical. Default --out: DIR.zip or\n"
    "DIR.tar.zst beside DIR; the format follows --out's extension when --format is absent.\n"
    "Symlinks, special files and unsafe names in DIR are refused.\n"
    "\n"
    "--check: verify files.sha256 of a folder, or of an archive (extracted safely to a\n"
    "temporary folder first); every changed, missing or extra file is printed.\n"
    "--extract: refuse archives with absolute paths, '..', links or writes through\n"
    "symlinks (pre-check, then libarchive's SECURE_* flags); then check files.sha256 if\n"
    "the archive has one (a files.sha256 that is not a regular file is refused).\n"
    "LIMITS of an extraction (--max-total, --max-entry, --max-ratio): sparse entries are\n"
    "refused; runs of zeros are written as holes and count toward --max-total and\n"
    "--max-entry, not --max-ratio, so --check accepts what pack writes of a large sparse\n"
    "file (the ratio guards the disk, and holes take none). SIGINT/SIGTERM stop it and the\n"
    "temporary folder of --check is removed (exit 1).\n"
    "\n"
    "Raw archives (a published packet's runs.zip, kept outside the repository):\n"
    "--raw-archive FILE lists FILE in DIR/files.sha256 under its name, and each of its\n"
    "members as <name>/<member>; the archive written leaves it out, and a FILE of the\n"
    "same name inside DIR is refused. Packing a folder whose files.sha256 lists a raw\n"
    "archive without giving it is refused (its hashes would be lost). --check verifies a\n"
    "raw archive found in the folder or in --raw DIR: its own hash and every member's\n"
    "(changed, missing, extra: named with both hashes); one that is in neither is said on\n"
    "stdout (\"raw runs not present: ... not verified\") and the exit is 0 when the rest\n"
    "verifies; --raw DIR without it there is a mismatch. In a packet (files.sha256 lists\n"
    "gate/gate-summary.json and attempt-manifest.json) every listed *.json file must parse.\n"
    "\n"
    "--redact: replace machine paths by placeholders in a folder about to be published\n"
    "(scripts/publish-packet.sh): in every *.json file (each string and key, through cJSON,\n"
    "rewritten only when changed) and *.md, *.txt, *.svg, *.log, *.csv file (bytes), each PATH\n"
    "(absolute) where it starts a path becomes its <name>, longest first; archives are left\n"
    "as they are. A file other than an archive that still holds a PATH afterwards, or a\n"
    "*.json file that is not JSON, is refused (named). Run it before packing: files.sha256\n"
    "then lists the published bytes.",
    pack_opts, "Exit: 0 ok (raw archives not present included), 1 refused, invalid or mismatching,\n2 usage.", 0, 1
};

static int ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && !strcmp(s + a - b, suf);
}

/* Parse DIR/files.sha256. 0 ok, 1 invalid (reported). */
static int read_sums(const char *dir, tl_file_rec **out, size_t *nout)
{
    char *path = tl_join(dir, SUMS);
    char *buf;
    size_t len;
    *out = NULL;
    *nout = 0;
    int e = tl_read_file(path, TL_OPEN_NOFOLLOW, (size_t)256 << 20, &buf, &len);
    if (e) {
        tl_error(path, NULL, "cannot read: %s", tl_strerror(e));
        free(path);
        return 1;
    }
    size_t cap = 0, n = 0;
    tl_file_rec *v = NULL;
    int bad = 0;
    size_t lineno = 0;
    char *p = buf, *end = buf + len;
    if (memchr(buf, '\0', len)) {
        tl_error(path, NULL, "NUL byte in file");
        bad = 1;
    }
    while (!bad && p < end) {
        lineno++;
        char *nl = memchr(p, '\n', (size_t)(end - p));
        char field[32];
        snprintf(field, sizeof field, "line %zu", lineno);
        if (!nl) {
            tl_error(path, field, "truncated: no final newline");
            bad = 1;
            break;
        }
        *nl = '\0';
        const char *why;
        if ((size_t)(nl - p) < 67 || p[64] != ' ' || p[65] != ' ') {
            tl_error(path, field, "expected \"<64 hex>  <path>\"");
            bad = 1;
        } else {
            p[64] = '\0';
            if (!tl_is_sha256_hex(p)) {
                tl_error(path, field, "not a SHA-256 (64 lowercase hex digits)");
                bad = 1;
            } else if (!tl_rel_path_ok(p + 66, &why)) {
                tl_error(path, field, "unsafe path '%s': %s", p + 66, why);
                bad = 1;
            } else if (!strcmp(p + 66, SUMS)) {
                tl_error(path, field, "lists itself");
                bad = 1;
            } else if (n && strcmp(v[n - 1].path, p + 66) >= 0) {
                tl_error(path, field, "'%s' %s", p + 66,
                         strcmp(v[n - 1].path, p + 66) ? "out of order (lines must be sorted by path)" : "listed twice");
                bad = 1;
            } else {
                if (n == cap) {
                    cap = cap ? cap * 2 : 64;
                    v = realloc(v, cap * sizeof *v);
                }
                v[n].path = strdup(p + 66);
                v[n].bytes = UINT64_MAX;
                memcpy(v[n].sha256, p, TL_SHA256_HEX);
                n++;
            }
        }
        p = nl + 1;
    }
    free(buf);
    free(path);
    if (bad) {
        for (size_t i = 0; i < n; i++)
            free(v[i].path);
        free(v);
        return 1;
    }
    *out = v;
    *nout = n;
    return 0;
}

/* Does the listing hold what `tandem history` reads of a published packet? */
static int is_packet(const tl_file_rec *v, size_t n)
{
    int found = 0;
    for (size_t i = 0; i < n; i++)
        found += !strcmp(v[i].path, "gate/gate-summary.json") || !strcmp(v[i].path, "attempt-manifest.json");
    return found == 2;
}

/* In a packet every listed *.json file must parse: history and the gate read them. */
static void check_json(const char *dir, const tl_file_rec *c, size_t nc, tl_report *rep)
{
    for (size_t i = 0; i < nc; i++) {
        if (!ends_with(c[i].path, ".json"))
            continue;
        char *p = tl_join(dir, c[i].path);
        cJSON *doc = NULL;
        if (tl_is_file(p) && tl_json_load(p, &doc))
            tl_mismatch(rep, "invalid", p, "not JSON (above)");
        cJSON_Delete(doc);
        free(p);
    }
}

/* Verify dir against its files.sha256: the committed lines in the folder, the raw
 * archives (pack_raw.h) where they are found. 0 ok, 1 mismatching or invalid. */
static int check_dir(const char *dir, const char *label, const char *raw_dir, const tl_extract_limits *lim)
{
    tl_file_rec *v;
    size_t n;
    if (read_sums(dir, &v, &n))
        return 1;
    unsigned char *kind = calloc(n + 1, 1);
    size_t nraw = pk_classify(v, n, kind), nc = 0, ns = 0;
    tl_file_rec *c = calloc(n + 1, sizeof *c);
    const char **skip = calloc(nraw + 2, sizeof *skip);
    skip[ns++] = SUMS;
    for (size_t i = 0; i < n; i++) {
        if (kind[i] == PK_COMMITTED)
            c[nc++] = v[i];
        else if (kind[i] == PK_RAW)
            skip[ns++] = v[i].path; /* top-level; verified by pk_check_raw when present */
    }
    tl_report rep = { stdout, NULL, NULL, 0, 0 };
    tl_files_check(dir, c, nc, skip, NULL, &rep);
    if (is_packet(v, n))
        check_json(dir, c, nc, &rep);
    pk_check_raw(dir, label, raw_dir, v, n, kind, lim, &rep);
    if (raw_dir && !nraw)
        printf("pack --check %s: --raw %s: files.sha256 lists no raw archive\n", label, raw_dir);
    printf("pack --check %s: %zu files listed, %u mismatch(es)\n", label, n, rep.count);
    for (size_t i = 0; i < n; i++)
        free(v[i].path);
    free(v);
    free(c);
    free(kind);
    free(skip);
    return rep.count ? 1 : 0;
}

/* Where the archive will really be written: the real path of --out's folder (the
 * temporary file and the rename happen there) joined with its name. Resolving it is what
 * keeps `--out LINK/x.zip`, LINK pointing into the packed folder, out of that folder.
 * NULL (reported) when the folder cannot be resolved or no file name is given. */
static char *real_out(const char *out)
{
    char *abs = tl_abspath(out);
    char *slash = strrchr(abs, '/');
    const char *name = slash + 1;
    if (!*name || !strcmp(name, ".") || !strcmp(name, "..")) {
        tl_error(out, "--out", "must name a file");
        free(abs);
        return NULL;
    }
    *slash = '\0';
    char *parent = realpath(slash == abs ? "/" : abs, NULL);
    if (!parent) {
        tl_error(out, "--out", "cannot resolve its folder: %s", tl_strerror(errno));
        free(abs);
        return NULL;
    }
    char *r = tl_join(parent, name);
    free(parent);
    free(abs);
    struct stat st;
    if (lstat(r, &st) == 0 && S_ISDIR(st.st_mode)) {
        tl_error(out, "--out", "is a folder: name the archive file");
        free(r);
        return NULL;
    }
    return r;
}

/* The name a raw archive is listed under: FILE's own. */
static const char *raw_name(const char *raw_arg)
{
    const char *slash = strrchr(raw_arg, '/');
    return slash ? slash + 1 : raw_arg;
}

/* A raw archive listed in DIR/files.sha256 now stays listed: packing again without it
 * would drop its hashes. One inside DIR would be listed twice. 0 ok, 1 refused. */
static int raw_guard(const char *dir, const char *raw_arg, const tl_strlist *files)
{
    const char *name = raw_arg ? raw_name(raw_arg) : NULL;
    if (name && (!*name || !strcmp(name, SUMS) || !strcmp(name, ".") || !strcmp(name, ".."))) {
        tl_error(raw_arg, "--raw-archive", "must name an archive file");
        return 1;
    }
    for (size_t i = 0; name && i < files->n; i++)
        if (!strcmp(files->v[i], name)) {
            tl_error(dir, "--raw-archive", "holds a file named '%s': a raw archive is kept outside the packed folder",
                     name);
            return 1;
        }
    char *sp = tl_join(dir, SUMS);
    tl_file_rec *v = NULL;
    size_t n = 0;
    tl_err_capture(NULL, 0, 1);
    int unread = !tl_is_file(sp) || read_sums(dir, &v, &n); /* one that does not parse is rewritten, as before */
    tl_err_capture(NULL, 0, 0);
    unsigned char *kind = calloc(n + 1, 1);
    int rc = 0;
    if (!unread)
        pk_classify(v, n, kind);
    for (size_t i = 0; i < n; i++) {
        if (kind[i] == PK_RAW && (!name || strcmp(name, v[i].path))) {
            tl_error(sp, NULL, "lists the raw archive '%s' and its members: give it with --raw-archive FILE, or "
                     "their hashes would be lost", v[i].path);
            rc = 1;
        }
        free(v[i].path);
    }
    free(v);
    free(kind);
    free(sp);
    return rc;
}

static int do_pack(const char *dir, const char *fmt_arg, const char *out_arg, const char *raw_arg,
                   const tl_extract_limits *lim)
{
    if (!tl_is_dir(dir)) {
        tl_error(dir, NULL, "not a folder");
        return 1;
    }
    char *adir = realpath(dir, NULL);
    if (!adir) {
        tl_error(dir, NULL, "cannot resolve: %s", tl_strerror(errno));
        return 1;
    }
    tl_archive_format fmt = TL_FMT_ZIP;
    if (fmt_arg)
        fmt = !strcmp(fmt_arg, "zip") ? TL_FMT_ZIP : TL_FMT_TAR_ZST;
    else if (out_arg && ends_with(out_arg, ".tar.zst"))
        fmt = TL_FMT_TAR_ZST;
    char *out;
    if (out_arg) {
        out = real_out(out_arg);
        if (!out) {
            free(adir);
            return 1;
        }
    } else {
        size_t l = strlen(adir);
        out = malloc(l + 16);
        snprintf(out, l + 16, "%s%s", adir, fmt == TL_FMT_ZIP ? ".zip" : ".tar.zst");
    }
    size_t dl = strlen(adir);
    if (!strncmp(out, adir, dl) && out[dl] == '/') {
        tl_error(out, "--out", "must not be inside the packed folder %s", adir);
        free(adir);
        free(out);
        return 2;
    }
    tl_strlist files = { 0 };
    static const char *const skip[] = { SUMS, NULL };
    int rc = 1;
    char **full = NULL;
    tl_hash_result *res = NULL;
    const char **sha = NULL;
    tl_file_rec *lines = NULL; /* files.sha256: the folder's files, and a raw archive's lines */
    size_t nlines = 0;
    if (tl_walk(adir, NULL, TL_WALK_REFUSE_SYMLINKS, NULL, skip, &files))
        goto out;
    tl_strlist_sort(&files);
    full = calloc(files.n + 1, sizeof *full);
    res = calloc(files.n + 1, sizeof *res);
    sha = calloc(files.n + 2, sizeof *sha);
    for (size_t i = 0; i < files.n; i++)
        full[i] = tl_join(adir, files.v[i]);
    tl_hash_files((const char *const *)full, files.n, res, 0);
    for (size_t i = 0; i < files.n; i++) {
        if (res[i].err) {
            tl_error(full[i], NULL, "cannot read: %s", tl_strerror(res[i].err));
            goto out;
        }
        pk_push(&lines, &nlines, strdup(files.v[i]), res[i].hex);
    }
    if (raw_guard(adir, raw_arg, &files) || (raw_arg && pk_raw_recs(raw_arg, raw_name(raw_arg), lim, &lines, &nlines)))
        goto out;
    qsort(lines, nlines, sizeof *lines, tl_file_rec_cmp);
    size_t cap = 1024, len = 0;
    char *sums = malloc(cap);
    for (size_t i = 0; i < nlines; i++) {
        size_t need = 64 + 2 + strlen(lines[i].path) + 2;
        if (len + need >= cap) {
            cap = (len + need) * 2;
            sums = realloc(sums, cap);
        }
        len += (size_t)sprintf(sums + len, "%s  %s\n", lines[i].sha256, lines[i].path);
    }
    char *sums_path = tl_join(adir, SUMS);
    int e = tl_write_atomic(sums_path, sums, len, 0644);
    free(sums);
    if (e) {
        tl_error(sums_path, NULL, "cannot write: %s", tl_strerror(e));
        free(sums_path);
        goto out;
    }
    free(sums_path);
    /* The archive holds files.sha256 too, at its sorted place. */
    tl_strlist entries = { 0 };
    for (size_t i = 0; i < files.n; i++)
        tl_strlist_push(&entries, files.v[i]);
    tl_strlist_push(&entries, SUMS);
    tl_strlist_sort(&entries);
    for (size_t i = 0, k = 0; i < entries.n; i++) {
        if (!strcmp(entries.v[i], SUMS))
            sha[i] = NULL;
        else
            sha[i] = res[k++].hex;
    }
    rc = tl_pack_write(adir, &entries, sha, fmt, out);
    tl_strlist_free(&entries);
    if (rc == 0 && raw_arg)
        printf("listed the raw archive %s (%s, %zu lines) in %s\n", raw_name(raw_arg), raw_arg, nlines - files.n, SUMS);
    if (rc == 0)
        printf("packed %zu files + %s from %s into %s\n", files.n, SUMS, adir, out);
out:
    for (size_t i = 0; i < nlines; i++)
        free(lines[i].path);
    free(lines);
    if (full)
        for (size_t i = 0; i < files.n; i++)
            free(full[i]);
    free(full);
    free(res);
    free(sha);
    tl_strlist_free(&files);
    free(adir);
    free(out);
    return rc;
}

/* --redact DIR --path PATH=<name>...: 0 ok, 1 refused, 2 usage. */
static int do_redact(const char *dir, char **args, size_t n, int extra_opts)
{
    if (extra_opts) {
        fprintf(stderr, "tandem pack: --redact takes no --out or --format\n");
        return 2;
    }
    struct stat st;
    if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        tl_error(dir, "--redact", "not a folder (a symbolic link is refused)");
        return 1;
    }
    tl_redaction r[16];
    for (size_t i = 0; i < n; i++) {
        const char *why;
        char *copy = args[i]; /* argv storage: split in place */
        char shown[64];
        snprintf(shown, sizeof shown, "%.60s", args[i]);
        if (!tl_redaction_parse(copy, &r[i], &why)) {
            fprintf(stderr, "tandem pack: --path '%s': %s\n", shown, why);
            return 2;
        }
    }
    size_t changed = 0;
    static const char *const skip[] = { SUMS, NULL };
    if (tl_redact_dir(dir, r, n, skip, &changed))
        return 1;
    printf("redacted %zu file(s) in %s:", changed, dir);
    for (size_t i = 0; i < n; i++)
        printf(" %s", r[i].placeholder);
    printf("\n");
    return 0;
}

/* A positive integer option (bytes, or a ratio), no suffix, no sign. 0 ok, 2 usage. */
static int interrupted(const char *what)
{
    if (!tl_stop_signal)
        return 0;
    fprintf(stderr, "tandem pack: %s interrupted by signal %d\n", what, (int)tl_stop_signal);
    return 1;
}

int td_verb_pack(int argc, char **argv)
{
    tl_optres o;
    int prc = tl_opt_parse(&pack_spec, argc, argv, &o);
    if (prc) {
        tl_opt_free(&o);
        return prc == TL_OPT_HELP ? 0 : 2;
    }
    /* the values point into argv, which outlives the parse result */
    const char *dir = o.npos ? o.pos[0] : NULL, *fmt = tl_opt_str(&o, "format", NULL);
    const char *out = tl_opt_str(&o, "out", NULL), *check = tl_opt_str(&o, "check", NULL);
    const char *extract = tl_opt_str(&o, "extract", NULL), *redact = tl_opt_str(&o, "redact", NULL);
    const char *raw = tl_opt_str(&o, "raw", NULL), *raw_archive = tl_opt_str(&o, "raw-archive", NULL);
    int n_all = 0;
    const char *const *all = tl_opt_all(&o, "path", &n_all);
    char *paths[16];
    size_t npaths = 0;
    if (n_all > (int)(sizeof paths / sizeof *paths)) {
        int rc = tl_opt_fail(&o, "--path", "at most %zu", sizeof paths / sizeof *paths);
        tl_opt_free(&o);
        return rc;
    }
    for (int i = 0; i < n_all; i++)
        paths[npaths++] = (char *)all[i];
    tl_extract_limits lim;
    tl_extract_limits_default(&lim);
    if (tl_opt_given(&o, "max-total"))
        lim.max_total = (uint64_t)tl_opt_int(&o, "max-total", 0);
    if (tl_opt_given(&o, "max-entry"))
        lim.max_entry = (uint64_t)tl_opt_int(&o, "max-entry", 0);
    if (tl_opt_given(&o, "max-ratio"))
        lim.max_ratio = (double)tl_opt_int(&o, "max-ratio", 0);
    tl_opt_free(&o);
    if (fmt && strcmp(fmt, "zip") && strcmp(fmt, "tar.zst")) {
        fprintf(stderr, "tandem pack: --format: expected zip or tar.zst, got '%s'\n", fmt);
        return 2;
    }
    if (!!check + !!extract + !!dir + !!redact != 1) {
        fprintf(stderr, "tandem pack: give exactly one of DIR, --check, --extract or --redact\n");
        tl_opt_help(&pack_spec, stderr);
        return 2;
    }
    if (!redact != !npaths) {
        fprintf(stderr, "tandem pack: --redact needs at least one --path PATH=<name>, and --path needs --redact\n");
        return 2;
    }
    if ((raw && !check) || (raw_archive && !dir)) {
        fprintf(stderr, "tandem pack: %s\n", raw ? "--raw goes with --check" : "--raw-archive goes with DIR");
        return 2;
    }
    if (redact)
        return do_redact(redact, paths, npaths, out || fmt);
    if (check) {
        if (out || fmt) {
            fprintf(stderr, "tandem pack: --check takes no --out or --format\n");
            return 2;
        }
        if (tl_is_dir(check))
            return check_dir(check, check, raw, &lim);
        int code = tl_check_regular(check, TL_OPEN_FOLLOW);
        if (code) {
            tl_error(check, "--check", "not a folder or an archive: %s", tl_strerror(code));
            return 1;
        }
        char *tmpl;
        int rc = pk_extract_tmp(check, &lim, &tmpl);
        if (rc == 0) {
            rc = check_dir(tmpl, check, raw, &lim);
            tl_rm_rf(tmpl);
            free(tmpl);
        }
        if (interrupted("--check"))
            return 1;
        return rc ? 1 : 0;
    }
    if (extract) {
        if (!out) {
            fprintf(stderr, "tandem pack: --extract needs --out DIR\n");
            return 2;
        }
        tl_catch_stop_signals();
        if (tl_archive_extract(extract, out, &lim) || interrupted("--extract"))
            return 1;
        printf("extracted %s into %s\n", extract, out);
        char *sp = tl_join(out, SUMS);
        struct stat st;
        int has = lstat(sp, &st) == 0; /* whatever it is: check_dir refuses a folder or link */
        free(sp);
        return has ? check_dir(out, out, NULL, &lim) : 0;
    }
    return do_pack(dir, fmt, out, raw_archive, &lim);
}
