/*
 * baseline.c - a baseline revision of the runtime as a second subject (see baseline.h).
 *
 * Why a separate player folder, loaded beside the current one in the SAME process: the
 * shell loads each subject on its own (AOT: dlopen with RTLD_LOCAL of a module built with
 * -fvisibility=hidden; JIT: one TCCState per TU, whose include root defaults to the TU's
 * own folder), so two runtimes with the same symbol names never see each other's
 * definitions or static state. A TU includes runtime/src of its root, so REV's runtime
 * needs its own root (its own staging and player folder); what differs between the two
 * modules is then only the subject's own code, and both are timed by the same shell and
 * suites in the same interleaved processes, sample by sample with alternating order.
 */
#include "baseline.h"

#include "tl_archive.h"
#include "tl_err.h"
#include "tl_fs.h"
#include "tl_hash.h"
#include "tl_json.h"
#include "tl_manifest.h"
#include "tl_proc.h"

#include <ctype.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef TANDEM_SOURCE_DIR
#define TANDEM_SOURCE_DIR "."
#endif

int td_verb_build(int argc, char **argv);

/* The bench suites: a baseline is measured, never smoked (the smoke cases may use API the
 * old runtime does not have, and the current runtime's smoke already ran). */
static const char *const bl_default_suites[] = { "primary", "builderlifecycle", "throughput", "whenany",
                                                 "buildercycle", NULL };
/* The harness taken from the current staging; the adapter is added by its own rule. */
static const char *const bl_harness[] = { "players/include/", "players/suites/", NULL };
#define BL_ADAPTER "players/subjects/tandem/"

char *td_baseline_repo(const char *staging)
{
    tl_staging st;
    char *repo = NULL;
    tl_err_capture(NULL, 0, 1);
    if (staging && !tl_staging_load(staging, &st)) {
        if (st.source_root && tl_is_dir(st.source_root)) repo = strdup(st.source_root);
        tl_staging_free(&st);
    }
    tl_err_capture(NULL, 0, 0);
    return repo ? repo : tl_abspath(TANDEM_SOURCE_DIR);
}

int td_baseline_resolve(const char *repo, const char *rev, td_baseline *b)
{
    memset(b, 0, sizeof *b);
    size_t n = strlen(rev);
    int bad = n == 0 || n >= sizeof b->rev || rev[0] == '-';
    for (size_t i = 0; i < n && !bad; i++) bad = isspace((unsigned char)rev[i]) || iscntrl((unsigned char)rev[i]);
    if (bad) {
        tl_error(rev, "--baseline", "not a revision name (1..127 bytes, no spaces, not starting with '-')");
        return 1;
    }
    snprintf(b->rev, sizeof b->rev, "%s", rev);
    char spec[160], out[128] = "";
    snprintf(spec, sizeof spec, "%s^{commit}", rev);
    const char *argv[] = { "git", "-C", repo, "rev-parse", "--verify", "-q", spec, NULL };
    if (tl_run_capture(argv, out, sizeof out, NULL) != 0) out[0] = 0;
    int ok = strlen(out) == 40;
    for (int i = 0; i < 40 && ok; i++) ok = isxdigit((unsigned char)out[i]) && !isupper((unsigned char)out[i]);
    if (!ok) {
        tl_error(repo, "--baseline", "revision '%s' is not a commit in this repository", rev);
        return 1;
    }
    snprintf(b->commit, sizeof b->commit, "%s", out);
    snprintf(b->name, sizeof b->name, "tandem@%.7s", out);
    return 0;
}

/* ---- the staging: REV's runtime + the current harness ---------------------------------- */

typedef struct bl_src {
    tl_file_rec rec;
    const tl_mem_file *mem;   /* from REV */
    const char *from;         /* else a path relative to the current staging */
    int exec;
} bl_src;

static int bl_src_cmp(const void *a, const void *b)
{
    return strcmp(((const bl_src *)a)->rec.path, ((const bl_src *)b)->rec.path);
}

static int has_prefix(const char *s, const char *p) { return !strncmp(s, p, strlen(p)); }

