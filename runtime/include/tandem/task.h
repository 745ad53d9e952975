/*
 * task.h - task values, outcomes and the single-word completion protocol.
 *
 * A task is a value {source, token}. The source is the object that will complete it
 * (a runner, a completion source, a wait); the token is the source's version when the
 * task was made. A task with no source is already completed successfully; a typed task
 * (td_task_i64) then carries its result inline, so the completed task and from-result
 * are compile-time constants that need no runtime at all.
 *
 * Invariants of a protocol source (stated once, relied on everywhere):
 *   - word = [version:23][pooled:1][flags:4][mode:2][status:2], see TD_WORD_* below. Status,
 *     consumption mode and version change only by CAS on this one word (or by the plain
 *     stores of its owner, the last invariant).
 *   - completion: the single completer writes value/error, then one CAS publishes the
 *     status. Sources that several producers may race to complete claim first (a CAS
 *     that sets the CLAIMED flag), write, then publish.
 *   - a continuation is registered by writing it, then one CAS setting mode AWAITED
 *     while the status is still pending; whichever CAS comes second sees the other, so
 *     the continuation runs exactly once, either inline by the awaiter or by the completer.
 *   - once a pending source's mode is AWAITED or SHARED, the mode is final and only its
 *     completer (the single one, or the claim holder) writes the word: it publishes the
 *     status with a release store instead of a CAS. A manual source's owner must not reset
 *     it while a completion is in flight (the reset would be lost, as any racing reset is).
 *   - consumption, by the task's single consumer once the status is final, copies the
 *     result out and releases the source, whose release ends the token with a plain release
 *     store (the pool's next version, or mode CONSUMED for a source that keeps its outcome),
 *     no read-modify-write (after completion nobody else writes the word). A source pooled
 *     at its completion (TD_WORD_POOLED: a runner, async.h) is released by that store of the
 *     next version alone, which the consumer writes itself. Every later query
 *     with the old token fails with TD_E_STALE, never reads another rental's result. Two
 *     threads consuming one task at the same instant is a usage error the runtime does
 *     not arbitrate; a shared handle (shared.h) gives one task to several consumers, and
 *     its own consumption is a CAS to mode CONSUMED. One completer consumes for the consumer:
 *     a manual completion source's result in the main thread's window, with a runner of that
 *     thread waiting on it, is handed to the runner as a source-free task and the store that
 *     publishes the success sets mode CONSUMED (completion.c), as the runner's take would.
 *   - every completion writes the value slot (but the handover above, whose source is
 *     consumed in the same store); the error slots are written by a fault, a
 *     cancellation and a success with a record (which also sets TD_WORD_RECORD in the word).
 *     A success without one leaves them as an earlier use left them: every reader of such a
 *     success writes a zero record instead of reading them.
 *   - a custom source (ops->get set: frame markers, shared handles, switches) never has
 *     status SUCCEEDED in its word, so one compare of the word (TD_SOURCE_CONSUME_WORD_WITH_)
 *     tells a protocol source ready for the consumption fast path without loading its ops.
 *   - a source whose pool was full when it was released is freed; like any freed object
 *     it must not be queried again (the pools keep SourcePoolCapacity sources alive).
 *   - ownership (src/ownership.c) takes the read-modify-writes above off the path where one
 *     thread does everything. A source rented or reset on the main thread (the pools' owner
 *     thread, pool.h) is owned by it (`owned` TD_SOURCE_OWNED_MAIN): the main thread then
 *     (td_main_writer_thread_, where the process has membarrier) writes its word with plain
 *     stores, each inside a window bracketed by a flag of its own (td_main_busy_) whose
 *     opening re-reads `owned`. Any other thread takes the
 *     ownership away before it writes the word (td_source_disown_: REVOKING, an asymmetric
 *     heavy barrier, a wait for the window to close, SHARED); from then on every party uses
 *     the CAS protocol until the source is rented again. Sources of every other kind, and
 *     those rented on other threads, are SHARED from the start. Reads need neither. An
 *     owned source is a protocol source and never claimed (the claim is the CAS protocol's).
 */
