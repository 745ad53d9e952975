/*
 * td_internal.h - declarations shared by the runtime's source files, not public API.
 * Every runtime .c file may be #included into one translation unit with the others, so
 * file-local (static) names carry their file's area as a prefix.
 */
#ifndef TD_INTERNAL_H
#define TD_INTERNAL_H

#include <pthread.h>     /* the port's TLS macros under tcc, the workers, the futures */
#include "../include/tandem/tandem.h"

/* Pools of the runtime's own sources (set up by td_runtime_init). */
extern td_pool td_error_source_pool;
extern td_pool td_auto_source_pool;

/* Word helpers. */
#define TD_WORD_VERSION(w) ((w) & TD_WORD_VERSION_MASK)    /* a token (task.h) */
#define TD_WORD_STATUS(w) ((td_status)((w) & TD_WORD_STATUS_MASK))
#define TD_WORD_MODE(w) ((w) & TD_WORD_MODE_MASK)
/* The completed word: the status, the claim dropped, and TD_WORD_RECORD when a success
 * carries an error record (task.h), which keeps it off the consumption fast path. */
#define TD_WORD_DONE_(w, st, err)                                                       \
    TD_WORD_OWNED_DONE_((w) & ~(TD_WORD_STATUS_MASK | TD_WORD_CLAIMED), (st), (err))
/* The completed word with nothing to clear: the pending word w of a source the main thread
 * owns, read in its window (TD_MAIN_OWNS_BEGIN_), whose status is PENDING and which is never
 * claimed (an owned source is a protocol source; the claim is the CAS protocol's). */
#define TD_WORD_OWNED_DONE_(w, st, err)                                                 \
    ((w) | (uint32_t)(st) | ((st) == TD_SUCCEEDED && (err) != NULL ? TD_WORD_RECORD : 0u))
/* AWAITED (a single consumer) and SHARED (the shared handle that owns the source) both
 * registered a continuation before their mode was set; the completer runs it. One unsigned
 * compare: the mode is AWAITED or SHARED, the two values after NONE. */
#define TD_WORD_HAS_CONTINUATION_(w)                                                    \
    ((uint32_t)(TD_WORD_MODE(w) - TD_MODE_AWAITED) <= (uint32_t)(TD_MODE_SHARED - TD_MODE_AWAITED))
/* The same for the pending word w of a source the main thread owns, read in its window
 * (TD_MAIN_OWNS_BEGIN_): the mode is NONE or AWAITED there, never SHARED (a shared handle
 * takes the ownership away first, td_source_mark_shared), so one bit test. */
#define TD_WORD_OWNED_HAS_CONTINUATION_(w) (((w) & TD_MODE_AWAITED) != 0)

/* td_loop_push_markers_ (loop.h) follows the main loop and the flow setting (loop.c). */
void td_loop_push_markers_refresh_(void);

/* The loop module's per-thread "current context" support lives in context.c (flow). */
void *td_context_capture_(void);
/* 1 when flow is suppressed on this thread: a suspension captures nothing. */
int td_context_flow_suppressed_(void);
void td_context_restore_(void *ctx);

/* Runtime lifetime hooks of the modules; runtime.c alone calls them, in its order. */
int td_context_runtime_init_(void);
void td_context_runtime_shutdown_(void);
int td_async_set_all_capacities_(uint32_t capacity);
void td_async_runtime_shutdown_(void);
int td_stream_runtime_init_(uint32_t capacity);
void td_stream_runtime_shutdown_(void);
int td_stream_set_capacity_(uint32_t capacity);
int td_loop_runtime_init_(void);
void td_loop_runtime_shutdown_(void);
int td_waits_runtime_init_(uint32_t capacity);
void td_waits_runtime_shutdown_(void);
int td_compose_runtime_init_(uint32_t capacity);
int td_waits_set_capacity_(uint32_t capacity);
int td_cancel_runtime_init_(uint32_t capacity);
void td_cancel_runtime_shutdown_(void);
int td_cancel_set_capacity_(uint32_t capacity);
int td_compose_set_capacity_(uint32_t capacity);
void td_compose_runtime_shutdown_(void);
int td_threads_runtime_init_(uint32_t capacity);
int td_threads_runtime_start_(uint32_t workers);
void td_threads_runtime_shutdown_(void);
int td_threads_set_capacity_(uint32_t capacity);
int td_shared_runtime_init_(uint32_t capacity);
void td_shared_runtime_shutdown_(void);
int td_shared_set_capacity_(uint32_t capacity);
int td_forget_runtime_init_(uint32_t capacity);
void td_forget_runtime_shutdown_(void);
int td_forget_set_capacity_(uint32_t capacity);
int td_tracking_runtime_init_(void);
int td_ownership_runtime_init_(void);
void td_ownership_runtime_shutdown_(void);
/* The writer of owned words becomes the pools' new owner thread (where the process has the
 * heavy barrier; else it stays 0): td_pool_set_owner_thread calls it (cold, pools quiescent). */
