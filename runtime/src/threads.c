/*
 * threads.c - worker pool, thread switches and run-on-pool (see include/tandem/threads.h).
 *
 * Invariants:
 *   - the work queue is a ring of {fn, arg} guarded by threads_lock; idle workers sleep on
 *     threads_cond. The ring is allocated by the runtime init hook and only grows (doubling)
 *     when a burst overflows it, so steady state allocates nothing.
 *   - a worker copies a job out of the ring before running it and touches nothing of the
 *     job's argument after the call returns: the argument may be a runner that completed
 *     inside the call and has since been consumed and re-rented on another thread.
 *   - a run-on-pool work item is a protocol source with one owner, its consumer. Whoever
 *     publishes it (the worker, or the main loop when return-to-main was asked) does so
 *     with one td_source_complete and never touches the item afterwards.
 *   - a worker resets its ambient context after every job, so a context flowed into one
 *     job never leaks into the next.
 *   - threads_workers is written only under threads_lock (start/stop) and read atomically.
 */
#include "../port/td_libc.h"
#include "td_internal.h"

typedef struct threads_job { td_continuation_fn fn; void *arg; } threads_job;

#define THREADS_RING_INITIAL 256u

static pthread_mutex_t threads_lock;
static pthread_cond_t threads_cond;
static pthread_key_t threads_worker_key;
static threads_job *threads_ring;
static uint32_t threads_ring_cap;          /* a power of two */
static uint32_t threads_head, threads_count;
static int threads_stopping;
static volatile uint32_t threads_workers;  /* running workers; 0 = no pool */
static pthread_t *threads_ids;
static uint32_t threads_id_count;
static td_pool threads_work_pool;

/* ---- the queue ------------------------------------------------------------------------ */

/* Called with threads_lock held. Doubling keeps the ring a power of two; the jobs are
 * unrolled into the new ring in queue order. */
static int threads_ring_grow(void)
{
    uint32_t cap = threads_ring_cap ? threads_ring_cap * 2 : THREADS_RING_INITIAL;
    threads_job *ring = (threads_job *)malloc(cap * sizeof(threads_job));
    if (ring == NULL)
        return TD_E_NOMEM;
    for (uint32_t i = 0; i < threads_count; i++)
        ring[i] = threads_ring[(threads_head + i) & (threads_ring_cap - 1)];
    free(threads_ring);
    threads_ring = ring;
    threads_ring_cap = cap;
    threads_head = 0;
    return TD_OK;
}

int td_thread_pool_post(td_continuation_fn fn, void *arg)
{
    int rc = TD_OK;
    pthread_mutex_lock(&threads_lock);
    if (TD_UNLIKELY(threads_workers == 0))
        rc = TD_E_NOT_SUPPORTED;
    else if (TD_UNLIKELY(threads_count == threads_ring_cap))
        rc = threads_ring_grow();
    if (rc == TD_OK) {
        threads_job *j = &threads_ring[(threads_head + threads_count) & (threads_ring_cap - 1)];
        j->fn = fn;
        j->arg = arg;
        threads_count++;
        pthread_cond_signal(&threads_cond);
    }
    pthread_mutex_unlock(&threads_lock);
    return rc;
}

static void *threads_worker_main(void *arg)
{
    (void)arg;
    pthread_setspecific(threads_worker_key, (void *)1);
    pthread_mutex_lock(&threads_lock);
    for (;;) {
        while (threads_count == 0 && !threads_stopping)
            pthread_cond_wait(&threads_cond, &threads_lock);
        if (threads_count == 0)
            break;                                   /* stopping and drained */
        threads_job job = threads_ring[threads_head];
        threads_head = (threads_head + 1) & (threads_ring_cap - 1);
        threads_count--;
        pthread_mutex_unlock(&threads_lock);
        job.fn(job.arg);
        td_context_restore_(NULL);
        pthread_mutex_lock(&threads_lock);
    }
    pthread_mutex_unlock(&threads_lock);
    return NULL;
}