#ifndef TANDEM_TASK_H
#define TANDEM_TASK_H

#include <stddef.h>
#include <stdint.h>
#include "../../port/td_port.h"

/* ---- statuses, error codes, outcomes ------------------------------------------- */

typedef enum td_status {
    TD_PENDING = 0,
    TD_SUCCEEDED = 1,
    TD_FAULTED = 2,
    TD_CANCELED = 3
} td_status;

/* Return codes of task queries (0 or negative; TD_DONE is a positive "not registered"). */
enum {
    TD_OK = 0,
    TD_DONE = 1,              /* on_completed: already complete, continuation not taken */
    TD_E_STALE = -1,          /* the token is old: the task was consumed or recycled */
    TD_E_PENDING = -2,        /* get on a task that has not completed (TD_E_AWAITED when
                               * another party registered its waiter on it) */
    TD_E_SHARED = -3,         /* the task was turned into a shared handle */
    TD_E_AWAITED = -4,        /* a waiter is already registered (single consumer) */
    TD_E_NOT_SUPPORTED = -5,  /* the operation is not supported here */
    TD_E_NOMEM = -6,          /* allocation failed */
    TD_E_INVALID = -7,        /* bad argument */
    TD_E_RETIRED = -8,        /* the loop was retired (td_loop_destroy): nothing runs on it */
    TD_E_FAULTED = -9,        /* td_task_result: the task faulted (consumed) */
    TD_E_CANCELED = -10       /* td_task_result: the task was canceled (consumed) */
};

/* Error codes carried by faulted outcomes (td_error.code). User codes start at 1000. */
enum {
    TD_ERR_NONE = 0,
    TD_ERR_CANCELED = 1,      /* a cancel record carried as a fault */
    TD_ERR_TIMEOUT = 2,
    TD_ERR_NOT_SUPPORTED = 3,
    TD_ERR_CHANNEL_CLOSED = 4,
    TD_ERR_NO_LOOP = 5,       /* a wait with no loop: no main loop (before td_runtime_init,
                               * after shutdown, or after the main loop was destroyed) */
    TD_ERR_NOT_INITIALIZED = 6, /* a pooled object was needed before td_runtime_init */
    TD_ERR_USER = 1000
};

struct td_cancel_source;

/* An error or cancel record. `message` points to static or caller-owned storage. */
typedef struct td_error {
    int code;
    const char *message;
    struct td_cancel_source *cancel;   /* the token that cancelled, if any */
} td_error;
typedef char td_error_is_24_bytes_[sizeof(td_error) == 24 ? 1 : -1];   /* td_outcome_succeeded_ */

typedef struct td_outcome {
    td_status status;
    int64_t value;          /* the result of a typed task */
    td_error error;         /* meaningful when FAULTED or CANCELED */
} td_outcome;

/* ---- sources ------------------------------------------------------------------- */

typedef void (*td_continuation_fn)(void *arg);
typedef struct td_source td_source;

typedef struct td_source_ops {
    /* Called once by the consumer after it copied the result out (protocol sources), with
     * the word still as completed: it ends the token, with a release store of the next
     * version (td_source_recycle) before pooling the source, or of mode CONSUMED
     * (td_source_keep_consumed_) for a source that keeps its outcome until a reset or that
     * other owners still hold (a combinator's inputs, a wait's loop item): the token ends
     * for the consumer whoever else holds the object, before the consumer's ownership
     * drops (the last owner recycles it). */
    void (*release)(td_source *s);
    /* Custom sources (frame markers, shared handles) override the protocol entirely.
     * NULL for protocol sources. Same return codes as the td_task_* functions. */
    int (*status)(td_source *s, uint32_t token, td_status *out);
    int (*on_completed)(td_source *s, uint32_t token, td_continuation_fn fn, void *arg);
    int (*get)(td_source *s, uint32_t token, td_outcome *out);
    const char *name;
} td_source_ops;

/* The word and the value first: a consumption reads both (and writes the word) within the
 * first 16 bytes, one cache line for a 16-byte aligned source. */
