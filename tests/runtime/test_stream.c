/* Async streams: simple sources, create-from-writer (back-pressure, cleanup order, disposal
 * of a pending move), every-update (on demand, re-entrant passes, retirement). SMOKE 35-37. */
#include <tandem/tandem.h>
#include "td_test.h"
#include "td_test_runtime.h"

static td_loop *fresh_loop(void) { return fresh_loop_with(NULL, 1); }

/* event log: items are logged as themselves, markers as >= 1000 */
enum { EV_P_END = 1000, EV_P_CLEANUP, EV_CLEANUP, EV_DISPOSED, EV_TOKEN_CANCELED };
static int64_t ev[256];
static int ev_len;
static void ev_log(int64_t e) { if (ev_len < 256) ev[ev_len++] = e; }
static void ev_cleanup(void *arg) { (void)arg; ev_log(EV_CLEANUP); }

/* ---- simple sources ---------------------------------------------------------------- */

/* Drain a synchronous stream: every move must complete inline. Returns the count or -1. */
static int drain_sync(td_stream *s, int64_t *out, int max)
{
    int n = 0;
    for (int guard = 0; guard < 10000; guard++) {
        td_task_i64 t = td_stream_move_next(s);
        if (t.task.source != NULL)
            return -1;
        if (t.value == 0)
            return n;
        if (n < max)
            out[n] = td_stream_current(s);
        n++;
    }
    return -1;
}

static void simple_sources(void)
{
    int64_t got[16];
    td_stream *e = td_stream_empty();
    TD_CHECK_EQ(0, drain_sync(e, got, 16));
    TD_CHECK(td_stream_dispose(e).source == NULL);

    td_stream *r = td_stream_return(77);
    TD_CHECK_EQ(1, drain_sync(r, got, 16));
    TD_CHECK_EQ(77, got[0]);
    TD_CHECK(td_stream_dispose(r).source == NULL);

    td_stream *g = td_stream_range(5, 4);
    TD_CHECK_EQ(4, drain_sync(g, got, 16));
    for (int i = 0; i < 4; i++)
        TD_CHECK_EQ(5 + i, got[i]);
    TD_CHECK(td_stream_dispose(g).source == NULL);
    /* Disposal returned the object to its pool: the next stream reuses it. */
    td_stream *g2 = td_stream_range(0, 0);
    TD_CHECK(g2 == g);
    TD_CHECK_EQ(0, drain_sync(g2, got, 16));
    td_stream_dispose(g2);

    td_stream *p = td_stream_repeat(9, 3);
    TD_CHECK_EQ(3, drain_sync(p, got, 16));
    TD_CHECK(got[0] == 9 && got[1] == 9 && got[2] == 9);
    td_stream_dispose(p);
}

/* ---- create-from-writer ---------------------------------------------------------------- */

static int produced, requested;

typedef struct {
    td_stream_writer *w;
    td_cancel_token token;
    int64_t i, n;
    int64_t gate_at;                 /* await `gate` before writing this item (0: never) */
    int64_t frame_at;                /* await a next frame before writing this item */
    td_task_i64 gate;
} prod_frame;

static void prod_step(td_runner *r, prod_frame *f)
{
    TD_BEGIN(r);
    for (f->i = 1; f->i <= f->n; f->i++) {
        if (f->i == f->gate_at)
            TD_AWAIT_OUTCOME(r, f->gate);
        if (f->i == f->frame_at)
            TD_AWAIT(r, td_next_frame(TD_TIMING_UPDATE));
        produced++;
        /* back-pressure: the item is written only once the consumer asked for it */
        if (produced != requested)
            TD_FAIL(r, TD_ERR_USER + 1, "wrote ahead of the consumer");
        TD_AWAIT_OUTCOME(r, td_task_i64_of(td_stream_writer_write(f->w, f->i)));
        if (r->last.status != TD_SUCCEEDED) {
            if (td_cancel_is_requested(f->token))
                ev_log(EV_TOKEN_CANCELED);
            ev_log(EV_P_CLEANUP);
            TD_CANCEL(r, r->last.error.cancel);
        }
    }
    ev_log(EV_P_END);
    TD_END(r);
}
TD_METHOD_DEFINE(prod, prod_frame, prod_step);

static prod_frame prod_template;

static td_task start_prod(td_stream_writer *w, td_cancel_token token, void *arg)
{
    (void)arg;
    td_runner *r = td_runner_rent(&prod_method);
    prod_frame *f = TD_FRAME(r, prod_frame);
    *f = prod_template;
    f->w = w;
    f->token = token;
    return td_runner_start(r);
}

