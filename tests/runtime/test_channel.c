/* Channels: FIFO, bounded back-pressure, cancellation of waiting writers and readers,
 * completion with and without a fault, wait_to_read, read_all, reader disposal.
 * SMOKE 39-40. */
#include <tandem/tandem.h>
#include "td_test.h"
#include "td_test_runtime.h"

static void bounded_fifo_and_back_pressure(void)
{
    td_channel *ch = td_channel_create_bounded(2);
    td_outcome o;
    int64_t v;
    TD_CHECK(td_channel_write(ch, 1, td_cancel_none()).source == NULL);
    TD_CHECK_EQ(TD_OK, td_channel_try_write(ch, 2));
    TD_CHECK_EQ(TD_E_PENDING, td_channel_try_write(ch, 99));     /* full */
    td_task w3 = td_channel_write(ch, 3, td_cancel_none());
    td_task w4 = td_channel_write(ch, 4, td_cancel_none());
    TD_CHECK_EQ(TD_PENDING, status_of(w3));
    TD_CHECK_EQ(TD_PENDING, status_of(w4));
    /* a read makes room for the first waiting writer only */
    td_task_i64 r = td_channel_read(ch, td_cancel_none());
    TD_CHECK(r.task.source == NULL && r.value == 1);
    TD_CHECK_EQ(TD_SUCCEEDED, status_of(w3));
    TD_CHECK_EQ(TD_PENDING, status_of(w4));
    TD_CHECK_EQ(TD_OK, td_channel_try_read(ch, &v));
    TD_CHECK_EQ(2, v);
    TD_CHECK_EQ(TD_SUCCEEDED, status_of(w4));
    TD_CHECK_EQ(TD_OK, td_task_get(w3, &o));
    TD_CHECK_EQ(TD_OK, td_task_get(w4, &o));
    TD_CHECK_EQ(TD_OK, td_channel_try_read(ch, &v));
    TD_CHECK_EQ(3, v);
    TD_CHECK_EQ(TD_OK, td_channel_try_read(ch, &v));
    TD_CHECK_EQ(4, v);
    TD_CHECK_EQ(TD_E_PENDING, td_channel_try_read(ch, &v));
    /* waiting readers are served in order */
    td_task_i64 ra = td_channel_read(ch, td_cancel_none());
    td_task_i64 rb = td_channel_read(ch, td_cancel_none());
    TD_CHECK_EQ(TD_PENDING, status_of(ra.task));
    td_channel_try_write(ch, 10);
    td_channel_try_write(ch, 11);
    TD_CHECK_EQ(TD_OK, td_task_i64_get(ra, &o));
    TD_CHECK_EQ(10, o.value);
    TD_CHECK_EQ(TD_OK, td_task_i64_get(rb, &o));
    TD_CHECK_EQ(11, o.value);
    td_channel_free(ch);
}

static void cancel_waiting_writer_and_reader(void)
{
    td_channel *ch = td_channel_create_bounded(1);
    td_cancel_source *cs = td_cancel_source_new();
    td_outcome o;
    int64_t v;
    td_channel_try_write(ch, 1);
    td_task w = td_channel_write(ch, 2, td_cancel_source_token(cs));
    td_task w3 = td_channel_write(ch, 3, td_cancel_none());
    TD_CHECK_EQ(TD_PENDING, status_of(w));
    td_cancel_source_cancel(cs);
    TD_CHECK_EQ(TD_OK, td_task_get(w, &o));
    TD_CHECK_EQ(TD_CANCELED, o.status);
    TD_CHECK(o.error.cancel == cs);
    /* the cancelled write left nothing behind: 1 then 3 */
    TD_CHECK_EQ(TD_OK, td_channel_try_read(ch, &v));
    TD_CHECK_EQ(1, v);
    TD_CHECK_EQ(TD_OK, td_task_get(w3, &o));
    TD_CHECK_EQ(TD_SUCCEEDED, o.status);
    TD_CHECK_EQ(TD_OK, td_channel_try_read(ch, &v));
    TD_CHECK_EQ(3, v);
    td_cancel_source_free(cs);

    /* a waiting reader: cancelled, and the next item goes to the next reader */
    cs = td_cancel_source_new();
    td_task_i64 r1 = td_channel_read(ch, td_cancel_source_token(cs));
    td_task_i64 r2 = td_channel_read(ch, td_cancel_none());
    td_cancel_source_cancel(cs);
    TD_CHECK_EQ(TD_OK, td_task_i64_get(r1, &o));
    TD_CHECK_EQ(TD_CANCELED, o.status);
    TD_CHECK(o.error.cancel == cs);
    TD_CHECK_EQ(TD_OK, td_channel_try_write(ch, 7));
    TD_CHECK_EQ(TD_OK, td_task_i64_get(r2, &o));
    TD_CHECK_EQ(7, o.value);
    /* a pre-cancelled token on a read that would wait */
    r1 = td_channel_read(ch, td_cancel_source_token(cs));
    TD_CHECK_EQ(TD_OK, td_task_i64_get(r1, &o));
    TD_CHECK_EQ(TD_CANCELED, o.status);
    td_cancel_source_free(cs);
    td_channel_free(ch);
}

