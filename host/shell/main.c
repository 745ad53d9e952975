/*
 * main.c - `tandem-player`, the native host both backends run in.
 *
 *   tandem-player --backend aot --module A.so [--module B.so ...] --suite NAME [options]
 *   tandem-player --backend jit --tu A.c [--tu B.c ...] [--root DIR] --suite NAME [options]
 *
 * Loads every subject (AOT: dlopen RTLD_NOW|RTLD_LOCAL; JIT: one TCCState each), runs
 * the suite (warm-up calls, then one call per sample, alternating the subject order
 * between samples), counts allocations (alloc.c) and writes one JSON report (cJSON).
 *
 * Output markers (stdout, flushed line by line, so a crash leaves the trail):
 *   TANDEM-CASE-START: <subject> <case>
 *   TANDEM-CASE-PASS: <subject> <case> ns=<ns>
 *   TANDEM-CASE-FAIL: <subject> <case> at <file>:<line> expected <e> actual <a>
 *   TANDEM-PLAYER-RESULT: pass|fail|error|crash signal=<n>|timeout   (always the last line)
 * Exit: 0 pass, 1 a case failed / a suite could not run, 2 usage, 3 load or compile
 * error, 124 timeout (--timeout), crash = death by the signal (after the marker).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <openssl/evp.h>

#include "meter.h"
#include "shell.h"
#include "tl_opt.h"

#define MAX_SUBJECTS 16

typedef struct pl_case {
    char *name;
    char *subject;
    int passed;
    int has_failure;
    char *file;
    int line;
    char *expected;
    char *actual;
    uint64_t ns;
} pl_case;


typedef struct pl_subject {
    const char *path;
    td_backend_module mod;
    int loaded;
    int suite_rc;         /* first non-zero run_suite return */
} pl_subject;

typedef struct pl_state {
    const td_backend *backend;
    const char *backend_name;
    const char *suite;
    const char *root;
    const char *filter;
    const char *out;
    const char *build_id;
    int samples, warmup, ops, timeout;
    int nsubjects;
    pl_subject subjects[MAX_SUBJECTS];
    int32_t expected_cases;
    pl_case *cases;
    size_t ncases, capcases;
    pl_case *cur;         /* open case */
    pl_row *rows;
    size_t nrows, caprows;
    int measuring;        /* 0 during warm-up: rows discarded */
    int record_cases;     /* 1 during the first measured call */
    int cur_subject;
    int skip_na_first;    /* --skip-na-of-first (skip.c) */
    int load_reverse;     /* --load-reverse: subjects loaded last to first (their code lands in
                             the other order; S.subjects keeps the command line's order) */
    char root_prefix[PATH_MAX];
    /* bench settings and validation */
    const char *retention;
    int flow, quick;
    int nfailures;
    char *fail_row, *fail_subject, *fail_message;
    cJSON *settings;      /* settings reported by the suites, per subject */
    const char *meter;    /* "time" (default) or "instructions" (under callgrind) */
    const char *meter_out;
    int metering;         /* a measured call (any pass) under the instruction meter */
    int sample;           /* the measured sample of the current call */
    /* host->sample_shape of the row sample about to be emitted */
    char shape_row[256];
    uint64_t shape_segments, shape_units;
} pl_state;

static pl_state S;

/* ---- crash / timeout markers (async-signal-safe) ---------------------------------- */

static char crash_case[256];

static void write_str(const char *s) { ssize_t r = write(1, s, strlen(s)); (void)r; }

static void on_crash(int sig)
{
    char num[16];
    int n = 0, v = sig;
    char rev[16];
    do { rev[n++] = (char)('0' + v % 10); v /= 10; } while (v && n < 15);
    for (int i = 0; i < n; i++) num[i] = rev[n - 1 - i];
    num[n] = 0;
    write_str("\nTANDEM-PLAYER-RESULT: crash signal=");
    write_str(num);
    if (crash_case[0]) { write_str(" case="); write_str(crash_case); }
    write_str("\n");
    signal(sig, SIG_DFL);
    raise(sig);
}

static void on_alarm(int sig)
{
    (void)sig;
    write_str("\nTANDEM-PLAYER-RESULT: timeout");
    if (crash_case[0]) { write_str(" case="); write_str(crash_case); }
    write_str("\n");
    _exit(124);
}

static void install_handlers(void)
{
    int sigs[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT };
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) signal(sigs[i], on_crash);
    signal(SIGALRM, on_alarm);
}

/* ---- host callbacks ---------------------------------------------------------------- */

static char *dup0(const char *s) { return strdup(s ? s : ""); }

static uint64_t host_now_ns(void) { return td_backend_now_ns(); }

static const char *subject_name(void)
{
    const td_player_module *e = S.subjects[S.cur_subject].mod.entry;
    return e ? e->subject : "?";
}

static const char *norm_file(const char *f)
{
    if (!f) return "";
    size_t l = strlen(S.root_prefix);
    if (l && !strncmp(f, S.root_prefix, l) && f[l] == '/') f += l + 1;
    while (f[0] == '.' && f[1] == '/') f += 2;
    return f;
}

static void host_expect_cases(void *ctx, int32_t count) { (void)ctx; S.expected_cases = count; }

