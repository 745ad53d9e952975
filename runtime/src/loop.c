/*
 * loop.c - the player loop (see include/tandem/loop.h).
 *
 * Data owned by the loop's thread: the per-timing continuation queues and item lists,
 * the frame counter and clocks. Other threads write only the inbox (under a spin lock),
 * merged at the start of each frame. timing_frame[] is read by any thread (frame-marker
 * status queries), so it is written and read atomically.
 * A retired (destroyed) loop keeps its header alive until td_runtime_shutdown so that
 * stale frame-wait tasks that point at its markers still answer (canceled).
 *
 * Retirement: `retired` is set under the inbox lock, so a post from another thread either
 * lands in the inbox before it (and is run, as canceled, by the retirement) or is refused
 * with TD_E_RETIRED. A destroy called from the loop's own frame (a continuation or an item)
 * only marks the loop retired; the frame stops after the call that retired it and the
 * retirement finishes when td_loop_run_frame unwinds, so no drain ever walks freed arrays.
 * The clocks (unscaled, scaled) are written by the loop's thread with release stores and
 * read with atomic loads: waits may be armed from any thread.
 */
#include "../port/td_libc.h"
#include <time.h>
#include "td_internal.h"

#define LOOP_EOF TD_TIMING_COUNT            /* index of the end-of-frame pseudo timing */
#define LOOP_SLOTS (TD_TIMING_COUNT + 1)

typedef td_loop_entry_ loop_entry;
typedef td_loop_queue_ loop_queue;
typedef struct loop_item { td_item_fn fn; td_continuation_fn retire; void *arg; } loop_item;
typedef struct loop_items { loop_item *items; uint32_t count, cap; } loop_items;
typedef struct loop_remote {
    int kind;                    /* 0 continuation, 1 item */
    uint32_t timing, target;
    td_continuation_fn fn;
    td_item_fn item_fn;
    td_continuation_fn retire;
    void *arg;
} loop_remote;

typedef td_loop_marker_ loop_marker;      /* loop.h: the inline suspension reads it */

struct td_loop {
    loop_marker markers[LOOP_SLOTS];           /* first (loop.h: td_next_frame_fast_) */
    uintptr_t thread;
    volatile uint32_t frame;
    volatile uint32_t current;                 /* running timing, TD_TIMING_COUNT between frames */
    volatile uint32_t installed;               /* bit mask over LOOP_SLOTS */
    volatile uint32_t timing_frame[LOOP_SLOTS];
    volatile uint32_t retired;
    uint32_t running;                          /* td_loop_run_frame depth (loop thread) */
    int has_end_of_frame;
    loop_queue queues[LOOP_SLOTS];
    loop_queue spare[LOOP_SLOTS];
    loop_items items[LOOP_SLOTS];
    td_spinlock inbox_lock;
    loop_remote *inbox;
    volatile uint32_t inbox_count;             /* written under inbox_lock; read without it */
    uint32_t inbox_cap;
    loop_remote *inbox_spare;
    uint32_t inbox_spare_cap;
    td_now_fn now;
    void *now_arg;
    int64_t real_start, real_last;
    volatile int64_t unscaled, scaled;
    double scale;
    td_loop *next_retired;
};

const td_timing td_timing_order[TD_TIMING_COUNT] = {
    TD_TIMING_INITIALIZATION, TD_TIMING_LAST_INITIALIZATION,
    TD_TIMING_TIME_UPDATE, TD_TIMING_LAST_TIME_UPDATE,
    TD_TIMING_EARLY_UPDATE, TD_TIMING_LAST_EARLY_UPDATE,
    TD_TIMING_FIXED_UPDATE, TD_TIMING_FIXED_UPDATE_AFTER_SCRIPT, TD_TIMING_LAST_FIXED_UPDATE,
    TD_TIMING_PRE_UPDATE, TD_TIMING_LAST_PRE_UPDATE,
    TD_TIMING_UPDATE, TD_TIMING_UPDATE_AFTER_SCRIPT, TD_TIMING_LAST_UPDATE,
    TD_TIMING_PRE_LATE_UPDATE, TD_TIMING_LATE_UPDATE_AFTER_SCRIPT, TD_TIMING_LAST_PRE_LATE_UPDATE,
    TD_TIMING_POST_LATE_UPDATE, TD_TIMING_LAST_POST_LATE_UPDATE,
};

