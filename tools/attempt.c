/*
 * attempt.c - `tandem attempt`: the whole measured attempt (SUITES.md "The attempt").
 *
 *   <attempt>/quiet-pregate.json   other processes' CPU over a few seconds before anything runs
 *            staging/              `tandem stage` (staging.json)
 *            players/<backend>/    `tandem build` (or reused from --players-from, reuse rule)
 *            compile-check.json    both backends build (or reuse) + every subject loads
 *                                  (AOT dlopen, JIT libtcc compile) in the player shell
 *            runs/pNN-<suite>-<backend>-<rR|default>.json   one report per process
 *            runs/observations/pNN-....json                 arguments, pid, times, exit,
 *                                  binary hashes before/after, noise status, tries
 *            runs/failed-runs/     reports/outputs of failed tries (kept)
 *            runs/logs/            stdout/stderr of every try
 *            gate/                 gate.md, gate-summary.json, gate-chart.svg, gate-config.json
 *            attempt-manifest.json rewritten after every process
 *            attempt.log           every step
 *            files.sha256          every attempt file (sha256sum format)
 *            runs.zip              the runs archive (`tandem pack`)
 * Helpers in tools/attempt/ (att.h).
 */
#include "attempt/att.h"
#include "bench_icount.h"
#include "gate/gate.h"

#include "tl_err.h"
#include "tl_fs.h"
#include "tl_hash.h"
#include "tl_json.h"
#include "tl_manifest.h"
#include "tl_opt.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifndef TANDEM_BINARY_DIR
#define TANDEM_BINARY_DIR "build"
#endif

#define MAXP 256
#define MAXS 8

static const char *const gated_suites[] = { "primary", "builderlifecycle", "throughput" };

typedef struct aproc {
    int idx, round;               /* round 0 = report-only processes */
    char suite[32], backend[8], retention[16];
    char name[128];               /* pNN-suite-backend-rR */
    char status[32];              /* pending ok failed infra-failed */
    int tries;
    double seconds;
    char outcome[160];
} aproc;

typedef struct att {
    char dir[PATH_MAX], self[PATH_MAX];
    FILE *log;
    uint64_t t0;
    cJSON *man;
    aproc p[MAXP];
    int np;
    char players[2][PATH_MAX];    /* per backend */
    const char *backends[2];
    int nb;
    char *subjects[MAXS];
    int ns;
    int quick, samples, warmup, cpu;
    double timeout, start_deadline;
    int fault_kind, fault_proc;   /* tests only */
    /* the options (attempt_options) */
    const char *label, *out, *players_from, *report_only, *from_git;
    int rounds, require_quiet, instructions;
    char *instr_dir;              /* the instruction arm's summaries, when it ran */
} att;

