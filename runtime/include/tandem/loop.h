/*
 * loop.h - the player loop: 19 timings, frames, clocks and frame waits.
 *
 * One td_loop_run_frame() call is one frame. A frame runs the installed timings in the
 * fixed order of td_timing_order[]; each timing first runs its continuation queue (one-shot
 * resumptions whose target frame has come) and then its loop items (called every frame
 * until they return 0). Continuations added while a queue drains run in a later drain,
 * never the current one. Other threads hand work to the loop through a locked inbox that
 * is merged at the start of every frame (the dispatcher's defined point).
 *
 * Default frame waits are stateless: td_yield / td_next_frame / td_delay_frame return a
 * task whose source is the loop's per-timing marker and whose token is the target frame.
 * No pooled object is involved; the task can be copied, read repeatedly and forgotten.
 *
 * Clocks: scaled (advances by unscaled delta x time scale), unscaled (frame deltas of the
 * realtime source) and realtime (the source itself, read on demand). The realtime source is
 * injectable (td_loop_config.now) so tests drive time deterministically.
 */
#ifndef TANDEM_LOOP_H
#define TANDEM_LOOP_H

#include <stdint.h>
#include "task.h"
#include "cancel.h"
#include "../../port/td_port.h"

typedef enum td_timing {
    TD_TIMING_INITIALIZATION = 0,
    TD_TIMING_LAST_INITIALIZATION,
    TD_TIMING_EARLY_UPDATE,
    TD_TIMING_LAST_EARLY_UPDATE,
    TD_TIMING_FIXED_UPDATE,
    TD_TIMING_LAST_FIXED_UPDATE,
    TD_TIMING_PRE_UPDATE,
    TD_TIMING_LAST_PRE_UPDATE,
    TD_TIMING_UPDATE,
    TD_TIMING_LAST_UPDATE,
    TD_TIMING_PRE_LATE_UPDATE,
    TD_TIMING_LAST_PRE_LATE_UPDATE,
    TD_TIMING_POST_LATE_UPDATE,
    TD_TIMING_LAST_POST_LATE_UPDATE,
    TD_TIMING_TIME_UPDATE,
    TD_TIMING_LAST_TIME_UPDATE,
    /* The three after-script positions (run right after the script phase they name). */
    TD_TIMING_FIXED_UPDATE_AFTER_SCRIPT,
    TD_TIMING_UPDATE_AFTER_SCRIPT,
    TD_TIMING_LATE_UPDATE_AFTER_SCRIPT,
    TD_TIMING_COUNT
} td_timing;

/* The order in which a frame runs the timings. */
extern const td_timing td_timing_order[TD_TIMING_COUNT];
const char *td_timing_name(td_timing t);

typedef enum td_clock {
    TD_CLOCK_SCALED = 0,
    TD_CLOCK_UNSCALED = 1,
    TD_CLOCK_REALTIME = 2
} td_clock;

typedef int64_t (*td_now_fn)(void *arg);     /* nanoseconds, monotonic */
typedef int (*td_item_fn)(void *arg);        /* loop item: return 0 to be removed */

typedef struct td_loop_config {
    uint32_t installed;          /* bit mask of timings installed up front (others install on use) */
    int has_end_of_frame;        /* 0: end-of-frame waits are not supported */
    td_now_fn now;               /* realtime source; NULL = CLOCK_MONOTONIC */
    void *now_arg;
} td_loop_config;

typedef struct td_loop td_loop;

/* Create a loop (cold). The creating thread is its main thread. */
td_loop *td_loop_create(const td_loop_config *cfg);
/* Retire a loop, on its own thread: every pending wait on it completes canceled (with its
 * own token when it has one), every queued continuation runs (its frame waits now read
 * canceled), every item is dropped and the queues are freed. Called from inside one of
 * the loop's own continuations or items, the frame stops after that call and the
 * retirement finishes when td_loop_run_frame returns. Afterwards (a retired loop):
 *   - td_loop_run_frame does nothing; frame waits on it read canceled;
 *   - td_loop_post / post_at / add_item (any thread), td_timer_start and
 *     td_cancel_source_cancel_after refuse with TD_E_RETIRED (nothing is queued);
 *   - waits with options on it (td_delay, td_wait_until, ...) return a canceled task.
 * The loop's header stays valid until td_runtime_shutdown, so stale tasks still answer. */
