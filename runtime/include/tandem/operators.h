/*
 * operators.h - stream operators: where, select (plain and await forms), take, finally,
 * and the collectors to_array / to_growable.
 *
 * An operator is a stream over an upstream stream that it owns: disposing the operator
 * disposes the upstream (stream.h gives the cleanup order: the upstream's cleanups run
 * before the operator's). Operators run sequentially and keep order: one upstream item is
 * evaluated at a time, and an await-form predicate or selector is awaited before the next
 * upstream item is requested.
 * Upstream items and awaited tasks that complete synchronously are taken in a loop, never
 * through nested continuations, so any number of synchronous rejections in a row runs in
 * constant stack depth.
 * The await forms receive a cancel token that the operator cancels when it is disposed;
 * disposal waits for the awaited task to finish (honouring the token or not).
 * Operators are driven and disposed on one thread.
 */
#ifndef TANDEM_OPERATORS_H
#define TANDEM_OPERATORS_H

#include <stddef.h>
#include <stdint.h>
#include "stream.h"

/* Error code of to_array when the stream has more items than the caller's storage
 * (the streams area uses fault codes 40-49). */
enum { TD_ERR_BUFFER_FULL = 40 };

typedef int (*td_where_fn)(void *arg, int64_t item);
typedef int64_t (*td_select_fn)(void *arg, int64_t item);
/* Await forms: the task's value is the verdict (where: non-zero keeps) or the new item. */
typedef td_task_i64 (*td_await_fn)(void *arg, int64_t item, td_cancel_token cancel);

/* Each returns NULL when allocation fails (the upstream is then still the caller's). */
td_stream *td_stream_where(td_stream *up, td_where_fn pred, void *arg);
td_stream *td_stream_where_await(td_stream *up, td_await_fn pred, void *arg);
td_stream *td_stream_select(td_stream *up, td_select_fn fn, void *arg);
td_stream *td_stream_select_await(td_stream *up, td_await_fn fn, void *arg);
/* The first `count` items; the upstream is not asked for more. */
td_stream *td_stream_take(td_stream *up, int64_t count);
/* Items unchanged; `cleanup(arg)` runs once at disposal, after the upstream's cleanups. */
td_stream *td_stream_finally(td_stream *up, td_continuation_fn cleanup, void *arg);

/* Collectors consume the stream: they iterate it to its end, dispose it, and complete
 * with the number of items (or the stream's fault or cancellation, after disposing). */
/* Into caller storage (valid until the task completes); more than `capacity` items is a
 * TD_ERR_BUFFER_FULL fault (the first `capacity` items are stored). */
td_task_i64 td_stream_to_array(td_stream *s, int64_t *items, size_t capacity);

/* A growable array owned by the caller; reuse one across calls to stop allocating. */
typedef struct td_i64_array {
    int64_t *items;
    size_t count;
    size_t capacity;
} td_i64_array;
void td_i64_array_free(td_i64_array *a);
/* Appends to `out` (growing it); the task's value is the number appended. */
td_task_i64 td_stream_to_growable(td_stream *s, td_i64_array *out);

#endif /* TANDEM_OPERATORS_H */
