/*
 * attempt.c - `tandem attempt`: the whole measured attempt (SUITES.md "The attempt").
 *
 *   <attempt>/quiet-pregate.json   other processes' CPU over a few seconds before anything runs
 *            staging/              `tandem stage` (staging.json)
 *            players/<backend>/    `tandem build` of the measured suites, as the baseline's
 *                                  module (or reused from --players-from: reuse rule, same suites)
 *            smoke/<backend>/      `tandem smoke`: the smoke suite's own players, its reports
 *            compile-check.json    both backends build (or reuse) + every subject loads
 *                                  (AOT dlopen, JIT libtcc compile) in the player shell
 *            runs/pNN-<suite>-<backend>-<rR|default>.json   one report per process
 *            runs/pNN-<suite>-<backend>-sK.json             processes the sequential rule added (look K)
 *            runs/sequential/sequential.json                what it added, look by look (SEQUENTIAL.md)
 *            runs/observations/pNN-....json                 arguments, pid, times, exit,
 *                                  binary hashes before/after, noise status, tries
 *            runs/failed-runs/     reports/outputs of failed tries (kept)
 *            runs/logs/            stdout/stderr of every try
 *            gate/                 gate.md, gate-summary.json, gate-chart.svg, gate-config.json
 *            attempt-manifest.json rewritten after every process
 *            attempt.log           every step
 *            files.sha256          every attempt file (sha256sum format)
 *            runs.zip              the runs archive (`tandem pack`)
 * The stages are beside it in tools/attempt/ (att_run.h: att_prepare.c, att_measure.c,
 * att_finish.c; helpers in att.h); this file holds the options, the log and manifest
 * helpers, and the verb: a short sequence of the stages.
 */
#include "att.h"
#include "att_run.h"
#include "baseline/baseline.h"
#include "bench/bench_icount.h"
#include "gate/gate.h"

#include "tl_err.h"
#include "tl_fs.h"
#include "tl_hash.h"
#include "tl_home.h"
#include "tl_json.h"
#include "tl_manifest.h"
#include "tl_opt.h"
#include "tl_out.h"

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


void att_log(att *a, int to_stderr, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void att_log(att *a, int to_stderr, const char *fmt, ...)
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
    { "project", 0, TL_OPT_PATH, "DIR", 0, 0, "the project measured (its tandem.json: subjects, suites, gate,\n"
      "defaults; default: the nearest tandem.json from the current folder upward, else Tandem's)" },
    { "label", 0, TL_OPT_STR, "L", 0, 0, "attempt name (default: attempt); the folder is\n"
      "<project>/.tandem/attempts/<label>[-N] (Tandem's own in a\n"
      "build tree: <build>/attempts/...), never overwritten" },
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
      "instructions) for the gated suites (primary, builderlifecycle,\n"
      "throughput, cancellation) on each\n"
      "backend, every subject: instructions/<suite>-<backend>-*.json and the\n"
      "instruction table in gate.md beside the times (report-only)" },
    { "baseline", 0, TL_OPT_STR, "REV", 0, 0, "also measure the project's runtime at git revision REV (of the\n"
      "repository holding the project) as the subject <gate subject>@<7-hex>\n"
      "(this tree's harness, suites and shell; baseline/), in the same\n"
      "processes and, with --instructions, the instruction arm; gate.md and\n"
      "gate-summary.json add the baseline verdict (no regression, improved\n"
      "rows); REV unknown, a runtime folder outside the project's folder, or\n"
      "not buildable as a subject: exit 1" },
    { "layouts", 0, TL_OPT_INT, "K", 1, 8, "with --baseline: each side built in K layouts (default 4: a pad\n"
      "before each source from a seed per layout and side), gated round r\n"
      "in layout (r - 1) mod K; without --rounds, at least K rounds;\n"
      "with one round (--quick) the default build alone (SAMPLES.md)" },
    { "layout-seed", 0, TL_OPT_INT, "S", 0, 9007199254740991.0, "the attempt seed the layouts' seeds derive from\n"
      "(default: drawn, printed and in attempt.json): reproduces them" },
    { "sequential-budget", 0, TL_OPT_INT, "N", 0, MAXP, "processes the sequential rule may add for gated rows borderline\n"
      "after the planned ones (tools/gate/SEQUENTIAL.md; default: a third of\n"
      "the gated processes, at least two batches; 0: none)" },
    /* hidden, tests only: crash@N|hang@N, honoured with TANDEM_TEST_FAULTS=1 */
    { "quiet", 0, TL_OPT_FLAG, NULL, 0, 0, "nothing on stdout: errors on stderr, the exit code says the rest" },
    { "json", 0, TL_OPT_FLAG, NULL, 0, 0, "stdout: one line, the summary object (exit code, verdict,\nreports); what it prints otherwise goes to stderr" },
    { "test-fault", 0, TL_OPT_STR, "KIND@N", 0, 0, NULL },
    /* hidden, tests only: the gate's sequential.quickBand, honoured with TANDEM_TEST_FAULTS=1 */
    { "test-sequential-band", 0, TL_OPT_DOUBLE, "BAND", 0, 1000, NULL },
    { NULL, 0, 0, NULL, 0, 0, NULL }
};

