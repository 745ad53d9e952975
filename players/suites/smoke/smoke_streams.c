/*
 * smoke_streams.c - async streams and their operators: 35 (finite iteration and cleanup
 * order), 36 (disposal settles a pending move), 37 (every-update), 41 (await operators in
 * order, 100,000 synchronous rejections in constant stack), 42 (disposal of an operator
 * chain with a pending await). stream.h states the cleanup order these cases check.
 */
#include "smoke.h"

/* ---- an event log: items are logged as themselves, markers from 1000 ------------------- */

enum {
    SMOKE_STRM_END = 1000,       /* the producer wrote its last item and returned */
    SMOKE_STRM_STOPPED,          /* the producer saw its write cancelled by its token */
    SMOKE_STRM_CLEANUP,          /* the source stream's cleanup */
    SMOKE_STRM_INNER,            /* an inner finally */
    SMOKE_STRM_OUTER,            /* the outermost finally */
    SMOKE_STRM_DISPOSED,         /* the dispose task completed */
    SMOKE_STRM_SETTLED,          /* a pending move was settled */
    SMOKE_STRM_SEL_CANCELED      /* an await-form selector saw the operator's token */
};

static int64_t smoke_strm_log[64];
static int smoke_strm_len;

static void smoke_strm_note(int64_t e)
{
    if (smoke_strm_len < 64)
        smoke_strm_log[smoke_strm_len++] = e;
}

static void smoke_strm_mark(void *arg) { smoke_strm_note((int64_t)(intptr_t)arg); }
#define SMOKE_STRM_MARK(e) ((void *)(intptr_t)(e))

/* 1 when the log is exactly want[0..n). */
static int smoke_strm_log_is(const int64_t *want, int n)
{
    if (smoke_strm_len != n)
        return 0;
    for (int i = 0; i < n; i++)
        if (smoke_strm_log[i] != want[i])
            return 0;
    return 1;
}

/* ---- a create-from-writer producer: items 1..count --------------------------------------- */

typedef struct smoke_strm_plan {
    int64_t count;
    int64_t pause_every;           /* a frame before every pause_every-th item (0: never) */
    td_completion_source *gate;    /* awaited before the first item (NULL: none) */
    int64_t written;               /* the last item the producer wrote (refused or not) */
    int started;                   /* producer runs (the stream starts on demand) */
    td_cancel_source *token_seen;  /* the token the stream gave the producer */
} smoke_strm_plan;

typedef struct { td_stream_writer *w; td_cancel_token token; smoke_strm_plan *plan; int64_t i; } smoke_strm_prod_frame;

static void smoke_strm_prod_step(td_runner *r, smoke_strm_prod_frame *f)
{
    TD_BEGIN(r);
    f->plan->started++;
    f->plan->token_seen = f->token.source;
    if (f->plan->gate)
        TD_AWAIT_OUTCOME(r, td_completion_source_task_i64(f->plan->gate));
    for (f->i = 1; f->i <= f->plan->count; f->i++) {
        if (f->plan->pause_every && f->i % f->plan->pause_every == 0)
            TD_AWAIT(r, td_next_frame(TD_TIMING_UPDATE));
        f->plan->written = f->i;
        TD_AWAIT_OUTCOME(r, td_task_i64_of(td_stream_writer_write(f->w, f->i)));
        if (r->last.status != TD_SUCCEEDED) {
            /* disposal: the write is cancelled, and so is the producer's token */
            if (r->last.status == TD_CANCELED && td_cancel_is_requested(f->token))
                smoke_strm_note(SMOKE_STRM_STOPPED);
            TD_RETURN(r);
        }
    }
    smoke_strm_note(SMOKE_STRM_END);
    TD_END(r);
}
TD_METHOD_DEFINE(smoke_strm_prod, smoke_strm_prod_frame, smoke_strm_prod_step);

static td_task smoke_strm_produce(td_stream_writer *w, td_cancel_token token, void *arg)
{
    td_runner *r = td_runner_rent(&smoke_strm_prod_method);
    smoke_strm_prod_frame *f = TD_FRAME(r, smoke_strm_prod_frame);
    f->w = w;
    f->token = token;
    f->plan = (smoke_strm_plan *)arg;
    return td_runner_start(r);
}

