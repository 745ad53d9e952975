/* wheel.c - the timer wheel (wheel.h). */
#include "wheel/wheel.h"
#include "wheel/wheel_port.h"

#include <stddef.h>

void wheel_init(wheel *w)
{
    for (uint32_t s = 0; s < WHEEL_SLOTS; s++) w->head[s] = w->tail[s] = NULL;
    w->occupied = 0;
    w->now = 0;
    w->pending = 0;
}

int wheel_add(wheel *w, wheel_timer *t, uint32_t delay, wheel_fn fn, void *arg)
{
    if (delay < 1 || delay >= WHEEL_SLOTS) return -1;
    uint32_t s = (w->now + delay) % WHEEL_SLOTS;
    t->fn = fn;
    t->arg = arg;
    t->next = NULL;
    if (w->tail[s]) w->tail[s]->next = t;
    else w->head[s] = t;
    w->tail[s] = t;
    w->occupied |= 1ull << s;
    w->pending++;
    return 0;
}

uint32_t wheel_tick(wheel *w)
{
    w->now++;
    uint32_t s = w->now % WHEEL_SLOTS, fired = 0;
    /* detach the slot first: a callback may add a timer for a later tick, even this slot
     * one full turn later */
    wheel_timer *t = w->head[s];
    w->head[s] = w->tail[s] = NULL;
    w->occupied &= ~(1ull << s);
    while (t) {
        wheel_timer *next = t->next;
        w->pending--;
        fired++;
        t->fn(t->arg);
        t = next;
    }
    return fired;
}

uint32_t wheel_next_due(const wheel *w)
{
    if (!w->occupied) return 0;
    /* rotate the map so that bit 0 is the slot after `now` */
    uint32_t from = (w->now + 1) % WHEEL_SLOTS;
    uint64_t m = from ? (w->occupied >> from) | (w->occupied << (WHEEL_SLOTS - from)) : w->occupied;
    return wheel_ctz64(m) + 1;
}