/* Consumer: iterate, log items, dispose, log disposal; returns the item count. */
typedef struct { td_stream *s; int64_t has, n; } cons_frame;
static void cons_step(td_runner *r, cons_frame *f)
{
    TD_BEGIN(r);
    for (;;) {
        requested++;
        TD_AWAIT_VALUE(r, td_stream_move_next(f->s), f->has);
        if (!f->has)
            break;
        f->n++;
        ev_log(td_stream_current(f->s));
    }
    TD_AWAIT(r, td_stream_dispose(f->s));
    ev_log(EV_DISPOSED);
    TD_RETURN_VALUE(r, f->n);
    TD_END(r);
}
TD_METHOD_DEFINE(cons, cons_frame, cons_step);

static td_task_i64 start_cons(td_stream *s)
{
    td_runner *r = td_runner_rent(&cons_method);
    TD_FRAME(r, cons_frame)->s = s;
    return td_runner_start_i64(r);
}

static void writer_finite_iteration_and_cleanup_order(void)
{
    td_loop *loop = fresh_loop();
    memset(&prod_template, 0, sizeof(prod_template));
    prod_template.n = 5;
    prod_template.frame_at = 3;          /* items 3..5 come after a frame */
    ev_len = produced = requested = 0;
    td_stream *s = td_stream_create(start_prod, NULL, ev_cleanup, NULL);
    TD_CHECK(s != NULL);
    TD_CHECK_EQ(0, produced);             /* the producer starts on the first move */
    td_task_i64 c = start_cons(s);
    TD_CHECK(c.task.source != NULL);      /* suspended at item 3 (next frame) */
    TD_CHECK_EQ(2, ev_len);
    for (int i = 0; i < 5 && status_of(c.task) == TD_PENDING; i++)
        td_loop_run_frame(loop);
    td_outcome o;
    TD_CHECK_EQ(TD_OK, td_task_i64_get(c, &o));
    TD_CHECK_EQ(TD_SUCCEEDED, o.status);
    TD_CHECK_EQ(5, o.value);
    /* items in order, the producer's end, then cleanup once, then the dispose task */
    int64_t want[] = { 1, 2, 3, 4, 5, EV_P_END, EV_CLEANUP, EV_DISPOSED };
    TD_CHECK_EQ(8, ev_len);
    for (int i = 0; i < 8; i++)
        TD_CHECK_EQ(want[i], ev[i]);
    TD_CHECK_EQ(5, produced);
    td_loop_destroy(loop);
}

static void writer_synchronous_producer(void)
{
    /* A producer that never suspends: every move completes inline. */
    memset(&prod_template, 0, sizeof(prod_template));
    prod_template.n = 3;
    ev_len = produced = requested = 0;
    td_stream *s = td_stream_create(start_prod, NULL, ev_cleanup, NULL);
    td_task_i64 c = start_cons(s);
    TD_CHECK(c.task.source == NULL);
    TD_CHECK_EQ(3, c.value);
    int64_t want[] = { 1, 2, 3, EV_P_END, EV_CLEANUP, EV_DISPOSED };
    TD_CHECK_EQ(6, ev_len);
    for (int i = 0; i < 6; i++)
        TD_CHECK_EQ(want[i], ev[i]);
}

