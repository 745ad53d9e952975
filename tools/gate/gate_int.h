/* gate_int.h - the gate's evaluated result, shared by gate_eval.c, gate_lines.c and gate_out.c. */
#ifndef TD_GATE_INT_H
#define TD_GATE_INT_H
#include "gate.h"

/* A growing, NUL-terminated string for the gate's outputs (gate_text.c); p is NULL until
 * the first write; out of memory aborts. */
typedef struct gate_buf { char *p; size_t n, cap; } gate_buf;
void gate_buf_put(gate_buf *b, const char *s, size_t k);
void gate_buf_printf(gate_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

enum { GL_GATED = 0, GL_SYNC = 1, GL_REPORT = 2 };

typedef struct ge_line {
    const char *suite, *retention, *row, *peer, *backend;
    int kind;
    const char *why;            /* why report-only */
    size_t nproc;
    double *ratio;              /* per process (NaN: NA) */
    const char **proc;          /* report file per process */
    int *layout;                /* per process: its report's layout key (gr_report.layout) */
    double *stat_a, *stat_b;    /* per process: the row's statistic of subject A and of the peer
                                   (NaN: none): the same code's time across layouts */
    double *stat_ref;           /* per process: the geometric mean of the statistic of the
                                   subjects built once (not A, not a baseline; NaN: none) */
    double median, worst;
    double thr_median, thr_worst; /* NaN when not checked */
    gs_mw mw;
    double spread, cv;          /* max/min - 1 of the ratios; largest within-process CV */
    const char *result;         /* PASS FAIL REPORT NA */
    int busy_only;              /* a FAIL its quiet processes alone would not make (gate_busy.c) */
    double busy_cpu;            /* then: the busiest of its busy processes, other CPU % */
    int seq_added;              /* of the processes that decided it, those the sequential rule added */
    int seq_open;               /* still borderline when the rule stopped: decided on all its processes */
} ge_line;

typedef struct ge_alloc {
    const char *suite, *retention, *row, *backend;
    double bytes_per_op, allocs_per_op; /* worst process of subject A */
    double retained;                    /* largest stated retained bytes (NaN if none) */
    const char *result;
} ge_alloc;

typedef struct ge_xb {
    const char *suite, *retention, *row, *subject;
    double aot, jit;                    /* median over processes of the suite's statistic */
    /* allocations per op of the worst process on each backend (bytes requested, calls):
     * the same source, so AOT below JIT is an allocation clang removed (gate.md says so) */
    double aot_bytes, jit_bytes, aot_allocs, jit_allocs;
} ge_xb;

typedef struct ge_input {
    char *file;                         /* relative to RUNS_DIR ("../x" for the parent) */
    char sha256[65];
    const char *kind;                   /* report, observation, pregate */
} ge_input;

typedef struct ge_obs {
    char *file, *process, *status;
    double cpu;                         /* other processes' CPU % during the run; NaN unknown */
} ge_obs;

typedef struct gate_result {
    const gate_config *cfg;
    gr_report *reps;
    size_t nreps;
    char **invalid;
    size_t ninvalid;
    ge_line *lines;
    size_t nlines;
    ge_alloc *allocs;
    size_t nallocs;
    ge_xb *xb;
    size_t nxb;
    ge_input *inputs;
    size_t ninputs;
    ge_obs *obs;
    size_t nobs;
    char *pregate_status;               /* NULL when no quiet-pregate.json */
    double pregate_cpu;
    int verdict;                        /* GATE_PASS / GATE_FAIL / GATE_INVALID */
    size_t n_gated, n_pass, n_fail, n_report, n_na;
    char *instr_md;                     /* the instruction table (gate_icount.c); NULL: none */
    ge_line *blines;                    /* subject A against its baseline revision(s), one per
                                           row, baseline and backend (peer = "<A>@<rev>");
                                           never part of the peer verdict (gate_baseline.c) */
    size_t nblines;
    char *base_md;                      /* gate.md's baseline section; NULL: no baseline */
    struct cJSON *base_json;            /* gate-summary.json's "baseline" */
    size_t base_regressions;
    struct gate_seq *seq;               /* runs/sequential/sequential.json (gate_sequential.c); NULL: none */
    int busy_invalid;                   /* one INVALID reason is the busy host's (gate_busy.c) */
} gate_result;

int gate_evaluate(const char *runs_dir, const gate_config *cfg, gate_result *res);

/* ---- the evaluation's two halves: gate_eval.c (inputs, rules on reports, verdict) and
 * gate_lines.c (the groups' lines) share these ---- */
#define GE_GROW(arr, n) ((arr) = realloc((arr), ((n) + 1) * sizeof *(arr)), &(arr)[(n)++])
/* Add an INVALID reason (once; quoted report text kept to one line of UTF-8). */
void ge_invalid(gate_result *res, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const gr_row *ge_find_entry(const gr_report *r, const char *row, const char *subject);
int ge_has_subject(const gr_report *r, const char *s);
/* An entry's per-sample values (malloc'd, e->n of them). */
double *ge_values(const gr_row *e);
int ge_report_only_retention(const gate_config *c, const char *ret);
/* The backend's index in the configuration; nbackends when it is not configured. */
int ge_backend_rank(const gate_config *c, const char *b);
/* Every (suite, retention) group's lines, allocation rows and AOT/JIT rows (gate_lines.c). */
void ge_eval_groups(gate_result *res);
/* Mark the FAIL lines that rest on busy processes (gate_busy.c); when every FAIL of the run
 * does, the INVALID reason (malloc'd), else NULL. */
char *gate_busy_judge(gate_result *res);
/* 1 when the observation of the report's process says busy (gate_busy.c). */
int gate_process_busy(const gate_result *res, const char *report);
void gate_result_free(gate_result *res);
int gate_write_outputs(const char *out_dir, const gate_result *res);
/* gate-chart.svg: the verdict and the gated rows only, AOT and JIT side by side
 * (gate_chart.c; malloc'd). gate-chart-full.svg (every line) is gate_out.c's. */
char *gate_chart_summary_svg(const gate_result *res);
/* The "Instructions per operation" section of gate.md from DIR's *-instructions.json
 * (malloc'd), or NULL with *bad = 1 after reporting what was refused. */
char *gate_icount_md(const char *dir, const gate_result *res, int *bad);
/* The baseline verdict from res->blines and, when given, DIR's instruction summaries:
 * res->base_md, res->base_json (gate_baseline.c). 0 ok, 1 a summary refused (reported). */
int gate_baseline_eval(gate_result *res, const char *instr_dir, int instr_expected);
/* gate.md's "Samples and the clock" section and gate-summary.json's "clock" object
 * (gate_clock.c; report-only, from the reports' clock figures and segments). */
char *gate_clock_md(const gate_result *res);
struct cJSON *gate_clock_json(const gate_result *res);
/* A gated line is borderline when a threshold lies within its noise band: |median -
 * threshold| <= median x spread (or the same for the worst ratio), spread = the
 * per-process spread (gate_compare.c). A flip of such a row is noise at this sample size. */
int gate_line_borderline(const ge_line *L);
/* A line's median, worst and spread from its per-process ratios (NaN ones left out; returns
 * how many), and whether they pass its thresholds (the median's, and the worst's where it
 * has one): gate_lines.c. */
size_t gate_line_stats(ge_line *L);
int gate_line_pass(const ge_line *L);
/* The sequential rule (gate_sequential.c, SEQUENTIAL.md). gate_seq_load reads RUNS_DIR's
 * sequential/sequential.json, when there, into res->seq (INVALID reasons when malformed);
 * gate_seq_extra counts the processes it added to a suite and backend (the process count
 * rule); gate_seq_judge decides every gated line at its first look where it is not
 * borderline (the planned processes are look 0), checks that every added process followed
 * the rule, and recounts the verdict's rows. */
void gate_seq_load(const char *runs_dir, gate_result *res);
int gate_seq_extra(const gate_result *res, const char *suite, const char *backend);
void gate_seq_judge(gate_result *res);
void gate_seq_free(gate_result *res);
/* Borderline for the rule: gate_line_borderline, or with one process a threshold within
 * the configuration's quickBand of the median. */
int gate_seq_borderline(const gate_config *c, const ge_line *L);
/* gate.md's "Sequential rule" section and gate-summary.json's "sequential" (NULL: no record). */
char *gate_seq_md(const gate_result *res);
struct cJSON *gate_seq_json(const gate_result *res);
/* `tandem gate --compare A B` (gate_compare.c): A judged by cfg, B by cfg_b (NULL: cfg; it
 * may differ only in expectedProcesses, cfg_b_name is its file, for the error). 0 no flip, 1
 * a flip or not comparable, 2 usage or two different rules. */
int gate_compare(const char *runs_a, const char *runs_b, const gate_config *cfg, const gate_config *cfg_b,
                 const char *cfg_b_name, const char *out_file);

#endif
