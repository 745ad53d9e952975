/* Async methods: synchronous completion, suspension, runner pooling, frames, faults. */
#include <tandem/tandem.h>
#include "td_test.h"

/* returns f->in + 1 after awaiting `gate` (if any) */
typedef struct { td_task_i64 gate; int64_t in; int64_t got; } add_frame;
static void add_step(td_runner *r, add_frame *f)
{
    TD_BEGIN(r);
    TD_AWAIT_VALUE(r, f->gate, f->got);
    TD_RETURN_VALUE(r, f->got + f->in);
    TD_END(r);
}
TD_METHOD_DEFINE(add, add_frame, add_step);

static td_task_i64 start_add(td_task_i64 gate, int64_t in)
{
    td_runner *r = td_runner_rent(&add_method);
    add_frame *f = TD_FRAME(r, add_frame);
    f->gate = gate;
    f->in = in;
    return td_runner_start_i64(r);
}

static void synchronous_completion(void)
{
    uint32_t pooled = td_pool_count(&add_method.pool);
    td_task_i64 t = start_add(td_from_result(16), 1);
    /* Completed inline: no source, runner already back in its pool. */
    TD_CHECK(t.task.source == NULL);
    TD_CHECK_EQ(17, t.value);
    TD_CHECK(td_pool_count(&add_method.pool) >= pooled);
}

static void suspends_and_resumes(void)
{
    td_completion_source *gate = td_completion_source_new();
    td_task_i64 t = start_add(td_completion_source_task_i64(gate), 3);
    td_status st;
    TD_CHECK(t.task.source != NULL);
    TD_CHECK_EQ(TD_OK, td_task_status(t.task, &st));
    TD_CHECK_EQ(TD_PENDING, st);
    td_runner *r = (td_runner *)t.task.source;
    TD_CHECK_EQ(3, TD_FRAME(r, add_frame)->in);
    td_completion_source_set_result(gate, 20);
    td_outcome o;
    TD_CHECK_EQ(TD_OK, td_task_i64_get(t, &o));
    TD_CHECK_EQ(TD_SUCCEEDED, o.status);
    TD_CHECK_EQ(23, o.value);
    /* Consumed: the runner is back in its pool, pooled by its success with its frame as the
     * step left it; the rent that takes it again clears the frame. */
    TD_CHECK_EQ(TD_E_STALE, td_task_status(t.task, &st));
    TD_CHECK_EQ(TD_E_STALE, td_task_i64_get(t, &o));
    /* The next call reuses the same runner. */
    td_completion_source_reset(gate);
    td_runner *again = td_runner_rent(&add_method);
    TD_CHECK(again == r);
    TD_CHECK_EQ(0, TD_FRAME(again, add_frame)->in);
    TD_CHECK(TD_FRAME(again, add_frame)->gate.task.source == NULL);
    TD_FRAME(again, add_frame)->gate = td_completion_source_task_i64(gate);
    TD_FRAME(again, add_frame)->in = 1;
    td_task_i64 t2 = td_runner_start_i64(again);
    TD_CHECK(t2.task.source == &r->source);
    TD_CHECK(t2.task.token != t.task.token);
    td_completion_source_set_result(gate, 1);
    TD_CHECK_EQ(TD_OK, td_task_i64_get(t2, &o));
    TD_CHECK_EQ(2, o.value);
    td_completion_source_free(gate);
}

/* Outer awaits inner twice and sums; faults propagate through both. */
typedef struct { td_completion_source *gate; int64_t a, b; } outer_frame;
static void outer_step(td_runner *r, outer_frame *f)
{
    TD_BEGIN(r);
    TD_AWAIT_VALUE(r, start_add(td_completion_source_task_i64(f->gate), 10), f->a);
    TD_AWAIT_VALUE(r, start_add(td_from_result(5), 100), f->b);
    TD_RETURN_VALUE(r, f->a + f->b);
    TD_END(r);
}
TD_METHOD_DEFINE(outer, outer_frame, outer_step);

