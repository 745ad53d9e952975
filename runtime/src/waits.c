/*
 * waits.c - frame, timed and predicate waits (see include/tandem/loop.h).
 *
 * Without a cancellation token the frame waits are stateless (frame markers, loop.c).
 * Every other wait is a pooled wait source driven by a loop item at its timing.
 * A wait source has two owners: its consumer and its loop item. Consumption marks it
 * consumed (old tokens turn stale at once); the source is recycled and pooled only when
 * the item has detached as well, so the item never reads a recycled source. A
 * cancel-immediately registration is removed before recycling (which waits for a
 * callback running on another thread).
 * A combinator may hold a third ownership (td_delay_held_) to abandon a delay it no longer
 * needs: the delay completes canceled and its item detaches at the next tick.
 * No loop (no main loop) or a retired loop: the wait is never attached; it completes at
 * once, FAULTED with TD_ERR_NO_LOOP or CANCELED ("the loop was retired").
 */
#include "../port/td_libc.h"
#include "td_internal.h"

typedef enum wait_kind { WAIT_FRAMES, WAIT_DELAY, WAIT_UNTIL, WAIT_WHILE, WAIT_VALUE_CHANGED } wait_kind;

typedef struct wait_source {
    td_source source;               /* first member */
    wait_kind kind;
    uint32_t token;
    volatile uint32_t owners;
    td_loop *loop;
    uint32_t target_frame;
    int64_t deadline;
    td_clock clock;
    td_predicate_fn pred;
    td_read_fn read;
    void *arg;
    int64_t initial;
    td_cancel_token cancel;
    td_cancel_registration reg;
} wait_source;

static td_pool waits_pool;

static void wait_drop_owner(wait_source *w)
{
    if (td_atomic_fetch_add_u32(&w->owners, (uint32_t)-1) != 1)
        return;
    td_cancel_unregister(w->reg);
    w->reg.node = NULL;
    w->cancel.source = NULL;
    w->pred = NULL;
    w->read = NULL;
    w->arg = NULL;
    td_source_recycle(&w->source);
    td_pool_return(&waits_pool, w);
}

/* The consumer's token ends before its ownership drops, as compose_release's. */
static void wait_release(td_source *s)
{
    td_source_keep_consumed_(s);
    wait_drop_owner((wait_source *)s);
}

static const td_source_ops wait_ops = { wait_release, NULL, NULL, NULL, "wait" };

static void wait_cancel_now(void *arg)
{
    wait_source *w = (wait_source *)arg;
    td_error e = td_cancel_error(w->cancel.source);
    td_source_try_complete(&w->source, w->token, TD_CANCELED, 0, &e);
}

/* The loop item: 1 keeps it, 0 detaches it (dropping the item's ownership). */
static int wait_tick(void *arg)
{
    wait_source *w = (wait_source *)arg;
    td_status st;
    uint32_t word = td_atomic_load_u32(&w->source.word);
    st = TD_WORD_STATUS(word);
    if (st != TD_PENDING || (word & TD_WORD_CLAIMED)) {
        wait_drop_owner(w);
        return 0;
    }
    if (td_cancel_is_requested(w->cancel)) {
        wait_cancel_now(w);
        wait_drop_owner(w);
        return 0;
    }
    int done = 0;
    int64_t value = 0;
    switch (w->kind) {
    case WAIT_FRAMES: done = (int32_t)(td_loop_frame(w->loop) - w->target_frame) >= 0; break;
    case WAIT_DELAY: done = td_loop_time(w->loop, w->clock) >= w->deadline; break;
    case WAIT_UNTIL: done = w->pred(w->arg) != 0; break;
    case WAIT_WHILE: done = w->pred(w->arg) == 0; break;
    case WAIT_VALUE_CHANGED: value = w->read(w->arg); done = value != w->initial; break;
    }
    if (!done)
        return 1;
    td_source_try_complete(&w->source, w->token, TD_SUCCEEDED, value, NULL);
    wait_drop_owner(w);
    return 0;
}

/* Loop retirement: the wait completes canceled with its own token (if any). */
static void wait_retire(void *arg)
{
    wait_source *w = (wait_source *)arg;
    wait_cancel_now(w);
    wait_drop_owner(w);
}

static int wait_has_token(const td_wait_options *o) { return o && o->cancel.source; }
static td_loop *wait_loop(const td_wait_options *o) { return (o && o->loop) ? o->loop : td_loop_main(); }
static td_timing wait_timing(const td_wait_options *o) { return o ? o->timing : TD_TIMING_UPDATE; }

