/*
 * task.c - the single-word completion protocol and the task queries.
 * The invariants are stated at the top of include/tandem/task.h.
 */
#include "../port/td_libc.h"
#include "td_internal.h"

void td_source_init(td_source *s, const td_source_ops *ops)
{
    memset(s, 0, sizeof(*s));
    s->ops = ops;
}

/* The completion's helpers (TD_SOURCE_RUN_CONTINUATION_, TD_SOURCE_WRITE_ERROR_,
 * TD_SOURCE_COMPLETE_OWNED_) are in td_internal.h; this one too is a macro, not a function:
 * tcc, which never inlines, would pay a call for it on every completion. */
/* Publish an outcome with a release store. Only when no other party may write the word any
 * more: the source is pending with its waiter (or shared handle) registered, so the mode is
 * final, and this thread is the single completer (or holds the claim). Every other query
 * then only reads the word (task.h). */
#define task_publish(s, w, st, err)                                                     \
    TD_WORD_STORE_((s), TD_ACTOR_COMPLETER, TD_WORD_DONE_((w), (st), (err)))

/* td_source_complete's CAS protocol (a source nobody owns, or taken from its owner). */
static TD_NOINLINE int task_complete_shared(td_source *s, uint32_t token, td_status st, int64_t value,
                                            const td_error *err)
{
    TD_SOURCE_SHARE_(s);
    uint32_t w = td_atomic_load_u32(&s->word);
    if (TD_UNLIKELY(TD_WORD_VERSION(w) != token || TD_WORD_STATUS(w) != TD_PENDING))
        return TD_E_STALE;
    s->value = value;
    TD_SOURCE_WRITE_ERROR_(s, st, err);
    if (TD_WORD_HAS_CONTINUATION_(w)) {
        /* The waiter (or shared handle) registered already: every other party now only
         * reads the word, so a release store publishes the outcome. */
        task_publish(s, w, st, err);
        TD_SOURCE_RUN_CONTINUATION_(s);
        return TD_OK;
    }
    for (;;) {
        uint32_t done = TD_WORD_DONE_(w, st, err);
        if (TD_WORD_CAS_(s, TD_ACTOR_COMPLETER, &w, done))
            break;
        /* Only the mode can have changed under us (a waiter registering). */
        if (TD_WORD_VERSION(w) != token || TD_WORD_STATUS(w) != TD_PENDING)
            return TD_E_STALE;
    }
    if (TD_WORD_HAS_CONTINUATION_(w))
        TD_SOURCE_RUN_CONTINUATION_(s);
    return TD_OK;
}

/* The main thread's completion of a source it owns at `token`, returning from the enclosing
 * function when its window opens: TD_E_STALE for another version, `not_pending` when the
 * version completed already, else TD_OK once published. `versioned` is a constant: 0 for a
 * completer of whatever version is pending (td_completion_source_set_result: its owner does
 * not reset it while a completion is in flight, completion.h), which checks no token. The
 * owner needs no claim: in its window nobody else writes the word. A macro, so that a caller
 * passing constants (td_source_try_succeed_) gets their branches folded, under tcc too. */
#define task_complete_owned_return(s, versioned, token, not_pending, st, v, err)        \
    do {                                                                                \
        if (TD_MAIN_OWNS_BEGIN_(s)) {                                                   \
            uint32_t ow_w_ = td_atomic_load_u32(&(s)->word);                            \
            if (TD_UNLIKELY((versioned) && TD_WORD_VERSION(ow_w_) != (token))) {        \
                TD_MAIN_OWNS_END_();                                                    \
                return TD_E_STALE;                                                      \
            }                                                                           \
            if (TD_UNLIKELY(TD_WORD_STATUS(ow_w_) != TD_PENDING)) {                     \
                TD_MAIN_OWNS_END_();                                                    \
                return (not_pending);                                                   \
            }                                                                           \
            TD_SOURCE_COMPLETE_OWNED_((s), ow_w_, (st), (v), (err));                          \
            return TD_OK;                                                               \
        }                                                                               \
    } while (0)

