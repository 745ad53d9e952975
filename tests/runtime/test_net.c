/*
 * test_net.c - behaviours the mutation check (scripts/mutate.py, tests/mutation/mutants.txt)
 * found unguarded by the other tests (issue 40): each test names the mutant it kills.
 * Single-threaded; the cross-thread ones are in test_threads_net.c.
 */
#include "td_test.h"
#include "td_alloc_count.h"
#include "td_test_runtime.h"
#include "td_test_gated.h"
#include <tandem/tandem.h>

/* The main thread's window flag (ownership.c): 1 only while a window is open. Every public
 * call returns with it closed, else another thread's td_source_disown_ spins forever. */
extern volatile uint32_t td_main_busy_;

static void noop(void *arg) { (void)arg; }

/* I01: the owner segment holds `capacity` returns (pool.h: local_limit is capacity less the
 * shared segment's count), not one fewer. */
static void pool_owner_segment_holds_capacity(void)
{
    enum { CAP = 4 };
    td_pool p;
    void *obj[CAP];
    TD_CHECK_EQ(TD_OK, td_pool_init(&p, "net", 32, CAP));
    TD_CHECK_EQ(CAP, p.local_limit);
    for (int i = 0; i < CAP; i++)
        TD_CHECK((obj[i] = td_pool_rent(&p)) != NULL);
    for (int i = 0; i < CAP; i++)
        td_pool_return(&p, obj[i]);
    uint32_t local = p.local_count, shared = p.count;
    td_pool_destroy(&p);
    TD_CHECK_EQ(CAP, local);         /* every return of the owner in its own segment */
    TD_CHECK_EQ(0, shared);
}

/* F03: when_any_i64's winner index is the winner's, whatever a late loser does. */
static void when_any_winner_survives_late_loser(void)
{
    td_completion_source *g0 = td_completion_source_new(), *g1 = td_completion_source_new();
    td_task_i64 in[2] = { td_completion_source_task_i64(g0), td_completion_source_task_i64(g1) };
    int winner = -1;
    td_task_i64 any = td_when_any_i64(in, 2, &winner);
    td_completion_source_set_result(g1, 11);
    td_outcome o;
    TD_CHECK_EQ(TD_OK, td_task_i64_get(any, &o));
    TD_CHECK_EQ(11, o.value);
    TD_CHECK_EQ(1, winner);
    td_completion_source_set_result(g0, 10);     /* the late loser */
    td_completion_source_free(g0);
    td_completion_source_free(g1);
    TD_CHECK_EQ(1, winner);
}

/* F04: a producer that completed before td_timeout wins, even against a wait token already
 * cancelled (the producer is subscribed first, as td_attach_cancel's input is). */
static void timeout_completed_producer_beats_delay(void)
{
    td_cancel_source *cs = td_cancel_source_new();
    td_cancel_source_cancel(cs);
    td_wait_options opt = td_wait_defaults();
    opt.cancel = td_cancel_source_token(cs);
    td_task_i64 t = td_timeout_i64(td_from_result(7), 0, TD_CLOCK_REALTIME, 1, &opt);
    td_outcome o;
    int rc = td_task_i64_get(t, &o);
    td_loop_run_frame(td_loop_main());
    td_cancel_source_free(cs);
    TD_CHECK_EQ(TD_OK, rc);
    TD_CHECK_EQ(TD_SUCCEEDED, o.status);
    TD_CHECK_EQ(7, o.value);
}

/* M02: a wait consumed and recycled leaves no registration on its token: cancelling the
 * token later must not cancel the wait that reuses the object. */
