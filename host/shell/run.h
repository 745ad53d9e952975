/*
 * run.h - the state of one player run, shared by the shell's files: the arguments (args.c),
 * the host callbacks that record what the suites report (host.c), the report writer
 * (report.c) and main.c, which loads the subjects and calls the suites.
 */
#ifndef TD_PLAYER_RUN_H
#define TD_PLAYER_RUN_H

#include <limits.h>

#include "shell.h"

#define PL_MAX_SUBJECTS 16

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
    pl_subject subjects[PL_MAX_SUBJECTS];
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
                             the other order; pl_run.subjects keeps the command line's order) */
    int own_threads;      /* timed calls on each subject's own thread (subject_thread.c): cleared by
                             --shared-heap, for cases and under the instruction meter */
    int heap_offset;      /* --heap-offset: bytes allocated before loading, kept (main.c) */
    long long layout_seed; /* --layout-seed (backends/backend.h td_tu_relayout; report only on AOT) */
    char root_prefix[PATH_MAX];
    /* bench settings and validation */
    const char *retention;
    int flow, quick;
    int nfailures;
    char *fail_row, *fail_subject, *fail_message;
    struct cJSON *settings;      /* settings reported by the suites, per subject */
    const char *meter;    /* "time" (default) or "instructions" (under callgrind) */
    const char *meter_out;
    int metering;         /* a measured call (any pass) under the instruction meter */
    int sample;           /* the measured sample of the current call */
    /* host->sample_shape of the row sample about to be emitted */
    char shape_row[256];
    uint64_t shape_segments, shape_units;
} pl_state;

/* The one run of this process. */
extern pl_state pl_run;

/* ---- the arguments (args.c) ---------------------------------------------------------- */

typedef struct pl_args {
    const char *paths[PL_MAX_SUBJECTS]; /* the --module paths, then the --tu ones */
    int npaths, nmodules;
    int list_only;        /* --subjects */
    int by_function;      /* --meter-functions */
    int is_smoke;         /* the smoke suite: a case suite, one sample, no warm-up */
    int icount;           /* --meter instructions */
} pl_args;

#define PL_ARGS_RUN (-1)
/* Parses argv into pl_run and a, with the defaults the suite implies (--samples, --warmup).
 * PL_ARGS_RUN to go on, else the exit code (0 after --help; 2, the error said on stderr). */
int pl_args_parse(int argc, char **argv, pl_args *a);

/* ---- the host callbacks (host.c) ----------------------------------------------------- */

/* The crash and timeout markers (TANDEM-PLAYER-RESULT: crash / timeout, with the open case). */
void pl_host_install_handlers(void);
/* The callbacks and settings every suite call is given; icount: the instruction meter's. */
void pl_host_init(td_player_host *host, int icount);
/* --skip-na-of-first: the other subjects skip the rows the first one leaves NA. */
void pl_host_skip_na_rows(td_player_host *host);
/* After a suite call: a case it left open failed (the suite returned inside it). */
void pl_host_close_case(void);

/* ---- the report (report.c) ----------------------------------------------------------- */

/* Writes the JSON report (--out, else smoke-<backend>.json / <suite>-<backend>.json);
 * *passed: the run's verdict. 0, or -1 when the file could not be written (said). */
int pl_report_write(int is_smoke, int *passed);

#endif