/* Write b->staging for the adapter ("current" or "revision"). 0 ok; 1 refused with why. */
static int bl_compose(td_baseline *b, const char *repo, const char *cur_dir, const tl_staging *cur, const char *adapter,
                      char *why, size_t wlen)
{
    tl_mem_file *rt = NULL, *ad = NULL;
    size_t nrt = 0, nad = 0;
    bl_src *v = NULL;
    size_t nv = 0;
    int rc = 1;
    const char *rtp[] = { "runtime" }, *adp[] = { "players/subjects/tandem" };
    char spec[96];
    snprintf(spec, sizeof spec, "%s:runtime", b->commit);
    const char *ex[] = { "git", "-C", repo, "cat-file", "-e", spec, NULL };
    if (tl_run_capture(ex, NULL, 0, NULL) != 0 || tl_git_archive_read(repo, b->commit, rtp, 1, &rt, &nrt) || !nrt) {
        snprintf(why, wlen, "revision %s has no runtime/ folder to build", b->rev);
        goto done;
    }
    if (!strcmp(adapter, "revision")) {
        snprintf(spec, sizeof spec, "%s:players/subjects/tandem", b->commit);
        if (tl_run_capture(ex, NULL, 0, NULL) != 0 || tl_git_archive_read(repo, b->commit, adp, 1, &ad, &nad) || !nad) {
            snprintf(why, wlen, "revision %s has no players/subjects/tandem/ of its own", b->rev);
            goto done;
        }
    }
    v = calloc(nrt + nad + cur->nfiles + 1, sizeof *v);
    for (size_t i = 0; i < nrt; i++, nv++) {
        v[nv].mem = &rt[i];
        v[nv].rec.path = rt[i].path;
        v[nv].rec.bytes = rt[i].len;
        v[nv].exec = rt[i].exec;
        tl_sha256_buf(rt[i].data, rt[i].len, v[nv].rec.sha256);
    }
    for (size_t i = 0; i < nad; i++, nv++) {
        v[nv].mem = &ad[i];
        v[nv].rec.path = ad[i].path;
        v[nv].rec.bytes = ad[i].len;
        v[nv].exec = ad[i].exec;
        tl_sha256_buf(ad[i].data, ad[i].len, v[nv].rec.sha256);
    }
    int have_adapter = nad > 0;
    for (size_t i = 0; i < cur->nfiles; i++) {
        const char *p = cur->files[i].path;
        int take = 0;
        for (int k = 0; bl_harness[k]; k++) take |= has_prefix(p, bl_harness[k]);
        if (!strcmp(adapter, "current") && has_prefix(p, BL_ADAPTER)) take = have_adapter = 1;
        if (!take) continue;
        v[nv].rec = cur->files[i];
        v[nv].from = p;
        nv++;
    }
    if (!have_adapter) {
        snprintf(why, wlen, "the current staging %s has no %s", cur_dir, BL_ADAPTER);
        goto done;
    }
    qsort(v, nv, sizeof *v, bl_src_cmp);
    tl_file_rec *recs = calloc(nv + 1, sizeof *recs);
    for (size_t i = 0; i < nv; i++) recs[i] = v[i].rec;
    char hash[TL_SHA256_HEX];
    tl_staging_hash(recs, nv, hash);

    /* the reuse rule: an existing staging with the same hash that still verifies stays */
    tl_staging old;
    memset(&old, 0, sizeof old);
    tl_report rep = { NULL, "staging", NULL, 0, 0 };
    char *sj = tl_join(b->staging, TL_STAGING_JSON);
    int keep = 0;
    tl_err_capture(NULL, 0, 1);
    if (tl_is_file(sj)) {
        keep = !tl_staging_verify(b->staging, &old, &rep) && !rep.count && !strcmp(old.staging_hash, hash);
        tl_staging_free(&old);
    }
    tl_err_capture(NULL, 0, 0);
    free(sj);
    if (!keep) {
        if (tl_is_dir(b->staging) && tl_rm_rf(b->staging)) {
            snprintf(why, wlen, "cannot empty %s", b->staging);
            free(recs);
            goto done;
        }
        for (size_t i = 0; i < nv; i++) {
            char *to = tl_join(b->staging, v[i].rec.path);
            int e = tl_mkdirs_parent(to);
            if (!e && v[i].mem) {
                e = tl_write_atomic(to, v[i].mem->data, v[i].mem->len, v[i].exec ? 0755 : 0644);
            } else if (!e) {
                char *from = tl_join(cur_dir, v[i].from), hex[TL_SHA256_HEX];
                uint64_t bytes;
                e = tl_copy_hash(from, to, 0644, hex, &bytes);
                if (!e && strcmp(hex, v[i].rec.sha256)) {
                    snprintf(why, wlen, "%s changed since it was staged (staging.json says %.12s..., the file %.12s...)",
                             from, v[i].rec.sha256, hex);
                    free(from);
                    free(to);
                    free(recs);
                    goto done;
                }
                free(from);
            }
            if (e) {
                snprintf(why, wlen, "cannot write %s: %s", to, tl_strerror(e));
                free(to);
                free(recs);
                goto done;
            }
            free(to);
        }
        tl_staging st = { 0 };
        char *paths[] = { "players/include", "players/suites", "players/subjects/tandem", "runtime" };
        st.source_root = (char *)repo;
        st.git_head = b->commit;
        st.git_rev = b->rev;
        st.dirty = 0;
        st.paths = paths;
        st.npaths = 4;
        st.files = recs;
        st.nfiles = nv;
        memcpy(st.staging_hash, hash, sizeof hash);
        if (tl_staging_save(b->staging, &st)) {
            snprintf(why, wlen, "cannot write %s/staging.json", b->staging);
            free(recs);
            goto done;
        }
    }
    free(recs);
    b->adapter = !strcmp(adapter, "current") ? "current" : "revision";
    rc = 0;
done:
    free(v);
    tl_mem_files_free(rt, nrt);
    tl_mem_files_free(ad, nad);
    return rc;
}