int td_source_complete(td_source *s, uint32_t token, td_status st, int64_t value, const td_error *err)
{
    task_complete_owned_return(s, 1, token, TD_E_STALE, st, value, err);
    return task_complete_shared(s, token, st, value, err);
}

/* td_source_complete by a completer that owns the source's pending version (a runner
 * completing itself, async.c; a claim holder): no token to check, the word is pending until
 * this publishes; only the mode may change under it (its waiter registering). The CAS
 * protocol's part, after TD_SOURCE_SHARE_. */
#define task_complete_own_cas(s, st, v, err)                                            \
    do {                                                                                \
        uint32_t co_w_;                                                                 \
        (s)->value = (v);                                                               \
        TD_SOURCE_WRITE_ERROR_((s), (st), (err));                                             \
        co_w_ = td_atomic_load_u32(&(s)->word);                                         \
        if (TD_WORD_HAS_CONTINUATION_(co_w_)) {                                        \
            task_publish((s), co_w_, (st), (err));                                      \
            TD_SOURCE_RUN_CONTINUATION_(s);                                                   \
            break;                                                                      \
        }                                                                               \
        while (!TD_WORD_CAS_((s), TD_ACTOR_COMPLETER, &co_w_, TD_WORD_DONE_(co_w_, (st), (err)))) \
            ;                                                                           \
        if (TD_WORD_HAS_CONTINUATION_(co_w_))                                          \
            TD_SOURCE_RUN_CONTINUATION_(s);                                                   \
    } while (0)

static TD_NOINLINE void task_complete_own_shared(td_source *s, td_status st, int64_t value, const td_error *err)
{
    TD_SOURCE_SHARE_(s);
    task_complete_own_cas(s, st, value, err);
}

/* The own completion: the owner's window, else the CAS protocol out of line. A macro, so that
 * the success (td_source_succeed_own_) gets its constant branches folded, under tcc too. */
#define task_complete_own(s, st, v, err)                                                \
    do {                                                                                \
        if (TD_MAIN_OWNS_BEGIN_(s)) {                                                   \
            uint32_t cw_w_ = td_atomic_load_u32(&(s)->word);                            \
            TD_SOURCE_COMPLETE_OWNED_((s), cw_w_, (st), (v), (err));                          \
        } else {                                                                        \
            task_complete_own_shared((s), (st), (v), (err));                            \
        }                                                                               \
    } while (0)

void td_source_complete_own_(td_source *s, td_status st, int64_t value, const td_error *err)
{
    task_complete_own(s, st, value, err);
}

/* Never inlined: td_runner_succeed_ tail-calls it, and inlined there it cost that function's
 * fast path two register moves (clang keeps the arguments where this body wants them). */
TD_NOINLINE void td_source_succeed_own_(td_source *s, int64_t value)
{
    task_complete_own(s, TD_SUCCEEDED, value, (const td_error *)NULL);
}

/* Racing completers (td_source_try_complete) under the CAS protocol: claim the pending
 * version with a CAS, then write and publish the outcome as the own completion does (with a
 * waiter registered, nobody else writes the word). */
static TD_NOINLINE int task_try_complete_shared(td_source *s, int versioned, uint32_t token, td_status st,
                                                int64_t value, const td_error *err)
{
    TD_SOURCE_SHARE_(s);
    uint32_t w = td_atomic_load_u32(&s->word);
    for (;;) {
        if (versioned && TD_WORD_VERSION(w) != token)
            return TD_E_STALE;
        if (TD_WORD_STATUS(w) != TD_PENDING || (w & TD_WORD_CLAIMED))
            return TD_DONE;
        if (TD_WORD_CAS_(s, TD_ACTOR_CLAIMER, &w, w | TD_WORD_CLAIMED))
            break;
    }
    task_complete_own_cas(s, st, value, err);
    return TD_OK;
}