static void alog(att *a, int to_stderr, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void alog(att *a, int to_stderr, const char *fmt, ...)
{
    char b[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b, sizeof b, fmt, ap);
    va_end(ap);
    double el = (double)(att_now_ns() - a->t0) / 1e9;
    if (a->log) { fprintf(a->log, "[%7.1fs] %s\n", el, b); fflush(a->log); }
    if (to_stderr) fprintf(stderr, "attempt [%5.0fs] %s\n", el, b);
}

static const tl_opt attempt_opts[] = {
    { "label", 0, TL_OPT_STR, "L", 0, 0, "attempt name (default: attempt); the folder is\n"
      TANDEM_BINARY_DIR "/attempts/<label>[-N], never overwritten" },
    { "out", 0, TL_OPT_PATH, "DIR", 0, 0, "attempt folder: a new one, or an existing real folder with no\n"
      "entry of any kind (not a symbolic link)" },
    { "subjects", 0, TL_OPT_STR, "a,b", 0, 0, "subjects (default tandem,fcontext,callback); the first is gated\n"
      "against the rest (callback, the lower bound, report-only)" },
    { "backends", 0, TL_OPT_STR, "aot,jit", 0, 0, "backends (default aot,jit)" },
    { "report-only", 0, TL_OPT_STR, "S,S", 0, 0, "report-only default-retention suites (default\n"
      "primary,builderlifecycle,whenany,buildercycle)" },
    { "players-from", 0, TL_OPT_PATH, "DIR", 0, 0, "reuse players/<backend>/ there when the reuse rule allows" },
    { "rounds", 0, TL_OPT_INT, "N", 1, 20, "rounds of gated processes (default 3; --quick: 1)" },
    { "quick", 0, TL_OPT_FLAG, NULL, 0, 0, "the suites' quick mode (small N, few samples): tests, smoke checks" },
    { "samples", 0, TL_OPT_INT, "N", 1, 1000000, "samples per process after 1 warm-up (default 8; --quick: 3)" },
    { "require-quiet", 0, TL_OPT_FLAG, NULL, 0, 0, "refuse when the pre-gate finds the host busy (default: flag,\n"
      "continue)" },
    { "timeout", 0, TL_OPT_DOUBLE, "SEC", 0.001, 86400, "per-process timeout (default 150; start deadline 60)" },
    { "from-git", 0, TL_OPT_STR, "REV", 0, 0, "stage revision REV (tandem stage --from-git) instead of the\n"
      "working tree" },
    { "instructions", 0, TL_OPT_FLAG, NULL, 0, 0, "after the processes, the instruction arm (tandem bench --meter\n"
      "instructions) for primary, builderlifecycle and throughput on each\n"
      "backend, every subject: instructions/<suite>-<backend>-*.json and the\n"
      "instruction table in gate.md beside the times (report-only)" },
    /* hidden, tests only: crash@N|hang@N, honoured with TANDEM_TEST_FAULTS=1 */
    { "test-fault", 0, TL_OPT_STR, "KIND@N", 0, 0, NULL },
    { NULL, 0, 0, NULL, 0, 0, NULL }
};

static const tl_optspec attempt_spec = {
    "tandem attempt", "[--label L] [--out DIR] [--subjects a,b] [--backends aot,jit] [--rounds N]\n"
    "[--quick] [--samples N] [--timeout SEC] [--players-from DIR] [--report-only S,S]\n"
    "[--require-quiet] [--from-git REV] [--instructions]",
    "The measured attempt: quiet pre-gate, stage, build or reuse both players (compile\n"
    "check), then interleaved player processes: N rounds (default 3), backend order\n"
    "flipping each round, suite order rotating (primary, builderlifecycle, throughput /\n"
    "builderlifecycle, throughput, primary / ...), then report-only default-retention\n"
    "processes (--report-only): 26 processes for two backends and 3 rounds. Each process\n"
    "is pinned to one CPU, has a start deadline and a timeout, an observation file, and one\n"
    "retry on an infrastructure failure (crash or hang without the player's own failure\n"
    "marker). Then the gate, files.sha256 and the runs archive.",
    attempt_opts,
    "Labels, subject and suite names: letters, digits, '.', '_', '-', not starting with '.'.\n"
    "Every child runs in its own process group; SIGINT or SIGTERM stops them all (SIGTERM,\n"
    "SIGKILL after 2 s), records \"aborted\" with the signal in attempt-manifest.json and exits 1.\n"
    "\n"
    "Exit: the gate's: 0 PASS, 3 FAIL, 1 INVALID or aborted, 2 usage.",
    0, 0
};

/* ---- small helpers ---------------------------------------------------------------- */

static char *path2(const att *a, const char *rel) { return tl_join(a->dir, rel); }

static int split(const char *s, char **out, int max)
{
    int n = 0;
    char *c = strdup(s), *save = NULL;
    for (char *t = strtok_r(c, ",", &save); t && n < max; t = strtok_r(NULL, ",", &save))
        if (*t) out[n++] = strdup(t);
    free(c);
    return n;
}

static void save_manifest(att *a)
{
    char *p = path2(a, "attempt-manifest.json");
    cJSON *procs = cJSON_GetObjectItemCaseSensitive(a->man, "processes");
    if (procs) cJSON_DeleteItemFromObjectCaseSensitive(a->man, "processes");
    procs = cJSON_AddArrayToObject(a->man, "processes");
    for (int i = 0; i < a->np; i++) {
        const aproc *q = &a->p[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "index", q->idx);
        cJSON_AddStringToObject(o, "name", q->name);
        cJSON_AddStringToObject(o, "suite", q->suite);
        cJSON_AddStringToObject(o, "backend", q->backend);
        cJSON_AddStringToObject(o, "retention", q->retention);
        if (q->round) cJSON_AddNumberToObject(o, "round", q->round);
        else cJSON_AddStringToObject(o, "round", "report-only");
        cJSON_AddStringToObject(o, "status", q->status);
        cJSON_AddNumberToObject(o, "tries", q->tries);
        cJSON_AddNumberToObject(o, "seconds", round(q->seconds * 1000) / 1000);
        if (q->outcome[0]) cJSON_AddStringToObject(o, "outcome", q->outcome);
        char rel[300];
        snprintf(rel, sizeof rel, "runs/%s.json", q->name);
        cJSON_AddStringToObject(o, "report", rel);
        snprintf(rel, sizeof rel, "runs/observations/%s.json", q->name);
        cJSON_AddStringToObject(o, "observation", rel);
        cJSON_AddItemToArray(procs, o);
    }
    cJSON_DeleteItemFromObjectCaseSensitive(a->man, "elapsedSeconds");
    cJSON_AddNumberToObject(a->man, "elapsedSeconds", round((double)(att_now_ns() - a->t0) / 1e7) / 100);
    tl_json_save(p, a->man);
    free(p);
}

static void man_set_str(att *a, const char *key, const char *v)
{
    cJSON_DeleteItemFromObjectCaseSensitive(a->man, key);
    cJSON_AddStringToObject(a->man, key, v);
    save_manifest(a);
}

/* Run `tandem <args>` (this executable) with output appended to attempt.log. */
static int run_tool(att *a, char *const *args)
{
    char line[4096] = "";
    size_t k = 0;
    for (int i = 0; args[i]; i++) k += (size_t)snprintf(line + k, sizeof line - k, " %s", args[i]);
    alog(a, 0, "run: tandem%s", line);
    char *argv[64];
    int n = 0;
    argv[n++] = a->self;
    for (int i = 0; args[i] && n < 62; i++) argv[n++] = args[i];
    argv[n] = NULL;
    char *lp = path2(a, "attempt.log");
    att_child c;
    int rc = att_run_child(argv, lp, lp, -1, 600, 1800, 0, &c);
    /* the child wrote the log through its own descriptor; our FILE* appends after it */
    free(lp);
    if (rc) return -1;
    if (a->log) fseek(a->log, 0, SEEK_END);
    return c.exited ? c.code : 128 + c.sig;
}

/* Run `tandem smoke` on each backend's players (reused as they are: the reuse rule holds,
 * they were just built or checked). Reports go to smoke/. Returns 1 when a case failed. */
static int attempt_smoke(att *a)
{
    int has_tandem = 0;
    for (int s = 0; s < a->ns; s++)
        has_tandem |= !strcmp(a->subjects[s], "tandem");
    if (!has_tandem) {
        alog(a, 1, "smoke skipped: the subjects do not include tandem");
        man_set_str(a, "smoke", "skipped");
        return 0;
    }
    man_set_str(a, "stage", "smoke");
    char *sd = path2(a, "staging"), *out = path2(a, "smoke");
    int bad = 0;
    for (int b = 0; b < a->nb && !bad; b++) {
        char parent[PATH_MAX];
        snprintf(parent, sizeof parent, "%s", a->players[b]);
        char *slash = strrchr(parent, '/');
        if (slash)
            *slash = 0;
        char *args[] = { "smoke", "--backend", (char *)a->backends[b], "--players-from", parent,
                         "--staging", sd, "--out", out, NULL };
        uint64_t t = att_now_ns();
        int r = run_tool(a, args);
        alog(a, 1, "smoke %s: %s (%.1f s; smoke/smoke-%s.json)", a->backends[b],
             r == 0 ? "42/42 cases passed" : tl_stop_signal ? "stopped (aborted)" : "FAILED, see attempt.log", (double)(att_now_ns() - t) / 1e9,
             a->backends[b]);
        bad = r != 0;
    }
    man_set_str(a, "smoke", bad ? "failed" : "passed");
    free(sd);
    free(out);
    return bad;
}

/* SHA-256 of the files a process runs ("path sha" lines hashed into one). */
static void binaries_hash(const att *a, int b, char out[TL_SHA256_HEX], cJSON *list)
{
    tl_strlist files = { 0 };
    tl_walk(a->players[b], NULL, TL_WALK_REFUSE_SYMLINKS, NULL, NULL, &files);
    tl_strlist_sort(&files);
    tl_sha256 h;
    tl_sha256_init(&h);
    for (size_t i = 0; i < files.n; i++) {
        const char *f = files.v[i];
        size_t l = strlen(f);
        int relevant = !strcmp(f, "tandem-player") || (l > 3 && !strcmp(f + l - 3, ".so")) ||
                       (!strncmp(f, "src/", 4) && l > 2 && (!strcmp(f + l - 2, ".c") || !strcmp(f + l - 2, ".h")));
        if (!relevant) continue;
        char *p = tl_join(a->players[b], f), hex[TL_SHA256_HEX];
        uint64_t bytes;
        if (tl_sha256_file(p, hex, &bytes)) snprintf(hex, sizeof hex, "unreadable");
        free(p);
        char line[PATH_MAX + 80];
        int n = snprintf(line, sizeof line, "%s  %s\n", hex, f);
        tl_sha256_update(&h, line, (size_t)n);
        if (list && (!strcmp(f, "tandem-player") || (l > 3 && !strcmp(f + l - 3, ".so")))) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "path", f);
            cJSON_AddStringToObject(o, "sha256", hex);
            cJSON_AddItemToArray(list, o);
        }
    }
    tl_sha256_final(&h, out);
    tl_strlist_free(&files);
}

