/*
 * threads.h - the worker pool, thread switches and run-on-pool.
 *
 * A fixed-size pool of pthreads drains one work queue. td_runtime_init starts it when
 * td_settings.worker_threads > 0; td_thread_pool_start starts it explicitly; shutdown
 * (or td_thread_pool_stop) runs what is queued and joins the workers.
 * The main-thread dispatcher is the main loop's inbox: a worker hands work to the main
 * thread with td_loop_post, merged at the start of the next frame.
 *
 * Switches are stateless tasks (no pooled object), decided when they are awaited:
 *   - td_switch_to_thread_pool() never completes inline: awaiting it queues the awaiter's
 *     continuation, so the awaiter resumes on a worker (a different thread). Its status is
 *     always pending; without a running pool, awaiting it fails with TD_E_NOT_SUPPORTED.
 *   - td_switch_to_main_thread(t) completes inline when awaited on the main loop's thread
 *     (as UniTask's SwitchToMainThread does); on any other thread the continuation is
 *     posted to the main loop at timing t and runs in its next drain. Off the main thread
 *     with no main loop (td_loop_main() NULL: before init, after shutdown or after the main
 *     loop was destroyed) it completes FAULTED with TD_ERR_NO_LOOP, and with a retired main
 *     loop CANCELED: the awaiter never carries on on the wrong thread.
 * Both tasks may be copied, awaited any number of times and read repeatedly.
 */
#ifndef TANDEM_THREADS_H
#define TANDEM_THREADS_H

#include <stdint.h>
#include "task.h"
#include "cancel.h"
#include "loop.h"

/* Start `workers` threads (cold). TD_E_INVALID when a pool is running or workers == 0. */
int td_thread_pool_start(uint32_t workers);
/* Run every queued job, then join the workers (cold). No-op without a pool. */
void td_thread_pool_stop(void);
/* Workers running now (0: no pool). */
uint32_t td_thread_pool_size(void);
/* Queue fn(arg) for a worker; any thread. TD_E_NOT_SUPPORTED without a running pool. */
int td_thread_pool_post(td_continuation_fn fn, void *arg);
/* 1 on a thread of the pool. */
int td_is_worker_thread(void);

td_task td_switch_to_thread_pool(void);
td_task td_switch_to_main_thread(td_timing t);

/* Work run on a worker by td_run_on_thread_pool. Return TD_SUCCEEDED (typed: with
 * *result set), TD_FAULTED with *error filled, or TD_CANCELED (*error may stay empty: the
 * outcome then names `cancel`'s source). `cancel` is the token given to the call, for
 * cooperative cancellation inside long work. */
typedef td_status (*td_work_fn)(void *arg, td_cancel_token cancel, td_error *error);
typedef td_status (*td_work_i64_fn)(void *arg, td_cancel_token cancel, int64_t *result, td_error *error);

/* Run fn(arg) on a worker and complete the returned task with its outcome.
 *   - a token already cancelled at the call: a canceled task, fn never runs;
 *   - a token cancelled before a worker picks the job up: canceled, fn never runs;
 *   - return_to_main: the outcome is published on the main loop's thread (timing UPDATE of
 *     the next frame), so the awaiter resumes there; otherwise it is published on the
 *     worker that ran fn. When the main thread cannot be reached when fn returns (no main
 *     loop, or a retired one), fn's outcome is replaced by FAULTED with TD_ERR_NO_LOOP
 *     (CANCELED for a retired loop), published on the worker: the awaiter learns that it
 *     is not on the main thread instead of resuming there silently.
 * With flow on, the caller's ambient context is current while fn runs (and only then).
 * The work item is pooled (source pool capacity): steady state allocates nothing. */
td_task td_run_on_thread_pool(td_work_fn fn, void *arg, int return_to_main, td_cancel_token cancel);
td_task_i64 td_run_on_thread_pool_i64(td_work_i64_fn fn, void *arg, int return_to_main, td_cancel_token cancel);

#endif /* TANDEM_THREADS_H */
