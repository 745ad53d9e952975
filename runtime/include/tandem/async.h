/*
 * async.h - stackless async methods: frames, step functions and pooled runners.
 *
 * An async method is three things:
 *   - a frame struct holding the locals that live across awaits;
 *   - a step function `void step(td_runner *r, FRAME *f)` written with the TD_BEGIN /
 *     TD_AWAIT / TD_RETURN / TD_END macros (a switch on the runner's resume point);
 *   - a method descriptor (TD_METHOD_DEFINE) that owns the pool of runners.
 * A runner is the source of its method's task. It is rented per call, holds the frame
 * inline, calls the step function with a pointer to that pooled frame (no copy in or out)
 * and goes back to its pool when its task is consumed, with the frame cleared: until then
 * the caller may read the frame (out parameters).
 *
 * Synchronous completion: td_runner_start points r->sync at its own local before the
 * first step; td_runner_suspend_ clears it before registering a continuation. While it is
 * set, nobody else holds the runner's token, so td_runner_finish_ writes the outcome and
 * reports it there without touching the word (no CAS); start then releases a success at
 * once (a source-free task) or publishes a fault with a plain store.
 *
 * Invariant: once a step function has completed its runner (TD_RETURN, a propagated
 * fault) or registered a continuation (a suspending TD_AWAIT), it returns at once and
 * nothing touches the runner again on that thread: the task may already have been
 * consumed and the runner re-rented on another thread.
 *
 * Example:
 *     typedef struct { int64_t x; } add_one_frame;
 *     static void add_one_step(td_runner *r, add_one_frame *f) {
 *         TD_BEGIN(r);
 *         TD_AWAIT(r, td_next_frame(TD_TIMING_UPDATE));
 *         TD_RETURN_VALUE(r, f->x + 1);
 *         TD_END(r);
 *     }
 *     TD_METHOD_DEFINE(add_one, add_one_frame, add_one_step);
 *     ...
 *     td_runner *r = td_runner_rent(&add_one_method);
 *     TD_FRAME(r, add_one_frame)->x = 41;
 *     td_task_i64 t = td_runner_start_i64(r);
 */
#ifndef TANDEM_ASYNC_H
#define TANDEM_ASYNC_H

#include <stdint.h>
#include "task.h"
#include "pool.h"
#include "loop.h"
#include "runtime.h"

typedef struct td_runner td_runner;
typedef void (*td_step_fn)(td_runner *r, void *frame);

typedef struct td_method {
    const char *name;
    uint32_t frame_size;
    td_step_fn step;
    td_pool pool;                   /* runners of this method */
    struct td_method *next;         /* registered methods (td_method_register) */
    volatile uint32_t registered;   /* 1 once in the registry (set under its lock) */
} td_method;

struct td_runner {
    td_source source;               /* first member: the runner is its task's source */
    td_method *method;
    uint32_t resume;                /* resume point; 0 = start */
    uint32_t flowed;                /* 1 when `context` was captured at suspension */
    td_task_i64 awaiting;           /* the task the step is waiting on */
    void *context;                  /* ambient context captured at suspension (flow on) */
    td_outcome last;                /* outcome of the last TD_AWAIT_OUTCOME */
    uint32_t *sync;                 /* while the first step runs on td_runner_start's thread
                                     * and before any registration: where finish_ reports
                                     * a synchronous completion (NULL otherwise) */
    union { int64_t i; double d; void *p; long double ld; } frame[]; /* the frame */
};

/* Define `name##_method` for frame type F and step function STEP. The slot array of its
 * runner pool is static data: no initialisation is needed before the first call. */
#define TD_METHOD_DEFINE(name, F, STEP)                                               \
    static void *name##_runner_slots[2 * TD_DEFAULT_METHOD_POOL_SLOTS];                \
    td_method name##_method = {                                                       \
        #name, (uint32_t)sizeof(F), (td_step_fn)(STEP),                               \
        TD_POOL_STATIC_INIT(name##_runner_slots, TD_DEFAULT_METHOD_POOL_SLOTS,         \
                            TD_RUNNER_SIZE_(sizeof(F)), #name),                       \
        0, 0 }
