/*
 * bench.c - `tandem bench`: one benchmark suite in one player process.
 *
 * Stages the working tree (or takes --staging), builds the player of the backend with
 * every subject and the five bench suites (or reuses WORK/<backend> when the reuse rule
 * allows it: staged sources byte-identical, binaries matching their manifest), runs ONE
 * tandem-player process for the chosen subjects, writes its JSON report (SUITES.md) and
 * prints a table: row, ns/op per subject, tandem/peer ratios, allocations per op; then, for
 * rows that state a control they do not subtract, their cost over it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cjson/cJSON.h>

#include "baseline/baseline.h"
#include "bench_icount.h"
#include "gate/gate.h"
#include "tl_err.h"
#include "tl_fs.h"
#include "tl_home.h"
#include "tl_out.h"
#include "tl_json.h"
#include "tl_manifest.h"
#include "tl_opt.h"
#include "tl_proc.h"
#include "tl_project.h"

#include "stage/stage_project.h"

int td_verb_build(int argc, char **argv);
int td_baseline_bench_verdict(const gate_config *cfg, const cJSON *doc, int instructions, const char *suite,
                              const char *backend, const char *subject, const char *base);

#define BENCH_MAX_SUBJECTS 8

static const tl_opt bench_opts[] = {
    { "suite", 0, TL_OPT_STR, "S", 0, 0, "the suite" },
    { "backend", 0, TL_OPT_STR, "B", 0, 0, "aot (clang -O2 modules) or jit (libtcc at start-up)" },
    { "subjects", 0, TL_OPT_STR, "LIST", 0, 0, "comma-separated subjects (default: the project's, its gate subject\n"
      "first; Tandem's: tandem,callback,fcontext,ucontext);\n"
      "the first is compared with each of the others" },
    { "subject", 0, TL_OPT_STR, "S", 0, 0, "one subject; repeat for more (instead of --subjects)" },
    { "meter", 0, TL_OPT_STR, "M", 0, 0, "time (default): one process, ns/op; instructions: one valgrind\n"
      "callgrind process per subject, collection on only inside the\n"
      "timed segments; per row and subject: instructions, locked\n"
      "instructions, indirect calls and calls per op (report-only,\n"
      "deterministic); reports under WORK/icount/, summary at --out or\n"
      "WORK/icount/<suite>-<backend>-instructions.json; default samples 2" },
    { "retention", 0, TL_OPT_STR, "R", 0, 0, "matched (default: pools raised to each 1,024/4,096 cohort) or default" },
    { "flow", 0, TL_OPT_STR, "on|off", 0, 0, "context flow for rows without their own flow arm (default off)" },
    { "samples", 0, TL_OPT_INT, "N", 1, 1000000, "measured samples (default 8; --quick 2; instructions: at most 64)" },
    { "warmup", 0, TL_OPT_INT, "N", 0, 1000000, "warm-up calls (default 1)" },
    { "out", 0, TL_OPT_PATH, "FILE", 0, 0, "the report (default WORK/<suite>-<backend>.json)" },
    { "work", 0, TL_OPT_PATH, "DIR", 0, 0, "staging and players (default out/bench); players are reused\n"
      "from WORK/<backend> when the reuse rule allows it" },
    { "staging", 0, TL_OPT_PATH, "DIR", 0, 0, "an existing staging folder (default: stage the project)" },
    { "project", 0, TL_OPT_PATH, "DIR", 0, 0, "the project staged (its tandem.json) and its subjects, the gate's\n"
      "first (default: the nearest tandem.json upward, else Tandem's)" },
    { "quick", 0, TL_OPT_FLAG, NULL, 0, 0, "few samples, small N (tests)" },
    { "filter", 0, TL_OPT_STR, "TEXT", 0, 0, "only rows whose name contains TEXT" },
    { "functions", 0, TL_OPT_INT, "N", 1, 1000, "with --meter instructions: each row's instructions by function\n"
      "too (self instructions per op: AOT under callgrind's names, JIT\n"
      "under the TU's own, placed from a tcc object of it; \"functions\" in\n"
      "the reports), the first N printed per row and subject" },
    { "timeout", 0, TL_OPT_INT, "SEC", 1, 86400, "player timeout (default 1200)" },
    { "baseline", 0, TL_OPT_STR, "REV", 0, 0, "also measure the project's runtime at git revision REV (of the\n"
      "repository holding the project, or the --staging folder's source) as\n"
      "the subject <gate subject>@<7-hex>: REV's runtime.sources, include\n"
      "(and port, contract when the project's folder holds them), the same\n"
      "harness, suites and shell (WORK/baseline-<7-hex>/, reused under the\n"
      "reuse rule), in the same process (instructions: its own callgrind\n"
      "process); default subjects then the gate subject only; prints the\n"
      "baseline verdict; exit 3 on a regression, 1 when REV does not exist,\n"
      "a runtime folder lies outside the project's folder (not in REV), or\n"
      "it cannot be built as a subject" },
    { "quiet", 0, TL_OPT_FLAG, NULL, 0, 0, "nothing on stdout: errors on stderr, the exit code says the rest" },
    { "json", 0, TL_OPT_FLAG, NULL, 0, 0, "stdout: one line, the summary object (exit code, verdict,\nreports); what it prints otherwise goes to stderr" },
    { NULL, 0, 0, NULL, 0, 0, NULL }
};

static const tl_optspec bench_spec = {
    "tandem bench", "--suite S --backend aot|jit [--subjects a,b,... | --subject a ...]\n"
    "[--meter time|instructions]\n"
    "[--retention matched|default] [--flow on|off] [--samples N]\n"
    "[--out FILE] [--work DIR] [--staging DIR] [--quick] [--filter TEXT] [--baseline REV]\n"
    "[--functions N]",
    "Run one benchmark suite of the project (Tandem's: primary, builderlifecycle, throughput,\n"
    "whenany, buildercycle, cancellation; SUITES.md; any suite of tandem.json but its smoke and\n"
    "demo suites) in one player process and write its JSON report. Rows that state a control\n"
    "beside their time without subtracting it (cancellation) get a second table: their cost\n"
    "over it, the median of (ns - controlNs) / op.",
    bench_opts, "exit: 0 a complete, validated report (with --baseline: and no regression against it);\n"
    "1 a failed or incomplete run, or a baseline that cannot be built; 2 usage; 3 --baseline: a gated\n"
    "row is a regression (time: ratio > 1.02; instructions: > 1.005)", 0, 0
};

/* The player folder has every subject and the suite built in. */
static int bench_player_has(const char *dir, const char *backend, const char *suite, char **subjects, int nsub)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/player-%s.json", dir, backend);
    cJSON *d = NULL;
    if (!tl_is_file(path) || tl_json_load(path, &d)) return 0;
    int ok = 0;
    const cJSON *su = cJSON_GetObjectItemCaseSensitive(d, "suites"), *it;
    cJSON_ArrayForEach(it, su) ok |= cJSON_IsString(it) && !strcmp(it->valuestring, suite);
    const cJSON *sb = cJSON_GetObjectItemCaseSensitive(d, "subjects");
    for (int i = 0; i < nsub && ok; i++) {
        int found = 0;
        const cJSON *it;
        cJSON_ArrayForEach(it, sb) {
            const cJSON *n = cJSON_GetObjectItemCaseSensitive(it, "name");
            found |= cJSON_IsString(n) && !strcmp(n->valuestring, subjects[i]);
        }
        ok = found;
    }
    cJSON_Delete(d);
    return ok;
}

