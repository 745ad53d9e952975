/*
 * smoke.c - `tandem smoke`: the 42 semantic cases on both players.
 *
 * Stages the working tree (or takes --staging), builds the AOT and JIT players for the
 * `tandem` subject with the smoke suite (or reuses --players-from under the reuse rule),
 * runs each player once, reads the two smoke-<backend>.json reports and prints one table
 * with a row per case and a column per backend.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cjson/cJSON.h>
#include "tl_err.h"
#include "tl_fs.h"
#include "tl_home.h"
#include "tl_json.h"
#include "tl_manifest.h"
#include "tl_opt.h"
#include "tl_out.h"
#include "tl_proc.h"
#include "tl_project.h"

#include "ci_out.h"
#include "stage/stage_project.h"

int td_verb_build(int argc, char **argv);

static const tl_opt smoke_opts[] = {
    { "out", 0, TL_OPT_PATH, "DIR", 0, 0, "output folder (default out/smoke)" },
    { "staging", 0, TL_OPT_PATH, "DIR", 0, 0, "a staging folder (default: stage the project into DIR/staging)" },
    { "project", 0, TL_OPT_PATH, "DIR", 0, 0, "the project (its tandem.json): its smoke suite on its gate subject\n"
      "(default: the nearest tandem.json upward, else Tandem's)" },
    { "players-from", 0, TL_OPT_PATH, "DIR", 0, 0, "reuse DIR/aot and DIR/jit when the reuse rule allows it" },
    { "backend", 0, TL_OPT_STR, "B", 0, 0, "aot, jit or both (default both)" },
    { "filter", 0, TL_OPT_STR, "TEXT", 0, 0, "only cases whose name contains TEXT (the 42-case count is\n"
      "then not required)" },
    { "quiet", 0, TL_OPT_FLAG, NULL, 0, 0, "nothing on stdout: errors on stderr, the exit code says the rest" },
    { "json", 0, TL_OPT_FLAG, NULL, 0, 0, "stdout: one line, the summary object (exit code, verdict,\nreports); what it prints otherwise goes to stderr" },
    { NULL, 0, 0, NULL, 0, 0, NULL }
};

static const tl_optspec smoke_spec = {
    "tandem smoke", "[--project DIR] [--out DIR] [--staging DIR] [--players-from DIR]\n[--backend aot|jit|both] [--filter TEXT]",
    "Run the project's smoke suite (Tandem's: the 42 cases of SMOKE.md on subject tandem)\n"
    "on the AOT and JIT players and print a per-case table. Reports: DIR/smoke-aot.json,\n"
    "DIR/smoke-jit.json, and for CI servers DIR/smoke-junit.xml (JUnit: one testcase per case\n"
    "per backend).",
    smoke_opts, "exit: 0 every case passed on every backend, 1 a case failed or a step failed, 2 usage", 0, 0
};

/* Build or reuse the player folder for one backend; returns its path in dir. */
static int smoke_player(const char *backend, const char *out, const char *staging, const char *players_from,
                        const char *subject, const char *suite, char *dir, size_t dirlen)
{
    if (players_from) {
        char why[512];
        snprintf(dir, dirlen, "%s/%s", players_from, backend);
        if (tl_players_reusable(dir, staging, why, sizeof why)) {
            printf("tandem smoke: reusing %s (%s)\n", dir, why);
            return 0;
        }
        tl_error(dir, NULL, "players not reusable: %s; rebuild instead (drop --players-from)", why);
        return 1;
    }
    snprintf(dir, dirlen, "%s/%s", out, backend);
    fflush(stdout);
    char *argv[] = { "build", "--backend", (char *)backend, "--out", dir, "--staging", (char *)staging,
                     "--subject", (char *)subject, "--suite", (char *)suite, NULL };
    return td_verb_build(11, argv) != 0;
}

/* One column of the table: the cases of a report, in order. */
typedef struct smoke_column {
    const char *backend;
    cJSON *doc;
    const cJSON *cases;
    int passed;
} smoke_column;

