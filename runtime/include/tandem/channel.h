/*
 * channel.h - bounded and unbounded channels of int64 items.
 *
 * A channel is a FIFO between writers and readers, on any threads. Bounded: at most
 * `capacity` buffered items; a write to a full channel returns a pending task that
 * completes when a read makes room (back-pressure), in FIFO order of the waiting writers.
 * Unbounded: writes always succeed at once (the ring grows; it never shrinks, so a
 * channel reused at the same depth stops allocating).
 * A read with nothing buffered returns a pending task completed by the next write;
 * waiting readers are served in FIFO order. A cancel token cancels a waiting read or write
 * (the task completes CANCELED with that token; a cancelled write left nothing behind).
 * Completion: td_channel_complete ends the channel; buffered items can still be read, after
 * which reads fault with the completion's error (TD_ERR_CHANNEL_CLOSED for a normal
 * completion) and wait_to_read answers 0 (or the fault). Waiting writers and later writes
 * fault with TD_ERR_CHANNEL_CLOSED.
 * Disposing the reader (td_channel_dispose_reader) drops buffered items, settles every
 * waiting read and wait_to_read CANCELED and closes the channel for writers.
 * Free a channel only when no operation is pending on it.
 */
#ifndef TANDEM_CHANNEL_H
#define TANDEM_CHANNEL_H

#include <stdint.h>
#include "task.h"
#include "cancel.h"
#include "stream.h"

typedef struct td_channel td_channel;

td_channel *td_channel_create_bounded(uint32_t capacity);     /* capacity >= 1 */
td_channel *td_channel_create_unbounded(void);
void td_channel_free(td_channel *ch);

/* TD_OK, TD_E_PENDING (bounded and full), or TD_E_STALE (completed / reader disposed). */
int td_channel_try_write(td_channel *ch, int64_t item);
/* Completes when the item is in the channel (or handed to a reader). */
td_task td_channel_write(td_channel *ch, int64_t item, td_cancel_token cancel);
/* TD_OK with the item, TD_E_PENDING when empty, TD_E_STALE when completed and drained. */
int td_channel_try_read(td_channel *ch, int64_t *out);
/* The next item. */
td_task_i64 td_channel_read(td_channel *ch, td_cancel_token cancel);
/* 1 when an item can be read, 0 when the channel completed normally and is drained. */
td_task_i64 td_channel_wait_to_read(td_channel *ch, td_cancel_token cancel);
/* End the channel; `fault` NULL for a normal completion. TD_OK, or TD_DONE if already. */
int td_channel_complete(td_channel *ch, const td_error *fault);
/* Settle waiting reads CANCELED, drop the buffer, refuse further writes. */
void td_channel_dispose_reader(td_channel *ch);
/* Every item until the channel completes, as a stream (a completion fault is the
 * stream's fault). Disposing the stream settles its pending move CANCELED. */
td_stream *td_channel_read_all(td_channel *ch);

#endif /* TANDEM_CHANNEL_H */
