/*
 * build.c - `tandem build --backend aot|jit --staging DIR`: build a player folder from a
 * staging folder (`tandem stage`; a folder without staging.json is built as it is, without
 * a binary manifest).
 *
 * For every subject: generate ONE translation unit (backends/backend.h td_tu_generate),
 * then
 *   aot: <out>/tandem-player-<subject>.c, clang -> <out>/<subject>.so, <subject>.ll,
 *        <subject>.opt.yaml (for the inspector)
 *   jit: <out>/src/<the subject's sources, byte copies> + <out>/src/tandem-player-<subject>.c;
 *        the player compiles them at start-up, here a libtcc compile check.
 * Plus <out>/tandem-player (a copy of the shell both players run in),
 * <out>/player-<backend>.json (how to run it: shell, subjects, modules/TUs, compile times),
 * <out>/build-id-<backend> and, when the staging folder has staging.json,
 * <out>/binary-manifest-<backend>.json (tl_manifest_write). Build id: SHA-256 of
 * stagingHash, backend, compiler identity and flags (content-derived).
 * Layering: tools call backends; the backends call nothing above the module ABI.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wformat-truncation"
#endif

#include <cjson/cJSON.h>

#include "backend.h"
#include "tl_err.h"
#include "tl_fs.h"
#include "tl_hash.h"
#include "tl_manifest.h"
#include "tl_opt.h"
#include "tl_srcmap.h"

#define BUILD_MAX 32

static const tl_opt build_opts[] = {
    { "backend", 0, TL_OPT_STR, "B", 0, 0, "aot or jit" },
    { "out", 0, TL_OPT_PATH, "DIR", 0, 0, "player folder (created)" },
    { "staging", 0, TL_OPT_PATH, "DIR", 0, 0, "the staging folder (`tandem stage [--project DIR] --out DIR`)" },
    { "subject", 0, TL_OPT_STR, "NAME", 0, 0, "subject under players/subjects/ (repeat; default: all)" },
    { "suite", 0, TL_OPT_STR, "NAME", 0, 0, "suite under players/suites/ (repeat; default: all)" },
    { "shell", 0, TL_OPT_PATH, "PATH", 0, 0, "the tandem-player binary (default: next to tandem)" },
    { "label", 0, TL_OPT_STR, "NAME", 0, 0, "with one --subject: the name its module reports and\n"
      "player-<backend>.json lists (a baseline revision: tandem@<rev>)" },
    { NULL, 0, 0, NULL, 0, 0, NULL }
};

static const tl_optspec build_spec = {
    "tandem build", "--backend aot|jit --staging DIR --out DIR [--subject NAME]...\n[--suite NAME]... [--shell PATH]",
    "Build a player folder: one generated translation unit per subject (runtime +\n"
    "subject + suites), compiled by clang (aot: shared modules, LLVM IR, remarks) or\n"
    "copied with its sources for libtcc (jit: compiled at player start-up; checked here).",
    build_opts, "Exit: 0 built, 1 a step failed, 2 usage.", 0, 0
};

static int list_subdirs(const char *root, const char *rel, tl_strlist *out)
{
    char *dir = tl_join(root, rel);
    tl_strlist files = { 0 };
    int rc = tl_walk(root, rel, TL_WALK_REFUSE_SYMLINKS, NULL, NULL, &files);
    free(dir);
    if (rc) return rc;
    /* first component below rel of every file */
    size_t rl = strlen(rel);
    for (size_t i = 0; i < files.n; i++) {
        const char *p = files.v[i] + rl + 1;
        const char *slash = strchr(p, '/');
        if (!slash) continue;
        char name[256];
        snprintf(name, sizeof name, "%.*s", (int)(slash - p), p);
        int dup = 0;
        for (size_t k = 0; k < out->n && !dup; k++) dup = !strcmp(out->v[k], name);
        if (!dup) tl_strlist_push(out, name);
    }
    tl_strlist_free(&files);
    tl_strlist_sort(out);
    return 0;
}

