/*
 * context.c - per-thread ambient context and flow capture (see include/tandem/context.h).
 * tcc has no thread-local storage, so the current context lives in a pthread key that
 * td_runtime_init creates once; nothing creates it lazily.
 */
#include "td_internal.h"

static pthread_key_t context_key;
static pthread_key_t context_suppress_key;

int td_context_runtime_init_(void)
{
    if (pthread_key_create(&context_key, NULL) != 0)
        return TD_E_NOMEM;
    if (pthread_key_create(&context_suppress_key, NULL) != 0)
        return TD_E_NOMEM;
    return TD_OK;
}

void td_context_runtime_shutdown_(void)
{
    pthread_key_delete(context_key);
    pthread_key_delete(context_suppress_key);
}

void *td_context_current(void) { return pthread_getspecific(context_key); }
void td_context_set(void *ctx) { pthread_setspecific(context_key, ctx); }
int td_flow_enabled(void) { return td_runtime_settings.flow; }
void td_flow_set(int on) { td_runtime_settings.flow = on ? 1 : 0; }

int td_flow_suppress(void)
{
    int was = pthread_getspecific(context_suppress_key) != NULL;
    pthread_setspecific(context_suppress_key, (void *)1);
    return was;
}

void td_flow_restore(int previous)
{
    pthread_setspecific(context_suppress_key, previous ? (void *)1 : NULL);
}

void *td_context_capture_(void)
{
    if (pthread_getspecific(context_suppress_key) != NULL)
        return NULL;
    return pthread_getspecific(context_key);
}

int td_context_flow_suppressed_(void) { return pthread_getspecific(context_suppress_key) != NULL; }

void td_context_restore_(void *ctx) { pthread_setspecific(context_key, ctx); }