/* ---- build and load check, with the compiler's output kept ---------------------------- */

/* stderr (ours and the compilers' we start) to `log` while fn runs. */
static int bl_stderr_to(const char *log, int *saved)
{
    fflush(stdout);
    fflush(stderr);
    int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return -1;
    *saved = dup(2);
    dup2(fd, 2);
    close(fd);
    return 0;
}

static void bl_stderr_back(int saved)
{
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
}

/* The first line of the log that says "error" (else its last line), for the refusal. */
static void bl_first_error(const char *log, char *out, size_t len)
{
    char *buf = NULL, *last = NULL;
    size_t n;
    out[0] = 0;
    if (tl_read_all(log, &buf, &n)) return;
    for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
        if (strstr(line, "error") || strstr(line, "cannot load") || strstr(line, "ABI")) {
            snprintf(out, len, "%s", line);
            break;
        }
        if (*line) last = line;
    }
    if (!out[0] && last) snprintf(out, len, "%s", last);
    free(buf);
}

static int bl_lists(const char *dir, const char *backend, const char *name)
{
    char p[PATH_MAX + 32];
    cJSON *d = NULL;
    snprintf(p, sizeof p, "%s/player-%s.json", dir, backend);
    if (!tl_is_file(p) || tl_json_load(p, &d)) return 0;
    int hit = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(d, "subjects")) {
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(e, "name");
        hit |= cJSON_IsString(n) && !strcmp(n->valuestring, name);
    }
    cJSON_Delete(d);
    return hit;
}

