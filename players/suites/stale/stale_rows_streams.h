/*
 * stale_rows_streams.h - the staleness table's rows for stream and channel tasks: move,
 * dispose, a producer's write, the collectors, channel reads and writes (stale_table.h).
 *
 * A stream object is held by its dispose consumer and by every move task not yet consumed
 * (stream.h, td_stream_base): the STALE_HELD rows consume one of them while another still
 * holds the stream (issue 40: a dispose task consumed before the move it settled).
 */

/* A create-stream producer whose task is gate 0's: it keeps the writer in fx and ends (or
 * faults) when the gate completes. */
static td_task stale_producer(td_stream_writer *w, td_cancel_token token, void *arg)
{
    stale_fx *fx = (stale_fx *)arg;
    (void)token;
    fx->writer = w;
    return td_completion_source_task(fx->gate[0]);
}

/* A create stream with its first move pending (the producer started, waiting on gate 0). */
static td_task_i64 stale_created_move(stale_fx *fx)
{
    stale_gate(fx, 0);
    fx->stream = td_stream_create(stale_producer, fx, NULL, NULL);
    return td_stream_move_next(fx->stream);
}

/* move_next of a create stream, per the row's input state: an item written (1), the
 * producer faulted, or (held) the stream disposed under the pending move, whose dispose
 * waits for the producer. */
static int stale_move_create(stale_fx *fx)
{
    td_status st = fx->row->input;
    stale_set_typed(fx, stale_created_move(fx));
    if (st == TD_SUCCEEDED) {
        fx->extra = td_stream_writer_write(fx->writer, 7);     /* pending until the next move */
    } else if (st == TD_FAULTED) {
        stale_settle(fx->gate[0], TD_FAULTED);
    } else {
        fx->dispose = td_stream_dispose(fx->stream);
        fx->stream_disposed = 1;
    }
    return 0;
}
/* move_next of an every-update stream: the next frame's item, or disposed while pending
 * (its dispose completes inline, so the move is then the stream's last owner). */
static int stale_move_update(stale_fx *fx)
{
    int cancel = fx->row->how;
    fx->stream = td_stream_every_update(NULL, TD_TIMING_UPDATE, NULL, NULL);
    stale_set_typed(fx, td_stream_move_next(fx->stream));
    if (cancel) {
        fx->dispose = td_stream_dispose(fx->stream);
        fx->stream_disposed = 1;
    }
    return !stale_pump(fx->t.task);
}
/* move_next of a channel's read_all stream: an item written, or the stream disposed (inline,
 * as every-update's: the move is the last owner). */
static int stale_move_channel(stale_fx *fx)
{
    int cancel = fx->row->how;
    fx->chan = td_channel_create_unbounded();
    fx->stream = td_channel_read_all(fx->chan);
    stale_set_typed(fx, td_stream_move_next(fx->stream));
    if (cancel) {
        fx->dispose = td_stream_dispose(fx->stream);
        fx->stream_disposed = 1;
    } else {
        td_channel_try_write(fx->chan, 5);
    }
    return !stale_pump(fx->t.task);
}
/* The producer's write: taken by the next move (succeeded), or cancelled by the disposal
 * while the stream still waits for the producer (held). */
static int stale_writer_write(stale_fx *fx)
{
    int cancel = fx->row->how;
    td_outcome o;
    td_task_i64 first = stale_created_move(fx);
    stale_set_untyped(fx, td_stream_writer_write(fx->writer, 7));
    if (td_task_i64_get(first, &o) != TD_OK)
        return 1;
    if (cancel) {
        fx->dispose = td_stream_dispose(fx->stream);
        fx->stream_disposed = 1;
    } else {
        fx->moves[fx->nmoves++] = td_stream_move_next(fx->stream);
    }
    return !stale_pump(fx->t.task);
}
/* A dispose task completed (the producer answered) while the move it settled is still
 * unconsumed: the move holds the stream (issue 40). */
static int stale_dispose_move_held(stale_fx *fx)
{
    fx->moves[fx->nmoves++] = stale_created_move(fx);
    fx->stream_disposed = 1;
    stale_set_untyped(fx, td_stream_dispose(fx->stream));
    td_completion_source_set_result(fx->gate[0], 0);
    return !stale_pump(fx->t.task);
}

/* stream.h:116 dispose returns "the dispose task, consumed inline when already complete": an
 * every-update stream's cleanup is synchronous, so its dispose is a source-free success. */