/* argv of one player process (from player-<backend>.json). */
static int player_argv(const att *a, int b, const aproc *q, const char *report, char **argv, char *store, size_t slen)
{
    char *pj = NULL;
    char name[64];
    snprintf(name, sizeof name, "player-%s.json", a->backends[b]);
    pj = tl_join(a->players[b], name);
    cJSON *d;
    int bad = tl_json_load(pj, &d);
    free(pj);
    if (bad) return -1;
    int n = 0;
    size_t k = 0;
#define PUT(s) (argv[n++] = store + k, k += (size_t)snprintf(store + k, slen - k, "%s", (s)) + 1)
    char tmp[PATH_MAX];
    snprintf(tmp, sizeof tmp, "%s/tandem-player", a->players[b]);
    PUT(tmp);
    PUT("--backend");
    PUT(a->backends[b]);
    const cJSON *subs = cJSON_GetObjectItemCaseSensitive(d, "subjects");
    for (int s = 0; s < a->ns; s++) {
        const cJSON *e, *hit = NULL;
        cJSON_ArrayForEach(e, subs) {
            const cJSON *nm = cJSON_GetObjectItemCaseSensitive(e, "name");
            if (cJSON_IsString(nm) && !strcmp(nm->valuestring, a->subjects[s])) hit = e;
        }
        if (!hit) { cJSON_Delete(d); return -2; }
        const cJSON *mod = cJSON_GetObjectItemCaseSensitive(hit, !strcmp(a->backends[b], "aot") ? "module" : "tu");
        if (!cJSON_IsString(mod)) { cJSON_Delete(d); return -2; }
        PUT(!strcmp(a->backends[b], "aot") ? "--module" : "--tu");
        snprintf(tmp, sizeof tmp, "%s/%s", a->players[b], mod->valuestring);
        PUT(tmp);
    }
    if (!strcmp(a->backends[b], "jit")) {
        PUT("--root");
        snprintf(tmp, sizeof tmp, "%s/src", a->players[b]);
        PUT(tmp);
    }
    cJSON_Delete(d);
    PUT("--suite");
    PUT(q->suite);
    PUT("--retention");
    PUT(q->retention);
    PUT("--samples");
    snprintf(tmp, sizeof tmp, "%d", a->samples);
    PUT(tmp);
    PUT("--warmup");
    snprintf(tmp, sizeof tmp, "%d", a->warmup);
    PUT(tmp);
    if (a->quick) PUT("--quick");
    PUT("--out");
    PUT(report);
#undef PUT
    argv[n] = NULL;
    return n;
}

/* The player's last "TANDEM-PLAYER-RESULT:" line, or "" when none. */
static void marker(const char *out_path, char *m, size_t len)
{
    char *buf;
    size_t l;
    m[0] = 0;
    if (tl_read_all(out_path, &buf, &l)) return;
    const char *key = "TANDEM-PLAYER-RESULT:";
    char *p = buf, *last = NULL;
    while ((p = strstr(p, key))) { last = p; p += strlen(key); }
    if (last) {
        last += strlen(key);
        while (*last == ' ') last++;
        snprintf(m, len, "%.*s", (int)strcspn(last, "\n"), last);
    }
    free(buf);
}

static void move_to(const char *from, const char *to)
{
    if (!tl_is_file(from)) return;
    tl_mkdirs_parent(to);
    rename(from, to);
}

/* One process, with one retry on an infrastructure failure. 0 ok, 1 failed. */
static int run_process(att *a, aproc *q, int total)
{
    int b = !strcmp(q->backend, a->backends[0]) ? 0 : 1;
    char rel[256], *report, *obs_path, *outp, *errp;
    snprintf(rel, sizeof rel, "runs/%s.json", q->name);
    report = path2(a, rel);
    snprintf(rel, sizeof rel, "runs/observations/%s.json", q->name);
    obs_path = path2(a, rel);
    tl_mkdirs_parent(obs_path);
    cJSON *obs = cJSON_CreateObject();
    cJSON_AddStringToObject(obs, "process", q->name);
    cJSON_AddNumberToObject(obs, "index", q->idx);
    cJSON_AddStringToObject(obs, "suite", q->suite);
    cJSON_AddStringToObject(obs, "backend", q->backend);
    cJSON_AddStringToObject(obs, "retention", q->retention);
    cJSON *tries = cJSON_AddArrayToObject(obs, "tries");
    int rc = 1;
    for (int t = 1; t <= 2; t++) {
        q->tries = t;
        snprintf(rel, sizeof rel, "runs/logs/%s.try%d.out", q->name, t);
        outp = path2(a, rel);
        snprintf(rel, sizeof rel, "runs/logs/%s.try%d.err", q->name, t);
        errp = path2(a, rel);
        tl_mkdirs_parent(outp);
        char *argv[64], store[16384];
        int n = player_argv(a, b, q, report, argv, store, sizeof store);
        if (n < 0) {
            alog(a, 1, "%s: cannot form the player command (player-%s.json lacks a subject?)", q->name, q->backend);
            snprintf(q->outcome, sizeof q->outcome, "no player command");
            free(outp);
            free(errp);
            break;
        }
        char before[TL_SHA256_HEX], after[TL_SHA256_HEX];
        cJSON *tr = cJSON_CreateObject();
        cJSON_AddItemToArray(tries, tr);
        cJSON *args = cJSON_AddArrayToObject(tr, "arguments");
        for (int i = 0; i < n; i++) cJSON_AddItemToArray(args, cJSON_CreateString(argv[i]));
        cJSON *bins = cJSON_AddArrayToObject(tr, "binaries");
        binaries_hash(a, b, before, bins);
        int fault = (a->fault_proc == q->idx && t == 1) ? a->fault_kind : 0;
        time_t wall0 = time(NULL);
        att_child c;
        uint64_t st = att_now_ns();
        att_run_child(argv, outp, errp, a->cpu, a->start_deadline, a->timeout, fault, &c);
        if (c.aborted) snprintf(after, sizeof after, "not-checked-aborted"); /* hashing stops on the signal too */
        else binaries_hash(a, b, after, NULL);
        char m[128];
        marker(outp, m, sizeof m);
        int own_failure = !strncmp(m, "fail", 4) || !strncmp(m, "error", 5);
        int ok = !c.aborted && c.exited && c.code == 0 && !strcmp(m, "pass") && tl_is_file(report);
        int infra = !ok && !own_failure && !c.aborted;
        const char *kind = ok ? "ok" : c.aborted ? "aborted" : own_failure ? "player-failure" : c.killed_start ? "start-deadline"
                           : c.killed_timeout ? "hang-killed" : c.signaled ? "crash" : "infrastructure";
        int same_bins = !strcmp(before, after);
        if (!same_bins && !c.aborted) { ok = 0; infra = 0; kind = "binary-changed"; }
        char wall[32];
        strftime(wall, sizeof wall, "%Y-%m-%dT%H:%M:%SZ", gmtime(&wall0));
        cJSON_AddNumberToObject(tr, "try", t);
        cJSON_AddNumberToObject(tr, "pid", c.pid);
        cJSON_AddStringToObject(tr, "started", wall);
        cJSON_AddNumberToObject(tr, "startOffsetSeconds", round((double)(st - a->t0) / 1e6) / 1000);
        cJSON_AddNumberToObject(tr, "seconds", round(c.seconds * 1000) / 1000);
        if (c.exited) cJSON_AddNumberToObject(tr, "exitCode", c.code);
        else cJSON_AddNullToObject(tr, "exitCode");
        if (c.signaled) cJSON_AddNumberToObject(tr, "signal", c.sig);
        cJSON_AddBoolToObject(tr, "killedAtStartDeadline", c.killed_start);
        cJSON_AddBoolToObject(tr, "killedAtTimeout", c.killed_timeout);
        cJSON_AddStringToObject(tr, "marker", m);
        cJSON_AddStringToObject(tr, "outcome", kind);
        cJSON_AddNumberToObject(tr, "cpu", a->cpu);
        cJSON_AddStringToObject(tr, "binariesBefore", before);
        cJSON_AddStringToObject(tr, "binariesAfter", after);
        cJSON_AddBoolToObject(tr, "binariesUnchanged", same_bins);
        if (fault) cJSON_AddStringToObject(tr, "injectedFault", fault == 1 ? "crash" : "hang");
        /* noise: other processes' CPU during the run */
        const char *noise = c.other_cpu > 25.0 ? "busy" : "quiet";
        cJSON *nz = cJSON_AddObjectToObject(tr, "noise");
        cJSON_AddStringToObject(nz, "status", noise);
        cJSON_AddNumberToObject(nz, "otherCpuPercent", round(c.other_cpu * 10) / 10);
        cJSON *top = cJSON_AddArrayToObject(nz, "busiest");
        for (int k = 0; k < 3; k++)
            if (c.top[k][0]) cJSON_AddItemToArray(top, cJSON_CreateString(c.top[k]));
        snprintf(q->outcome, sizeof q->outcome, "%s%s%s (exit %d%s)", kind, m[0] ? ", marker " : "", m,
                 c.exited ? c.code : -1, c.signaled ? ", signal" : "");
        q->seconds += c.seconds;
        alog(a, 0, "%s try %d: %s in %.2f s, other CPU %.1f%%", q->name, t, q->outcome, c.seconds, c.other_cpu);
        if (ok) {
            cJSON_DeleteItemFromObjectCaseSensitive(obs, "noise");
            cJSON_AddItemToObject(obs, "noise", cJSON_Duplicate(nz, 1));
            rc = 0;
            free(outp);
            free(errp);
            break;
        }
        /* keep the failed try's files under failed-runs/ */
        char dst[PATH_MAX];
        snprintf(rel, sizeof rel, "runs/failed-runs/%s.try%d.json", q->name, t);
        char *d = path2(a, rel);
        move_to(report, d);
        free(d);
        snprintf(dst, sizeof dst, "runs/failed-runs/%s.try%d.out", q->name, t);
        d = path2(a, dst);
        if (tl_is_file(outp)) { char *buf; size_t l; if (!tl_read_all(outp, &buf, &l)) { tl_mkdirs_parent(d); tl_write_atomic(d, buf, l, 0644); free(buf); } }
        free(d);
        free(outp);
        free(errp);
        alog(a, 1, "process %d/%d %s: try %d %s%s", q->idx, total, q->name, t, q->outcome,
             infra && t == 1 ? ": infrastructure failure, retrying once" : "");
        if (!infra) break;
    }
    strcpy(q->status, rc == 0 ? (q->tries > 1 ? "ok-after-retry" : "ok") : tl_stop_signal ? "aborted" : "failed");
    cJSON_AddStringToObject(obs, "status", q->status);
    if (!cJSON_GetObjectItemCaseSensitive(obs, "noise")) {
        cJSON *nz = cJSON_AddObjectToObject(obs, "noise");
        cJSON_AddStringToObject(nz, "status", "failed");
    }
    tl_json_save(obs_path, obs);
    cJSON_Delete(obs);
    free(report);
    free(obs_path);
    return rc;
}