struct td_source {
    volatile uint32_t word;
    volatile uint32_t owned;            /* TD_SOURCE_OWNED_*: who may write the word (below) */
    int64_t value;
    const td_source_ops *ops;
    td_continuation_fn cont_fn;
    void *cont_arg;
    td_error error;
};

/* td_source.owned */
#define TD_SOURCE_OWNED_SHARED 0u       /* the CAS protocol, for every party */
#define TD_SOURCE_OWNED_MAIN 1u         /* the main thread writes the word with plain stores */
#define TD_SOURCE_OWNED_REVOKING 2u     /* another thread is taking it away (ownership.c) */
/* Owned as MAIN, a runner that td_runner_succeed_ does not pool (async.h,
 * TD_RUNNER_UNPOOLED_IF_): the bit of MAIN set, so every window but the success's takes it. */
#define TD_SOURCE_OWNED_MAIN_UNPOOLED 3u
#define TD_SOURCE_OWNED_BY_MAIN_(o) (((o) & TD_SOURCE_OWNED_MAIN) != 0)
/* The thread that writes owned words with plain stores: the main thread, the pools' owner
 * (td_pool_set_owner_thread, set by td_runtime_init's main loop), where the process has the
 * heavy barrier (ownership.c), else 0. */
extern volatile uintptr_t td_main_writer_thread_;

#define TD_WORD_STATUS_MASK 0x3u
#define TD_WORD_MODE_SHIFT 2
#define TD_WORD_MODE_MASK (0x3u << TD_WORD_MODE_SHIFT)
#define TD_MODE_NONE (0u << TD_WORD_MODE_SHIFT)
#define TD_MODE_AWAITED (1u << TD_WORD_MODE_SHIFT)
#define TD_MODE_SHARED (2u << TD_WORD_MODE_SHIFT)
#define TD_MODE_CONSUMED (3u << TD_WORD_MODE_SHIFT)
#define TD_WORD_CLAIMED 0x10u           /* a racing completer owns the value slot */
#define TD_WORD_IMMORTAL 0x20u          /* static source: never consumed or recycled */
/* A stamp source (frame markers; a custom source, never recycled): its cont_arg points at a
 * volatile uint32_t stamp, and a task on it has succeeded once (int32_t)(stamp - token) >= 0.
 * The inline query fast paths below answer that without a call; until then its ops answer. */
#define TD_WORD_STAMPED 0x40u
/* A success that carries an error record (a flag record, compose.h): its consumption takes
 * the out-of-line path, so the inline one knows a success's error record is all zero. */
#define TD_WORD_RECORD 0x80u
/* A source that is in its pool already (a runner pooled by its own success on the pools'
 * owner thread, async.c): completed, its consumer's release is the store of the next version
 * alone, no ops call, and the flag stays in that pending word, which tells the pool's rent
 * that the runner is free but its frame not yet cleared (async.h, td_runner_rent). */
#define TD_WORD_POOLED 0x100u
/* A pending word awaited (mode AWAITED) by a runner's resumption, registered in the main
 * thread's window (td_runner_register_owned_, async.c): cont_fn is td_runner_resume_ and
 * cont_arg the runner until the word's next version. A completer that reads it hands the
 * result over without comparing cont_fn (td_completion_source_set_result); anything else
 * reads the word as it would without it (the consumption masks it with the mode,
 * TD_CONSUME_ANY_MODE_). */
#define TD_WORD_RESUMES_RUNNER 0x200u
#define TD_WORD_VERSION_SHIFT 10
#define TD_WORD_VERSION_MASK 0xFFFFFC00u
/* A protocol source's token is its version in place, the word's bits above the flags (w &
 * TD_WORD_VERSION_MASK): a token is compared with a word, or turned into the word it expects,
 * without a shift. One version on is one TD_TOKEN_STEP more (modulo 2^32); a value with any
 * of the low bits set is no token. (A stamp source's token is a frame number instead.) */
#define TD_TOKEN_STEP (1u << TD_WORD_VERSION_SHIFT)
/* The token's limit: a version has 32 - TD_WORD_VERSION_SHIFT = 22 bits, so a source's token
 * repeats after TD_TOKEN_PERIOD = 4,194,304 rounds (rentals, resets). A task value kept while
 * its source moves through fewer later rounds is stale; kept across exactly a multiple of
 * TD_TOKEN_PERIOD rounds it reads that round as its own (test_token_wrap). A hot loop goes
 * through that many rounds of one object in a fraction of a second: keep no task value
 * once it is consumed. */