static void recycled_wait_leaves_no_registration(void)
{
    td_cancel_source *cs = td_cancel_source_new();
    td_wait_options opt = td_wait_defaults();
    opt.cancel = td_cancel_source_token(cs);
    opt.cancel_immediately = 1;
    td_task d = td_delay(0, TD_CLOCK_REALTIME, &opt);
    td_loop_run_frame(td_loop_main());
    td_outcome o;
    TD_CHECK_EQ(TD_OK, td_task_get(d, &o));
    TD_CHECK_EQ(TD_SUCCEEDED, o.status);
    td_cancel_source *later = td_cancel_source_new();
    td_wait_options lo = td_wait_defaults();
    lo.cancel = td_cancel_source_token(later);
    td_task next = td_delay(1000000000000LL, TD_CLOCK_REALTIME, &lo);   /* reuses the wait */
    td_cancel_source_cancel(cs);
    td_status st = status_of(next);
    td_cancel_source_cancel(later);                 /* ends it: nothing left for shutdown */
    td_loop_run_frame(td_loop_main());
    int rc = td_task_get(next, &o);
    td_cancel_source_free(cs);
    td_cancel_source_free(later);
    TD_CHECK_EQ(TD_PENDING, st);
    TD_CHECK_EQ(TD_OK, rc);
}

/* F02: the same for a combinator (td_attach_cancel registers on its token). */
static void recycled_combinator_leaves_no_registration(void)
{
    td_cancel_source *cs = td_cancel_source_new();
    td_completion_source *g = td_completion_source_new(), *h = td_completion_source_new();
    td_task_i64 a = td_attach_cancel_i64(td_completion_source_task_i64(g), td_cancel_source_token(cs));
    td_completion_source_set_result(g, 5);
    td_outcome o;
    TD_CHECK_EQ(TD_OK, td_task_i64_get(a, &o));
    TD_CHECK_EQ(5, o.value);
    td_task in[1] = { td_completion_source_task(h) };
    td_task_i64 any = td_when_any(in, 1);           /* reuses the promise */
    td_cancel_source_cancel(cs);
    td_status st = status_of(any.task);
    td_completion_source_set_result(h, 1);
    TD_CHECK_EQ(TD_OK, td_task_i64_get(any, &o));
    td_cancel_source_free(cs);
    td_completion_source_free(g);
    td_completion_source_free(h);
    TD_CHECK_EQ(TD_PENDING, st);
}

/* A02: td_future_free of a future never set drops the answer's ownership: the bridge goes
 * back to its pool (no allocation per round once warm; ASan's leak check too). */
static int future_round(td_cancel_source *cs)
{
    td_future *f = td_future_new();
    td_task_i64 t = td_future_task(f, td_cancel_source_token(cs));
    td_cancel_source_cancel(cs);
    td_outcome o;
    int rc = td_task_i64_get(t, &o);
    td_future_free(f);
    return rc == TD_OK && o.status == TD_CANCELED;
}

static void future_free_unset_returns_bridge(void)
{
    td_cancel_source *cs[4];
    for (int i = 0; i < 4; i++)
        cs[i] = td_cancel_source_new();
    int ok = future_round(cs[0]);
    uint32_t before = td_alloc_count();
    for (int i = 1; i < 4; i++)
        ok &= future_round(cs[i]);
    uint32_t allocs = td_alloc_count() - before;
    for (int i = 0; i < 4; i++)
        td_cancel_source_free(cs[i]);
    TD_CHECK(ok);
    if (td_alloc_counting())
        TD_CHECK_EQ(3, allocs);                  /* the three futures, nothing else */
}

/* D01: an unbounded channel whose ring wrapped keeps its order when it grows. */
static void channel_ring_grows_after_wrap(void)
{
    td_channel *ch = td_channel_create_unbounded();
    int64_t next_in = 0, next_out = 0, v;
    for (int i = 0; i < 16; i++)
        TD_CHECK_EQ(TD_OK, td_channel_try_write(ch, next_in++));
    for (int i = 0; i < 5; i++) {               /* the head moves on: the ring wraps */
        TD_CHECK_EQ(TD_OK, td_channel_try_read(ch, &v));
        TD_CHECK_EQ(next_out++, v);
    }
    for (int i = 0; i < 5 + 20; i++)             /* full again, then grown (twice) */
        TD_CHECK_EQ(TD_OK, td_channel_try_write(ch, next_in++));
    while (next_out < next_in) {
        TD_CHECK_EQ(TD_OK, td_channel_try_read(ch, &v));
        TD_CHECK_EQ(next_out++, v);
    }
    TD_CHECK(td_channel_try_read(ch, &v) != TD_OK);
    td_channel_free(ch);
}

