/* Stream operators: where/select (plain and await), take, finally, to_array/to_growable;
 * order, sequential evaluation, constant stack over 100,000 synchronous rejections
 * (SMOKE 41), disposal of a chain with a pending await and its cleanup order (SMOKE 42). */
#include <tandem/tandem.h>
#include "td_test.h"
#include "td_test_runtime.h"

static td_loop *fresh_loop(void) { return fresh_loop_with(NULL, 1); }

enum { EV_P_CLEANUP = 1000, EV_SRC_CLEANUP, EV_A, EV_B, EV_PRED_CANCELED };
static int64_t ev[64];
static int ev_len;
static void ev_log(int64_t e) { if (ev_len < 64) ev[ev_len++] = e; }
static void log_marker(void *arg) { ev_log((int64_t)(intptr_t)arg); }

static int is_even(void *arg, int64_t x) { (void)arg; return (x & 1) == 0; }
static int64_t times_ten(void *arg, int64_t x) { (void)arg; return x * 10; }

static void where_select_keep_order(void)
{
    int64_t out[16];
    td_stream *s = td_stream_select(td_stream_where(td_stream_range(0, 10), is_even, NULL), times_ten, NULL);
    td_task_i64 t = td_stream_to_array(s, out, 16);
    TD_CHECK(t.task.source == NULL);          /* synchronous all the way */
    TD_CHECK_EQ(5, t.value);
    for (int i = 0; i < 5; i++)
        TD_CHECK_EQ(i * 20, out[i]);
}

/* Await forms: the verdict / new item arrives a frame later; only one is ever in flight. */
static int in_flight, max_in_flight;
typedef struct { int64_t x; int select; } judge_frame;
static void judge_step(td_runner *r, judge_frame *f)
{
    TD_BEGIN(r);
    in_flight++;
    if (in_flight > max_in_flight)
        max_in_flight = in_flight;
    TD_AWAIT(r, td_next_frame(TD_TIMING_UPDATE));
    in_flight--;
    TD_RETURN_VALUE(r, f->select ? f->x + 100 : (f->x % 3 == 0));
    TD_END(r);
}
TD_METHOD_DEFINE(judge, judge_frame, judge_step);

static td_task_i64 judge_async(void *arg, int64_t x, td_cancel_token token)
{
    (void)token;
    td_runner *r = td_runner_rent(&judge_method);
    TD_FRAME(r, judge_frame)->x = x;
    TD_FRAME(r, judge_frame)->select = arg != NULL;
    return td_runner_start_i64(r);
}

static void await_forms_sequential_in_order(void)
{
    td_loop *loop = fresh_loop();
    int64_t out[16];
    in_flight = max_in_flight = 0;
    td_stream *s = td_stream_select_await(td_stream_where_await(td_stream_range(1, 9), judge_async, NULL),
                                          judge_async, (void *)1);
    td_task_i64 t = td_stream_to_array(s, out, 16);
    for (int i = 0; i < 40 && status_of(t.task) == TD_PENDING; i++)
        td_loop_run_frame(loop);
    td_outcome o;
    TD_CHECK_EQ(TD_OK, td_task_i64_get(t, &o));
    TD_CHECK_EQ(TD_SUCCEEDED, o.status);
    TD_CHECK_EQ(3, o.value);                  /* 3, 6, 9 */
    TD_CHECK_EQ(103, out[0]);
    TD_CHECK_EQ(106, out[1]);
    TD_CHECK_EQ(109, out[2]);
    TD_CHECK_EQ(1, max_in_flight);            /* sequential */
    td_loop_destroy(loop);
}

/* ---- 100,000 synchronous rejections in constant stack ----------------------------------- */