/* files.sha256 of the whole attempt folder (sha256sum format, sorted by path). */
static int write_sums(att *a)
{
    tl_strlist files = { 0 };
    static const char *const skip[] = { "files.sha256", NULL };
    if (tl_walk(a->dir, NULL, TL_WALK_REFUSE_SYMLINKS, NULL, skip, &files)) return 1;
    tl_strlist_sort(&files);
    char **full = calloc(files.n + 1, sizeof *full);
    tl_hash_result *res = calloc(files.n + 1, sizeof *res);
    for (size_t i = 0; i < files.n; i++) full[i] = tl_join(a->dir, files.v[i]);
    tl_hash_files((const char *const *)full, files.n, res, 0);
    size_t cap = 4096, len = 0;
    char *s = malloc(cap);
    int bad = 0;
    for (size_t i = 0; i < files.n; i++) {
        if (res[i].err) bad = 1;
        size_t need = strlen(files.v[i]) + 80;
        if (len + need >= cap) { cap = (len + need) * 2; s = realloc(s, cap); }
        len += (size_t)sprintf(s + len, "%s  %s\n", res[i].hex, files.v[i]);
        free(full[i]);
    }
    char *p = path2(a, "files.sha256");
    if (!bad) bad = tl_write_atomic(p, s, len, 0644) != 0;
    free(p);
    free(s);
    free(full);
    free(res);
    tl_strlist_free(&files);
    return bad;
}

/* The attempt folder: --out (a real folder with no entry of any kind, or a new one), else
 * build/attempts/<label>[-N] (a new folder). The last component is created with mkdir, so
 * a folder, file or link that appears meanwhile is never written into. */
static int pick_dir(att *a, const char *out, const char *label)
{
    struct stat st;
    if (out) {
        snprintf(a->dir, sizeof a->dir, "%s", out);
        if (lstat(a->dir, &st) == 0) {
            char why[PATH_MAX + 128];
            if (att_out_empty(a->dir, why, sizeof why)) {
                tl_error(a->dir, "--out", "%s", why);
                return 1;
            }
        } else {
            int e = tl_mkdirs_parent(a->dir);
            if (e || (mkdir(a->dir, 0755) && errno != EEXIST)) {
                tl_error(a->dir, "--out", "cannot create: %s", tl_strerror(e ? e : errno));
                return 1;
            }
            char why[PATH_MAX + 128];
            if (att_out_empty(a->dir, why, sizeof why)) { /* created meanwhile by someone else */
                tl_error(a->dir, "--out", "%s", why);
                return 1;
            }
        }
    } else {
        const char *l = label ? label : "attempt";
        char base[PATH_MAX];
        snprintf(base, sizeof base, "%s/attempts/%s", TANDEM_BINARY_DIR, l);
        snprintf(a->dir, sizeof a->dir, "%s", base);
        int e = tl_mkdirs_parent(a->dir);
        if (e) { tl_error(a->dir, "--label", "cannot create the parent folder: %s", tl_strerror(e)); return 1; }
        for (int k = 2; mkdir(a->dir, 0755) != 0; k++) {
            if (errno != EEXIST || k > 10000) { tl_error(a->dir, "--label", "cannot create: %s", tl_strerror(errno)); return 1; }
            snprintf(a->dir, sizeof a->dir, "%s-%d", base, k);
        }
    }
    char *abs = realpath(a->dir, NULL);
    if (!abs) { tl_error(a->dir, "--out", "cannot resolve: %s", tl_strerror(errno)); return 1; }
    snprintf(a->dir, sizeof a->dir, "%s", abs);
    free(abs);
    return 0;
}