/* E01: a set_result refused (TD_DONE) on an owned source closes the window it opened. */
static void refused_set_result_closes_window(void)
{
    td_completion_source *cs = td_completion_source_new();
    TD_CHECK_EQ(TD_OK, td_completion_source_set_result(cs, 1));
    int rc = td_completion_source_set_result(cs, 2);
    uint32_t busy = td_main_busy_;
    td_completion_source_free(cs);
    TD_CHECK_EQ(TD_DONE, rc);
    TD_CHECK_EQ(0, busy);
}

/* B01: the owned registration of a runner's resumption refused for a word that is not the
 * token (async.h: "else 0 with nothing done", td_runner_suspend_at_'s case of a source
 * awaited already) leaves the window closed. The inline suspension compares the word before
 * calling it, so the function is called here as td_runner_suspend_at_ does. */
static void owned_registration_mismatch_closes_window(void)
{
    static td_runner idle;           /* not touched when the registration is refused */
    td_completion_source *cs = td_completion_source_new();
    td_task t = td_completion_source_task(cs);
    TD_CHECK_EQ(TD_OK, td_task_on_completed(t, noop, NULL));
    uint32_t w = td_atomic_load_u32(&t.source->word);
    int rc = td_runner_register_owned_(&idle, t.source, t.token, w);
    uint32_t busy = td_main_busy_;
    td_completion_source_set_result(cs, 3);
    td_completion_source_free(cs);
    TD_CHECK_EQ(0, rc);
    TD_CHECK_EQ(0, busy);
}

/* I02: a pool holds at most its capacity on one thread (pool.h: only returns racing on two
 * threads may keep one more): the return past it frees the object. */
static void pool_holds_at_most_capacity(void)
{
    enum { CAP = 4 };
    td_pool p;
    void *obj[CAP + 1];
    TD_CHECK_EQ(TD_OK, td_pool_init(&p, "net", 32, CAP));
    for (int i = 0; i < CAP + 1; i++)
        TD_CHECK((obj[i] = td_pool_rent(&p)) != NULL);
    for (int i = 0; i < CAP + 1; i++)
        td_pool_return(&p, obj[i]);
    uint32_t held = td_pool_count(&p);
    uint64_t freed = p.freed;
    td_pool_destroy(&p);
    TD_CHECK_EQ(CAP, held);
    TD_CHECK_EQ(1, freed);
}

/* C02: unregistering a registration again, after its node went on to serve another one
 * (the free list hands the node out again at once), leaves that other registration alone. */
static int c02_fired;
static void c02_fire(void *arg) { (void)arg; c02_fired++; }

static void stale_unregister_leaves_next_registration(void)
{
    td_cancel_source *a = td_cancel_source_new(), *b = td_cancel_source_new();
    td_cancel_registration ra = td_cancel_register(td_cancel_source_token(a), c02_fire, NULL);
    td_cancel_unregister(ra);
    td_cancel_registration rb = td_cancel_register(td_cancel_source_token(b), c02_fire, NULL);
    td_cancel_unregister(ra);                    /* stale: must not touch rb */
    c02_fired = 0;
    td_cancel_source_cancel(b);
    int fired = c02_fired;
    td_cancel_unregister(rb);
    td_cancel_source_free(a);
    td_cancel_source_free(b);
    TD_CHECK_EQ(1, fired);
}

/* E02: a manual source's success handed to the runner awaiting it is consumed by that
 * hand-over: the task read again with its token is stale (task.h), not a second success. */
TD_TEST_GATED_METHOD(await_in);