/* The main thread's window on a source it owns, else the claim (CAS protocol, out of line);
 * returns from the enclosing function. A macro for td_source_try_succeed_'s constants. */
#define task_try_complete_return(s, versioned, token, st, v, err)                       \
    do {                                                                                \
        task_complete_owned_return((s), (versioned), (token), TD_DONE, (st), (v), (err)); \
        return task_try_complete_shared((s), (versioned), (token), (st), (v), (err));   \
    } while (0)

int td_source_try_complete(td_source *s, uint32_t token, td_status st, int64_t value, const td_error *err)
{
    task_try_complete_return(s, 1, token, st, value, err);
}

int td_source_try_succeed_(td_source *s, uint32_t token, int64_t value)
{
    task_try_complete_return(s, 1, token, TD_SUCCEEDED, value, (const td_error *)NULL);
}

/* Never inlined: td_completion_source_set_result tail-calls it for a source it does not own,
 * and inlined there it made that function too large to inline into its callers. */
TD_NOINLINE int td_source_try_succeed_current_(td_source *s, int64_t value)
{
    task_try_complete_return(s, 0, 0, TD_SUCCEEDED, value, (const td_error *)NULL);
}

void td_source_recycle(td_source *s)
{
    uint32_t w = td_atomic_load_u32(&s->word);
    s->cont_fn = NULL;
    s->cont_arg = NULL;
    s->value = 0;
    td_zero_24(&s->error);
    /* A release store: the cleared slots are visible before the new version, from which on
     * every query with the old token is stale. Until then the word reads as completed: only
     * the task's single consumer, which is here, may read the slots (task.h). */
    TD_WORD_STORE_(s, TD_ACTOR_OWNER, TD_WORD_NEXT_VERSION_(w) | (w & TD_WORD_IMMORTAL));
}

/* Shared checks of a query on a protocol source (w: a local copy of its word): the token
 * and the consumption mode. A macro, like TD_SOURCE_RELEASE_CONSUMED_ (task.h): tcc, which
 * never inlines, would pay a call for it on every query. */
#define task_check(w, token)                                                            \
    (TD_UNLIKELY(TD_WORD_VERSION(w) != (token)) ? TD_E_STALE                            \
     : TD_UNLIKELY(TD_WORD_MODE(w) == TD_MODE_CONSUMED) ? TD_E_STALE                    \
     : TD_UNLIKELY(TD_WORD_MODE(w) == TD_MODE_SHARED) ? TD_E_SHARED : TD_OK)

int (td_task_status)(td_task t, td_status *out)
{
    td_source *s = t.source;
    if (s == NULL || td_source_stamp_reached_(s, t.token)) {
        *out = TD_SUCCEEDED;
        return TD_OK;
    }
    if (s->ops->status)
        return s->ops->status(s, t.token, out);
    uint32_t w = td_atomic_load_u32(&s->word);
    int rc = task_check(w, t.token);
    if (rc != TD_OK)
        return rc;
    *out = (w & TD_WORD_CLAIMED) ? TD_PENDING : TD_WORD_STATUS(w);
    return TD_OK;
}

/* A registration's answer on a protocol source's word w (a local copy): TD_OK when the task
 * is pending at `token` in mode NONE (take the waiter), else the query's return code. */
#define task_registration_check(w, token)                                               \
    ({  int rc_c_ = task_check((w), (token));                                           \
        rc_c_ != TD_OK ? rc_c_                                                          \
        : TD_WORD_MODE(w) == TD_MODE_AWAITED ? TD_E_AWAITED                             \
        : TD_WORD_STATUS(w) != TD_PENDING ? TD_DONE : TD_OK; })

/* Registration on a source (the stamp shortcut already taken, or left to a stamp source's
 * own ops): a custom source answers through its ops; a protocol source takes the waiter with
 * one CAS (task.h). One function for both entries, so tcc pays one call on either. */
