/*
 * shared.h - shared handles: one pending task, many readers (UniTask's Preserve).
 *
 * td_task_share turns a task into a handle. For a protocol source (runner, completion
 * source, wait...) the source is marked SHARED: from then on await, get and another share
 * or preserve on the original task fail with TD_E_SHARED, and a source that already has a
 * native waiter cannot be shared (TD_E_AWAITED). When the original completes, the handle
 * consumes it (a runner goes back to its pool at once, its old token dead) and keeps the
 * outcome. Stateless custom sources (frame waits, other handles) are multi-reader already:
 * the handle just subscribes to them.
 *
 * td_shared_task(h) is a task over the handle: any number of awaiters (each runs once, on
 * the completing thread), repeated reads (get does not consume). It is valid while the
 * handle is: a handle lives until td_shared_release has dropped the last reference AND the
 * original has completed; then it is recycled (pooled) and its tasks turn stale.
 */
#ifndef TANDEM_SHARED_H
#define TANDEM_SHARED_H

#include "task.h"

typedef struct td_shared td_shared;

/* Share (one reference to the caller). NULL on failure; td_task_share_rc says why:
 * TD_OK, TD_E_SHARED, TD_E_AWAITED, TD_E_STALE, TD_E_NOMEM. */
td_shared *td_task_share(td_task t);
td_shared *td_task_share_i64(td_task_i64 t);
int td_task_share_rc(td_task_i64 t, td_shared **out);
/* UniTask's Preserve: the same operation. */
td_shared *td_task_preserve(td_task t);
td_shared *td_task_preserve_i64(td_task_i64 t);

td_task td_shared_task(td_shared *h);
td_task_i64 td_shared_task_i64(td_shared *h);
/* The stored outcome (TD_E_PENDING until the original completed). */
int td_shared_outcome(td_shared *h, td_outcome *out);
void td_shared_retain(td_shared *h);
void td_shared_release(td_shared *h);

#endif /* TANDEM_SHARED_H */