static void handed_over_result_is_consumed(void)
{
    td_completion_source *cs = td_completion_source_new();
    td_task_i64 t = td_completion_source_task_i64(cs);
    td_runner *r = td_runner_rent(&await_in_method);
    TD_FRAME(r, gate_frame)->gate = t;
    td_task_i64 run = td_runner_start_i64(r);
    TD_CHECK_EQ(TD_OK, td_completion_source_set_result(cs, 9));
    td_outcome o;
    TD_CHECK_EQ(TD_OK, td_task_i64_get(run, &o));
    TD_CHECK_EQ(9, o.value);
    int again = td_task_i64_get(t, &o);
    td_completion_source_free(cs);
    TD_CHECK_EQ(TD_E_STALE, again);
}

/* F07: when_all faults with a fault even when a cancellation came first (compose.h: "faults
 * with the first fault, else cancels"). */
static void when_all_fault_beats_earlier_cancel(void)
{
    td_completion_source *g0 = td_completion_source_new(), *g1 = td_completion_source_new();
    td_task in[2] = { td_completion_source_task(g0), td_completion_source_task(g1) };
    td_task all = td_when_all(in, 2);
    td_completion_source_set_canceled(g0, NULL);
    td_completion_source_set_error(g1, 42, "boom");
    td_outcome o;
    int rc = td_task_get(all, &o);
    td_completion_source_free(g0);
    td_completion_source_free(g1);
    TD_CHECK_EQ(TD_OK, rc);
    TD_CHECK_EQ(TD_FAULTED, o.status);
    TD_CHECK_EQ(42, o.error.code);
}

/* A01, D02: a bridge cancelled while the answer still holds it, and a channel read consumed
 * while its queue still holds it: consumed once, the task reads stale (afdd410). */
static td_adapt_done_fn held_done;
static void *held_cb_arg;
static void hold_answer(void *arg, td_adapt_done_fn done, void *cb_arg)
{
    (void)arg;
    held_done = done;
    held_cb_arg = cb_arg;
}

static void cancelled_bridge_second_get_is_stale(void)
{
    td_cancel_source *cs = td_cancel_source_new();
    td_task_i64 t = td_from_callback(hold_answer, NULL, td_cancel_source_token(cs));
    td_cancel_source_cancel(cs);
    td_outcome o;
    int first = td_task_i64_get(t, &o);
    int second = td_task_i64_get(t, &o);
    held_done(held_cb_arg, TD_ADAPT_OK, 1);      /* the late answer drops the last owner */
    td_cancel_source_free(cs);
    TD_CHECK_EQ(TD_OK, first);
    TD_CHECK_EQ(TD_E_STALE, second);
}

/* The channel's queue drops its ownership only after the completion has run the read's
 * continuation: a consumer there reads while the queue still holds the operation. */
static td_task_i64 read_task;
static int read_rc[2];
static void get_twice(void *arg)
{
    td_outcome o;
    (void)arg;
    read_rc[0] = td_task_i64_get(read_task, &o);
    read_rc[1] = td_task_i64_get(read_task, &o);
}

static void channel_read_second_get_in_continuation_is_stale(void)
{
    td_channel *ch = td_channel_create_unbounded();
    read_task = td_channel_read(ch, td_cancel_none());
    TD_CHECK_EQ(TD_OK, td_task_on_completed(read_task.task, get_twice, NULL));
    TD_CHECK_EQ(TD_OK, td_channel_try_write(ch, 5));
    td_channel_free(ch);
    TD_CHECK_EQ(TD_OK, read_rc[0]);
    TD_CHECK_EQ(TD_E_STALE, read_rc[1]);
}

/* K10: td_source_complete on the CAS path (a source nobody owns) with another version's
 * token is stale and leaves the pending version alone. */
static const td_source_ops custom_ops = { NULL, NULL, NULL, NULL, "net-custom" };

static void complete_with_other_token_is_stale(void)
{
    td_source s;
    td_source_init(&s, &custom_ops);
    uint32_t token = td_source_token(&s);
    int rc = td_source_complete(&s, token + TD_TOKEN_STEP, TD_SUCCEEDED, 1, NULL);
    td_status st = status_of(td_task_of(&s, token));
    TD_CHECK_EQ(TD_E_STALE, rc);
    TD_CHECK_EQ(TD_PENDING, st);
}

