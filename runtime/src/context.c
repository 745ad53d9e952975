/*
 * context.c - per-thread ambient context and flow capture (see include/tandem/context.h).
 * The two per-thread pointers are TD_TLS slots (runtime/port): __thread under clang, pthread
 * keys under tcc (no thread-local storage there) that td_runtime_init creates once;
 * nothing creates them lazily.
 */
#include "td_internal.h"

TD_TLS_DEFINE(context_current);
TD_TLS_DEFINE(context_suppressed);     /* non-NULL: flow suppressed on this thread */

int td_context_runtime_init_(void)
{
    if (TD_TLS_CREATE(context_current) != 0)
        return TD_E_NOMEM;
    if (TD_TLS_CREATE(context_suppressed) != 0)
        return TD_E_NOMEM;
    return TD_OK;
}

void td_context_runtime_shutdown_(void)
{
    TD_TLS_DELETE(context_current);
    TD_TLS_DELETE(context_suppressed);
}

void *td_context_current(void) { return TD_TLS_GET(context_current); }
void td_context_set(void *ctx) { TD_TLS_SET(context_current, ctx); }
int td_flow_enabled(void) { return td_runtime_settings.flow; }
void td_flow_set(int on)
{
    td_runtime_settings.flow = on ? 1 : 0;
    td_runner_observed_refresh_();
    td_loop_push_markers_refresh_();    /* the inline frame waits push only with flow off */
}

int td_flow_suppress(void)
{
    int was = TD_TLS_GET(context_suppressed) != NULL;
    TD_TLS_SET(context_suppressed, (void *)1);
    return was;
}

void td_flow_restore(int previous)
{
    TD_TLS_SET(context_suppressed, previous ? (void *)1 : NULL);
}

void *td_context_capture_(void)
{
    if (TD_TLS_GET(context_suppressed) != NULL)
        return NULL;
    return TD_TLS_GET(context_current);
}

int td_context_flow_suppressed_(void) { return TD_TLS_GET(context_suppressed) != NULL; }

void td_context_restore_(void *ctx) { TD_TLS_SET(context_current, ctx); }