static const stale_expect stale_dispose_inline = { TD_OK, TD_OK, TD_OK, TD_DONE, TD_OK,
                                                   "stream.h:116 consumed inline when already complete" };

/* A dispose of an every-update stream with a move in flight, that move consumed first. */
static int stale_dispose_update(stale_fx *fx)
{
    td_outcome o;
    fx->stream = td_stream_every_update(NULL, TD_TIMING_UPDATE, NULL, NULL);
    td_task_i64 m = td_stream_move_next(fx->stream);
    fx->stream_disposed = 1;
    stale_set_untyped(fx, td_stream_dispose(fx->stream));
    stale_pump(m.task);
    td_task_i64_get(m, &o);
    return !stale_pump(fx->t.task);
}

/* The collectors (typed: to_growable, else to_array) over an every-update stream cut at two
 * items, with room for them (how 0: succeeded) or for one of three (how 1: faulted,
 * TD_ERR_BUFFER_FULL); over a channel whose reader is disposed (how 2: canceled). The
 * collector owns and disposes its stream. */
static int stale_collect(stale_fx *fx)
{
    int growable = fx->row->typed, cancel = fx->row->how == 2, take = fx->row->how == 1 ? 3 : 2;
    size_t room = fx->row->how == 1 ? 1 : 4;
    td_stream *s;
    if (cancel) {
        fx->chan = td_channel_create_unbounded();
        s = td_channel_read_all(fx->chan);
    } else {
        s = td_stream_take(td_stream_every_update(NULL, TD_TIMING_UPDATE, NULL, NULL), take);
    }
    stale_set_typed(fx, growable ? td_stream_to_growable(s, &fx->growable) : td_stream_to_array(s, fx->results, room));
    if (cancel)
        td_channel_dispose_reader(fx->chan);
    return !stale_pump(fx->t.task);
}
static int stale_canceled_move(stale_fx *fx)
{
    stale_set_typed(fx, td_stream_canceled_move(stale_cancel(fx, 0)));
    return 0;
}

/* ---- channels ---------------------------------------------------------------------------- */

/* A write waiting on a full bounded channel: a read makes room, the channel completes
 * (faulted), or its token is cancelled, per the row's input state. */
static int stale_chan_write(stale_fx *fx)
{
    td_status st = fx->row->input;
    int64_t item;
    fx->chan = td_channel_create_bounded(1);
    td_channel_try_write(fx->chan, 1);
    stale_set_untyped(fx, td_channel_write(fx->chan, 2, td_cancel_source_token(stale_cancel(fx, 0))));
    if (st == TD_SUCCEEDED)
        td_channel_try_read(fx->chan, &item);
    else if (st == TD_FAULTED)
        td_channel_complete(fx->chan, NULL);
    else
        td_cancel_source_cancel(fx->cancel[0]);
    return 0;
}
/* A read (typed 1) or wait_to_read (typed 2) waiting on an empty channel: how 0 a write,
 * 1 the channel completed with a fault, 2 its token cancelled, 3 the reader disposed. */
static int stale_chan_read(stale_fx *fx)
{
    int wait = fx->row->typed == 2, how = fx->row->how;
    static const td_error fault = { TD_ERR_USER, "channel fault", NULL };
    fx->chan = td_channel_create_unbounded();
    td_cancel_token tok = td_cancel_source_token(stale_cancel(fx, 0));
    stale_set_typed(fx, wait ? td_channel_wait_to_read(fx->chan, tok) : td_channel_read(fx->chan, tok));
    if (how == 0)
        td_channel_try_write(fx->chan, 5);
    else if (how == 1)
        td_channel_complete(fx->chan, &fault);
    else if (how == 2)
        td_cancel_source_cancel(fx->cancel[0]);
    else
        td_channel_dispose_reader(fx->chan);
    return 0;
}