static td_stream *smoke_strm_source(smoke_strm_plan *plan)
{
    return td_stream_create(smoke_strm_produce, plan, smoke_strm_mark, SMOKE_STRM_MARK(SMOKE_STRM_CLEANUP));
}

/* ---- 35: finite iteration and cleanup order --------------------------------------------- */

/* Reads up to `limit` items (logging each and checking the producer is never ahead), asks
 * once more after the end, then disposes; returns the number of items. */
typedef struct {
    td_stream *s;
    smoke_strm_plan *plan;
    int64_t limit, has, n, ahead, after_end;
} smoke_strm_reader_frame;

static void smoke_strm_reader_step(td_runner *r, smoke_strm_reader_frame *f)
{
    TD_BEGIN(r);
    f->after_end = -1;
    while (f->n < f->limit) {
        TD_AWAIT_VALUE(r, td_stream_move_next(f->s), f->has);
        if (!f->has)
            break;
        f->n++;
        if (f->plan->written != f->n)
            f->ahead++;                       /* back-pressure: one item in flight */
        smoke_strm_note(td_stream_current(f->s));
    }
    if (!f->has)
        TD_AWAIT_VALUE(r, td_stream_move_next(f->s), f->after_end);   /* the end stays */
    TD_AWAIT(r, td_stream_dispose(f->s));
    smoke_strm_note(SMOKE_STRM_DISPOSED);
    TD_RETURN_VALUE(r, f->n);
    TD_END(r);
}
TD_METHOD_DEFINE(smoke_strm_reader, smoke_strm_reader_frame, smoke_strm_reader_step);

static td_task_i64 smoke_strm_read(td_stream *s, smoke_strm_plan *plan, int64_t limit, smoke_strm_reader_frame **frame)
{
    td_runner *r = td_runner_rent(&smoke_strm_reader_method);
    smoke_strm_reader_frame *f = TD_FRAME(r, smoke_strm_reader_frame);
    f->s = s;
    f->plan = plan;
    f->limit = limit;
    *frame = f;
    return td_runner_start_i64(r);
}

void smoke_case_35(SMOKE_ARGS)
{
    td_loop *loop = smoke_loop_begin(1, NULL);
    td_outcome o;
    smoke_strm_plan plan;
    memset(&plan, 0, sizeof(plan));
    plan.count = 6;
    plan.pause_every = 3;                     /* items 3 and 6 come a frame later */
    smoke_strm_len = 0;
    td_stream *s = td_stream_finally(smoke_strm_source(&plan), smoke_strm_mark, SMOKE_STRM_MARK(SMOKE_STRM_OUTER));
    SMOKE_TRUE(s != NULL);
    SMOKE_EQ(0, plan.started);                /* nothing runs before the first move */
    smoke_strm_reader_frame *f;
    td_task_i64 t = smoke_strm_read(s, &plan, 100, &f);
    SMOKE_EQ(1, plan.started);
    SMOKE_EQ(TD_PENDING, smoke_status(t.task));
    SMOKE_EQ(2, smoke_strm_len);              /* items 1 and 2 came synchronously */
    smoke_run_until(loop, t.task, 10);
    SMOKE_EQ(0, f->ahead);
    SMOKE_EQ(0, f->after_end);
    SMOKE_EQ(TD_OK, td_task_i64_get(t, &o));
    SMOKE_EQ(TD_SUCCEEDED, o.status);
    SMOKE_EQ(6, o.value);
    /* every item in order; then the producer's end, the source's cleanup, the operator's
     * cleanup (upstream first), each once, and only then the dispose task */
    static const int64_t full[] = { 1, 2, 3, 4, 5, 6, SMOKE_STRM_END, SMOKE_STRM_CLEANUP,
                                    SMOKE_STRM_OUTER, SMOKE_STRM_DISPOSED };
    SMOKE_TRUE(smoke_strm_log_is(full, 10));
    td_loop_run_frame(loop);
    SMOKE_EQ(10, smoke_strm_len);
    SMOKE_EQ(1, plan.started);

    /* leaving early: the producer waiting on its write is stopped by its token first,
     * then the same cleanups run once each */
    memset(&plan, 0, sizeof(plan));
    plan.count = 6;
    plan.pause_every = 3;
    smoke_strm_len = 0;
    s = td_stream_finally(smoke_strm_source(&plan), smoke_strm_mark, SMOKE_STRM_MARK(SMOKE_STRM_OUTER));
    t = smoke_strm_read(s, &plan, 2, &f);
    SMOKE_TRUE(t.task.source == NULL);        /* items 1, 2 and the disposal are synchronous */
    SMOKE_EQ(2, t.value);
    static const int64_t early[] = { 1, 2, SMOKE_STRM_STOPPED, SMOKE_STRM_CLEANUP,
                                     SMOKE_STRM_OUTER, SMOKE_STRM_DISPOSED };
    SMOKE_TRUE(smoke_strm_log_is(early, 6));
    SMOKE_EQ(2, plan.written);
    for (int i = 0; i < 3; i++)
        td_loop_run_frame(loop);
    SMOKE_EQ(6, smoke_strm_len);
    smoke_loop_end(loop);
}