static void host_case_begin(void *ctx, const char *name)
{
    (void)ctx;
    S.cur = NULL;
    snprintf(crash_case, sizeof crash_case, "%s", name ? name : "");
    if (!S.record_cases) return;   /* cases are recorded from the first measured call only */
    if (S.ncases == S.capcases) {
        S.capcases = S.capcases ? S.capcases * 2 : 64;
        S.cases = realloc(S.cases, S.capcases * sizeof *S.cases);
        if (!S.cases) abort();
    }
    pl_case *c = &S.cases[S.ncases++];
    memset(c, 0, sizeof *c);
    c->name = dup0(name);
    c->subject = dup0(subject_name());
    c->passed = 1;
    S.cur = c;
    printf("TANDEM-CASE-START: %s %s\n", c->subject, c->name);
    fflush(stdout);
}

static void host_case_fail(void *ctx, const char *file, int32_t line, const char *expected,
                           const char *actual)
{
    (void)ctx;
    pl_case *c = S.cur;
    if (!c) {
        if (S.record_cases)
            fprintf(stderr, "tandem-player: case_fail outside a case (%s:%d)\n", norm_file(file), line);
        return;
    }
    c->passed = 0;
    if (c->has_failure) return;
    c->has_failure = 1;
    c->file = dup0(norm_file(file));
    c->line = line;
    c->expected = dup0(expected);
    c->actual = dup0(actual);
}

static void host_case_end(void *ctx, uint64_t ns)
{
    (void)ctx;
    pl_case *c = S.cur;
    crash_case[0] = 0;
    if (!c) return;
    c->ns = ns;
    if (c->passed)
        printf("TANDEM-CASE-PASS: %s %s ns=%llu\n", c->subject, c->name, (unsigned long long)ns);
    else
        printf("TANDEM-CASE-FAIL: %s %s at %s:%d expected %s actual %s\n", c->subject, c->name,
               c->file, c->line, c->expected, c->actual);
    fflush(stdout);
    S.cur = NULL;
    crash_case[0] = 0;
}

static pl_row *find_row(const char *name)
{
    const char *subj = subject_name();
    for (size_t i = 0; i < S.nrows; i++)
        if (!strcmp(S.rows[i].name, name) && !strcmp(S.rows[i].subject, subj)) return &S.rows[i];
    if (S.nrows == S.caprows) {
        S.caprows = S.caprows ? S.caprows * 2 : 32;
        S.rows = realloc(S.rows, S.caprows * sizeof *S.rows);
        if (!S.rows) abort();
    }
    pl_row *r = &S.rows[S.nrows++];
    memset(r, 0, sizeof *r);
    r->subject = dup0(subj);
    r->name = dup0(name);
    r->samples = cJSON_CreateArray();
    return r;
}

static void row_record(const td_player_row *row, int ext, int64_t control_ns, int32_t subtract,
                       int64_t retained)
{
    pl_row *r = find_row(row->name);
    if (r->nraw == r->capraw) {
        r->capraw = r->capraw ? r->capraw * 2 : 16;
        r->raw = realloc(r->raw, r->capraw * sizeof *r->raw);
        if (!r->raw) abort();
    }
    pl_sample *x = &r->raw[r->nraw++];
    memset(x, 0, sizeof *x);
    x->ns = row->ns;
    x->ops = row->ops;
    x->allocs = row->allocs;
    x->frees = row->frees;
    x->bytes = row->bytes;
    x->check = row->check;
    x->has_ext = ext;
    if (r->skipped) { /* the suite ran a row it was told to skip: measured, so not skipped */
        r->skipped = r->unsupported = 0;
        free(r->reason);
        r->reason = NULL;
    }
    x->control_ns = control_ns;
    x->subtract = subtract;
    x->retained = retained;
    if (!strcmp(S.shape_row, row->name)) {
        x->segments = S.shape_segments;
        x->units = S.shape_units;
    }
    S.shape_row[0] = 0;
}

static void host_row(void *ctx, const td_player_row *row)
{
    (void)ctx;
    if (!S.measuring || !row || !row->name) return;
    row_record(row, 0, 0, 0, 0);
    pl_row *r = find_row(row->name);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "ns", (double)row->ns);
    cJSON_AddNumberToObject(o, "ops", (double)row->ops);
    cJSON_AddNumberToObject(o, "allocs", (double)row->allocs);
    cJSON_AddNumberToObject(o, "frees", (double)row->frees);
    cJSON_AddNumberToObject(o, "bytes", (double)row->bytes);
    cJSON_AddNumberToObject(o, "check", (double)row->check);
    cJSON_AddItemToArray(r->samples, o);
}

static void host_row_ext(void *ctx, const td_player_row *row, const td_player_row_ext *ext)
{
    (void)ctx;
    if (!S.measuring || !row || !row->name || !ext) return;
    int64_t control_ns = ext->control_ns, retained = ext->retained_bytes;
    row_record(row, 1, control_ns, ext->subtract_control, retained);
    pl_row *r = find_row(row->name);
    r->gated = ext->gated;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "ns", (double)row->ns);
    cJSON_AddNumberToObject(o, "ops", (double)row->ops);
    cJSON_AddNumberToObject(o, "allocs", (double)row->allocs);
    cJSON_AddNumberToObject(o, "frees", (double)row->frees);
    cJSON_AddNumberToObject(o, "bytes", (double)row->bytes);
    cJSON_AddNumberToObject(o, "check", (double)row->check);
    cJSON_AddNumberToObject(o, "controlNs", (double)control_ns);
    cJSON_AddNumberToObject(o, "retainedBytes", (double)retained);
    if (r->raw[r->nraw - 1].segments) {
        cJSON_AddNumberToObject(o, "segments", (double)r->raw[r->nraw - 1].segments);
        cJSON_AddNumberToObject(o, "units", (double)r->raw[r->nraw - 1].units);
    }
    cJSON_AddItemToArray(r->samples, o);
}

