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
#include "stage/stage_project.h"

#include "tl_archive.h"
#include "tl_err.h"
#include "tl_fs.h"
#include "tl_hash.h"
#include "tl_home.h"
#include "tl_json.h"
#include "tl_manifest.h"
#include "tl_proc.h"

#include <ctype.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int td_verb_build(int argc, char **argv);

/* The runtime's places in the staged layout, and the tandem.json fields naming them. */
static const struct { const char *dest, *field; int folder, required; } bl_runtime[TD_BASELINE_MAX_PARTS] = {
    { "runtime/src", "runtime.sources", 1, 1 },
    { "runtime/include", "runtime.include", 1, 1 },
    { "runtime/port", "runtime.port", 1, 0 },
    { "runtime/contract.json", "runtime.contract", 0, 0 },
};
/* The harness taken from the current staging (the adapter is added by its own rule). */
static const char *const bl_harness[] = { "players/include/", "players/suites/", NULL };
#define BL_LINK_LIBS "link.libs"   /* generated from tandem.json (stage_project.h): always the current one */

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
    return repo ? repo : tl_home() ? strdup(tl_home()) : NULL;
}

/* `path` relative to the folder `root` (both resolved), into rel; 1 when it is not inside
 * it (or is the folder itself). */
static int bl_relative(const char *root, const char *path, char *rel, size_t len)
{
    char *r = realpath(root, NULL), *q = realpath(path, NULL);
    size_t n = r ? strlen(r) : 0;
    int bad = !r || !q || strncmp(q, r, n) || q[n] != '/' || !q[n + 1];
    if (!bad) snprintf(rel, len, "%s", q + n + 1);
    free(r);
    free(q);
    return bad;
}

int td_baseline_resolve(const char *repo, const tl_project *p, const char *rev, td_baseline *b)
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
    snprintf(b->repo, sizeof b->repo, "%s", repo);
    snprintf(b->project, sizeof b->project, "%s", p->file);
    char out[128] = "";
    const char *wt[] = { "git", "-C", repo, "rev-parse", "--is-inside-work-tree", NULL };
    if (tl_run_capture(wt, out, sizeof out, NULL) != 0 || strncmp(out, "true", 4)) {
        tl_error(repo, "--baseline", "not inside a git repository: a baseline revision is a commit of the repository "
                 "holding the project (%s)", p->file);
        return 1;
    }
    char spec[160];
    out[0] = 0;
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
    snprintf(b->subject, sizeof b->subject, "%s", p->gate_subject);
    snprintf(b->name, sizeof b->name, "%s@%.7s", p->gate_subject, out);
    /* the runtime's folders, at the places tandem.json gives them in the project's folder:
     * REV holds only what is inside it (an @tandem/ folder of another repository is not) */
    const char *paths[TD_BASELINE_MAX_PARTS] = { p->sources, p->include, p->port, p->contract };
    for (int i = 0; i < TD_BASELINE_MAX_PARTS; i++) {
        if (!paths[i]) continue;   /* no port or contract of its own: the current staging's */
        td_baseline_part *bp = &b->parts[b->nparts];
        if (bl_relative(p->root, paths[i], bp->rel, sizeof bp->rel)) {
            if (!bl_runtime[i].required) continue;
            tl_error(p->file, bl_runtime[i].field, "%s is not inside the project's folder %s: a baseline revision takes "
                     "the runtime from `git archive REV` of the repository holding the project, which has no such "
                     "folder (a baseline of Tandem's own runtime is measured from Tandem's repository)",
                     paths[i], p->root);
            return 1;
        }
        snprintf(bp->dest, sizeof bp->dest, "%s", bl_runtime[i].dest);
        bp->field = bl_runtime[i].field;
        b->nparts++;
    }
    const tl_project_subject *sj = tl_project_subject_find(p, p->gate_subject);
    if (!sj || bl_relative(p->root, sj->folder, b->adapter_rel, sizeof b->adapter_rel)) b->adapter_rel[0] = 0;
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

/* What bl_compose's phases share: REV's files, the staging's sources, the adapter's place. */
typedef struct bl_compose_state {
    tl_mem_file *got[TD_BASELINE_MAX_PARTS + 1];   /* REV's parts, then its adapter folder */
    size_t ngot[TD_BASELINE_MAX_PARTS + 1];
    bl_src *v;                                     /* the staging's sources, sorted */
    size_t nv;
    int revision;                                  /* the adapter is REV's, not the current one */
    char adapter_dest[128], link_dest[192];
    char *why;
    size_t wlen;
} bl_compose_state;

/* REV's runtime parts and, for the "revision" adapter, its subject folder into c->got.
 * The number of files read, or -1 refused (c->why says why). */
