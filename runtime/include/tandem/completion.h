/*
 * completion.h - completion sources: tasks completed by hand.
 *
 * Manual source (td_completion_source): owned by its creator, not recycled when its task
 * is consumed. td_completion_source_reset() moves it to its next version for another round
 * (every task of the previous round becomes stale).
 * Auto-reset source (td_auto_source): pooled; it goes back to its pool, reset, when its task
 * is consumed, so one rental is one round.
 * Both are typed and untyped at once: the 64-bit value slot is read by typed consumers.
 * Completion may race (cancellation against a producer): the first completer wins and the
 * others get TD_DONE. A manual source's td_completion_source_set_* complete the round it is
 * at; its owner does not reset it while a completion is in flight (either may be lost).
 * A result set on the main thread for a runner of that thread awaiting the source is handed to
 * the runner directly: the source reads consumed at once, as after the runner's own take.
 */
#ifndef TANDEM_COMPLETION_H
#define TANDEM_COMPLETION_H

#include "task.h"
#include "cancel.h"

typedef struct td_completion_source td_completion_source;

td_completion_source *td_completion_source_new(void);
void td_completion_source_free(td_completion_source *cs);
void td_completion_source_reset(td_completion_source *cs);
td_task td_completion_source_task(td_completion_source *cs);
td_task_i64 td_completion_source_task_i64(td_completion_source *cs);
int td_completion_source_set_result(td_completion_source *cs, int64_t value);
int td_completion_source_set_error(td_completion_source *cs, int code, const char *message);
int td_completion_source_set_canceled(td_completion_source *cs, td_cancel_source *by);

/* Auto-reset: one rental, one task, back to the pool at consumption. */
typedef struct td_auto_source td_auto_source;
td_auto_source *td_auto_source_rent(void);
td_task td_auto_source_task(td_auto_source *s);
td_task_i64 td_auto_source_task_i64(td_auto_source *s);
/* `token` is the task's token: completing a recycled source is rejected (TD_E_STALE). */
int td_auto_source_set_result(td_auto_source *s, uint32_t token, int64_t value);
int td_auto_source_set_error(td_auto_source *s, uint32_t token, int code, const char *message);
int td_auto_source_set_canceled(td_auto_source *s, uint32_t token, td_cancel_source *by);

#endif /* TANDEM_COMPLETION_H */
