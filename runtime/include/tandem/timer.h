/*
 * timer.h - loop timers: call fn every `interval` of a clock, or once.
 *
 * A timer is a loop item at timing UPDATE that compares the loop's clock with its deadline
 * once per frame. It fires at most once per frame; a periodic timer then re-arms from the
 * current time (no catch-up burst after a long frame). With the scaled clock and time
 * scale 0 it never fires. create/start/stop/free are called on the loop's thread (the
 * callback may stop, restart or free its own timer); create and free are cold (allocate),
 * start/stop/fire allocate nothing once the loop's item list is warm. When the loop is
 * retired the timer stops; it must still be freed. An interval past the clock's range
 * (INT64_MAX) never fires.
 */
#ifndef TANDEM_TIMER_H
#define TANDEM_TIMER_H

#include <stdint.h>
#include "loop.h"

typedef struct td_timer td_timer;
typedef void (*td_timer_fn)(td_timer *t, void *arg);

/* loop NULL = td_loop_main() (NULL when there is no main loop). Created stopped. */
td_timer *td_timer_create(td_loop *loop, int64_t interval_ns, td_clock clock, int periodic,
                          td_timer_fn fn, void *arg);
/* (Re)arm: the first firing is `interval` after now. TD_OK, TD_E_NOMEM, or TD_E_RETIRED
 * when the loop was retired (the timer stays stopped). */
int td_timer_start(td_timer *t);
void td_timer_stop(td_timer *t);
void td_timer_free(td_timer *t);
int td_timer_is_running(const td_timer *t);
/* Firings since creation. */
uint32_t td_timer_fired(const td_timer *t);

#endif /* TANDEM_TIMER_H */
