/*
 * runtime.c - explicit initialisation and shutdown (see include/tandem/runtime.h).
 * Everything pooled is set up here, once; hot paths assume it has happened.
 */
#include "../port/td_libc.h"
#include "td_internal.h"

td_settings td_runtime_settings = {
    TD_DEFAULT_SOURCE_POOL_CAPACITY, TD_DEFAULT_RUNNER_POOL_CAPACITY, 0, 0, 0
};

td_pool td_error_source_pool;
td_pool td_auto_source_pool;

static uintptr_t runtime_main_thread;

void td_settings_defaults(td_settings *s)
{
    s->source_pool_capacity = TD_DEFAULT_SOURCE_POOL_CAPACITY;
    s->runner_pool_capacity = TD_DEFAULT_RUNNER_POOL_CAPACITY;
    s->flow = 0;
    s->tracking = 0;
    s->worker_threads = 0;
}

/* ---- the modules, in the one order that matters ---------------------------------------
 * This file alone decides the order; no module sets up or tears down another.
 * Init: the per-thread context first; the error and auto sources every module may
 * complete with; runners; the stream area (streams, then operators, channels and adapters
 * built on them); cancellation, waits and combinators; the main loop (which makes this
 * thread the pools' owner); shared handles, forgotten tasks, tracking; the thread pool's
 * queue. Workers start last, after everything: a job may touch any pool or the main loop.
 * Shutdown: workers stop first (running what is queued) while everything they use exists;
 * then the loop (retiring it may complete forgotten or shared tasks), then the rest. */

static int runtime_error_pools_init(uint32_t cap)
{
    int rc = td_pool_init(&td_error_source_pool, "error", sizeof(td_source), cap);
    if (rc == TD_OK)
        rc = td_pool_init(&td_auto_source_pool, "auto-source", sizeof(td_source), cap);
    return rc;
}

static void runtime_error_pools_shutdown(void)
{
    td_pool_destroy(&td_auto_source_pool);
    td_pool_destroy(&td_error_source_pool);
}

static int runtime_error_pools_set_capacity(uint32_t cap)
{
    int rc = td_pool_set_capacity(&td_error_source_pool, cap);
    if (rc == TD_OK)
        rc = td_pool_set_capacity(&td_auto_source_pool, cap);
    return rc;
}

static int runtime_context_init(uint32_t cap) { (void)cap; return td_context_runtime_init_(); }
static int runtime_runners_init(uint32_t cap) { (void)cap; return td_async_set_all_capacities_(td_runtime_settings.runner_pool_capacity); }
static int runtime_loop_init(uint32_t cap) { (void)cap; return td_loop_runtime_init_(); }
static int runtime_tracking_init(uint32_t cap) { (void)cap; return td_tracking_runtime_init_(); }
static int runtime_ownership_init(uint32_t cap) { (void)cap; return td_ownership_runtime_init_(); }

typedef struct runtime_module {
    const char *name;
    int (*init)(uint32_t source_capacity);
    int (*set_capacity)(uint32_t source_capacity);   /* NULL: no source pools */
} runtime_module;

static const runtime_module runtime_modules[] = {
    { "ownership", runtime_ownership_init, NULL },
    { "context", runtime_context_init, NULL },
    { "error and auto sources", runtime_error_pools_init, runtime_error_pools_set_capacity },
    { "runners", runtime_runners_init, NULL },
    { "streams", td_stream_runtime_init_, td_stream_set_capacity_ },
    { "operators", td_operators_runtime_init_, td_operators_set_capacity_ },
    { "channels", td_channel_runtime_init_, td_channel_set_capacity_ },
    { "adapters", td_adapter_runtime_init_, td_adapter_set_capacity_ },
    { "cancellation", td_cancel_runtime_init_, td_cancel_set_capacity_ },
    { "waits", td_waits_runtime_init_, td_waits_set_capacity_ },
    { "combinators", td_compose_runtime_init_, td_compose_set_capacity_ },
    { "main loop", runtime_loop_init, NULL },
    { "shared handles", td_shared_runtime_init_, td_shared_set_capacity_ },
    { "forgotten tasks", td_forget_runtime_init_, td_forget_set_capacity_ },
    { "tracking", runtime_tracking_init, NULL },
    { "thread pool", td_threads_runtime_init_, td_threads_set_capacity_ },
};

static void (*const runtime_shutdown_order[])(void) = {
    td_threads_runtime_shutdown_,
    td_loop_runtime_shutdown_,
    td_forget_runtime_shutdown_,
    td_shared_runtime_shutdown_,
    td_tracking_runtime_shutdown_,
    td_compose_runtime_shutdown_,
    td_waits_runtime_shutdown_,
    td_cancel_runtime_shutdown_,
    td_async_runtime_shutdown_,
    td_adapter_runtime_shutdown_,
    td_channel_runtime_shutdown_,
    td_operators_runtime_shutdown_,
    td_stream_runtime_shutdown_,
    runtime_error_pools_shutdown,
    td_context_runtime_shutdown_,
    td_ownership_runtime_shutdown_,
};

#define RUNTIME_COUNT(a) (sizeof(a) / sizeof((a)[0]))

int td_runtime_init(const td_settings *s)
{
    td_settings d;
    if (s == NULL) {
        td_settings_defaults(&d);
        s = &d;
    }
    td_runtime_settings = *s;
    td_runner_observed_refresh_();
    runtime_main_thread = td_thread_self();
    int rc = TD_OK;
    for (size_t i = 0; i < RUNTIME_COUNT(runtime_modules) && rc == TD_OK; i++)
        rc = runtime_modules[i].init(s->source_pool_capacity);
    if (rc == TD_OK)
        rc = td_threads_runtime_start_(s->worker_threads);
    return rc;
}

void td_runtime_shutdown(void)
{
    for (size_t i = 0; i < RUNTIME_COUNT(runtime_shutdown_order); i++)
        runtime_shutdown_order[i]();
}

int td_is_main_thread(void) { return td_thread_self() == runtime_main_thread; }
uintptr_t td_main_thread_id(void) { return runtime_main_thread; }

int td_set_source_pool_capacity(uint32_t capacity)
{
    td_runtime_settings.source_pool_capacity = capacity;
    int rc = TD_OK;
    for (size_t i = 0; i < RUNTIME_COUNT(runtime_modules) && rc == TD_OK; i++)
        if (runtime_modules[i].set_capacity)
            rc = runtime_modules[i].set_capacity(capacity);
    return rc;
}

int td_set_runner_pool_capacity(uint32_t capacity)
{
    td_runtime_settings.runner_pool_capacity = capacity;
    return td_async_set_all_capacities_(capacity);
}