/* ---- 36: disposal settles a pending move ------------------------------------------------- */

/* Awaits one move and keeps its outcome. */
typedef struct { td_stream *s; td_outcome got; } smoke_strm_mover_frame;

static void smoke_strm_mover_step(td_runner *r, smoke_strm_mover_frame *f)
{
    TD_BEGIN(r);
    TD_AWAIT_OUTCOME(r, td_stream_move_next(f->s));
    f->got = r->last;
    smoke_strm_note(SMOKE_STRM_SETTLED);
    TD_END(r);
}
TD_METHOD_DEFINE(smoke_strm_mover, smoke_strm_mover_frame, smoke_strm_mover_step);

void smoke_case_36(SMOKE_ARGS)
{
    td_loop *loop = smoke_loop_begin(1, NULL);
    td_outcome o;
    smoke_strm_plan plan;
    memset(&plan, 0, sizeof(plan));
    plan.count = 3;
    plan.gate = td_completion_source_new();   /* the producer is busy before item 1 */
    smoke_strm_len = 0;
    td_stream *s = smoke_strm_source(&plan);
    td_runner *r = td_runner_rent(&smoke_strm_mover_method);
    smoke_strm_mover_frame *mf = TD_FRAME(r, smoke_strm_mover_frame);
    mf->s = s;
    td_task mover = td_runner_start(r);
    SMOKE_EQ(TD_PENDING, smoke_status(mover));
    SMOKE_EQ(1, plan.started);
    SMOKE_TRUE(plan.token_seen != NULL);
    td_cancel_token producer_token = { plan.token_seen };
    SMOKE_EQ(0, td_cancel_is_requested(producer_token));

    td_task d = td_stream_dispose(s);
    /* the pending move settled CANCELED at once, naming the stream's token, which the
     * producer holds and which is now cancelled */
    SMOKE_EQ(TD_SUCCEEDED, smoke_status(mover));
    SMOKE_EQ(TD_CANCELED, mf->got.status);
    SMOKE_EQ(TD_ERR_CANCELED, mf->got.error.code);
    SMOKE_TRUE(mf->got.error.cancel == plan.token_seen);
    SMOKE_EQ(1, td_cancel_is_requested(producer_token));
    td_task_forget_result(mover);
    /* the producer has not finished: no cleanup yet, the dispose task waits */
    SMOKE_EQ(TD_PENDING, smoke_status(d));
    static const int64_t settled[] = { SMOKE_STRM_SETTLED };
    SMOKE_TRUE(smoke_strm_log_is(settled, 1));
    /* a move after disposal is cancelled too, and runs no cleanup of its own */
    SMOKE_EQ(TD_OK, td_task_i64_get(td_stream_move_next(s), &o));
    SMOKE_EQ(TD_CANCELED, o.status);
    SMOKE_EQ(1, smoke_strm_len);
    /* the producer resumes: its write is refused, it stops; then the one cleanup */
    td_completion_source_set_result(plan.gate, 0);
    SMOKE_EQ(TD_SUCCEEDED, smoke_status(d));
    static const int64_t shared[] = { SMOKE_STRM_SETTLED, SMOKE_STRM_STOPPED, SMOKE_STRM_CLEANUP };
    SMOKE_TRUE(smoke_strm_log_is(shared, 3));
    SMOKE_EQ(1, plan.written);                /* its one write attempt was refused */
    SMOKE_EQ(TD_OK, td_task_get(d, &o));
    SMOKE_EQ(TD_E_STALE, td_task_get(d, &o));
    td_completion_source_free(plan.gate);

    /* an operator chain over an every-update stream: its pending move settles, and the
     * two cleanups (upstream first) run once, shared with the disposal */
    smoke_strm_len = 0;
    td_stream *chain = td_stream_finally(
        td_stream_take(td_stream_every_update(loop, TD_TIMING_UPDATE, smoke_strm_mark, SMOKE_STRM_MARK(SMOKE_STRM_CLEANUP)), 10),
        smoke_strm_mark, SMOKE_STRM_MARK(SMOKE_STRM_OUTER));
    td_task_i64 m = td_stream_move_next(chain);
    smoke_run_until(loop, m.task, 3);
    SMOKE_EQ(TD_OK, td_task_i64_get(m, &o));
    SMOKE_EQ(1, o.value);
    SMOKE_EQ(td_loop_frame(loop), td_stream_current(chain));
    m = td_stream_move_next(chain);
    SMOKE_EQ(TD_PENDING, smoke_status(m.task));
    d = td_stream_dispose(chain);
    SMOKE_TRUE(d.source == NULL);             /* nothing left to wait for */
    SMOKE_EQ(TD_OK, td_task_i64_get(m, &o));
    SMOKE_EQ(TD_CANCELED, o.status);
    static const int64_t chain_order[] = { SMOKE_STRM_CLEANUP, SMOKE_STRM_OUTER };
    SMOKE_TRUE(smoke_strm_log_is(chain_order, 2));
    for (int i = 0; i < 3; i++)
        td_loop_run_frame(loop);
    SMOKE_EQ(2, smoke_strm_len);
    smoke_loop_end(loop);
}