static void writer_dispose_settles_pending_move(void)
{
    td_outcome o;
    /* 1: the producer is blocked on a gate when the stream is disposed. */
    td_completion_source *gate = td_completion_source_new();
    memset(&prod_template, 0, sizeof(prod_template));
    prod_template.n = 3;
    prod_template.gate_at = 1;
    prod_template.gate = td_completion_source_task_i64(gate);
    ev_len = produced = requested = 0;
    td_stream *s = td_stream_create(start_prod, NULL, ev_cleanup, NULL);
    requested = 1;
    td_task_i64 m = td_stream_move_next(s);
    TD_CHECK_EQ(TD_PENDING, status_of(m.task));
    td_task d = td_stream_dispose(s);
    /* the pending move settles canceled at once; cleanup waits for the producer */
    TD_CHECK_EQ(TD_CANCELED, status_of(m.task));
    TD_CHECK_EQ(TD_PENDING, status_of(d));
    TD_CHECK_EQ(0, ev_len);
    TD_CHECK_EQ(TD_OK, td_task_i64_get(m, &o));
    TD_CHECK_EQ(TD_CANCELED, o.status);
    TD_CHECK_EQ(TD_ERR_CANCELED, o.error.code);
    td_completion_source_set_result(gate, 0);      /* producer resumes, its write is canceled */
    TD_CHECK_EQ(TD_SUCCEEDED, status_of(d));
    int64_t want[] = { EV_TOKEN_CANCELED, EV_P_CLEANUP, EV_CLEANUP };
    TD_CHECK_EQ(3, ev_len);
    for (int i = 0; i < 3; i++)
        TD_CHECK_EQ(want[i], ev[i]);
    TD_CHECK_EQ(TD_OK, td_task_get(d, &o));
    TD_CHECK_EQ(TD_E_STALE, td_task_get(d, &o));

    /* 2: after one item the producer waits on its write (back-pressure); dispose cancels
     * that write, so it completes synchronously, the producer's cleanup running first. */
    td_completion_source_reset(gate);
    memset(&prod_template, 0, sizeof(prod_template));
    prod_template.n = 3;
    ev_len = produced = requested = 0;
    s = td_stream_create(start_prod, NULL, ev_cleanup, NULL);
    requested = 1;
    m = td_stream_move_next(s);
    TD_CHECK(m.task.source == NULL && m.value == 1);
    TD_CHECK_EQ(1, td_stream_current(s));
    d = td_stream_dispose(s);
    TD_CHECK(d.source == NULL);
    int64_t want2[] = { EV_TOKEN_CANCELED, EV_P_CLEANUP, EV_CLEANUP };
    TD_CHECK_EQ(3, ev_len);
    for (int i = 0; i < 3; i++)
        TD_CHECK_EQ(want2[i], ev[i]);

    /* 3: disposed before it ever started: no producer run, one cleanup. */
    ev_len = produced = 0;
    s = td_stream_create(start_prod, NULL, ev_cleanup, NULL);
    d = td_stream_dispose(s);
    TD_CHECK(d.source == NULL);
    TD_CHECK_EQ(0, produced);
    TD_CHECK_EQ(1, ev_len);
    TD_CHECK_EQ(EV_CLEANUP, ev[0]);
    td_completion_source_free(gate);
}

/* A producer that faults after one item: the fault is the stream's outcome. */
typedef struct { td_stream_writer *w; } bad_frame;
static void bad_step(td_runner *r, bad_frame *f)
{
    TD_BEGIN(r);
    TD_AWAIT(r, td_stream_writer_write(f->w, 1));
    TD_FAIL(r, TD_ERR_USER + 7, "producer failed");
    TD_END(r);
}
TD_METHOD_DEFINE(bad, bad_frame, bad_step);
static td_task start_bad(td_stream_writer *w, td_cancel_token token, void *arg)
{
    (void)token;
    (void)arg;
    td_runner *r = td_runner_rent(&bad_method);
    TD_FRAME(r, bad_frame)->w = w;
    return td_runner_start(r);
}

static void writer_fault_and_misuse(void)
{
    td_stream *s = td_stream_create(start_bad, NULL, NULL, NULL);
    td_outcome o;
    td_task_i64 m = td_stream_move_next(s);
    TD_CHECK(m.task.source == NULL && m.value == 1);
    m = td_stream_move_next(s);
    TD_CHECK_EQ(TD_OK, td_task_i64_get(m, &o));
    TD_CHECK_EQ(TD_FAULTED, o.status);
    TD_CHECK_EQ(TD_ERR_USER + 7, o.error.code);
    TD_CHECK(td_stream_dispose(s).source == NULL);
}

/* ---- every-update ------------------------------------------------------------------------ */

typedef struct { td_stream *s; td_loop *loop; int64_t has, i, n, dispose_inside; } every_frame;
static int64_t every_items[16];
static uint32_t every_resume_frames[16];
static void every_step(td_runner *r, every_frame *f)
{
    TD_BEGIN(r);
    for (f->i = 0; f->i < f->n; f->i++) {
        TD_AWAIT_VALUE(r, td_stream_move_next(f->s), f->has);
        /* resumed inside the timing's pass: the next move is re-entrant */
        every_items[f->i] = td_stream_current(f->s);
        every_resume_frames[f->i] = td_loop_frame(f->loop);
    }
    if (f->dispose_inside)
        TD_AWAIT(r, td_stream_dispose(f->s));      /* re-entrant disposal from the pass */
    TD_RETURN_VALUE(r, f->n);
    TD_END(r);
}
TD_METHOD_DEFINE(every, every_frame, every_step);