int td_thread_pool_start(uint32_t workers)
{
    if (workers == 0)
        return TD_E_INVALID;
    pthread_mutex_lock(&threads_lock);
    int busy = threads_ids != NULL;
    pthread_mutex_unlock(&threads_lock);
    if (busy)
        return TD_E_INVALID;
    pthread_t *ids = (pthread_t *)calloc(workers, sizeof(pthread_t));
    if (ids == NULL)
        return TD_E_NOMEM;
    /* Accept posts before the first worker runs: jobs wait in the ring until one does. */
    pthread_mutex_lock(&threads_lock);
    threads_ids = ids;
    threads_stopping = 0;
    td_atomic_store_u32(&threads_workers, workers);
    pthread_mutex_unlock(&threads_lock);
    uint32_t started = 0;
    while (started < workers && pthread_create(&ids[started], NULL, threads_worker_main, NULL) == 0)
        started++;
    pthread_mutex_lock(&threads_lock);
    threads_id_count = started;
    td_atomic_store_u32(&threads_workers, started);
    pthread_mutex_unlock(&threads_lock);
    if (started == 0) {
        td_thread_pool_stop();
        return TD_E_NOMEM;
    }
    return TD_OK;
}

void td_thread_pool_stop(void)
{
    pthread_mutex_lock(&threads_lock);
    pthread_t *ids = threads_ids;
    uint32_t n = threads_id_count;
    threads_stopping = 1;
    pthread_cond_broadcast(&threads_cond);
    pthread_mutex_unlock(&threads_lock);
    if (ids == NULL)
        return;
    for (uint32_t i = 0; i < n; i++)
        pthread_join(ids[i], NULL);
    /* Jobs posted by a foreign thread after the last worker left run here, so no
     * continuation is lost. */
    pthread_mutex_lock(&threads_lock);
    td_atomic_store_u32(&threads_workers, 0);
    while (threads_count > 0) {
        threads_job job = threads_ring[threads_head];
        threads_head = (threads_head + 1) & (threads_ring_cap - 1);
        threads_count--;
        pthread_mutex_unlock(&threads_lock);
        job.fn(job.arg);
        pthread_mutex_lock(&threads_lock);
    }
    threads_ids = NULL;
    threads_id_count = 0;
    threads_stopping = 0;
    pthread_mutex_unlock(&threads_lock);
    free(ids);
}

uint32_t td_thread_pool_size(void) { return td_atomic_load_u32(&threads_workers); }
int td_is_worker_thread(void) { return pthread_getspecific(threads_worker_key) != NULL; }

/* ---- switches (stateless custom sources) --------------------------------------------- */

static int threads_pool_switch_status(td_source *s, uint32_t token, td_status *out)
{
    (void)s;
    (void)token;
    if (td_atomic_load_u32(&threads_workers) == 0)
        return TD_E_NOT_SUPPORTED;
    *out = TD_PENDING;              /* never complete until awaited: the switch is the await */
    return TD_OK;
}

static int threads_pool_switch_on_completed(td_source *s, uint32_t token, td_continuation_fn fn, void *arg)
{
    (void)s;
    (void)token;
    /* A runner that switches (its resumption: td_runner_move_next, or td_runner_resume_ when
     * it captured no context) goes on, and completes, on a worker: its source leaves the main
     * thread's ownership here, before the hand-off, not by a revocation there. */
    if (fn == td_runner_move_next || fn == td_runner_resume_)
        TD_SOURCE_SHARE_(&((td_runner *)arg)->source);
    return td_thread_pool_post(fn, arg);
}

static int threads_pool_switch_get(td_source *s, uint32_t token, td_outcome *out)
{
    (void)s;
    (void)token;
    if (td_atomic_load_u32(&threads_workers) == 0)
        return TD_E_NOT_SUPPORTED;
    memset(out, 0, sizeof(*out));
    out->status = TD_SUCCEEDED;
    return TD_OK;
}

static void threads_switch_release(td_source *s) { (void)s; }

static const td_source_ops threads_pool_switch_ops = {
    threads_switch_release, threads_pool_switch_status, threads_pool_switch_on_completed,
    threads_pool_switch_get, "switch-to-thread-pool"
};

/* The token of a main-thread switch is its timing. */
static int threads_on_main(void)
{
    td_loop *loop = td_loop_main();
    return loop != NULL && td_thread_self() == td_loop_thread(loop);
}

/* Why the main thread cannot be reached through `loop` (td_loop_main()'s answer), for a
 * switch to it and for run-on-pool's return to it (threads.h): no main loop, FAULTED with
 * TD_ERR_NO_LOOP (as a wait without one, loop.h); a retired one, CANCELED (as a wait on a
 * retired loop); TD_PENDING, e untouched, while it can be reached. */
