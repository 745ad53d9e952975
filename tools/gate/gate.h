/*
 * gate.h - the statistical gate (`tandem gate RUNS_DIR`), see /SUITES.md "The gate".
 *
 *   gate_report.c   THE reader of per-process JSON reports (the one file to adapt when
 *                   the report format changes) -> gr_report
 *   gate_config.c   the gate configuration: built-in defaults, JSON overrides
 *   gate_stats.c    mean, median, Mann-Whitney U (normal approximation, tie correction)
 *   gate_eval.c     the inputs, INVALID rules on reports and across them, verdict
 *   gate_lines.c    per (suite, retention) group: ratios, median/worst, thresholds, the
 *                   allocation rows, AOT against JIT
 *   gate_sequential.c  the sequential rule: rows decided at their first look not borderline
 *   gate_out.c      gate.md, gate-summary.json, gate-chart.svg (byte-deterministic)
 *   gate_selfcheck.c  synthetic expectations (`tandem gate --self-check`)
 *   gate_text.c     report text made safe for Markdown, XML and JSON outputs
 *
 * Pure function of its inputs: files are read in sorted order, nothing time- or
 * host-dependent is written, floats are printed with fixed formats.
 */
#ifndef TD_GATE_H
#define TD_GATE_H
#include <stddef.h>
#include <stdint.h>

#define GATE_MAX_PATTERNS 16
#define GATE_MAX_SUITES 16
#define GATE_MAX_BACKENDS 4
#define GATE_MAX_PEERS 8
#define GATE_MAX_LOWER 32

/* ---- configuration --------------------------------------------------------------- */

typedef struct gate_suite_cfg {
    char name[64];
    int use_mean;                               /* 1: ratio of means; 0: of medians */
    int gated;                                  /* 0: every row report-only */
    int samples;                                /* expected samples per row; 0: the report's own */
    int nsync;                                  /* rows matching these: median <= syncMedian only */
    char sync[GATE_MAX_PATTERNS][64];
    int nreport_only;                           /* rows matching these: report-only */
    char report_only[GATE_MAX_PATTERNS][64];
    /* The fair gated set: rows where a peer runs only lower-bound code (td_peer.h), not
     * its own library's: report-only against that peer (lower_peer[i], lower_row[i] a
     * row pattern; "^" anchors it at the start of the row name). */
    int nlower;
    char lower_peer[GATE_MAX_LOWER][64];
    char lower_row[GATE_MAX_LOWER][64];
    /* gated rows a subject or a peer may leave unsupported ("supported": false or "status":
     * "NA"): NA. Any other gated row a peer leaves unsupported makes the gate INVALID, so a
     * peer cannot turn a failing row into NA (issue 42, item 6). */
    int nunsupported;
    char unsupported[GATE_MAX_PATTERNS][64];
} gate_suite_cfg;

typedef struct gate_config {
    char subject[64];                           /* subject A (the numerator) */
    int npeers;                                 /* 0: every other subject of the reports */
    char peers[GATE_MAX_PEERS][64];
    int nreport_only_peers;                     /* peers compared report-only (lower bounds) */
    char report_only_peers[GATE_MAX_PEERS][64];
    int nbackends;
    char backends[GATE_MAX_BACKENDS][16];
    int processes;                              /* gated processes per suite and backend */
    int expected_processes;                     /* all report files; 0: not checked */
    double sync_median, median, worst;          /* thresholds */
    /* against a baseline revision of subject A ("<subject>@<rev>", tools/gate/gate_baseline.c):
     * no regression when every gated row's median ratio current/baseline <= base_median and
     * worst <= base_worst and, where the instruction meter ran, instructions <= base_instr */
    double base_median, base_worst, base_instr;
    /* how the time arm measures the same code's layout spread ("baselineSameCodeSpread"):
     * 1 "peers" (default), each side's time over the geometric mean of the subjects built
     * once in the same process (the peers and the lower bound), which a host that moves
     * whole processes moves alike (scripts/host_noise.py); 0 "own", each side's own time */
    int base_spread_peers;
    int unsupported_na;                         /* a gated row subject A leaves unsupported: 1 NA (a
                                                   row not implemented yet), 0 INVALID (default) */
    int alloc_check;                            /* 1: subject A must allocate <= alloc_max per op */
    double alloc_max;                           /* bytes per op (default 0) */
    double tolerance;                           /* relative tolerance of reported arithmetic */
    double alpha;                               /* Mann-Whitney significance shown in reports */
    double noise_cv;                            /* within-process CV flagged by the noise screen */
    double noise_spread;                        /* max/min process-ratio spread flagged */
    /* the sequential rule (SEQUENTIAL.md, gate_sequential.c): a gated row borderline after
     * the planned processes gets up to seq_max_batches batches of seq_batch more processes of
     * its suite and backend; with one process (--quick) "borderline" is a threshold within
     * seq_quick_band of the median */
    int seq_batch, seq_max_batches;
    double seq_quick_band;
    int nreport_only_retention;
    char report_only_retention[4][32];
    int nsuites;
    gate_suite_cfg suites[GATE_MAX_SUITES];
} gate_config;