#define TD_METHOD_DECLARE(name) extern td_method name##_method
/* A runner's size: the frame rounded up to whole 8-byte words, and at least
 * TD_RUNNER_SMALL_FRAME_ bytes, so the release clears a small frame with four word stores
 * and no branch on its size or memset call (runner_release). */
#define TD_RUNNER_SMALL_FRAME_ 32u
#define TD_RUNNER_SIZE_(frame_size) (sizeof(td_runner) + \
    ((frame_size) <= TD_RUNNER_SMALL_FRAME_ ? TD_RUNNER_SMALL_FRAME_ : (((frame_size) + 7) & ~(size_t)7)))

#define TD_DEFAULT_METHOD_POOL_SLOTS 128

/* Register a method so td_set_runner_pool_capacity and shutdown reach its pool (cold). A
 * method registers itself when its first runner is allocated, taking the runner-pool
 * capacity in force (td_set_runner_pool_capacity reaches every method, used or not yet);
 * calling this explicitly is only needed to size a pool before its first use. */
void td_method_register(td_method *m);
int td_method_set_capacity(td_method *m, uint32_t capacity);

/* Rent a runner with a zeroed frame (allocates only when the pool is empty). */
td_runner *td_runner_rent(td_method *m);
td_runner *td_runner_ready_(td_method *m, td_runner *r);
/* Its fast path (a function-like macro over the function of the same name): a runner popped
 * from the owner's segment of the method's pool is ready unless freshly allocated (zeroed:
 * no ops yet, e.g. td_pool_prefill's). A statement expression: tcc, which never inlines,
 * pays no call for it. */
#define td_runner_rent(m)                                                               \
    ({  td_method *rr_m_ = (m);                                                         \
        td_runner *rr_r_;                                                               \
        TD_POOL_RENT_OR_(&rr_m_->pool, rr_r_,                                           \
                         if (TD_UNLIKELY(rr_r_->source.ops == NULL))                    \
                             rr_r_ = td_runner_ready_(rr_m_, rr_r_),                    \
                         td_runner_ready_(rr_m_, NULL));                                \
        rr_r_; })
static inline void *td_runner_frame(td_runner *r) { return (void *)r->frame; }
/* A cast of the member, not a call of td_runner_frame: tcc never inlines. */
#define TD_FRAME(r, F) ((F *)(void *)(r)->frame)
/* Run the step to its first suspension and return the method's task. A method that
 * completes synchronously with success returns a source-free task and its runner is
 * back in the pool already. */
td_task td_runner_start(td_runner *r);
td_task_i64 td_runner_start_i64(td_runner *r);
/* Resume a suspended runner (the continuation registered by TD_AWAIT). */
void td_runner_move_next(void *runner);

/* ---- step-function macros ------------------------------------------------------ */

/* Internal: 1 when the step must return (suspended, or the runner completed). */
int td_runner_suspend_(td_runner *r);
int td_runner_await_task_(td_runner *r, td_task t);
int td_runner_await_frame_(td_runner *r, td_timing t, int yield);
int td_runner_take_(td_runner *r, int propagate, int64_t *value_out);
void td_runner_finish_(td_runner *r, td_status st, int64_t value, const td_error *err);

/* The suspension's fast path (inline): a frame wait (the loop's marker, loop.h) awaited on
 * the loop's own thread with flow off is one entry appended to the timing's queue, which the
 * loop's drain resumes with td_runner_move_next. Everything else: td_runner_suspend_. */