/* The source files a subject's TU depends on: runtime/, players/include/, the subject's
 * folder and the suites' folders (all files, so headers come along). Sorted, unique. */
static int collect_sources(const char *root, const char *subject, const tl_strlist *suites, tl_strlist *out)
{
    char rel[512];
    int rc = tl_walk(root, "runtime", TL_WALK_REFUSE_SYMLINKS, NULL, NULL, out);
    char *inc = tl_join(root, "players/include");
    if (!rc && tl_is_dir(inc)) rc = tl_walk(root, "players/include", TL_WALK_REFUSE_SYMLINKS, NULL, NULL, out);
    free(inc);
    snprintf(rel, sizeof rel, "players/subjects/%s", subject);
    if (!rc) rc = tl_walk(root, rel, TL_WALK_REFUSE_SYMLINKS, NULL, NULL, out);
    for (size_t i = 0; !rc && i < suites->n; i++) {
        snprintf(rel, sizeof rel, "players/suites/%s", suites->v[i]);
        rc = tl_walk(root, rel, TL_WALK_REFUSE_SYMLINKS, NULL, NULL, out);
    }
    tl_strlist_sort(out);
    size_t w = 0;
    for (size_t i = 0; i < out->n; i++) {
        if (w && !strcmp(out->v[w - 1], out->v[i])) { free(out->v[i]); continue; }
        out->v[w++] = out->v[i];
    }
    out->n = w;
    return rc;
}

static int write_text(const char *path, const char *text)
{
    int e = tl_mkdirs_parent(path);
    if (!e) e = tl_write_atomic(path, text, strlen(text), 0644);
    if (e) tl_error(path, NULL, "cannot write: %s", tl_strerror(e));
    return e ? 1 : 0;
}

/* The compiler's messages, each staged path (the staging's, or the JIT player's copy under
 * src/) replaced by the user's own file (tl_srcmap.h): an editor's jump-to-error opens the
 * file whose edits count. Without staging.json the messages are printed as they are. */
static void print_compiler(const tl_staging *st, const char *root, const char *outabs, const char *err)
{
    char a[PATH_MAX + 2], b[PATH_MAX + 8];
    snprintf(a, sizeof a, "%s/", root);
    snprintf(b, sizeof b, "%s/src/", outabs);
    const char *prefixes[] = { a, b };
    char *mapped = st->nfiles ? tl_srcmap_text(st, err, prefixes, 2) : NULL;
    fprintf(stderr, "%s\n", mapped ? mapped : err);
    free(mapped);
}

/* The state of one `tandem build`, shared by its phases in the order td_verb_build runs them. */
typedef struct build_run {
    /* the options (build_options) */
    const char *out, *staging, *shell_arg, *label;
    const td_backend *be;
    tl_strlist subjects, suites;
    /* the staging (build_inputs, build_staging_hash) */
    char *root, *outabs;
    char shell[PATH_MAX];
    int staged;      /* the staging folder has a staging.json (whatever it is) */
    tl_staging st;   /* staging.json, kept to name the user's files in compile errors */
    char staging_hash[TL_SHA256_HEX], build_id[TL_SHA256_HEX];
    /* the player's description (player-<backend>.json) and files (the binary manifest's) */
    cJSON *desc, *jsubs;
    tl_strlist outfiles;
    char err[65536];
} build_run;

