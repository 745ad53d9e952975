/* gate_selfcheck.c - `tandem gate --self-check`: synthetic runs built in a temporary folder,
 * with the expected verdict of each (a passing set, failing rows, every INVALID rule). */
#include "gate_int.h"

#include "tl_err.h"
#include "tl_fs.h"
#include "tl_json.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SC_SAMPLES 4
#define AOT_FLAGS "-std=gnu11 -O2 -DNDEBUG -fPIC"
#define JIT_FLAGS "libtcc TCC_OUTPUT_MEMORY -DNDEBUG (no optimiser)"

typedef struct sc_row { const char *suite, *name; } sc_row;
static const sc_row sc_rows[] = {
    { "primary", "Completed get-result" },
    { "primary", "NextFrame scheduling N=128" },
    { "primary", "Async method NextFrame get-result N=128 flow on" },
    { "builderlifecycle", "untyped 1 suspension N=128" },
    { "builderlifecycle", "untyped 1 suspension N=1" },
    { "throughput", "nextframe N=1024" },
    { "cancellation", "Cancel side-by-side untyped N=100" },
    { NULL, NULL }
};

/* Knobs of one synthetic set. */
typedef struct sc_knobs {
    double ratio;              /* A/B for every row */
    const char *slow_row;      /* this row gets slow_ratio */
    double slow_ratio;
    int fail_report;           /* the first report: completed false */
    int drop_row;              /* the first report lacks a row */
    int short_samples;         /* one row of the first report has a sample less */
    int mixed_build;           /* one jit report has another build id */
    int debug_build;           /* the first aot report: -O0 */
    int bad_arith;             /* a stated nsPerOp that does not match */
    int drop_process;          /* one report fewer */
    int garbage;               /* an unreadable report */
    int alloc;                 /* subject A allocates in a gated row */
    int default_retention;     /* add report-only default-retention processes */
} sc_knobs;

static void add_entry(cJSON *rows, const char *name, const char *subject, double nspo, int samples, int alloc,
                      double claim, int seed)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "subject", subject);
    cJSON_AddStringToObject(o, "name", name);
    cJSON_AddBoolToObject(o, "supported", 1);
    cJSON *ss = cJSON_AddArrayToObject(o, "samples");
    double sum = 0;
    for (int i = 0; i < samples; i++) {
        double jit = 1.0 + 0.01 * (double)((seed * 7 + i * 3) % 5 - 2);
        /* + seed: every process's samples differ (identical arrays are a replayed report) */
        double ops = 1000, ns = floor(nspo * ops * jit) + seed;
        cJSON *s = cJSON_CreateObject();
        cJSON_AddNumberToObject(s, "ns", ns);
        cJSON_AddNumberToObject(s, "ops", ops);
        cJSON_AddNumberToObject(s, "allocs", alloc ? 10 : 0);
        cJSON_AddNumberToObject(s, "frees", alloc ? 10 : 0);
        cJSON_AddNumberToObject(s, "bytes", alloc ? 640 : 0);
        cJSON_AddNumberToObject(s, "check", 0);
        cJSON_AddItemToArray(ss, s);
        sum += ns / ops;
    }
    cJSON_AddNumberToObject(o, "meanNsPerOp", isnan(claim) ? sum / samples : claim);
    cJSON_AddItemToArray(rows, o);
}