static const char *const loop_timing_names[LOOP_SLOTS] = {
    "Initialization", "LastInitialization", "EarlyUpdate", "LastEarlyUpdate",
    "FixedUpdate", "LastFixedUpdate", "PreUpdate", "LastPreUpdate", "Update", "LastUpdate",
    "PreLateUpdate", "LastPreLateUpdate", "PostLateUpdate", "LastPostLateUpdate",
    "TimeUpdate", "LastTimeUpdate", "FixedUpdateAfterScript", "UpdateAfterScript",
    "LateUpdateAfterScript", "EndOfFrame",
};

const char *td_timing_name(td_timing t)
{
    return (unsigned)t < LOOP_SLOTS ? loop_timing_names[t] : "invalid";
}

td_loop *td_loop_main_;             /* loop.h: read by the inline waits */
static td_loop *loop_retired;
static td_loop *loop_owned;        /* the main loop td_runtime_init created */

/* Never direct (direct_thread 0): td_loop_push_markers_ without a main loop or with flow on. */
static td_loop_marker_ loop_no_markers[TD_TIMING_COUNT];
td_loop_marker_ *volatile td_loop_push_markers_ = loop_no_markers;

/* After any change of the main loop or of the flow setting (loop.h). */
void td_loop_push_markers_refresh_(void)
{
    td_loop *main = td_loop_main_;
    td_atomic_store_ptr((void *volatile *)&td_loop_push_markers_,
                        main && !td_runtime_settings.flow ? (void *)main->markers : (void *)loop_no_markers);
}

td_loop *td_loop_main(void) { return td_loop_main_; }
void td_loop_set_main(td_loop *loop)
{
    td_loop_main_ = loop;
    td_loop_push_markers_refresh_();
}

/* ---- clocks ------------------------------------------------------------------------ */

