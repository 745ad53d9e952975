/*
 * timer.c - loop timers (see include/tandem/timer.h).
 *
 * Invariants (all state is the loop thread's; no locks):
 *   - `attached`: the timer's loop item is in the loop. At most one item per timer: start
 *     re-arms an attached timer instead of adding a second item.
 *   - stop only clears `running`; the item detaches itself at its next tick. free of an
 *     attached timer only marks it; the item (or the loop's retirement) frees it, so the
 *     loop never calls into freed memory.
 *   - the item is attached while its callback runs, so a free from inside the callback is
 *     deferred to the end of that tick by the same rule.
 */
#include "../port/td_libc.h"
#include "td_internal.h"

struct td_timer {
    td_loop *loop;
    int64_t interval;
    int64_t deadline;
    td_clock clock;
    int periodic;
    td_timer_fn fn;
    void *arg;
    int running;
    int attached;
    int free_requested;
    uint32_t fired;
};

static int timer_tick(void *arg)
{
    td_timer *t = (td_timer *)arg;
    if (t->running && !t->free_requested) {
        int64_t now = td_loop_time(t->loop, t->clock);
        if (now >= t->deadline) {
            t->fired++;
            if (t->periodic)
                t->deadline = td_deadline_after_(now, t->interval);
            else
                t->running = 0;
            t->fn(t, t->arg);
        }
    }
    if (t->free_requested) {
        free(t);
        return 0;
    }
    if (!t->running) {
        t->attached = 0;
        return 0;
    }
    return 1;
}

/* The loop was retired: no more ticks. */
static void timer_retire(void *arg)
{
    td_timer *t = (td_timer *)arg;
    t->attached = 0;
    t->running = 0;
    if (t->free_requested)
        free(t);
}

td_timer *td_timer_create(td_loop *loop, int64_t interval_ns, td_clock clock, int periodic,
                          td_timer_fn fn, void *arg)
{
    if (fn == NULL || interval_ns < 0)
        return NULL;
    if (loop == NULL && (loop = td_loop_main()) == NULL)
        return NULL;                 /* no loop to run on */
    td_timer *t = (td_timer *)calloc(1, sizeof(*t));
    if (t == NULL)
        return NULL;
    t->loop = loop;
    t->interval = interval_ns;
    t->clock = clock;
    t->periodic = periodic;
    t->fn = fn;
    t->arg = arg;
    return t;
}

int td_timer_start(td_timer *t)
{
    if (td_loop_is_retired(t->loop)) {
        t->running = 0;
        return TD_E_RETIRED;
    }
    t->deadline = td_deadline_after_(td_loop_time(t->loop, t->clock), t->interval);
    t->running = 1;
    if (t->attached)
        return TD_OK;
    int rc = td_loop_add_item_retire_(t->loop, TD_TIMING_UPDATE, timer_tick, timer_retire, t);
    if (rc != TD_OK) {
        t->running = 0;
        return rc;
    }
    t->attached = 1;
    return TD_OK;
}

void td_timer_stop(td_timer *t) { t->running = 0; }

void td_timer_free(td_timer *t)
{
    if (t == NULL)
        return;
    t->running = 0;
    if (t->attached)
        t->free_requested = 1;
    else
        free(t);
}

int td_timer_is_running(const td_timer *t) { return t->running; }
uint32_t td_timer_fired(const td_timer *t) { return t->fired; }
