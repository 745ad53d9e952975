/*
 * report.c - the player's JSON report (one per process): the subjects and what they
 * compiled, the cases (smoke), the rows with their samples and statistics (stats.c), the
 * meters (meter.c, clock.c), the process's allocations, and for a bench report its
 * settings, environment and completeness. `tandem smoke`, `bench` and `gate` read it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <openssl/evp.h>

#include "meter.h"
#include "run.h"

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
    if (pl_run.build_id) {
        snprintf(out, len, "%s", pl_run.build_id);
        return;
    }
    char dir[PATH_MAX];
    if (!realpath(pl_run.subjects[0].path, dir)) snprintf(dir, sizeof dir, "%s", pl_run.subjects[0].path);
    for (int up = 0; up < 2; up++) {
        char *slash = strrchr(dir, '/');
        if (!slash) break;
        *slash = 0;
        char p[PATH_MAX + 64];
        snprintf(p, sizeof p, "%s/build-id-%s", dir, pl_run.backend_name);
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
    sha256_file(pl_run.subjects[0].path, hex, sizeof hex);
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
    cJSON_AddStringToObject(st, "retention", pl_run.retention ? pl_run.retention : "matched");
    cJSON_AddStringToObject(st, "flow", pl_run.flow ? "on" : "off");
    cJSON_AddBoolToObject(st, "quick", pl_run.quick);
    cJSON_AddStringToObject(st, "loadOrder", pl_run.load_reverse ? "reverse" : "forward");
    cJSON_AddNumberToObject(st, "layoutSeed", (double)pl_run.layout_seed);
    cJSON_AddNumberToObject(st, "heapOffset", pl_run.heap_offset);
    cJSON_AddStringToObject(st, "subjectThreads", pl_run.own_threads ? "own" : "shared");
    cJSON_AddNumberToObject(st, "samples", pl_run.samples);
    cJSON_AddNumberToObject(st, "warmup", pl_run.warmup);
    if (pl_run.settings) {
        cJSON_AddItemToObject(st, "subjects", pl_run.settings);
        pl_run.settings = NULL;
    }
    cJSON *env = cJSON_AddObjectToObject(root, "environment");
    char host[256] = "", cpu[256] = "";
    gethostname(host, sizeof host);
    read_first_line_matching("/proc/cpuinfo", "model name", cpu, sizeof cpu);
    cJSON_AddStringToObject(env, "host", host);
    cJSON_AddStringToObject(env, "cpu", cpu);
    cJSON_AddNumberToObject(env, "cpus", (double)sysconf(_SC_NPROCESSORS_ONLN));
    cJSON_AddStringToObject(env, "compiler", pl_run.backend->identity());
    cJSON_AddStringToObject(env, "optimisationFlags", pl_run.backend->flags());
#if defined(__clang__)
    cJSON_AddStringToObject(env, "shellCompiler", "clang " __clang_version__);
#elif defined(__GNUC__)
    cJSON_AddStringToObject(env, "shellCompiler", "gcc " __VERSION__);
#endif
    int completed = passed && pl_run.nfailures == 0 && pl_run.nrows > 0;
    const char *why = NULL;
    char msg[512];
    for (size_t i = 0; i < pl_run.nrows && completed; i++) {
        const pl_row *r = &pl_run.rows[i];
        if (r->unsupported) continue;
        if (r->nraw != (size_t)pl_run.samples) {
            completed = 0;
            snprintf(msg, sizeof msg, "row '%s' of '%s' has %zu samples, %d expected", r->name, r->subject,
                     r->nraw, pl_run.samples);
            why = msg;
        }
    }
    if (!passed && !why) why = "a suite did not run";
    if (pl_run.nrows == 0 && !why) why = "no rows reported";
    cJSON_AddBoolToObject(root, "completed", completed);
    cJSON_DeleteItemFromObjectCaseSensitive(root, "failure");
    if (pl_run.fail_message) {
        cJSON *f = cJSON_AddObjectToObject(root, "failure");
        cJSON_AddStringToObject(f, "subject", pl_run.fail_subject);
        cJSON_AddStringToObject(f, "row", pl_run.fail_row);
        cJSON_AddStringToObject(f, "message", pl_run.fail_message);
        cJSON_AddNumberToObject(f, "count", pl_run.nfailures);
    } else if (!completed) {
        cJSON *f = cJSON_AddObjectToObject(root, "failure");
        cJSON_AddStringToObject(f, "message", why ? why : "incomplete");
    } else {
        cJSON_AddNullToObject(root, "failure");
    }
    return completed;
}

/* The subjects and what each compiled; 0 when a suite did not run in one (*why says so). */
static int subjects_json(cJSON *root, const char **why)
{
    cJSON *subs = cJSON_AddArrayToObject(root, "subjects");
    int passed = 1;
    for (int i = 0; i < pl_run.nsubjects; i++) {
        const pl_subject *s = &pl_run.subjects[i];
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
            if (!*why) *why = "suite did not run";
        }
    }
    return passed;
}

/* The cases, "passed" and "failure": the first failed case, else a missing case or a suite
 * that did not run (why). Returns the verdict. */