static wait_source *wait_rent(wait_kind kind, const td_wait_options *o, td_loop *loop)
{
    wait_source *w = (wait_source *)td_pool_rent(&waits_pool);
    if (w == NULL)
        return NULL;
    if (w->source.ops == NULL)
        w->source.ops = &wait_ops;
    w->kind = kind;
    w->token = td_source_token(&w->source);
    w->owners = 2;
    w->loop = loop;
    w->cancel = o ? o->cancel : td_cancel_none();
    w->reg.node = NULL;
    return w;
}

static td_task wait_start(wait_source *w, const td_wait_options *o)
{
    td_timing t = o ? o->timing : TD_TIMING_UPDATE;
    td_task task = td_task_of(&w->source, w->token);
    if (td_cancel_is_requested(w->cancel)) {
        wait_cancel_now(w);
        wait_drop_owner(w);       /* no item was attached */
        return task;
    }
    if (o && o->cancel_immediately && w->cancel.source)
        w->reg = td_cancel_register(w->cancel, wait_cancel_now, w);
    int rc = td_loop_add_item_retire_(w->loop, t, wait_tick, wait_retire, w);
    if (rc == TD_E_RETIRED) {
        td_error e = { TD_ERR_CANCELED, "the loop was retired", NULL };
        td_source_try_complete(&w->source, w->token, TD_CANCELED, 0, &e);
        wait_drop_owner(w);
    } else if (rc != TD_OK) {
        td_error e = { rc, "loop item allocation failed", NULL };
        td_source_try_complete(&w->source, w->token, TD_FAULTED, 0, &e);
        wait_drop_owner(w);
    }
    return task;
}

td_task td_wait_no_loop_(void)
{
    return td_from_error(TD_ERR_NO_LOOP, "no loop: the runtime is not initialised or the main loop was destroyed");
}


static td_task wait_frames(td_loop *loop, uint32_t target, const td_wait_options *o)
{
    wait_source *w = wait_rent(WAIT_FRAMES, o, loop);
    if (w == NULL)
        return td_from_error(TD_E_NOMEM, "wait allocation failed");
    w->target_frame = target;
    return wait_start(w, o);
}

/* ---- frame waits -------------------------------------------------------------------- */

td_task (td_yield)(td_timing t)
{
    td_loop *loop = td_loop_main();
    if (TD_UNLIKELY(loop == NULL))
        return td_wait_no_loop_();
    if ((unsigned)t >= TD_TIMING_COUNT)
        return td_from_error(TD_E_INVALID, "td_yield: not a timing");
    return td_loop_marker_task_(loop, t, td_loop_next_run_frame_(loop, t));
}

td_task (td_next_frame)(td_timing t)
{
    td_loop *loop = td_loop_main_;
    if (TD_UNLIKELY(loop == NULL))
        return td_wait_no_loop_();
    if ((unsigned)t >= TD_TIMING_COUNT)
        return td_from_error(TD_E_INVALID, "td_next_frame: not a timing");
    /* The inline fast path's work, for callers that do not inline (tcc): no struct copy. */
    td_loop_marker_ *m = (td_loop_marker_ *)loop + t;
    if (TD_LIKELY(TD_LOOP_MARKER_DIRECT_(m))) {
        td_task task;
        task.source = &m->source;
        task.token = td_atomic_load_u32((volatile uint32_t *)m->frame) + 1;
        return task;
    }
    return td_loop_marker_task_(loop, t, td_loop_frame(loop) + 1);
}

td_task td_delay_frame(uint32_t frames, td_timing t)
{
    if (frames == 0)
        return td_completed();
    td_loop *loop = td_loop_main();
    if (TD_UNLIKELY(loop == NULL))
        return td_wait_no_loop_();
    return td_loop_marker_task_(loop, t, td_loop_frame(loop) + frames);
}

td_task td_yield_ex(const td_wait_options *o)
{
    td_loop *loop = wait_loop(o);
    if (loop == NULL)
        return td_wait_no_loop_();
    uint32_t target = td_loop_next_run_frame_(loop, wait_timing(o));
    if (!wait_has_token(o))
        return td_loop_marker_task_(loop, wait_timing(o), target);
    return wait_frames(loop, target, o);
}

td_task td_next_frame_ex(const td_wait_options *o)
{
    td_loop *loop = wait_loop(o);
    if (loop == NULL)
        return td_wait_no_loop_();
    uint32_t target = td_loop_frame(loop) + 1;
    if (!wait_has_token(o))
        return td_loop_marker_task_(loop, wait_timing(o), target);
    return wait_frames(loop, target, o);
}

