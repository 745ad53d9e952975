/*
 * td_subject.h - the one table every benchmark subject implements (players/subjects/<name>/).
 *
 * A subject is a library measured against the others: `tandem` (the runtime), `callback`
 * (hand-written function-pointer continuations in per-frame arrays: the lower bound),
 * `fcontext` (stackful coroutines on Boost.Context) and `ucontext` (glibc
 * makecontext/swapcontext). Each implements the workloads below with its own idioms; the
 * suites (players/suites/<suite>/) drive them, time them and validate every result
 * through players/include/td_bench.h. A workload a subject cannot express is a NULL
 * entry (the suite reports the row NA with `na_reason`).
 *
 * Cohorts: the frame, gate and loop workloads run `n` concurrent operations in slots
 * 0..n-1 (n <= TD_SUBJECT_MAX_COHORT) that the subject owns (preallocated at init: no
 * slot array is allocated while timing). Phase functions return 0 on success or a
 * negative value on an error the suite reports as a validation failure; get-phases
 * return a checksum the suite compares with the expected one.
 *
 * The subject's frame loop: `frame()` runs one frame of the subject's own scheduler
 * (tandem: td_loop_run_frame on the runtime's main loop; peers: their per-frame arrays).
 */
#ifndef TD_SUBJECT_H
#define TD_SUBJECT_H

#include <stdint.h>

/* This table's version (see "THE ABI VERSIONS" in tandem_player.h): bump it when an
 * entry is added, removed, moved or changes meaning. A module compiled against another
 * version is refused at load by the player, both versions named. */
#define TD_SUBJECT_ABI_VERSION 1u

#define TD_SUBJECT_MAX_COHORT 4096u
#define TD_SUBJECT_MAX_SUSPENSIONS 4u
#define TD_SUBJECT_MAX_WHENANY 32u

/* Frame workloads of the primary suite. */
enum {
    TD_WL_NEXTFRAME = 0,          /* a bare next-frame wait (no method) */
    TD_WL_METHOD_NEXTFRAME = 1,   /* an async method awaiting next_frame once, untyped */
    TD_WL_METHOD_NEXTFRAME_I64 = 2 /* the same returning slot + 1 */
};

/* Throughput loops: 16 awaits each. */
enum {
    TD_LOOP_NEXTFRAME = 0,        /* untyped, next_frame() */
    TD_LOOP_YIELD = 1,            /* untyped, yield() */
    TD_LOOP_NEXTFRAME_I64 = 2     /* typed, next_frame(), returns 42 */
};

typedef struct td_subject_ops {
    const char *name;
    const char *kind;             /* "stackless", "callbacks", "stackful" */
    /* Once per process, before anything else (allocates the subject's preallocated state). */
    int (*init)(void);
    /* Context flow on/off (1 when the subject emulates/implements it). */
    void (*set_flow)(int on);
    /* Matched retention: raise every pool to `cohort` objects; 0 restores the defaults. */
    void (*retain)(uint32_t cohort);
    /* Default pool capacities, for the report (e.g. "runner=128 source=256"). */
    const char *(*capacities)(void);

    /* ---- synchronous (primary, N = 1): n operations in a loop, returns a checksum ---- */
    int64_t (*completed_get)(uint32_t n);            /* sum of statuses (1 each) */
    int64_t (*from_result_get)(uint32_t n);          /* sum of results i for i < n */
    int64_t (*method_completed_get)(uint32_t n);     /* count of successes */
    int64_t (*method_completed_i64_get)(uint32_t n); /* sum of results i for i < n */

    /* ---- frame waits (primary): schedule, then frames, then get-result ---- */
    int (*wait_schedule)(int workload, uint32_t n);
    void (*frame)(void);
    uint32_t (*wait_pending)(int workload, uint32_t n);   /* untimed validation */
    int64_t (*wait_get)(int workload, uint32_t n);        /* typed: sum of slot+1; else n */

    /* ---- gates (builderlifecycle, buildercycle) ---- */
    /* Untimed: make the n x susp manual gates ready (pending) for a round. */
    int (*gates_reset)(uint32_t n, uint32_t susp);
    /* Start n methods; method i awaits gate (i, 0), (i, 1), ... in turn. */
    int (*gates_start)(int typed, uint32_t n, uint32_t susp);
    /* Complete gate (i, k) of every method with value i + k; each resumption runs inline. */
    int (*gates_complete)(uint32_t n, uint32_t k);
    uint32_t (*gates_pending)(uint32_t n);                 /* untimed validation */
    /* Consume the n results (and the library's deferred return work).
     * typed: sum over i of sum_k (i + k); untyped: n. */
    int64_t (*gates_get)(int typed, uint32_t n, uint32_t susp);

    /* ---- throughput: n loops of `awaits` awaits under the subject's loop ---- */
    int (*loops_start)(int kind, uint32_t n, uint32_t awaits);
    uint32_t (*loops_pending)(uint32_t n);
    int64_t (*loops_get)(int kind, uint32_t n);            /* typed: 42 n; else n */

    /* ---- whenany: construct over `inputs` producers, complete them in reverse order,
     * consume the winner; `reps` times. Returns the sum of winner indexes (typed: of
     * winner values, producer j completes with 100 + j). */
    int64_t (*whenany)(int typed, uint32_t inputs, uint32_t reps);

    /* Why a NULL entry is NA. */
    const char *na_reason;
} td_subject_ops;

/* Defined by the subject compiled into this translation unit. */
extern const td_subject_ops td_subject;

#endif /* TD_SUBJECT_H */
