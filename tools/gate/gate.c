/*
 * gate.c - `tandem gate RUNS_DIR`: the statistical gate over per-process reports
 * (SUITES.md "The gate"). The work is in the other files of tools/gate/ (see gate.h).
 */
#include "ci_out.h"
#include "gate_int.h"

#include <cjson/cJSON.h>

#include "tl_err.h"
#include "tl_fs.h"
#include "tl_home.h"
#include "tl_opt.h"
#include "tl_out.h"
#include "tl_project.h"

#include <limits.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const tl_opt gate_opts_table[] = {
    { "project", 0, TL_OPT_PATH, "DIR", 0, 0, "the project whose tandem.json \"gate\" section (subject, peers,\n"
      "lowerBound, gatedSuites, unsupportedRows, config) applies over the\n"
      "built-in defaults (default: the nearest tandem.json from the current\n"
      "folder upward, else Tandem's own)" },
    { "config", 0, TL_OPT_PATH, "FILE", 0, 0, "gate configuration JSON over the project's gate (--print-config)" },
    { "out", 0, TL_OPT_PATH, "DIR", 0, 0, "where the outputs go (--compare: the comparison's Markdown file)" },
    { "compare", 0, TL_OPT_PATH, "RUNS_A RUNS_B", 0, 0, "per gated row of two runs folders: both results and medians,\n"
      "flipped or not, borderline (threshold within the per-process\n"
      "spread); exit 1 on a flip" },
    { "config-b", 0, TL_OPT_PATH, "FILE", 0, 0, "--compare: RUNS_B judged by its own configuration (its attempt's\n"
      "gate/gate-config.json, over the project's gate like --config); it may\n"
      "differ from the first only in expectedProcesses (the processes each\n"
      "attempt's sequential rule added), anything else is refused" },
    { "instructions", 0, TL_OPT_PATH, "DIR", 0, 0, "add the instruction table (report-only) from DIR's\n"
      "<suite>-<backend>-instructions.json (tandem bench --meter instructions)" },
    { "self-check", 0, TL_OPT_FLAG, NULL, 0, 0, "run the synthetic expectations (pass, fail, each INVALID rule);\n"
      "with --out DIR the synthetic runs are kept there (caseNN/) with the\n"
      "configuration they are judged with (gate-config.json, for --config)" },
    { "sequential-next", 0, TL_OPT_FLAG, NULL, 0, 0, "print the gated rows the sequential rule's next batch is for\n"
      "(borderline at the last look; tools/gate/SEQUENTIAL.md), one per line:\n"
      "suite, backend, row, peer, processes, median, threshold, band (tabs)" },
    { "verbose", 0, TL_OPT_FLAG, NULL, 0, 0, "--self-check: print every expectation" },
    { "quiet", 0, TL_OPT_FLAG, NULL, 0, 0, "no verdict lines on stdout" },
    { "json", 0, TL_OPT_FLAG, NULL, 0, 0, "stdout: one line, the summary object (exit code, verdict,\nreports); what it prints otherwise goes to stderr" },
    { "print-config", 0, TL_OPT_FLAG, NULL, 0, 0, "print the configuration in effect (defaults, or --config) as JSON" },
    { NULL, 0, 0, NULL, 0, 0, NULL }
};

static const tl_optspec gate_spec = {
    "tandem gate", "RUNS_DIR [--project DIR] [--config FILE] [--out DIR] [--quiet]\n"
    "tandem gate --self-check [--verbose] [--out DIR]\n"
    "tandem gate --print-config [--project DIR] [--config FILE]\n"
    "tandem gate --compare RUNS_A RUNS_B [--project DIR] [--config FILE] [--config-b FILE] [--out FILE]",
    "Read every per-process report (RUNS_DIR/*.json), the observations\n"
    "(RUNS_DIR/observations/*.json) and quiet-pregate.json (RUNS_DIR or its parent);\n"
    "compute per-process ratios of subject A to each peer (primary: ratio of means of\n"
    "per-sample ns/op; other suites: ratio of medians), their median and worst per backend,\n"
    "Mann-Whitney U and rank-biserial effect on the pooled samples, allocation rows, the\n"
    "AOT/JIT ratios; apply the thresholds and the INVALID rules; write gate.md,\n"
    "gate-summary.json, gate-chart.svg (the verdict and the gated rows, AOT and JIT side by\n"
    "side), gate-chart-full.svg (every row), and for CI servers gate-junit.xml (JUnit: one\n"
    "testcase per gated row per backend, a failure's message its ratios and limits) and\n"
    "gate-rows.csv (every row) into --out (default RUNS_DIR).\n"
    "Same inputs, byte-identical outputs.\n"
    "The configuration: the built-in defaults, then the project's gate section (tandem.json:\n"
    "its config file, then subject, peers, lowerBound as a report-only peer, unsupportedRows,\n"
    "gatedSuites; --project, or the project found by the default rule), then --config.",
    gate_opts_table,
    "Exit: 0 PASS, 3 FAIL, 1 INVALID (also: a refused configuration or project file,\n"
    "outputs that could not be written), 2 usage. With a baseline subject in the runs (tandem\n"
    "attempt --baseline): 4 a baseline regression and the peers PASS, 5 a regression and the\n"
    "peers FAIL; a baseline that judged nothing (\"no data\") exits 1, as does one \"not judged\"\n"
    "(--instructions given, a gated row's counts missing, and no regression found).",
    0, 1
};