/* The players of WORK/<backend>: the project's measured suites (its suites but the smoke
 * and demo suites), every subject; reused when the reuse rule allows and they hold the
 * suite and the subjects. */
static int bench_player(const char *backend, const char *work, const char *staging, const char *suite,
                        const char *const *measured, char **subjects, int nsub, char *dir, size_t dirlen)
{
    char why[512];
    snprintf(dir, dirlen, "%s/%s", work, backend);
    if (tl_is_dir(dir) && tl_players_reusable(dir, staging, why, sizeof why) &&
        bench_player_has(dir, backend, suite, subjects, nsub)) {
        printf("tandem bench: reusing %s (%s)\n", dir, why);
        return 0;
    }
    fflush(stdout);
    char *argv[8 + 2 * TL_PROJECT_MAX + 1];
    int n = 0;
    argv[n++] = "build";
    argv[n++] = "--backend";
    argv[n++] = (char *)backend;
    argv[n++] = "--out";
    argv[n++] = dir;
    argv[n++] = "--staging";
    argv[n++] = (char *)staging;
    for (int i = 0; measured[i]; i++) {   /* at most TL_PROJECT_MAX */
        argv[n++] = "--suite";
        argv[n++] = (char *)measured[i];
    }
    argv[n] = NULL;
    return td_verb_build(n, argv) != 0;
}