static int quiet_pregate(att *a, double secs, int require)
{
    att_cpu_snap s0, s1;
    att_cpu_take(&s0, 0);
    struct timespec ts = { (time_t)secs, (long)((secs - (time_t)secs) * 1e9) };
    nanosleep(&ts, NULL);
    att_cpu_take(&s1, 0);
    char top[5][96];
    double cpu = att_cpu_between(&s0, &s1, top, 5);
    att_cpu_free(&s0);
    att_cpu_free(&s1);
    const double limit = 25.0;
    const char *status = cpu > limit ? "busy" : "quiet";
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "schemaVersion", 1);
    cJSON_AddStringToObject(o, "kind", "tandem-quiet-pregate");
    cJSON_AddStringToObject(o, "status", status);
    cJSON_AddNumberToObject(o, "otherCpuPercent", round(cpu * 10) / 10);
    cJSON_AddNumberToObject(o, "limitPercent", limit);
    cJSON_AddNumberToObject(o, "seconds", secs);
    cJSON_AddNumberToObject(o, "cpus", (double)sysconf(_SC_NPROCESSORS_ONLN));
    cJSON_AddStringToObject(o, "policy", require ? "refuse when busy" : "flag when busy, continue");
    cJSON *t = cJSON_AddArrayToObject(o, "busiest");
    for (int k = 0; k < 5; k++)
        if (top[k][0]) cJSON_AddItemToArray(t, cJSON_CreateString(top[k]));
    char *p = path2(a, "quiet-pregate.json");
    tl_json_save(p, o);
    free(p);
    cJSON_Delete(o);
    alog(a, 1, "quiet pre-gate: %s (other processes %.1f%% of one CPU over %.0f s; limit %.0f%%)", status, cpu, secs, limit);
    man_set_str(a, "quietPregate", status);
    if (cpu > limit && require) {
        alog(a, 1, "refusing: the host is busy and --require-quiet was given");
        return 1;
    }
    return 0;
}

/* A name from the arguments that becomes part of file names (issue 18: --report-only
 * '/../../x' wrote outside --out): allow-listed characters only. 1 when refused. */
static int bad_name(const char *opt, const char *v, size_t max)
{
    const char *why;
    if (att_name_ok(v, max, &why)) return 0;
    fprintf(stderr, "tandem attempt: %s: '%s' %s (allowed: 1 to %zu letters, digits, '.', '_', '-'; not starting with '.')\n",
            opt, v, why, max);
    return 1;
}

/* A comma-separated list of names: at most max, none empty, none repeated. 1 when refused. */
static int check_list(const char *opt, const char *v, int max)
{
    char *c = strdup(v), *save = NULL;
    char *seen[16];
    int n = 0, bad = 0;
    size_t len = strlen(c);
    if (!len || c[0] == ',' || c[len - 1] == ',' || strstr(c, ",,")) {
        fprintf(stderr, "tandem attempt: %s: '%s' has an empty name\n", opt, v);
        bad = 1;
    }
    for (char *t = strtok_r(c, ",", &save); t && !bad; t = strtok_r(NULL, ",", &save)) {
        if (bad_name(opt, t, 31)) { bad = 1; break; }
        for (int k = 0; k < n; k++)
            if (!strcmp(seen[k], t)) { fprintf(stderr, "tandem attempt: %s: '%s' is listed twice\n", opt, t); bad = 1; }
        if (n == max) { fprintf(stderr, "tandem attempt: %s: at most %d names\n", opt, max); bad = 1; }
        else seen[n++] = t;
    }
    free(c);
    return bad;
}

/* ---- the stages, in the order they run ------------------------------------------- */

/* Options: parse and validate everything before anything is created. 0 go on, else the
 * exit code (0 after --help, 2 usage, 1 this executable not found). */
static int attempt_options(att *a, int argc, char **argv)
{
    tl_optres o;
    int prc = tl_opt_parse(&attempt_spec, argc, argv, &o);
    if (prc) { tl_opt_free(&o); return prc == TL_OPT_HELP ? -1 : 2; }
    a->label = tl_opt_str(&o, "label", NULL);
    a->out = tl_opt_str(&o, "out", NULL);
    a->players_from = tl_opt_str(&o, "players-from", NULL);
    a->report_only = tl_opt_str(&o, "report-only", "primary,builderlifecycle,whenany,buildercycle");
    a->from_git = tl_opt_str(&o, "from-git", NULL);
    const char *subjects = tl_opt_str(&o, "subjects", "tandem,fcontext,callback");
    const char *backends = tl_opt_str(&o, "backends", "aot,jit");
    const char *fault = tl_opt_str(&o, "test-fault", NULL);
    a->quick = tl_opt_given(&o, "quick") > 0;
    a->rounds = (int)tl_opt_int(&o, "rounds", a->quick ? 1 : 3);
    a->samples = (int)tl_opt_int(&o, "samples", a->quick ? 3 : 8);
    a->require_quiet = tl_opt_given(&o, "require-quiet") > 0;
    a->instructions = tl_opt_given(&o, "instructions") > 0;
    a->timeout = tl_opt_double(&o, "timeout", 150);
    tl_opt_free(&o); /* the values point into argv */
    a->warmup = 1;
    a->start_deadline = a->timeout < 60 ? a->timeout : 60;
    if (a->label && bad_name("--label", a->label, 100)) return 2;
    if (check_list("--subjects", subjects, MAXS) || check_list("--backends", backends, 2) ||
        check_list("--report-only", a->report_only, 8))
        return 2;
    a->ns = split(subjects, a->subjects, MAXS);
    char *bl[2];
    a->nb = split(backends, bl, 2);
    for (int b = 0; b < a->nb; b++) {
        a->backends[b] = bl[b];
        if (strcmp(bl[b], "aot") && strcmp(bl[b], "jit")) { fprintf(stderr, "tandem attempt: --backends aot,jit\n"); return 2; }
    }
    if (a->ns < 2 || a->nb < 1) { fprintf(stderr, "tandem attempt: need two subjects and a backend\n"); return 2; }
    /* hidden, tests only: --test-fault crash@N|hang@N, honoured with TANDEM_TEST_FAULTS=1 */
    if (fault) {
        const char *env = getenv("TANDEM_TEST_FAULTS"), *at = strchr(fault, '@'), *why;
        long long n = 0;
        if (!env || strcmp(env, "1")) { fprintf(stderr, "tandem attempt: --test-fault is for tests (TANDEM_TEST_FAULTS=1)\n"); return 2; }
        a->fault_kind = !strncmp(fault, "crash@", 6) ? 1 : !strncmp(fault, "hang@", 5) ? 2 : 0;
        if (!a->fault_kind || !at || tl_opt_parse_int(at + 1, 1, MAXP, &n, &why)) {
            fprintf(stderr, "tandem attempt: --test-fault: crash@N|hang@N with N a process number, got '%s'\n", fault);
            return 2;
        }
        a->fault_proc = (int)n;
    }
    ssize_t sl = readlink("/proc/self/exe", a->self, sizeof a->self - 1);
    if (sl <= 0) { fprintf(stderr, "tandem attempt: cannot find this executable\n"); return 1; }
    a->self[sl] = 0;
    /* pin to the last CPU we may run on */
    cpu_set_t set;
    a->cpu = -1;
    if (!sched_getaffinity(0, sizeof set, &set))
        for (int c = CPU_SETSIZE - 1; c >= 0; c--)
            if (CPU_ISSET(c, &set)) { a->cpu = c; break; }
    return 0;
}