/* ---- 37: every-update ------------------------------------------------------------------------ */

typedef struct { volatile uint32_t hits; uintptr_t thread; int on_worker; } smoke_strm_cleanups;

static void smoke_strm_count_cleanup(void *arg)
{
    smoke_strm_cleanups *c = (smoke_strm_cleanups *)arg;
    c->thread = td_thread_self();
    c->on_worker = td_is_worker_thread();
    td_atomic_fetch_add_u32(&c->hits, 1);
}

/* Takes n items, noting where each one resumed it; then (optionally) disposes the stream
 * from inside the timing's pass. Every next move is made re-entrantly, inside the pass. */
typedef struct {
    td_stream *s;
    td_loop *loop;
    int64_t n, i, has, dispose;
    int64_t item[8];
    uint32_t frame[8];
    td_timing timing[8];
    uintptr_t thread[8];
} smoke_strm_ticker_frame;

static void smoke_strm_ticker_step(td_runner *r, smoke_strm_ticker_frame *f)
{
    TD_BEGIN(r);
    for (f->i = 0; f->i < f->n; f->i++) {
        TD_AWAIT_VALUE(r, td_stream_move_next(f->s), f->has);
        f->item[f->i] = td_stream_current(f->s);
        f->frame[f->i] = td_loop_frame(f->loop);
        f->timing[f->i] = td_loop_current_timing(f->loop);
        f->thread[f->i] = td_thread_self();
    }
    if (f->dispose)
        TD_AWAIT(r, td_stream_dispose(f->s));
    TD_END(r);
}
TD_METHOD_DEFINE(smoke_strm_ticker, smoke_strm_ticker_frame, smoke_strm_ticker_step);

typedef struct { td_stream *s; td_task result; uintptr_t thread; volatile uint32_t done; } smoke_strm_disposal;

static void smoke_strm_dispose_job(void *arg)
{
    smoke_strm_disposal *j = (smoke_strm_disposal *)arg;
    j->thread = td_thread_self();
    j->result = td_stream_dispose(j->s);
    td_atomic_store_u32(&j->done, 1);
}