/* A number of a baseline record as text ("-" for null); four rotating buffers. */
static const char *gate_num_text(const cJSON *o, const char *key)
{
    static char buf[4][32];
    static int k;
    char *b = buf[k++ % 4];
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (cJSON_IsNumber(v)) snprintf(b, 32, "%.4f", v->valuedouble);
    else snprintf(b, 32, "-");
    return b;
}

/* The baseline verdict's lines (gate_exit_code: a regression exits 4 or 5). */
/* One line per row of the baseline verdict's list `key` (regressions or improved), `what`
 * saying which. */
static void gate_baseline_print_rows(const cJSON *j, const char *key, const char *what)
{
    const cJSON *r;
    cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(j, key))
        printf("gate: baseline %s (%s): %s / %s [%s] vs %s: median %s worst %s instructions %s\n", what,
               cJSON_GetObjectItemCaseSensitive(r, "decidedBy")->valuestring,
               cJSON_GetObjectItemCaseSensitive(r, "suite")->valuestring, cJSON_GetObjectItemCaseSensitive(r, "row")->valuestring,
               cJSON_GetObjectItemCaseSensitive(r, "backend")->valuestring,
               cJSON_GetObjectItemCaseSensitive(r, "baseline")->valuestring, gate_num_text(r, "median"),
               gate_num_text(r, "worst"), gate_num_text(r, "instructionsRatio"));
}

static void gate_baseline_print(const gate_result *res)
{
    const cJSON *j = res->base_json;
    if (!j) return;
    gate_baseline_print_rows(j, "regressions", "REGRESSION");
    gate_baseline_print_rows(j, "improved", "improved");
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(j, "counts");
    printf("gate: baseline: %s (%d gated rows x backends: %d regression(s), %d improved, %d layout (time moved, not in "
           "every layout: never a regression), %d of them on busy processes only (time not decided); a regression "
           "exits 4, or 5 with the peers FAIL)\n",
           cJSON_GetObjectItemCaseSensitive(j, "verdict")->valuestring,
           cJSON_GetObjectItemCaseSensitive(c, "gated")->valueint, cJSON_GetObjectItemCaseSensitive(c, "regressions")->valueint,
           cJSON_GetObjectItemCaseSensitive(c, "improved")->valueint, cJSON_GetObjectItemCaseSensitive(c, "layout")->valueint,
           cJSON_GetObjectItemCaseSensitive(c, "busy")->valueint);
}

/* --sequential-next: what the attempt asks the gate after each look (gate_seq_next). Exit 0,
 * 1 INVALID (its reason on stderr), 2 unreadable. */
static int gate_seq_print(const char *runs_dir, const gate_config *cfg)
{
    gate_seq_row *rows;
    char *why;
    int n = gate_seq_next(runs_dir, cfg, &rows, &why);
    if (n == -2) fprintf(stderr, "gate: INVALID: %s\n", why);
    if (n == -1) tl_error(runs_dir, NULL, "cannot read");
    for (int i = 0; i < n; i++)
        printf("%s\t%s\t%s\t%s\t%d\t%.4f\t%.2f\t%.4f\n", rows[i].suite, rows[i].backend, rows[i].row, rows[i].peer,
               rows[i].nproc, rows[i].median, rows[i].thr_median, rows[i].median * rows[i].spread);
    free(rows);
    free(why);
    return n == -2 ? GATE_INVALID : n == -1 ? GATE_USAGE : 0;
}