void gate_config_default(gate_config *c);
/* Apply a JSON configuration file over c. 0 ok, 1 invalid (reported). */
int gate_config_load(const char *path, gate_config *c);
/* The configuration as JSON text (malloc'd), as written into gate-summary.json. */
struct cJSON;
struct cJSON *gate_config_json(const gate_config *c);
const gate_suite_cfg *gate_suite_find(const gate_config *c, const char *suite);
/* The suite's configuration, added (ratio of medians, gated) when c has none; NULL when
 * c is full (GATE_MAX_SUITES) or the name is 64 bytes or more. */
gate_suite_cfg *gate_suite_get(gate_config *c, const char *suite);
/* A project's "gate" section (tandem.json, tools/lib/tl_project.h) over c, as `tandem gate
 * --project` and `tandem attempt` both apply it: its configuration file (gate.config), then
 * gate.subject, gate.peers (when given), gate.lowerBound (report-only, when given),
 * gate.unsupportedRows, and the gated suites: gate.gatedSuites when given (a suite c does
 * not know is added, ratio of medians), else c's gated suites that the project has; every
 * other suite is report-only. 0 ok; 1 refused (reported: the file, the field, why). */
struct tl_project;
int gate_config_from_project(gate_config *c, const struct tl_project *p);
/* Case-insensitive substring match; a pattern ending in a digit must not be followed by
 * another digit ("N=1" matches "N=1 x" but not "N=128"); a leading "^" anchors the pattern
 * at the start of the text ("^NextFrame" does not match "Async method NextFrame"). */
int gate_pattern_match(const char *text, const char *pattern);
/* 1 when the suite's configuration names `row` as lower-bound code for `peer`. */
int gate_suite_lower_bound(const gate_suite_cfg *s, const char *peer, const char *row);

/* ---- against a baseline revision of subject A (gate_baseline.c) ------------------- */

/* Is `subject` a baseline revision of subject A ("<subject>@<rev>")? Never a peer. */
int gate_is_baseline(const gate_config *c, const char *subject);
/* Is `row` of `suite` in the gated set (suite gated, row not report-only)? */
int gate_row_gated(const gate_config *c, const char *suite, const char *row);
enum { GB_NA = 0, GB_SAME = 1, GB_IMPROVED = 2, GB_REGRESSION = 3, GB_LAYOUT = 4, GB_BUSY = 5 };
/* A row's median and worst ratio A / baseline against the baseline thresholds. */
int gb_time_kind(const gate_config *c, double median, double worst);
/* A row's instructions per op A / baseline against baselineInstructions. */
int gb_instr_kind(const gate_config *c, double ratio);
const char *gb_kind_name(int kind);    /* "regression", "improved", "same", "layout", "busy", "NA" */

/* ---- reports (gate_report.c) ------------------------------------------------------- */

typedef struct gr_sample {
    double ns, ops;                             /* raw ns of the timed region, ops in it */
    double control_ns;                          /* subtracted control (0 when none) */
    double allocs, bytes;                       /* allocation deltas over the timed region */
    double claimed_nspo;                        /* a per-sample ns/op the report states; NaN if none */
    double segments;                            /* timed segments (2 clock reads each); NaN if not stated */
} gr_sample;

typedef struct gr_row {
    char *name;
    char *subject;
    int supported;
    int skipped;                                /* "skipped": true, NA because the gate subject's is */
    gr_sample *s;
    size_t n;
    double claimed_mean, claimed_median;        /* stated ns/op statistics; NaN if absent */
    double claimed_nspo;                        /* a stated row ns/op (mean or total); NaN if absent */
    double claimed_alloc;                       /* stated alloc bytes/op; NaN if absent */
    double retained;                            /* retained bytes; NaN if absent */
    int gated;                                  /* the report's own gated flag; -1 absent */
    int arrays_disagree;                        /* raw arrays differ from the sample records */
} gr_row;

typedef struct gr_report {
    char *file;                                 /* relative to RUNS_DIR */
    char sha256[65];
    int ok;                                     /* parsed as a report */
    char *error;                                /* why not, when !ok */
    char *suite, *backend, *build_id, *retention, *flags, *build_type;
    int completed;
    char *failure;                              /* NULL when none */
    int samples;                                /* requested samples; -1 unknown */
    int layout;                                 /* the layout key: settings.loadOrder (bit 0: 0 forward
                                                   or absent, 1 reverse) + 2 x settings.layoutSeed folded */
    char **subjects;
    size_t nsubjects;
    gr_row *rows;
    size_t nrows;
    /* the report's clock (host/shell/clock.c); NULL / NaN when not stated */
    char *clock_name;
    double clock_read_ns, clock_granularity_ns;
} gr_report;