void smoke_case_37(SMOKE_ARGS)
{
    const td_timing tm = TD_TIMING_PRE_LATE_UPDATE;
    td_loop *loop = smoke_loop_begin(1, NULL);
    td_outcome o;
    smoke_strm_cleanups ca, cb;
    memset(&ca, 0, sizeof(ca));
    memset(&cb, 0, sizeof(cb));
    td_stream *a = td_stream_every_update(loop, tm, smoke_strm_count_cleanup, &ca);
    for (int i = 0; i < 3; i++)
        td_loop_run_frame(loop);
    SMOKE_TRUE(!td_loop_is_installed(loop, tm));       /* on demand: nothing yet */

    td_runner *r = td_runner_rent(&smoke_strm_ticker_method);
    smoke_strm_ticker_frame *f = TD_FRAME(r, smoke_strm_ticker_frame);
    f->s = a;
    f->loop = loop;
    f->n = 4;
    f->dispose = 1;
    uint32_t start = td_loop_frame(loop);
    td_task t = td_runner_start(r);
    SMOKE_EQ(TD_PENDING, smoke_status(t));
    SMOKE_TRUE(td_loop_is_installed(loop, tm));        /* the first move installed it */
    smoke_run_until(loop, t, 10);
    SMOKE_EQ(TD_SUCCEEDED, smoke_status(t));
    /* one item per frame: a move made inside the pass completes in the next frame */
    for (int i = 0; i < 4; i++) {
        SMOKE_EQ(start + 1 + (uint32_t)i, f->item[i]);
        SMOKE_EQ(f->item[i], f->frame[i]);
        SMOKE_EQ(tm, f->timing[i]);
        SMOKE_TRUE(f->thread[i] == td_main_thread_id());
    }
    SMOKE_EQ(start + 4, td_loop_frame(loop));
    SMOKE_EQ(TD_OK, td_task_get(t, &o));               /* the frame is cleared from here */
    /* disposed from inside its own pass: one cleanup, on the main thread */
    SMOKE_EQ(1, ca.hits);
    SMOKE_TRUE(ca.thread == td_main_thread_id());

    /* a second stream, disposed by a pool worker while a move is pending */
    td_stream *b = td_stream_every_update(loop, tm, smoke_strm_count_cleanup, &cb);
    td_task_i64 m = td_stream_move_next(b);
    smoke_run_until(loop, m.task, 3);
    SMOKE_EQ(TD_OK, td_task_i64_get(m, &o));
    SMOKE_EQ(td_loop_frame(loop), td_stream_current(b));
    m = td_stream_move_next(b);
    SMOKE_EQ(TD_PENDING, smoke_status(m.task));
    smoke_strm_disposal job;
    memset(&job, 0, sizeof(job));
    job.s = b;
    SMOKE_EQ(TD_OK, td_thread_pool_post(smoke_strm_dispose_job, &job));
    SMOKE_TRUE(smoke_wait_flag(&job.done, 1));
    SMOKE_TRUE(job.thread != td_main_thread_id());
    SMOKE_TRUE(job.result.source == NULL);            /* the disposal finished on the worker */
    SMOKE_EQ(1, td_atomic_load_u32(&cb.hits));
    SMOKE_TRUE(cb.thread == job.thread);
    SMOKE_EQ(1, cb.on_worker);
    SMOKE_EQ(TD_OK, td_task_i64_get(m, &o));         /* no frame ran: it was cancelled */
    SMOKE_EQ(TD_CANCELED, o.status);
    for (int i = 0; i < 3; i++)
        td_loop_run_frame(loop);                       /* the items detach */
    SMOKE_EQ(1, ca.hits);
    SMOKE_EQ(1, td_atomic_load_u32(&cb.hits));
    smoke_loop_end(loop);
}

/* ---- 41: await operators filter in order --------------------------------------------------- */

enum { SMOKE_STRM_WHERE = 10000, SMOKE_STRM_SELECT = 20000 };

static int64_t smoke_strm_trace[64];
static int smoke_strm_trace_len, smoke_strm_busy, smoke_strm_busy_max;

static void smoke_strm_enter(int64_t what)
{
    if (smoke_strm_trace_len < 64)
        smoke_strm_trace[smoke_strm_trace_len++] = what;
    if (++smoke_strm_busy > smoke_strm_busy_max)
        smoke_strm_busy_max = smoke_strm_busy;
}