static const char *smoke_cell(const smoke_column *c, const char *name, char *buf, size_t len)
{
    const cJSON *it;
    if (!c->cases)
        return "-";
    cJSON_ArrayForEach(it, c->cases) {
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(it, "name");
        if (!cJSON_IsString(n) || strcmp(n->valuestring, name))
            continue;
        if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(it, "passed")))
            return "pass";
        const cJSON *f = cJSON_GetObjectItemCaseSensitive(it, "failure");
        const cJSON *file = cJSON_GetObjectItemCaseSensitive(f, "file");
        const cJSON *line = cJSON_GetObjectItemCaseSensitive(f, "line");
        snprintf(buf, len, "FAIL %s:%d", cJSON_IsString(file) ? file->valuestring : "?",
                 cJSON_IsNumber(line) ? line->valueint : 0);
        return buf;
    }
    return "missing";
}

static void smoke_print_table(smoke_column *cols, int ncols)
{
    const cJSON *names = NULL;
    for (int i = 0; i < ncols && !names; i++)
        names = cols[i].cases;
    printf("\n%-3s %-56s", "#", "case");
    for (int i = 0; i < ncols; i++)
        printf(" %-22s", cols[i].backend);
    printf("\n");
    int k = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, names) {
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(it, "name");
        if (!cJSON_IsString(n))
            continue;
        printf("%-3d %-56s", ++k, n->valuestring);
        for (int i = 0; i < ncols; i++) {
            char buf[300];
            printf(" %-22s", smoke_cell(&cols[i], n->valuestring, buf, sizeof buf));
        }
        printf("\n");
    }
    for (int i = 0; i < ncols; i++) {
        int total = cols[i].cases ? cJSON_GetArraySize(cols[i].cases) : 0, ok = 0;
        cJSON_ArrayForEach(it, cols[i].cases)
            ok += cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(it, "passed"));
        /* the suite's own count (Tandem's smoke: 42; a project's other suite: its own) */
        const cJSON *want = cols[i].doc ? cJSON_GetObjectItemCaseSensitive(cols[i].doc, "expectedCaseCount") : NULL;
        printf("%s: %d/%d cases passed (%d expected): %s\n", cols[i].backend, ok, total,
               cJSON_IsNumber(want) ? want->valueint : 42, cols[i].passed ? "PASS" : "FAIL");
    }
}

/* --json: per backend its report, whether it passed, its case count and failing cases. */
static void smoke_summary(const char *out, const smoke_column *cols, int nb)
{
    cJSON *sum = tl_out_summary();
    for (int b = 0; sum && b < nb; b++) {
        cJSON *o = cJSON_AddObjectToObject(sum, cols[b].backend), *failing = NULL;
        char name[64];
        snprintf(name, sizeof name, "smoke-%s.json", cols[b].backend);
        char *rp = tl_join(out, name), *abs = rp ? tl_abspath(rp) : NULL;
        cJSON_AddStringToObject(o, "report", abs ? abs : "");
        cJSON_AddBoolToObject(o, "passed", cols[b].passed);
        cJSON_AddNumberToObject(o, "cases", cJSON_GetArraySize(cols[b].cases));
        failing = cJSON_AddArrayToObject(o, "failedCases");
        const cJSON *c;
        cJSON_ArrayForEach(c, cols[b].cases)
            if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "passed")))
                cJSON_AddItemToArray(failing, cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(c, "name"), 1));
        free(rp);
        free(abs);
    }
    char *jp = sum ? tl_join(out, "smoke-junit.xml") : NULL, *abs = jp ? tl_abspath(jp) : NULL;
    if (abs) cJSON_AddStringToObject(sum, "junit", abs);
    free(jp);
    free(abs);
}

static int smoke_run(const char *out, const char *staging, const char *players_from, const char *which,
                     const char *filter, const char *project);

