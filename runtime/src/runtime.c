/*
 * runtime.c - explicit initialisation and shutdown (see include/tandem/runtime.h).
 * Everything pooled is set up here, once; hot paths assume it has happened.
 */
#include <string.h>
#include "td_internal.h"

td_settings td_runtime_settings = {
    TD_DEFAULT_SOURCE_POOL_CAPACITY, TD_DEFAULT_RUNNER_POOL_CAPACITY, 0, 0, 0
};

td_pool td_error_source_pool;
td_pool td_auto_source_pool;

static uintptr_t runtime_main_thread;

int td_context_runtime_init_(void);
void td_context_runtime_shutdown_(void);
int td_async_set_all_capacities_(uint32_t capacity);
void td_async_runtime_shutdown_(void);
int td_stream_runtime_init_(uint32_t capacity);
void td_stream_runtime_shutdown_(void);
int td_stream_set_capacity_(uint32_t capacity);

void td_settings_defaults(td_settings *s)
{
    s->source_pool_capacity = TD_DEFAULT_SOURCE_POOL_CAPACITY;
    s->runner_pool_capacity = TD_DEFAULT_RUNNER_POOL_CAPACITY;
    s->flow = 0;
    s->tracking = 0;
    s->worker_threads = 0;
}

int td_runtime_init(const td_settings *s)
{
    td_settings d;
    if (s == NULL) {
        td_settings_defaults(&d);
        s = &d;
    }
    td_runtime_settings = *s;
    runtime_main_thread = td_thread_self();
    uint32_t cap = s->source_pool_capacity;
    int rc = td_context_runtime_init_();
    if (rc == TD_OK)
        rc = td_pool_init(&td_error_source_pool, "error", sizeof(td_source), cap);
    if (rc == TD_OK)
        rc = td_pool_init(&td_auto_source_pool, "auto-source", sizeof(td_source), cap);
    if (rc == TD_OK)
        rc = td_async_set_all_capacities_(s->runner_pool_capacity);
    /* Streams, channels, operators and adapters (stream.c chains the others). */
    if (rc == TD_OK)
        rc = td_stream_runtime_init_(cap);
    if (rc == TD_OK)
        rc = td_cancel_runtime_init_(cap);
    if (rc == TD_OK)
        rc = td_waits_runtime_init_(cap);
    if (rc == TD_OK)
        rc = td_compose_runtime_init_(cap);
    if (rc == TD_OK)
        rc = td_loop_runtime_init_();
    if (rc == TD_OK)
        rc = td_shared_runtime_init_(cap);
    if (rc == TD_OK)
        rc = td_forget_runtime_init_(cap);
    if (rc == TD_OK)
        rc = td_tracking_runtime_init_();
    if (rc == TD_OK)
        rc = td_threads_runtime_init_(cap);
    /* Workers start last: a job may touch any pool or the main loop. */
    if (rc == TD_OK)
        rc = td_threads_runtime_start_(s->worker_threads);
    return rc;
}

void td_runtime_shutdown(void)
{
    /* Workers stop first (running what is queued) while everything they use exists. */
    td_threads_runtime_shutdown_();
    td_loop_runtime_shutdown_();
    /* After the loop: retiring it may complete forgotten or shared tasks. */
    td_forget_runtime_shutdown_();
    td_shared_runtime_shutdown_();
    td_tracking_runtime_shutdown_();
    td_compose_runtime_shutdown_();
    td_waits_runtime_shutdown_();
    td_cancel_runtime_shutdown_();
    td_async_runtime_shutdown_();
    td_stream_runtime_shutdown_();
    td_pool_destroy(&td_auto_source_pool);
    td_pool_destroy(&td_error_source_pool);
    td_context_runtime_shutdown_();
}

int td_is_main_thread(void) { return td_thread_self() == runtime_main_thread; }
uintptr_t td_main_thread_id(void) { return runtime_main_thread; }

int td_set_source_pool_capacity(uint32_t capacity)
{
    td_runtime_settings.source_pool_capacity = capacity;
    int rc = td_pool_set_capacity(&td_error_source_pool, capacity);
    if (rc == TD_OK)
        rc = td_pool_set_capacity(&td_auto_source_pool, capacity);
    if (rc == TD_OK)
        rc = td_stream_set_capacity_(capacity);
    if (rc == TD_OK)
        rc = td_cancel_set_capacity_(capacity);
    if (rc == TD_OK)
        rc = td_waits_set_capacity_(capacity);
    if (rc == TD_OK)
        rc = td_compose_set_capacity_(capacity);
    if (rc == TD_OK)
        rc = td_threads_set_capacity_(capacity);
    if (rc == TD_OK)
        rc = td_shared_set_capacity_(capacity);
    if (rc == TD_OK)
        rc = td_forget_set_capacity_(capacity);
    return rc;
}

int td_set_runner_pool_capacity(uint32_t capacity)
{
    td_runtime_settings.runner_pool_capacity = capacity;
    return td_async_set_all_capacities_(capacity);
}