/* The verdict (kind WHERE: keep x unless a multiple of 3) or the square (kind SELECT),
 * given a frame later. */
typedef struct { int64_t x, kind; } smoke_strm_judge_frame;

static void smoke_strm_judge_step(td_runner *r, smoke_strm_judge_frame *f)
{
    TD_BEGIN(r);
    smoke_strm_enter(f->kind + f->x);
    TD_AWAIT(r, td_next_frame(TD_TIMING_UPDATE));
    smoke_strm_busy--;
    TD_RETURN_VALUE(r, f->kind == SMOKE_STRM_SELECT ? f->x * f->x : f->x % 3 != 0);
    TD_END(r);
}
TD_METHOD_DEFINE(smoke_strm_judge, smoke_strm_judge_frame, smoke_strm_judge_step);

static td_task_i64 smoke_strm_judge(int64_t kind, int64_t x)
{
    td_runner *r = td_runner_rent(&smoke_strm_judge_method);
    TD_FRAME(r, smoke_strm_judge_frame)->x = x;
    TD_FRAME(r, smoke_strm_judge_frame)->kind = kind;
    return td_runner_start_i64(r);
}

/* where: odd items are judged a frame later, even ones answered at once */
static td_task_i64 smoke_strm_where_fn(void *arg, int64_t x, td_cancel_token cancel)
{
    (void)arg;
    (void)cancel;
    if (x % 2)
        return smoke_strm_judge(SMOKE_STRM_WHERE, x);
    smoke_strm_enter(SMOKE_STRM_WHERE + x);
    smoke_strm_busy--;
    return td_from_result(x % 3 != 0);
}

static td_task_i64 smoke_strm_select_fn(void *arg, int64_t x, td_cancel_token cancel)
{
    (void)arg;
    (void)cancel;
    return smoke_strm_judge(SMOKE_STRM_SELECT, x);
}

/* 100,000 rejections: where each verdict is decided, the address of a local */
#define SMOKE_STRM_MANY 100000
static uintptr_t smoke_strm_sp_first, smoke_strm_sp_deepest;
static int64_t smoke_strm_judged;

static td_task_i64 smoke_strm_reject_fn(void *arg, int64_t x, td_cancel_token cancel)
{
    volatile char here = 0;
    uintptr_t sp = (uintptr_t)&here;
    (void)arg;
    (void)cancel;
    if (smoke_strm_judged++ == 0)
        smoke_strm_sp_first = smoke_strm_sp_deepest = sp;
    if (sp < smoke_strm_sp_deepest)
        smoke_strm_sp_deepest = sp;
    return td_from_result(x == SMOKE_STRM_MANY + 1);  /* only the last item passes */
}

static td_task_i64 smoke_strm_double_fn(void *arg, int64_t x, td_cancel_token cancel)
{
    (void)arg;
    (void)cancel;
    return td_from_result(2 * x);
}