#define TD_TOKEN_PERIOD (1u << (32 - TD_WORD_VERSION_SHIFT))
/* A recycled source's word: pending, mode NONE, no flags (TD_WORD_POOLED neither), the
 * version after w's. */
#define TD_WORD_NEXT_VERSION_(w) (((w) & TD_WORD_VERSION_MASK) + TD_TOKEN_STEP)

/* ---- task values --------------------------------------------------------------- */

typedef struct td_task {
    td_source *source;
    uint32_t token;
} td_task;

/* A typed task: 16 bytes, so both compilers pass and return it in two registers (tcc copies a
 * 24-byte struct through memory with memmove). The result shares the second word with the
 * token: `value` is the result when task.source is NULL, and means nothing otherwise; write
 * the source first and the value (or the token) last. `t.task` is the untyped view. */
typedef union td_task_i64 {
    td_task task;           /* the untyped view: {source, token} */
    struct {
        td_source *source_; /* the same as task.source */
        int64_t value;      /* the result when task.source is NULL */
    };
} td_task_i64;

typedef char td_task_i64_is_16_bytes_[sizeof(td_task_i64) == 16 ? 1 : -1];

/* Constant initialisers: usable in static data before td_runtime_init. */
#define TD_COMPLETED_INIT { NULL, 0 }
#define TD_FROM_RESULT_INIT(v) { .source_ = NULL, .value = (int64_t)(v) }

/* Field by field, never an initialiser or a struct assignment: under tcc a padded initialiser
 * is a memset call and a struct assignment a memmove call (the same code under clang). */
static inline td_task td_completed(void) { td_task t; t.source = NULL; t.token = 0; return t; }
static inline td_task_i64 td_from_result(int64_t v)
{ td_task_i64 t; t.task.source = NULL; t.value = v; return t; }
static inline td_task td_task_of(td_source *s, uint32_t token) { td_task t; t.source = s; t.token = token; return t; }
/* value 0 first, then the token over its low half: a source-free view (token 0) reads 0. */
static inline td_task_i64 td_task_i64_of(td_task t)
{ td_task_i64 r; r.task.source = t.source; r.value = 0; r.task.token = t.token; return r; }

/* A faulted task (pooled source: trivial to make, released when consumed). When no source
 * can be rented the task is still faulted, on a static source: TD_ERR_NOT_INITIALIZED
 * before td_runtime_init (or after shutdown), TD_E_NOMEM when out of memory; a canceled
 * task then reads the same way (its token is not carried). */
td_task td_from_error(int code, const char *message);
td_task_i64 td_from_error_i64(int code, const char *message);
/* A canceled task carrying `cancel` as its token (may be NULL). */
td_task td_from_canceled(struct td_cancel_source *cancel);
td_task_i64 td_from_canceled_i64(struct td_cancel_source *cancel);

/* ---- queries (every one rejects a stale token with TD_E_STALE) ------------------- */

/* Each query is an out-of-line function (the whole protocol) behind an inline fast path
 * with the same name (a function-like macro): no source, or a stamp source whose stamp is
 * reached (TD_WORD_STAMPED), answers without a call. `(td_task_get)(t, &o)` or a function
 * pointer reaches the out-of-line function directly; both give the same answers. */
int td_task_status(td_task t, td_status *out);
/* Consume: copy the outcome and release the source. Single consumer. */
int td_task_get(td_task t, td_outcome *out);
int td_task_i64_get(td_task_i64 t, td_outcome *out);
/* Register the one continuation. TD_OK: it will be called once on completion (maybe on
 * another thread). TD_DONE: already complete, not registered. Negative: error. */