static const stale_row stale_rows_streams[] = {
    /* ctor, variant, final, make, typed, input, how, expect, flags */
    STALE_ROW("td_stream_move_next", "create: succeeded with an item", STALE_OK, stale_move_create, 1, STALE_OK, 0, NULL, 0),
    STALE_ROW("td_stream_move_next", "create: faulted by the producer", STALE_FAULT, stale_move_create, 1, STALE_FAULT, 0, NULL, 0),
    STALE_ROW("td_stream_move_next", "create: canceled by dispose, producer pending", STALE_CANCEL, stale_move_create, 1, STALE_CANCEL, 0, NULL, STALE_HELD),
    STALE_ROW("td_stream_move_next", "every_update: succeeded", STALE_OK, stale_move_update, 1, STALE_OK, 0, NULL, 0),
    STALE_ROW("td_stream_move_next", "every_update: canceled by dispose", STALE_CANCEL, stale_move_update, 1, STALE_CANCEL, 1, NULL, 0),
    STALE_ROW("td_stream_move_next", "channel read_all: succeeded", STALE_OK, stale_move_channel, 1, STALE_OK, 0, NULL, 0),
    STALE_ROW("td_stream_move_next", "channel read_all: canceled by dispose", STALE_CANCEL, stale_move_channel, 1, STALE_CANCEL, 1, NULL, 0),
    STALE_ROW("td_stream_writer_write", "succeeded: taken by the next move", STALE_OK, stale_writer_write, 0, STALE_OK, 0, NULL, STALE_HELD),
    STALE_ROW("td_stream_writer_write", "canceled by dispose, producer pending", STALE_CANCEL, stale_writer_write, 0, STALE_CANCEL, 1, NULL, STALE_HELD),
    STALE_ROW("td_stream_dispose", "succeeded, the move it settled unconsumed", STALE_OK, stale_dispose_move_held, 0, STALE_OK, 0, NULL, STALE_HELD),
    STALE_ROW("td_stream_dispose", "every_update: succeeded inline (a constant)", STALE_OK, stale_dispose_update, 0, STALE_OK, 0, &stale_dispose_inline, 0),
    STALE_ROW("td_stream_to_array", "succeeded", STALE_OK, stale_collect, 0, STALE_OK, 0, NULL, 0),
    STALE_ROW("td_stream_to_array", "faulted: buffer full", STALE_FAULT, stale_collect, 0, STALE_FAULT, 1, NULL, 0),
    STALE_ROW("td_stream_to_array", "canceled: channel reader disposed", STALE_CANCEL, stale_collect, 0, STALE_CANCEL, 2, NULL, 0),
    STALE_ROW("td_stream_to_growable", "succeeded", STALE_OK, stale_collect, 1, STALE_OK, 0, NULL, 0),
    STALE_ROW("td_stream_to_growable", "canceled: channel reader disposed", STALE_CANCEL, stale_collect, 1, STALE_CANCEL, 2, NULL, 0),
    STALE_ROW("td_stream_canceled_move", "canceled", STALE_CANCEL, stale_canceled_move, 1, STALE_CANCEL, 0, NULL, 0),
    STALE_ROW("td_channel_write", "succeeded: a read made room", STALE_OK, stale_chan_write, 0, STALE_OK, 0, NULL, 0),
    STALE_ROW("td_channel_write", "faulted: channel completed", STALE_FAULT, stale_chan_write, 0, STALE_FAULT, 0, NULL, 0),
    STALE_ROW("td_channel_write", "canceled by its token", STALE_CANCEL, stale_chan_write, 0, STALE_CANCEL, 0, NULL, 0),
    STALE_ROW("td_channel_read", "succeeded: a write", STALE_OK, stale_chan_read, 1, STALE_OK, 0, NULL, 0),
    STALE_ROW("td_channel_read", "faulted: channel completed with a fault", STALE_FAULT, stale_chan_read, 1, STALE_FAULT, 1, NULL, 0),
    STALE_ROW("td_channel_read", "canceled by its token", STALE_CANCEL, stale_chan_read, 1, STALE_CANCEL, 2, NULL, 0),
    STALE_ROW("td_channel_read", "canceled: reader disposed", STALE_CANCEL, stale_chan_read, 1, STALE_CANCEL, 3, NULL, 0),
    STALE_ROW("td_channel_wait_to_read", "succeeded: a write", STALE_OK, stale_chan_read, 2, STALE_OK, 0, NULL, 0),
    STALE_ROW("td_channel_wait_to_read", "faulted: channel completed with a fault", STALE_FAULT, stale_chan_read, 2, STALE_FAULT, 1, NULL, 0),
    STALE_ROW("td_channel_wait_to_read", "canceled by its token", STALE_CANCEL, stale_chan_read, 2, STALE_CANCEL, 2, NULL, 0),
    STALE_ROW("td_channel_wait_to_read", "canceled: reader disposed", STALE_CANCEL, stale_chan_read, 2, STALE_CANCEL, 3, NULL, 0),
};