static const tl_optspec attempt_spec = {
    "tandem attempt", "[--project DIR] [--label L] [--out DIR] [--subjects a,b] [--backends aot,jit] [--rounds N]\n"
    "[--quick] [--samples N] [--timeout SEC] [--players-from DIR] [--report-only S,S]\n"
    "[--require-quiet] [--from-git REV] [--instructions] [--baseline REV]",
    "The measured attempt: quiet pre-gate, stage, build or reuse both players (compile\n"
    "check), then interleaved player processes: N rounds (default 3), backend order\n"
    "flipping each round, suite order rotating (primary, builderlifecycle, throughput,\n"
    "cancellation / builderlifecycle, throughput, cancellation, primary / ...), then\n"
    "report-only default-retention processes (--report-only): 32 processes for two backends\n"
    "and 3 rounds. Each process is pinned to one CPU, has a start deadline and a timeout, an\n"
    "observation file, and one retry on an infrastructure failure (crash or hang without the\n"
    "player's own failure marker). Then, for gated rows borderline after them, more processes\n"
    "by the sequential rule (tools/gate/SEQUENTIAL.md, within --sequential-budget and 60 s),\n"
    "the gate, files.sha256 and the runs archive.",
    attempt_opts,
    "Labels, subject and suite names: letters, digits, '.', '_', '-', not starting with '.'.\n"
    "Every child runs in its own process group; SIGINT or SIGTERM stops them all (SIGTERM,\n"
    "SIGKILL after 2 s), records \"aborted\" with the signal in attempt-manifest.json and exits 1.\n"
    "\n"
    "Exit: the gate's: 0 PASS, 3 FAIL, 1 INVALID or aborted, 2 usage. With --baseline, a\n"
    "regression has its own exit: 4 (the peers PASS) or 5 (the peers FAIL); 0 or 3 then also\n"
    "say \"no regression\" (the verdict is in gate.md, gate-summary.json \"baseline\" and the\n"
    "last lines); a baseline that judged no row, one \"not judged\" (--instructions given and\n"
    "the instruction arm failed, no regression found: time alone cannot see a small change),\n"
    "or a REV that cannot be staged or built as a subject, exits 1.",
    0, 0
};

/* ---- small helpers ---------------------------------------------------------------- */

char *att_path(const att *a, const char *rel) { return tl_join(a->dir, rel); }

int att_split(const char *s, char **out, int max)
{
    int n = 0;
    char *c = strdup(s), *save = NULL;
    for (char *t = strtok_r(c, ",", &save); t && n < max; t = strtok_r(NULL, ",", &save))
        if (*t) out[n++] = strdup(t);
    free(c);
    return n;
}

