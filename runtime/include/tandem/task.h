/*
 * task.h - task values, outcomes and the single-word completion protocol.
 *
 * A task is a value {source, token}. The source is the object that will complete it
 * (a runner, a completion source, a wait); the token is the source's version when the
 * task was made. A task with no source is already completed successfully; a typed task
 * (td_task_i64) then carries its result inline, so the completed task and from-result
 * are compile-time constants that need no runtime at all.
 *
 * The protocol behind a task (the source's word, its invariants, the state table and every
 * write of the word) lives in detail/word.h, included below for the inline fast paths: this
 * header is the API.
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

#include "detail/word.h"

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

/* Where the compiler inlines, the queries above are inline functions (detail/task.h): a
 * task that is source-free or already complete is answered without a call; under tcc the
 * consumption's common cases are the port's assembly functions. The same answers either way. */

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

/* The queries' fast paths: internal, exposed for inlining. */
#include "detail/task.h"

#endif /* TANDEM_TASK_H */