int gate_run(const gate_opts *o, const gate_config *cfg)
{
    if (!tl_is_dir(o->runs_dir)) {
        tl_error(o->runs_dir, NULL, "not a folder");
        return GATE_USAGE;
    }
    gate_result res;
    if (gate_evaluate(o->runs_dir, cfg, &res)) {
        tl_error(o->runs_dir, NULL, "cannot read");
        return GATE_USAGE;
    }
    const char *out = o->out_dir ? o->out_dir : o->runs_dir;
    int rc = res.verdict;
    res.instr_md = NULL;
    if (o->instructions_dir) {
        int bad = 0;
        res.instr_md = gate_icount_md(o->instructions_dir, &res, &bad);
        if (bad) {
            fprintf(stderr, "tandem gate: the instruction summaries in %s are refused (see above): no verdict\n",
                    o->instructions_dir);
            gate_result_free(&res);
            return GATE_INVALID;
        }
    }
    if (gate_baseline_eval(&res, o->instructions_dir, o->instructions_expected)) {
        fprintf(stderr, "tandem gate: the instruction summaries in %s are refused (see above): no verdict\n",
                o->instructions_dir);
        free(res.instr_md);
        gate_result_free(&res);
        return GATE_INVALID;
    }
    /* the outputs are the evidence: no verdict is printed unless they were all written */
    int wrc = gate_write_outputs(out, &res);
    if (!wrc) wrc = td_ci_gate(out);   /* from gate-summary.json, just written */
    free(res.instr_md);
    res.instr_md = NULL;
    free(res.base_md);
    res.base_md = NULL;
    if (wrc) {
        fprintf(stderr, "tandem gate: the outputs could not be written to %s: no verdict\n", out);
        gate_result_free(&res);
        return GATE_INVALID;
    }
    if (!o->quiet) {
        for (size_t i = 0; i < res.ninvalid; i++) printf("gate: INVALID: %s\n", res.invalid[i]);
        for (size_t i = 0; i < res.nlines; i++)
            if (!strcmp(res.lines[i].result, "FAIL"))
                printf("gate: FAIL: %s / %s vs %s [%s]: median %.4f worst %.4f%s\n", res.lines[i].suite, res.lines[i].row,
                       res.lines[i].peer, res.lines[i].backend, res.lines[i].median, res.lines[i].worst,
                       res.lines[i].busy_only ? " (rests on processes observed busy: not a clean FAIL)" : "");
        for (size_t i = 0; i < res.nallocs; i++)
            if (!strcmp(res.allocs[i].result, "FAIL"))
                printf("gate: FAIL: allocation %s / %s [%s]: %.4f bytes/op\n", res.allocs[i].suite, res.allocs[i].row,
                       res.allocs[i].backend, res.allocs[i].bytes_per_op);
        gate_baseline_print(&res);
        printf("gate: %s (%zu gated rows: %zu pass, %zu fail; %zu report-only; %zu NA; %zu invalid reason(s)); "
               "report %s/gate.md\n",
               gate_verdict_name(res.verdict), res.n_gated, res.n_pass, res.n_fail, res.n_report, res.n_na, res.ninvalid,
               out);
    }
    gate_result_free(&res);
    return rc;
}

/* The project's gate section over cfg (--project, else the default rule); `from` names
 * the file for the configuration line. 0 ok; 1 refused (reported). */
static int gate_project_config(const char *given, gate_config *cfg, char *from, size_t len)
{
    tl_project p;
    int bad = tl_project_open(given, tl_home(), &p);
    if (!bad) bad = gate_config_from_project(cfg, &p);
    if (bad) fprintf(stderr, "gate: INVALID: the project's gate configuration is refused (see above)\n");
    else snprintf(from, len, "%s (gate)", p.file);
    tl_project_free(&p);
    return bad;
}