static void nested_methods_and_faults(void)
{
    td_completion_source *gate = td_completion_source_new();
    td_runner *r = td_runner_rent(&outer_method);
    TD_FRAME(r, outer_frame)->gate = gate;
    td_task_i64 t = td_runner_start_i64(r);
    td_completion_source_set_result(gate, 1);
    td_outcome o;
    TD_CHECK_EQ(TD_OK, td_task_i64_get(t, &o));
    TD_CHECK_EQ(11 + 105, o.value);

    td_completion_source_reset(gate);
    r = td_runner_rent(&outer_method);
    TD_FRAME(r, outer_frame)->gate = gate;
    t = td_runner_start_i64(r);
    td_completion_source_set_error(gate, TD_ERR_USER + 9, "inner failed");
    TD_CHECK_EQ(TD_OK, td_task_i64_get(t, &o));
    TD_CHECK_EQ(TD_FAULTED, o.status);
    TD_CHECK_EQ(TD_ERR_USER + 9, o.error.code);
    TD_CHECK(strcmp(o.error.message, "inner failed") == 0);
    td_completion_source_free(gate);
}

/* Suppression inside a method: TD_AWAIT_OUTCOME does not propagate. */
typedef struct { td_task_i64 in; } probe_frame;
static void probe_step(td_runner *r, probe_frame *f)
{
    TD_BEGIN(r);
    TD_AWAIT_OUTCOME(r, f->in);
    TD_RETURN_VALUE(r, r->last.status == TD_CANCELED ? 1000 + r->last.error.code : -1);
    TD_END(r);
}
TD_METHOD_DEFINE(probe, probe_frame, probe_step);

static void outcome_without_propagation(void)
{
    td_completion_source *gate = td_completion_source_new();
    td_runner *r = td_runner_rent(&probe_method);
    TD_FRAME(r, probe_frame)->in = td_completion_source_task_i64(gate);
    td_task_i64 t = td_runner_start_i64(r);
    td_completion_source_set_canceled(gate, NULL);
    td_outcome o;
    TD_CHECK_EQ(TD_OK, td_task_i64_get(t, &o));
    TD_CHECK_EQ(TD_SUCCEEDED, o.status);
    TD_CHECK_EQ(1000 + TD_ERR_CANCELED, o.value);
    td_completion_source_free(gate);
}

/* Untyped: TD_AWAIT on untyped tasks, TD_RETURN, explicit TD_FAIL. */
typedef struct { td_task a; int fail; } plain_frame;
static void plain_step(td_runner *r, plain_frame *f)
{
    TD_BEGIN(r);
    TD_AWAIT(r, f->a);
    if (f->fail)
        TD_FAIL(r, TD_ERR_USER + 2, "asked to fail");
    TD_RETURN(r);
    TD_END(r);
}
TD_METHOD_DEFINE(plain, plain_frame, plain_step);

/* A manual completion source completed on the main thread hands its value to the runner that
 * awaits it (completion.c): the runner goes on with the value, and the source is consumed for
 * it (its task is stale) as the runner's own take would leave it. The same with flow on (the
 * registration is td_runner_move_next), without propagation (TD_AWAIT_OUTCOME), and a second
 * result is refused; a source nobody awaits keeps its value for a later get. */
typedef struct { td_task_i64 in; } last_frame;
static void last_step(td_runner *r, last_frame *f)
{
    TD_BEGIN(r);
    TD_AWAIT_OUTCOME(r, f->in);
    TD_RETURN_VALUE(r, r->last.status == TD_SUCCEEDED && r->last.error.code == 0 ? r->last.value : -1);
    TD_END(r);
}
TD_METHOD_DEFINE(last, last_frame, last_step);