int td_verb_smoke(int argc, char **argv)
{
    tl_optres o;
    int prc = tl_opt_parse(&smoke_spec, argc, argv, &o);
    if (prc) { tl_opt_free(&o); return prc == TL_OPT_HELP ? 0 : 2; }
    const char *out = tl_opt_str(&o, "out", "out/smoke"), *staging = tl_opt_str(&o, "staging", NULL);
    const char *players_from = tl_opt_str(&o, "players-from", NULL), *which = tl_opt_str(&o, "backend", "both");
    const char *filter = tl_opt_str(&o, "filter", NULL);
    const char *project = tl_opt_str(&o, "project", NULL);
    int quiet = tl_opt_given(&o, "quiet") > 0, json = tl_opt_given(&o, "json") > 0;
    tl_opt_free(&o);
    if (tl_out_begin("tandem smoke", quiet, json)) return 2;
    return tl_out_end(smoke_run(out, staging, players_from, which, filter, project));
}

/* The verb after its options: stage, build or reuse, run, table, reports. */
static int smoke_run(const char *out, const char *staging, const char *players_from, const char *which,
                     const char *filter, const char *project)
{
    /* the project's smoke suite, run on its gate subject */
    char subject[64], suite[64];
    {
        tl_project p;
        int bad = tl_project_open(project, tl_home(), &p);
        if (!bad && !p.smoke) {
            tl_error(p.file, "smoke", "the project names no smoke suite");
            bad = 1;
        }
        if (!bad) {
            snprintf(subject, sizeof subject, "%s", p.gate_subject);
            snprintf(suite, sizeof suite, "%s", p.smoke);
        }
        tl_project_free(&p);
        if (bad) return 1;
    }
    if (strcmp(which, "aot") && strcmp(which, "jit") && strcmp(which, "both")) {
        tl_error(NULL, "--backend", "'%s' is not aot, jit or both", which);
        return 2;
    }
    if (tl_mkdirs(out)) {
        tl_error(out, NULL, "cannot create the output folder");
        return 1;
    }
    char staged[4096];
    if (!staging) {
        snprintf(staged, sizeof staged, "%s/staging", out);
        if (stage_project_run(project, staged) != 0)
            return 1;
        staging = staged;
    }
    const char *backends[2];
    int nb = 0;
    if (strcmp(which, "jit")) backends[nb++] = "aot";
    if (strcmp(which, "aot")) backends[nb++] = "jit";
    smoke_column cols[2];
    memset(cols, 0, sizeof cols);
    int failed = 0, reports = 0;
    for (int b = 0; b < nb; b++) {
        char dir[4096], report[4200];
        cols[b].backend = backends[b];
        if (smoke_player(backends[b], out, staging, players_from, subject, suite, dir, sizeof dir)) {
            failed = 1;
            continue;
        }
        snprintf(report, sizeof report, "%s/smoke-%s.json", out, backends[b]);
        const char *const by_name[] = { "--filter", filter, NULL };
        int rc = tl_run_player(dir, backends[b], subject, suite, report, filter ? by_name : NULL);
        if (tl_json_load(report, &cols[b].doc) != 0) {
            tl_error(report, NULL, "no readable report (player exit %d)", rc);
            failed = 1;
            continue;
        }
        reports++;
        cols[b].cases = tl_json_field(report, cols[b].doc, "", "cases", cJSON_Array, "array");
        int passed = 0;
        if (tl_json_bool(report, cols[b].doc, "", "passed", &passed) != 0)
            failed = 1;
        cols[b].passed = passed && rc == 0;
        if (!cols[b].passed)
            failed = 1;
    }
    smoke_print_table(cols, nb);
    if (reports == nb && td_ci_smoke(out, backends, nb)) failed = 1;   /* failing cases too */
    smoke_summary(out, cols, nb);
    for (int b = 0; b < nb; b++)
        cJSON_Delete(cols[b].doc);
    return failed ? 1 : 0;
}