int td_verb_gate(int argc, char **argv)
{
    gate_opts o = { 0 };
    tl_optres r;
    int prc = tl_opt_parse(&gate_spec, argc, argv, &r);
    if (prc) { tl_opt_free(&r); return prc == TL_OPT_HELP ? 0 : 2; }
    int self = tl_opt_given(&r, "self-check") > 0, verbose = tl_opt_given(&r, "verbose") > 0;
    int print = tl_opt_given(&r, "print-config") > 0, seq_next = tl_opt_given(&r, "sequential-next") > 0;
    o.quiet = tl_opt_given(&r, "quiet") > 0;
    int json = tl_opt_given(&r, "json") > 0;
    const char *project = tl_opt_str(&r, "project", NULL);
    o.config_path = tl_opt_str(&r, "config", NULL);
    const char *config_b = tl_opt_str(&r, "config-b", NULL);
    o.out_dir = tl_opt_str(&r, "out", NULL);
    o.instructions_dir = tl_opt_str(&r, "instructions", NULL);
    o.instructions_expected = o.instructions_dir != NULL;
    /* --compare RUNS_A RUNS_B: RUNS_A is the option's value, RUNS_B the one positional */
    const char *cmp_a = tl_opt_str(&r, "compare", NULL), *cmp_b = NULL;
    if (cmp_a) {
        if (r.npos != 1 || !r.pos[0][0]) {
            fprintf(stderr, "tandem gate: --compare needs two runs folders\n");
            tl_opt_free(&r);
            return 2;
        }
        cmp_b = r.pos[0];
    } else if (config_b) {
        fprintf(stderr, "tandem gate: --config-b is for --compare (B's own configuration)\n");
        tl_opt_free(&r);
        return 2;
    } else if (r.npos) {
        o.runs_dir = r.pos[0];
    }
    if (self) { /* synthetic runs with their own configurations */
        tl_opt_free(&r);
        return gate_self_check(verbose, o.out_dir) ? 1 : 0;
    }
    static gate_config cfg;
    gate_config_default(&cfg);
    char from[PATH_MAX + 64];
    if (gate_project_config(project, &cfg, from, sizeof from)) {
        tl_opt_free(&r);
        return GATE_INVALID;
    }
    tl_opt_free(&r); /* project, the paths and the runs folders point into argv, not into r */
    static gate_config cfg_b;
    cfg_b = cfg; /* the project's gate: --config-b applies over it, as --config does */
    if (config_b && gate_config_load(config_b, &cfg_b)) {
        fprintf(stderr, "tandem gate: --config-b: the configuration %s is refused (see above)\n", config_b);
        return 2;
    }
    if (o.config_path && gate_config_load(o.config_path, &cfg)) {
        fprintf(stderr, "gate: INVALID: the configuration %s is refused (see above)\n", o.config_path);
        return GATE_INVALID;
    }
    if (print) {
        cJSON *j = gate_config_json(&cfg);
        char *t = cJSON_Print(j);
        printf("%s\n", t);
        free(t);
        cJSON_Delete(j);
        return 0;
    }
    if (cmp_a) { /* stdout is the comparison (what --out holds) */
        int r = gate_compare(cmp_a, cmp_b, &cfg, config_b ? &cfg_b : NULL, config_b, o.out_dir);
        return r == GATE_USAGE ? 2 : r;
    }
    if (!o.runs_dir) { fprintf(stderr, "tandem gate: missing RUNS_DIR (tandem gate --help)\n"); return 2; }
    if (seq_next) return gate_seq_print(o.runs_dir, &cfg);
    if (tl_out_begin("tandem gate", o.quiet, json)) return 2;
    if (!o.quiet) {
        printf("tandem gate: configuration: the built-in defaults, then %s%s%s: subject %s against ", from,
               o.config_path ? ", then " : "", o.config_path ? o.config_path : "", cfg.subject);
        for (int i = 0; i < cfg.npeers; i++) printf("%s%s", i ? ", " : "", cfg.peers[i]);
        if (!cfg.npeers) printf("every other subject");
        for (int i = 0; i < cfg.nreport_only_peers; i++)
            printf("%s%s", i ? ", " : "; report-only: ", cfg.report_only_peers[i]);
        printf("\n");
    }
    int rc = gate_run(&o, &cfg);
    char *dir = (char *)(o.out_dir ? o.out_dir : o.runs_dir), *sp = tl_join(dir, "gate-summary.json");
    char base[32];
    if ((rc == GATE_PASS || rc == GATE_FAIL) && !gate_summary_baseline(sp, base, sizeof base) && base[0]) {
        rc = gate_exit_code(rc, base); /* a baseline judged: a regression has its own exit */
        if (tl_out_summary()) cJSON_AddStringToObject(tl_out_summary(), "baselineVerdict", base);
    }
    static const char *const keys[] = { "verdict", "counts", "invalid", "report", NULL };
    tl_out_pick("summary", sp, keys);   /* --json: the verdict and why, from the summary */
    free(sp);
    return tl_out_end(rc);
}
