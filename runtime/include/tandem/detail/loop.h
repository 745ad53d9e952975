/*
 * detail/loop.h - what the frame waits' inline paths read of the loop: internal, exposed
 * for inlining.
 *
 * Included by loop.h after the API: the timing queues' layout and the markers the inline
 * frame-wait suspension pushes to (TD_AWAIT_NEXT_FRAME / TD_AWAIT_YIELD, detail/async.h),
 * and td_next_frame / td_yield's fast paths where the compiler inlines.
 */
#ifndef TANDEM_DETAIL_LOOP_H
#define TANDEM_DETAIL_LOOP_H

#ifndef TANDEM_LOOP_H
#error "detail/loop.h is included by tandem/loop.h, not directly"
#endif

/* ---- internal: the layout the inline frame-wait suspension reads (not API) ------------ */

/* A queued continuation: run fn(arg) at the timing's drain once the frame reaches target. */
typedef struct td_loop_entry_ { td_continuation_fn fn; void *arg; uint32_t target; } td_loop_entry_;
typedef struct td_loop_queue_ { td_loop_entry_ *items; uint32_t count, cap; } td_loop_queue_;

/* A loop's per-timing frame marker: the stamp source of the stateless frame waits (task.h).
 * `direct_thread` is the loop's thread identity while the timing is installed and the loop
 * not retired (the marker is "direct", TD_LOOP_MARKER_DIRECT_), else 0 (never a thread's
 * identity): one compare tells the loop's own thread that it may append to `queue` inline
 * while count < cap (async.h, td_runner_suspend_fast_); anything else goes through the loop's
 * functions. It changes under the inbox lock. */
typedef struct td_loop_marker_ {
    td_source source;                   /* first member; cont_arg = the timing's stamp */
    struct td_loop *loop;
    uint32_t timing;
    void *volatile direct_thread;       /* while direct: the loop's thread identity; else 0 */
    td_loop_queue_ *queue;              /* the timing's continuation queue */
    const volatile uint32_t *frame;     /* the loop's frame counter */
    const volatile uint32_t *current;   /* the loop's running timing */
    uint32_t next_frame;                /* *frame + 1, written by the loop's thread when the
                                         * frame starts: the inline push's target (only that
                                         * thread pushes inline, so it reads its own store) */
} td_loop_marker_;

/* 1 while the marker's timing is installed and its loop alive: its tasks are made inline. */
#define TD_LOOP_MARKER_DIRECT_(m) (td_atomic_load_ptr(&(m)->direct_thread) != NULL)

/* Shared by the inline fast paths (loop.h, async.h) and loop.c. Statement expressions, so
 * that tcc, which never inlines, pays no call for them either.
 * TD_LOOP_MARKER_NEXT_RUN_(m): the frame of timing m's next run (td_yield's target): the
 * frame running now while m is still ahead in it, else the next one. */
#define TD_LOOP_MARKER_NEXT_RUN_(m)                                                     \
    ({  const td_loop_marker_ *td_m_ = (m);                                             \
        uint32_t td_frame_ = td_atomic_load_u32((volatile uint32_t *)td_m_->frame);     \
        int td_ahead_ = td_atomic_load_u32((volatile uint32_t *)td_m_->current) != TD_TIMING_COUNT && \
            td_atomic_load_u32((volatile uint32_t *)td_m_->source.cont_arg) != td_frame_; \
        td_ahead_ ? td_frame_ : td_frame_ + 1; })
/* TD_LOOP_MARKER_PUSH_(m, target, fn, arg): 1 when fn(arg) was appended to m's queue for
 * frame `target`, which only the loop's own thread may do, with the timing installed and
 * the loop alive (direct) and room left; 0: go through the loop's functions instead. */
#define TD_LOOP_MARKER_PUSH_(m, tgt_, fn_, arg_)     /* tgt_ read only when it pushes */  \
    ({  td_loop_marker_ *td_pm_ = (m);                                                  \
        td_loop_queue_ *td_q_ = td_pm_->queue;                                          \
        int td_ok_ = (uintptr_t)td_atomic_load_ptr(&td_pm_->direct_thread) == td_thread_self() && \
            td_q_->count < td_q_->cap;                                                  \
        if (td_ok_) {                                                                   \
            td_loop_entry_ *td_e_ = &td_q_->items[td_q_->count++];                      \
            td_e_->fn = (fn_);                                                          \
            td_e_->arg = (arg_);                                                        \
            td_e_->target = (tgt_);                                                     \
        }                                                                               \
        td_ok_; })

/* The main loop (td_loop_main); a loop's first member is its array of markers, one per
 * timing, so the inline waits below find a marker without knowing the loop's layout. */
extern struct td_loop *td_loop_main_;

/* The markers that TD_AWAIT_NEXT_FRAME / TD_AWAIT_YIELD append to inline (async.h,
 * TD_RUNNER_FRAME_PUSH_): the main loop's while flow is off; else, and with no main loop, a
 * row of markers that are never direct (direct_thread 0). So the one compare of a marker's
 * direct_thread with this thread (TD_LOOP_MARKER_PUSH_) says all of: a main loop, flow
 * off, the timing installed, the loop alive, this is its thread. loop.c keeps it current
 * (td_loop_set_main, the runtime's init and shutdown, a retirement, td_flow_set). */
extern td_loop_marker_ *volatile td_loop_push_markers_;

/* td_next_frame / td_yield fast paths (function-like macros over the functions of the same
 * name, as for the task queries): the main loop's marker, when its timing is installed and
 * the loop alive (direct), gives the task with no call; anything else calls the function. */
TD_INLINE td_task td_next_frame_fast_(td_timing t)
{
    struct td_loop *loop = td_loop_main_;
    if (TD_LIKELY(loop != NULL && (unsigned)t < TD_TIMING_COUNT)) {
        td_loop_marker_ *m = (td_loop_marker_ *)loop + t;
        if (TD_LIKELY(TD_LOOP_MARKER_DIRECT_(m)))
            return td_task_of(&m->source, td_atomic_load_u32((volatile uint32_t *)m->frame) + 1);
    }
    return (td_next_frame)(t);
}

TD_INLINE td_task td_yield_fast_(td_timing t)
{
    struct td_loop *loop = td_loop_main_;
    if (TD_LIKELY(loop != NULL && (unsigned)t < TD_TIMING_COUNT)) {
        td_loop_marker_ *m = (td_loop_marker_ *)loop + t;
        if (TD_LIKELY(TD_LOOP_MARKER_DIRECT_(m)))
            return td_task_of(&m->source, TD_LOOP_MARKER_NEXT_RUN_(m));
    }
    return (td_yield)(t);
}

#if TD_PORT_INLINES
#define td_next_frame(t) td_next_frame_fast_(t)
#define td_yield(t) td_yield_fast_(t)
#endif

#endif /* TANDEM_DETAIL_LOOP_H */