int td_task_on_completed(td_task t, td_continuation_fn fn, void *arg);
/* Consume as td_task_get, answering with the result alone: TD_OK when the task succeeded
 * (the typed one's value in *value); TD_E_FAULTED or TD_E_CANCELED when it completed
 * otherwise, also consumed, its error record in *err unless err is NULL (written only then);
 * any other code as td_task_get's, nothing consumed and nothing written. The consumer that
 * wants the value or the reason (UniTask's GetResult) pays no outcome to fill and test:
 * its success is the inline consumption and nothing else. */
int td_task_result(td_task t, td_error *err);
int td_task_i64_result(td_task_i64 t, int64_t *value, td_error *err);

/* 1 when s is a stamp source whose stamp reached `token` (TD_WORD_STAMPED). This and the
 * next are macros, not inline functions: tcc, which never inlines, would pay a call for each
 * on every query. */
#define td_source_stamp_reached_(s, token)                                              \
    ({  const td_source *td_sr_ = (s);                                                  \
        (td_atomic_load_u32((volatile uint32_t *)&td_sr_->word) & TD_WORD_STAMPED) &&   \
        td_source_stamp_at_(td_sr_, (token)); })
/* ... given that s is one: its stamp (at cont_arg) reached `token` */
#define td_source_stamp_at_(s, token)                                                   \
    ((int32_t)(td_atomic_load_u32((volatile uint32_t *)(s)->cont_arg) - (token)) >= 0)

/* A succeeded outcome with `value` and no error record. */
#if defined(td_port_store_tag_value_zero24_)    /* tcc: one asm block (td_port.h) */
typedef char td_outcome_layout_[(offsetof(td_outcome, value) == 8 &&
                                 offsetof(td_outcome, error) == 16 && sizeof(td_outcome) == 40) ? 1 : -1];
#define td_outcome_succeeded_(out, v) td_port_store_tag_value_zero24_((out), TD_SUCCEEDED, (v))
#else
#define td_outcome_succeeded_(out, v)                                                   \
    do {                                                                                \
        td_outcome *td_os_ = (out);                                                     \
        td_os_->status = TD_SUCCEEDED;                                                  \
        td_os_->value = (v);                                                            \
        td_zero_24(&td_os_->error);     /* code, message, cancel */                     \
    } while (0)
#endif

TD_INLINE int td_task_status_fast_(td_task t, td_status *out)
{
    if (t.source == NULL || td_source_stamp_reached_(t.source, t.token)) {
        *out = TD_SUCCEEDED;
        return TD_OK;
    }
    return (td_task_status)(t, out);
}

/* The word of a protocol source whose task `token` succeeded and may be consumed by its
 * single consumer: the version, status SUCCEEDED, mode NONE or AWAITED (the awaiter is
 * the consumer), not claimed, immortal, stamped or carrying a record (TD_WORD_RECORD), and
 * TD_WORD_POOLED or not: the word, masked by the modes taken (below), compared with each of
 * the two (TD_SOURCE_CONSUME_WORD_WITH_). The token's low bits are zero, so adding the status
 * is OR-ing it (one lea on x86). */
#define TD_WORD_SUCCEEDED_AT_(token) ((uint32_t)(token) + (uint32_t)TD_SUCCEEDED)
/* The modes a consumption's fast path takes (the `modes` of TD_SOURCE_CONSUME_WORD_WITH_, a
 * mask of the word): NONE or AWAITED (the out-of-line queries, and a resumption's take, which
 * finds its own registration there unless the task completed before it), or NONE alone (the
 * inline queries: a task awaited through td_task_on_completed and then queried takes the
 * out-of-line path, and the common get compares the word as it is, no mask). */
#define TD_CONSUME_ANY_MODE_ (~(uint32_t)(TD_MODE_AWAITED | TD_WORD_RESUMES_RUNNER))
#define TD_CONSUME_MODE_NONE_ (~(uint32_t)0)

/* The consumer's release of a completed, mortal source whose word `w` it read, its result
 * copied out: a source pooled at its completion (TD_WORD_POOLED) by the store of the next
 * version, the flag kept; any other by its release (td_source_ops.release), which ends the
 * token itself in one store. The consumer writes nothing else to the word. */