TD_INLINE int td_runner_suspend_now_(td_runner *r)
{
    td_source *s = r->awaiting.task.source;
    if (s == NULL)
        return 0;
    if (td_atomic_load_u32(&s->word) & TD_WORD_STAMPED) {
        uint32_t token = r->awaiting.task.token;
        if ((int32_t)(td_atomic_load_u32((volatile uint32_t *)s->cont_arg) - token) >= 0)
            return 0;                   /* already reached: continue without suspending */
        if (TD_LIKELY(!td_runtime_settings.flow &&
                      TD_LOOP_MARKER_PUSH_((td_loop_marker_ *)s, token, td_runner_move_next, r))) {
            r->sync = NULL;             /* suspended: a completion no longer reports to start */
            return 1;
        }
    }
    return td_runner_suspend_(r);
}
#if !TD_PORT_INLINES     /* tcc never inlines: the out-of-line function has the same paths */
#define td_runner_suspend_now_(r) td_runner_suspend_(r)
#endif

/* TD_AWAIT_FRAME_'s fast path: on the main loop's thread with flow off, the timing's marker
 * queue takes the runner (td_runner_move_next) for the target frame and the await is done.
 * The markers are td_loop_push_markers_ (loop.h), which never match with flow on or no main
 * loop: no separate test of either. No task is stored: `awaiting` stays empty, so the
 * resumption's take sees nothing to consume (the loop runs the entry only once the frame is
 * reached). A retirement that runs the entry instead gives the runner its marker task
 * first, which then reads canceled (loop.c, loop_retire). A statement expression: tcc,
 * which never inlines, pays no call. */
#define TD_RUNNER_FRAME_PUSH_(r, t, yield)                                              \
    ({  int td_pushed_ = 0;                                                             \
        if (TD_LIKELY((unsigned)(t) < TD_TIMING_COUNT)) {                               \
            td_loop_marker_ *td_fm_ = (td_loop_marker_ *)td_atomic_load_ptr(           \
                (void *volatile *)&td_loop_push_markers_) + (t);                        \
            if (TD_LIKELY(TD_LOOP_MARKER_PUSH_(td_fm_, (yield) ? TD_LOOP_MARKER_NEXT_RUN_(td_fm_) \
                              : td_atomic_load_u32((volatile uint32_t *)td_fm_->frame) + 1, \
                              td_runner_move_next, (r)))) {                             \
                (r)->sync = NULL;    /* suspended: a completion no longer reports to start */ \
                td_pushed_ = 1;                                                         \
            }                                                                           \
        }                                                                               \
        td_pushed_; })

TD_INLINE int td_runner_await_frame_now_(td_runner *r, td_timing t, int yield)
{
    if (TD_RUNNER_FRAME_PUSH_(r, t, yield))
        return 1;
    return td_runner_await_frame_(r, t, yield);
}
#if !TD_PORT_INLINES
#define td_runner_await_frame_now_(r, t, yield) td_runner_await_frame_((r), (t), (yield))
#endif

/* The resumption's fast path (inline): a source-free task or a reached stamp source (frame
 * waits) succeeded and needs no consumption; a succeeded protocol source is consumed inline
 * (TD_SOURCE_TAKE_SUCCESS_); anything else takes td_runner_take_. */
TD_INLINE int td_runner_take_now_(td_runner *r, int64_t *value_out)
{
    td_source *s = r->awaiting.task.source;
    int64_t value;
    if (s == NULL) {
        if (value_out)
            *value_out = r->awaiting.value;
        return 0;
    }
    if (TD_SOURCE_TAKE_SUCCESS_(s, r->awaiting.task.token, &value)) {
        r->awaiting.task.source = NULL;
        if (value_out)
            *value_out = value;
        return 0;
    }
    if (td_source_stamp_reached_(s, r->awaiting.task.token)) {
        r->awaiting.task.source = NULL;
        if (value_out)
            *value_out = 0;
        return 0;
    }
    return td_runner_take_(r, 1, value_out);
}
#if !TD_PORT_INLINES     /* tcc never inlines: the wrapper would only add a call */
#define td_runner_take_now_(r, value_out) td_runner_take_((r), 1, (value_out))
#endif

#define TD_BEGIN(r) switch ((r)->resume) { case 0:

/* Await an untyped task; a fault or cancellation completes this method the same way. */
#if TD_PORT_INLINES
#define TD_AWAIT(r, task_expr)                                                         \
    do {                                                                               \
        (r)->awaiting.task = (task_expr);                                              \
        (r)->resume = __LINE__;                                                        \
        if (td_runner_suspend_now_(r)) return;                                         \
    case __LINE__:                                                                     \
        if (td_runner_take_now_((r), NULL)) return;                                    \
    } while (0)
#else   /* tcc: the task goes to the call in registers; storing it would be a memmove */
#define TD_AWAIT(r, task_expr)                                                         \
    do {                                                                               \
        (r)->resume = __LINE__;                                                        \
        if (td_runner_await_task_((r), (task_expr))) return;                           \
    case __LINE__:                                                                     \
        if (td_runner_take_((r), 1, NULL)) return;                                     \
    } while (0)
#endif

/* Await a typed task and store its result in `dst`; faults propagate. */
#define TD_AWAIT_VALUE(r, task_i64_expr, dst)                                          \
    do {                                                                               \
        (r)->awaiting = (task_i64_expr);                                               \
        (r)->resume = __LINE__;                                                        \
        if (td_runner_suspend_now_(r)) return;                                         \
    case __LINE__:                                                                     \
        if (td_runner_take_now_((r), &(dst))) return;                                  \
    } while (0)

/* Await a frame wait of the main loop without building its task first: the next frame's
 * run of timing `t` (TD_AWAIT_NEXT_FRAME, as td_next_frame) or the next run of `t`
 * (TD_AWAIT_YIELD, as td_yield). On the loop's thread with flow off the suspension is one
 * queue entry; anything else takes the same path as TD_AWAIT of the task. The outcome is
 * the task's: canceled if the loop is retired first, TD_ERR_NO_LOOP without a main loop. */
#define TD_AWAIT_NEXT_FRAME(r, t) TD_AWAIT_FRAME_((r), (t), 0)
#define TD_AWAIT_YIELD(r, t) TD_AWAIT_FRAME_((r), (t), 1)
#define TD_AWAIT_FRAME_(r, t, yield)                                                   \
    do {                                                                               \
        (r)->resume = __LINE__;                                                        \
        if (td_runner_await_frame_now_((r), (t), (yield))) return;                     \
    case __LINE__:                                                                     \
        if (td_runner_take_now_((r), NULL)) return;                                    \
    } while (0)

/* Await without propagation: the outcome lands in (r)->last (suppression). */
#define TD_AWAIT_OUTCOME(r, task_i64_expr)                                             \
    do {                                                                               \
        (r)->awaiting = (task_i64_expr);                                               \
        (r)->resume = __LINE__;                                                        \
        if (td_runner_suspend_now_(r)) return;                                         \
    case __LINE__:                                                                     \
        td_runner_take_((r), 0, NULL);                                                 \
    } while (0)

/* A success inside td_runner_start (r->sync set) is reported in place, as td_runner_finish_
 * would: tcc pays no call for the synchronous completion. */
#define TD_RETURN_VALUE(r, v)                                                          \
    do {                                                                               \
        int64_t td_rv_ = (int64_t)(v);                                                 \
        if ((r)->sync) {                                                               \
            (r)->source.value = td_rv_;                                                \
            *(r)->sync = (uint32_t)TD_SUCCEEDED;                                       \
            return;                                                                    \
        }                                                                              \
        td_runner_finish_((r), TD_SUCCEEDED, td_rv_, NULL);                            \
        return;                                                                        \
    } while (0)
#define TD_RETURN(r) TD_RETURN_VALUE((r), 0)
#define TD_FAIL(r, code, msg) do { td_error e_ = { (code), (msg), NULL }; td_runner_finish_((r), TD_FAULTED, 0, &e_); return; } while (0)
#define TD_CANCEL(r, cs) do { td_error e_ = { TD_ERR_CANCELED, "canceled", (cs) }; td_runner_finish_((r), TD_CANCELED, 0, &e_); return; } while (0)
#define TD_END(r) } TD_RETURN_VALUE((r), 0)

#endif /* TANDEM_ASYNC_H */