/* The options into b. 0 ok, else the verb's exit code (help: 0 through *exit_now). */
static int build_options(build_run *b, int argc, char **argv, int *exit_now)
{
    tl_optres o;
    *exit_now = 1;
    int prc = tl_opt_parse(&build_spec, argc, argv, &o);
    if (prc) { tl_opt_free(&o); return prc == TL_OPT_HELP ? 0 : 2; }
    const char *backend_name = tl_opt_str(&o, "backend", NULL);
    b->out = tl_opt_str(&o, "out", NULL);
    b->staging = tl_opt_str(&o, "staging", NULL);
    b->shell_arg = tl_opt_str(&o, "shell", NULL);
    b->label = tl_opt_str(&o, "label", NULL);
    int nv;
    const char *const *vals = tl_opt_all(&o, "subject", &nv);
    for (int i = 0; i < nv; i++) tl_strlist_push(&b->subjects, vals[i]);
    vals = tl_opt_all(&o, "suite", &nv);
    for (int i = 0; i < nv; i++) tl_strlist_push(&b->suites, vals[i]);
    if (b->label && b->subjects.n != 1) {
        fprintf(stderr, "tandem build: --label names one subject: give exactly one --subject\n");
        tl_opt_free(&o);
        return 2;
    }
    tl_opt_free(&o);
    b->be = td_backend_find(backend_name);
    if (!b->be || !b->out || !b->staging) {
        fprintf(stderr, "tandem build: need --backend aot|jit, --staging DIR (a folder `tandem stage [--project DIR] "
                        "--out DIR` wrote) and --out DIR (tandem build --help)\n");
        return 2;
    }
    *exit_now = 0;
    return 0;
}

/* The staging folder, the shell, the subjects and suites (default: every one staged) and the
 * player folder (created). 0 ok, 1 failed (reported). */
static int build_inputs(build_run *b)
{
    b->root = tl_abspath(b->staging);
    b->outabs = tl_abspath(b->out);
    char *sj = tl_join(b->root, TL_STAGING_JSON);
    struct stat sjst;
    b->staged = lstat(sj, &sjst) == 0; /* whatever it is: a FIFO or link is refused when read */
    free(sj);
    if (!tl_is_dir(b->root)) { tl_error(b->root, "--staging", "not a folder"); return 1; }
    if (tl_player_shell(b->shell_arg, b->shell, sizeof b->shell)) {
        tl_error(b->shell, "--shell", "the player shell (tandem-player) is not there or not executable");
        return 1;
    }
    if (!b->subjects.n && list_subdirs(b->root, "players/subjects", &b->subjects)) return 1;
    if (!b->subjects.n) { tl_error(b->root, "players/subjects", "no subject to build"); return 1; }
    if (!b->suites.n && list_subdirs(b->root, "players/suites", &b->suites)) return 1;
    tl_strlist_sort(&b->suites);
    int e = tl_mkdirs(b->outabs);
    if (e) { tl_error(b->outabs, "--out", "cannot create: %s", tl_strerror(e)); return 1; }
    return 0;
}

/* Without staging.json: the stagingHash computed the same way over every source the
 * subjects' TUs depend on. 0 ok, 1 unreadable (reported). */
static int build_hash_unstaged(build_run *b)
{
    tl_strlist all = { 0 };
    int bad = 0;
    for (size_t s = 0; s < b->subjects.n && !bad; s++)
        bad = collect_sources(b->root, b->subjects.v[s], &b->suites, &all) != 0;
    tl_strlist_sort(&all);
    tl_file_rec *recs = calloc(all.n + 1, sizeof *recs);
    size_t nr = 0;
    for (size_t i = 0; i < all.n && !bad; i++) {
        if (nr && !strcmp(recs[nr - 1].path, all.v[i])) continue;
        char *p = tl_join(b->root, all.v[i]);
        recs[nr].path = all.v[i];
        bad = tl_sha256_file(p, recs[nr].sha256, &recs[nr].bytes) != 0;
        free(p);
        nr++;
    }
    if (!bad) {
        tl_staging_hash(recs, nr, b->staging_hash);
        fprintf(stderr, "tandem build: %s has no staging.json: building it as it is, no binary "
                        "manifest (stage it with `tandem stage` for a verifiable player)\n", b->root);
    }
    free(recs);
    tl_strlist_free(&all);
    return bad;
}

/* Content hash: staging.json's stagingHash, else one computed the same way; then the build
 * id. 0 ok, 1 refused (reported). */