int td_source_on_completed_(td_source *s, uint32_t token, td_continuation_fn fn, void *arg)
{
    if (s->ops->on_completed)
        return s->ops->on_completed(s, token, fn, arg);
    uint32_t w;
    int rc;
    if (TD_MAIN_OWNS_BEGIN_(s)) {
        w = td_atomic_load_u32(&s->word);
        rc = task_registration_check(w, token);
        if (rc == TD_OK) {
            s->cont_fn = fn;
            s->cont_arg = arg;
            TD_WORD_STORE_(s, TD_ACTOR_REGISTRAR, w | TD_MODE_AWAITED);
        }
        TD_MAIN_OWNS_END_();
        return rc;
    }
    TD_SOURCE_SHARE_(s);
    w = td_atomic_load_u32(&s->word);
    rc = task_registration_check(w, token);
    if (rc != TD_OK)
        return rc;
    s->cont_fn = fn;
    s->cont_arg = arg;
    for (;;) {
        if (TD_WORD_CAS_(s, TD_ACTOR_REGISTRAR, &w, w | TD_MODE_AWAITED))
            return TD_OK;
        rc = task_check(w, token);
        if (rc != TD_OK)
            return rc;
        if (TD_WORD_STATUS(w) != TD_PENDING)
            return TD_DONE;
    }
}

int (td_task_on_completed)(td_task t, td_continuation_fn fn, void *arg)
{
    td_source *s = t.source;
    if (s == NULL || td_source_stamp_reached_(s, t.token))
        return TD_DONE;
    return td_source_on_completed_(s, t.token, fn, arg);
}

/* The outcome of a completed source, read by its one consumer. */
static void task_read_outcome(const td_source *s, uint32_t w, td_outcome *out)
{
    out->status = TD_WORD_STATUS(w);
    out->value = s->value;
    if (TD_WORD_STATUS(w) == TD_SUCCEEDED && !(w & TD_WORD_RECORD)) {
        td_zero_24(&out->error);    /* no record: the slots were not written (TD_SOURCE_WRITE_ERROR_) */
        return;
    }
    out->error.code = s->error.code;
    out->error.message = s->error.message;
    out->error.cancel = s->error.cancel;
}

/* Consumption (task.h): the single consumer reads the completed outcome and releases the
 * source, whose release store of the next version makes every later query with this token
 * stale. No read-modify-write: once the status is final no other party writes the word (the
 * completer is done, a registration sees the status and backs off), so the consumer alone
 * does; one task consumed by two threads at the same instant is a usage error the runtime
 * does not arbitrate (a shared handle, td_shared, is the way to give a task to several). */
static int task_get(td_source *s, uint32_t token, td_outcome *out)
{
    if (s->ops->get)
        return s->ops->get(s, token, out);
    uint32_t w = td_atomic_load_u32(&s->word);
    int rc = task_check(w, token);
    if (TD_UNLIKELY(rc != TD_OK))
        return rc;
    if (TD_UNLIKELY(TD_WORD_STATUS(w) == TD_PENDING || (w & TD_WORD_CLAIMED)))
        /* someone else's waiter (single consumer), or a racing completer still writing */
        return TD_WORD_MODE(w) == TD_MODE_AWAITED ? TD_E_AWAITED : TD_E_PENDING;
    task_read_outcome(s, w, out);
    if (!(w & TD_WORD_IMMORTAL))
        TD_SOURCE_RELEASE_CONSUMED_(s, w);
    return TD_OK;
}

int (td_task_get)(td_task t, td_outcome *out)
{
    /* The inline fast path's checks, for callers that reach here directly (tcc: no inline). */
    if (t.source == NULL || td_source_stamp_reached_(t.source, t.token)) {
        td_outcome_succeeded_(out, 0);
        return TD_OK;
    }
    if (TD_SOURCE_CONSUME_SUCCESS_(t.source, t.token, out))
        return TD_OK;
    return task_get(t.source, t.token, out);
}

int td_task_get_from_(td_source *s, uint32_t token, td_outcome *out)
{
    if (td_source_stamp_reached_(s, token)) {
        td_outcome_succeeded_(out, 0);
        return TD_OK;
    }
    return task_get(s, token, out);
}