void td_ownership_follow_pools_(uintptr_t owner);
void td_tracking_runtime_shutdown_(void);
/* Tracking hooks of async.c, called only when td_runtime_settings.tracking is on. */
void td_tracking_begin_(td_runner *r, uint32_t token);
void td_tracking_end_(td_runner *r);
/* A tracked runner's recycle (async.c): the rental forgotten, the method's operations back. */
void td_runner_recycle_tracked_(td_runner *r);
/* Recompute td_runner_observed_ (async.h: tracking | flow, which every start tests once);
 * whoever writes either setting calls it (td_runtime_init, td_flow_set, td_tracking_enable). */
void td_runner_observed_refresh_(void);

/* now + ns without overflow: a deadline past the clock's range saturates (never reached). */
static inline int64_t td_deadline_after_(int64_t now, int64_t ns)
{
    if (ns > 0 && now > INT64_MAX - ns)
        return INT64_MAX;
    if (ns < 0 && now < INT64_MIN - ns)
        return INT64_MIN;
    return now + ns;
}

/* The error slot of a completion: the record, or none. Every completion that has a record
 * writes it (a fault, a cancellation, a success with a flag record, compose.h; task.h says
 * who may skip it), so a release need not clear it. A macro
 * writing field by field: under tcc a function would be a call on every completion and a
 * struct assignment a memmove call. */
#define td_source_set_error_(s, err)                                                    \
    do {                                                                                \
        td_source *se_s_ = (s);                                                         \
        const td_error *se_e_ = (err);                                                  \
        se_s_->error.code = se_e_ ? se_e_->code : 0;                                    \
        se_s_->error.message = se_e_ ? se_e_->message : NULL;                           \
        se_s_->error.cancel = se_e_ ? se_e_->cancel : NULL;                             \
    } while (0)

/* The completion's helpers (task.c, completion.c) are macros, not functions: tcc, which never
 * inlines, would pay a call for each on every completion. */
#define TD_SOURCE_RUN_CONTINUATION_(s) ((s)->cont_fn((s)->cont_arg))

/* The error slots of a completion: a success without a record leaves them as they are
 * (its word has no TD_WORD_RECORD, so every reader writes a zero record instead of reading
 * them: task_read_outcome, the inline queries), anything else writes them. */
#define TD_SOURCE_WRITE_ERROR_(s, st, err)                                              \
    do {                                                                                \
        if ((st) != TD_SUCCEEDED || (err) != NULL)                                      \
            td_source_set_error_((s), (err));                                           \
    } while (0)

/* The main thread's completion inside its window on an owned source (TD_MAIN_OWNS_BEGIN_),
 * of the pending word w it read there: nobody else writes the word, so a plain release
 * store publishes the outcome; the window closes before the continuation runs. */
#define TD_SOURCE_COMPLETE_OWNED_(s, w, st, v, err)                                     \
    do {                                                                                \
        (s)->value = (v);                                                               \
        TD_SOURCE_WRITE_ERROR_((s), (st), (err));                                       \
        TD_WORD_STORE_((s), TD_ACTOR_COMPLETER, TD_WORD_OWNED_DONE_((w), (st), (err))); \
        TD_MAIN_OWNS_END_();                                                            \
        if (TD_WORD_OWNED_HAS_CONTINUATION_(w))                                        \
            TD_SOURCE_RUN_CONTINUATION_(s);                                             \
    } while (0)

