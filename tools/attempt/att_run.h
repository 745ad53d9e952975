/*
 * att_run.h - the state of one `tandem attempt` and its stages, shared by attempt.c
 * (options, the sequence of stages, the manifest and log) and the stage files:
 * att_prepare.c (pre-gate, staging, players, smoke), att_measure.c (the plan and the
 * interleaved processes, the instruction arm), att_sequential.c (more processes for borderline
 * rows), att_finish.c (gate, archive, files.sha256).
 */
#ifndef TD_ATT_RUN_H
#define TD_ATT_RUN_H
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <cjson/cJSON.h>
#include "gate/gate.h"
#include "tl_project.h"
#include "tl_hash.h"

#define MAXP 256
#define MAXS 8

#define ATT_MAX_GATED 8
#define ATT_MAX_LAYOUTS 8
/* Layouts of a baseline comparison by default. The time arm calls a row regressed only when
 * its ratio is beyond the same code's layout spread in every layout; with independent pads
 * per side, identical code passes that test by chance for about 3.5% of the noisy rows with 2
 * layouts, 0.2% with 3 and 0.01% with 4 (tools/gate/SAMPLES.md, "Layout"). */
#define ATT_BASELINE_LAYOUTS 4
typedef struct aproc {
    int idx, round;               /* round 0 = report-only processes */
    char suite[32], backend[8], retention[16];
    char name[128];               /* pNN-suite-backend-rR */
    char status[32];              /* pending ok failed infra-failed */
    int tries;
    double seconds;
    char outcome[160];
} aproc;

typedef struct att {
    char dir[PATH_MAX], self[PATH_MAX];
    FILE *log;
    uint64_t t0;
    cJSON *man;
    aproc p[MAXP];
    int np;
    char players[2][PATH_MAX];    /* per backend */
    const char *backends[2];
    int nb;
    char *subjects[MAXS];
    int ns;
    int quick, samples, warmup, cpu;
    double timeout, start_deadline;
    int fault_kind, fault_proc;   /* tests only */
    int busy_reruns_left;         /* re-runs of processes observed busy still allowed (att_stage_plan) */
    int busy_reruns;              /* re-runs made */
    int seq_budget;               /* processes the sequential rule may add (--sequential-budget) */
    double seq_band;              /* tests only: the gate's sequential.quickBand; < 0: the gate's own */
    /* the options (attempt_options) */
    const char *label, *out, *players_from, *report_only, *from_git;
    int rounds, require_quiet, instructions;
    char *instr_dir;              /* the instruction arm's summaries, when it ran */
    const char *baseline;         /* --baseline REV (att_baseline.c) */
    int layouts;                  /* --layouts K: builds of each side per layout (att_layouts.c) */
    long long layout_seed;        /* --layout-seed S, else drawn: the attempt seed of the layouts */
    uint64_t seeds[ATT_MAX_LAYOUTS]; /* layout k's seed (td_layout_seed_derive(S, k + 1)); all 0
                                        (the default build) when one layout is measured */
    struct td_baseline *bl;       /* prepared: the subject tandem@<rev> beside the others */
    char base_verdict[32];        /* the gate's baseline verdict (att_baseline_verdict), "" before */
    /* the project (tandem.json, att_project.c): its folder, gate and suites */
    char project[PATH_MAX];
    tl_project proj;              /* its tandem.json, loaded (att_project_load) */
    char *gated[ATT_MAX_GATED];   /* the gated suites, in rotation order */
    int ngated;
    char report_only_default[256];
    gate_config gate;             /* the built-in defaults under the project's gate section
                                     (gate_config_from_project); the gated suites are its */
    int subjects_given;           /* --subjects: the first is gated against every other */
    int smoke;                    /* the project names a smoke suite */
    char gate_subject[64];        /* gate.subject: the smoke suite runs on it */
    int def_rounds, def_samples;  /* the project's attempt defaults (0: Tandem's) */
    double def_timeout;
    char def_subjects[256], def_backends[16];
} att;

/* --project: load the project's tandem.json into a (att_project.c). 0 ok, 1 refused. */
int att_project_load(att *a, const char *given);
void att_project_free(att *a);

/* the log, the manifest and small helpers (attempt.c) */
void att_log(att *a, int to_stderr, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
char *att_path(const att *a, const char *rel);
int att_split(const char *s, char **out, int max);
void att_save_manifest(att *a);
void att_manifest_set_str(att *a, const char *key, const char *v);
int att_run_tool(att *a, char *const *args);
/* The arguments of a `tandem build` for backend b into args (room for ATT_BUILD_ARGS):
 * att_build_args_begin writes `build --backend B --staging S --out O` and returns the count;
 * the caller appends its subjects, label or seed; att_build_args_end appends a --suite for
 * each of the project's measured suites and the NULL, and returns how many suites. */
#define ATT_BUILD_ARGS 80
int att_build_args_begin(const att *a, int b, char *staging, char *out, char **args);
int att_build_args_end(att *a, char **args, int n);
void att_binaries_hash(const att *a, int b, char out[TL_SHA256_HEX], cJSON *list);
/* a player's command line for process q of backend b (att_measure.c; also the compile check) */
int att_player_argv(const att *a, int b, const aproc *q, const char *report, char **argv, char *store, size_t slen);
/* the stages, in the order the attempt runs them */
int att_quiet_pregate(att *a, double secs, int require);
int att_stage_pregate(att *a);
int att_stage_staging(att *a);
int att_stage_players(att *a);
/* --baseline: stage and build (or reuse) REV's runtime as tandem@<rev> into baseline/;
 * 0 go on (also without --baseline), 1 refused (REV unknown or not buildable) */
int att_stage_baseline(att *a);
/* --baseline with --layouts K > 1: the layouts' seeds (printed, in the manifest) and the AOT
 * modules of the gate subject and the baseline built in each seeded layout (layouts/);
 * 0 go on, 1 a build failed (att_layouts.c) */
int att_stage_layouts(att *a);
/* the layout of process q: 0 (the default) for report-only processes, else its round's */
int att_layout_of(const att *a, const aproc *q);
/* layout k's module of backend b for the gate subject (side 0) or the baseline (side 1):
 * a path in store, or NULL where the default one runs (k = 0, JIT) */
const char *att_layout_module(const att *a, int b, int k, int side, char *store, size_t len);
/* After the gate: its baseline verdict from gate/gate-summary.json into a->base_verdict ("not
 * judged" when the summary has none), logged, printed and recorded; returns it, or NULL
 * without --baseline. */
const char *att_baseline_verdict(att *a);
int att_run_smoke(att *a);
int att_stage_smoke(att *a);
void att_stage_plan(att *a);
int att_stage_processes(att *a);
/* one process of the plan (pinned, observed, retried; att_measure.c) 0 ok, 1 failed */
int att_run_process(att *a, aproc *q, int total);
/* the gate's configuration for this attempt's runs/ (att_finish.c) */
void att_gate_config(const att *a, gate_config *cfg);
/* after the planned processes: more processes for borderline rows, by the sequential rule
 * (att_sequential.c, tools/gate/SEQUENTIAL.md). 0 go on, 1 stopped by a signal. */
int att_stage_sequential(att *a);
void att_stage_instructions(att *a);
int att_write_sums(att *a);
int att_stage_gate(att *a);
void att_stage_archive(att *a);
void att_stage_done(att *a, int verdict, int exit_code);

#endif
