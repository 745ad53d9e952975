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
    { "layout-seed", 0, TL_OPT_INT, "N", 0, (double)TD_LAYOUT_SEED_MAX, "another layout of the same code: a pad of\n"
      "0..63 cache lines before each source of the unit, from N (0: the default layout;\n"
      "in the flags, the build id and the binary manifest)" },
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

int td_verb_build(int argc, char **argv)
{
    const char *backend_name = NULL, *out = NULL, *staging = NULL, *shell_arg = NULL;
    tl_strlist subjects = { 0 }, suites = { 0 }, outfiles = { 0 };
    int rc = 1;

    tl_optres o;
    int prc = tl_opt_parse(&build_spec, argc, argv, &o);
    if (prc) { tl_opt_free(&o); return prc == TL_OPT_HELP ? 0 : 2; }
    backend_name = tl_opt_str(&o, "backend", NULL);
    out = tl_opt_str(&o, "out", NULL);
    staging = tl_opt_str(&o, "staging", NULL);
    shell_arg = tl_opt_str(&o, "shell", NULL);
    const char *label = tl_opt_str(&o, "label", NULL);
    uint64_t layout_seed = (uint64_t)tl_opt_int(&o, "layout-seed", 0);
    int nv;
    const char *const *vals = tl_opt_all(&o, "subject", &nv);
    for (int i = 0; i < nv; i++) tl_strlist_push(&subjects, vals[i]);
    vals = tl_opt_all(&o, "suite", &nv);
    for (int i = 0; i < nv; i++) tl_strlist_push(&suites, vals[i]);
    if (label && subjects.n != 1) {
        fprintf(stderr, "tandem build: --label names one subject: give exactly one --subject\n");
        tl_opt_free(&o);
        tl_strlist_free(&subjects);
        tl_strlist_free(&suites);
        return 2;
    }
    tl_opt_free(&o);
    const td_backend *be = td_backend_find(backend_name);
    if (!be || !out || !staging) {
        fprintf(stderr, "tandem build: need --backend aot|jit, --staging DIR (a folder `tandem stage [--project DIR] "
                        "--out DIR` wrote) and --out DIR (tandem build --help)\n");
        tl_strlist_free(&subjects);
        tl_strlist_free(&suites);
        return 2;
    }
    char *root = tl_abspath(staging);
    char *outabs = tl_abspath(out);
    char shell[PATH_MAX];
    char err[65536];
    char *sj = tl_join(root, TL_STAGING_JSON);
    struct stat sjst;
    int staged = lstat(sj, &sjst) == 0; /* whatever it is: a FIFO or link is refused when read */
    free(sj);
    cJSON *desc = NULL;
    tl_staging st;   /* staging.json, kept to name the user's files in compile errors */
    memset(&st, 0, sizeof st);

    if (!tl_is_dir(root)) { tl_error(root, "--staging", "not a folder"); goto done; }
    if (tl_player_shell(shell_arg, shell, sizeof shell)) {
        tl_error(shell, "--shell", "the player shell (tandem-player) is not there or not executable");
        goto done;
    }
    if (!subjects.n && list_subdirs(root, "players/subjects", &subjects)) goto done;
    if (!subjects.n) { tl_error(root, "players/subjects", "no subject to build"); goto done; }
    if (!suites.n && list_subdirs(root, "players/suites", &suites)) goto done;
    tl_strlist_sort(&suites);
    int e = tl_mkdirs(outabs);
    if (e) { tl_error(outabs, "--out", "cannot create: %s", tl_strerror(e)); goto done; }

    /* Content hash: staging.json's stagingHash, else one computed the same way. */
    char staging_hash[TL_SHA256_HEX] = "", build_id[TL_SHA256_HEX];
    tl_strlist all = { 0 };
    if (staged) {
        /* build what staging.json says and nothing else: every staged file re-hashed first
         * (an edited, missing or extra file refuses the build, so a later revert cannot
         * make an edited player pass verify and the reuse rule) */
        tl_report rep = { stderr, "staging", NULL, 0, 0 };
        if (tl_staging_verify(root, &st, &rep) || rep.count) {
            tl_error(root, "--staging", "%u mismatch(es) against staging.json: refusing to build", rep.count);
            goto done;
        }
        snprintf(staging_hash, sizeof staging_hash, "%s", st.staging_hash);
    } else {
        for (size_t s = 0; s < subjects.n; s++)
            if (collect_sources(root, subjects.v[s], &suites, &all)) goto done;
        tl_strlist_sort(&all);
        tl_file_rec *recs = calloc(all.n + 1, sizeof *recs);
        size_t nr = 0;
        for (size_t i = 0; i < all.n; i++) {
            if (nr && !strcmp(recs[nr - 1].path, all.v[i])) continue;
            char *p = tl_join(root, all.v[i]);
            recs[nr].path = all.v[i];
            if (tl_sha256_file(p, recs[nr].sha256, &recs[nr].bytes)) { free(p); free(recs); goto done; }
            free(p);
            nr++;
        }
        tl_staging_hash(recs, nr, staging_hash);
        free(recs);
        fprintf(stderr, "tandem build: %s has no staging.json: building it as it is, no binary "
                        "manifest (stage it with `tandem stage` for a verifiable player)\n", root);
    }
    tl_strlist_free(&all);
    /* The player ABI headers come with the sources: `tandem stage` stages Tandem's
     * players/include with every project, so a staging without them is not one of its
     * (a --root tree, or an old layout) and the build would not be self-contained. */
    {
        char *hdr = tl_join(root, "players/include/tandem_player.h");
        int have_hdr = tl_is_file(hdr);
        if (!have_hdr)
            tl_error(hdr, NULL, "missing (or not a regular file): the staging has no player ABI headers "
                     "(players/include); stage with `tandem stage`, which stages Tandem's players/include with "
                     "every project, or add them to the --root tree");
        free(hdr);
        if (!have_hdr) goto done;
    }
    /* a seeded layout is another build of the same sources: in the flags, so in the build
     * id (the reuse rule never takes one for another) and the manifest */
    char flags[1024];
    snprintf(flags, sizeof flags, "%s", be->flags());
    if (layout_seed) snprintf(flags + strlen(flags), sizeof flags - strlen(flags), " layout-seed=%llu",
                              (unsigned long long)layout_seed);
    tl_build_id(staging_hash, be->name, be->identity(), flags, build_id);

    desc = cJSON_CreateObject();
    cJSON_AddNumberToObject(desc, "schemaVersion", 1);
    cJSON_AddStringToObject(desc, "kind", "tandem-player");
    cJSON_AddStringToObject(desc, "backend", be->name);
    cJSON_AddStringToObject(desc, "buildId", build_id);
    cJSON_AddStringToObject(desc, "stagingHash", staging_hash);
    cJSON_AddStringToObject(desc, "stagingDir", root);
    cJSON_AddStringToObject(desc, "compiler", be->identity());
    cJSON_AddStringToObject(desc, "flags", flags);
    cJSON_AddNumberToObject(desc, "layoutSeed", (double)layout_seed);
    cJSON_AddStringToObject(desc, "shell", "tandem-player");
    cJSON *jsuites = cJSON_AddArrayToObject(desc, "suites");
    for (size_t i = 0; i < suites.n; i++) cJSON_AddItemToArray(jsuites, cJSON_CreateString(suites.v[i]));
    cJSON *jsubs = cJSON_AddArrayToObject(desc, "subjects");

    for (size_t s = 0; s < subjects.n; s++) {
        const char *subject = subjects.v[s];
        char *text = NULL, **included = NULL, tuname[300], tupath[PATH_MAX], rel[PATH_MAX];
        const char *sv[BUILD_MAX + 1];
        if (suites.n > BUILD_MAX) { tl_error(root, "--suite", "more than %d suites", BUILD_MAX); goto done; }
        for (size_t i = 0; i < suites.n; i++) sv[i] = suites.v[i];
        sv[suites.n] = NULL;
        td_tu_spec spec = { root, subject, sv, 0, label, layout_seed };
        if (td_tu_generate(&spec, &text, &included, err, sizeof err)) {
            tl_error(root, subject, "%s", err);
            goto done;
        }
        td_tu_free_list(included);
        td_tu_file_name(subject, tuname, sizeof tuname);
        td_backend_options o = { 0 };
        o.name = subject;
        td_backend_result r;
        cJSON *js = cJSON_CreateObject();
        cJSON_AddItemToArray(jsubs, js);
        cJSON_AddStringToObject(js, "name", label ? label : subject);
        if (label) cJSON_AddStringToObject(js, "folder", subject);
        if (!strcmp(be->name, "aot")) {
            snprintf(rel, sizeof rel, "%s", tuname);
            snprintf(tupath, sizeof tupath, "%s/%s", outabs, rel);
            if (write_text(tupath, text)) { free(text); goto done; }
            free(text);
            o.root = root;
            o.tu_path = tupath;
            o.out_dir = outabs;
            o.emit_ir = 1;
            o.emit_remarks = 1;
            if (be->build(&o, &r, err, sizeof err)) {
                print_compiler(&st, root, outabs, err);
                tl_error(tupath, NULL, "aot build of subject '%s' failed", subject);
                goto done;
            }
            tl_strlist_push(&outfiles, rel);
            char m[PATH_MAX];
            snprintf(m, sizeof m, "%s.so", subject);
            tl_strlist_push(&outfiles, m);
            cJSON_AddStringToObject(js, "module", m);
            snprintf(m, sizeof m, "%s.ll", subject);
            tl_strlist_push(&outfiles, m);
            cJSON_AddStringToObject(js, "ir", m);
            snprintf(m, sizeof m, "%s.opt.yaml", subject);
            tl_strlist_push(&outfiles, m);
            cJSON_AddStringToObject(js, "remarks", m);
            cJSON_AddStringToObject(js, "tu", rel);
            cJSON_AddNumberToObject(js, "irNs", (double)r.ir_ns);
            printf("tandem build: aot %s: %s.so in %.1f ms (IR %.1f ms)\n", subject, subject,
                   r.compile_ns / 1e6, r.ir_ns / 1e6);
        } else {
            tl_strlist srcs = { 0 };
            char *srcroot = tl_join(outabs, "src");
            if (collect_sources(root, subject, &suites, &srcs)) { free(text); free(srcroot); goto done; }
            for (size_t i = 0; i < srcs.n; i++) {
                char *from = tl_join(root, srcs.v[i]), *to = tl_join(srcroot, srcs.v[i]);
                char hex[TL_SHA256_HEX];
                uint64_t bytes;
                int ce = tl_copy_hash(from, to, 0644, hex, &bytes);
                if (ce) tl_error(from, NULL, "cannot copy: %s", tl_strerror(ce));
                free(from);
                free(to);
                if (ce) { free(text); free(srcroot); tl_strlist_free(&srcs); goto done; }
                snprintf(rel, sizeof rel, "src/%s", srcs.v[i]);
                tl_strlist_push(&outfiles, rel);
            }
            tl_strlist_free(&srcs);
            snprintf(rel, sizeof rel, "src/%s", tuname);
            snprintf(tupath, sizeof tupath, "%s/%s", outabs, rel);
            if (write_text(tupath, text)) { free(text); free(srcroot); goto done; }
            free(text);
            tl_strlist_push(&outfiles, rel);
            o.root = srcroot;
            o.tu_path = tupath;
            int be_rc = be->build(&o, &r, err, sizeof err);
            free(srcroot);
            if (be_rc) {
                print_compiler(&st, root, outabs, err);
                tl_error(tupath, NULL, "jit compile check of subject '%s' failed", subject);
                goto done;
            }
            cJSON_AddStringToObject(js, "tu", rel);
            cJSON_AddStringToObject(js, "root", "src");
            printf("tandem build: jit %s: compile check in %.1f ms\n", subject, r.compile_ns / 1e6);
        }
        cJSON_AddNumberToObject(js, "compileNs", (double)r.compile_ns);
    }

    /* the shell both players run in */
    {
        char *to = tl_join(outabs, "tandem-player");
        char hex[TL_SHA256_HEX];
        uint64_t bytes;
        int ce = tl_copy_hash(shell, to, 0755, hex, &bytes);
        free(to);
        if (ce) { tl_error(shell, NULL, "cannot copy the shell: %s", tl_strerror(ce)); goto done; }
        tl_strlist_push(&outfiles, "tandem-player");
    }
    char name[64], path[PATH_MAX];
    snprintf(name, sizeof name, "build-id-%s", be->name);
    snprintf(path, sizeof path, "%s/%s", outabs, name);
    char line[80];
    snprintf(line, sizeof line, "%s\n", build_id);
    if (write_text(path, line)) goto done;
    tl_strlist_push(&outfiles, name);
    snprintf(name, sizeof name, "player-%s.json", be->name);
    snprintf(path, sizeof path, "%s/%s", outabs, name);
    char *dtext = cJSON_Print(desc);
    int we = write_text(path, dtext);
    free(dtext);
    if (we) goto done;
    tl_strlist_push(&outfiles, name);

    if (staged) {
        char mid[65];
        tl_strlist_sort(&outfiles);
        size_t w = 0;   /* sources shared by several subjects are listed once */
        for (size_t i = 0; i < outfiles.n; i++) {
            if (w && !strcmp(outfiles.v[w - 1], outfiles.v[i])) { free(outfiles.v[i]); continue; }
            outfiles.v[w++] = outfiles.v[i];
        }
        outfiles.n = w;
        if (tl_manifest_write(outabs, be->name, root, be->identity(), flags,
                              (const char *const *)outfiles.v, outfiles.n, mid))
            goto done;
        if (strcmp(mid, build_id)) {
            tl_error(outabs, "buildId", "manifest build id %s differs from %s", mid, build_id);
            goto done;
        }
        printf("tandem build: wrote %s/binary-manifest-%s.json\n", outabs, be->name);
    }
    printf("tandem build: %s player in %s, build id %s\n", be->name, outabs, build_id);
    rc = 0;
done:
    tl_staging_free(&st);
    cJSON_Delete(desc);
    tl_strlist_free(&subjects);
    tl_strlist_free(&suites);
    tl_strlist_free(&outfiles);
    free(root);
    free(outabs);
    return rc;
}