static int write_set(const char *dir, const sc_knobs *k)
{
    static const char *const suites[] = { "primary", "builderlifecycle", "throughput", "cancellation" };
    static const char *const backends[] = { "aot", "jit" };
    int idx = 0, first_aot = 1, first = 1, wrote_mixed = 0;
    for (int round = 0; round < 3; round++)
        for (int s = 0; s < (int)(sizeof suites / sizeof *suites); s++)
            for (int b = 0; b < 2; b++)
                for (int ret = 0; ret < (k->default_retention && round == 0 ? 2 : 1); ret++) {
                    idx++;
                    if (k->drop_process && idx == 5) continue;
                    char name[256];
                    snprintf(name, sizeof name, "%s/p%02d-%s-%s-r%d%s.json", dir, idx, suites[s], backends[b], round + 1,
                             ret ? "-default" : "");
                    cJSON *d = cJSON_CreateObject();
                    cJSON_AddNumberToObject(d, "schemaVersion", 1);
                    cJSON_AddStringToObject(d, "kind", "bench");
                    cJSON_AddStringToObject(d, "suite", suites[s]);
                    cJSON_AddStringToObject(d, "backend", backends[b]);
                    const char *bid = b ? "2222222222222222222222222222222222222222222222222222222222222222"
                                        : "1111111111111111111111111111111111111111111111111111111111111111";
                    if (k->mixed_build && b == 1 && round == 2 && !wrote_mixed) {
                        bid = "3333333333333333333333333333333333333333333333333333333333333333";
                        wrote_mixed = 1;
                    }
                    cJSON_AddStringToObject(d, "buildId", bid);
                    int debug = k->debug_build && b == 0 && first_aot;
                    cJSON_AddStringToObject(d, "flags", b ? JIT_FLAGS : debug ? "-std=gnu11 -O0 -g" : AOT_FLAGS);
                    if (b == 0) first_aot = 0;
                    cJSON *subs = cJSON_AddArrayToObject(d, "subjects");
                    cJSON_AddItemToArray(subs, cJSON_CreateString("tandem"));
                    cJSON_AddItemToArray(subs, cJSON_CreateString("peer"));
                    cJSON_AddBoolToObject(d, "completed", !(k->fail_report && first));
                    if (k->fail_report && first) cJSON_AddStringToObject(d, "failure", "validation: wrong sum");
                    else cJSON_AddNullToObject(d, "failure");
                    cJSON *set = cJSON_AddObjectToObject(d, "settings");
                    cJSON_AddStringToObject(set, "retention", ret ? "default" : "matched");
                    cJSON *env = cJSON_AddObjectToObject(d, "environment");
                    cJSON_AddStringToObject(env, "buildType", "Release");
                    cJSON_AddNumberToObject(d, "samples", SC_SAMPLES);
                    cJSON *rows = cJSON_AddArrayToObject(d, "rows");
                    for (int r = 0; sc_rows[r].suite; r++) {
                        if (strcmp(sc_rows[r].suite, suites[s])) continue;
                        if (k->drop_row && first && r == 0) continue;
                        double base = 20.0 + 5 * r + (b ? 40 : 0);
                        double ratio = k->slow_row && !strcmp(k->slow_row, sc_rows[r].name) ? k->slow_ratio : k->ratio;
                        int ns = SC_SAMPLES - (k->short_samples && first && r == 0 ? 1 : 0);
                        double claim = k->bad_arith && first && r == 0 ? 1.0 : NAN;
                        add_entry(rows, sc_rows[r].name, "tandem", base * ratio, ns, k->alloc && r == 1, claim, idx + r);
                        add_entry(rows, sc_rows[r].name, "peer", base, SC_SAMPLES, 0, NAN, idx * 3 + r);
                    }
                    first = 0;
                    char *t = cJSON_Print(d);
                    cJSON_Delete(d);
                    FILE *f = fopen(name, "w");
                    if (!f) { free(t); return 1; }
                    fputs(t, f);
                    fclose(f);
                    free(t);
                }
    if (k->garbage) {
        char name[256];
        snprintf(name, sizeof name, "%s/p99-garbage.json", dir);
        FILE *f = fopen(name, "w");
        if (!f) return 1;
        fputs("{ \"suite\": \"primary\", ", f);
        fclose(f);
    }
    return 0;
}