static void every_update_on_demand_and_reentrant(void)
{
    td_loop *loop = fresh_loop();
    ev_len = 0;
    td_stream *s = td_stream_every_update(loop, TD_TIMING_UPDATE, ev_cleanup, NULL);
    for (int i = 0; i < 3; i++)
        td_loop_run_frame(loop);
    /* on demand: nothing was installed before the first move */
    TD_CHECK(!td_loop_is_installed(loop, TD_TIMING_UPDATE));
    td_runner *r = td_runner_rent(&every_method);
    every_frame *f = TD_FRAME(r, every_frame);
    f->s = s;
    f->loop = loop;
    f->n = 4;
    f->dispose_inside = 1;
    td_task_i64 t = td_runner_start_i64(r);
    TD_CHECK(t.task.source != NULL);
    uint32_t start = td_loop_frame(loop);
    for (int i = 0; i < 10 && status_of(t.task) == TD_PENDING; i++)
        td_loop_run_frame(loop);
    td_outcome o;
    TD_CHECK_EQ(TD_OK, td_task_i64_get(t, &o));
    TD_CHECK_EQ(TD_SUCCEEDED, o.status);
    /* one item per frame, consecutive, each resumed in the frame it names */
    for (int i = 0; i < 4; i++) {
        TD_CHECK_EQ(start + 1 + i, every_items[i]);
        TD_CHECK_EQ(every_items[i], every_resume_frames[i]);
    }
    TD_CHECK_EQ(start + 4, td_loop_frame(loop));
    TD_CHECK_EQ(1, ev_len);
    TD_CHECK_EQ(EV_CLEANUP, ev[0]);
    td_loop_run_frame(loop);                        /* the item detaches */
    TD_CHECK_EQ(1, ev_len);
    td_loop_destroy(loop);
}

static void every_update_dispose_and_retirement(void)
{
    td_loop *loop = fresh_loop();
    td_outcome o;
    ev_len = 0;
    td_stream *s = td_stream_every_update(loop, TD_TIMING_UPDATE, ev_cleanup, NULL);
    td_task_i64 m = td_stream_move_next(s);
    TD_CHECK_EQ(TD_PENDING, status_of(m.task));
    td_task d = td_stream_dispose(s);
    TD_CHECK(d.source == NULL);
    TD_CHECK_EQ(TD_OK, td_task_i64_get(m, &o));
    TD_CHECK_EQ(TD_CANCELED, o.status);
    TD_CHECK_EQ(1, ev_len);
    td_loop_run_frame(loop);
    TD_CHECK_EQ(1, ev_len);                         /* shared: no second cleanup */

    /* loop retirement settles a pending move canceled */
    s = td_stream_every_update(loop, TD_TIMING_UPDATE, NULL, NULL);
    m = td_stream_move_next(s);
    td_loop_destroy(loop);
    TD_CHECK_EQ(TD_OK, td_task_i64_get(m, &o));
    TD_CHECK_EQ(TD_CANCELED, o.status);
    TD_CHECK(td_stream_dispose(s).source == NULL);
}

static void unsupported_end_of_frame_phase(void)
{
    /* SMOKE 34: no end-of-frame phase: NOT_SUPPORTED, also with a live or cancelled token */
    td_loop_config cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.has_end_of_frame = 0;
    td_loop *loop = td_loop_create(&cfg);
    td_cancel_source *cs = td_cancel_source_new();
    td_wait_options w = td_wait_defaults();
    w.loop = loop;
    w.cancel = td_cancel_source_token(cs);
    td_outcome o;
    for (int round = 0; round < 2; round++) {
        TD_CHECK_EQ(TD_OK, td_task_get(td_wait_for_end_of_frame(&w), &o));
        TD_CHECK_EQ(TD_FAULTED, o.status);
        TD_CHECK_EQ(TD_ERR_NOT_SUPPORTED, o.error.code);
        td_cancel_source_cancel(cs);
    }
    td_loop_destroy(loop);
    td_cancel_source_free(cs);
}

int main(void)
{
    if (td_runtime_init(NULL) != TD_OK)
        return 2;
    TD_RUN(simple_sources);
    TD_RUN(writer_finite_iteration_and_cleanup_order);
    TD_RUN(writer_synchronous_producer);
    TD_RUN(writer_dispose_settles_pending_move);
    TD_RUN(writer_fault_and_misuse);
    TD_RUN(every_update_on_demand_and_reentrant);
    TD_RUN(every_update_dispose_and_retirement);
    TD_RUN(unsupported_end_of_frame_phase);
    td_runtime_shutdown();
    return TD_TEST_SUMMARY();
}