static void completion_hands_the_result_over(void)
{
    td_completion_source *gate = td_completion_source_new();
    td_outcome o;
    for (int flow = 0; flow < 2; flow++) {
        td_flow_set(flow);
        td_completion_source_reset(gate);
        td_task_i64 in = td_completion_source_task_i64(gate);
        td_task_i64 t = start_add(in, 5);
        TD_CHECK(t.task.source != NULL);
        TD_CHECK_EQ(TD_OK, td_completion_source_set_result(gate, 37 + flow));
        TD_CHECK_EQ(TD_DONE, td_completion_source_set_result(gate, 1));
        TD_CHECK_EQ(TD_E_STALE, td_task_i64_get(in, &o));       /* consumed by the await */
        TD_CHECK_EQ(TD_OK, td_task_i64_get(t, &o));
        TD_CHECK_EQ(TD_SUCCEEDED, o.status);
        TD_CHECK_EQ(42 + flow, o.value);

        td_completion_source_reset(gate);
        in = td_completion_source_task_i64(gate);
        td_runner *r = td_runner_rent(&last_method);
        TD_FRAME(r, last_frame)->in = in;
        t = td_runner_start_i64(r);
        TD_CHECK(t.task.source != NULL);
        TD_CHECK_EQ(TD_OK, td_completion_source_set_result(gate, 70 + flow));
        TD_CHECK_EQ(TD_E_STALE, td_task_i64_get(in, &o));
        TD_CHECK_EQ(TD_OK, td_task_i64_get(t, &o));
        TD_CHECK_EQ(70 + flow, o.value);

        td_completion_source_reset(gate);                      /* nobody awaits: kept */
        in = td_completion_source_task_i64(gate);
        TD_CHECK_EQ(TD_OK, td_completion_source_set_result(gate, 9));
        TD_CHECK_EQ(TD_OK, td_task_i64_get(in, &o));
        TD_CHECK_EQ(9, o.value);
        TD_CHECK_EQ(TD_E_STALE, td_task_i64_get(in, &o));
    }
    td_flow_set(0);
    td_completion_source_free(gate);
}

/* Resumes with the context current at its suspension when flow is on, the completer's when it
 * is off: the owned registration (td_runner_register_owned_, one test of
 * td_main_registrar_thread_ for both the writer and flow) must leave flow-on suspensions to the
 * path that captures. Both awaits, TD_AWAIT and TD_AWAIT_VALUE, on completion sources the main
 * thread owns. */
typedef struct { td_task_i64 first, second; void *seen_first, *seen_second; int64_t got; } seen_frame;
static void seen_step(td_runner *r, seen_frame *f)
{
    TD_BEGIN(r);
    TD_AWAIT(r, f->first.task);
    f->seen_first = td_context_current();
    TD_AWAIT_VALUE(r, f->second, f->got);
    f->seen_second = td_context_current();
    TD_RETURN_VALUE(r, f->got);
    TD_END(r);
}
TD_METHOD_DEFINE(seen, seen_frame, seen_step);

static void flow_captures_at_the_owned_suspension(void)
{
    td_completion_source *first = td_completion_source_new(), *second = td_completion_source_new();
    int at_start = 0, at_completion = 0;
    td_outcome o;
    for (int flow = 0; flow < 2; flow++) {
        td_flow_set(flow);
        td_completion_source_reset(first);
        td_completion_source_reset(second);
        td_context_set(&at_start);
        td_runner *r = td_runner_rent(&seen_method);
        seen_frame *f = TD_FRAME(r, seen_frame);
        f->first = td_completion_source_task_i64(first);
        f->second = td_completion_source_task_i64(second);
        td_task_i64 t;
        TD_METHOD_START_I64(seen, r, t);
        TD_CHECK(t.task.source != NULL);
        td_context_set(&at_completion);
        TD_CHECK_EQ(TD_OK, td_completion_source_set_result(first, 5));
        TD_CHECK(f->seen_first == (flow ? (void *)&at_start : (void *)&at_completion));
        TD_CHECK(td_context_current() == &at_completion);    /* the completer's, restored */
        td_context_set(NULL);
        TD_CHECK_EQ(TD_OK, td_completion_source_set_result(second, 6));
        TD_CHECK(f->seen_second == (flow ? (void *)&at_start : NULL));
        TD_CHECK(td_context_current() == NULL);
        TD_CHECK_EQ(TD_OK, td_task_i64_get(t, &o));
        TD_CHECK_EQ(TD_SUCCEEDED, o.status);
        TD_CHECK_EQ(6, o.value);
    }
    td_flow_set(0);
    td_completion_source_free(first);
    td_completion_source_free(second);
}

static void untyped_methods(void)
{
    td_runner *r = td_runner_rent(&plain_method);
    TD_FRAME(r, plain_frame)->a = td_completed();
    td_task t = td_runner_start(r);
    TD_CHECK(t.source == NULL);

    td_completion_source *gate = td_completion_source_new();
    r = td_runner_rent(&plain_method);
    TD_FRAME(r, plain_frame)->a = td_completion_source_task(gate);
    TD_FRAME(r, plain_frame)->fail = 1;
    t = td_runner_start(r);
    TD_CHECK(t.source != NULL);
    td_completion_source_set_result(gate, 0);
    td_outcome o;
    TD_CHECK_EQ(TD_OK, td_task_get(t, &o));
    TD_CHECK_EQ(TD_FAULTED, o.status);
    TD_CHECK_EQ(TD_ERR_USER + 2, o.error.code);
    td_completion_source_free(gate);
}