static void host_sample_shape(void *ctx, const char *name, uint64_t segments, uint64_t units)
{
    (void)ctx;
    if (!name || strlen(name) >= sizeof S.shape_row) return;
    snprintf(S.shape_row, sizeof S.shape_row, "%s", name);
    S.shape_segments = segments;
    S.shape_units = units;
}

/* A failed validation counts in warm-up too: a wrong operation is wrong whenever it runs. */
static void host_fail(void *ctx, const char *row, const char *message)
{
    (void)ctx;
    S.nfailures++;
    fprintf(stderr, "tandem-player: VALIDATION FAILED: %s: %s: %s\n", subject_name(), row ? row : "",
            message ? message : "");
    if (S.fail_message) return;
    S.fail_row = dup0(row);
    S.fail_subject = dup0(subject_name());
    S.fail_message = dup0(message);
}

static void host_setting(void *ctx, const char *key, const char *value)
{
    (void)ctx;
    if (!key) return;
    if (!S.settings) S.settings = cJSON_CreateObject();
    cJSON *sub = cJSON_GetObjectItemCaseSensitive(S.settings, subject_name());
    if (!sub) sub = cJSON_AddObjectToObject(S.settings, subject_name());
    cJSON_DeleteItemFromObjectCaseSensitive(sub, key);
    cJSON_AddStringToObject(sub, key, value ? value : "");
}

static void host_meter_row(void *ctx, const char *name, int32_t slot, uint64_t segments)
{
    (void)ctx;
    if (!S.metering || !name) return;
    size_t idx = (size_t)(find_row(name) - S.rows);
    pl_meter_row(idx, S.sample, slot, segments);
}

static void host_row_unsupported(void *ctx, const char *name, const char *reason)
{
    (void)ctx;
    if (!name) return;
    pl_row *r = find_row(name);
    if (!r->unsupported) {
        r->unsupported = 1;
        r->reason = dup0(reason);
    }
}

/* --skip-na-of-first: the other subjects skip the first one's NA rows, recorded NA "skipped" */
static int32_t host_row_wanted(void *ctx, const char *name)
{
    (void)ctx;
    if (!name || S.cur_subject == 0 || !pl_skip_has(name)) return 1;
    pl_row *r = find_row(name);
    if (!r->unsupported) {
        r->unsupported = r->skipped = 1;
        r->reason = dup0(pl_skip_reason());
    }
    return 0;
}

static void host_log(void *ctx, int32_t level, const char *msg)
{
    (void)ctx;
    static const char *const lv[] = { "info", "warn", "error" };
    fprintf(stderr, "[%s %s] %s\n", subject_name(), level >= 0 && level <= 2 ? lv[level] : "log",
            msg ? msg : "");
}

/* ---- report ------------------------------------------------------------------------ */

static void sha256_file(const char *path, char *hex, size_t len)
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    FILE *f = fopen(path, "rb");
    hex[0] = 0;
    if (!f) return;
    EVP_MD_CTX *c = EVP_MD_CTX_new();
    EVP_DigestInit_ex(c, EVP_sha256(), NULL);
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) EVP_DigestUpdate(c, buf, n);
    EVP_DigestFinal_ex(c, md, &mdlen);
    EVP_MD_CTX_free(c);
    fclose(f);
    for (unsigned i = 0; i < mdlen && 2 * i + 2 < len; i++) snprintf(hex + 2 * i, 3, "%02x", md[i]);
}

/* --build-id, else the `build-id-<backend>` file `tandem build` writes in the player
 * folder (next to the module/TU, or one level up), else
 * "unverified:sha256:<hash of the first module or TU>". */
static void resolve_build_id(char *out, size_t len)
{
    if (S.build_id) {
        snprintf(out, len, "%s", S.build_id);
        return;
    }
    char dir[PATH_MAX];
    if (!realpath(S.subjects[0].path, dir)) snprintf(dir, sizeof dir, "%s", S.subjects[0].path);
    for (int up = 0; up < 2; up++) {
        char *slash = strrchr(dir, '/');
        if (!slash) break;
        *slash = 0;
        char p[PATH_MAX + 64];
        snprintf(p, sizeof p, "%s/build-id-%s", dir, S.backend_name);
        FILE *f = fopen(p, "r");
        if (!f) continue;
        int ok = fgets(out, (int)len, f) != NULL;
        fclose(f);
        if (ok) {
            out[strcspn(out, "\r\n")] = 0;
            if (out[0]) return;
        }
    }
    char hex[80];
    sha256_file(S.subjects[0].path, hex, sizeof hex);
    snprintf(out, len, "unverified:sha256:%s", hex);
}

static cJSON *failure_json(const pl_case *c)
{
    if (!c->has_failure && c->passed) return cJSON_CreateNull();
    cJSON *f = cJSON_CreateObject();
    if (c->has_failure) {
        cJSON_AddStringToObject(f, "file", c->file);
        cJSON_AddNumberToObject(f, "line", c->line);
        cJSON_AddStringToObject(f, "expected", c->expected);
        cJSON_AddStringToObject(f, "actual", c->actual);
    } else {
        cJSON_AddStringToObject(f, "file", "");
        cJSON_AddNumberToObject(f, "line", 0);
        cJSON_AddStringToObject(f, "expected", "case_end");
        cJSON_AddStringToObject(f, "actual", "case never ended");
    }
    return f;
}

