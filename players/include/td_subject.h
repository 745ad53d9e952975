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
 * version is refused at load by the player, both versions named. History: 1 the first
 * table; 2 the cancellation groups and per-frame races (cancel_*, race_*, td_cancel_tally). */
#define TD_SUBJECT_ABI_VERSION 2u

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

/* Cancellation groups (the cancellation suite). A group is `n` async methods started
 * together, each suspended (directly or through its callee) on a next-frame wait that
 * observes the group's cancellation token, and each with a cleanup step: the C counterpart
 * of a `finally`, run once whether the method completes or is cancelled, and counted.
 *   side by side: n methods awaited by one when_all (the group's task); typed: method i
 *                 returns i + 1, the group the sum;
 *   nested:       a chain of depth n, method d awaiting method d + 1, the innermost
 *                 suspended on the wait; typed: the innermost returns 1, every caller its
 *                 callee's value + 1 (the group: n).
 * Cancelled, every method reads CANCELED with the group's token and the group's task does
 * too; completed normally (the wait reached), every method succeeds. */
enum {
    TD_CANCEL_SIDE_BY_SIDE = 0,
    TD_CANCEL_NESTED = 1
};

/* Per-frame races: a next-frame wait (the winner) against a signal that never comes, the
 * loser either a leaf wait on the signal or an async method awaiting it (with a cleanup
 * step); the race cancels the loser with a token of its own once the frame wait wins. */
enum {
    TD_RACE_LEAF = 0,
    TD_RACE_METHOD = 1
};

/* What a group's (or a race's) consumption saw, for the suite to validate. */
enum { TD_TALLY_PENDING = 0, TD_TALLY_SUCCEEDED = 1, TD_TALLY_CANCELED = 2, TD_TALLY_OTHER = 3 };
typedef struct td_cancel_tally {
    int32_t status;       /* the group's (race's) outcome: TD_TALLY_* */
    int32_t token_ok;     /* 1 when a CANCELED outcome names the group's token */
    uint32_t cleanups;    /* cleanup steps run since the start (each method's once) */
    uint32_t canceled;    /* methods (race: losers) that read CANCELED with the group's token */
    int64_t value;        /* typed and completed: the group's result; race: the winner's index */
} td_cancel_tally;

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

    /* ---- cancellation: one group at a time (see TD_CANCEL_*) ---- */
    /* Start the group (a fresh token); every method runs to its suspension. */
    int (*cancel_start)(int typed, int shape, uint32_t n);
    /* Cancel the group's token. The next frame() delivers it: every method then runs its
     * cleanup and completes CANCELED (without this call, that frame completes them). */
    int (*cancel_request)(void);
    uint32_t (*cancel_pending)(void);                       /* methods not finished (untimed) */
    /* Consume the group's task (and the library's deferred return work). */
    int (*cancel_get)(int typed, td_cancel_tally *out);

    /* ---- per-frame race (see TD_RACE_*): start one race, frame(), then consume it ---- */
    int (*race_start)(int loser);
    int (*race_get)(int loser, td_cancel_tally *out);

    /* Why a NULL entry is NA. */
    const char *na_reason;
} td_subject_ops;

/* Defined by the subject compiled into this translation unit. */
extern const td_subject_ops td_subject;

#endif /* TD_SUBJECT_H */