void att_save_manifest(att *a)
{
    char *p = att_path(a, "attempt-manifest.json");
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

void att_manifest_set_str(att *a, const char *key, const char *v)
{
    cJSON_DeleteItemFromObjectCaseSensitive(a->man, key);
    cJSON_AddStringToObject(a->man, key, v);
    att_save_manifest(a);
}

/* Run `tandem <args>` (this executable) with output appended to attempt.log. */
int att_run_tool(att *a, char *const *args)
{
    char line[4096] = "";
    size_t k = 0;
    for (int i = 0; args[i]; i++) k += (size_t)snprintf(line + k, sizeof line - k, " %s", args[i]);
    att_log(a, 0, "run: tandem%s", line);
    char *argv[64];
    int n = 0;
    argv[n++] = a->self;
    for (int i = 0; args[i] && n < 62; i++) argv[n++] = args[i];
    argv[n] = NULL;
    char *lp = att_path(a, "attempt.log");
    att_child c;
    int rc = att_run_child(argv, lp, lp, -1, 600, 1800, 0, &c);
    /* the child wrote the log through its own descriptor; our FILE* appends after it */
    free(lp);
    if (rc) return -1;
    if (a->log) fseek(a->log, 0, SEEK_END);
    return c.exited ? c.code : 128 + c.sig;
}

/* SHA-256 of the files a process runs ("path sha" lines hashed into one). */
void att_binaries_hash(const att *a, int b, char out[TL_SHA256_HEX], cJSON *list)
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

/* attempts/latest -> the newest attempt folder (a CI script reads latest/gate/, not the
 * last line): a new link renamed over the old one, so a reader never finds none. */
static void latest_link(const char *dir)
{
    char link[PATH_MAX], tmp[PATH_MAX + 32];
    const char *base = strrchr(dir, '/');
    if (!base) return;
    snprintf(link, sizeof link, "%.*s/latest", (int)(base - dir), dir);
    snprintf(tmp, sizeof tmp, "%s.%d", link, (int)getpid());
    unlink(tmp);
    if (symlink(base + 1, tmp) == 0 && rename(tmp, link) != 0) unlink(tmp);
}

/* The attempt folder: --out (a real folder with no entry of any kind, or a new one), else
 * <project results>/attempts/<label>[-N] (a new folder, tl_home_work). The last component is created with mkdir, so
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
        char *work = tl_home_work(a->project, "attempts");   /* tl_home.h: where results go */
        snprintf(base, sizeof base, "%s/%s", work ? work : ".", l);
        free(work);
        snprintf(a->dir, sizeof a->dir, "%s", base);
        int e = tl_mkdirs_parent(a->dir);
        if (e) { tl_error(a->dir, "--label", "cannot create the parent folder: %s", tl_strerror(e)); return 1; }
        for (int k = 2; mkdir(a->dir, 0755) != 0; k++) {
            if (errno != EEXIST || k > 10000) { tl_error(a->dir, "--label", "cannot create: %s", tl_strerror(errno)); return 1; }
            snprintf(a->dir, sizeof a->dir, "%s-%d", base, k);
        }
        latest_link(a->dir);
    }
    char *abs = realpath(a->dir, NULL);
    if (!abs) { tl_error(a->dir, "--out", "cannot resolve: %s", tl_strerror(errno)); return 1; }
    snprintf(a->dir, sizeof a->dir, "%s", abs);
    free(abs);
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
static int out_quiet, out_json;   /* --quiet, --json (tl_out.h) */