/* ---- bench statistics: stats.c (pl_row_stats) ------------------------------------ */

static void read_first_line_matching(const char *path, const char *key, char *out, size_t len)
{
    FILE *f = fopen(path, "r");
    char line[512];
    out[0] = 0;
    if (!f) return;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, key, strlen(key))) continue;
        char *c = strchr(line, ':');
        if (!c) continue;
        c++;
        while (*c == ' ' || *c == '\t') c++;
        c[strcspn(c, "\n")] = 0;
        snprintf(out, len, "%s", c);
        break;
    }
    fclose(f);
}

/* settings, environment, completed/failure and the row statistics of a bench report. */
static int bench_report(cJSON *root, int passed)
{
    cJSON *st = cJSON_AddObjectToObject(root, "settings");
    cJSON_AddStringToObject(st, "retention", S.retention ? S.retention : "matched");
    cJSON_AddStringToObject(st, "flow", S.flow ? "on" : "off");
    cJSON_AddBoolToObject(st, "quick", S.quick);
    cJSON_AddStringToObject(st, "loadOrder", S.load_reverse ? "reverse" : "forward");
    cJSON_AddNumberToObject(st, "samples", S.samples);
    cJSON_AddNumberToObject(st, "warmup", S.warmup);
    if (S.settings) {
        cJSON_AddItemToObject(st, "subjects", S.settings);
        S.settings = NULL;
    }
    cJSON *env = cJSON_AddObjectToObject(root, "environment");
    char host[256] = "", cpu[256] = "";
    gethostname(host, sizeof host);
    read_first_line_matching("/proc/cpuinfo", "model name", cpu, sizeof cpu);
    cJSON_AddStringToObject(env, "host", host);
    cJSON_AddStringToObject(env, "cpu", cpu);
    cJSON_AddNumberToObject(env, "cpus", (double)sysconf(_SC_NPROCESSORS_ONLN));
    cJSON_AddStringToObject(env, "compiler", S.backend->identity());
    cJSON_AddStringToObject(env, "optimisationFlags", S.backend->flags());
#if defined(__clang__)
    cJSON_AddStringToObject(env, "shellCompiler", "clang " __clang_version__);
#elif defined(__GNUC__)
    cJSON_AddStringToObject(env, "shellCompiler", "gcc " __VERSION__);
#endif
    int completed = passed && S.nfailures == 0 && S.nrows > 0;
    const char *why = NULL;
    char msg[512];
    for (size_t i = 0; i < S.nrows && completed; i++) {
        const pl_row *r = &S.rows[i];
        if (r->unsupported) continue;
        if (r->nraw != (size_t)S.samples) {
            completed = 0;
            snprintf(msg, sizeof msg, "row '%s' of '%s' has %zu samples, %d expected", r->name, r->subject,
                     r->nraw, S.samples);
            why = msg;
        }
    }
    if (!passed && !why) why = "a suite did not run";
    if (S.nrows == 0 && !why) why = "no rows reported";
    cJSON_AddBoolToObject(root, "completed", completed);
    cJSON_DeleteItemFromObjectCaseSensitive(root, "failure");
    if (S.fail_message) {
        cJSON *f = cJSON_AddObjectToObject(root, "failure");
        cJSON_AddStringToObject(f, "subject", S.fail_subject);
        cJSON_AddStringToObject(f, "row", S.fail_row);
        cJSON_AddStringToObject(f, "message", S.fail_message);
        cJSON_AddNumberToObject(f, "count", S.nfailures);
    } else if (!completed) {
        cJSON *f = cJSON_AddObjectToObject(root, "failure");
        cJSON_AddStringToObject(f, "message", why ? why : "incomplete");
    } else {
        cJSON_AddNullToObject(root, "failure");
    }
    return completed;
}