/* ---- the table ---- */

static const cJSON *bench_row(const cJSON *rows, const char *subject, const char *name)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, rows) {
        const cJSON *s = cJSON_GetObjectItemCaseSensitive(it, "subject");
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(it, "name");
        if (cJSON_IsString(s) && cJSON_IsString(n) && !strcmp(s->valuestring, subject) &&
            !strcmp(n->valuestring, name))
            return it;
    }
    return NULL;
}

static double bench_num(const cJSON *row, const char *key)
{
    const cJSON *v = row ? cJSON_GetObjectItemCaseSensitive(row, key) : NULL;
    return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

/* An integer of a report's sample arrays: a number, or a string where it can exceed 2^53. */
static double bench_sample_value(const cJSON *v)
{
    if (cJSON_IsNumber(v)) return v->valuedouble;
    return cJSON_IsString(v) ? strtod(v->valuestring, NULL) : -1;
}

static int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* A row's cost over the control it states beside its time without subtracting it (the
 * cancellation suite: a cancelled group over the same group completed normally, a raced
 * frame over an idle one): the median over samples of (ns - controlNs) / ops, which may be
 * negative (cancelling cheaper than completing). -1 when the row states no such control. */
static int bench_over_control(const cJSON *row, double *out)
{
    if (!row || !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(row, "supported")) ||
        !cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(row, "controlSubtracted")))
        return -1;
    const cJSON *ns = cJSON_GetObjectItemCaseSensitive(row, "ns"), *ctl = cJSON_GetObjectItemCaseSensitive(row, "controlNs");
    const cJSON *ops = cJSON_GetObjectItemCaseSensitive(row, "ops");
    int n = cJSON_GetArraySize(ns);
    if (n <= 0 || n > 100000 || cJSON_GetArraySize(ctl) != n || cJSON_GetArraySize(ops) != n) return -1;
    double *per = malloc((size_t)n * sizeof *per);
    if (!per) return -1;
    for (int i = 0; i < n; i++) {
        double t = bench_sample_value(cJSON_GetArrayItem(ns, i)), c = bench_sample_value(cJSON_GetArrayItem(ctl, i));
        double o = bench_sample_value(cJSON_GetArrayItem(ops, i));
        if (!(c > 0) || !(o > 0) || t < 0) {
            free(per);
            return -1;
        }
        per[i] = (t - c) / o;
    }
    qsort(per, (size_t)n, sizeof *per, bench_cmp_double);
    *out = n % 2 ? per[n / 2] : (per[n / 2 - 1] + per[n / 2]) / 2;
    free(per);
    return 0;
}