void smoke_case_41(SMOKE_ARGS)
{
    td_loop *loop = smoke_loop_begin(1, NULL);
    td_outcome o;
    int64_t out[16];
    smoke_strm_trace_len = smoke_strm_busy = smoke_strm_busy_max = 0;
    td_stream *s = td_stream_select_await(td_stream_where_await(td_stream_range(1, 12), smoke_strm_where_fn, NULL),
                                          smoke_strm_select_fn, NULL);
    td_task_i64 t = td_stream_to_array(s, out, 16);
    smoke_run_until(loop, t.task, 64);
    SMOKE_EQ(TD_OK, td_task_i64_get(t, &o));
    SMOKE_EQ(TD_SUCCEEDED, o.status);
    /* kept: 1 2 4 5 7 8 10 11, squared, in upstream order */
    SMOKE_EQ(8, o.value);
    int k = 0;
    for (int64_t x = 1; x <= 12; x++)
        if (x % 3 != 0)
            SMOKE_EQ(x * x, out[k++]);
    /* sequential: each item's verdict, then its selection, before the next item;
     * never two evaluations at once */
    k = 0;
    for (int64_t x = 1; x <= 12; x++) {
        SMOKE_EQ(SMOKE_STRM_WHERE + x, smoke_strm_trace[k++]);
        if (x % 3 != 0)
            SMOKE_EQ(SMOKE_STRM_SELECT + x, smoke_strm_trace[k++]);
    }
    SMOKE_EQ(k, smoke_strm_trace_len);
    SMOKE_EQ(1, smoke_strm_busy_max);
    SMOKE_EQ(0, smoke_strm_busy);

    /* 100,000 synchronous rejections in a row, over a synchronous source and over a
     * producer whose writes complete as the operator asks: constant stack depth */
    smoke_strm_plan plan;
    for (int from_writer = 0; from_writer <= 1; from_writer++) {
        memset(&plan, 0, sizeof(plan));
        plan.count = SMOKE_STRM_MANY + 1;
        smoke_strm_len = 0;
        smoke_strm_judged = 0;
        td_stream *up = from_writer ? smoke_strm_source(&plan) : td_stream_range(1, SMOKE_STRM_MANY + 1);
        s = td_stream_select_await(td_stream_where_await(up, smoke_strm_reject_fn, NULL), smoke_strm_double_fn, NULL);
        out[0] = out[1] = -1;
        t = td_stream_to_array(s, out, 2);
        SMOKE_TRUE(t.task.source == NULL);              /* no suspension at all */
        SMOKE_EQ(1, t.value);
        SMOKE_EQ(2 * (SMOKE_STRM_MANY + 1), out[0]);
        SMOKE_EQ(SMOKE_STRM_MANY + 1, smoke_strm_judged);
        /* the deepest verdict ran where the first one did */
        SMOKE_TRUE(smoke_strm_sp_first - smoke_strm_sp_deepest < 256);
        if (from_writer) {
            static const int64_t ended[] = { SMOKE_STRM_END, SMOKE_STRM_CLEANUP };
            SMOKE_TRUE(smoke_strm_log_is(ended, 2));
        }
    }
    smoke_loop_end(loop);
}

/* ---- 42: pending operator disposal and cleanup order ---------------------------------------- */

enum { SMOKE_STRM_HONOUR_NOW, SMOKE_STRM_HONOUR_LATER, SMOKE_STRM_IGNORE };

static int smoke_strm_sel_mode;
static td_completion_source *smoke_strm_sel_gate;
static td_cancel_source *smoke_strm_sel_token;

/* A selector that takes its time: it honours the operator's token (cancelling its wait at
 * once or at the next frame) or ignores it and waits for a gate. */
typedef struct { int64_t x; td_cancel_token token; } smoke_strm_slow_frame;

static void smoke_strm_slow_step(td_runner *r, smoke_strm_slow_frame *f)
{
    TD_BEGIN(r);
    if (smoke_strm_sel_mode == SMOKE_STRM_IGNORE) {
        TD_AWAIT_OUTCOME(r, td_completion_source_task_i64(smoke_strm_sel_gate));
    } else {
        td_wait_options w = td_wait_defaults();
        w.cancel = f->token;
        w.cancel_immediately = smoke_strm_sel_mode == SMOKE_STRM_HONOUR_NOW;
        TD_AWAIT_OUTCOME(r, td_task_i64_of(td_delay_frame_ex(1000, &w)));
    }
    if (r->last.status == TD_CANCELED) {
        if (r->last.error.cancel == f->token.source && td_cancel_is_requested(f->token))
            smoke_strm_note(SMOKE_STRM_SEL_CANCELED);
        TD_CANCEL(r, f->token.source);
    }
    TD_RETURN_VALUE(r, f->x * 10);
    TD_END(r);
}
TD_METHOD_DEFINE(smoke_strm_slow, smoke_strm_slow_frame, smoke_strm_slow_step);

static td_task_i64 smoke_strm_slow_fn(void *arg, int64_t x, td_cancel_token cancel)
{
    (void)arg;
    smoke_strm_sel_token = cancel.source;
    if (x == 1)
        return td_from_result(10);            /* the first item passes at once */
    td_runner *r = td_runner_rent(&smoke_strm_slow_method);
    TD_FRAME(r, smoke_strm_slow_frame)->x = x;
    TD_FRAME(r, smoke_strm_slow_frame)->token = cancel;
    return td_runner_start_i64(r);
}