static int attempt_options(att *a, int argc, char **argv)
{
    tl_optres o;
    int prc = tl_opt_parse(&attempt_spec, argc, argv, &o);
    if (prc) { tl_opt_free(&o); return prc == TL_OPT_HELP ? -1 : 2; }
    a->label = tl_opt_str(&o, "label", NULL);
    a->out = tl_opt_str(&o, "out", NULL);
    out_quiet = tl_opt_given(&o, "quiet") > 0;
    out_json = tl_opt_given(&o, "json") > 0;
    a->players_from = tl_opt_str(&o, "players-from", NULL);
    if (att_project_load(a, tl_opt_str(&o, "project", NULL))) { tl_opt_free(&o); return 1; }
    a->report_only = tl_opt_str(&o, "report-only", a->report_only_default);
    a->from_git = tl_opt_str(&o, "from-git", NULL);
    a->baseline = tl_opt_str(&o, "baseline", NULL);
    a->layouts = (int)tl_opt_int(&o, "layouts", a->baseline ? ATT_BASELINE_LAYOUTS : 1);
    a->layout_seed = tl_opt_given(&o, "layout-seed") ? tl_opt_int(&o, "layout-seed", 0) : -1;
    if (a->layouts > 1 && !a->baseline) {
        tl_opt_free(&o);
        fprintf(stderr, "tandem attempt: --layouts: layouts are compared against a baseline: give --baseline REV\n");
        return 2;
    }
    const char *subjects = tl_opt_str(&o, "subjects", a->def_subjects);
    /* --subjects names its own peers: every one after the first but the lower bound */
    a->subjects_given = tl_opt_given(&o, "subjects") > 0;
    const char *backends = tl_opt_str(&o, "backends", a->def_backends);
    const char *fault = tl_opt_str(&o, "test-fault", NULL);
    a->quick = tl_opt_given(&o, "quick") > 0;
    a->rounds = (int)tl_opt_int(&o, "rounds", a->quick ? 1 : a->def_rounds ? a->def_rounds : 3);
    /* every layout measured: a time move counts only beyond the spread between them */
    if (!tl_opt_given(&o, "rounds") && !a->quick && a->rounds < a->layouts) a->rounds = a->layouts;
    a->samples = (int)tl_opt_int(&o, "samples", a->quick ? 3 : a->def_samples ? a->def_samples : 8);
    a->require_quiet = tl_opt_given(&o, "require-quiet") > 0;
    a->instructions = tl_opt_given(&o, "instructions") > 0;
    a->timeout = tl_opt_double(&o, "timeout", a->def_timeout > 0 ? a->def_timeout : 150);
    a->seq_budget = (int)tl_opt_int(&o, "sequential-budget", -1);
    a->seq_band = tl_opt_double(&o, "test-sequential-band", -1);
    int seq_band_given = tl_opt_given(&o, "test-sequential-band") > 0;
    tl_opt_free(&o); /* the values point into argv */
    a->warmup = 1;
    a->start_deadline = a->timeout < 60 ? a->timeout : 60;
    if (a->label && bad_name("--label", a->label, 100)) return 2;
    if (check_list("--subjects", subjects, MAXS) || check_list("--backends", backends, 2) ||
        (a->report_only[0] && check_list("--report-only", a->report_only, 8)))
        return 2;
    a->ns = att_split(subjects, a->subjects, MAXS);
    char *bl[2];
    a->nb = att_split(backends, bl, 2);
    for (int b = 0; b < a->nb; b++) {
        a->backends[b] = bl[b];
        if (strcmp(bl[b], "aot") && strcmp(bl[b], "jit")) { fprintf(stderr, "tandem attempt: --backends aot,jit\n"); return 2; }
    }
    if (a->ns < 2 || a->nb < 1) { fprintf(stderr, "tandem attempt: need two subjects and a backend\n"); return 2; }
    {   /* the plan's processes fit (gated suites come from the project) */
        char *ro[8];
        int nro = a->report_only[0] ? att_split(a->report_only, ro, 8) : 0;
        for (int i = 0; i < nro; i++) free(ro[i]);
        if (a->rounds * a->nb * a->ngated + a->nb * nro > MAXP) {
            fprintf(stderr, "tandem attempt: %d rounds x %d backends x %d gated suites + %d report-only processes "
                    "exceed %d processes\n", a->rounds, a->nb, a->ngated, a->nb * nro, MAXP);
            return 2;
        }
    }
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
    if (seq_band_given && !(getenv("TANDEM_TEST_FAULTS") && !strcmp(getenv("TANDEM_TEST_FAULTS"), "1"))) {
        fprintf(stderr, "tandem attempt: --test-sequential-band is for tests (TANDEM_TEST_FAULTS=1)\n");
        return 2;
    }
    if (a->baseline) { /* refuse an unknown revision before anything is created: one of the
                          * repository the staging will come from, the project's folder */
        static td_baseline probe;
        if (td_baseline_resolve(a->project, &a->proj, a->baseline, &probe)) return 1;
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
    /* the children's temporaries (compilers, tools) in the attempt's own folder: a killed
     * attempt leaves nothing in the system's temporary folder */
    char *tmp = att_path(a, "tmp");
    if (mkdir(tmp, 0700) == 0) setenv("TMPDIR", tmp, 1);
    free(tmp);
    char *lp = att_path(a, "attempt.log");
    a->log = fopen(lp, "a");
    free(lp);
    a->man = cJSON_CreateObject();
    cJSON_AddNumberToObject(a->man, "schemaVersion", 1);
    cJSON_AddStringToObject(a->man, "kind", "tandem-attempt");
    cJSON_AddStringToObject(a->man, "label", a->label ? a->label : "attempt");
    cJSON_AddStringToObject(a->man, "folder", a->dir);
    cJSON_AddStringToObject(a->man, "project", a->project);
    cJSON_AddNumberToObject(a->man, "pid", getpid());   /* tandem clean: under way or interrupted */
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
    att_log(a, 1, "folder %s", a->dir);
    return 0;
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
        att_log(a, 1, "aborted by %s during stage %s: its children were stopped", sn, was ? was : "?");
        att_manifest_set_str(a, "stage", "aborted");
    }
    att_save_manifest(a);
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
    att_project_free(a);
}