/* Synchronous completion inside td_runner_start (no CAS on the word): a success returns a
 * source-free task; a fault or a propagated cancellation is published for the caller, with
 * its token, and consumed once. An await of a completed task keeps the synchronous mode;
 * after a real suspension the completion goes through the protocol. */
static void synchronous_fault_and_cancel(void)
{
    td_runner *r = td_runner_rent(&plain_method);
    TD_FRAME(r, plain_frame)->a = td_completed();
    TD_FRAME(r, plain_frame)->fail = 1;
    td_task t = td_runner_start(r);
    TD_CHECK(t.source == &r->source);
    td_status st;
    TD_CHECK_EQ(TD_OK, td_task_status(t, &st));
    TD_CHECK_EQ(TD_FAULTED, st);
    td_outcome o;
    TD_CHECK_EQ(TD_OK, td_task_get(t, &o));
    TD_CHECK_EQ(TD_FAULTED, o.status);
    TD_CHECK_EQ(TD_ERR_USER + 2, o.error.code);
    TD_CHECK_EQ(TD_E_STALE, td_task_get(t, &o));
    TD_CHECK(r->sync == NULL);

    /* A propagated cancellation (the awaited task was canceled before the start). */
    r = td_runner_rent(&plain_method);
    TD_FRAME(r, plain_frame)->a = td_from_canceled(NULL);
    t = td_runner_start(r);
    TD_CHECK(t.source == &r->source);
    TD_CHECK_EQ(TD_OK, td_task_get(t, &o));
    TD_CHECK_EQ(TD_CANCELED, o.status);

    /* Typed success after awaiting an already-completed source: no source, value inline. */
    td_completion_source *gate = td_completion_source_new();
    td_completion_source_set_result(gate, 40);
    td_task_i64 v = start_add(td_completion_source_task_i64(gate), 2);
    TD_CHECK(v.task.source == NULL);
    TD_CHECK_EQ(42, v.value);
    /* After a suspension: completed by the gate, through the word. */
    td_completion_source_reset(gate);
    v = start_add(td_completion_source_task_i64(gate), 5);
    TD_CHECK(v.task.source != NULL);
    TD_CHECK(((td_runner *)v.task.source)->sync == NULL);
    TD_CHECK_EQ(TD_OK, td_completion_source_set_result(gate, 1));
    TD_CHECK_EQ(TD_OK, td_task_i64_get(v, &o));
    TD_CHECK_EQ(6, o.value);
    td_completion_source_free(gate);
}

static void runner_pool_capacity(void)
{
    td_method_register(&add_method);
    TD_CHECK_EQ(TD_OK, td_set_runner_pool_capacity(2));
    TD_CHECK_EQ(2, td_pool_capacity(&add_method.pool));
    td_completion_source *gates[4];
    td_task_i64 ts[4];
    for (int i = 0; i < 4; i++) {
        gates[i] = td_completion_source_new();
        ts[i] = start_add(td_completion_source_task_i64(gates[i]), i);
    }
    for (int i = 0; i < 4; i++) {
        td_completion_source_set_result(gates[i], 1);
        td_task_forget_result(ts[i].task);
        td_completion_source_free(gates[i]);
    }
    TD_CHECK_EQ(2, td_pool_count(&add_method.pool));   /* two kept, two freed */
    TD_CHECK_EQ(TD_OK, td_set_runner_pool_capacity(TD_DEFAULT_RUNNER_POOL_CAPACITY));
}

/* Release clears every byte of the frame, whatever its size: small frames word by word
 * (up to four words inline: 8, 16, 24 and 32 bytes), larger ones with memset; odd sizes
 * round up to a word. */