static int smoke_strm_odd(void *arg, int64_t x) { (void)arg; return (x & 1) != 0; }

void smoke_case_42(SMOKE_ARGS)
{
    td_loop *loop = smoke_loop_begin(1, NULL);
    td_outcome o;
    smoke_strm_plan plan;
    smoke_strm_sel_gate = td_completion_source_new();
    for (int mode = SMOKE_STRM_HONOUR_NOW; mode <= SMOKE_STRM_IGNORE; mode++) {
        smoke_strm_sel_mode = mode;
        smoke_strm_sel_token = NULL;
        td_completion_source_reset(smoke_strm_sel_gate);
        memset(&plan, 0, sizeof(plan));
        plan.count = 5;
        smoke_strm_len = 0;
        /* source -> where(odd) -> finally(INNER) -> select_await(slow) -> finally(OUTER) */
        td_stream *chain = td_stream_finally(
            td_stream_select_await(
                td_stream_finally(td_stream_where(smoke_strm_source(&plan), smoke_strm_odd, NULL),
                                  smoke_strm_mark, SMOKE_STRM_MARK(SMOKE_STRM_INNER)),
                smoke_strm_slow_fn, NULL),
            smoke_strm_mark, SMOKE_STRM_MARK(SMOKE_STRM_OUTER));
        td_task_i64 m = td_stream_move_next(chain);
        SMOKE_TRUE(m.task.source == NULL && m.value == 1);
        SMOKE_EQ(10, td_stream_current(chain));
        m = td_stream_move_next(chain);               /* 2 rejected; 3 is being selected */
        SMOKE_EQ(TD_PENDING, smoke_status(m.task));
        SMOKE_EQ(3, plan.written);
        SMOKE_TRUE(smoke_strm_sel_token != NULL);
        td_loop_run_frame(loop);
        SMOKE_EQ(TD_PENDING, smoke_status(m.task));

        td_task d = td_stream_dispose(chain);
        SMOKE_EQ(TD_OK, td_task_i64_get(m, &o));      /* settled CANCELED at once */
        SMOKE_EQ(TD_CANCELED, o.status);
        if (mode == SMOKE_STRM_HONOUR_NOW) {
            SMOKE_TRUE(d.source == NULL);             /* everything ran inside dispose */
        } else {
            /* the awaited selector has not finished: nothing is cleaned up yet */
            SMOKE_EQ(TD_PENDING, smoke_status(d));
            SMOKE_EQ(TD_OK, td_task_on_completed(d, smoke_strm_mark, SMOKE_STRM_MARK(SMOKE_STRM_DISPOSED)));
            for (int i = 0; i < 3; i++)
                td_loop_run_frame(loop);
            if (mode == SMOKE_STRM_IGNORE) {
                SMOKE_EQ(TD_PENDING, smoke_status(d)); /* disposal waits for it */
                SMOKE_EQ(0, smoke_strm_len);
                td_completion_source_set_result(smoke_strm_sel_gate, 0);
            }
            SMOKE_EQ(TD_SUCCEEDED, smoke_status(d));
            SMOKE_EQ(TD_OK, td_task_get(d, &o));
        }
        /* the selector saw its token (unless it ignores it); then cleanups from the
         * source outwards, each once, and the dispose task last */
        int64_t want[6];
        int n = 0;
        if (mode != SMOKE_STRM_IGNORE)
            want[n++] = SMOKE_STRM_SEL_CANCELED;
        want[n++] = SMOKE_STRM_STOPPED;
        want[n++] = SMOKE_STRM_CLEANUP;
        want[n++] = SMOKE_STRM_INNER;
        want[n++] = SMOKE_STRM_OUTER;
        if (mode != SMOKE_STRM_HONOUR_NOW)
            want[n++] = SMOKE_STRM_DISPOSED;
        SMOKE_TRUE(smoke_strm_log_is(want, n));
        SMOKE_EQ(3, plan.written);                    /* nothing was produced after that */
        for (int i = 0; i < 2; i++)
            td_loop_run_frame(loop);
        SMOKE_EQ(n, smoke_strm_len);
    }
    td_completion_source_free(smoke_strm_sel_gate);
    smoke_loop_end(loop);
}