static td_status threads_main_unreachable(const td_loop *loop, td_error *e)
{
    if (loop != NULL && !td_loop_is_retired(loop))
        return TD_PENDING;
    e->cancel = NULL;
    if (loop == NULL) {
        e->code = TD_ERR_NO_LOOP;
        e->message = "no main loop to reach the main thread";
        return TD_FAULTED;
    }
    e->code = TD_ERR_CANCELED;
    e->message = "the main loop was retired";
    return TD_CANCELED;
}

/* The switch's outcome off the main thread: never SUCCEEDED on the wrong thread once the
 * main thread cannot be reached; TD_PENDING (out untouched) while the switch can happen. */
static td_status threads_main_switch_outcome(td_outcome *out)
{
    td_error e;
    td_status st = threads_main_unreachable(td_loop_main(), &e);
    if (out && st != TD_PENDING) {
        memset(out, 0, sizeof(*out));
        out->status = st;
        out->error = e;
    }
    return st;
}

static int threads_main_switch_status(td_source *s, uint32_t token, td_status *out)
{
    (void)s;
    if (token >= TD_TIMING_COUNT)
        return TD_E_INVALID;
    *out = threads_on_main() ? TD_SUCCEEDED : threads_main_switch_outcome(NULL);
    return TD_OK;
}

static int threads_main_switch_on_completed(td_source *s, uint32_t token, td_continuation_fn fn, void *arg)
{
    (void)s;
    if (token >= TD_TIMING_COUNT)
        return TD_E_INVALID;
    if (threads_on_main())
        return TD_DONE;
    td_loop *loop = td_loop_main();
    if (loop == NULL)
        return TD_DONE;             /* final: the get reads FAULTED with TD_ERR_NO_LOOP */
    int rc = td_loop_post(loop, (td_timing)token, fn, arg);
    return rc == TD_E_RETIRED ? TD_DONE : rc;   /* final: the get reads CANCELED */
}

static int threads_main_switch_get(td_source *s, uint32_t token, td_outcome *out)
{
    (void)s;
    if (token >= TD_TIMING_COUNT)
        return TD_E_INVALID;
    /* Read repeatedly (threads.h): SUCCEEDED unless the switch cannot happen any more. */
    if (threads_on_main() || threads_main_switch_outcome(out) == TD_PENDING) {
        memset(out, 0, sizeof(*out));
        out->status = TD_SUCCEEDED;
    }
    return TD_OK;
}

static const td_source_ops threads_main_switch_ops = {
    threads_switch_release, threads_main_switch_status, threads_main_switch_on_completed,
    threads_main_switch_get, "switch-to-main-thread"
};

/* Custom sources never use their word: static, immutable after compile time. */
static td_source threads_pool_switch = { .ops = &threads_pool_switch_ops };
static td_source threads_main_switch = { .ops = &threads_main_switch_ops };

td_task td_switch_to_thread_pool(void) { return td_task_of(&threads_pool_switch, 0); }
td_task td_switch_to_main_thread(td_timing t) { return td_task_of(&threads_main_switch, (uint32_t)t); }

/* ---- run on the pool ------------------------------------------------------------------- */

typedef struct threads_work {
    td_source source;               /* first member */
    uint32_t token;
    int return_to_main;
    td_work_fn fn;
    td_work_i64_fn fn_i64;
    void *arg;
    td_cancel_token cancel;
    void *context;
    int flowed;
    td_status status;
    int64_t value;
    td_error error;
} threads_work;

static void threads_work_release(td_source *s)
{
    threads_work *w = (threads_work *)s;
    w->fn = NULL;
    w->fn_i64 = NULL;
    w->arg = NULL;
    w->cancel.source = NULL;
    w->context = NULL;
    td_source_recycle(&w->source);
    td_pool_return(&threads_work_pool, w);
}

static const td_source_ops threads_work_ops = { threads_work_release, NULL, NULL, NULL, "run-on-thread-pool" };

static void threads_work_publish(void *arg)
{
    threads_work *w = (threads_work *)arg;
    td_error e = w->error;
    td_source_complete(&w->source, w->token, w->status, w->value, &e);
}

/* return_to_main: the outcome is published on the main loop's thread; 0 when it cannot be
 * (no main loop, a retired one, or the post's allocation failed): then the awaiter must not
 * take the work's outcome as if it had resumed on the main thread, so the outcome turns into
 * the reason (threads.h), published on this worker, the only thread left to publish it. */
