/*
 * stream.h - async streams (async enumerators) and the stream sources.
 *
 * A stream is an object with three operations (a vtable):
 *   - move_next: a typed task whose value is 1 when `current` holds the next item and 0
 *     at the end; a fault or cancellation ends the iteration with that outcome;
 *   - current: the item of the last move_next that completed with 1;
 *   - dispose: a task that completes once the stream's cleanup has run.
 * One consumer drives a stream, one move_next at a time, and disposes it exactly once
 * (also after the end); the stream object goes back to its pool when the dispose task and
 * every move task have been consumed, so neither may be used afterwards.
 * A move_next that can answer at once returns a completed task (no source), so a consumer
 * that loops over synchronous items never suspends and never grows the stack.
 *
 * Disposal and cleanup order (the documented order, for every stream of this runtime):
 *   1. a pending move_next settles CANCELED (its error names the stream's cancel source);
 *   2. work the stream is waiting on is cancelled (a producer's token, an operator's
 *      awaited task) and the stream waits for it to finish;
 *   3. the upstream (for operators) is disposed and awaited, so upstream cleanups run
 *      before downstream ones: a chain cleans up from its source outwards;
 *   4. the stream's own cleanup callback runs, once;
 *   5. the dispose task completes.
 * A pending move_next settled by dispose and the dispose itself share this one cleanup.
 *
 * Threads: streams are driven on one thread (normally the loop's), except that an
 * every-update stream may be disposed from any thread.
 */
#ifndef TANDEM_STREAM_H
#define TANDEM_STREAM_H

#include <stdint.h>
#include "task.h"
#include "cancel.h"
#include "loop.h"
#include "pool.h"

typedef struct td_stream td_stream;

typedef struct td_stream_vtable {
    td_task_i64 (*move_next)(td_stream *s);
    int64_t (*current)(td_stream *s);
    td_task (*dispose)(td_stream *s);
    const char *name;
} td_stream_vtable;

struct td_stream {
    const td_stream_vtable *vt;
};

static inline td_task_i64 td_stream_move_next(td_stream *s) { return s->vt->move_next(s); }
static inline int64_t td_stream_current(td_stream *s) { return s->vt->current(s); }
static inline td_task td_stream_dispose(td_stream *s) { return s->vt->dispose(s); }

/* ---- stream sources ------------------------------------------------------------- */

/* A stream with no items (a static object: nothing to allocate or dispose). */
td_stream *td_stream_empty(void);
/* One item. */
td_stream *td_stream_return(int64_t value);
/* start, start + 1, ... (count items). */
td_stream *td_stream_range(int64_t start, int64_t count);
/* `value`, count times (count < 0: without end). */
td_stream *td_stream_repeat(int64_t value, int64_t count);

/* Create-from-writer. The producer is an async function started by the first move_next;
 * it writes items with td_stream_writer_write and awaits each write: a write completes
 * when the consumer asks for the next item (back-pressure: one item in flight). The
 * producer's task ending ends the stream: success is the end (0), a fault or cancellation
 * is the stream's outcome, and every later move_next reports it again. `token` is cancelled when the stream is disposed; a pending
 * write then completes CANCELED, and so does every later write.
 * `cleanup` (may be NULL) runs once at disposal, after the producer has finished. */
typedef struct td_stream_writer td_stream_writer;
typedef td_task (*td_stream_producer_fn)(td_stream_writer *w, td_cancel_token token, void *arg);
td_stream *td_stream_create(td_stream_producer_fn producer, void *arg,
                            td_continuation_fn cleanup, void *cleanup_arg);
td_task td_stream_writer_write(td_stream_writer *w, int64_t item);

/* Every-update: yields once per frame at `timing` of `loop` (NULL: the main loop); the item
 * is the frame number. It starts on demand (no loop item before the first move_next); a
 * move_next made during the timing's own pass (re-entrantly, from the continuation of the
 * previous item) completes in a later frame. May be disposed from any thread; loop
 * retirement settles a pending move_next CANCELED. `cleanup` (may be NULL) runs once. */
td_stream *td_stream_every_update(td_loop *loop, td_timing timing,
                                  td_continuation_fn cleanup, void *cleanup_arg);

/* ---- for stream implementations (operators, channels, custom streams) ------------- */

/* The common part of a pooled stream. Owners: the dispose consumer, each move task not yet
 * consumed, and whatever the kind adds (a loop item); the object goes back to `pool` when
 * the last owner is gone. `next` is the pending move's source (recycled at each
 * consumption), `done` the dispose task's source. */
typedef struct td_stream_base {
    td_stream stream;                /* first member */
    td_source next;
    td_source done;
    volatile uint32_t owners;
    uint32_t next_token;
    uint32_t moving;                 /* a move task is pending (not settled) */
    uint32_t disposed;               /* dispose was called */
    td_pool *pool;
    int64_t current;
} td_stream_base;

/* Rent a base of pool->object_size bytes (kind fields after the base are as returned). */
td_stream_base *td_stream_base_rent(td_pool *pool, const td_stream_vtable *vt);
void td_stream_base_add_owner(td_stream_base *b);
void td_stream_base_drop_owner(td_stream_base *b);
/* Start a pending move: the caller later settles it. */
td_task_i64 td_stream_base_begin_move(td_stream_base *b);
/* Settle the pending move (no-op when none). `value` is 1 (item in `current`) or 0. */
void td_stream_base_settle(td_stream_base *b, td_status st, int64_t value, const td_error *err);
/* What move_next returns for `t`: a completed success is consumed and returned inline. */
td_task_i64 td_stream_base_move_result(td_stream_base *b, td_task_i64 t);
/* Complete the dispose task (after cleanup). */
void td_stream_base_disposed(td_stream_base *b);
/* What dispose returns: the dispose task, consumed inline when already complete. */
td_task td_stream_base_dispose_result(td_stream_base *b);
/* A move task settled CANCELED by `by` (for move_next after dispose). */
td_task_i64 td_stream_canceled_move(td_cancel_source *by);

#endif /* TANDEM_STREAM_H */
