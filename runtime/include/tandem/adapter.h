/*
 * adapter.h - bridges from callback-style APIs and thread-completed futures into tasks.
 *
 * Status convention of both bridges (the `status` a callback or a future reports):
 *   TD_ADAPT_OK (0)         success; `value` is the task's result;
 *   TD_ADAPT_CANCELED (-1)  the operation was cancelled; the task completes CANCELED;
 *   any other value         a fault whose error code is that value.
 * A cancel token given to a bridge completes the task CANCELED (with that token) as soon
 * as it is cancelled, unless the operation completed first; the operation's late answer
 * is still accepted and discarded. Answers may come on any thread, inline or later.
 * For a reusable source across rounds, see td_completion_source_reset (completion.h).
 */
#ifndef TANDEM_ADAPTER_H
#define TANDEM_ADAPTER_H

#include <stdint.h>
#include "task.h"
#include "cancel.h"

enum { TD_ADAPT_OK = 0, TD_ADAPT_CANCELED = -1 };

/* A callback-style API: it must call done(cb_arg, status, value) exactly once. */
typedef void (*td_adapt_done_fn)(void *cb_arg, int status, int64_t value);
typedef void (*td_callback_api_fn)(void *arg, td_adapt_done_fn done, void *cb_arg);

/* Start `api(arg, ...)` now and return a task of its answer. */
td_task_i64 td_from_callback(td_callback_api_fn api, void *arg, td_cancel_token cancel);

/* A one-shot future set by any thread (mutex + condition variable), e.g. a pthread that
 * computes a result. It can be waited on by blocking, or bridged into a task. */
typedef struct td_future td_future;
td_future *td_future_new(void);
void td_future_free(td_future *f);           /* after its bridged task has completed */
/* Set once: TD_OK, or TD_DONE when it was already set. Wakes blocking waiters and
 * completes a bridged task (on the calling thread). */
int td_future_set(td_future *f, int status, int64_t value);
/* Block until set. */
void td_future_wait(td_future *f, int *status, int64_t *value);
/* A task of the future's answer (one bridged task per future at a time). */
td_task_i64 td_future_task(td_future *f, td_cancel_token cancel);

#endif /* TANDEM_ADAPTER_H */