/* Containment, the attempt folder, its log and manifest. 0 ok, 1 refused (printed). */
static int attempt_open(att *a, int argc, char **argv)
{
    /* from here on: SIGINT/SIGTERM stop the children and abort; orphans come back to us */
    int ce = att_contain();
    if (ce) { fprintf(stderr, "tandem attempt: cannot become the child subreaper: %s\n", tl_strerror(ce)); return 1; }
    if (pick_dir(a, a->out, a->label)) return 1;
    char *lp = path2(a, "attempt.log");
    a->log = fopen(lp, "a");
    free(lp);
    a->man = cJSON_CreateObject();
    cJSON_AddNumberToObject(a->man, "schemaVersion", 1);
    cJSON_AddStringToObject(a->man, "kind", "tandem-attempt");
    cJSON_AddStringToObject(a->man, "label", a->label ? a->label : "attempt");
    cJSON_AddStringToObject(a->man, "folder", a->dir);
    cJSON *jargs = cJSON_AddArrayToObject(a->man, "arguments");
    for (int i = 0; i < argc; i++) cJSON_AddItemToArray(jargs, cJSON_CreateString(argv[i]));
    cJSON *js = cJSON_AddArrayToObject(a->man, "subjects");
    for (int s = 0; s < a->ns; s++) cJSON_AddItemToArray(js, cJSON_CreateString(a->subjects[s]));
    cJSON *jb = cJSON_AddArrayToObject(a->man, "backends");
    for (int b = 0; b < a->nb; b++) cJSON_AddItemToArray(jb, cJSON_CreateString(a->backends[b]));
    cJSON_AddNumberToObject(a->man, "rounds", a->rounds);
    cJSON_AddNumberToObject(a->man, "samples", a->samples);
    cJSON_AddNumberToObject(a->man, "warmup", a->warmup);
    cJSON_AddBoolToObject(a->man, "quick", a->quick);
    cJSON_AddNumberToObject(a->man, "pinnedCpu", a->cpu);
    cJSON_AddNumberToObject(a->man, "timeoutSeconds", a->timeout);
    cJSON_AddNumberToObject(a->man, "startDeadlineSeconds", a->start_deadline);
    cJSON_AddStringToObject(a->man, "stage", "pregate");
    alog(a, 1, "folder %s", a->dir);
    return 0;
}

/* 1. The quiet pre-gate. 0 go on, 1 stop (refused busy). */
static int stage_pregate(att *a)
{
    if (quiet_pregate(a, a->quick ? 1.0 : 3.0, a->require_quiet)) { man_set_str(a, "stage", "refused-busy"); return 1; }
    return 0;
}

/* 2. Stage the sources (`tandem stage`). 0 go on, 1 stop. */
static int stage_staging(att *a)
{
    man_set_str(a, "stage", "staging");
    char *st = path2(a, "staging");
    char *args[] = { "stage", "--out", st, a->from_git ? "--from-git" : NULL, (char *)a->from_git, NULL };
    int r = run_tool(a, args);
    free(st);
    if (tl_stop_signal) return 1;
    if (r) { alog(a, 1, "stage failed (exit %d); see attempt.log", r); man_set_str(a, "stage", "stage-failed"); return 1; }
    tl_staging sj;
    char *sd = path2(a, "staging");
    if (!tl_staging_load(sd, &sj)) {
        cJSON_AddStringToObject(a->man, "stagingHash", sj.staging_hash);
        if (sj.git_head) cJSON_AddStringToObject(a->man, "gitHead", sj.git_head);
        cJSON_AddBoolToObject(a->man, "dirty", sj.dirty);
        alog(a, 1, "staged %zu files, stagingHash %.16s...%s", sj.nfiles, sj.staging_hash, sj.dirty ? " (dirty tree)" : "");
        tl_staging_free(&sj);
    }
    free(sd);
    return 0;
}

/* Reuse backend b's players from --players-from when the reuse rule allows. 1 reused. */
static int players_reuse(att *a, int b, const char *sd, char *why, size_t wlen)
{
    if (!a->players_from) return 0;
    char cand[PATH_MAX];
    int reused = 0;
    snprintf(cand, sizeof cand, "%s/%s", a->players_from, a->backends[b]);
    if (!tl_is_dir(cand)) snprintf(cand, sizeof cand, "%s/players/%s", a->players_from, a->backends[b]);
    char *abs = tl_abspath(cand);
    if (tl_is_dir(abs) && tl_players_reusable(abs, sd, why, wlen)) {
        snprintf(a->players[b], sizeof a->players[b], "%s", abs);
        reused = 1;
    }
    alog(a, 1, "%s players from %s: %s (%s)", a->backends[b], abs, reused ? "reused" : "not reusable", why);
    free(abs);
    return reused;
}

/* Build backend b's players into players/<backend> (`tandem build`). 0 ok, 1 failed. */
static int players_build(att *a, int b, char *sd)
{
    char rel[64];
    snprintf(rel, sizeof rel, "players/%s", a->backends[b]);
    char *pd = path2(a, rel);
    snprintf(a->players[b], sizeof a->players[b], "%s", pd);
    char *args[40];
    int n = 0;
    args[n++] = "build";
    args[n++] = "--backend";
    args[n++] = (char *)a->backends[b];
    args[n++] = "--staging";
    args[n++] = sd;
    args[n++] = "--out";
    args[n++] = pd;
    for (int s = 0; s < a->ns && n < 36; s++) { args[n++] = "--subject"; args[n++] = a->subjects[s]; }
    args[n] = NULL;
    alog(a, 1, "building the %s player (compile check)", a->backends[b]);
    int r = run_tool(a, args);
    free(pd);
    if (r && !tl_stop_signal) alog(a, 1, "%s build failed (exit %d): compile check failed; see attempt.log", a->backends[b], r);
    return r != 0;
}

/* The load check: every subject loads (AOT dlopen, JIT libtcc compile) in the shell,
 * recorded in the compile-check entry e. 0 ok, 1 failed. */
