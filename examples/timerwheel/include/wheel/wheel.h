/*
 * wheel.h - a tiny callback-and-timer wheel: an example library measured by Tandem
 * (examples/timerwheel; not part of Tandem's runtime).
 *
 * A wheel has WHEEL_SLOTS slots, one per tick; a timer due in `delay` ticks (1 to
 * WHEEL_SLOTS - 1) is linked into slot (now + delay) % WHEEL_SLOTS. wheel_tick() advances
 * one tick and calls the callbacks of the timers due. Timers are intrusive and owned by the
 * caller (no allocation anywhere); a 64-bit occupancy map finds the next due slot in one
 * count-trailing-zeros (wheel_port.h).
 */
#ifndef WHEEL_H
#define WHEEL_H

#include <stdint.h>

#define WHEEL_SLOTS 64u

typedef void (*wheel_fn)(void *arg);

typedef struct wheel_timer {
    wheel_fn fn;
    void *arg;
    struct wheel_timer *next;
} wheel_timer;

typedef struct wheel {
    wheel_timer *head[WHEEL_SLOTS];
    wheel_timer *tail[WHEEL_SLOTS];   /* timers fire in the order they were added */
    uint64_t occupied;                /* bit s: slot s holds a timer */
    uint32_t now;                     /* ticks run */
    uint32_t pending;                 /* timers added and not fired */
} wheel;

void wheel_init(wheel *w);
/* Add t, due in `delay` ticks (1 to WHEEL_SLOTS - 1). 0, or -1 for a delay out of range. */
int wheel_add(wheel *w, wheel_timer *t, uint32_t delay, wheel_fn fn, void *arg);
/* Advance one tick: call every timer due, in the order added. Returns how many fired. */
uint32_t wheel_tick(wheel *w);
/* Ticks until the next timer is due (1 to WHEEL_SLOTS), 0 when none is pending. */
uint32_t wheel_next_due(const wheel *w);

#endif