static long bl_read_rev(const td_baseline *b, bl_compose_state *c)
{
    size_t total = 0;
    for (int i = 0; i < b->nparts; i++) {
        const td_baseline_part *bp = &b->parts[i];
        int folder = strcmp(bp->dest, "runtime/contract.json") != 0;
        if (stage_git_read_as(b->repo, b->commit, bp->rel, bp->dest, &c->got[i], &c->ngot[i]) || !c->ngot[i]) {
            snprintf(c->why, c->wlen, "revision %s has no %s%s (%s in %s) to build", b->rev, bp->rel,
                     folder ? "/" : "", bp->field, b->project);
            return -1;
        }
        total += c->ngot[i];
    }
    if (!c->revision)
        return (long)total;
    if (!b->adapter_rel[0]) {
        snprintf(c->why, c->wlen, "the folder of subject %s is not inside the project's folder: REV has no copy of it",
                 b->subject);
        return -1;
    }
    int n = b->nparts;
    if (stage_git_read_as(b->repo, b->commit, b->adapter_rel, c->adapter_dest, &c->got[n], &c->ngot[n]) ||
        !c->ngot[n]) {
        snprintf(c->why, c->wlen, "revision %s has no %s/ of its own (subject %s)", b->rev, b->adapter_rel,
                 b->subject);
        return -1;
    }
    return (long)(total + c->ngot[n]);
}

/* Whether the current staging's file p is staged with REV's: the harness, the runtime parts
 * REV does not hold (Tandem's port), the current adapter (its link.libs for REV's).
 * *adapter is set when p is the current adapter's. */
static int bl_take_current(const td_baseline *b, const bl_compose_state *c, const char *p, int *adapter)
{
    int take = 0;
    for (int k = 0; bl_harness[k]; k++) take |= has_prefix(p, bl_harness[k]);
    for (int k = 0; k < TD_BASELINE_MAX_PARTS; k++) {
        int from_rev = 0;
        for (int i2 = 0; i2 < b->nparts; i2++) from_rev |= !strcmp(b->parts[i2].dest, bl_runtime[k].dest);
        size_t dl = strlen(bl_runtime[k].dest);
        if (!from_rev && !strncmp(p, bl_runtime[k].dest, dl) && (p[dl] == '/' || !p[dl])) take = 1;
    }
    if (has_prefix(p, c->adapter_dest) && p[strlen(c->adapter_dest)] == '/') {
        if (!c->revision) take = *adapter = 1;
        else if (!strcmp(p, c->link_dest)) take = 1;
    }
    return take;
}

/* The staging's sources, sorted, into c->v: REV's files (but its own link.libs: tandem.json's
 * is current) and the current staging's that go with them. 0 ok, 1 refused (c->why). */
static int bl_sources(const td_baseline *b, bl_compose_state *c, const char *cur_dir, const tl_staging *cur,
                      size_t total)
{
    c->v = calloc(total + cur->nfiles + 1, sizeof *c->v);
    if (!c->v) { snprintf(c->why, c->wlen, "out of memory"); return 1; }
    for (int k = 0; k <= b->nparts; k++)
        for (size_t i = 0; i < c->ngot[k]; i++) {
            const tl_mem_file *m = &c->got[k][i];
            if (!strcmp(m->path, c->link_dest)) continue;   /* REV's own: tandem.json's is current */
            bl_src *e = &c->v[c->nv++];
            e->mem = m;
            e->rec.path = m->path;
            e->rec.bytes = m->len;
            e->exec = m->exec;
            tl_sha256_buf(m->data, m->len, e->rec.sha256);
        }
    int have_adapter = c->revision;
    for (size_t i = 0; i < cur->nfiles; i++) {
        if (!bl_take_current(b, c, cur->files[i].path, &have_adapter)) continue;
        c->v[c->nv].rec = cur->files[i];
        c->v[c->nv].from = cur->files[i].path;
        c->nv++;
    }
    if (!have_adapter) {
        snprintf(c->why, c->wlen, "the current staging %s has no %s/", cur_dir, c->adapter_dest);
        return 1;
    }
    qsort(c->v, c->nv, sizeof *c->v, bl_src_cmp);
    return 0;
}

/* The reuse rule: an existing staging with the same hash that still verifies stays. */
static int bl_staging_current(const td_baseline *b, const char *hash)
{
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
    return keep;
}

/* Source e written into the staging: REV's from memory, the current staging's copied and
 * checked against its hash. 0 ok, 1 failed (c->why). */
static int bl_write_one(const td_baseline *b, bl_compose_state *c, const char *cur_dir, const bl_src *e)
{
    char *to = tl_join(b->staging, e->rec.path);
    int bad = 0, err = tl_mkdirs_parent(to);
    if (!err && e->mem) {
        err = tl_write_atomic(to, e->mem->data, e->mem->len, e->exec ? 0755 : 0644);
    } else if (!err) {
        char *from = tl_join(cur_dir, e->from), hex[TL_SHA256_HEX];
        uint64_t bytes;
        err = tl_copy_hash(from, to, 0644, hex, &bytes);
        if (!err && strcmp(hex, e->rec.sha256)) {
            snprintf(c->why, c->wlen, "%s changed since it was staged (staging.json says %.12s..., the file %.12s...)",
                     from, e->rec.sha256, hex);
            bad = 1;
        }
        free(from);
    }
    if (!bad && err) {
        snprintf(c->why, c->wlen, "cannot write %s: %s", to, tl_strerror(err));
        bad = 1;
    }
    free(to);
    return bad;
}