static int cases_json(cJSON *root, int is_smoke, int passed, const char *why)
{
    cJSON *cases = cJSON_CreateArray();
    const pl_case *first = NULL;
    for (size_t i = 0; i < pl_run.ncases; i++) {
        const pl_case *c = &pl_run.cases[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", c->name);
        if (pl_run.nsubjects > 1) cJSON_AddStringToObject(o, "subject", c->subject);
        cJSON_AddBoolToObject(o, "passed", c->passed);
        cJSON_AddItemToObject(o, "failure", failure_json(c));
        cJSON_AddNumberToObject(o, "ns", (double)c->ns);
        cJSON_AddItemToArray(cases, o);
        if (!c->passed && !first) first = c;
    }
    size_t per_subject = pl_run.nsubjects ? pl_run.ncases / (size_t)pl_run.nsubjects : 0;
    int count_ok = !is_smoke || pl_run.expected_cases <= 0 || (pl_run.filter && pl_run.filter[0]) ||
                   (pl_run.ncases % (size_t)pl_run.nsubjects == 0 && per_subject == (size_t)pl_run.expected_cases);
    if (first) passed = 0;
    if (!count_ok) passed = 0;
    if (is_smoke && pl_run.ncases == 0) passed = 0;
    cJSON_AddBoolToObject(root, "passed", passed);
    if (first) {
        cJSON *f = failure_json(first);
        cJSON_AddStringToObject(f, "case", first->name);
        cJSON_AddItemToObject(root, "failure", f);
    } else if (!passed) {
        cJSON *f = cJSON_CreateObject();
        char msg[128];
        if (why) snprintf(msg, sizeof msg, "%s", why);
        else snprintf(msg, sizeof msg, "%zu cases reported, %d expected", per_subject, pl_run.expected_cases);
        cJSON_AddStringToObject(f, "case", "");
        cJSON_AddStringToObject(f, "file", "");
        cJSON_AddNumberToObject(f, "line", 0);
        cJSON_AddStringToObject(f, "expected", is_smoke ? "all expected cases reported" : "suite ran");
        cJSON_AddStringToObject(f, "actual", msg);
        cJSON_AddItemToObject(root, "failure", f);
    } else {
        cJSON_AddNullToObject(root, "failure");
    }
    if (is_smoke || pl_run.ncases) cJSON_AddItemToObject(root, "cases", cases);
    else cJSON_Delete(cases);
    return passed;
}

/* The rows: their samples, and in a bench report their statistics and instructions. */
static void rows_json(cJSON *root, int is_smoke)
{
    cJSON_AddNumberToObject(root, "samples", pl_run.samples);
    cJSON_AddNumberToObject(root, "warmup", pl_run.warmup);
    cJSON *rows = cJSON_AddArrayToObject(root, "rows");
    for (size_t i = 0; i < pl_run.nrows; i++) {
        pl_row *r = &pl_run.rows[i];
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
            pl_meter_row_json(o, i, ops, pl_run.samples);
        }
        cJSON_AddItemToArray(rows, o);
    }
}

static void allocations_json(cJSON *root)
{
    td_player_alloc_counts ac;
    td_player_alloc_read(&ac);
    cJSON *a = cJSON_AddObjectToObject(root, "processAllocations");
    cJSON_AddNumberToObject(a, "allocs", (double)ac.allocs);
    cJSON_AddNumberToObject(a, "reallocs", (double)ac.reallocs);
    cJSON_AddNumberToObject(a, "frees", (double)ac.frees);
    cJSON_AddNumberToObject(a, "bytes", (double)ac.bytes);
}

/* root (deleted here) into --out, else smoke-<backend>.json / <suite>-<backend>.json. */
static int write_json(cJSON *root)
{
    char defname[256];
    const char *out = pl_run.out;
    if (!out) {
        if (!strcmp(pl_run.suite, "smoke")) snprintf(defname, sizeof defname, "smoke-%s.json", pl_run.backend_name);
        else snprintf(defname, sizeof defname, "%s-%s.json", pl_run.suite, pl_run.backend_name);
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
    return rc;
}

int pl_report_write(int is_smoke, int *passed_out)
{
    char bid[256];
    resolve_build_id(bid, sizeof bid);
    cJSON *root = cJSON_CreateObject();
    cJSON_AddNumberToObject(root, "schemaVersion", 1);
    cJSON_AddStringToObject(root, "kind", is_smoke ? "smoke" : "bench");
    cJSON_AddStringToObject(root, "suite", pl_run.suite);
    cJSON_AddStringToObject(root, "backend", pl_run.backend_name);
    cJSON_AddStringToObject(root, "buildId", bid);
    cJSON_AddStringToObject(root, "compiler", pl_run.backend->identity());
    cJSON_AddStringToObject(root, "flags", pl_run.backend->flags());

    const char *why = NULL;
    int passed = subjects_json(root, &why);
    if (is_smoke) cJSON_AddNumberToObject(root, "expectedCaseCount", pl_run.expected_cases);
    passed = cases_json(root, is_smoke, passed, why);
    if (!is_smoke || pl_run.nrows) rows_json(root, is_smoke);
    if (!is_smoke) {
        /* a bench report passes only when complete and validated */
        passed = bench_report(root, passed);
        cJSON_DeleteItemFromObjectCaseSensitive(root, "passed");
        cJSON_AddBoolToObject(root, "passed", passed);
    }
    if (!is_smoke) pl_meter_report_json(root);
    if (!is_smoke) pl_clock_report_json(root);
    allocations_json(root);
    *passed_out = passed;
    return write_json(root);
}