static int players_load_check(att *a, int b, cJSON *e)
{
    char *pargv[64], store[16384];
    aproc probe = { 0 };
    snprintf(probe.suite, sizeof probe.suite, "primary");
    snprintf(probe.retention, sizeof probe.retention, "matched");
    int n = player_argv(a, b, &probe, "/dev/null", pargv, store, sizeof store);
    if (n < 0) { alog(a, 1, "%s player lacks a subject", a->backends[b]); return 1; }
    /* keep --backend and the modules; replace the rest with --subjects */
    int k = 0;
    while (k < n && strcmp(pargv[k], "--suite")) k++;
    pargv[k] = "--subjects";
    pargv[k + 1] = NULL;
    char lo[64], le[64];
    snprintf(lo, sizeof lo, "compile-check-%s.out", a->backends[b]);
    snprintf(le, sizeof le, "compile-check-%s.err", a->backends[b]);
    char *po = path2(a, lo), *pe = path2(a, le);
    att_child c;
    att_run_child(pargv, po, pe, -1, 120, 300, 0, &c);
    free(po);
    free(pe);
    int ok = c.exited && c.code == 0;
    cJSON_AddBoolToObject(e, "loads", ok);
    cJSON_AddNumberToObject(e, "loadSeconds", round(c.seconds * 1000) / 1000);
    alog(a, 1, "compile check %s: every subject %s (%.1f s)", a->backends[b], ok ? "loads" : "does NOT load", c.seconds);
    return !ok;
}

/* The manifest's entry for backend b's players (folder, reused, build id). */
static void players_record(att *a, int b, int reused, cJSON *jp)
{
    cJSON *pe = cJSON_CreateObject();
    cJSON_AddStringToObject(pe, "backend", a->backends[b]);
    cJSON_AddStringToObject(pe, "folder", a->players[b]);
    cJSON_AddBoolToObject(pe, "reused", reused);
    char bidp[PATH_MAX], *bid = NULL;
    size_t bl2;
    snprintf(bidp, sizeof bidp, "%s/build-id-%s", a->players[b], a->backends[b]);
    if (!tl_read_all(bidp, &bid, &bl2)) { bid[strcspn(bid, "\n")] = 0; cJSON_AddStringToObject(pe, "buildId", bid); free(bid); }
    cJSON_AddItemToArray(jp, pe);
}

/* 3. Build or reuse each backend's players; the compile check (every subject loads in the
 * shell): compile-check.json. 0 go on, 1 stop. */
static int stage_players(att *a)
{
    man_set_str(a, "stage", "players");
    cJSON *cc = cJSON_CreateObject();
    cJSON_AddNumberToObject(cc, "schemaVersion", 1);
    cJSON_AddStringToObject(cc, "kind", "tandem-compile-check");
    cJSON *ccb = cJSON_AddArrayToObject(cc, "backends");
    cJSON *jp = cJSON_AddArrayToObject(a->man, "players");
    char *sd = path2(a, "staging");
    int bad = 0;
    for (int b = 0; b < a->nb && !bad; b++) {
        cJSON *e = cJSON_CreateObject();
        cJSON_AddItemToArray(ccb, e);
        cJSON_AddStringToObject(e, "backend", a->backends[b]);
        char why[1024] = "";
        int reused = players_reuse(a, b, sd, why, sizeof why);
        uint64_t t = att_now_ns();
        if (!reused) bad = players_build(a, b, sd);
        cJSON_AddStringToObject(e, "players", a->players[b]);
        cJSON_AddBoolToObject(e, "reused", reused);
        if (why[0]) cJSON_AddStringToObject(e, "reuseRule", why);
        cJSON_AddNumberToObject(e, "buildSeconds", round((double)(att_now_ns() - t) / 1e6) / 1000);
        if (!bad) bad = players_load_check(a, b, e);
        players_record(a, b, reused, jp);
    }
    char *ccp = path2(a, "compile-check.json");
    cJSON_AddBoolToObject(cc, "passed", !bad);
    tl_json_save(ccp, cc);
    free(ccp);
    cJSON_Delete(cc);
    free(sd);
    if (tl_stop_signal) return 1;
    if (bad) { man_set_str(a, "stage", "compile-check-failed"); return 1; }
    return 0;
}

/* 4. Semantics before speed: the 42 smoke cases on each player; a runtime that fails them
 * is not measured. 0 go on, 1 stop. */
static int stage_smoke(att *a)
{
    if (attempt_smoke(a)) { if (!tl_stop_signal) man_set_str(a, "stage", "smoke-failed"); return 1; }
    return 0;
}

/* 5. The plan: rounds x backends (order flipping each round) x the gated suites (order
 * rotating), then the report-only default-retention processes. */
static void stage_plan(att *a)
{
    char *ro[8];
    int nro = split(a->report_only, ro, 8);
    for (int r = 0; r < a->rounds; r++)
        for (int bi = 0; bi < a->nb; bi++) {
            int b = (r % 2 == 0) ? bi : a->nb - 1 - bi;
            for (int s = 0; s < 3; s++) {
                aproc *q = &a->p[a->np];
                q->idx = a->np + 1;
                q->round = r + 1;
                snprintf(q->suite, sizeof q->suite, "%s", gated_suites[(s + r) % 3]);
                snprintf(q->backend, sizeof q->backend, "%s", a->backends[b]);
                snprintf(q->retention, sizeof q->retention, "matched");
                snprintf(q->name, sizeof q->name, "p%02d-%s-%s-r%d", q->idx, q->suite, q->backend, r + 1);
                strcpy(q->status, "pending");
                a->np++;
            }
        }
    for (int bi = 0; bi < a->nb; bi++)
        for (int s = 0; s < nro; s++) {
            aproc *q = &a->p[a->np];
            q->idx = a->np + 1;
            snprintf(q->suite, sizeof q->suite, "%s", ro[s]);
            snprintf(q->backend, sizeof q->backend, "%s", a->backends[bi]);
            snprintf(q->retention, sizeof q->retention, "default");
            snprintf(q->name, sizeof q->name, "p%02d-%s-%s-default", q->idx, q->suite, q->backend);
            strcpy(q->status, "pending");
            a->np++;
        }
    for (int s = 0; s < nro; s++) free(ro[s]);
}

/* 6. The processes, one after the other, each pinned and observed. 0 go on, 1 stopped. */
static int stage_processes(att *a)
{
    man_set_str(a, "stage", "processes");
    alog(a, 1, "%d processes: %d rounds x %d suites x %d backends + %d report-only; %d samples each, pinned to CPU %d",
         a->np, a->rounds, 3, a->nb, a->np - a->rounds * 3 * a->nb, a->samples, a->cpu);
    uint64_t ps = att_now_ns();
    int failed = 0;
    for (int i = 0; i < a->np; i++) {
        aproc *q = &a->p[i];
        if (run_process(a, q, a->np)) failed++;
        save_manifest(a);
        if (tl_stop_signal) return 1;
        double el = (double)(att_now_ns() - ps) / 1e9, per = el / (i + 1);
        fprintf(stderr, "attempt: process %d of %d %-40s %-16s elapsed %.0f s, about %.0f s left\n", i + 1, a->np,
                q->name, q->status, (double)(att_now_ns() - a->t0) / 1e9, per * (a->np - i - 1));
        alog(a, 0, "process %d of %d %s: %s", i + 1, a->np, q->name, q->status);
    }
    cJSON_AddNumberToObject(a->man, "failedProcesses", failed);
    return 0;
}