#define FILL_METHOD(n)                                                                   \
    typedef struct { unsigned char b[n]; } fill##n##_frame;                              \
    static void fill##n##_step(td_runner *r, fill##n##_frame *f)                         \
    {                                                                                    \
        TD_BEGIN(r);                                                                     \
        memset(f->b, 0xAB, sizeof f->b);                                                 \
        TD_END(r);                                                                       \
    }                                                                                    \
    TD_METHOD_DEFINE(fill##n, fill##n##_frame, fill##n##_step);
FILL_METHOD(1)
FILL_METHOD(3)
FILL_METHOD(8)
FILL_METHOD(12)
FILL_METHOD(20)
FILL_METHOD(32)
FILL_METHOD(33)
FILL_METHOD(40)
FILL_METHOD(200)

static int frame_cleared_after_release(td_method *m)
{
    td_runner *r = td_runner_rent(m);
    if (r == NULL || td_runner_start(r).source != NULL)
        return 0;
    /* synchronous success: released into the pool (not freed), so it may be read */
    const unsigned char *b = (const unsigned char *)td_runner_frame(r);
    for (uint32_t i = 0; i < m->frame_size; i++)
        if (b[i] != 0)
            return 0;
    td_runner *again = td_runner_rent(m);   /* it is the next rental */
    td_runner_start(again);                 /* back to the pool */
    return again == r;
}

/* The same after a suspension: the runner is pooled by its success, its frame (the step's
 * out parameters) readable until the consumption, and the rent that takes it again clears
 * every byte, whatever the size (at least TD_RUNNER_MIN_FRAME_BYTES_ at once, else memset). */
#define FILL_LATE_METHOD(n)                                                              \
    typedef struct { td_completion_source *gate; unsigned char b[n]; } fill_late##n##_frame; \
    static void fill_late##n##_step(td_runner *r, fill_late##n##_frame *f)               \
    {                                                                                    \
        TD_BEGIN(r);                                                                     \
        TD_AWAIT(r, td_completion_source_task(f->gate));                                 \
        memset(f->b, 0xAB, sizeof f->b);                                                 \
        TD_END(r);                                                                       \
    }                                                                                    \
    TD_METHOD_DEFINE(fill_late##n, fill_late##n##_frame, fill_late##n##_step);
FILL_LATE_METHOD(1)
FILL_LATE_METHOD(24)
FILL_LATE_METHOD(25)
FILL_LATE_METHOD(200)

/* Every fill_late frame: the gate, then `bytes` filled by the step. */
#define FILL_LATE_GATE(r) (*(td_completion_source **)td_runner_frame(r))
#define FILL_LATE_BYTES(r) ((const unsigned char *)td_runner_frame(r) + sizeof(td_completion_source *))

static int frame_cleared_at_rent_after_success(td_method *m, uint32_t bytes)
{
    td_completion_source *gate = td_completion_source_new();
    td_runner *r = td_runner_rent(m);
    int ok = r != NULL && gate != NULL;
    if (ok) {
        FILL_LATE_GATE(r) = gate;
        td_task t = td_runner_start(r);
        ok = t.source == &r->source && td_completion_source_set_result(gate, 0) == TD_OK;
        for (uint32_t i = 0; ok && i < bytes; i++)  /* completed, not consumed: as left */
            ok = FILL_LATE_BYTES(r)[i] == 0xAB;
        td_outcome o;
        ok = ok && td_task_get(t, &o) == TD_OK && o.status == TD_SUCCEEDED;
        td_runner *again = td_runner_rent(m);       /* it is the next rental */
        ok = ok && again == r;
        const unsigned char *all = (const unsigned char *)td_runner_frame(again);
        for (uint32_t i = 0; ok && i < m->frame_size; i++)
            ok = all[i] == 0;
        td_completion_source_reset(gate);
        ok = ok && td_completion_source_set_result(gate, 0) == TD_OK;
        FILL_LATE_GATE(again) = gate;
        ok = ok && td_runner_start(again).source == NULL;   /* synchronous: pooled again */
    }
    td_completion_source_free(gate);
    return ok;
}

static void rent_clears_frames_after_success(void)
{
    TD_CHECK(frame_cleared_at_rent_after_success(&fill_late1_method, 1));
    TD_CHECK(frame_cleared_at_rent_after_success(&fill_late24_method, 24));
    TD_CHECK(frame_cleared_at_rent_after_success(&fill_late25_method, 25));
    TD_CHECK(frame_cleared_at_rent_after_success(&fill_late200_method, 200));
}

static void release_clears_frames_of_every_size(void)
{
    td_method *ms[] = { &fill1_method, &fill3_method, &fill8_method, &fill12_method, &fill20_method,
                        &fill32_method, &fill33_method, &fill40_method, &fill200_method };
    for (size_t i = 0; i < sizeof ms / sizeof ms[0]; i++) {
        td_runner *warm = td_runner_rent(ms[i]);        /* a pooled runner to reuse */
        td_runner_start(warm);
        TD_CHECK(frame_cleared_after_release(ms[i]));
    }
}

/* With flow on, awaiting a task that is already complete captures the context, then the
 * registration is refused (TD_DONE) and the step goes on: nothing may resume in that context
 * later, so the refused registration clears it (the release no longer resets it). */
typedef struct { td_completion_source *cs; } await_done_frame;
static void await_done_step(td_runner *r, await_done_frame *f)
{
    TD_BEGIN(r);
    TD_AWAIT(r, td_completion_source_task(f->cs));
    TD_END(r);
}
TD_METHOD_DEFINE(await_done, await_done_frame, await_done_step);

static void refused_registration_leaves_no_flow(void)
{
    int ctx_value = 0;
    td_completion_source *cs = td_completion_source_new();
    TD_CHECK(cs != NULL);
    TD_CHECK_EQ(TD_OK, td_completion_source_set_result(cs, 1));
    td_flow_set(1);
    td_context_set(&ctx_value);
    td_runner *r = td_runner_rent(&await_done_method);
    TD_FRAME(r, await_done_frame)->cs = cs;
    td_task t = td_runner_start(r);
    td_flow_set(0);
    td_context_set(NULL);
    TD_CHECK(t.source == NULL);                 /* completed in the start, runner pooled */
    TD_CHECK_EQ(0, r->flowed);                  /* pooled runners may be read (see above) */
    TD_CHECK(r->context == NULL);
    td_runner *again = td_runner_rent(&await_done_method);
    TD_CHECK(again == r);
    td_completion_source_reset(cs);
    TD_FRAME(again, await_done_frame)->cs = cs;
    td_task t2 = td_runner_start(again);         /* flow off: suspends on the pending source */
    TD_CHECK(t2.source != NULL);
    TD_CHECK_EQ(0, again->flowed);
    TD_CHECK_EQ(TD_OK, td_completion_source_set_result(cs, 2));
    td_outcome o;
    TD_CHECK_EQ(TD_OK, td_task_get(t2, &o));
    TD_CHECK_EQ(TD_SUCCEEDED, o.status);
    td_completion_source_free(cs);
}

/* A success leaves the error slots unwritten (no record in its word): a runner that faulted
 * before, re-rented and succeeding, must read a zero record on every path, here the shared
 * handle's consumption (the out-of-line protocol, not the inline query). */
static void success_after_fault_reads_no_error(void)
{
    td_completion_source *gate = td_completion_source_new();
    td_task_i64 t = start_add(td_completion_source_task_i64(gate), 1);
    td_runner *r = (td_runner *)t.task.source;
    TD_CHECK(r != NULL);
    TD_CHECK_EQ(TD_OK, td_completion_source_set_error(gate, TD_ERR_USER + 7, "gate failed"));
    td_outcome o;
    TD_CHECK_EQ(TD_OK, td_task_i64_get(t, &o));
    TD_CHECK_EQ(TD_FAULTED, o.status);
    TD_CHECK_EQ(TD_ERR_USER + 7, o.error.code);
    td_completion_source_reset(gate);
    td_task_i64 t2 = start_add(td_completion_source_task_i64(gate), 1);
    TD_CHECK(t2.task.source == &r->source);     /* the same runner, its slots as the fault left them */
    td_shared *h = td_task_share_i64(t2);
    TD_CHECK(h != NULL);
    TD_CHECK_EQ(TD_OK, td_completion_source_set_result(gate, 41));
    TD_CHECK_EQ(TD_OK, td_shared_outcome(h, &o));
    TD_CHECK_EQ(TD_SUCCEEDED, o.status);
    TD_CHECK_EQ(42, o.value);
    TD_CHECK_EQ(0, o.error.code);
    TD_CHECK(o.error.message == NULL);
    TD_CHECK(o.error.cancel == NULL);
    td_shared_release(h);
    td_completion_source_free(gate);
}

/* A method descriptor built by hand, not by TD_METHOD_DEFINE, has no runner operations (no
 * release, no recycle): renting from it is refused with NULL, every time, and nothing leaks. */
static void *manual_slots[2 * 4];
static void hand_built_method_is_refused(void)
{
    td_method manual = { "manual", (uint32_t)sizeof(add_frame), (td_step_fn)add_step,
                         TD_POOL_STATIC_INIT(manual_slots, 4, TD_RUNNER_SIZE_(sizeof(add_frame)), "manual"),
                         0, 0, NULL, NULL, NULL, NULL };
    TD_CHECK(td_runner_rent(&manual) == NULL);
    TD_CHECK(td_runner_rent(&manual) == NULL);
    TD_CHECK((td_runner_rent)(&manual) == NULL);
    TD_CHECK_EQ(0, td_pool_count(&manual.pool));                 /* nothing pooled */
    TD_CHECK_EQ(TD_OK, td_pool_prefill(&manual.pool, 2));        /* zeroed, in the shared segment */
    TD_CHECK(td_runner_rent(&manual) == NULL);
    TD_CHECK(td_runner_rent(&manual) == NULL);
    TD_CHECK(td_runner_rent(&manual) == NULL);
    TD_CHECK_EQ(0, td_pool_count(&manual.pool));
    TD_CHECK_EQ(TD_OK, td_pool_set_capacity(&manual.pool, 0));   /* frees what it holds */
}

/* Prefilled runners (zeroed) are set up at their first rental, and a method's pool keeps
 * them in the shared segment until they come back from a rental (pool.h). */
static void prefilled_runners_are_set_up(void)
{
    uint32_t held = td_pool_count(&plain_method.pool);
    TD_CHECK_EQ(TD_OK, td_pool_prefill(&plain_method.pool, held + 3));
    TD_CHECK_EQ(held + 3, td_pool_count(&plain_method.pool));
    td_runner *rs[8];
    uint32_t n = held + 3 < 8 ? held + 3 : 8;
    for (uint32_t i = 0; i < n; i++) {
        rs[i] = td_runner_rent(&plain_method);
        TD_CHECK(rs[i] != NULL);
        TD_CHECK(rs[i]->method == &plain_method);
        TD_CHECK(rs[i]->source.ops == &plain_method.ops->source);
        TD_CHECK_EQ(TD_SOURCE_OWNED_MAIN, rs[i]->source.owned);
    }
    for (uint32_t i = 0; i < n; i++) {
        td_task t = td_runner_start(rs[i]);
        td_outcome o;
        TD_CHECK_EQ(TD_OK, td_task_get(t, &o));
        TD_CHECK_EQ(TD_SUCCEEDED, o.status);
    }
    TD_CHECK(td_pool_count(&plain_method.pool) >= n);
}

/* The starts TD_METHOD_DEFINE generates (TD_METHOD_START / _I64): the step called directly,
 * a synchronous success recycled by the method's own recycle. The same answers as
 * td_runner_start on every outcome, and with tracking or flow on (the generic observed path),
 * under both compilers (tcc writes the task through a pointer). */
static void generated_starts(void)
{
    /* typed: synchronous success, the runner back in its pool with its frame cleared */
    td_runner *r = td_runner_rent(&add_method);
    TD_FRAME(r, add_frame)->gate = td_from_result(40);
    TD_FRAME(r, add_frame)->in = 2;
    td_task_i64 v;
    v.task.source = &r->source;                  /* overwritten by the start */
    v.value = -1;
    TD_METHOD_START_I64(add, r, v);
    TD_CHECK(v.task.source == NULL);
    TD_CHECK_EQ(42, v.value);
    TD_CHECK_EQ(0, TD_FRAME(r, add_frame)->in);  /* pooled (not freed): may be read */
    TD_CHECK(td_runner_rent(&add_method) == r);   /* and it is the next rental */

    /* typed: a suspension, resumed from its resume point, then a second use of the runner
     * that starts again from the beginning (the start sets the resume point) */
    td_completion_source *gate = td_completion_source_new();
    for (int round = 0; round < 2; round++) {
        td_completion_source_reset(gate);
        TD_FRAME(r, add_frame)->gate = td_completion_source_task_i64(gate);
        TD_FRAME(r, add_frame)->in = 10 * (round + 1);
        uint32_t version = td_source_token(&r->source);
        TD_METHOD_START_I64(add, r, v);
        TD_CHECK(v.task.source == &r->source);
        TD_CHECK_EQ(version, v.task.token);
        TD_CHECK(r->sync == NULL);
        td_outcome o;
        TD_CHECK_EQ(TD_E_PENDING, td_task_i64_get(v, &o));
        TD_CHECK_EQ(TD_OK, td_completion_source_set_result(gate, 5));
        TD_CHECK_EQ(TD_OK, td_task_i64_get(v, &o));
        TD_CHECK_EQ(TD_SUCCEEDED, o.status);
        TD_CHECK_EQ(10 * (round + 1) + 5, o.value);
        TD_CHECK_EQ(TD_E_STALE, td_task_i64_get(v, &o));
        r = td_runner_rent(&add_method);
    }

    /* untyped: a synchronous fault is published with the runner's token, consumed once */
    td_runner *p = td_runner_rent(&plain_method);
    TD_FRAME(p, plain_frame)->a = td_completed();
    TD_FRAME(p, plain_frame)->fail = 1;
    td_task t;
    TD_METHOD_START(plain, p, t);
    TD_CHECK(t.source == &p->source);
    td_outcome o;
    TD_CHECK_EQ(TD_OK, td_task_get(t, &o));
    TD_CHECK_EQ(TD_FAULTED, o.status);
    TD_CHECK_EQ(TD_ERR_USER + 2, o.error.code);
    TD_CHECK_EQ(TD_E_STALE, td_task_get(t, &o));
    /* untyped: a synchronous success is source-free */
    p = td_runner_rent(&plain_method);
    TD_FRAME(p, plain_frame)->a = td_completed();
    TD_METHOD_START(plain, p, t);
    TD_CHECK(t.source == NULL);
    TD_CHECK(td_runner_rent(&plain_method) == p);
    TD_METHOD_START(plain, p, t);                 /* the frame cleared: back to the pool */
    TD_CHECK(t.source == NULL);

    /* tracking on: the observed path records the rental until the task is consumed */
    uint32_t tracked = td_tracking_count();
    td_tracking_enable(1);
    td_completion_source_reset(gate);
    TD_FRAME(r, add_frame)->gate = td_completion_source_task_i64(gate);
    TD_FRAME(r, add_frame)->in = 1;
    TD_METHOD_START_I64(add, r, v);
    TD_CHECK(v.task.source == &r->source);
    TD_CHECK_EQ(tracked + 1, td_tracking_count());
    td_tracking_enable(0);
    TD_CHECK_EQ(TD_OK, td_completion_source_set_result(gate, 1));
    TD_CHECK_EQ(TD_OK, td_task_i64_get(v, &o));
    TD_CHECK_EQ(2, o.value);
    TD_CHECK_EQ(tracked, td_tracking_count());

    /* flow on: the caller's context survives a synchronous success */
    int ctx = 0;
    td_flow_set(1);
    td_context_set(&ctx);
    r = td_runner_rent(&add_method);
    TD_FRAME(r, add_frame)->gate = td_from_result(3);
    TD_METHOD_START_I64(add, r, v);
    TD_CHECK(td_context_current() == &ctx);
    td_context_set(NULL);
    td_flow_set(0);
    TD_CHECK(v.task.source == NULL);
    TD_CHECK_EQ(3, v.value);
    td_completion_source_free(gate);
}

int main(void)
{
    if (td_runtime_init(NULL) != TD_OK)
        return 2;
    TD_RUN(synchronous_completion);
    TD_RUN(suspends_and_resumes);
    TD_RUN(nested_methods_and_faults);
    TD_RUN(outcome_without_propagation);
    TD_RUN(completion_hands_the_result_over);
    TD_RUN(flow_captures_at_the_owned_suspension);
    TD_RUN(untyped_methods);
    TD_RUN(synchronous_fault_and_cancel);
    TD_RUN(runner_pool_capacity);
    TD_RUN(release_clears_frames_of_every_size);
    TD_RUN(rent_clears_frames_after_success);
    TD_RUN(refused_registration_leaves_no_flow);
    TD_RUN(hand_built_method_is_refused);
    TD_RUN(prefilled_runners_are_set_up);
    TD_RUN(success_after_fault_reads_no_error);
    TD_RUN(generated_starts);
    td_runtime_shutdown();
    return TD_TEST_SUMMARY();
}