#define REJECTIONS 100000
static uintptr_t stack_first, stack_low, stack_high;
static int64_t judged;
static void note_stack(void)
{
    volatile char here = 0;
    uintptr_t a = (uintptr_t)&here;
    if (judged++ == 0)
        stack_first = stack_low = stack_high = a;
    if (a < stack_low)
        stack_low = a;
    if (a > stack_high)
        stack_high = a;
}
static int reject_but_last(void *arg, int64_t x) { (void)arg; note_stack(); return x == REJECTIONS; }
static td_task_i64 reject_but_last_await(void *arg, int64_t x, td_cancel_token token)
{
    (void)arg;
    (void)token;
    note_stack();
    return td_from_result(x == REJECTIONS);
}

/* A producer that writes 0..REJECTIONS (each write completes synchronously). */
typedef struct { td_stream_writer *w; int64_t i; } many_frame;
static void many_step(td_runner *r, many_frame *f)
{
    TD_BEGIN(r);
    for (f->i = 0; f->i <= REJECTIONS; f->i++)
        TD_AWAIT(r, td_stream_writer_write(f->w, f->i));
    TD_END(r);
}
TD_METHOD_DEFINE(many, many_frame, many_step);
static td_task start_many(td_stream_writer *w, td_cancel_token token, void *arg)
{
    (void)token;
    (void)arg;
    td_runner *r = td_runner_rent(&many_method);
    TD_FRAME(r, many_frame)->w = w;
    return td_runner_start(r);
}

static void rejections_do_not_grow_the_stack(void)
{
    for (int variant = 0; variant < 4; variant++) {
        judged = 0;
        td_stream *up = variant < 2 ? td_stream_range(0, REJECTIONS + 1)
                                    : td_stream_create(start_many, NULL, NULL, NULL);
        td_stream *s = (variant & 1) ? td_stream_where_await(up, reject_but_last_await, NULL)
                                     : td_stream_where(up, reject_but_last, NULL);
        int64_t out[2] = { -1, -1 };
        td_task_i64 t = td_stream_to_array(s, out, 2);
        TD_CHECK(t.task.source == NULL);
        TD_CHECK_EQ(1, t.value);
        TD_CHECK_EQ(REJECTIONS, out[0]);
        TD_CHECK_EQ(REJECTIONS + 1, judged);
        /* the deepest and shallowest predicate frames are where the first one was */
        TD_CHECK(stack_high - stack_low < 256);
        TD_CHECK_EQ(stack_first, stack_low);
    }
}

/* ---- take, growable, overflow ---------------------------------------------------------- */

static int64_t pulled;
static int64_t count_pulls(void *arg, int64_t x) { (void)arg; pulled++; return x; }

static void take_and_collectors(void)
{
    pulled = 0;
    td_i64_array arr = { NULL, 0, 0 };
    td_task_i64 t = td_stream_to_growable(td_stream_take(td_stream_select(td_stream_range(1, 1000), count_pulls, NULL), 3), &arr);
    TD_CHECK(t.task.source == NULL);
    TD_CHECK_EQ(3, t.value);
    TD_CHECK_EQ(3, pulled);                   /* take asks the upstream no further */
    TD_CHECK_EQ(3, (int64_t)arr.count);
    TD_CHECK(arr.items[0] == 1 && arr.items[1] == 2 && arr.items[2] == 3);
    /* growable: appends, and grows past its first capacity */
    t = td_stream_to_growable(td_stream_range(0, 100), &arr);
    TD_CHECK_EQ(100, t.value);
    TD_CHECK_EQ(103, (int64_t)arr.count);
    for (int i = 0; i < 100; i++)
        TD_CHECK_EQ(i, arr.items[3 + i]);
    td_i64_array_free(&arr);

    /* more items than storage: a BUFFER_FULL fault, and the stream is still disposed */
    int64_t small[4];
    ev_len = 0;
    td_stream *s = td_stream_finally(td_stream_range(0, 10), log_marker, (void *)(intptr_t)EV_A);
    td_outcome o;
    TD_CHECK_EQ(TD_OK, td_task_i64_get(td_stream_to_array(s, small, 4), &o));
    TD_CHECK_EQ(TD_FAULTED, o.status);
    TD_CHECK_EQ(TD_ERR_BUFFER_FULL, o.error.code);
    TD_CHECK_EQ(3, small[3]);
    TD_CHECK_EQ(1, ev_len);
    TD_CHECK_EQ(EV_A, ev[0]);
}

