/*
 * compose.h - combinators over tasks: when_all, when_any, race, timeout, suppression.
 *
 * Every combinator consumes its inputs: once it has returned a task, the input tasks
 * belong to it. when_any reports the first input to complete (its index and value);
 * the losers that complete later are consumed by the combinator (their faults are
 * observed, never reported as unobserved). race is when_any plus cancellation of a
 * caller-supplied source that the losers were started with.
 * Promises are pooled and keep their input arrays, so steady state allocates nothing.
 */
#ifndef TANDEM_COMPOSE_H
#define TANDEM_COMPOSE_H

#include "task.h"
#include "cancel.h"
#include "loop.h"

/* Completes when every input has; faults with the first fault, else cancels with the
 * first cancellation, else succeeds. The typed form writes the results to `results`
 * (caller storage that must stay valid until the task completes). */
td_task td_when_all(const td_task *tasks, int count);
td_task td_when_all_i64(const td_task_i64 *tasks, int count, int64_t *results);

/* Completes with the winner's index as value (typed: winner index in `winner_out`, and the
 * winner's result as the task's value). The winner's fault or cancellation propagates. */
td_task_i64 td_when_any(const td_task *tasks, int count);
td_task_i64 td_when_any_i64(const td_task_i64 *tasks, int count, int *winner_out);

/* when_any that cancels `losers` as soon as a winner is known. */
td_task_i64 td_race(const td_task *tasks, int count, td_cancel_source *losers);

/* Timeout: the task, or after `ns` of `clock`:
 *   with_error: a FAULTED outcome with code TD_ERR_TIMEOUT;
 *   without:    a SUCCEEDED outcome flagged timed out (td_outcome_timed_out).
 * The timed-out input keeps running and is consumed by the combinator when it completes;
 * a producer's own fault or cancellation keeps its identity (code, message, token).
 * Cancellation of the wait itself (the options' token, before or during the wait, or the
 * loop's retirement) completes the timeout CANCELED with that record, never "timed out".
 * A producer that wins stops the delay: nothing polls the clock for it afterwards.
 * A duration past the clock's range (INT64_MAX) never times out. */
td_task td_timeout(td_task t, int64_t ns, td_clock clock, int with_error, const td_wait_options *o);
td_task_i64 td_timeout_i64(td_task_i64 t, int64_t ns, td_clock clock, int with_error, const td_wait_options *o);

/* Attach an external token: cancels with that token unless the input completed first.
 * The input is still consumed when it completes. */
td_task_i64 td_attach_cancel_i64(td_task_i64 t, td_cancel_token token);

/* Suppression: a cancellation becomes a SUCCEEDED outcome flagged canceled
 * (td_outcome_canceled_flag) that still names the token; faults stay faults. */
td_task_i64 td_suppress_cancel_i64(td_task_i64 t);

/* Flags carried by a SUCCEEDED outcome of the combinators above (no error path). */
static inline int td_outcome_timed_out(const td_outcome *o)
{
    return o->status == TD_SUCCEEDED && o->error.code == TD_ERR_TIMEOUT;
}
static inline int td_outcome_canceled_flag(const td_outcome *o)
{
    return o->status == TD_SUCCEEDED && o->error.code == TD_ERR_CANCELED;
}

#endif /* TANDEM_COMPOSE_H */