static void completion_with_and_without_fault(void)
{
    td_outcome o;
    int64_t v;
    /* normal completion: buffered items drain, then reads fault CLOSED, wait_to_read 0 */
    td_channel *ch = td_channel_create_unbounded();
    for (int i = 0; i < 40; i++)                     /* past the first ring size */
        TD_CHECK_EQ(TD_OK, td_channel_try_write(ch, i));
    TD_CHECK_EQ(TD_OK, td_channel_complete(ch, NULL));
    TD_CHECK_EQ(TD_DONE, td_channel_complete(ch, NULL));
    TD_CHECK_EQ(TD_E_STALE, td_channel_try_write(ch, 1));
    TD_CHECK_EQ(TD_OK, td_task_get(td_channel_write(ch, 1, td_cancel_none()), &o));
    TD_CHECK_EQ(TD_FAULTED, o.status);
    TD_CHECK_EQ(TD_ERR_CHANNEL_CLOSED, o.error.code);
    for (int i = 0; i < 40; i++) {
        td_task_i64 w = td_channel_wait_to_read(ch, td_cancel_none());
        TD_CHECK(w.task.source == NULL && w.value == 1);
        TD_CHECK_EQ(TD_OK, td_channel_try_read(ch, &v));
        TD_CHECK_EQ(i, v);
    }
    TD_CHECK_EQ(TD_E_STALE, td_channel_try_read(ch, &v));
    td_task_i64 w = td_channel_wait_to_read(ch, td_cancel_none());
    TD_CHECK(w.task.source == NULL && w.value == 0);
    TD_CHECK_EQ(TD_OK, td_task_i64_get(td_channel_read(ch, td_cancel_none()), &o));
    TD_CHECK_EQ(TD_FAULTED, o.status);
    TD_CHECK_EQ(TD_ERR_CHANNEL_CLOSED, o.error.code);
    td_channel_free(ch);

    /* completion with a fault settles waiting readers, waiters and writers */
    ch = td_channel_create_bounded(1);
    td_task_i64 r = td_channel_read(ch, td_cancel_none());
    td_task_i64 wt = td_channel_wait_to_read(ch, td_cancel_none());
    TD_CHECK_EQ(TD_PENDING, status_of(r.task));
    TD_CHECK_EQ(TD_PENDING, status_of(wt.task));
    td_error fault = { TD_ERR_USER + 5, "producer broke", NULL };
    TD_CHECK_EQ(TD_OK, td_channel_complete(ch, &fault));
    TD_CHECK_EQ(TD_OK, td_task_i64_get(r, &o));
    TD_CHECK_EQ(TD_FAULTED, o.status);
    TD_CHECK_EQ(TD_ERR_USER + 5, o.error.code);
    TD_CHECK_EQ(TD_OK, td_task_i64_get(wt, &o));
    TD_CHECK_EQ(TD_FAULTED, o.status);
    TD_CHECK_EQ(TD_ERR_USER + 5, o.error.code);
    td_channel_free(ch);

    ch = td_channel_create_bounded(1);
    td_channel_try_write(ch, 1);
    td_task pw = td_channel_write(ch, 2, td_cancel_none());
    td_channel_complete(ch, NULL);
    TD_CHECK_EQ(TD_OK, td_task_get(pw, &o));
    TD_CHECK_EQ(TD_FAULTED, o.status);
    TD_CHECK_EQ(TD_ERR_CHANNEL_CLOSED, o.error.code);
    td_channel_free(ch);
}

static void wait_to_read_wakes_on_write(void)
{
    td_channel *ch = td_channel_create_unbounded();
    td_outcome o;
    int64_t v;
    td_task_i64 w1 = td_channel_wait_to_read(ch, td_cancel_none());
    td_task_i64 w2 = td_channel_wait_to_read(ch, td_cancel_none());
    TD_CHECK_EQ(TD_PENDING, status_of(w1.task));
    td_channel_try_write(ch, 5);
    TD_CHECK_EQ(TD_OK, td_task_i64_get(w1, &o));
    TD_CHECK_EQ(1, o.value);
    TD_CHECK_EQ(TD_OK, td_task_i64_get(w2, &o));
    TD_CHECK_EQ(1, o.value);
    /* waiting did not take the item */
    TD_CHECK_EQ(TD_OK, td_channel_try_read(ch, &v));
    TD_CHECK_EQ(5, v);
    td_channel_free(ch);
}