/* ---- SMOKE 42: disposing a chain with a pending await ------------------------------------ */

typedef struct { td_stream_writer *w; int64_t i; } src_frame;
static void src_step(td_runner *r, src_frame *f)
{
    TD_BEGIN(r);
    for (f->i = 1; f->i <= 5; f->i++) {
        TD_AWAIT_OUTCOME(r, td_task_i64_of(td_stream_writer_write(f->w, f->i)));
        if (r->last.status != TD_SUCCEEDED) {
            ev_log(EV_P_CLEANUP);
            TD_RETURN(r);
        }
    }
    TD_END(r);
}
TD_METHOD_DEFINE(src, src_frame, src_step);
static td_task start_src(td_stream_writer *w, td_cancel_token token, void *arg)
{
    (void)token;
    (void)arg;
    td_runner *r = td_runner_rent(&src_method);
    TD_FRAME(r, src_frame)->w = w;
    return td_runner_start(r);
}

static int immediate_cancel;
/* A predicate that waits 1000 frames for its verdict, honouring the operator's token;
 * it logs its own cancellation (the await the operator was pending on). */
typedef struct { td_cancel_token token; } slow_frame;
static void slow_step(td_runner *r, slow_frame *f)
{
    TD_BEGIN(r);
    {
        td_wait_options o = td_wait_defaults();
        o.cancel = f->token;
        o.cancel_immediately = immediate_cancel;
        TD_AWAIT_OUTCOME(r, td_task_i64_of(td_delay_frame_ex(1000, &o)));
    }
    if (r->last.status == TD_CANCELED && r->last.error.cancel == f->token.source) {
        ev_log(EV_PRED_CANCELED);
        TD_CANCEL(r, f->token.source);
    }
    TD_RETURN_VALUE(r, 1);
    TD_END(r);
}
TD_METHOD_DEFINE(slow, slow_frame, slow_step);
static td_task_i64 slow_pred(void *arg, int64_t x, td_cancel_token token)
{
    (void)arg;
    (void)x;
    td_runner *r = td_runner_rent(&slow_method);
    TD_FRAME(r, slow_frame)->token = token;
    return td_runner_start_i64(r);
}

static void dispose_chain_with_pending_await(void)
{
    for (immediate_cancel = 1; immediate_cancel >= 0; immediate_cancel--) {
        td_loop *loop = fresh_loop();
        ev_len = 0;
        td_stream *src = td_stream_create(start_src, NULL, log_marker, (void *)(intptr_t)EV_SRC_CLEANUP);
        td_stream *chain = td_stream_finally(
            td_stream_where_await(td_stream_finally(src, log_marker, (void *)(intptr_t)EV_A), slow_pred, NULL),
            log_marker, (void *)(intptr_t)EV_B);
        td_task_i64 m = td_stream_move_next(chain);
        TD_CHECK_EQ(TD_PENDING, status_of(m.task));
        td_loop_run_frame(loop);
        TD_CHECK_EQ(TD_PENDING, status_of(m.task));
        td_task d = td_stream_dispose(chain);
        /* the pending move settles canceled and the predicate's token is cancelled now */
        td_outcome o;
        TD_CHECK_EQ(TD_OK, td_task_i64_get(m, &o));
        TD_CHECK_EQ(TD_CANCELED, o.status);
        if (!immediate_cancel) {
            /* the wait observes its token at the next frame: nothing is cleaned up yet */
            TD_CHECK_EQ(TD_PENDING, status_of(d));
            TD_CHECK_EQ(0, ev_len);
            for (int i = 0; i < 3 && status_of(d) == TD_PENDING; i++)
                td_loop_run_frame(loop);
        }
        TD_CHECK_EQ(TD_SUCCEEDED, status_of(d));
        /* upstream cleanups first, in order from the source outwards, each once */
        int64_t want[] = { EV_PRED_CANCELED, EV_P_CLEANUP, EV_SRC_CLEANUP, EV_A, EV_B };
        TD_CHECK_EQ(5, ev_len);
        for (int i = 0; i < 5; i++)
            TD_CHECK_EQ(want[i], ev[i]);
        TD_CHECK_EQ(TD_OK, td_task_get(d, &o));
        td_loop_run_frame(loop);
        TD_CHECK_EQ(5, ev_len);
        td_loop_destroy(loop);
    }
}

