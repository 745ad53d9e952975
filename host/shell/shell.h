/* shell.h - internals shared by the player shell's files. */
#ifndef TD_PLAYER_SHELL_H
#define TD_PLAYER_SHELL_H

#include "backend.h"
#include "tandem_player.h"

/* Process-wide allocation counters (alloc.c). */
void td_player_alloc_read(td_player_alloc_counts *out);
/* Live heap bytes (usable sizes of live blocks). */
int64_t td_player_alloc_live_bytes(void);
/* The interposed allocator, for binding into JIT modules. {NULL,NULL}-terminated. */
extern const td_backend_symbol td_player_alloc_symbols[];

/* A row sample as the suite emitted it, and a (row, subject) of the report (main.c). */
typedef struct pl_sample {
    uint64_t ns, ops, allocs, frees, bytes;
    uint64_t segments, units;  /* timed segments and repetitions (0: not stated) */
    int64_t check, control_ns, retained;
    int has_ext, subtract;
} pl_sample;

typedef struct pl_row {
    char *subject;
    char *name;
    int unsupported;
    int skipped;          /* unsupported because --skip-na-of-first skipped it (skip.c) */
    int gated;
    char *reason;
    struct cJSON *samples; /* array of sample objects */
    pl_sample *raw;       /* the same samples, for the bench statistics */
    size_t nraw, capraw;
} pl_row;

/* The row's statistics into its report object o (stats.c). */
struct cJSON;
void pl_row_stats(struct cJSON *o, const pl_row *r);

/* The clock figures of a bench report (clock.c). */
#define PL_CLOCK_SHARE_TARGET 0.01 /* the clock reads' share of a sample: under 1% */
/* Measures the cost per read and the granularity of `now` (host->now_ns). */
void pl_clock_calibrate(uint64_t (*now)(void));
/* The share of a sample of `ns` over `segments` segments that the clock reads take. */
double pl_clock_share(uint64_t segments, uint64_t ns);
/* A row's worst share, smallest sample and samples under TD_PLAYER_MIN_SAMPLE_NS. */
void pl_clock_note_row(double worst_share, uint64_t min_ns, uint64_t short_samples);
struct cJSON;
/* The report's "clock" object (nothing before pl_clock_calibrate). */
void pl_clock_report_json(struct cJSON *root);

/* --skip-na-of-first (skip.c): one support-only call of the first subject lists the rows it
 * leaves unsupported; pl_skip_has says whether a row is one of them. 0, or the call's
 * non-zero return (then no row is skipped). */
int pl_skip_probe(const td_player_module *first, const char *suite, const td_player_host *host);
int pl_skip_has(const char *name);
const char *pl_skip_reason(void);   /* the report's reason of a skipped row */
void pl_skip_free(void);

/* Timed calls on each subject's own thread (subject_thread.c). _start starts the threads
 * of subjects 0..n-1, each with its own malloc arena: 0, or -1 (said). _call runs subject
 * index's suite on its thread with host and waits for it; *rc is run_suite's return: 0, or
 * -1 without a thread (said). _stop joins them. */
int pl_subject_threads_start(int n);
int pl_subject_thread_call(int index, td_player_host *host, int *rc);
void pl_subject_threads_stop(void);

#endif