static int files_equal(const char *a, const char *b)
{
    char *x, *y;
    size_t lx, ly;
    if (tl_read_all(a, &x, &lx)) return 0;
    if (tl_read_all(b, &y, &ly)) { free(x); return 0; }
    int eq = lx == ly && !memcmp(x, y, lx);
    free(x);
    free(y);
    return eq;
}

typedef struct sc_case {
    const char *name;
    sc_knobs k;
    int expect;
    const char *needle; /* expected in an INVALID reason */
} sc_case;

int gate_self_check(int verbose, const char *keep)
{
    int failures = 0, n = 0;
    /* statistics */
    {
        double a[] = { 1, 2, 3 }, b[] = { 4, 5, 6 };
        gs_mw mw;
        gs_mann_whitney(a, 3, b, 3, &mw);
        int ok = mw.u_a == 0 && fabs(mw.p - 0.0808556) < 1e-4 && mw.effect == 1.0;
        double c[] = { 1, 1, 2, 2 }, d[] = { 1, 2, 2, 3 };
        gs_mann_whitney(c, 4, d, 4, &mw);
        ok &= fabs(mw.u_a - 5.0) < 1e-12 && fabs(mw.p - 0.429195) < 1e-4; /* var 10, z 0.7906 (scipy asymptotic, continuity) */
        double m[] = { 3, 1, 2, 10 };
        ok &= gs_median(m, 4) == 2.5 && gs_median(m, 3) == 2 && gs_mean(m, 4) == 4;
        ok &= gate_pattern_match("untyped N=1 x", "N=1") && !gate_pattern_match("untyped N=128", "N=1") &&
              gate_pattern_match("Async FLOW ON", "flow on");
        n++;
        if (!ok) { failures++; fprintf(stderr, "gate self-check: statistics: FAIL\n"); }
        else if (verbose) printf("gate self-check: statistics (median, Mann-Whitney, patterns): ok\n");
    }
    const sc_case cases[] = {
        { "passing set", { .ratio = 0.80 }, GATE_PASS, NULL },
        { "passing set with default retention", { .ratio = 0.80, .default_retention = 1 }, GATE_PASS, NULL },
        { "sync row at 0.98 passes (median <= 1.00)", { .ratio = 0.80, .slow_row = "Completed get-result", .slow_ratio = 0.98 }, GATE_PASS, NULL },
        { "failing row (0.98 > 0.95)", { .ratio = 0.80, .slow_row = "nextframe N=1024", .slow_ratio = 0.98 }, GATE_FAIL, NULL },
        { "failing sync row (1.10)", { .ratio = 0.80, .slow_row = "Completed get-result", .slow_ratio = 1.10 }, GATE_FAIL, NULL },
        { "report-only row slow: still PASS", { .ratio = 0.80, .slow_row = "untyped 1 suspension N=1", .slow_ratio = 2.0 }, GATE_PASS, NULL },
        { "allocation in steady state", { .ratio = 0.80, .alloc = 1 }, GATE_FAIL, NULL },
        { "INVALID: failed report", { .ratio = 0.80, .fail_report = 1 }, GATE_INVALID, "failed or incomplete" },
        { "INVALID: missing row", { .ratio = 0.80, .drop_row = 1 }, GATE_INVALID, "missing row" },
        { "INVALID: wrong sample count", { .ratio = 0.80, .short_samples = 1 }, GATE_INVALID, "wrong sample count" },
        { "INVALID: mixed build id", { .ratio = 0.80, .mixed_build = 1 }, GATE_INVALID, "mixed build id" },
        { "INVALID: non-release build", { .ratio = 0.80, .debug_build = 1 }, GATE_INVALID, "not a release build" },
        { "INVALID: arithmetic", { .ratio = 0.80, .bad_arith = 1 }, GATE_INVALID, "does not match" },
        { "INVALID: process count", { .ratio = 0.80, .drop_process = 1 }, GATE_INVALID, "process count" },
        { "INVALID: unreadable report", { .ratio = 0.80, .garbage = 1 }, GATE_INVALID, "not a readable report" },
    };
    const char *td = getenv("TMPDIR");
    char *tmpl = keep ? strdup(keep) : tl_join(td && *td ? td : "/tmp", "tandem-gate-selfcheck-XXXXXX");
    if (keep ? tl_mkdirs(tmpl) != 0 : !mkdtemp(tmpl)) {
        fprintf(stderr, "gate self-check: cannot create a temporary folder: %s\n", strerror(errno));
        free(tmpl);
        return 1;
    }
    gate_config cfg;
    gate_config_default(&cfg); /* subject tandem against every other subject (peer) */
    if (keep) { /* the configuration the kept cases are judged with, for `tandem gate --config` */
        char *cp = tl_join(tmpl, "gate-config.json");
        cJSON *cj = gate_config_json(&cfg);
        if (tl_json_save(cp, cj)) failures++;
        cJSON_Delete(cj);
        free(cp);
    }
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char dir[4096], out[4096];
        snprintf(dir, sizeof dir, "%s/case%02zu", tmpl, i);
        snprintf(out, sizeof out, "%s/case%02zu-out", tmpl, i);
        tl_mkdirs(dir);
        n++;
        if (write_set(dir, &cases[i].k)) { failures++; fprintf(stderr, "gate self-check: %s: cannot write\n", cases[i].name); continue; }
        gate_result res;
        char errbuf[512];
        tl_err_capture(errbuf, sizeof errbuf, 1); /* the garbage case's parse error is expected */
        gate_evaluate(dir, &cfg, &res);
        tl_err_capture(NULL, 0, 0);
        int ok = res.verdict == cases[i].expect;
        if (ok && cases[i].needle) {
            int found = 0;
            for (size_t k = 0; k < res.ninvalid; k++) found |= strstr(res.invalid[k], cases[i].needle) != NULL;
            ok = found;
        }
        if (!ok) {
            failures++;
            fprintf(stderr, "gate self-check: %s: got %s, expected %s%s%s\n", cases[i].name, gate_verdict_name(res.verdict),
                    gate_verdict_name(cases[i].expect), cases[i].needle ? " with " : "", cases[i].needle ? cases[i].needle : "");
            for (size_t k = 0; k < res.ninvalid; k++) fprintf(stderr, "    invalid: %s\n", res.invalid[k]);
        } else if (verbose) {
            printf("gate self-check: %s: %s ok\n", cases[i].name, gate_verdict_name(res.verdict));
        }
        /* outputs: written twice, byte-identical */
        if (i == 0 || i == 3) {
            char out2[4096];
            snprintf(out2, sizeof out2, "%s2", out);
            gate_result r2;
            gate_evaluate(dir, &cfg, &r2);
            int w = gate_write_outputs(out, &res) | gate_write_outputs(out2, &r2);
            gate_result_free(&r2);
            static const char *const names[] = { "gate.md", "gate-summary.json", "gate-chart.svg",
                                                 "gate-chart-full.svg" };
            int same = !w;
            for (int f = 0; f < 4 && same; f++) {
                char a[4200], b[4200];
                snprintf(a, sizeof a, "%s/%s", out, names[f]);
                snprintf(b, sizeof b, "%s/%s", out2, names[f]);
                same = files_equal(a, b);
            }
            n++;
            if (!same) { failures++; fprintf(stderr, "gate self-check: %s: outputs differ between two runs\n", cases[i].name); }
            else if (verbose) printf("gate self-check: %s: outputs byte-identical across runs\n", cases[i].name);
        }
        gate_result_free(&res);
    }
    if (!failures && !keep) tl_rm_rf(tmpl);
    else fprintf(stderr, "gate self-check: kept %s\n", tmpl);
    free(tmpl);
    printf("gate self-check: %d checks, %d failed\n", n, failures);
    return failures ? 1 : 0;
}