/* The rows that state an unsubtracted control, with their cost over it per subject. */
static void bench_print_over_control(const cJSON *doc, char **subjects, int nsub)
{
    const cJSON *rows = cJSON_GetObjectItemCaseSensitive(doc, "rows"), *it;
    int header = 0;
    cJSON_ArrayForEach(it, rows) {
        const cJSON *s = cJSON_GetObjectItemCaseSensitive(it, "subject");
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(it, "name");
        double v;
        if (!cJSON_IsString(s) || !cJSON_IsString(n) || strcmp(s->valuestring, subjects[0]) || bench_over_control(it, &v))
            continue;
        if (!header) {
            printf("\nover the stated control (median of (ns - controlNs) / op; Cancel: the cost per cancelled "
                   "method, Race: per frame over an idle frame)\n%-50s   ", "row");
            for (int i = 0; i < nsub; i++) printf(" %11.11s", subjects[i]);
            printf("\n");
            header = 1;
        }
        printf("%-50.50s   ", n->valuestring);
        for (int i = 0; i < nsub; i++) {
            if (bench_over_control(bench_row(rows, subjects[i], n->valuestring), &v)) printf(" %11s", "NA");
            else printf(" %11.2f", v);
        }
        printf("\n");
    }
}

/* primary: ratio of means (nsPerOp); other suites: median of per-sample values. */
static void bench_print_table(const cJSON *doc, const char *suite, char **subjects, int nsub)
{
    const cJSON *rows = cJSON_GetObjectItemCaseSensitive(doc, "rows");
    const char *stat = !strcmp(suite, "primary") ? "nsPerOp" : "medianNsPerOp";
    printf("\n%s (%s, ns/op = %s)\n", suite, cJSON_GetObjectItemCaseSensitive(doc, "backend")->valuestring, stat);
    printf("%-50s %-2s", "row", "g");
    for (int i = 0; i < nsub; i++) printf(" %11.11s", subjects[i]);
    for (int i = 1; i < nsub; i++) {
        char h[32];
        snprintf(h, sizeof h, "%.3s/%.4s", subjects[0], subjects[i]);
        printf(" %9s", h);
    }
    printf(" %s\n", "alloc/op (B/op)");
    const cJSON *it;
    cJSON_ArrayForEach(it, rows) {
        const cJSON *s = cJSON_GetObjectItemCaseSensitive(it, "subject");
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(it, "name");
        if (!cJSON_IsString(s) || !cJSON_IsString(n) || strcmp(s->valuestring, subjects[0])) continue;
        const char *name = n->valuestring;
        printf("%-50.50s %-2s", name, cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(it, "gated")) ? "G" : "");
        double v[BENCH_MAX_SUBJECTS];
        for (int i = 0; i < nsub; i++) {
            const cJSON *r = bench_row(rows, subjects[i], name);
            v[i] = r && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "supported")) ? bench_num(r, stat) : -1;
            if (v[i] < 0) printf(" %11s", "NA");
            else printf(" %11.2f", v[i]);
        }
        for (int i = 1; i < nsub; i++) {
            if (v[0] < 0 || v[i] <= 0) printf(" %9s", "-");
            else printf(" %9.3f", v[0] / v[i]);
        }
        printf(" ");
        for (int i = 0; i < nsub; i++) {
            const cJSON *r = bench_row(rows, subjects[i], name);
            double a = bench_num(r, "allocsPerOp"), b = bench_num(r, "allocBytesPerOp");
            if (a < 0) printf("%sNA", i ? " " : "");
            else printf("%s%.3g(%.3g)", i ? " " : "", a, b);
        }
        printf("\n");
    }
    /* the clock figures (host/shell/clock.c): samples >= 1 ms, the clock's share of them */
    const cJSON *ck = cJSON_GetObjectItemCaseSensitive(doc, "clock");
    const cJSON *cn = cJSON_GetObjectItemCaseSensitive(ck, "name");
    if (cJSON_IsString(cn))
        printf("clock: %s, %.1f ns a read, granularity %.0f ns; shortest sample %.3f ms; clock share over 1%%: "
               "%.0f of %.0f rows (worst %.1f%%)\n", cn->valuestring, bench_num(ck, "readCostNs"),
               bench_num(ck, "granularityNs"), bench_num(ck, "minSampleNs") / 1e6, bench_num(ck, "rowsOverShareTarget"),
               bench_num(ck, "rows"), bench_num(ck, "worstShare") * 100);
}