static void dispose_chain_pending_on_upstream(void)
{
    /* the pending await is the upstream's move (every-update): disposing the upstream
     * settles it; cleanups: every-update's, then the operator's */
    td_loop *loop = fresh_loop();
    ev_len = 0;
    td_stream *chain = td_stream_finally(
        td_stream_select(td_stream_every_update(loop, TD_TIMING_UPDATE, log_marker, (void *)(intptr_t)EV_SRC_CLEANUP),
                         times_ten, NULL),
        log_marker, (void *)(intptr_t)EV_B);
    td_task_i64 m = td_stream_move_next(chain);
    td_loop_run_frame(loop);
    td_outcome o;
    TD_CHECK_EQ(TD_OK, td_task_i64_get(m, &o));
    TD_CHECK_EQ(TD_SUCCEEDED, o.status);
    TD_CHECK_EQ(10 * (int64_t)td_loop_frame(loop), td_stream_current(chain));
    m = td_stream_move_next(chain);
    TD_CHECK_EQ(TD_PENDING, status_of(m.task));
    td_task d = td_stream_dispose(chain);
    TD_CHECK(d.source == NULL);
    TD_CHECK_EQ(TD_OK, td_task_i64_get(m, &o));
    TD_CHECK_EQ(TD_CANCELED, o.status);
    TD_CHECK_EQ(2, ev_len);
    TD_CHECK_EQ(EV_SRC_CLEANUP, ev[0]);
    TD_CHECK_EQ(EV_B, ev[1]);
    td_loop_run_frame(loop);
    td_loop_destroy(loop);
}

static td_task_i64 fail_on_two(void *arg, int64_t x, td_cancel_token token)
{
    (void)arg;
    (void)token;
    return x == 2 ? td_from_error_i64(TD_ERR_USER + 42, "selector failed") : td_from_result(x);
}

static void selector_fault_ends_the_stream(void)
{
    /* a fault from an await-form selector is the stream's outcome; cleanup still runs once */
    td_outcome o;
    int64_t out[8] = { 0 };
    ev_len = 0;
    td_stream *s = td_stream_finally(td_stream_range(0, 5), log_marker, (void *)(intptr_t)EV_A);
    td_task_i64 t = td_stream_to_array(td_stream_select_await(s, fail_on_two, NULL), out, 8);
    TD_CHECK_EQ(TD_OK, td_task_i64_get(t, &o));
    TD_CHECK_EQ(TD_FAULTED, o.status);
    TD_CHECK_EQ(TD_ERR_USER + 42, o.error.code);
    TD_CHECK(out[0] == 0 && out[1] == 1);
    TD_CHECK_EQ(1, ev_len);
    TD_CHECK_EQ(EV_A, ev[0]);
}

int main(void)
{
    if (td_runtime_init(NULL) != TD_OK)
        return 2;
    TD_RUN(where_select_keep_order);
    TD_RUN(await_forms_sequential_in_order);
    TD_RUN(rejections_do_not_grow_the_stack);
    TD_RUN(take_and_collectors);
    TD_RUN(dispose_chain_with_pending_await);
    TD_RUN(dispose_chain_pending_on_upstream);
    TD_RUN(selector_fault_ends_the_stream);
    td_runtime_shutdown();
    return TD_TEST_SUMMARY();
}