#define TD_SOURCE_RELEASE_CONSUMED_(s, w)                                               \
    do {                                                                                \
        if ((w) & TD_WORD_POOLED)                                                       \
            td_atomic_store_release_u32(&(s)->word, TD_WORD_NEXT_VERSION_(w) | TD_WORD_POOLED); \
        else                                                                            \
            (s)->ops->release(s);                                                       \
    } while (0)
/* A release that keeps the outcome (a manual completion source until its reset), or whose
 * object other owners still hold (compose_release, wait_release, ...): mode CONSUMED, so
 * every later query with the token is stale. The word is still as completed
 * (mode NONE or AWAITED): OR-ing sets CONSUMED. */
#define td_source_keep_consumed_(s)                                                     \
    td_atomic_store_release_u32(&(s)->word, td_atomic_load_u32(&(s)->word) | TD_MODE_CONSUMED)

/* Consumption's common case (the invariants above): if `s`'s task `token` succeeded, `copy`
 * copies the result out of the source, named `sv` there, and the source is released with a
 * plain release store: a pooled one (the first test, runners) by the next version with the
 * flag, which is the expected word plus one version less the status; any other by its
 * release (TD_SOURCE_RELEASE_CONSUMED_). A statement expression: tcc, which never inlines, pays no
 * call for it. 1: consumed; 0: anything else (a custom source, a fault, a stale, shared or
 * pending token), for the out-of-line protocol. */
#define TD_SOURCE_CONSUME_IF_SUCCEEDED_(s, token, sv, copy)                              \
    TD_SOURCE_CONSUME_WORD_IF_SUCCEEDED_((s), td_atomic_load_u32(&sv->word), (token), sv, copy, \
                                         TD_CONSUME_ANY_MODE_)
/* The same with the word read already: `w`, an expression that may name `sv`; `modes`, the
 * modes taken (TD_CONSUME_ANY_MODE_ or TD_CONSUME_MODE_NONE_). */
#define TD_SOURCE_CONSUME_WORD_IF_SUCCEEDED_(s, w, token, sv, copy, modes)               \
    TD_SOURCE_CONSUME_WORD_WITH_((s), (w), (token), sv, copy, 1, (modes))
/* ... and `releases`, a constant: 0 leaves a success whose release is a call (not pooled at
 * its completion) to the caller's rest, as anything else */
#define TD_SOURCE_CONSUME_WORD_WITH_(s, w, token, sv, copy, releases, modes)             \
    ({  td_source *sv = (s);                                                            \
        uint32_t td_cw_ = (w) & (modes);                                                \
        uint32_t td_ce_ = TD_WORD_SUCCEEDED_AT_(token) + TD_WORD_POOLED;                \
        int td_ct_ = 1;                                                                 \
        if (TD_LIKELY(td_cw_ == td_ce_)) {                                              \
            copy;                                                                       \
            td_atomic_store_release_u32(&sv->word, td_ce_ + (TD_TOKEN_STEP                \
                                                             - (uint32_t)TD_SUCCEEDED)); \
        } else if ((releases) && td_cw_ == td_ce_ - TD_WORD_POOLED) {                   \
            copy;                                                                       \
            sv->ops->release(sv);                                                       \
        } else                                                                          \
            td_ct_ = 0;                                                                 \
        td_ct_; })
/* ... the whole outcome into `out` (a query): the value; a success on this path has no
 * error record (TD_WORD_RECORD), so the record is written as zeros, not copied */
#define TD_SOURCE_CONSUME_SUCCESS_(s, token, out)                                        \
    TD_SOURCE_CONSUME_IF_SUCCEEDED_((s), (token), td_cs_, td_outcome_succeeded_((out), td_cs_->value))
/* ... only the value into `*(valp)` (the resumption's take) */
#define TD_SOURCE_TAKE_SUCCESS_(s, token, valp)                                          \
    TD_SOURCE_CONSUME_IF_SUCCEEDED_((s), (token), td_cs_, *(valp) = td_cs_->value)
/* ... the same in mode NONE only (the inline queries) */
#define TD_SOURCE_GET_SUCCESS_(s, token, valp)                                           \
    TD_SOURCE_CONSUME_WORD_IF_SUCCEEDED_((s), td_atomic_load_u32(&td_cs_->word), (token), td_cs_, \
                                         *(valp) = td_cs_->value, TD_CONSUME_MODE_NONE_)