void td_loop_destroy(td_loop *loop);
int td_loop_is_retired(const td_loop *loop);
/* The loop default waits use. td_runtime_init creates one; tests may replace it. NULL
 * before td_runtime_init, after shutdown and after the main loop was destroyed: waits
 * without an explicit loop then return a task FAULTED with TD_ERR_NO_LOOP. */
td_loop *td_loop_main(void);
void td_loop_set_main(td_loop *loop);

void td_loop_run_frame(td_loop *loop);
uint32_t td_loop_frame(const td_loop *loop);
/* The timing running now, or TD_TIMING_COUNT between frames and during the end-of-frame
 * phase (td_wait_for_end_of_frame's continuations), which has no td_timing of its own. */
td_timing td_loop_current_timing(const td_loop *loop);
int td_loop_is_installed(const td_loop *loop, td_timing t);
int td_loop_has_end_of_frame(const td_loop *loop);
int64_t td_loop_time(const td_loop *loop, td_clock clock);
void td_loop_set_time_scale(td_loop *loop, double scale);
double td_loop_time_scale(const td_loop *loop);
uintptr_t td_loop_thread(const td_loop *loop);

/* Run fn(arg) at timing t of the next drain of that timing; any thread. These three return
 * TD_OK, TD_E_INVALID (NULL loop, or t not one of the TD_TIMING_COUNT timings: TD_TIMING_COUNT
 * itself is no timing), TD_E_NOMEM, or TD_E_RETIRED (the loop was retired: fn will never run).
 * td_loop_is_installed answers 0 for a t that is no timing. */
int td_loop_post(td_loop *loop, td_timing t, td_continuation_fn fn, void *arg);
/* Run fn(arg) at timing t once the loop's frame reaches `target_frame`; any thread. */
int td_loop_post_at(td_loop *loop, td_timing t, uint32_t target_frame, td_continuation_fn fn, void *arg);
/* Add an item run at timing t every frame until it returns 0; any thread. */
int td_loop_add_item(td_loop *loop, td_timing t, td_item_fn fn, void *arg);

/* ---- waits ---------------------------------------------------------------------- */

/* Options for waits that take a cancellation token. NULL means the defaults:
 * timing UPDATE, no token, cancellation observed at the next frame. */
typedef struct td_wait_options {
    td_timing timing;
    td_cancel_token cancel;
    int cancel_immediately;   /* complete as canceled on the cancelling thread */
    td_loop *loop;            /* NULL = td_loop_main() */
} td_wait_options;

static inline td_wait_options td_wait_defaults(void)
{
    td_wait_options o;
    o.timing = TD_TIMING_UPDATE;
    o.cancel.source = 0;
    o.cancel_immediately = 0;
    o.loop = 0;
    return o;
}

/* Stateless frame waits on the main loop. */
td_task td_yield(td_timing t);                 /* the next run of timing t */
td_task td_next_frame(td_timing t);            /* timing t of a later frame */
td_task td_delay_frame(uint32_t frames, td_timing t);  /* 0 frames: completed */
/* Frame waits with options (pooled when a token is given). */
td_task td_yield_ex(const td_wait_options *o);
td_task td_next_frame_ex(const td_wait_options *o);
td_task td_delay_frame_ex(uint32_t frames, const td_wait_options *o);
td_task td_wait_for_end_of_frame(const td_wait_options *o);

/* Timed and predicate waits (pooled sources). A duration too long for the clock (now + ns
 * past INT64_MAX, e.g. INT64_MAX for "forever") saturates: the wait never elapses. */
td_task td_delay(int64_t ns, td_clock clock, const td_wait_options *o);
typedef int (*td_predicate_fn)(void *arg);
td_task td_wait_until(td_predicate_fn pred, void *arg, const td_wait_options *o);
td_task td_wait_while(td_predicate_fn pred, void *arg, const td_wait_options *o);
/* Completes with the new value when read(arg) differs from its value at the call. */
typedef int64_t (*td_read_fn)(void *arg);
td_task_i64 td_wait_until_value_changed(td_read_fn read, void *arg, const td_wait_options *o);

/* The frame waits' inline suspension (the loop's markers) and fast paths: internal, exposed
 * for inlining. */
#include "detail/loop.h"

#endif /* TANDEM_LOOP_H */