static int build_staging_hash(build_run *b)
{
    if (b->staged) {
        /* build what staging.json says and nothing else: every staged file re-hashed first
         * (an edited, missing or extra file refuses the build, so a later revert cannot
         * make an edited player pass verify and the reuse rule) */
        tl_report rep = { stderr, "staging", NULL, 0, 0 };
        if (tl_staging_verify(b->root, &b->st, &rep) || rep.count) {
            tl_error(b->root, "--staging", "%u mismatch(es) against staging.json: refusing to build", rep.count);
            return 1;
        }
        snprintf(b->staging_hash, sizeof b->staging_hash, "%s", b->st.staging_hash);
    } else if (build_hash_unstaged(b)) {
        return 1;
    }
    /* The player ABI headers come with the sources: `tandem stage` stages Tandem's
     * players/include with every project, so a staging without them is not one of its
     * (a --root tree, or an old layout) and the build would not be self-contained. */
    char *hdr = tl_join(b->root, "players/include/tandem_player.h");
    int have_hdr = tl_is_file(hdr);
    if (!have_hdr)
        tl_error(hdr, NULL, "missing (or not a regular file): the staging has no player ABI headers "
                 "(players/include); stage with `tandem stage`, which stages Tandem's players/include with "
                 "every project, or add them to the --root tree");
    free(hdr);
    if (!have_hdr) return 1;
    const td_backend *be = b->be;
    tl_build_id(b->staging_hash, be->name, be->identity(), be->flags(), b->build_id);
    return 0;
}

/* player-<backend>.json's header: what was built from what, by what; subjects follow. */
static void build_describe(build_run *b)
{
    const td_backend *be = b->be;
    cJSON *desc = b->desc = cJSON_CreateObject();
    cJSON_AddNumberToObject(desc, "schemaVersion", 1);
    cJSON_AddStringToObject(desc, "kind", "tandem-player");
    cJSON_AddStringToObject(desc, "backend", be->name);
    cJSON_AddStringToObject(desc, "buildId", b->build_id);
    cJSON_AddStringToObject(desc, "stagingHash", b->staging_hash);
    cJSON_AddStringToObject(desc, "stagingDir", b->root);
    cJSON_AddStringToObject(desc, "compiler", be->identity());
    cJSON_AddStringToObject(desc, "flags", be->flags());
    cJSON_AddStringToObject(desc, "shell", "tandem-player");
    cJSON *jsuites = cJSON_AddArrayToObject(desc, "suites");
    for (size_t i = 0; i < b->suites.n; i++) cJSON_AddItemToArray(jsuites, cJSON_CreateString(b->suites.v[i]));
    b->jsubs = cJSON_AddArrayToObject(desc, "subjects");
}

/* aot: the TU written beside the module clang builds from it, with its IR and remarks.
 * 0 ok, 1 failed (reported). */
static int build_subject_aot(build_run *b, const char *subject, const char *tuname, char *text, cJSON *js)
{
    char tupath[PATH_MAX], rel[PATH_MAX], m[PATH_MAX];
    snprintf(rel, sizeof rel, "%s", tuname);
    snprintf(tupath, sizeof tupath, "%s/%s", b->outabs, rel);
    int we = write_text(tupath, text);
    free(text);
    if (we) return 1;
    td_backend_options o = { 0 };
    td_backend_result r;
    o.name = subject;
    o.root = b->root;
    o.tu_path = tupath;
    o.out_dir = b->outabs;
    o.emit_ir = 1;
    o.emit_remarks = 1;
    if (b->be->build(&o, &r, b->err, sizeof b->err)) {
        print_compiler(&b->st, b->root, b->outabs, b->err);
        tl_error(tupath, NULL, "aot build of subject '%s' failed", subject);
        return 1;
    }
    tl_strlist_push(&b->outfiles, rel);
    static const char *const kinds[][2] = { { "module", "so" }, { "ir", "ll" }, { "remarks", "opt.yaml" } };
    for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++) {
        snprintf(m, sizeof m, "%s.%s", subject, kinds[i][1]);
        tl_strlist_push(&b->outfiles, m);
        cJSON_AddStringToObject(js, kinds[i][0], m);
    }
    cJSON_AddStringToObject(js, "tu", rel);
    cJSON_AddNumberToObject(js, "irNs", (double)r.ir_ns);
    printf("tandem build: aot %s: %s.so in %.1f ms (IR %.1f ms)\n", subject, subject,
           r.compile_ns / 1e6, r.ir_ns / 1e6);
    cJSON_AddNumberToObject(js, "compileNs", (double)r.compile_ns);
    return 0;
}