static int write_report(int is_smoke, int *passed_out)
{
    char bid[256];
    resolve_build_id(bid, sizeof bid);
    cJSON *root = cJSON_CreateObject();
    cJSON_AddNumberToObject(root, "schemaVersion", 1);
    cJSON_AddStringToObject(root, "kind", is_smoke ? "smoke" : "bench");
    cJSON_AddStringToObject(root, "suite", S.suite);
    cJSON_AddStringToObject(root, "backend", S.backend_name);
    cJSON_AddStringToObject(root, "buildId", bid);
    cJSON_AddStringToObject(root, "compiler", S.backend->identity());
    cJSON_AddStringToObject(root, "flags", S.backend->flags());

    cJSON *subs = cJSON_AddArrayToObject(root, "subjects");
    int passed = 1;
    const char *first_fail_reason = NULL;
    for (int i = 0; i < S.nsubjects; i++) {
        const pl_subject *s = &S.subjects[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", s->mod.entry->subject);
        cJSON_AddStringToObject(o, "path", s->path);
        cJSON_AddStringToObject(o, "moduleCompiler", s->mod.entry->compiler);
        cJSON_AddNumberToObject(o, "loadNs", (double)s->mod.compile_ns);
        cJSON *compiled = cJSON_AddArrayToObject(o, "compiledSuites");
        for (const char *const *q = s->mod.entry->suites; *q; q++)
            cJSON_AddItemToArray(compiled, cJSON_CreateString(*q));
        cJSON_AddNumberToObject(o, "suiteResult", s->suite_rc);
        cJSON_AddItemToArray(subs, o);
        if (s->suite_rc != 0) {
            passed = 0;
            if (!first_fail_reason) first_fail_reason = "suite did not run";
        }
    }
    if (is_smoke) cJSON_AddNumberToObject(root, "expectedCaseCount", S.expected_cases);

    cJSON *cases = cJSON_CreateArray();
    const pl_case *first = NULL;
    for (size_t i = 0; i < S.ncases; i++) {
        const pl_case *c = &S.cases[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", c->name);
        if (S.nsubjects > 1) cJSON_AddStringToObject(o, "subject", c->subject);
        cJSON_AddBoolToObject(o, "passed", c->passed);
        cJSON_AddItemToObject(o, "failure", failure_json(c));
        cJSON_AddNumberToObject(o, "ns", (double)c->ns);
        cJSON_AddItemToArray(cases, o);
        if (!c->passed && !first) first = c;
    }
    size_t per_subject = S.nsubjects ? S.ncases / (size_t)S.nsubjects : 0;
    int count_ok = !is_smoke || S.expected_cases <= 0 || (S.filter && S.filter[0]) ||
                   (S.ncases % (size_t)S.nsubjects == 0 && per_subject == (size_t)S.expected_cases);
    if (first) passed = 0;
    if (!count_ok) passed = 0;
    if (is_smoke && S.ncases == 0) passed = 0;
    cJSON_AddBoolToObject(root, "passed", passed);
    if (first) {
        cJSON *f = failure_json(first);
        cJSON_AddStringToObject(f, "case", first->name);
        cJSON_AddItemToObject(root, "failure", f);
    } else if (!passed) {
        cJSON *f = cJSON_CreateObject();
        char msg[128];
        if (first_fail_reason) snprintf(msg, sizeof msg, "%s", first_fail_reason);
        else snprintf(msg, sizeof msg, "%zu cases reported, %d expected", per_subject, S.expected_cases);
        cJSON_AddStringToObject(f, "case", "");
        cJSON_AddStringToObject(f, "file", "");
        cJSON_AddNumberToObject(f, "line", 0);
        cJSON_AddStringToObject(f, "expected", is_smoke ? "all expected cases reported" : "suite ran");
        cJSON_AddStringToObject(f, "actual", msg);
        cJSON_AddItemToObject(root, "failure", f);
    } else {
        cJSON_AddNullToObject(root, "failure");
    }
    if (is_smoke || S.ncases) cJSON_AddItemToObject(root, "cases", cases);
    else cJSON_Delete(cases);

    if (!is_smoke || S.nrows) {
        cJSON_AddNumberToObject(root, "samples", S.samples);
        cJSON_AddNumberToObject(root, "warmup", S.warmup);
        cJSON *rows = cJSON_AddArrayToObject(root, "rows");
        for (size_t i = 0; i < S.nrows; i++) {
            pl_row *r = &S.rows[i];
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "subject", r->subject);
            cJSON_AddStringToObject(o, "name", r->name);
            cJSON_AddBoolToObject(o, "supported", !r->unsupported);
            if (r->unsupported) cJSON_AddStringToObject(o, "reason", r->reason);
            if (r->skipped) cJSON_AddBoolToObject(o, "skipped", 1);
            cJSON_AddItemToObject(o, is_smoke ? "samples" : "sampleRecords", r->samples);
            r->samples = NULL;
            if (!is_smoke) pl_row_stats(o, r);
            if (!is_smoke) {
                uint64_t ops = 0;
                for (size_t k = 0; k < r->nraw; k++) ops += r->raw[k].ops;
                pl_meter_row_json(o, i, ops, S.samples);
            }
            cJSON_AddItemToArray(rows, o);
        }
    }
    if (!is_smoke) {
        /* a bench report passes only when complete and validated */
        passed = bench_report(root, passed);
        cJSON_DeleteItemFromObjectCaseSensitive(root, "passed");
        cJSON_AddBoolToObject(root, "passed", passed);
    }
    if (!is_smoke) pl_meter_report_json(root);
    if (!is_smoke) pl_clock_report_json(root);
    td_player_alloc_counts ac;
    td_player_alloc_read(&ac);
    cJSON *a = cJSON_AddObjectToObject(root, "processAllocations");
    cJSON_AddNumberToObject(a, "allocs", (double)ac.allocs);
    cJSON_AddNumberToObject(a, "reallocs", (double)ac.reallocs);
    cJSON_AddNumberToObject(a, "frees", (double)ac.frees);
    cJSON_AddNumberToObject(a, "bytes", (double)ac.bytes);

    char defname[256];
    const char *out = S.out;
    if (!out) {
        if (!strcmp(S.suite, "smoke")) snprintf(defname, sizeof defname, "smoke-%s.json", S.backend_name);
        else snprintf(defname, sizeof defname, "%s-%s.json", S.suite, S.backend_name);
        out = defname;
    }
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    FILE *f = text ? fopen(out, "w") : NULL;
    int rc = 0;
    if (!f || fputs(text, f) < 0 || fputc('\n', f) < 0) {
        fprintf(stderr, "tandem-player: cannot write %s: %s\n", out, strerror(errno));
        rc = -1;
    }
    if (f && fclose(f) != 0) rc = -1;
    free(text);
    *passed_out = passed;
    return rc;
}

/* ---- main -------------------------------------------------------------------------- */

static const tl_opt player_opts[] = {
    { "backend", 0, TL_OPT_STR, "aot|jit", 0, 0, "the backend the subjects were built for" },
    { "module", 0, TL_OPT_PATH, "PATH", 0, 0, "AOT: a subject module (.so); repeat for more subjects" },
    { "tu", 0, TL_OPT_PATH, "PATH", 0, 0, "JIT: a generated translation unit; repeat for more subjects" },
    { "root", 0, TL_OPT_PATH, "DIR", 0, 0, "JIT: source root of the TU's includes (default: the TU's folder)" },
    { "suite", 0, TL_OPT_STR, "NAME", 0, 0, "suite to run (e.g. smoke)" },
    { "out", 0, TL_OPT_PATH, "FILE", 0, 0, "report (default smoke-<backend>.json or <suite>-<backend>.json)" },
    { "samples", 0, TL_OPT_INT, "N", 1, 1000000, "measured calls per subject (default 1 for smoke, 10 otherwise)" },
    { "warmup", 0, TL_OPT_INT, "N", 0, 1000000, "discarded warm-up calls (default 0 for smoke, 1 otherwise)" },
    { "ops", 0, TL_OPT_INT, "N", 1, 1000000000, "ops per row sample hint (default: the suite's)" },
    { "filter", 0, TL_OPT_STR, "STR", 0, 0, "only cases/rows whose name contains STR" },
    { "build-id", 0, TL_OPT_STR, "ID", 0, 0, "build id for the report (default: build-id file next to the module)" },
    { "timeout", 0, TL_OPT_INT, "SEC", 1, 86400, "abort with TANDEM-PLAYER-RESULT: timeout after SEC seconds" },
    { "retention", 0, TL_OPT_STR, "R", 0, 0, "bench: matched (default) or default pool retention" },
    { "flow", 0, TL_OPT_STR, "on|off", 0, 0, "bench: context flow for rows without their own flow arm (default off)" },
    { "quick", 0, TL_OPT_FLAG, NULL, 0, 0, "bench: few samples, small N (tests)" },
    { "skip-na-of-first", 0, TL_OPT_FLAG, NULL, 0, 0, "bench: the other subjects skip the rows the first one leaves\n"
      "unsupported (reported NA, \"skipped\": true); `tandem attempt` passes it\n"
      "(its first subject is the gate subject)" },
    { "load-reverse", 0, TL_OPT_FLAG, NULL, 0, 0, "load the subjects last to first (where each one's code lands;\n"
      "the report's subject order is unchanged): `tandem attempt` alternates it between processes" },
    { "meter", 0, TL_OPT_STR, "M", 0, 0, "bench: time (default) or instructions: run under valgrind --tool=callgrind\n"
      "--collect-atstart=no --dump-instr=yes --dump-line=no --compress-pos=no\n"
      "--compress-strings=no --callgrind-out-file=F, one subject, at most 64 samples" },
    { "meter-out", 0, TL_OPT_PATH, "F", 0, 0, "bench: the callgrind output file F given to valgrind" },
    { "meter-functions", 0, TL_OPT_FLAG, NULL, 0, 0, "bench, --meter instructions: each row's instructions by function\n"
      "too (\"functions\" in the row's \"instructions\")" },
    { "subjects", 0, TL_OPT_FLAG, NULL, 0, 0, "load, list subjects and their suites, exit" },
    { NULL, 0, 0, NULL, 0, 0, NULL }
};

static const tl_optspec player_spec = {
    "tandem-player", "--backend aot|jit --suite NAME [options]",
    "The native host both backends run in: loads the subjects (AOT modules with dlopen,\n"
    "JIT translation units with libtcc), runs one suite and writes its JSON report.",
    player_opts, "Exit: 0 pass, 1 a case or row failed, 2 usage.", 0, 0
};

/* A suite name that can be a macro's: TD_PLAYER_SUITE_<name>. */
static int is_c_ident(const char *s)
{
    if (!s || !*s || (*s >= '0' && *s <= '9')) return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_'))
            return 0;
    return 1;
}

static int result(const char *what, int code)
{
    printf("TANDEM-PLAYER-RESULT: %s\n", what);
    fflush(stdout);
    return code;
}

int main(int argc, char **argv)
{
    const char *paths[MAX_SUBJECTS];
    int npaths = 0, list_only = 0, is_jit_arg = 0, is_aot_arg = 0;
    S.samples = -1;
    S.warmup = -1;
    tl_optres o;
    int prc = tl_opt_parse(&player_spec, argc, argv, &o);
    if (prc) { tl_opt_free(&o); return prc == TL_OPT_HELP ? 0 : 2; }
    S.backend_name = tl_opt_str(&o, "backend", S.backend_name);
    int nmod, ntu;
    const char *const *mods = tl_opt_all(&o, "module", &nmod), *const *tus = tl_opt_all(&o, "tu", &ntu);
    if (nmod + ntu > MAX_SUBJECTS) {
        fprintf(stderr, "tandem-player: too many subjects (at most %d)\n", MAX_SUBJECTS);
        tl_opt_free(&o);
        return 2;
    }
    for (int i = 0; i < nmod; i++) paths[npaths++] = mods[i];
    for (int i = 0; i < ntu; i++) paths[npaths++] = tus[i];
    is_aot_arg = nmod > 0;
    is_jit_arg = ntu > 0;
    S.root = tl_opt_str(&o, "root", S.root);
    S.suite = tl_opt_str(&o, "suite", S.suite);
    S.out = tl_opt_str(&o, "out", S.out);
    S.samples = (int)tl_opt_int(&o, "samples", S.samples);
    S.warmup = (int)tl_opt_int(&o, "warmup", S.warmup);
    S.ops = (int)tl_opt_int(&o, "ops", S.ops);
    S.filter = tl_opt_str(&o, "filter", S.filter);
    S.build_id = tl_opt_str(&o, "build-id", S.build_id);
    S.timeout = (int)tl_opt_int(&o, "timeout", S.timeout);
    list_only = tl_opt_given(&o, "subjects") > 0;
    S.quick = tl_opt_given(&o, "quick") > 0;
    S.load_reverse = tl_opt_given(&o, "load-reverse") > 0;
    S.skip_na_first = tl_opt_given(&o, "skip-na-of-first") > 0;
    S.meter_out = tl_opt_str(&o, "meter-out", S.meter_out);
    const char *retention = tl_opt_str(&o, "retention", NULL), *flow = tl_opt_str(&o, "flow", NULL);
    const char *meter = tl_opt_str(&o, "meter", NULL);
    int by_function = tl_opt_given(&o, "meter-functions") > 0;
    tl_opt_free(&o);
    if (retention) {
        if (strcmp(retention, "matched") && strcmp(retention, "default")) {
            fprintf(stderr, "tandem-player: --retention: '%s' is not matched or default\n", retention);
            return 2;
        }
        S.retention = retention;
    }
    if (flow) {
        if (strcmp(flow, "on") && strcmp(flow, "off")) {
            fprintf(stderr, "tandem-player: --flow: '%s' is not on or off\n", flow);
            return 2;
        }
        S.flow = !strcmp(flow, "on");
    }
    if (meter) {
        if (strcmp(meter, "time") && strcmp(meter, "instructions")) {
            fprintf(stderr, "tandem-player: --meter: '%s' is not time or instructions\n", meter);
            return 2;
        }
        S.meter = meter;
    }
    S.backend = td_backend_find(S.backend_name);
    if (!S.backend || !npaths || (!S.suite && !list_only) ||
        (is_aot_arg && strcmp(S.backend_name, "aot")) || (is_jit_arg && strcmp(S.backend_name, "jit"))) {
        fprintf(stderr, "tandem-player: need --backend aot with --module, or --backend jit with --tu, and --suite\n");
        return 2;
    }
    int is_smoke = S.suite && !strcmp(S.suite, "smoke");
    if (S.samples < 0) S.samples = is_smoke ? 1 : 10;
    if (S.warmup < 0) S.warmup = is_smoke ? 0 : 1;
    if (S.samples < 1) S.samples = 1;
    int icount = S.meter && !strcmp(S.meter, "instructions");
    if (by_function && !icount) {
        fprintf(stderr, "tandem-player: --meter-functions needs --meter instructions\n");
        return 2;
    }
    pl_meter_by_function(by_function);
    if (icount) {
        char merr[512];
        if (is_smoke || npaths != 1 || S.samples > PL_METER_MAX_SAMPLES) {
            fprintf(stderr, "tandem-player: --meter instructions: a bench suite, exactly one subject and at most %d "
                            "samples\n", PL_METER_MAX_SAMPLES);
            return 2;
        }
        if (pl_meter_start(S.meter_out, merr, sizeof merr)) {
            fprintf(stderr, "tandem-player: --meter instructions: %s\n", merr);
            return 2;
        }
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    install_handlers();
    if (S.timeout > 0) alarm((unsigned)S.timeout);

    td_backend_options opt = { 0 };
    opt.root = S.root;
    opt.symbols = td_player_alloc_symbols;
    /* JIT: compile only the suite this process runs (the TU's TD_PLAYER_SUITES_CHOSEN; the
     * runtime too only when the subject or that suite uses it). --subjects lists them all. */
    char suite_define[128];
    const char *jit_defines[] = { "TD_PLAYER_SUITES_CHOSEN=1", suite_define, NULL };
    if (!list_only && !strcmp(S.backend_name, "jit")) {
        if (is_c_ident(S.suite) && strlen(S.suite) < sizeof suite_define - 20)
            snprintf(suite_define, sizeof suite_define, "TD_PLAYER_SUITE_%s=1", S.suite);
        else
            jit_defines[1] = NULL;   /* no such suite can be compiled in: none is */
        opt.defines = jit_defines;
    }
    if (S.root && realpath(S.root, S.root_prefix) == NULL) S.root_prefix[0] = 0;
    /* Load order decides which module's code and data land where (dlopen maps top-down;
     * tcc allocates each unit's code in turn); a fixed order is a fixed placement, the same
     * in every process: alternated by --load-reverse so that it is not a systematic bias. */
    for (int t = 0; t < npaths; t++) {
        int i = S.load_reverse ? npaths - 1 - t : t;
        char err[16384];
        pl_subject *s = &S.subjects[i];
        s->path = paths[i];
        if (S.backend->load(paths[i], &opt, &s->mod, err, sizeof err)) {
            fprintf(stderr, "tandem-player: cannot load %s:\n%s\n", paths[i], err);
            if (S.load_reverse) S.nsubjects = 0; /* the loaded ones are not S.subjects[0..n) */
            return result("error", 3);
        }
        s->loaded = 1;
        S.nsubjects++;
        if (!S.root && !strcmp(S.backend_name, "jit") && i == 0) {
            char tmp[PATH_MAX];
            if (realpath(paths[i], tmp)) {
                *strrchr(tmp, '/') = 0;
                snprintf(S.root_prefix, sizeof S.root_prefix, "%s", tmp);
            }
        }
        fprintf(stderr, "tandem-player: loaded %s subject '%s' (%s) in %.3f ms\n", S.backend_name,
                s->mod.entry->subject, s->mod.entry->compiler, s->mod.compile_ns / 1e6);
    }
    /* --meter-functions: the loaded code's functions where callgrind sees no symbols (JIT) */
    td_backend_function *code_fns = NULL;
    size_t ncode_fns = 0;
    if (by_function && S.backend->functions && S.nsubjects == 1) {
        char err[4096];
        if (S.backend->functions(&S.subjects[0].mod, S.subjects[0].path, &opt, &code_fns, &ncode_fns, err,
                                 sizeof err)) {
            fprintf(stderr, "tandem-player: --meter-functions: cannot list the functions of %s:\n%s\n",
                    S.subjects[0].path, err);
            return result("error", 3);
        }
        pl_meter_code_functions(code_fns, ncode_fns, "jit");
        fprintf(stderr, "tandem-player: --meter-functions: %zu functions in the %s code\n", ncode_fns, S.backend_name);
    }
    if (list_only) {
        for (int i = 0; i < S.nsubjects; i++) {
            const td_player_module *e = S.subjects[i].mod.entry;
            printf("%s %s", e->subject, e->compiler);
            for (const char *const *q = e->suites; *q; q++) printf(" %s", *q);
            printf("\n");
        }
        return 0;
    }

    td_player_host host;
    memset(&host, 0, sizeof host);
    host.abi_version = TD_PLAYER_ABI_VERSION;
    host.size = sizeof host;
    host.backend = S.backend_name;
    host.samples = S.samples;
    host.ops_hint = S.ops;
    host.filter = S.filter;
    host.expect_cases = host_expect_cases;
    host.case_begin = host_case_begin;
    host.case_fail = host_case_fail;
    host.case_end = host_case_end;
    host.row = host_row;
    host.row_unsupported = host_row_unsupported;
    host.alloc_read = td_player_alloc_read;
    host.now_ns = host_now_ns;
    host.log = host_log;
    host.row_ext = host_row_ext;
    host.fail = host_fail;
    host.setting = host_setting;
    host.alloc_live_bytes = td_player_alloc_live_bytes;
    host.retention = S.retention ? S.retention : "matched";
    host.flow = S.flow;
    host.quick = S.quick;
    host.sample_shape = host_sample_shape;
    if (!is_smoke) pl_clock_calibrate(host_now_ns);
    if (icount) {
        host.meter_on = pl_meter_on;
        host.meter_off = pl_meter_off;
        host.meter_row = host_meter_row;
    }

    /* a case suite has no rows to skip; one subject has no other to skip them */
    if (S.skip_na_first && !is_smoke && !icount && S.nsubjects > 1 &&
        pl_skip_probe(S.subjects[0].mod.entry, S.suite, &host) == 0)
        host.row_wanted = host_row_wanted;
    int total = S.warmup + S.samples;
    for (int k = 0; k < total; k++) {
        int warm = k < S.warmup;
        S.measuring = !warm;
        S.record_cases = k == S.warmup;
        host.warmup_index = warm ? k : -1;
        host.sample_index = warm ? -1 : k - S.warmup;
        S.sample = host.sample_index;
        /* the instruction meter: one pass per meter slot (pass 0 records the rows) */
        for (int pass = 0; pass <= (icount && !warm ? pl_meter_max_slot() : 0); pass++) {
        S.measuring = !warm && pass == 0;
        S.metering = icount && !warm;
        if (icount) pl_meter_set_pass(warm ? -1 : pass);
        for (int j = 0; j < S.nsubjects; j++) {
            /* alternate the subject order between calls; with --load-reverse the last subject
             * runs first too (the warm-up's first allocations are its own) */
            int idx = ((k + S.load_reverse) % 2 == 0) ? j : S.nsubjects - 1 - j;
            pl_subject *s = &S.subjects[idx];
            if (s->suite_rc) continue;
            S.cur_subject = idx;
            host.subject = s->mod.entry->subject;
            int rc = s->mod.entry->run_suite(S.suite, &host, NULL);
            if (S.cur) { /* the suite returned inside a case */
                pl_case *c = S.cur;
                c->passed = 0;
                host_case_end(NULL, 0);
            }
            if (rc) {
                s->suite_rc = rc;
                fprintf(stderr, "tandem-player: subject '%s' suite '%s' returned %d%s\n", host.subject,
                        S.suite, rc, rc == TD_PLAYER_E_NO_SUITE ? " (suite not compiled in)" : "");
            }
        }
        }
    }
    if (icount) pl_meter_set_pass(-1);
    alarm(0);
    if (icount) {
        char merr[1024];
        if (pl_meter_collect(merr, sizeof merr)) {
            fprintf(stderr, "tandem-player: instruction meter: %s\n", merr);
            return result("error", 1);
        }
    }
    pl_meter_code_functions(NULL, 0, NULL);
    td_backend_functions_free(code_fns, ncode_fns);
    int passed = 0;
    if (write_report(is_smoke || S.ncases > 0, &passed)) return result("error", 1);
    for (int i = 0; i < S.nsubjects; i++) S.backend->unload(&S.subjects[i].mod);
    pl_skip_free();
    return passed ? result("pass", 0) : result("fail", 1);
}
