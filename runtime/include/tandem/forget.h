/*
 * forget.h - fire-and-forget with an unobserved-error handler.
 *
 * td_task_forget(t) takes ownership of t: it subscribes, and when t completes it consumes
 * it (a runner goes back to its pool). A fault that nobody observed is reported once, on
 * the completing thread, to the handler set by td_set_unobserved_error_handler (no handler:
 * dropped). Cancellation is not an error and is never reported. Everything else that
 * consumes a task observes it: td_task_get, td_task_forget_result, and the combinators
 * (when_all, when_any and its late losers, race, timeout) never report.
 * Stateless custom sources (frame waits, switches, shared-handle tasks) own nothing to
 * consume: forgetting them is a no-op. Forget records are pooled (no steady-state allocation).
 */
#ifndef TANDEM_FORGET_H
#define TANDEM_FORGET_H

#include "task.h"

typedef void (*td_unobserved_error_fn)(const td_error *error, void *arg);

/* Set (or clear with NULL) the handler; any thread. */
void td_set_unobserved_error_handler(td_unobserved_error_fn fn, void *arg);
void td_task_forget(td_task t);
void td_task_forget_i64(td_task_i64 t);
/* Faults reported since td_runtime_init (statistics). */
uint32_t td_unobserved_error_count(void);

#endif /* TANDEM_FORGET_H */