/* A value from a fixed set: 0 when it is one; else 1 and a usage line naming the option,
 * the value given (or that it is missing), the choices (of `from`, a project file, when
 * they are its suites) and the nearest one. */
static int bench_choice(const char *opt, const char *v, const char *const *choices, size_t n, const char *from)
{
    char list[1024] = "";
    for (size_t i = 0; i < n; i++) {
        if (v && !strcmp(v, choices[i])) return 0;
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? "|" : "", choices[i]);
    }
    const char *near = v ? tl_opt_nearest(v, strlen(v), choices, n) : NULL;
    if (!v) fprintf(stderr, "tandem bench: %s: missing: one of %s", opt, list);
    else fprintf(stderr, "tandem bench: %s: '%s' is not one of %s", opt, v, list);
    if (from) fprintf(stderr, " (the suites of %s but its smoke and demo suites)", from);
    if (near) fprintf(stderr, "; did you mean %s?", near);
    fprintf(stderr, " (tandem bench --help)\n");
    return 1;
}

/* --json: what ran and where its report is (tl_out.h). */
static void bench_summary(const char *suite, const char *backend, const char *report)
{
    if (!tl_out_summary()) return;
    cJSON_AddStringToObject(tl_out_summary(), "suite", suite);
    cJSON_AddStringToObject(tl_out_summary(), "backend", backend);
    if (report[0] && tl_is_file(report)) {
        char *abs = tl_abspath(report);
        cJSON_AddStringToObject(tl_out_summary(), "report", abs ? abs : report);
        free(abs);
    }
}

/* The state of one `tandem bench`, shared by its phases in the order td_verb_bench runs them. */
typedef struct bench_run {
    /* the options (bench_options) */
    const char *suite, *backend, *subjects_arg, *retention, *flow, *out, *work, *staging;
    const char *filter, *samples, *warmup, *timeout, *meter, *project, *baseline_rev;
    int quick, quiet, json, functions, icount;
    long long nsamples;
    char subject_list[1024], project_subjects[1024];
    tl_project p;   /* its subjects, suites, gate subject (a baseline is a revision of it) and gate */
    const char *measured[TL_PROJECT_MAX + 1];
    int nmeasured;
    /* the subjects measured, in the order given (bench_subjects); their names live in list */
    char *subjects[BENCH_MAX_SUBJECTS];
    int nsub;
    char *list;
    /* the players and the baseline (bench_prepare) */
    td_baseline bl;
    gate_config gcfg;   /* the project's gate: its gated rows and baseline thresholds */
    const char *bl_module;
    char staged[4096], dir[4096], report[4096];
} bench_run;

/* The options and the project into r. 0 ok, else the verb's exit code (help: 0 through
 * *exit_now). */