td_task td_delay_frame_ex(uint32_t frames, const td_wait_options *o)
{
    if (frames == 0 && !td_cancel_is_requested(o ? o->cancel : td_cancel_none()))
        return td_completed();
    td_loop *loop = wait_loop(o);
    if (loop == NULL)
        return td_wait_no_loop_();
    uint32_t target = td_loop_frame(loop) + frames;
    if (!wait_has_token(o))
        return td_loop_marker_task_(loop, wait_timing(o), target);
    return wait_frames(loop, target, o);
}

td_task td_wait_for_end_of_frame(const td_wait_options *o)
{
    td_loop *loop = wait_loop(o);
    if (loop == NULL)
        return td_wait_no_loop_();
    if (!td_loop_has_end_of_frame(loop))
        return td_from_error(TD_ERR_NOT_SUPPORTED, "end of frame is not supported by this loop");
    td_wait_options eo = o ? *o : td_wait_defaults();
    eo.timing = TD_LOOP_END_OF_FRAME;
    eo.loop = loop;
    uint32_t target = td_loop_next_run_frame_(loop, TD_LOOP_END_OF_FRAME);
    if (!wait_has_token(&eo))
        return td_loop_marker_task_(loop, TD_LOOP_END_OF_FRAME, target);
    return wait_frames(loop, target, &eo);
}

/* ---- timed and predicate waits -------------------------------------------------------- */

static td_task wait_delay(int64_t ns, td_clock clock, const td_wait_options *o, td_source **held)
{
    td_loop *loop = wait_loop(o);
    if (loop == NULL)
        return td_wait_no_loop_();
    wait_source *w = wait_rent(WAIT_DELAY, o, loop);
    if (w == NULL)
        return td_from_error(TD_E_NOMEM, "wait allocation failed");
    w->clock = clock;
    w->deadline = td_deadline_after_(td_loop_time(loop, clock), ns);
    if (held) {
        w->owners++;                 /* the holder's, dropped by td_wait_abandon_ */
        *held = &w->source;
    }
    return wait_start(w, o);
}

td_task td_delay(int64_t ns, td_clock clock, const td_wait_options *o)
{
    return wait_delay(ns, clock, o, NULL);
}

td_task td_delay_held_(int64_t ns, td_clock clock, const td_wait_options *o, td_source **held)
{
    *held = NULL;
    return wait_delay(ns, clock, o, held);
}

void td_wait_abandon_(td_source *held, uint32_t token)
{
    wait_source *w = (wait_source *)held;
    td_error e = { TD_ERR_CANCELED, "abandoned", NULL };
    td_source_try_complete(&w->source, token, TD_CANCELED, 0, &e);  /* no-op once decided */
    wait_drop_owner(w);
}

static td_task wait_predicate(wait_kind kind, td_predicate_fn pred, void *arg, const td_wait_options *o)
{
    td_loop *loop = wait_loop(o);
    if (loop == NULL)
        return td_wait_no_loop_();
    wait_source *w = wait_rent(kind, o, loop);
    if (w == NULL)
        return td_from_error(TD_E_NOMEM, "wait allocation failed");
    w->pred = pred;
    w->arg = arg;
    return wait_start(w, o);
}

td_task td_wait_until(td_predicate_fn pred, void *arg, const td_wait_options *o)
{
    return wait_predicate(WAIT_UNTIL, pred, arg, o);
}

td_task td_wait_while(td_predicate_fn pred, void *arg, const td_wait_options *o)
{
    return wait_predicate(WAIT_WHILE, pred, arg, o);
}

td_task_i64 td_wait_until_value_changed(td_read_fn read, void *arg, const td_wait_options *o)
{
    td_loop *loop = wait_loop(o);
    if (loop == NULL)
        return td_task_i64_of(td_wait_no_loop_());
    wait_source *w = wait_rent(WAIT_VALUE_CHANGED, o, loop);
    if (w == NULL)
        return td_from_error_i64(TD_E_NOMEM, "wait allocation failed");
    w->read = read;
    w->arg = arg;
    w->initial = read(arg);
    return td_task_i64_of(wait_start(w, o));
}

int td_waits_runtime_init_(uint32_t capacity)
{
    return td_pool_init(&waits_pool, "wait", sizeof(wait_source), capacity);
}

void td_waits_runtime_shutdown_(void) { td_pool_destroy(&waits_pool); }
int td_waits_set_capacity_(uint32_t capacity) { return td_pool_set_capacity(&waits_pool, capacity); }