/* 7. The instruction arm (--instructions, report-only): one callgrind process per suite,
 * backend and subject. Sets a->instr_dir when every summary was written. */
static void stage_instructions(att *a)
{
    if (!a->instructions) return;
    man_set_str(a, "stage", "instructions");
    a->instr_dir = path2(a, "instructions");
    int ifail = 0;
    for (int b = 0; b < a->nb && !ifail; b++)
        for (int s = 0; s < 3 && !ifail; s++) {
            bench_icount_spec sp = { a->players[b], a->backends[b], gated_suites[s], a->dir, NULL,
                                     "1", "1", "matched", "off", "1200", NULL, a->quick };
            char outp[PATH_MAX];
            snprintf(outp, sizeof outp, "%s/%s-%s-instructions.json", a->instr_dir, gated_suites[s], a->backends[b]);
            sp.out = outp;
            ifail = bench_icount_run(&sp, a->subjects, a->ns) != 0;
            alog(a, 1, "instructions %s %s: %s", gated_suites[s], a->backends[b], ifail ? "failed" : "done");
        }
    if (ifail) {
        alog(a, 1, "the instruction arm failed: gate.md has no instruction table");
        free(a->instr_dir);
        a->instr_dir = NULL;
    }
}

/* 8. The gate over runs/ with the configuration written to gate/gate-config.json.
 * Returns the verdict (GATE_PASS, GATE_FAIL, GATE_INVALID). */
static int stage_gate(att *a)
{
    man_set_str(a, "stage", "gate");
    int rc;
    char *gd = path2(a, "gate"), *rd = path2(a, "runs");
    tl_mkdirs(gd);
    gate_config cfg;
    gate_config_default(&cfg);
    snprintf(cfg.subject, sizeof cfg.subject, "%s", a->subjects[0]);
    cfg.nbackends = a->nb;
    for (int b = 0; b < a->nb; b++) snprintf(cfg.backends[b], sizeof cfg.backends[b], "%s", a->backends[b]);
    cfg.processes = a->rounds;
    cfg.expected_processes = a->np;
    for (int s = 0; s < cfg.nsuites; s++) cfg.suites[s].samples = a->samples;
    cJSON *cj = gate_config_json(&cfg);
    char *cp = tl_join(gd, "gate-config.json");
    tl_json_save(cp, cj);
    cJSON_Delete(cj);
    gate_opts go = { rd, gd, cp, 1, a->instr_dir };
    gate_config cfg2;
    gate_config_default(&cfg2);
    int crc = gate_config_load(cp, &cfg2); /* what the gate reads is what was written */
    rc = crc ? GATE_INVALID : gate_run(&go, &cfg2);
    free(cp);
    alog(a, 1, "gate: %s", gate_verdict_name(rc));
    man_set_str(a, "verdict", gate_verdict_name(rc));
    cJSON_DeleteItemFromObjectCaseSensitive(a->man, "gateReport");
    cJSON_AddStringToObject(a->man, "gateReport", "gate/gate.md");
    free(gd);
    free(rd);
    free(a->instr_dir);
    a->instr_dir = NULL;
    return rc;
}

/* 9. The runs archive (`tandem pack`: runs/files.sha256 + runs.zip). */
static void stage_archive(att *a)
{
    man_set_str(a, "stage", "archive");
    char *rd = path2(a, "runs"), *zp = path2(a, "runs.zip");
    char *args[] = { "pack", rd, "--out", zp, NULL };
    int r = run_tool(a, args);
    if (r) alog(a, 1, "pack failed (exit %d)", r);
    free(rd);
    free(zp);
}

/* 10. Done: the manifest's last state, then files.sha256 of the whole folder (nothing is
 * written after it). */
static void stage_done(att *a, int verdict)
{
    man_set_str(a, "stage", "done");
    cJSON_AddStringToObject(a->man, "archive", "runs.zip");
    save_manifest(a);
    double el = (double)(att_now_ns() - a->t0) / 1e9;
    alog(a, 0, "done in %.1f s: %s; writing files.sha256 (last step)", el, gate_verdict_name(verdict));
    if (a->log) { fclose(a->log); a->log = NULL; }
    if (write_sums(a)) fprintf(stderr, "attempt: files.sha256 could not be written\n");
    printf("attempt: %s in %.0f s; report %s/gate/gate.md\n", gate_verdict_name(verdict), el, a->dir);
}

/* Stopped before the end: a signal (recorded as "aborted" with the stage it stopped) or a
 * stage that refused to go on (its stage name says which). Exit 1. */
static int attempt_stopped(att *a)
{
    if (tl_stop_signal) {
        /* stopped by a signal: every child group was killed and waited for (att_run_child) */
        char sb[32];
        const char *sn = att_signal_name((int)tl_stop_signal, sb, sizeof sb);
        const char *was = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(a->man, "stage"));
        cJSON *ab = cJSON_CreateObject();
        cJSON_AddStringToObject(ab, "stage", was ? was : "?");
        cJSON_AddNumberToObject(ab, "signal", (int)tl_stop_signal);
        cJSON_AddStringToObject(ab, "signalName", sn);
        cJSON_DeleteItemFromObjectCaseSensitive(a->man, "aborted");
        cJSON_AddItemToObject(a->man, "aborted", ab);
        alog(a, 1, "aborted by %s during stage %s: its children were stopped", sn, was ? was : "?");
        man_set_str(a, "stage", "aborted");
    }
    save_manifest(a);
    printf("attempt: aborted (%s); log %s/attempt.log\n",
           cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(a->man, "stage")), a->dir);
    return 1;
}

static void attempt_close(att *a)
{
    free(a->instr_dir);
    if (a->log) fclose(a->log);
    cJSON_Delete(a->man);
    for (int s = 0; s < a->ns; s++) free(a->subjects[s]);
    for (int b = 0; b < a->nb; b++) free((char *)a->backends[b]);
}

/* The attempt, stage by stage (SUITES.md "The attempt"). */
static int attempt_run(att *a)
{
    if (stage_pregate(a) || tl_stop_signal) return attempt_stopped(a);
    if (stage_staging(a) || tl_stop_signal) return attempt_stopped(a);
    if (stage_players(a) || tl_stop_signal) return attempt_stopped(a);
    if (stage_smoke(a) || tl_stop_signal) return attempt_stopped(a);
    stage_plan(a);
    if (stage_processes(a) || tl_stop_signal) return attempt_stopped(a);
    stage_instructions(a);
    if (tl_stop_signal) return attempt_stopped(a);
    int verdict = stage_gate(a);
    if (tl_stop_signal) return attempt_stopped(a);
    stage_archive(a);
    if (tl_stop_signal) return attempt_stopped(a);
    stage_done(a, verdict);
    return verdict;
}

int td_verb_attempt(int argc, char **argv)
{
    static att A;
    att *a = &A;
    memset(a, 0, sizeof *a);
    a->t0 = att_now_ns();
    int rc = attempt_options(a, argc, argv);
    if (rc == 0) rc = attempt_open(a, argc, argv) ? 1 : attempt_run(a);
    else if (rc < 0) rc = 0; /* --help */
    attempt_close(a);
    return rc;
}