/* ... the same for a source pooled at its completion only (TD_WORD_POOLED: its release is the
 * store, no call); 0 for any other, whose release is a call (the take of a step that makes
 * no call of its own but tail calls leaves those to its rest, async.h) */
#define TD_SOURCE_TAKE_POOLED_SUCCESS_(s, token, valp)                                   \
    TD_SOURCE_CONSUME_WORD_WITH_((s), td_atomic_load_u32(&td_cs_->word), (token), td_cs_, \
                                 *(valp) = td_cs_->value, 0, TD_CONSUME_ANY_MODE_)

/* The untyped inline queries' tests of the word `w` of a task's source `s` (not NULL), read
 * once, in this order: a success pooled at its completion (a method's task, the one most
 * often consumed), a reached stamp (frame waits, td_next_frame and td_yield, which need no
 * consumption: their word has TD_WORD_STAMPED and never matches the other two), any other
 * success in mode NONE. `copy` as TD_SOURCE_CONSUME_WORD_WITH_'s (td_cs_ the source). 1: the
 * task succeeded (consumed where it consumes); 0: anything else, for the out-of-line query.
 * Measured against the stamp first: the async-method get-result rows and Lifecycle untyped
 * three instructions less per get, the bare frame-wait get-result rows two more. */
#define TD_SOURCE_GET_WORD_ORDERED_(s, w, token, copy)                                  \
    (TD_SOURCE_CONSUME_WORD_WITH_((s), (w), (token), td_cs_, copy, 0, TD_CONSUME_MODE_NONE_) || \
     (((w) & TD_WORD_STAMPED) && td_source_stamp_at_((s), (token))) ||                  \
     TD_SOURCE_CONSUME_WORD_WITH_((s), (w), (token), td_cs_, copy, 1, TD_CONSUME_MODE_NONE_))

/* The inline queries write a success's outcome only at the end, from a value held in a
 * register across the release; the out-of-line rest writes a local of its own, so the
 * caller's outcome never escapes and can live in registers. */
TD_INLINE int td_task_get_fast_(td_task t, td_outcome *out)
{
    int64_t v = 0;
    if (t.source != NULL) {
        uint32_t w = td_atomic_load_u32(&t.source->word);  /* one read for both tests */
        if (!TD_SOURCE_GET_WORD_ORDERED_(t.source, w, t.token, v = td_cs_->value)) {
            td_outcome o;
            int rc = (td_task_get)(t, &o);
            *out = o;
            return rc;
        }
    }
    td_outcome_succeeded_(out, v);
    return TD_OK;
}

TD_INLINE int td_task_i64_get_fast_(td_task_i64 t, td_outcome *out)
{
    int64_t v = t.value;
    if (t.task.source != NULL) {
        if (TD_SOURCE_GET_SUCCESS_(t.task.source, t.task.token, &v))
            ;
        else if (td_source_stamp_reached_(t.task.source, t.task.token))
            v = 0;
        else {
            td_outcome o;
            int rc = (td_task_i64_get)(t, &o);
            *out = o;
            return rc;
        }
    }
    td_outcome_succeeded_(out, v);
    return TD_OK;
}

/* The result queries' common cases: no source, a succeeded protocol source consumed in place
 * (and, untyped, a reached stamp); the out-of-line function for anything else. Only the
 * return code and the value leave them: no outcome to merge with the rest's. */
TD_INLINE int td_task_result_fast_(td_task t, td_error *err)
{
    if (t.source != NULL) {
        uint32_t w = td_atomic_load_u32(&t.source->word);
        if (!TD_SOURCE_GET_WORD_ORDERED_(t.source, w, t.token, (void)0))
            return (td_task_result)(t, err);
    }
    return TD_OK;
}

