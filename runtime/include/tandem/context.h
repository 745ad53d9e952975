/*
 * context.h - the ambient context (an ExecutionContext analogue) and its flow.
 *
 * Each thread has a current context pointer. With flow on (td_settings.flow), every
 * suspension of an async method captures the current context and its resumption restores
 * it, on whatever thread it resumes. With flow off, the context is whatever the resuming
 * thread has. Suppression turns capture off for a scope on the calling thread.
 */
#ifndef TANDEM_CONTEXT_H
#define TANDEM_CONTEXT_H

void *td_context_current(void);
void td_context_set(void *ctx);
int td_flow_enabled(void);
void td_flow_set(int on);
/* Suppress flow on this thread until restored; returns the previous suppression state. */
int td_flow_suppress(void);
void td_flow_restore(int previous);

#endif
