/* meter.h - the player shell's instruction meter (meter.c). */
#ifndef TD_PLAYER_METER_H
#define TD_PLAYER_METER_H

#include <stddef.h>
#include <stdint.h>

#define PL_METER_MAX_SAMPLES 64

typedef struct pl_icount {
    uint64_t ir;              /* instructions in the row's timed segments, all samples */
    uint64_t locked;          /* lock-prefixed / xchg-with-memory, outside the shell */
    uint64_t locked_harness;  /* the same inside the shell executable (allocation counters) */
    uint64_t ir_harness;      /* instructions inside the shell executable (host callbacks) */
    uint64_t calls, indirect; /* call instructions; the indirect ones */
    uint64_t undecoded;       /* instructions whose bytes could not be read */
    uint64_t segments;        /* timed segments */
    uint64_t ir_sample[PL_METER_MAX_SAMPLES];
    int requested, dumps;     /* row dumps asked for and read back */
} pl_icount;

/* A row's instructions by function (--meter-functions): callgrind's name of the function and
 * the file name of its object. */
typedef struct pl_fn_cost {
    char *object, *function;
    uint64_t ir;
} pl_fn_cost;
typedef struct pl_fn_list {
    pl_fn_cost *v;
    size_t n, cap;
} pl_fn_list;
/* The one entry of code without symbols that no listed function holds (under tcc: the stubs
 * through which its in-memory code calls global functions, one jump each). */
#define PL_METER_UNSYMBOLIZED "(code without symbols)"

int pl_meter_available(void);
/* --meter-functions: sum each row's instructions by function too (before the run). */
void pl_meter_by_function(int on);
/* The functions of the code callgrind sees without symbols (the JIT's: td_backend.functions),
 * sorted by address, named under `object`; held by the caller until pl_meter_collect. */
struct td_backend_function;
void pl_meter_code_functions(const struct td_backend_function *v, size_t n, const char *object);
/* --meter instructions: checks valgrind; prefix = valgrind's --callgrind-out-file. */
int pl_meter_start(const char *prefix, char *err, size_t len);
int pl_meter_enabled(void);
/* Before each suite call: the slot collected in it, -1 for none (warm-up). */
void pl_meter_set_pass(int pass);
/* The largest slot any meter used so far. */
int pl_meter_max_slot(void);
void pl_meter_on(int32_t slot);
void pl_meter_off(int32_t slot);
/* A row sample measured with a meter of `slot`: dump when it is the pass's slot. */
void pl_meter_row(size_t row, int sample, int32_t slot, uint64_t segments);
/* After the run, before the modules are unloaded: read the dumps. 0 ok, -1 err. */
int pl_meter_collect(char *err, size_t len);
/* A row's counts, or NULL when the row was never metered. */
const pl_icount *pl_meter_row_counts(size_t row);
/* The report: a row's "instructions" object (with --meter-functions its "functions"); the
 * report's "meter" object. */
struct cJSON;
void pl_meter_row_json(struct cJSON *o, size_t row, uint64_t ops, int samples);
void pl_meter_report_json(struct cJSON *root);

#endif