static int bench_options(bench_run *r, int argc, char **argv, int *exit_now)
{
    tl_optres o;
    *exit_now = 1;
    int orc = tl_opt_parse(&bench_spec, argc, argv, &o);
    if (orc) { tl_opt_free(&o); return orc == TL_OPT_HELP ? 0 : 2; }
    r->suite = tl_opt_str(&o, "suite", r->suite);
    r->backend = tl_opt_str(&o, "backend", r->backend);
    r->project = tl_opt_str(&o, "project", NULL);
    if (tl_project_open(r->project, tl_home(), &r->p)) {
        tl_opt_free(&o);
        return 1;
    }
    tl_project_subject_list(&r->p, r->project_subjects, sizeof r->project_subjects);
    r->subjects_arg = r->project_subjects;
    r->subjects_arg = tl_opt_str(&o, "subjects", r->subjects_arg);
    r->meter = tl_opt_str(&o, "meter", r->meter);
    r->retention = tl_opt_str(&o, "retention", r->retention);
    r->flow = tl_opt_str(&o, "flow", r->flow);
    r->samples = tl_opt_str(&o, "samples", r->samples);
    r->warmup = tl_opt_str(&o, "warmup", r->warmup);
    r->out = tl_opt_str(&o, "out", r->out);
    r->work = tl_opt_str(&o, "work", r->work);
    r->staging = tl_opt_str(&o, "staging", r->staging);
    r->filter = tl_opt_str(&o, "filter", r->filter);
    r->timeout = tl_opt_str(&o, "timeout", r->timeout);
    r->quick = tl_opt_given(&o, "quick") > 0;
    r->quiet = tl_opt_given(&o, "quiet") > 0, r->json = tl_opt_given(&o, "json") > 0;
    r->functions = (int)tl_opt_int(&o, "functions", 0);
    r->baseline_rev = tl_opt_str(&o, "baseline", NULL);
    if (r->baseline_rev && !tl_opt_given(&o, "subjects") && !tl_opt_given(&o, "subject"))
        r->subjects_arg = r->p.gate_subject;
    r->nsamples = tl_opt_int(&o, "samples", 0);
    int nv;
    const char *const *one = tl_opt_all(&o, "subject", &nv);
    char *sl = r->subject_list;
    for (int i = 0; i < nv; i++) {
        const char *v = one[i];
        if (!v[0] || strchr(v, ',') || strlen(sl) + strlen(v) + 2 > sizeof r->subject_list) {
            fprintf(stderr, "tandem bench: --subject '%s': one subject name\n", v);
            tl_opt_free(&o);
            return 2;
        }
        if (sl[0]) strcat(sl, ",");
        strcat(sl, v);
    }
    tl_opt_free(&o);
    *exit_now = 0;
    return 0;
}

/* The choices checked against what the project and the player offer, and the subjects
 * measured (a baseline's first is the gate subject). 0 ok, 2 usage (reported). */
static int bench_subjects(bench_run *r)
{
    r->nmeasured = tl_project_measured_suites(&r->p, r->measured, TL_PROJECT_MAX + 1);
    static const char *const backends[] = { "aot", "jit" }, *const retentions[] = { "matched", "default" };
    static const char *const flows[] = { "on", "off" }, *const meters[] = { "time", "instructions" };
    if (bench_choice("--suite", r->suite, r->measured, (size_t)r->nmeasured, r->p.file) ||
        bench_choice("--backend", r->backend, backends, 2, NULL) ||
        bench_choice("--retention", r->retention, retentions, 2, NULL) ||
        bench_choice("--flow", r->flow, flows, 2, NULL) || bench_choice("--meter", r->meter, meters, 2, NULL))
        return 2;
    r->icount = !strcmp(r->meter, "instructions");
    if (r->functions && !r->icount) {
        fprintf(stderr, "tandem bench: --functions needs --meter instructions\n");
        return 2;
    }
    if (r->icount && r->nsamples > 64) {
        fprintf(stderr, "tandem bench: --meter instructions takes at most 64 samples\n");
        return 2;
    }
    if (r->subject_list[0]) r->subjects_arg = r->subject_list;
    r->list = strdup(r->subjects_arg);
    for (char *tok = strtok(r->list, ","); tok && r->nsub < BENCH_MAX_SUBJECTS; tok = strtok(NULL, ","))
        if (*tok) r->subjects[r->nsub++] = tok;
    if (!r->nsub) {
        fprintf(stderr, "tandem bench: --subjects is empty\n");
        return 2;
    }
    if (r->baseline_rev && (strcmp(r->subjects[0], r->p.gate_subject) || r->nsub >= BENCH_MAX_SUBJECTS)) {
        fprintf(stderr, "tandem bench: --baseline: the first subject must be the project's gate subject %s (the "
                        "baseline is a revision of it, %s), with at most %d subjects\n", r->p.gate_subject, r->p.file,
                BENCH_MAX_SUBJECTS - 1);
        return 2;
    }
    return 0;
}