/* Read one report. Always fills out->file/sha256; out->ok says whether it parsed. */
void gr_report_load(const char *runs_dir, const char *rel, gr_report *out);
void gr_report_free(gr_report *r);
/* Is this top-level file of RUNS_DIR a per-process report (by name)? */
int gr_is_report_name(const char *name);
/* Is the build a release build? 1 yes; 0 no with *why. */
int gr_release(const gr_report *r, const char **why);
double gr_sample_value(const gr_sample *s); /* ns per op of one sample */

/* ---- statistics (gate_stats.c) ----------------------------------------------------- */

double gs_mean(const double *v, size_t n);
double gs_median(const double *v, size_t n);   /* copies; NaN when n == 0 */
double gs_cv(const double *v, size_t n);       /* stddev / mean */
typedef struct gs_mw {
    double u_a;          /* pairs (a, b) with a > b, ties 0.5 */
    double z, p;         /* normal approximation with tie and continuity correction, two-sided */
    double effect;       /* rank-biserial (U_b - U_a) / (n_a n_b): +1 every a below every b */
    size_t n_a, n_b;
} gs_mw;
void gs_mann_whitney(const double *a, size_t na, const double *b, size_t nb, gs_mw *out);

/* ---- text from reports (gate_text.c); every result is malloc'd ---------------------- */

/* One line of valid UTF-8: control characters and bytes that are not UTF-8 become "\xNN". */
char *gate_text_escape(const char *s);
/* Is s valid UTF-8 without control characters? */
int gate_text_plain(const char *s);
/* For gate.md: gate_text_escape, then Markdown punctuation backslash-escaped, <>& as entities. */
char *gate_md_escape(const char *s);
/* For gate-chart.svg: gate_text_escape (XML 1.0 allows no control characters), then entities. */
char *gate_xml_escape(const char *s);

/* ---- evaluation and outputs ------------------------------------------------------- */

enum { GATE_PASS = 0, GATE_INVALID = 1, GATE_USAGE = 2, GATE_FAIL = 3 };

typedef struct gate_opts {
    const char *runs_dir;
    const char *out_dir;        /* default runs_dir */
    const char *config_path;    /* NULL: defaults */
    int quiet;                  /* no summary on stdout */
    const char *instructions_dir; /* NULL, or *-instructions.json summaries for gate.md (report-only) */
    /* The instruction arm was asked for: a gated baseline row without its counts (the arm
     * failed, or a summary is missing) makes the baseline verdict "not judged", unless a
     * regression is found anyway. Without the arm a change below the time arm's reach passes
     * unseen, so "no regression" would claim what was not measured. */
    int instructions_expected;
} gate_opts;

/* Run the gate: read RUNS_DIR, write gate.md, gate-summary.json, gate-chart.svg into
 * out_dir. Returns GATE_PASS, GATE_FAIL or GATE_INVALID (GATE_USAGE on unreadable
 * configuration or folders). */
int gate_run(const gate_opts *o, const gate_config *cfg);
const char *gate_verdict_name(int code);

/* The exit code of `tandem gate` and `tandem attempt` (README "Exit codes"): the peer
 * verdict's (GATE_PASS, GATE_FAIL, GATE_INVALID), unless a baseline revision was judged
 * (baseline: its verdict as gate-summary.json "baseline" gives it; NULL: none was). Then a
 * regression is an exit of its own, whatever the peers say (a script asking "did my change
 * make it slower?" reads the exit alone), and a baseline that judged nothing ("no data") is
 * GATE_INVALID: the question asked has no answer. An INVALID peer verdict stays INVALID. */
enum { GATE_REGRESSION = 4, GATE_REGRESSION_AND_FAIL = 5 };
int gate_exit_code(int verdict, const char *baseline);
/* The baseline verdict of summary_path (a gate-summary.json) into buf (n bytes): 0 with buf
 * "" when the gate judged no baseline, 0 with the verdict, 1 when the file or the field
 * cannot be read (buf ""). */
int gate_summary_baseline(const char *summary_path, char *buf, size_t n);
/* The same from a loaded summary (a reader that needs its other fields loads it once). */
int gate_summary_baseline_of(const struct cJSON *summary, char *buf, size_t n);

/* ---- the sequential rule, for the attempt (gate_sequential.c, SEQUENTIAL.md) ------- */

typedef struct gate_seq_row {
    char suite[64], backend[16], row[160], peer[64];
    int nproc;                                  /* the processes it has so far */
    double median, worst, thr_median, thr_worst, spread;
} gate_seq_row;
/* Evaluate RUNS_DIR as the gate does (with its sequential record so far) and list the gated
 * rows still borderline at the record's last look: the rows the next batch is for. Returns
 * their count (*rows malloc'd, NULL when none); -1 when RUNS_DIR cannot be read; -2 when the
 * gate is INVALID for another reason than a busy host (*why: its first reason, malloc'd):
 * more processes cannot mend that. */
int gate_seq_next(const char *runs_dir, const gate_config *cfg, gate_seq_row **rows, char **why);

/* keep: write the synthetic runs into this folder (case00 passing, case03 failing, ...)
 * and keep them; NULL: a temporary folder, removed on success. 0 ok, 1 a check failed. */
int gate_self_check(int verbose, const char *keep);

#endif