static int64_t loop_monotonic_ns(void *arg)
{
    (void)arg;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t td_loop_time(const td_loop *loop, td_clock clock)
{
    switch (clock) {
    case TD_CLOCK_SCALED: return td_atomic_load_i64((volatile int64_t *)&loop->scaled);
    case TD_CLOCK_UNSCALED: return td_atomic_load_i64((volatile int64_t *)&loop->unscaled);
    default: return loop->now(loop->now_arg) - loop->real_start;
    }
}

void td_loop_set_time_scale(td_loop *loop, double scale) { loop->scale = scale; }
double td_loop_time_scale(const td_loop *loop) { return loop->scale; }
uint32_t td_loop_frame(const td_loop *loop) { return td_atomic_load_u32((volatile uint32_t *)&loop->frame); }
td_timing td_loop_current_timing(const td_loop *loop) { return (td_timing)td_atomic_load_u32((volatile uint32_t *)&loop->current); }
int td_loop_is_retired(const td_loop *loop) { return td_atomic_load_u32((volatile uint32_t *)&loop->retired) != 0; }
int td_loop_has_end_of_frame(const td_loop *loop) { return loop->has_end_of_frame; }
uintptr_t td_loop_thread(const td_loop *loop) { return loop->thread; }

int td_loop_is_installed(const td_loop *loop, td_timing t)
{
    return (unsigned)t < TD_TIMING_COUNT && (td_atomic_load_u32((volatile uint32_t *)&loop->installed) >> t) & 1u;
}

/* ---- frame markers (stateless waits) --------------------------------------------------- */

static int loop_marker_done(const loop_marker *m, uint32_t target)
{
    uint32_t ran = td_atomic_load_u32((volatile uint32_t *)&m->loop->timing_frame[m->timing]);
    return (int32_t)(ran - target) >= 0;
}

static int loop_marker_status(td_source *s, uint32_t token, td_status *out)
{
    loop_marker *m = (loop_marker *)s;
    if (loop_marker_done(m, token))
        *out = TD_SUCCEEDED;
    else
        *out = td_atomic_load_u32(&m->loop->retired) ? TD_CANCELED : TD_PENDING;
    return TD_OK;
}

static int loop_queue_push(loop_queue *q, td_continuation_fn fn, void *arg, uint32_t target);
static int loop_post_at_slot(td_loop *loop, uint32_t slot, uint32_t target, td_continuation_fn fn, void *arg);

static int loop_marker_on_completed(td_source *s, uint32_t token, td_continuation_fn fn, void *arg)
{
    loop_marker *m = (loop_marker *)s;
    td_loop *loop = m->loop;
    if (loop_marker_done(m, token) || td_atomic_load_u32(&loop->retired))
        return TD_DONE;
    /* The loop's own thread queues directly (td_loop_post_at's local path, inlined). */
    if (TD_LIKELY(td_thread_self() == loop->thread && ((td_atomic_load_u32(&loop->installed) >> m->timing) & 1u)))
        return loop_queue_push(&loop->queues[m->timing], fn, arg, token);
    int rc = loop_post_at_slot(loop, m->timing, token, fn, arg);
    /* Retired in the meantime: the marker now answers canceled, so the caller takes it. */
    return rc == TD_E_RETIRED ? TD_DONE : rc;
}

/* The awaiter's fast path (async.c): the caller checked the stamp is not reached. On the
 * loop's thread, with room in the timing's queue, the continuation is one queue entry;
 * anything else (another thread, growth, a timing not installed, retirement) takes the
 * marker's general registration. */
int td_loop_marker_await_(td_source *s, uint32_t token, td_continuation_fn fn, void *arg)
{
    if (TD_LIKELY(TD_LOOP_MARKER_PUSH_((loop_marker *)s, token, fn, arg)))
        return TD_OK;
    return loop_marker_on_completed(s, token, fn, arg);
}

static int loop_marker_get(td_source *s, uint32_t token, td_outcome *out)
{
    td_status st;
    loop_marker_status(s, token, &st);
    if (st == TD_PENDING)
        return TD_E_PENDING;
    out->status = st;
    out->value = 0;
    out->error.code = st == TD_CANCELED ? TD_ERR_CANCELED : 0;
    out->error.message = st == TD_CANCELED ? "the loop was retired" : NULL;
    out->error.cancel = NULL;
    return TD_OK;
}

static void loop_marker_release(td_source *s) { (void)s; }

static const td_source_ops loop_marker_ops = {
    loop_marker_release, loop_marker_status, loop_marker_on_completed, loop_marker_get, "frame-marker"
};

/* A task that completes when timing t has run in frame `target` or later. */
td_task td_loop_marker_task_(td_loop *loop, uint32_t t, uint32_t target)
{
    if (!((td_atomic_load_u32(&loop->installed) >> t) & 1u))
        td_loop_install_(loop, t);
    return td_task_of(&loop->markers[t].source, target);
}

/* The frame in which the next run of timing t happens. */
uint32_t td_loop_next_run_frame_(td_loop *loop, uint32_t t)
{
    return TD_LOOP_MARKER_NEXT_RUN_(&loop->markers[t]);
}

/* ---- queues and items ------------------------------------------------------------------ */

/* Double an array of `*cap` elements of `size` bytes (first: `first`). Cold: its own
 * function, so the pushes keep their registers (no realloc frame). */
static TD_NOINLINE int loop_array_grow(void **items, uint32_t *cap, size_t size, uint32_t first)
{
    uint32_t n = *cap ? *cap * 2 : first;
    void *grown = realloc(*items, n * size);
    if (grown == NULL)
        return TD_E_NOMEM;
    *items = grown;
    *cap = n;
    return TD_OK;
}

static int loop_queue_push(loop_queue *q, td_continuation_fn fn, void *arg, uint32_t target)
{
    if (TD_UNLIKELY(q->count == q->cap) &&
        loop_array_grow((void **)&q->items, &q->cap, sizeof(loop_entry), 64) != TD_OK)
        return TD_E_NOMEM;
    loop_entry *e = &q->items[q->count++];
    e->fn = fn;
    e->arg = arg;
    e->target = target;
    return TD_OK;
}

static int loop_items_push(loop_items *l, td_item_fn fn, td_continuation_fn retire, void *arg)
{
    if (TD_UNLIKELY(l->count == l->cap) &&
        loop_array_grow((void **)&l->items, &l->cap, sizeof(loop_item), 16) != TD_OK)
        return TD_E_NOMEM;
    loop_item *it = &l->items[l->count++];
    it->fn = fn;
    it->retire = retire;
    it->arg = arg;
    return TD_OK;
}

static int loop_inbox_push(td_loop *loop, const loop_remote *r)
{
    int rc = TD_OK;
    td_spin_lock(&loop->inbox_lock);
    if (loop->retired) {
        td_spin_unlock(&loop->inbox_lock);
        return TD_E_RETIRED;
    }
    if (loop->inbox_count == loop->inbox_cap)
        rc = loop_array_grow((void **)&loop->inbox, &loop->inbox_cap, sizeof(loop_remote), 64);
    if (rc == TD_OK) {
        loop->inbox[loop->inbox_count] = *r;
        td_atomic_store_release_u32(&loop->inbox_count, loop->inbox_count + 1);
    }
    td_spin_unlock(&loop->inbox_lock);
    return rc;
}

void td_loop_install_(td_loop *loop, uint32_t t)
{
    if (((td_atomic_load_u32(&loop->installed) >> t) & 1u) &&
        (TD_LOOP_MARKER_DIRECT_(&loop->markers[t]) || td_atomic_load_u32(&loop->retired)))
        return;
    uint32_t w = td_atomic_load_u32(&loop->installed);
    while (!td_atomic_cas_u32(&loop->installed, &w, w | (1u << t))) {
    }
    /* Under the inbox lock: a retirement (which clears it) is never undone by a late install. */
    td_spin_lock(&loop->inbox_lock);
    if (!loop->retired)
        td_atomic_store_ptr(&loop->markers[t].direct_thread, (void *)loop->thread);
    td_spin_unlock(&loop->inbox_lock);
}

/* A post to one of the loop's slots: a timing, or the end-of-frame phase (LOOP_EOF), which
 * only the runtime's own end-of-frame waits reach (td_wait_for_end_of_frame). */
static int loop_post_at_slot(td_loop *loop, uint32_t t, uint32_t target, td_continuation_fn fn, void *arg)
{
    if (TD_LIKELY(td_thread_self() == loop->thread)) {
        if (TD_UNLIKELY(loop->retired))
            return TD_E_RETIRED;
        if (TD_UNLIKELY(!((td_atomic_load_u32(&loop->installed) >> t) & 1u)))
            td_loop_install_(loop, t);
        return loop_queue_push(&loop->queues[t], fn, arg, target);
    }
    loop_remote r;
    memset(&r, 0, sizeof(r));
    r.kind = 0;
    r.timing = t;
    r.target = target;
    r.fn = fn;
    r.arg = arg;
    return loop_inbox_push(loop, &r);
}

/* The public posts and items take a timing only: TD_TIMING_COUNT and above are refused (the
 * end-of-frame slot behind them is the runtime's own, loop.h). */
int td_loop_post_at(td_loop *loop, td_timing t, uint32_t target, td_continuation_fn fn, void *arg)
{
    if (loop == NULL || (unsigned)t >= TD_TIMING_COUNT)
        return TD_E_INVALID;
    return loop_post_at_slot(loop, (uint32_t)t, target, fn, arg);
}

int td_loop_post(td_loop *loop, td_timing t, td_continuation_fn fn, void *arg)
{
    /* Target the current frame: due at the next drain of t (this frame or the next). */
    if (loop == NULL)
        return TD_E_INVALID;
    return td_loop_post_at(loop, t, td_loop_frame(loop), fn, arg);
}

int td_loop_add_item_retire_(td_loop *loop, td_timing t, td_item_fn fn, td_continuation_fn retire, void *arg)
{
    if (loop == NULL || (unsigned)t >= LOOP_SLOTS)
        return TD_E_INVALID;
    if (td_thread_self() == loop->thread) {
        if (loop->retired)
            return TD_E_RETIRED;
        if (!((td_atomic_load_u32(&loop->installed) >> t) & 1u))
            td_loop_install_(loop, t);
        return loop_items_push(&loop->items[t], fn, retire, arg);
    }
    loop_remote r;
    memset(&r, 0, sizeof(r));
    r.kind = 1;
    r.timing = t;
    r.item_fn = fn;
    r.retire = retire;
    r.arg = arg;
    return loop_inbox_push(loop, &r);
}

int td_loop_add_item(td_loop *loop, td_timing t, td_item_fn fn, void *arg)
{
    if ((unsigned)t >= TD_TIMING_COUNT)
        return TD_E_INVALID;
    return td_loop_add_item_retire_(loop, t, fn, NULL, arg);
}

/* ---- the frame ------------------------------------------------------------------------- */

static void loop_merge_inbox(td_loop *loop)
{
    /* Nothing posted from another thread, the single-thread case: no lock, no locked
     * instruction. A post whose count lands after this load is merged next frame, as is
     * one that takes the lock after the merge below. */
    if (td_atomic_load_u32(&loop->inbox_count) == 0)
        return;
    td_spin_lock(&loop->inbox_lock);
    loop_remote *in = loop->inbox;
    uint32_t n = loop->inbox_count, cap = loop->inbox_cap;
    loop->inbox = loop->inbox_spare;
    loop->inbox_cap = loop->inbox_spare_cap;
    td_atomic_store_release_u32(&loop->inbox_count, 0);
    td_spin_unlock(&loop->inbox_lock);
    for (uint32_t i = 0; i < n; i++) {
        loop_remote *r = &in[i];
        td_loop_install_(loop, r->timing);
        if (r->kind == 0)
            loop_queue_push(&loop->queues[r->timing], r->fn, r->arg, r->target);
        else
            loop_items_push(&loop->items[r->timing], r->item_fn, r->retire, r->arg);
    }
    loop->inbox_spare = in;
    loop->inbox_spare_cap = cap;
}

static void loop_run_timing(td_loop *loop, uint32_t t, uint32_t frame)
{
    /* Release stores: readers on other threads only compare stamps (no store-load order). */
    td_atomic_store_release_u32(&loop->current, t);
    td_atomic_store_release_u32(&loop->timing_frame[t], frame);
    /* Items added from here on (by continuations or items) start next frame. */
    loop_items *l = &loop->items[t];
    uint32_t n = l->count;
    /* Drain: swap the queue out, so continuations added now wait for a later drain. */
    /* Field by field, no struct copies: tcc makes each one a memmove call. */
    loop_queue *queue = &loop->queues[t], *spare = &loop->spare[t];
    loop_entry *items = queue->items;
    uint32_t count = queue->count, cap = queue->cap;
    queue->items = spare->items;
    queue->count = 0;
    queue->cap = spare->cap;
    /* By pointer, and each entry's fields read where they are used: the drain keeps the loop,
     * the frame and the end in registers across the calls. */
    loop_entry *end = count ? items + count : items;      /* items is NULL before the first push */
    for (loop_entry *e = items; e != end; e++) {
        if (TD_UNLIKELY((int32_t)(frame - e->target) < 0)) {
            loop_queue_push(queue, e->fn, e->arg, e->target);
            continue;
        }
        /* A suspended method's entry is td_runner_resume_frame_: a tail call into its step. */
        e->fn(e->arg);
        if (TD_UNLIKELY(loop->retired)) {
            /* Destroyed from this continuation: the rest is run by the retirement. */
            for (loop_entry *k = e + 1; k != end; k++)
                loop_queue_push(queue, k->fn, k->arg, k->target);
            break;
        }
    }
    spare->items = items;
    spare->count = 0;
    spare->cap = cap;
    int removed = 0;
    for (uint32_t i = 0; i < n && !loop->retired; i++) {
        td_item_fn fn = l->items[i].fn;
        if (fn && !fn(l->items[i].arg)) {
            l->items[i].fn = NULL;
            removed = 1;
        }
    }
    if (removed) {
        uint32_t k = 0;
        for (uint32_t i = 0; i < l->count; i++)
            if (l->items[i].fn) {       /* field by field: no memmove call under tcc */
                l->items[k].fn = l->items[i].fn;
                l->items[k].retire = l->items[i].retire;
                l->items[k].arg = l->items[i].arg;
                k++;
            }
        l->count = k;
    }
}

static void loop_retire(td_loop *loop);

void td_loop_run_frame(td_loop *loop)
{
    if (TD_UNLIKELY(loop->retired))
        return;                      /* a retired loop runs nothing (its waits were canceled) */
    uint32_t frame = td_loop_frame(loop) + 1;
    /* Release stores, as in loop_run_timing: other threads only compare these stamps; no
     * load of this thread has to wait for them (the inbox is taken under its lock). */
    td_atomic_store_release_u32(&loop->frame, frame);
    for (uint32_t t = 0; t < LOOP_SLOTS; t++)
        loop->markers[t].next_frame = frame + 1;
    int64_t real = loop->now(loop->now_arg);
    int64_t delta = real - loop->real_last;
    loop->real_last = real;
    td_atomic_store_release_i64(&loop->unscaled, loop->unscaled + delta);
    td_atomic_store_release_i64(&loop->scaled, loop->scaled + (int64_t)((double)delta * loop->scale));
    loop->running++;
    loop_merge_inbox(loop);
    for (uint32_t i = 0; i < TD_TIMING_COUNT && !loop->retired; i++) {
        uint32_t t = td_timing_order[i];
        if ((td_atomic_load_u32(&loop->installed) >> t) & 1u)
            loop_run_timing(loop, t, frame);
    }
    if (loop->has_end_of_frame && ((td_atomic_load_u32(&loop->installed) >> LOOP_EOF) & 1u) && !loop->retired)
        loop_run_timing(loop, LOOP_EOF, frame);
    td_atomic_store_release_u32(&loop->current, TD_TIMING_COUNT);
    /* A destroy from inside this frame finishes here, once nothing walks the queues. */
    if (--loop->running == 0 && TD_UNLIKELY(loop->retired))
        loop_retire(loop);
}

/* ---- lifetime -------------------------------------------------------------------------- */

td_loop *td_loop_create(const td_loop_config *cfg)
{
    td_loop *loop = (td_loop *)calloc(1, sizeof(*loop));
    if (loop == NULL)
        return NULL;
    loop->thread = td_thread_self();
    loop->current = TD_TIMING_COUNT;
    loop->installed = cfg ? cfg->installed : 0;
    loop->has_end_of_frame = cfg ? cfg->has_end_of_frame : 1;
    loop->now = (cfg && cfg->now) ? cfg->now : loop_monotonic_ns;
    loop->now_arg = cfg ? cfg->now_arg : NULL;
    loop->real_start = loop->real_last = loop->now(loop->now_arg);
    loop->scale = 1.0;
    for (uint32_t t = 0; t < LOOP_SLOTS; t++) {
        td_source_init(&loop->markers[t].source, &loop_marker_ops);
        /* A stamp source (task.h): tasks on it succeed once timing t ran in their frame. */
        TD_WORD_INIT_(&loop->markers[t].source, TD_WORD_STAMPED);
        loop->markers[t].source.cont_arg = (void *)&loop->timing_frame[t];
        loop->markers[t].loop = loop;
        loop->markers[t].timing = t;
        loop->markers[t].queue = &loop->queues[t];
        loop->markers[t].frame = &loop->frame;
        loop->markers[t].next_frame = loop->frame + 1;
        loop->markers[t].current = &loop->current;
        loop->markers[t].direct_thread = ((loop->installed >> t) & 1u) ? (void *)loop->thread : NULL;
    }
    return loop;
}

static void loop_free_arrays(td_loop *loop)
{
    for (uint32_t t = 0; t < LOOP_SLOTS; t++) {
        free(loop->queues[t].items);
        free(loop->spare[t].items);
        free(loop->items[t].items);
        memset(&loop->queues[t], 0, sizeof(loop_queue));
        memset(&loop->spare[t], 0, sizeof(loop_queue));
        memset(&loop->items[t], 0, sizeof(loop_items));
    }
    /* Under the lock: a worker's post (refused, the loop is retired) reads these. */
    td_spin_lock(&loop->inbox_lock);
    free(loop->inbox);
    free(loop->inbox_spare);
    loop->inbox = loop->inbox_spare = NULL;
    td_atomic_store_release_u32(&loop->inbox_count, 0);
    loop->inbox_cap = loop->inbox_spare_cap = 0;
    td_spin_unlock(&loop->inbox_lock);
}

void td_loop_destroy(td_loop *loop)
{
    if (loop == NULL)
        return;
    td_spin_lock(&loop->inbox_lock);
    uint32_t was = loop->retired;
    td_atomic_store_u32(&loop->retired, 1);
    /* No inline queueing from now on, even inside the frame that is being retired. */
    for (uint32_t t = 0; t < LOOP_SLOTS; t++)
        td_atomic_store_ptr(&loop->markers[t].direct_thread, NULL);
    td_spin_unlock(&loop->inbox_lock);
    if (was)
        return;
    if (loop->running == 0)
        loop_retire(loop);
    /* else inside its own frame: td_loop_run_frame finishes the retirement */
}

static void loop_retire(td_loop *loop)
{
    loop_merge_inbox(loop);          /* posts accepted before the retirement still run */
    /* Retire items first (their waits complete canceled), then run every queued
     * continuation: frame markers now answer canceled, so waiters see the retirement. */
    for (uint32_t t = 0; t < LOOP_SLOTS; t++) {
        loop_items *l = &loop->items[t];
        for (uint32_t i = 0; i < l->count; i++)
            if (l->items[i].retire)
                l->items[i].retire(l->items[i].arg);
        l->count = 0;
    }
    for (uint32_t t = 0; t < LOOP_SLOTS; t++) {
        loop_queue q = loop->queues[t];
        memset(&loop->queues[t], 0, sizeof(loop_queue));
        for (uint32_t i = 0; i < q.count; i++) {
            /* A frame await queued without its task (TD_RUNNER_FRAME_PUSH_) gets it now, so
             * that its resumption reads the retirement (the marker answers canceled). */
            if (q.items[i].fn == td_runner_resume_frame_ && t < TD_TIMING_COUNT) {
                td_runner *r = (td_runner *)q.items[i].arg;
                if (r->awaiting.task.source == NULL) {
                    r->awaiting.task.source = &loop->markers[t].source;
                    r->awaiting.task.token = q.items[i].target;
                    r->resume |= TD_RESUME_TAKE_;   /* its taking resume point (async.h) */
                }
            }
            q.items[i].fn(q.items[i].arg);
        }
        free(q.items);
    }
    loop_free_arrays(loop);
    /* Only now: the retirement's continuations still see their loop as the main one. */
    if (td_loop_main_ == loop) {
        td_loop_main_ = NULL;
        td_loop_push_markers_refresh_();
    }
    loop->next_retired = loop_retired;
    loop_retired = loop;
}

int td_loop_runtime_init_(void)
{
    td_loop_config cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.has_end_of_frame = 1;
    loop_owned = td_loop_main_ = td_loop_create(&cfg);
    td_loop_push_markers_refresh_();
    /* The main loop's thread owns the pools' unlocked segments (pool.h). */
    td_pool_set_owner_thread(td_loop_main_ ? td_loop_main_->thread : 0);
    return td_loop_main_ ? TD_OK : TD_E_NOMEM;
}

void td_loop_runtime_shutdown_(void)
{
    td_loop_destroy(loop_owned);
    loop_owned = NULL;
    td_loop_main_ = NULL;
    td_loop_push_markers_refresh_();
    td_pool_set_owner_thread(0);
    while (loop_retired) {
        td_loop *next = loop_retired->next_retired;
        free(loop_retired);
        loop_retired = next;
    }
}