static int threads_work_post_to_main(threads_work *w)
{
    td_loop *loop = td_loop_main();
    int rc = loop ? td_loop_post(loop, TD_TIMING_UPDATE, threads_work_publish, w) : TD_E_RETIRED;
    if (rc == TD_OK)
        return 1;
    w->value = 0;
    w->status = threads_main_unreachable(loop, &w->error);
    if (w->status == TD_PENDING) {      /* reachable, but the post failed (its allocation) */
        w->status = TD_FAULTED;
        w->error.code = rc;
        w->error.message = "run on the thread pool: the post to the main loop failed";
        w->error.cancel = NULL;
    }
    return 0;
}

static void threads_work_run(void *arg)
{
    threads_work *w = (threads_work *)arg;
    memset(&w->error, 0, sizeof(w->error));
    w->value = 0;
    if (td_cancel_is_requested(w->cancel)) {
        w->status = TD_CANCELED;
    } else {
        if (w->flowed)
            td_context_restore_(w->context);
        if (w->fn_i64)
            w->status = w->fn_i64(w->arg, w->cancel, &w->value, &w->error);
        else
            w->status = w->fn(w->arg, w->cancel, &w->error);
        if (w->flowed)
            td_context_restore_(NULL);
    }
    if (w->status == TD_CANCELED && w->error.code == TD_ERR_NONE)
        w->error = td_cancel_error(w->cancel.source);
    else if (w->status == TD_PENDING)
        w->status = TD_SUCCEEDED;   /* a work function has no way to stay pending */
    if (w->return_to_main && threads_work_post_to_main(w))
        return;
    threads_work_publish(w);
}

static td_task threads_run(td_work_fn fn, td_work_i64_fn fn_i64, void *arg, int return_to_main, td_cancel_token cancel)
{
    if (td_cancel_is_requested(cancel))
        return td_from_canceled(cancel.source);
    threads_work *w = (threads_work *)td_pool_rent(&threads_work_pool);
    if (w == NULL)
        return td_from_error(TD_E_NOMEM, "run-on-thread-pool allocation failed");
    if (w->source.ops == NULL)
        w->source.ops = &threads_work_ops;
    w->token = td_source_token(&w->source);
    w->fn = fn;
    w->fn_i64 = fn_i64;
    w->arg = arg;
    w->cancel = cancel;
    w->return_to_main = return_to_main;
    w->flowed = td_runtime_settings.flow;
    w->context = w->flowed ? td_context_capture_() : NULL;
    td_task t = td_task_of(&w->source, w->token);
    int rc = td_thread_pool_post(threads_work_run, w);
    if (rc != TD_OK) {
        td_error e = { rc, "no thread pool is running", NULL };
        td_source_complete(&w->source, w->token, TD_FAULTED, 0, &e);
    }
    return t;
}

td_task td_run_on_thread_pool(td_work_fn fn, void *arg, int return_to_main, td_cancel_token cancel)
{
    return threads_run(fn, NULL, arg, return_to_main, cancel);
}

td_task_i64 td_run_on_thread_pool_i64(td_work_i64_fn fn, void *arg, int return_to_main, td_cancel_token cancel)
{
    return td_task_i64_of(threads_run(NULL, fn, arg, return_to_main, cancel));
}

/* ---- lifetime -------------------------------------------------------------------------- */

int td_threads_runtime_init_(uint32_t capacity)
{
    if (pthread_mutex_init(&threads_lock, NULL) != 0 || pthread_cond_init(&threads_cond, NULL) != 0)
        return TD_E_NOMEM;
    if (pthread_key_create(&threads_worker_key, NULL) != 0)
        return TD_E_NOMEM;
    threads_head = threads_count = 0;
    threads_ring = NULL;
    threads_ring_cap = 0;
    if (threads_ring_grow() != TD_OK)
        return TD_E_NOMEM;
    return td_pool_init(&threads_work_pool, "run-on-thread-pool", sizeof(threads_work), capacity);
}

/* Started last by td_runtime_init, once everything a job may touch exists. */
int td_threads_runtime_start_(uint32_t workers)
{
    return workers > 0 ? td_thread_pool_start(workers) : TD_OK;
}

void td_threads_runtime_shutdown_(void)
{
    td_thread_pool_stop();
    td_pool_destroy(&threads_work_pool);
    free(threads_ring);
    threads_ring = NULL;
    threads_ring_cap = 0;
    pthread_key_delete(threads_worker_key);
    pthread_cond_destroy(&threads_cond);
    pthread_mutex_destroy(&threads_lock);
}

int td_threads_set_capacity_(uint32_t capacity) { return td_pool_set_capacity(&threads_work_pool, capacity); }