/* The staging written afresh: its files and staging.json. 0 ok, 1 failed (c->why). */
static int bl_write_staging(td_baseline *b, bl_compose_state *c, const char *cur_dir, tl_file_rec *recs,
                            const char *hash)
{
    if (tl_is_dir(b->staging) && tl_rm_rf(b->staging)) {
        snprintf(c->why, c->wlen, "cannot empty %s", b->staging);
        return 1;
    }
    for (size_t i = 0; i < c->nv; i++)
        if (bl_write_one(b, c, cur_dir, &c->v[i])) return 1;
    tl_staging st = { 0 };
    char *paths[] = { "players/include", "players/suites", c->adapter_dest, "runtime" };
    st.source_root = b->repo;
    st.git_head = b->commit;
    st.git_rev = b->rev;
    st.dirty = 0;
    st.paths = paths;
    st.npaths = 4;
    st.files = recs;
    st.nfiles = c->nv;
    memcpy(st.staging_hash, hash, TL_SHA256_HEX);
    if (tl_staging_save(b->staging, &st)) {
        snprintf(c->why, c->wlen, "cannot write %s/staging.json", b->staging);
        return 1;
    }
    return 0;
}

/* Write b->staging for the adapter ("current" or "revision"). 0 ok; 1 refused with why. */
static int bl_compose(td_baseline *b, const char *cur_dir, const tl_staging *cur, const char *adapter, char *why,
                      size_t wlen)
{
    bl_compose_state c = { .revision = !strcmp(adapter, "revision"), .why = why, .wlen = wlen };
    int rc = 1;
    snprintf(c.adapter_dest, sizeof c.adapter_dest, "players/subjects/%s", b->subject);
    snprintf(c.link_dest, sizeof c.link_dest, "%s/" BL_LINK_LIBS, c.adapter_dest);
    long total = bl_read_rev(b, &c);
    if (total >= 0 && !bl_sources(b, &c, cur_dir, cur, (size_t)total)) {
        tl_file_rec *recs = calloc(c.nv + 1, sizeof *recs);
        for (size_t i = 0; i < c.nv; i++) recs[i] = c.v[i].rec;
        char hash[TL_SHA256_HEX];
        tl_staging_hash(recs, c.nv, hash);
        if (bl_staging_current(b, hash) || !bl_write_staging(b, &c, cur_dir, recs, hash)) {
            b->adapter = c.revision ? "revision" : "current";
            rc = 0;
        }
        free(recs);
    }
    free(c.v);
    for (int k = 0; k <= TD_BASELINE_MAX_PARTS; k++) tl_mem_files_free(c.got[k], c.ngot[k]);
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

/* The player folder lists the subject `name` and every suite. */
static int bl_lists(const char *dir, const char *backend, const char *name, const char *const *suites)
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
    for (int s = 0; hit && suites[s]; s++) {
        int found = 0;
        cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(d, "suites"))
            found |= cJSON_IsString(e) && !strcmp(e->valuestring, suites[s]);
        hit = found;
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
    if (aot) snprintf(b->module[i], sizeof b->module[i], "%s/%s.so", b->dir[i], b->subject);
    else snprintf(b->module[i], sizeof b->module[i], "%s/src/tandem-player-%s.c", b->dir[i], b->subject);
    b->reused[i] = tl_is_dir(b->dir[i]) && tl_players_reusable(b->dir[i], b->staging, reason, sizeof reason) &&
                   bl_lists(b->dir[i], be, b->name, suites);
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
        argv[n++] = b->subject;
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
            snprintf(why, wlen, "the %s build of subject %s (players/subjects/%s of %s, the runtime of %s) failed: %s "
                     "(whole output: %s)", be, b->subject, b->subject,
                     !strcmp(b->adapter, "current") ? "this tree" : b->rev, b->rev, first[0] ? first : "no message", log);
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

int td_baseline_prepare(td_baseline *b, const char *current_staging, const char *folder, const char *const *backends,
                        int nb, const char *const *suites)
{
    if (nb > TD_BASELINE_MAX_BACKENDS) nb = TD_BASELINE_MAX_BACKENDS;
    if (!suites || !suites[0]) {
        tl_error(folder, "--baseline", "no suite to build the baseline with");
        return 1;
    }
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
        if (bl_compose(b, cur_dir, &cur, order[k], why[k], sizeof why[k])) continue;
        int bad = 0;
        for (int i = 0; i < nb && !bad; i++) bad = bl_player(b, i, suites, why[k], sizeof why[k]);
        if (!bad) rc = 0;
    }
    if (rc) {
        fprintf(stderr, "tandem: --baseline %s: the runtime of %s cannot be built as a subject against this tree's "
                        "player ABI and subject interface (players/include/tandem_player.h, td_bench.h, "
                        "players/subjects/%s):\n  with the %s adapter: %s\n  with the %s adapter: %s\n",
                b->rev, b->name, b->subject, order[0], why[0], order[1], why[1]);
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
    cJSON_AddStringToObject(j, "repository", b->repo);
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