/* Waits for the combinators (waits.c): a delay whose caller holds one more ownership, so
 * it can abandon the delay (complete it canceled, detaching its loop item at the next
 * frame) whenever it likes; td_wait_abandon_ drops that ownership, exactly once. */
td_task td_delay_held_(int64_t ns, td_clock clock, const td_wait_options *o, td_source **held);
void td_wait_abandon_(td_source *held, uint32_t token);
/* The task a wait returns when it has no loop (TD_ERR_NO_LOOP). */
td_task td_wait_no_loop_(void);

/* ---- ownership (task.h's last invariant; ownership.c) ------------------------------ */

/* 1 while the main thread is inside a window in which it writes an owned source's word with
 * plain stores; written by the main thread only, read by td_source_disown_. */
extern volatile uint32_t td_main_busy_;
/* Open the main thread's window on s: 1 when this is the main thread (td_main_writer_thread_,
 * task.h) and it owns s (the window is then open: write the word with plain stores, then
 * TD_MAIN_OWNS_END_, before any call); 0 otherwise (no window). The one call inside a window
 * is completion_set_result_owned (completion.c, out of line only where the compiler
 * inlines): the window's own work, which ends it before calling anything. busy is set before
 * `owned` is read: a revocation either is seen here or sees the window open and waits for it
 * (the asymmetric fence, ownership.c). */
#define TD_MAIN_OWNS_BEGIN_(s) TD_MAIN_OWNS_BEGIN_AS_((s), td_main_writer_thread_)
/* ... with `writer` the thread variable tested: td_main_writer_thread_, or one that is it or
 * 0 (td_main_registrar_thread_) */
#define TD_MAIN_OWNS_BEGIN_AS_(s, writer)                                               \
    TD_MAIN_OWNS_BEGIN_IF_((s), (writer), TD_SOURCE_OWNED_BY_MAIN_)
/* ... with `owned_test` the test of `owned` read in the window (td_runner_succeed_'s compares
 * it whole: TD_SOURCE_OWNED_MAIN_UNPOOLED, main-owned, fails it) */
#define TD_MAIN_OWNS_BEGIN_IF_(s, writer, owned_test)                                   \
    ((writer) == td_thread_self() &&                                                    \
     (td_atomic_store_release_u32(&td_main_busy_, 1), td_compiler_barrier(),            \
      owned_test(td_atomic_load_u32(&(s)->owned))                                       \
          ? 1 : (td_atomic_store_release_u32(&td_main_busy_, 0), 0)))
#define TD_MAIN_OWNS_END_() td_atomic_store_release_u32(&td_main_busy_, 0)
/* td_main_writer_thread_ while flow is off, else 0: the owned registration of a runner's
 * resumption (td_runner_register_owned_, async.c) tests this one word instead of the flow
 * setting and then the writer. td_ownership_refresh_registrar_ recomputes it; whoever writes
 * either calls it (td_runner_observed_refresh_, which every writer of flow calls, and the
 * writer's own writers, ownership.c). */
extern volatile uintptr_t td_main_registrar_thread_;
void td_ownership_refresh_registrar_(void);
/* Ownership at a rental or reset, on the renting thread (nobody else holds a token yet). */
#define TD_SOURCE_OWN_(s)                                                               \
    td_atomic_store_release_u32(&(s)->owned,                                            \
                                TD_POOL_ON_OWNER_() ? TD_SOURCE_OWNED_MAIN : TD_SOURCE_OWNED_SHARED)
/* Take the ownership away, and wait until the main thread can no longer be writing the word
 * with a plain store: before any CAS on the word of a source that may be owned. */
void td_source_disown_(td_source *s);
#define TD_SOURCE_SHARE_(s)                                                             \
    do {                                                                                \
        if (TD_UNLIKELY(td_atomic_load_u32(&(s)->owned) != TD_SOURCE_OWNED_SHARED))     \
            td_source_disown_(s);                                                       \
    } while (0)