/* The staging (unless given), the player (built or reused) and, with --baseline, REV's
 * runtime as the subject <gate subject>@<rev> in its own player folder, built with every
 * measured suite (so one baseline folder serves them all). 0 ok, 1 failed (reported). */
static int bench_prepare(bench_run *r)
{
    if (tl_mkdirs(r->work)) {
        tl_error(r->work, "--work", "cannot create the folder");
        return 1;
    }
    if (!r->staging) {
        snprintf(r->staged, sizeof r->staged, "%s/staging", r->work);
        fflush(stdout);
        if (stage_project_run(r->project, r->staged) != 0) return 1;
        r->staging = r->staged;
    }
    if (bench_player(r->backend, r->work, r->staging, r->suite, r->measured, r->subjects, r->nsub, r->dir,
                     sizeof r->dir))
        return 1;
    if (!r->baseline_rev)
        return 0;
    char *repo = td_baseline_repo(r->staging), folder[4200];
    int brc = td_baseline_resolve(repo, &r->p, r->baseline_rev, &r->bl);
    if (!brc) {
        const char *bes[] = { r->backend };
        snprintf(folder, sizeof folder, "%s/baseline-%.7s", r->work, r->bl.commit);
        brc = td_baseline_prepare(&r->bl, r->staging, folder, bes, 1, r->measured);
    }
    free(repo);
    if (brc) return 1;
    gate_config_default(&r->gcfg);
    if (gate_config_from_project(&r->gcfg, &r->p)) return 1;
    r->bl_module = td_baseline_module(&r->bl, r->backend);
    r->subjects[r->nsub++] = r->bl.name;
    return 0;
}

/* --meter instructions: the callgrind arm (bench_icount.h), and a baseline's verdict on its
 * summary. The verb's exit code. */
static int bench_run_icount(bench_run *r)
{
    bench_icount_spec sp = { r->dir, r->backend, r->suite, r->work, r->out,
                             r->samples ? r->samples : r->quick ? "1" : "2", r->warmup, r->retention, r->flow,
                             r->timeout, r->filter, r->quick, r->bl_module ? r->bl.name : NULL, r->bl_module,
                             r->functions };
    int rc = bench_icount_run(&sp, r->subjects, r->nsub);
    if (rc == 0 && r->bl_module) {
        char sum[4400];
        cJSON *sd = NULL;
        if (r->out) snprintf(sum, sizeof sum, "%s", r->out);
        else snprintf(sum, sizeof sum, "%s/icount/%s-%s-instructions.json", r->work, r->suite, r->backend);
        if (tl_json_load(sum, &sd)) rc = 1;
        else rc = td_baseline_bench_verdict(&r->gcfg, sd, 1, r->suite, r->backend, r->subjects[0], r->bl.name);
        cJSON_Delete(sd);
    }
    return rc;
}

/* The player's command line: every subject's module (aot) or TU (jit), the suite and the
 * sampling options; the strings it points to live in r and in mods/root. */