int (td_task_i64_get)(td_task_i64 t, td_outcome *out)
{
    if (t.task.source == NULL) {
        td_outcome_succeeded_(out, t.value);
        return TD_OK;
    }
    if (TD_SOURCE_CONSUME_SUCCESS_(t.task.source, t.task.token, out))
        return TD_OK;
    return task_get(t.task.source, t.task.token, out);
}

/* A query's return code rc and the outcome o it read: the result queries' answer (task.h). */
static int task_result_of(int rc, const td_outcome *o, td_error *err)
{
    if (rc != TD_OK || o->status == TD_SUCCEEDED)
        return rc;
    if (err) {      /* field by field: a struct assignment is a memmove call under tcc */
        err->code = o->error.code;
        err->message = o->error.message;
        err->cancel = o->error.cancel;
    }
    return o->status == TD_CANCELED ? TD_E_CANCELED : TD_E_FAULTED;
}

int (td_task_result)(td_task t, td_error *err)
{
    td_outcome o;
    int rc = (td_task_get)(t, &o);
    return task_result_of(rc, &o, err);
}

int (td_task_i64_result)(td_task_i64 t, int64_t *value, td_error *err)
{
    td_outcome o;
    int rc = task_result_of((td_task_i64_get)(t, &o), &o, err);
    if (rc == TD_OK)
        *value = o.value;
    return rc;
}

#if defined(TD_PORT_DEFINE_TASK_GETS_)
/* The constants and offsets the port's assembly names (td_port_tcc_asm.h), against their C
 * definitions: the word's layout, a pooled success and its next version, the offsets. */
typedef char task_port_gets_layout_[(TD_ASM_SUCCEEDED == TD_SUCCEEDED &&
                                      TD_ASM_WORD_STAMPED == TD_WORD_STAMPED &&
                                      TD_ASM_WORD_POOLED_SUCCESS == (TD_SUCCEEDED | TD_WORD_POOLED) &&
                                      TD_ASM_POOLED_SUCCESS_TO_NEXT == TD_TOKEN_STEP - TD_SUCCEEDED &&
                                      (TD_SUCCEEDED | TD_WORD_POOLED) < TD_TOKEN_STEP &&
                                      TD_MODE_AWAITED == 0x4 && offsetof(td_source, word) == 0 &&
                                      offsetof(td_source, value) == TD_ASM_SOURCE_VALUE &&
                                      offsetof(td_source, cont_arg) == TD_ASM_SOURCE_CONT_ARG &&
                                      offsetof(td_outcome, value) == TD_ASM_OUTCOME_VALUE &&
                                      offsetof(td_outcome, error) == TD_ASM_OUTCOME_ERROR &&
                                      sizeof(td_outcome) == TD_ASM_OUTCOME_ERROR + 24 &&
                                      sizeof(td_task_i64) == 16) ? 1 : -1];
TD_PORT_DEFINE_TASK_GETS_(td_port_task_i64_get_, td_task_i64_get, td_port_task_get_, td_task_get);
TD_PORT_DEFINE_TASK_RESULTS_(td_port_task_i64_result_, td_task_i64_result, td_port_task_result_, td_task_result);
#endif

void td_task_forget_result(td_task t)
{
    td_outcome o;
    (void)td_task_get(t, &o);
}

int td_source_mark_shared(td_source *s, uint32_t token, td_continuation_fn fn, void *arg)
{
    TD_SOURCE_SHARE_(s);    /* a shared handle's parties may be on any thread */
    uint32_t w = td_atomic_load_u32(&s->word);
    int rc = task_check(w, token);
    if (rc != TD_OK)
        return rc;
    if (TD_WORD_MODE(w) == TD_MODE_AWAITED)
        return TD_E_AWAITED;
    /* Written before the CAS, like an awaiter's continuation (task.h). */
    s->cont_fn = fn;
    s->cont_arg = arg;
    for (;;) {
        if (TD_WORD_CAS_(s, TD_ACTOR_SHARER, &w, (w & ~TD_WORD_MODE_MASK) | TD_MODE_SHARED))
            return TD_WORD_STATUS(w) == TD_PENDING ? TD_OK : TD_DONE;
        rc = task_check(w, token);
        if (rc != TD_OK)
            return rc;
        if (TD_WORD_MODE(w) == TD_MODE_AWAITED)
            return TD_E_AWAITED;
    }
}