/* td_task_on_completed of {s, token} (s not NULL) without the stamp shortcut, for callers
 * that checked it already (the suspension): a stamp source's own ops answer the same. */
int td_source_on_completed_(td_source *s, uint32_t token, td_continuation_fn fn, void *arg);
/* Its common case inline (a statement expression: tcc pays no call): a source owned by the
 * main thread and registered on it, pending at `token` in mode NONE, takes the continuation
 * with a plain store setting mode AWAITED; anything else is td_source_on_completed_ (the CAS,
 * task.h). An owned source is a protocol source and never claimed: its word is compared
 * whole, its ops not loaded. `owned` is read once before the window too: a frame marker or
 * another custom source (flow on) then goes to td_source_on_completed_ at once. `flags`: more
 * word bits set with AWAITED (TD_WORD_RESUMES_RUNNER for td_runner_resume_ of a runner, the
 * only registration that may set it, task.h; else 0). */
#define td_source_register_(s, token, fn, arg, flags)                                   \
    ({  td_source *rg_s_ = (s);                                                         \
        int rg_rc_ = 1;                                                                 \
        if (TD_SOURCE_OWNED_BY_MAIN_(td_atomic_load_u32(&rg_s_->owned)) &&              \
            TD_MAIN_OWNS_BEGIN_(rg_s_)) {                                               \
            uint32_t rg_w_ = td_atomic_load_u32(&rg_s_->word);                          \
            if (TD_LIKELY(rg_w_ == (uint32_t)(token))) {                                 \
                rg_s_->cont_fn = (fn);                                                  \
                rg_s_->cont_arg = (arg);                                                \
                TD_WORD_STORE_(rg_s_, TD_ACTOR_REGISTRAR, rg_w_ | TD_MODE_AWAITED | (flags)); \
                rg_rc_ = TD_OK;                                                         \
            }                                                                           \
            TD_MAIN_OWNS_END_();                                                        \
        }                                                                               \
        if (rg_rc_ != TD_OK)                                                            \
            rg_rc_ = td_source_on_completed_(rg_s_, (token), (fn), (arg));              \
        rg_rc_; })

/* td_source_complete by the completer that owns the pending version (a runner, async.c). */
void td_source_complete_own_(td_source *s, td_status st, int64_t value, const td_error *err);
/* td_source_try_complete of a success without an error record (completion sources). */
int td_source_try_succeed_(td_source *s, uint32_t token, int64_t value);
/* The same at the version the source is at (td_completion_source_set_result): no token. */
int td_source_try_succeed_current_(td_source *s, int64_t value);

/* td_task_get of {s, token} (s not NULL) without building the task value. */
int td_task_get_from_(td_source *s, uint32_t token, td_outcome *out);

/* Loop internals used by the waits and the awaiters. */
int td_loop_marker_await_(td_source *marker, uint32_t token, td_continuation_fn fn, void *arg);
void td_loop_install_(td_loop *loop, uint32_t t);
td_task td_loop_marker_task_(td_loop *loop, uint32_t t, uint32_t target);
uint32_t td_loop_next_run_frame_(td_loop *loop, uint32_t t);
int td_loop_add_item_retire_(td_loop *loop, td_timing t, td_item_fn fn, td_continuation_fn retire, void *arg);
#define TD_LOOP_END_OF_FRAME ((td_timing)TD_TIMING_COUNT)

/* Pools of channels, operators and adapters (built on streams). */
int td_channel_runtime_init_(uint32_t capacity);
void td_channel_runtime_shutdown_(void);
int td_channel_set_capacity_(uint32_t capacity);
int td_operators_runtime_init_(uint32_t capacity);
void td_operators_runtime_shutdown_(void);
int td_operators_set_capacity_(uint32_t capacity);
int td_adapter_runtime_init_(uint32_t capacity);
void td_adapter_runtime_shutdown_(void);
int td_adapter_set_capacity_(uint32_t capacity);

#endif
