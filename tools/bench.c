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

#include "baseline.h"
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

#include "stage_project.h"

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

int td_verb_bench(int argc, char **argv)
{
    const char *suite = NULL, *backend = NULL, *subjects_arg = "tandem,callback,fcontext,ucontext";
    const char *retention = "matched", *flow = "off", *out = NULL, *work = "out/bench", *staging = NULL;
    const char *filter = NULL, *samples = NULL, *warmup = "1", *timeout = "1200", *meter = "time";
    char subject_list[1024] = "";
    tl_optres o;
    int orc = tl_opt_parse(&bench_spec, argc, argv, &o);
    if (orc) { tl_opt_free(&o); return orc == TL_OPT_HELP ? 0 : 2; }
    suite = tl_opt_str(&o, "suite", suite);
    backend = tl_opt_str(&o, "backend", backend);
    const char *project = tl_opt_str(&o, "project", NULL);
    char project_subjects[1024] = "";
    tl_project p;   /* its subjects, suites, gate subject (a baseline is a revision of it) and gate */
    if (tl_project_open(project, tl_home(), &p)) {
        tl_project_free(&p);
        tl_opt_free(&o);
        return 1;
    }
    tl_project_subject_list(&p, project_subjects, sizeof project_subjects);
    subjects_arg = project_subjects;
    subjects_arg = tl_opt_str(&o, "subjects", subjects_arg);
    meter = tl_opt_str(&o, "meter", meter);
    retention = tl_opt_str(&o, "retention", retention);
    flow = tl_opt_str(&o, "flow", flow);
    samples = tl_opt_str(&o, "samples", samples);
    warmup = tl_opt_str(&o, "warmup", warmup);
    out = tl_opt_str(&o, "out", out);
    work = tl_opt_str(&o, "work", work);
    staging = tl_opt_str(&o, "staging", staging);
    filter = tl_opt_str(&o, "filter", filter);
    timeout = tl_opt_str(&o, "timeout", timeout);
    int quick = tl_opt_given(&o, "quick") > 0;
    int quiet = tl_opt_given(&o, "quiet") > 0, json = tl_opt_given(&o, "json") > 0;
    int functions = (int)tl_opt_int(&o, "functions", 0);
    const char *baseline_rev = tl_opt_str(&o, "baseline", NULL);
    if (baseline_rev && !tl_opt_given(&o, "subjects") && !tl_opt_given(&o, "subject")) subjects_arg = p.gate_subject;
    long long nsamples = tl_opt_int(&o, "samples", 0);
    int nv;
    const char *const *one = tl_opt_all(&o, "subject", &nv);
    for (int i = 0; i < nv; i++) {
        const char *v = one[i];
        if (!v[0] || strchr(v, ',') || strlen(subject_list) + strlen(v) + 2 > sizeof subject_list) {
            fprintf(stderr, "tandem bench: --subject '%s': one subject name\n", v);
            tl_opt_free(&o);
            tl_project_free(&p);
            return 2;
        }
        if (subject_list[0]) strcat(subject_list, ",");
        strcat(subject_list, v);
    }
    tl_opt_free(&o);
    const char *measured[TL_PROJECT_MAX + 1];
    int nmeasured = tl_project_measured_suites(&p, measured, TL_PROJECT_MAX + 1);
    static const char *const backends[] = { "aot", "jit" }, *const retentions[] = { "matched", "default" };
    static const char *const flows[] = { "on", "off" }, *const meters[] = { "time", "instructions" };
    if (bench_choice("--suite", suite, measured, (size_t)nmeasured, p.file) ||
        bench_choice("--backend", backend, backends, 2, NULL) ||
        bench_choice("--retention", retention, retentions, 2, NULL) || bench_choice("--flow", flow, flows, 2, NULL) ||
        bench_choice("--meter", meter, meters, 2, NULL)) {
        tl_project_free(&p);
        return 2;
    }
    int icount = !strcmp(meter, "instructions");
    if (functions && !icount) {
        fprintf(stderr, "tandem bench: --functions needs --meter instructions\n");
        tl_project_free(&p);
        return 2;
    }
    if (icount && nsamples > 64) {
        fprintf(stderr, "tandem bench: --meter instructions takes at most 64 samples\n");
        tl_project_free(&p);
        return 2;
    }
    if (subject_list[0]) subjects_arg = subject_list;
    char *subjects[BENCH_MAX_SUBJECTS];
    int nsub = 0;
    char *list = strdup(subjects_arg);
    for (char *tok = strtok(list, ","); tok && nsub < BENCH_MAX_SUBJECTS; tok = strtok(NULL, ","))
        if (*tok) subjects[nsub++] = tok;
    if (!nsub) {
        free(list);
        tl_project_free(&p);
        fprintf(stderr, "tandem bench: --subjects is empty\n");
        return 2;
    }
    if (baseline_rev && (strcmp(subjects[0], p.gate_subject) || nsub >= BENCH_MAX_SUBJECTS)) {
        fprintf(stderr, "tandem bench: --baseline: the first subject must be the project's gate subject %s (the "
                        "baseline is a revision of it, %s), with at most %d subjects\n", p.gate_subject, p.file,
                BENCH_MAX_SUBJECTS - 1);
        free(list);
        tl_project_free(&p);
        return 2;
    }
    if (tl_out_begin("tandem bench", quiet, json)) {
        free(list);
        tl_project_free(&p);
        return 2;
    }
    td_baseline bl;
    static gate_config gcfg;   /* the project's gate: its gated rows and baseline thresholds */
    const char *bl_module = NULL;
    int rc = 1;
    char staged[4096], dir[4096], report[4096] = "";
    if (tl_mkdirs(work)) {
        tl_error(work, "--work", "cannot create the folder");
        goto done;
    }
    if (!staging) {
        snprintf(staged, sizeof staged, "%s/staging", work);
        fflush(stdout);
        if (stage_project_run(project, staged) != 0) goto done;
        staging = staged;
    }
    if (bench_player(backend, work, staging, suite, measured, subjects, nsub, dir, sizeof dir)) goto done;
    if (baseline_rev) {
        /* REV's runtime as the subject <gate subject>@<rev>, in its own player folder, built
         * with every measured suite (so one baseline folder serves them all) */
        char *repo = td_baseline_repo(staging), folder[4200];
        int brc = td_baseline_resolve(repo, &p, baseline_rev, &bl);
        if (!brc) {
            const char *bes[] = { backend };
            snprintf(folder, sizeof folder, "%s/baseline-%.7s", work, bl.commit);
            brc = td_baseline_prepare(&bl, staging, folder, bes, 1, measured);
        }
        free(repo);
        if (brc) goto done;
        gate_config_default(&gcfg);
        if (gate_config_from_project(&gcfg, &p)) goto done;
        bl_module = td_baseline_module(&bl, backend);
        subjects[nsub++] = bl.name;
    }
    if (icount) {
        bench_icount_spec sp = { dir, backend, suite, work, out, samples ? samples : quick ? "1" : "2", warmup,
                                 retention, flow, timeout, filter, quick, bl_module ? bl.name : NULL, bl_module,
                                 functions };
        rc = bench_icount_run(&sp, subjects, nsub);
        if (rc == 0 && bl_module) {
            char sum[4400];
            cJSON *sd = NULL;
            if (out) snprintf(sum, sizeof sum, "%s", out);
            else snprintf(sum, sizeof sum, "%s/icount/%s-%s-instructions.json", work, suite, backend);
            if (tl_json_load(sum, &sd)) rc = 1;
            else rc = td_baseline_bench_verdict(&gcfg, sd, 1, suite, backend, subjects[0], bl.name);
            cJSON_Delete(sd);
        }
        goto done;
    }
    if (out) snprintf(report, sizeof report, "%s", out);
    else snprintf(report, sizeof report, "%s/%s-%s.json", work, suite, backend);

    char *pargv[64], mods[BENCH_MAX_SUBJECTS][4200], player[4200], root[4200];
    int n = 0;
    snprintf(player, sizeof player, "%s/tandem-player", dir);
    pargv[n++] = player;
    pargv[n++] = "--backend";
    pargv[n++] = (char *)backend;
    for (int i = 0; i < nsub; i++) {
        if (bl_module && subjects[i] == bl.name) snprintf(mods[i], sizeof mods[i], "%s", bl_module);
        else if (!strcmp(backend, "aot")) snprintf(mods[i], sizeof mods[i], "%s/%s.so", dir, subjects[i]);
        else snprintf(mods[i], sizeof mods[i], "%s/src/tandem-player-%s.c", dir, subjects[i]);
        pargv[n++] = !strcmp(backend, "aot") ? "--module" : "--tu";
        pargv[n++] = mods[i];
    }
    if (!strcmp(backend, "jit") && !bl_module) { /* with a baseline each TU's folder is its own root */
        snprintf(root, sizeof root, "%s/src", dir);
        pargv[n++] = "--root";
        pargv[n++] = root;
    }
    pargv[n++] = "--suite";
    pargv[n++] = (char *)suite;
    pargv[n++] = "--out";
    pargv[n++] = report;
    pargv[n++] = "--samples";
    pargv[n++] = (char *)(samples ? samples : quick ? "2" : "8");
    pargv[n++] = "--warmup";
    pargv[n++] = (char *)warmup;
    pargv[n++] = "--retention";
    pargv[n++] = (char *)retention;
    pargv[n++] = "--flow";
    pargv[n++] = (char *)flow;
    pargv[n++] = "--timeout";
    pargv[n++] = (char *)timeout;
    if (quick) pargv[n++] = "--quick";
    if (filter) {
        pargv[n++] = "--filter";
        pargv[n++] = (char *)filter;
    }
    pargv[n] = NULL;
    fflush(stdout);
    int prc = tl_run_player_argv(pargv);   /* no protocol lines on the terminal */
    cJSON *doc = NULL;
    if (!tl_is_file(report) || tl_json_load(report, &doc)) {
        tl_error(report, NULL, "the player (exit %d) wrote no readable report", prc);
        goto done;
    }
    bench_print_table(doc, suite, subjects, nsub);
    bench_print_over_control(doc, subjects, nsub);
    int completed = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(doc, "completed"));
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(doc, "failure");
    const cJSON *msg = cJSON_GetObjectItemCaseSensitive(f, "message");
    printf("\nreport: %s  completed: %s%s%s\n", report, completed ? "true" : "false",
           cJSON_IsString(msg) ? "  failure: " : "", cJSON_IsString(msg) ? msg->valuestring : "");
    rc = completed && prc == 0 ? 0 : 1;
    if (rc == 0 && bl_module) rc = td_baseline_bench_verdict(&gcfg, doc, 0, suite, backend, subjects[0], bl.name);
    cJSON_Delete(doc);
done:
    bench_summary(suite, backend, report);
    free(list);
    tl_project_free(&p);
    return tl_out_end(rc);
}