static void bench_player_argv(bench_run *r, char **pargv, char mods[][4200], char *player, char *root)
{
    int n = 0, aot = !strcmp(r->backend, "aot");
    snprintf(player, 4200, "%s/tandem-player", r->dir);
    pargv[n++] = player;
    pargv[n++] = "--backend";
    pargv[n++] = (char *)r->backend;
    for (int i = 0; i < r->nsub; i++) {
        if (r->bl_module && r->subjects[i] == r->bl.name) snprintf(mods[i], 4200, "%s", r->bl_module);
        else if (aot) snprintf(mods[i], 4200, "%s/%s.so", r->dir, r->subjects[i]);
        else snprintf(mods[i], 4200, "%s/src/tandem-player-%s.c", r->dir, r->subjects[i]);
        pargv[n++] = aot ? "--module" : "--tu";
        pargv[n++] = mods[i];
    }
    if (!aot && !r->bl_module) { /* with a baseline each TU's folder is its own root */
        snprintf(root, 4200, "%s/src", r->dir);
        pargv[n++] = "--root";
        pargv[n++] = root;
    }
    const char *rest[][2] = { { "--suite", r->suite }, { "--out", r->report },
                              { "--samples", r->samples ? r->samples : r->quick ? "2" : "8" },
                              { "--warmup", r->warmup }, { "--retention", r->retention }, { "--flow", r->flow },
                              { "--timeout", r->timeout } };
    for (size_t i = 0; i < sizeof rest / sizeof *rest; i++) {
        pargv[n++] = (char *)rest[i][0];
        pargv[n++] = (char *)rest[i][1];
    }
    if (r->quick) pargv[n++] = "--quick";
    if (r->filter) {
        pargv[n++] = "--filter";
        pargv[n++] = (char *)r->filter;
    }
    pargv[n] = NULL;
}

/* The time arm: one player process, its report read back and printed as tables, and a
 * baseline's verdict on it. The verb's exit code. */
static int bench_run_player(bench_run *r)
{
    char *pargv[64], mods[BENCH_MAX_SUBJECTS][4200], player[4200], root[4200];
    bench_player_argv(r, pargv, mods, player, root);
    fflush(stdout);
    int prc = tl_run_player_argv(pargv);   /* no protocol lines on the terminal */
    cJSON *doc = NULL;
    if (!tl_is_file(r->report) || tl_json_load(r->report, &doc)) {
        tl_error(r->report, NULL, "the player (exit %d) wrote no readable report", prc);
        return 1;
    }
    bench_print_table(doc, r->suite, r->subjects, r->nsub);
    bench_print_over_control(doc, r->subjects, r->nsub);
    int completed = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(doc, "completed"));
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(doc, "failure");
    const cJSON *msg = cJSON_GetObjectItemCaseSensitive(f, "message");
    printf("\nreport: %s  completed: %s%s%s\n", r->report, completed ? "true" : "false",
           cJSON_IsString(msg) ? "  failure: " : "", cJSON_IsString(msg) ? msg->valuestring : "");
    int rc = completed && prc == 0 ? 0 : 1;
    if (rc == 0 && r->bl_module)
        rc = td_baseline_bench_verdict(&r->gcfg, doc, 0, r->suite, r->backend, r->subjects[0], r->bl.name);
    cJSON_Delete(doc);
    return rc;
}

static void bench_run_free(bench_run *r)
{
    free(r->list);
    tl_project_free(&r->p);
    free(r);
}

int td_verb_bench(int argc, char **argv)
{
    bench_run *r = calloc(1, sizeof *r);
    if (!r) {
        tl_error("tandem bench", NULL, "out of memory");
        return 1;
    }
    r->subjects_arg = "tandem,callback,fcontext,ucontext";
    r->retention = "matched", r->flow = "off", r->work = "out/bench";
    r->warmup = "1", r->timeout = "1200", r->meter = "time";
    int exit_now, rc = bench_options(r, argc, argv, &exit_now);
    if (!exit_now) rc = bench_subjects(r);
    if (exit_now || rc || tl_out_begin("tandem bench", r->quiet, r->json)) {
        bench_run_free(r);
        return exit_now || rc ? rc : 2;
    }
    if (bench_prepare(r)) {
        rc = 1;
    } else if (r->icount) {
        rc = bench_run_icount(r);
    } else {
        if (r->out) snprintf(r->report, sizeof r->report, "%s", r->out);
        else snprintf(r->report, sizeof r->report, "%s/%s-%s.json", r->work, r->suite, r->backend);
        rc = bench_run_player(r);
    }
    bench_summary(r->suite, r->backend, r->report);
    bench_run_free(r);
    return tl_out_end(rc);
}