/* Backend i: reuse or build, then load in the shell. 0 ok; 1 with why. */
static int bl_player(td_baseline *b, int i, const char *const *suites, char *why, size_t wlen)
{
    const char *be = b->backend[i];
    int aot = !strcmp(be, "aot");
    char log[PATH_MAX + 64], first[512], reason[600];
    snprintf(b->dir[i], sizeof b->dir[i], "%s/%s", b->folder, be);
    if (aot) snprintf(b->module[i], sizeof b->module[i], "%s/tandem.so", b->dir[i]);
    else snprintf(b->module[i], sizeof b->module[i], "%s/src/tandem-player-tandem.c", b->dir[i]);
    b->reused[i] = tl_is_dir(b->dir[i]) && tl_players_reusable(b->dir[i], b->staging, reason, sizeof reason) &&
                   bl_lists(b->dir[i], be, b->name);
    if (b->reused[i]) {
        printf("tandem: baseline %s %s: reusing %s\n", b->name, be, b->dir[i]);
    } else {
        if (tl_is_dir(b->dir[i]) && tl_rm_rf(b->dir[i])) {
            snprintf(why, wlen, "cannot empty %s", b->dir[i]);
            return 1;
        }
        char *argv[40];
        int n = 0;
        argv[n++] = "build";
        argv[n++] = "--backend";
        argv[n++] = (char *)be;
        argv[n++] = "--out";
        argv[n++] = b->dir[i];
        argv[n++] = "--staging";
        argv[n++] = b->staging;
        argv[n++] = "--subject";
        argv[n++] = "tandem";
        argv[n++] = "--label";
        argv[n++] = b->name;
        for (int s = 0; suites[s] && n < 36; s++) {
            argv[n++] = "--suite";
            argv[n++] = (char *)suites[s];
        }
        argv[n] = NULL;
        snprintf(log, sizeof log, "%s/build-%s-%s.log", b->folder, be, b->adapter);
        int saved, brc;
        if (bl_stderr_to(log, &saved)) {
            snprintf(why, wlen, "cannot write %s", log);
            return 1;
        }
        brc = td_verb_build(n, argv);
        bl_stderr_back(saved);
        if (brc) {
            bl_first_error(log, first, sizeof first);
            snprintf(why, wlen, "the %s build of subject tandem (%s of %s, runtime/ of %s) failed: %s (whole output: %s)",
                     be, BL_ADAPTER, !strcmp(b->adapter, "current") ? "this tree" : b->rev, b->rev,
                     first[0] ? first : "no message", log);
            return 1;
        }
    }
    /* the shell loads it (ABI version, entry table, libtcc compile and relocation) */
    char player[PATH_MAX + 32];
    snprintf(player, sizeof player, "%s/tandem-player", b->dir[i]);
    char *pargv[] = { player, "--backend", (char *)be, aot ? "--module" : "--tu", b->module[i], "--subjects", NULL };
    snprintf(log, sizeof log, "%s/load-%s.log", b->folder, be);
    int saved;
    if (bl_stderr_to(log, &saved)) {
        snprintf(why, wlen, "cannot write %s", log);
        return 1;
    }
    int devnull = open("/dev/null", O_WRONLY | O_CLOEXEC), out = dup(1);
    if (devnull >= 0) dup2(devnull, 1);
    int lrc = tl_run(pargv);
    fflush(stdout);
    dup2(out, 1);
    close(out);
    if (devnull >= 0) close(devnull);
    bl_stderr_back(saved);
    if (lrc) {
        bl_first_error(log, first, sizeof first);
        snprintf(why, wlen, "the %s player shell cannot load %s (runtime of %s): %s (whole output: %s)", be,
                 b->module[i], b->rev, first[0] ? first : "no message", log);
        return 1;
    }
    return 0;
}