/* read_all consumer: an async method that sums and counts items until the end */
typedef struct { td_stream *s; int64_t has, n, last; } drain_frame;
static int64_t drained[16];
static void drain_step(td_runner *r, drain_frame *f)
{
    TD_BEGIN(r);
    for (;;) {
        TD_AWAIT_VALUE(r, td_stream_move_next(f->s), f->has);
        if (!f->has)
            break;
        if (f->n < 16)
            drained[f->n] = td_stream_current(f->s);
        f->n++;
    }
    TD_AWAIT(r, td_stream_dispose(f->s));
    TD_RETURN_VALUE(r, f->n);
    TD_END(r);
}
TD_METHOD_DEFINE(drain, drain_frame, drain_step);

static void read_all_and_reader_disposal(void)
{
    td_channel *ch = td_channel_create_bounded(2);
    td_outcome o;
    td_runner *r = td_runner_rent(&drain_method);
    TD_FRAME(r, drain_frame)->s = td_channel_read_all(ch);
    td_task_i64 t = td_runner_start_i64(r);
    TD_CHECK_EQ(TD_PENDING, status_of(t.task));
    td_task writes[5];
    for (int i = 0; i < 5; i++)
        writes[i] = td_channel_write(ch, 100 + i, td_cancel_none());
    for (int i = 0; i < 5; i++) {
        TD_CHECK_EQ(TD_OK, td_task_get(writes[i], &o));
        TD_CHECK_EQ(TD_SUCCEEDED, o.status);
    }
    TD_CHECK_EQ(TD_PENDING, status_of(t.task));
    td_channel_complete(ch, NULL);
    TD_CHECK_EQ(TD_OK, td_task_i64_get(t, &o));
    TD_CHECK_EQ(TD_SUCCEEDED, o.status);
    TD_CHECK_EQ(5, o.value);
    for (int i = 0; i < 5; i++)
        TD_CHECK_EQ(100 + i, drained[i]);
    td_channel_free(ch);

    /* a faulted channel: read_all ends with the fault */
    ch = td_channel_create_unbounded();
    td_channel_try_write(ch, 1);
    td_error fault = { TD_ERR_USER + 6, "broken", NULL };
    td_channel_complete(ch, &fault);
    td_stream *s = td_channel_read_all(ch);
    td_task_i64 m = td_stream_move_next(s);
    TD_CHECK(m.task.source == NULL && m.value == 1);
    TD_CHECK_EQ(TD_OK, td_task_i64_get(td_stream_move_next(s), &o));
    TD_CHECK_EQ(TD_FAULTED, o.status);
    TD_CHECK_EQ(TD_ERR_USER + 6, o.error.code);
    TD_CHECK(td_stream_dispose(s).source == NULL);
    td_channel_free(ch);

    /* disposing the read_all stream settles its pending move; the channel keeps the item */
    ch = td_channel_create_unbounded();
    s = td_channel_read_all(ch);
    m = td_stream_move_next(s);
    TD_CHECK_EQ(TD_PENDING, status_of(m.task));
    TD_CHECK(td_stream_dispose(s).source == NULL);
    TD_CHECK_EQ(TD_OK, td_task_i64_get(m, &o));
    TD_CHECK_EQ(TD_CANCELED, o.status);
    td_channel_try_write(ch, 42);
    int64_t v;
    TD_CHECK_EQ(TD_OK, td_channel_try_read(ch, &v));
    TD_CHECK_EQ(42, v);

    /* disposing the reader settles every pending read and refuses writes */
    td_task_i64 r1 = td_channel_read(ch, td_cancel_none());
    td_task_i64 r2 = td_channel_wait_to_read(ch, td_cancel_none());
    td_channel_dispose_reader(ch);
    TD_CHECK_EQ(TD_OK, td_task_i64_get(r1, &o));
    TD_CHECK_EQ(TD_CANCELED, o.status);
    TD_CHECK_EQ(TD_OK, td_task_i64_get(r2, &o));
    TD_CHECK_EQ(TD_CANCELED, o.status);
    TD_CHECK_EQ(TD_E_STALE, td_channel_try_write(ch, 1));
    td_channel_free(ch);
}

int main(void)
{
    if (td_runtime_init(NULL) != TD_OK)
        return 2;
    TD_RUN(bounded_fifo_and_back_pressure);
    TD_RUN(cancel_waiting_writer_and_reader);
    TD_RUN(completion_with_and_without_fault);
    TD_RUN(wait_to_read_wakes_on_write);
    TD_RUN(read_all_and_reader_disposal);
    td_runtime_shutdown();
    return TD_TEST_SUMMARY();
}