/* The attempt, stage by stage (SUITES.md "The attempt"). */
static int attempt_run(att *a)
{
    if (att_stage_pregate(a) || tl_stop_signal) return attempt_stopped(a);
    if (att_stage_staging(a) || tl_stop_signal) return attempt_stopped(a);
    if (att_stage_players(a) || tl_stop_signal) return attempt_stopped(a);
    if (att_stage_baseline(a) || tl_stop_signal) return attempt_stopped(a);
    if (att_stage_layouts(a) || tl_stop_signal) return attempt_stopped(a);
    if (att_stage_smoke(a) || tl_stop_signal) return attempt_stopped(a);
    att_stage_plan(a);
    if (att_stage_processes(a) || tl_stop_signal) return attempt_stopped(a);
    if (att_stage_sequential(a) || tl_stop_signal) return attempt_stopped(a);
    att_stage_instructions(a);
    if (tl_stop_signal) return attempt_stopped(a);
    int verdict = att_stage_gate(a);
    if (tl_stop_signal) return attempt_stopped(a);
    int rc = gate_exit_code(verdict, att_baseline_verdict(a));
    att_stage_archive(a);
    if (tl_stop_signal) return attempt_stopped(a);
    att_stage_done(a, verdict, rc);
    return rc;
}

int td_verb_attempt(int argc, char **argv)
{
    static att A;
    att *a = &A;
    memset(a, 0, sizeof *a);
    a->t0 = att_now_ns();
    int rc = attempt_options(a, argc, argv);
    if (rc == 0 && tl_out_begin("tandem attempt", out_quiet, out_json)) rc = 2;
    else if (rc == 0) rc = attempt_open(a, argc, argv) ? 1 : attempt_run(a);
    else if (rc < 0) rc = 0; /* --help */
    if (a->dir[0]) {   /* the temporaries' folder, when nothing was left in it */
        char *tmp = att_path(a, "tmp");
        rmdir(tmp);
        free(tmp);
    }
    if (a->dir[0] && tl_out_summary()) {   /* --json: the folder, the verdict and why */
        static const char *const keys[] = { "verdict", "counts", "invalid", NULL };
        char *sp = att_path(a, "gate/gate-summary.json");
        cJSON_AddStringToObject(tl_out_summary(), "folder", a->dir);
        if (a->base_verdict[0]) cJSON_AddStringToObject(tl_out_summary(), "baselineVerdict", a->base_verdict);
        tl_out_pick("summary", sp, keys);
        free(sp);
    }
    rc = tl_out_end(rc);
    attempt_close(a);
    return rc;
}