/* jit: byte copies of the subject's sources under src/, the TU beside them, and libtcc's
 * compile check of them (the player compiles them at start-up). 0 ok, 1 failed (reported). */
static int build_subject_jit(build_run *b, const char *subject, const char *tuname, char *text, cJSON *js)
{
    char tupath[PATH_MAX], rel[PATH_MAX];
    tl_strlist srcs = { 0 };
    char *srcroot = tl_join(b->outabs, "src");
    int bad = collect_sources(b->root, subject, &b->suites, &srcs) != 0;
    for (size_t i = 0; i < srcs.n && !bad; i++) {
        char *from = tl_join(b->root, srcs.v[i]), *to = tl_join(srcroot, srcs.v[i]);
        char hex[TL_SHA256_HEX];
        uint64_t bytes;
        int ce = tl_copy_hash(from, to, 0644, hex, &bytes);
        if (ce) tl_error(from, NULL, "cannot copy: %s", tl_strerror(ce));
        free(from);
        free(to);
        bad = ce != 0;
        snprintf(rel, sizeof rel, "src/%s", srcs.v[i]);
        if (!bad) tl_strlist_push(&b->outfiles, rel);
    }
    tl_strlist_free(&srcs);
    snprintf(rel, sizeof rel, "src/%s", tuname);
    snprintf(tupath, sizeof tupath, "%s/%s", b->outabs, rel);
    bad = bad || write_text(tupath, text);
    free(text);
    if (bad) { free(srcroot); return 1; }
    tl_strlist_push(&b->outfiles, rel);
    td_backend_options o = { 0 };
    td_backend_result r;
    o.name = subject;
    o.root = srcroot;
    o.tu_path = tupath;
    int be_rc = b->be->build(&o, &r, b->err, sizeof b->err);
    free(srcroot);
    if (be_rc) {
        print_compiler(&b->st, b->root, b->outabs, b->err);
        tl_error(tupath, NULL, "jit compile check of subject '%s' failed", subject);
        return 1;
    }
    cJSON_AddStringToObject(js, "tu", rel);
    cJSON_AddStringToObject(js, "root", "src");
    printf("tandem build: jit %s: compile check in %.1f ms\n", subject, r.compile_ns / 1e6);
    cJSON_AddNumberToObject(js, "compileNs", (double)r.compile_ns);
    return 0;
}

/* One subject: its generated TU (runtime + subject + suites), built by the backend.
 * 0 ok, 1 failed (reported). */
static int build_subject(build_run *b, const char *subject)
{
    char *text = NULL, **included = NULL, tuname[300];
    const char *sv[BUILD_MAX + 1];
    if (b->suites.n > BUILD_MAX) { tl_error(b->root, "--suite", "more than %d suites", BUILD_MAX); return 1; }
    for (size_t i = 0; i < b->suites.n; i++) sv[i] = b->suites.v[i];
    sv[b->suites.n] = NULL;
    td_tu_spec spec = { b->root, subject, sv, 0, b->label };
    if (td_tu_generate(&spec, &text, &included, b->err, sizeof b->err)) {
        tl_error(b->root, subject, "%s", b->err);
        return 1;
    }
    td_tu_free_list(included);
    td_tu_file_name(subject, tuname, sizeof tuname);
    cJSON *js = cJSON_CreateObject();
    cJSON_AddItemToArray(b->jsubs, js);
    cJSON_AddStringToObject(js, "name", b->label ? b->label : subject);
    if (b->label) cJSON_AddStringToObject(js, "folder", subject);
    if (!strcmp(b->be->name, "aot"))
        return build_subject_aot(b, subject, tuname, text, js);
    return build_subject_jit(b, subject, tuname, text, js);
}