int td_baseline_prepare(td_baseline *b, const char *repo, const char *current_staging, const char *folder,
                        const char *const *backends, int nb, const char *const *suites)
{
    if (!suites) suites = bl_default_suites;
    if (nb > TD_BASELINE_MAX_BACKENDS) nb = TD_BASELINE_MAX_BACKENDS;
    char *abs = tl_abspath(folder);
    snprintf(b->folder, sizeof b->folder, "%s", abs);
    free(abs);
    snprintf(b->staging, sizeof b->staging, "%s/staging", b->folder);
    b->nb = nb;
    for (int i = 0; i < nb; i++) snprintf(b->backend[i], sizeof b->backend[i], "%s", backends[i]);
    if (tl_mkdirs(b->folder)) {
        tl_error(b->folder, "--baseline", "cannot create the folder");
        return 1;
    }
    tl_staging cur;
    char *cur_dir = tl_abspath(current_staging);
    if (tl_staging_load(cur_dir, &cur)) {
        free(cur_dir);
        return 1;
    }
    snprintf(b->harness_hash, sizeof b->harness_hash, "%s", cur.staging_hash);
    /* The current adapter first (identical workload code on both sides); REV's own when the
     * current one does not build against REV's runtime (an API the adapter uses is newer).
     * The choice that worked last is tried first, so a reused baseline builds nothing. */
    const char *order[2] = { "current", "revision" };
    char *bj = tl_join(b->folder, "baseline.json");
    cJSON *prev = NULL;
    tl_err_capture(NULL, 0, 1);
    if (tl_is_file(bj) && !tl_json_load(bj, &prev)) {
        const cJSON *ad = cJSON_GetObjectItemCaseSensitive(prev, "adapter");
        const cJSON *cm = cJSON_GetObjectItemCaseSensitive(prev, "commit");
        if (cJSON_IsString(ad) && !strcmp(ad->valuestring, "revision") && cJSON_IsString(cm) &&
            !strcmp(cm->valuestring, b->commit)) {
            order[0] = "revision";
            order[1] = "current";
        }
    }
    cJSON_Delete(prev);
    tl_err_capture(NULL, 0, 0);
    char why[2][1400] = { "", "" };
    int rc = 1;
    for (int k = 0; k < 2 && rc; k++) {
        if (bl_compose(b, repo, cur_dir, &cur, order[k], why[k], sizeof why[k])) continue;
        int bad = 0;
        for (int i = 0; i < nb && !bad; i++) bad = bl_player(b, i, suites, why[k], sizeof why[k]);
        if (!bad) rc = 0;
    }
    if (rc) {
        fprintf(stderr, "tandem: --baseline %s: the runtime of %s cannot be built as a subject against this tree's "
                        "player ABI and subject interface (players/include/tandem_player.h, td_bench.h, "
                        "players/subjects/tandem):\n  with the %s adapter: %s\n  with the %s adapter: %s\n",
                b->rev, b->name, order[0], why[0], order[1], why[1]);
    } else {
        cJSON *j = td_baseline_json(b);
        if (tl_json_save(bj, j)) rc = 1;
        cJSON_Delete(j);
        printf("tandem: baseline %s (%s, %s adapter) ready: %s\n", b->name, b->commit, b->adapter, b->folder);
    }
    free(bj);
    free(cur_dir);
    tl_staging_free(&cur);
    return rc;
}

const char *td_baseline_module(const td_baseline *b, const char *backend)
{
    for (int i = 0; b && i < b->nb; i++)
        if (!strcmp(b->backend[i], backend)) return b->module[i];
    return NULL;
}

cJSON *td_baseline_json(const td_baseline *b)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "schemaVersion", 1);
    cJSON_AddStringToObject(j, "kind", "tandem-baseline");
    cJSON_AddStringToObject(j, "revision", b->rev);
    cJSON_AddStringToObject(j, "commit", b->commit);
    cJSON_AddStringToObject(j, "subject", b->name);
    cJSON_AddStringToObject(j, "adapter", b->adapter ? b->adapter : "");
    cJSON_AddStringToObject(j, "staging", b->staging);
    tl_staging st;
    tl_err_capture(NULL, 0, 1);
    if (!tl_staging_load(b->staging, &st)) {
        cJSON_AddStringToObject(j, "stagingHash", st.staging_hash);
        tl_staging_free(&st);
    }
    tl_err_capture(NULL, 0, 0);
    cJSON_AddStringToObject(j, "harnessStagingHash", b->harness_hash);
    cJSON *ps = cJSON_AddArrayToObject(j, "players");
    for (int i = 0; i < b->nb; i++) {
        cJSON *p = cJSON_CreateObject();
        cJSON_AddStringToObject(p, "backend", b->backend[i]);
        cJSON_AddStringToObject(p, "folder", b->dir[i]);
        cJSON_AddStringToObject(p, "module", b->module[i]);
        cJSON_AddBoolToObject(p, "reused", b->reused[i]);
        char bidp[PATH_MAX + 32], *bid = NULL;
        size_t bl;
        snprintf(bidp, sizeof bidp, "%s/build-id-%s", b->dir[i], b->backend[i]);
        if (!tl_read_all(bidp, &bid, &bl)) {
            bid[strcspn(bid, "\n")] = 0;
            cJSON_AddStringToObject(p, "buildId", bid);
            free(bid);
        }
        cJSON_AddItemToArray(ps, p);
    }
    return j;
}