/* K09: a shared handle's take with an older version's token is stale, even when the source
 * is shared again at its next version (td_source_take_shared, task.h). */
static void custom_release(td_source *s) { td_source_recycle(s); }
static const td_source_ops shared_ops = { custom_release, NULL, NULL, NULL, "net-shared" };

static void take_shared_with_old_token_is_stale(void)
{
    td_source s;
    td_outcome o;
    td_source_init(&s, &shared_ops);
    uint32_t old = td_source_token(&s);
    TD_CHECK_EQ(TD_OK, td_source_mark_shared(&s, old, noop, NULL));
    TD_CHECK_EQ(TD_OK, td_source_complete(&s, old, TD_SUCCEEDED, 1, NULL));
    TD_CHECK_EQ(TD_OK, td_source_take_shared(&s, old, &o));      /* consumed: next version */
    uint32_t now = td_source_token(&s);
    TD_CHECK(now != old);
    TD_CHECK_EQ(TD_OK, td_source_mark_shared(&s, now, noop, NULL));
    TD_CHECK_EQ(TD_OK, td_source_complete(&s, now, TD_SUCCEEDED, 2, NULL));
    int rc = td_source_take_shared(&s, old, &o);
    TD_CHECK_EQ(TD_E_STALE, rc);
    TD_CHECK_EQ(TD_OK, td_source_take_shared(&s, now, &o));
    TD_CHECK_EQ(2, o.value);
}

/* J01: a create-from-writer stream disposed while its producer still runs and a move is
 * handed out: its dispose task, complete once the producer ends and consumed before the move,
 * reads stale when read again (afdd410's stream line). */
static td_completion_source *producer_gate;
static td_task gated_producer(td_stream_writer *w, td_cancel_token token, void *arg)
{
    (void)w;
    (void)token;
    (void)arg;
    return td_completion_source_task(producer_gate);
}

static void dispose_second_get_before_move_is_stale(void)
{
    producer_gate = td_completion_source_new();
    td_stream *st = td_stream_create(gated_producer, NULL, NULL, NULL);
    td_task_i64 move = td_stream_move_next(st);         /* starts the producer: pending */
    td_task done = td_stream_dispose(st);               /* waits for the producer */
    td_completion_source_set_result(producer_gate, 0);   /* the producer ends */
    td_outcome o;
    int first = td_task_get(done, &o);
    int second = td_task_get(done, &o);
    int moved = td_task_i64_get(move, &o);
    td_completion_source_free(producer_gate);
    TD_CHECK(done.source != NULL);                      /* a dispose that had to wait */
    TD_CHECK_EQ(TD_OK, first);
    TD_CHECK_EQ(TD_E_STALE, second);
    TD_CHECK_EQ(TD_OK, moved);
}

int main(void)
{
    td_runtime_init(NULL);
    TD_RUN(pool_owner_segment_holds_capacity);
    TD_RUN(when_any_winner_survives_late_loser);
    TD_RUN(timeout_completed_producer_beats_delay);
    TD_RUN(recycled_wait_leaves_no_registration);
    TD_RUN(recycled_combinator_leaves_no_registration);
    TD_RUN(future_free_unset_returns_bridge);
    TD_RUN(channel_ring_grows_after_wrap);
    TD_RUN(refused_set_result_closes_window);
    TD_RUN(owned_registration_mismatch_closes_window);
    TD_RUN(pool_holds_at_most_capacity);
    TD_RUN(stale_unregister_leaves_next_registration);
    TD_RUN(handed_over_result_is_consumed);
    TD_RUN(when_all_fault_beats_earlier_cancel);
    TD_RUN(cancelled_bridge_second_get_is_stale);
    TD_RUN(channel_read_second_get_in_continuation_is_stale);
    TD_RUN(complete_with_other_token_is_stale);
    TD_RUN(take_shared_with_old_token_is_stale);
    TD_RUN(dispose_second_get_before_move_is_stale);
    td_runtime_shutdown();
    return TD_TEST_SUMMARY();
}