int td_source_take_shared(td_source *s, uint32_t token, td_outcome *out)
{
    TD_SOURCE_SHARE_(s);
    uint32_t w = td_atomic_load_u32(&s->word);
    for (;;) {
        if (TD_WORD_VERSION(w) != token || TD_WORD_MODE(w) != TD_MODE_SHARED)
            return TD_E_STALE;
        if (TD_WORD_STATUS(w) == TD_PENDING || (w & TD_WORD_CLAIMED))
            return TD_E_PENDING;
        if (TD_WORD_CAS_(s, TD_ACTOR_CONSUMER, &w, (w & ~TD_WORD_MODE_MASK) | TD_MODE_CONSUMED))
            break;
    }
    task_read_outcome(s, w, out);
    TD_SOURCE_RELEASE_CONSUMED_(s, w);   /* w: the word before the CAS to CONSUMED */
    return TD_OK;
}

/* ---- faulted and canceled task values -------------------------------------------- */

static void task_error_source_release(td_source *s)
{
    td_source_recycle(s);
    td_pool_return(&td_error_source_pool, s);
}

static const td_source_ops task_error_source_ops = { task_error_source_release, NULL, NULL, NULL, "error" };

/* When no error source can be rented, a faulted task must still read as a fault, never as
 * success: these static, immortal sources (never consumed or recycled) stand in. */
static td_source task_not_initialized_source = {
    .word = TD_WORD_IMMORTAL | (uint32_t)TD_FAULTED, .ops = &task_error_source_ops,
    .error = { TD_ERR_NOT_INITIALIZED, "the runtime is not initialised (td_runtime_init)", NULL } };
static td_source task_nomem_source = {
    .word = TD_WORD_IMMORTAL | (uint32_t)TD_FAULTED, .ops = &task_error_source_ops,
    .error = { TD_E_NOMEM, "out of memory: no error source", NULL } };

static td_task task_unrentable(void)
{
    if (td_error_source_pool.object_size == 0)
        return td_task_of(&task_not_initialized_source, 0);
    return td_task_of(&task_nomem_source, 0);
}

td_task td_from_error(int code, const char *message)
{
    td_source *s = (td_source *)td_pool_rent(&td_error_source_pool);
    if (TD_UNLIKELY(s == NULL))
        return task_unrentable();
    if (s->ops != &task_error_source_ops)
        td_source_init(s, &task_error_source_ops);
    uint32_t token = td_source_token(s);
    td_error e;
    e.code = code;
    e.message = message;
    e.cancel = NULL;
    td_source_complete(s, token, TD_FAULTED, 0, &e);
    return td_task_of(s, token);
}

td_task td_from_canceled(td_cancel_source *cancel)
{
    td_source *s = (td_source *)td_pool_rent(&td_error_source_pool);
    if (TD_UNLIKELY(s == NULL))
        return task_unrentable();
    if (s->ops != &task_error_source_ops)
        td_source_init(s, &task_error_source_ops);
    uint32_t token = td_source_token(s);
    td_error e = td_cancel_error(cancel);
    td_source_complete(s, token, TD_CANCELED, 0, &e);
    return td_task_of(s, token);
}

td_task_i64 td_from_error_i64(int code, const char *message)
{
    return td_task_i64_of(td_from_error(code, message));
}

td_task_i64 td_from_canceled_i64(td_cancel_source *cancel)
{
    return td_task_i64_of(td_from_canceled(cancel));
}