/* The shell both players run in, build-id-<backend> and player-<backend>.json.
 * 0 ok, 1 failed (reported). */
static int build_player_files(build_run *b)
{
    char *to = tl_join(b->outabs, "tandem-player");
    char hex[TL_SHA256_HEX];
    uint64_t bytes;
    int ce = tl_copy_hash(b->shell, to, 0755, hex, &bytes);
    free(to);
    if (ce) { tl_error(b->shell, NULL, "cannot copy the shell: %s", tl_strerror(ce)); return 1; }
    tl_strlist_push(&b->outfiles, "tandem-player");
    char name[64], path[PATH_MAX];
    snprintf(name, sizeof name, "build-id-%s", b->be->name);
    snprintf(path, sizeof path, "%s/%s", b->outabs, name);
    char line[80];
    snprintf(line, sizeof line, "%s\n", b->build_id);
    if (write_text(path, line)) return 1;
    tl_strlist_push(&b->outfiles, name);
    snprintf(name, sizeof name, "player-%s.json", b->be->name);
    snprintf(path, sizeof path, "%s/%s", b->outabs, name);
    char *dtext = cJSON_Print(b->desc);
    int we = write_text(path, dtext);
    free(dtext);
    if (we) return 1;
    tl_strlist_push(&b->outfiles, name);
    return 0;
}

/* The binary manifest of every file written (staged builds only), its build id checked
 * against the one computed. 0 ok, 1 failed (reported). */
static int build_manifest(build_run *b)
{
    char mid[65];
    tl_strlist *of = &b->outfiles;
    const td_backend *be = b->be;
    tl_strlist_sort(of);
    size_t w = 0;   /* sources shared by several subjects are listed once */
    for (size_t i = 0; i < of->n; i++) {
        if (w && !strcmp(of->v[w - 1], of->v[i])) { free(of->v[i]); continue; }
        of->v[w++] = of->v[i];
    }
    of->n = w;
    if (tl_manifest_write(b->outabs, be->name, b->root, be->identity(), be->flags(), (const char *const *)of->v,
                          of->n, mid))
        return 1;
    if (strcmp(mid, b->build_id)) {
        tl_error(b->outabs, "buildId", "manifest build id %s differs from %s", mid, b->build_id);
        return 1;
    }
    printf("tandem build: wrote %s/binary-manifest-%s.json\n", b->outabs, be->name);
    return 0;
}

int td_verb_build(int argc, char **argv)
{
    build_run *b = calloc(1, sizeof *b);
    if (!b) {
        tl_error("tandem build", NULL, "out of memory");
        return 1;
    }
    int exit_now, rc = build_options(b, argc, argv, &exit_now);
    if (exit_now)
        goto done;
    rc = 1;
    if (build_inputs(b) || build_staging_hash(b))
        goto done;
    build_describe(b);
    for (size_t s = 0; s < b->subjects.n; s++)
        if (build_subject(b, b->subjects.v[s]))
            goto done;
    if (build_player_files(b) || (b->staged && build_manifest(b)))
        goto done;
    printf("tandem build: %s player in %s, build id %s\n", b->be->name, b->outabs, b->build_id);
    rc = 0;
done:
    tl_staging_free(&b->st);
    cJSON_Delete(b->desc);
    tl_strlist_free(&b->subjects);
    tl_strlist_free(&b->suites);
    tl_strlist_free(&b->outfiles);
    free(b->root);
    free(b->outabs);
    free(b);
    return rc;
}