TD_INLINE int td_task_i64_result_fast_(td_task_i64 t, int64_t *value, td_error *err)
{
    int64_t v = t.value;
    if (t.task.source != NULL && !TD_SOURCE_GET_SUCCESS_(t.task.source, t.task.token, &v)) {
        int64_t rest;   /* the rest's own: v, never addressed, stays in a register */
        int rc = (td_task_i64_result)(t, &rest, err);
        if (rc != TD_OK)
            return rc;
        v = rest;
    }
    *value = v;
    return TD_OK;
}

TD_INLINE int td_task_on_completed_fast_(td_task t, td_continuation_fn fn, void *arg)
{
    if (t.source == NULL || td_source_stamp_reached_(t.source, t.token))
        return TD_DONE;
    return (td_task_on_completed)(t, fn, arg);
}

#if TD_PORT_INLINES     /* where the compiler inlines (td_port.h); else plain calls */
#define td_task_status(t, out) td_task_status_fast_((t), (out))
#define td_task_get(t, out) td_task_get_fast_((t), (out))
#define td_task_i64_get(t, out) td_task_i64_get_fast_((t), (out))
#define td_task_on_completed(t, fn, arg) td_task_on_completed_fast_((t), (fn), (arg))
#define td_task_result(t, err) td_task_result_fast_((t), (err))
#define td_task_i64_result(t, valp, err) td_task_i64_result_fast_((t), (valp), (err))
#elif defined(TD_PORT_DEFINE_TASK_GETS_)
/* tcc: the consumption's common cases in assembly (td_port.h, defined in task.c), which
 * tail-jump to the out-of-line functions for the rest. */
int td_port_task_get_(td_task t, td_outcome *out);
int td_port_task_i64_get_(td_task_i64 t, td_outcome *out);
int td_port_task_result_(td_task t, td_error *err);
int td_port_task_i64_result_(td_task_i64 t, int64_t *value, td_error *err);
#define td_task_get(t, out) td_port_task_get_((t), (out))
#define td_task_i64_get(t, out) td_port_task_i64_get_((t), (out))
#define td_task_result(t, err) td_port_task_result_((t), (err))
#define td_task_i64_result(t, valp, err) td_port_task_i64_result_((t), (valp), (err))
#endif

/* Consume and discard (the result is observed; faults are not reported). */
void td_task_forget_result(td_task t);

/* 1 when the task is known complete without a call (fast path for awaiters). */
static inline int td_task_is_completed_fast(td_task t)
{
    return t.source == NULL;
}

/* ---- the protocol, for source implementations ------------------------------------ */

static inline uint32_t td_source_token(const td_source *s)
{
    return td_atomic_load_u32((volatile uint32_t *)&s->word) & TD_WORD_VERSION_MASK;
}
/* The same as a macro: tcc, which never inlines, would pay a call on every task a source makes. */
#define td_source_token(s)                                                              \
    (td_atomic_load_u32((volatile uint32_t *)&(s)->word) & TD_WORD_VERSION_MASK)

/* Prepare a freshly allocated source: pending, version 0. */
void td_source_init(td_source *s, const td_source_ops *ops);
/* Single completer: write the outcome and publish it with one CAS; runs the continuation.
 * Returns TD_OK, or TD_E_STALE when the token is old or the source already completed. */
int td_source_complete(td_source *s, uint32_t token, td_status st, int64_t value, const td_error *err);
/* Racing completers: the first wins (TD_OK); later ones get TD_DONE. */
int td_source_try_complete(td_source *s, uint32_t token, td_status st, int64_t value, const td_error *err);
/* Back to pending with the next version (after consumption), clearing the slots. */
void td_source_recycle(td_source *s);
/* Mark a source as owned by a shared handle and register the handle's continuation (run by
 * the completer, as for an awaiter). TD_OK: pending, fn(arg) will run once on completion.
 * TD_DONE: already complete, fn not registered (take it now). TD_E_AWAITED when a waiter
 * registered first; TD_E_SHARED / TD_E_STALE when already shared / consumed or recycled. */
int td_source_mark_shared(td_source *s, uint32_t token, td_continuation_fn fn, void *arg);
/* Consume a source a shared handle owns (the handle is the only one allowed to). */
int td_source_take_shared(td_source *s, uint32_t token, td_outcome *out);

#endif /* TANDEM_TASK_H */
