/* bench_icount.h - the instruction arm of `tandem bench` (bench_icount.c). */
#ifndef TD_BENCH_ICOUNT_H
#define TD_BENCH_ICOUNT_H

#include <cjson/cJSON.h>

typedef struct bench_icount_spec {
    const char *player_dir, *backend, *suite, *work, *out;
    const char *samples, *warmup, *retention, *flow, *timeout, *filter;
    int quick;
    /* a baseline revision (tools/baseline/baseline.h): the subject of that name is run from
     * its own module or TU (its folder is its include root), with the same shell */
    const char *alt_subject, *alt_module;
    /* --functions N: each row's instructions by function too (the player's --meter-functions),
     * the first N printed per row and subject; 0 off */
    int functions;
} bench_icount_spec;

/* One callgrind process per subject; prints the table, writes the summary. 0 ok, 1 failed. */
int bench_icount_run(const bench_icount_spec *sp, char **subjects, int nsub);
/* The table of a summary written by bench_icount_run. */
void bench_icount_print(const cJSON *summary);
/* Its rows' functions (a summary measured with functions): the first `top` per row and
 * subject, instructions per op, and the rest's sum. */
void bench_icount_print_functions(const cJSON *summary, int top);

#endif
