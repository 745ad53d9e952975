/* Runners pooled by their success (td_runner_succeed_, async.h): a runner that completes on
 * the main thread goes back to its pool at once, its word flagged TD_WORD_POOLED, and the
 * consumer only stores the next version. Checked here: the frame stays readable until the
 * consumption and is cleared by the rent that takes the runner again; a rent that meets a
 * runner not yet consumed sets it aside (parked) and takes it back once consumed, with no
 * allocation in steady state; a capacity change frees no runner whose task is unconsumed;
 * every consumption path (inline, out of line, forget, a shared handle) releases it; and a
 * worker consuming what the main thread completed hands the runner back to the main
 * thread's rent (built with TSan too). */
#include <tandem/tandem.h>
#include "td_test.h"
#include "td_test_runtime.h"
#include "td_test_gated.h"

TD_TEST_GATED_METHOD(pgated);

/* A frame larger than TD_RUNNER_MIN_FRAME_BYTES_: pooled at its consumption instead. */
typedef struct { td_task_i64 gate; int64_t v; int64_t pad[3]; } wide_frame;
static void wide_step(td_runner *r, wide_frame *f)
{
    TD_BEGIN(r);
    TD_AWAIT_VALUE(r, f->gate, f->v);
    TD_RETURN_VALUE(r, f->v);
    TD_END(r);
}
TD_METHOD_DEFINE(pwide, wide_frame, wide_step);

/* Start a gated runner of m on a fresh auto source; *gate gets the source. */
static td_task_i64 start_gated(td_method *m, td_auto_source **gate, td_runner **rout)
{
    td_auto_source *g = td_auto_source_rent();
    td_runner *r = td_runner_rent(m);
    TD_FRAME(r, gate_frame)->gate = td_auto_source_task_i64(g);
    *gate = g;
    if (rout)
        *rout = r;
    return td_runner_start_i64(r);
}

static int complete_gate(td_auto_source *g, int64_t v)
{
    return td_auto_source_set_result(g, td_auto_source_task(g).token, v);
}

static uint32_t word_of(td_runner *r) { return td_atomic_load_u32(&r->source.word); }

/* Without membarrier the main thread owns nothing (task.h) and every runner is pooled at its
 * consumption: the flag's checks hold only where the main thread writes plainly. */
#define POOLS_AT_SUCCESS (td_main_writer_thread_ != 0)
#define CHECK_POOLED(r) TD_CHECK(!POOLS_AT_SUCCESS || (word_of(r) & TD_WORD_POOLED))

static void pooled_at_success_cleared_at_rent(void)
{
    td_auto_source *g;
    td_runner *r;
    td_task_i64 t = start_gated(&pgated_method, &g, &r);
    uint32_t held = td_pool_count(&pgated_method.pool);
    TD_CHECK_EQ(TD_OK, complete_gate(g, 71));
    if (POOLS_AT_SUCCESS)
        TD_CHECK_EQ(held + 1, td_pool_count(&pgated_method.pool));    /* pooled by its success */
    CHECK_POOLED(r);
    TD_CHECK_EQ(71, TD_FRAME(r, gate_frame)->v);                  /* out parameters: as left */
    td_outcome o;
    TD_CHECK_EQ(TD_OK, td_task_i64_get(t, &o));
    TD_CHECK_EQ(71, o.value);
    TD_CHECK_EQ(TD_PENDING, (td_status)(word_of(r) & TD_WORD_STATUS_MASK));
    CHECK_POOLED(r);                                              /* frame not cleared yet */
    TD_CHECK_EQ(TD_E_STALE, td_task_i64_get(t, &o));
    td_runner *again = td_runner_rent(&pgated_method);
    TD_CHECK(again == r);
    TD_CHECK(!(word_of(r) & TD_WORD_POOLED));
    TD_CHECK_EQ(0, TD_FRAME(r, gate_frame)->v);
    TD_CHECK(TD_FRAME(r, gate_frame)->gate.task.source == NULL);
    TD_FRAME(r, gate_frame)->gate = td_from_result(3);
    TD_CHECK(td_runner_start_i64(r).task.source == NULL);         /* synchronous: pooled */

    /* A wide frame is pooled at its consumption (the release clears it). */
    td_runner *w = td_runner_rent(&pwide_method);
    td_auto_source *wg = td_auto_source_rent();
    TD_FRAME(w, wide_frame)->gate = td_auto_source_task_i64(wg);
    TD_FRAME(w, wide_frame)->pad[2] = 9;
    td_task_i64 wt = td_runner_start_i64(w);
    uint32_t wheld = td_pool_count(&pwide_method.pool);
    TD_CHECK_EQ(TD_OK, complete_gate(wg, 5));
    TD_CHECK(!(word_of(w) & TD_WORD_POOLED));
    TD_CHECK_EQ(wheld, td_pool_count(&pwide_method.pool));
    TD_CHECK_EQ(TD_OK, td_task_i64_get(wt, &o));
    TD_CHECK_EQ(5, o.value);
    TD_CHECK_EQ(wheld + 1, td_pool_count(&pwide_method.pool));
    TD_CHECK_EQ(0, TD_FRAME(w, wide_frame)->pad[2]);
}

/* Which runners the success pools is written into `owned` by the start
 * (TD_RUNNER_UNPOOLED_IF_): a wide frame through the generated start (its width a constant
 * there) and through the generic one, and a tracked runner of a small frame, are main-owned
 * but TD_SOURCE_OWNED_MAIN_UNPOOLED, so the success publishes without pooling (the
 * consumption's release pools them); an untracked small frame stays MAIN and is pooled at
 * its success. Without membarrier nothing is main-owned (task.h): SHARED throughout. */
static void start_marks_the_unpooled(void)
{
    td_outcome o;
    for (int generated = 0; generated < 2; generated++) {
        td_runner *w = td_runner_rent(&pwide_method);
        td_auto_source *g = td_auto_source_rent();
        td_task_i64 t;
        TD_FRAME(w, wide_frame)->gate = td_auto_source_task_i64(g);
        if (generated)
            TD_METHOD_START_I64(pwide, w, t);
        else
            t = td_runner_start_i64(w);
        TD_CHECK_EQ(POOLS_AT_SUCCESS ? TD_SOURCE_OWNED_MAIN_UNPOOLED : TD_SOURCE_OWNED_SHARED,
                    w->source.owned);
        uint32_t held = td_pool_count(&pwide_method.pool);
        TD_CHECK_EQ(TD_OK, complete_gate(g, 6 + generated));
        TD_CHECK(!(word_of(w) & TD_WORD_POOLED));
        TD_CHECK_EQ(held, td_pool_count(&pwide_method.pool));
        TD_CHECK_EQ(TD_OK, td_task_i64_get(t, &o));
        TD_CHECK_EQ(6 + generated, o.value);
        TD_CHECK_EQ(held + 1, td_pool_count(&pwide_method.pool));
    }
    for (int tracked = 0; tracked < 2; tracked++) {
        td_tracking_enable(tracked);
        td_auto_source *g;
        td_runner *r;
        td_task_i64 t = start_gated(&pgated_method, &g, &r);
        TD_CHECK_EQ(!POOLS_AT_SUCCESS ? TD_SOURCE_OWNED_SHARED
                    : tracked ? TD_SOURCE_OWNED_MAIN_UNPOOLED : TD_SOURCE_OWNED_MAIN,
                    r->source.owned);
        uint32_t held = td_pool_count(&pgated_method.pool);
        TD_CHECK_EQ(TD_OK, complete_gate(g, 8));
        TD_CHECK_EQ(held + (POOLS_AT_SUCCESS && !tracked), td_pool_count(&pgated_method.pool));
        TD_CHECK_EQ(POOLS_AT_SUCCESS && !tracked ? TD_WORD_POOLED : 0u, word_of(r) & TD_WORD_POOLED);
        TD_CHECK_EQ(TD_OK, td_task_i64_get(t, &o));
        TD_CHECK_EQ(8, o.value);
        TD_CHECK_EQ(0u, td_tracking_count());
        td_tracking_enable(0);
    }
}

/* Complete several, rent before consuming: the unconsumed ones are parked, never handed out,
 * and come back once consumed; the pool allocates nothing in the steady state. */
#define PARK_N 6
static void rent_before_consumption_parks(void)
{
    td_auto_source *g[PARK_N];
    td_runner *r[PARK_N];
    td_task_i64 t[PARK_N];
    td_outcome o;
    for (int round = 0; round < 50; round++) {
        uint64_t allocated = pgated_method.pool.allocated;
        for (int i = 0; i < PARK_N; i++)
            t[i] = start_gated(&pgated_method, &g[i], &r[i]);
        for (int i = 0; i < PARK_N; i++)
            TD_CHECK_EQ(TD_OK, complete_gate(g[i], 100 + i));
        /* every one completed, none consumed: a rent must not return any of them */
        td_auto_source *ng;
        td_runner *nr;
        td_task_i64 nt = start_gated(&pgated_method, &ng, &nr);
        for (int i = 0; i < PARK_N; i++) {
            TD_CHECK(nr != r[i]);
            TD_CHECK_EQ(TD_SUCCEEDED, status_of(t[i].task));
        }
        for (int i = 0; i < PARK_N; i++) {
            TD_CHECK_EQ(TD_OK, td_task_i64_get(t[i], &o));
            TD_CHECK_EQ(100 + i, o.value);
        }
        TD_CHECK_EQ(TD_OK, complete_gate(ng, 7));
        TD_CHECK_EQ(TD_OK, td_task_i64_get(nt, &o));
        TD_CHECK_EQ(7, o.value);
        if (round >= 2)     /* warmed: the parked runners came back, nothing new */
            TD_CHECK_EQ(allocated, pgated_method.pool.allocated);
    }
}

/* A capacity change while a pooled runner's task is unconsumed: the runner is not freed
 * (ASan would see the consumption read freed memory), and comes back once consumed. */
static void capacity_change_keeps_unconsumed(void)
{
    td_auto_source *g;
    td_runner *r;
    td_task_i64 t = start_gated(&pgated_method, &g, &r);
    TD_CHECK_EQ(TD_OK, complete_gate(g, 33));
    TD_CHECK_EQ(TD_OK, td_method_set_capacity(&pgated_method, 0));
    TD_CHECK_EQ(0, td_pool_count(&pgated_method.pool));
    TD_CHECK_EQ(TD_OK, td_method_set_capacity(&pgated_method, 8));
    td_outcome o;
    TD_CHECK_EQ(TD_OK, td_task_i64_get(t, &o));
    TD_CHECK_EQ(33, o.value);
    /* the pool is empty: the parked runners come back (others parked earlier may come
     * first), then the pool allocates */
    td_runner *got[64];
    int n = 0, found = 0;
    uint64_t allocated = pgated_method.pool.allocated;
    while (n < 64 && !found && pgated_method.pool.allocated == allocated) {
        got[n] = td_runner_rent(&pgated_method);
        TD_CHECK_EQ(0, TD_FRAME(got[n], gate_frame)->v);
        found = got[n++] == r;
    }
    TD_CHECK(found);
    for (int i = 0; i < n; i++) {
        TD_FRAME(got[i], gate_frame)->gate = td_from_result(1);
        TD_CHECK(td_runner_start_i64(got[i]).task.source == NULL);
    }
}

/* Every consumer releases a pooled runner with the next version. */
static void every_consumption_path(void)
{
    td_outcome o;
    for (int path = 0; path < 4; path++) {
        td_auto_source *g;
        td_runner *r;
        td_task_i64 t = start_gated(&pgated_method, &g, &r);
        TD_CHECK_EQ(TD_OK, complete_gate(g, 40 + path));
        CHECK_POOLED(r);
        if (path == 0) {
            TD_CHECK_EQ(TD_OK, (td_task_i64_get)(t, &o));          /* out of line */
            TD_CHECK_EQ(40, o.value);
        } else if (path == 1) {
            TD_CHECK_EQ(TD_OK, (td_task_get)(t.task, &o));         /* untyped, out of line */
            TD_CHECK_EQ(41, o.value);
        } else if (path == 2) {
            td_task_forget_result(t.task);
        } else {
            td_shared *h = td_task_share_i64(t);                    /* a shared handle */
            TD_CHECK(h != NULL);
            TD_CHECK_EQ(TD_OK, td_shared_outcome(h, &o));
            TD_CHECK_EQ(43, o.value);
            td_shared_release(h);
        }
        TD_CHECK_EQ(TD_E_STALE, td_task_i64_get(t, &o));
        TD_CHECK_EQ(TD_PENDING, (td_status)(word_of(r) & TD_WORD_STATUS_MASK));
        td_runner *again = td_runner_rent(&pgated_method);
        TD_CHECK(again == r);
        TD_FRAME(again, gate_frame)->gate = td_from_result(1);
        TD_CHECK(td_runner_start_i64(again).task.source == NULL);
    }
}

/* The main thread completes, a worker consumes, the main thread rents the runner again. */
typedef struct {
    td_task_i64 t;
    int64_t got;
    int rc;
    volatile uint32_t done;
} worker_get;

static void get_on_worker(void *arg)
{
    worker_get *w = (worker_get *)arg;
    td_outcome o;
    w->rc = td_task_i64_get(w->t, &o);
    w->got = o.value;
    td_atomic_store_release_u32(&w->done, 1);
}

/* Add r to the distinct runners in seen[0 .. *n) (at most cap). */
static void note_runner(td_runner **seen, int *n, int cap, td_runner *r)
{
    for (int i = 0; i < *n; i++)
        if (seen[i] == r)
            return;
    if (*n < cap)
        seen[(*n)++] = r;
}

/* A worker consumes what the main thread completed; the main thread rents again, in three
 * orders (rounds i % 3): the rent before the job is posted (0), after the worker consumed
 * (1), or racing the consumption (2: TSan sees the rent's acquire load of the word against
 * the consumer's release store). Where the main thread pools at success:
 *   - a rent never hands out a runner not yet consumed: in order 0 it parks it and takes
 *     another;
 *   - a consumed runner comes back to the main thread's rent: in order 1 at once (pooled at
 *     its success, it is the top of the owner's segment); a parked one once the pool is
 *     empty, before the pool allocates (the drain at the end: every runner of the loop).
 * Which runner a racing rent gets depends on the scheduling, so nothing counts those: a
 * check that did (how often the first runner was rented again) failed whenever the first
 * round's rent beat the worker and fewer later rents than the pool held runners did, the
 * parked first runner then waiting for an empty pool that the loop never reached. */
#define WORKER_RUNNERS_MAX 64
static void worker_consumes_main_rents(void)
{
    td_runner *seen[WORKER_RUNNERS_MAX];
    int nseen = 0;
    for (int i = 0; i < 500; i++) {
        int order = i % 3;
        td_auto_source *g;
        td_runner *r, *other = NULL;
        worker_get w;
        memset(&w, 0, sizeof w);
        w.t = start_gated(&pgated_method, &g, &r);
        note_runner(seen, &nseen, WORKER_RUNNERS_MAX, r);
        TD_CHECK_EQ(TD_OK, complete_gate(g, i));
        if (order == 0)
            other = td_runner_rent(&pgated_method);
        TD_CHECK_EQ(TD_OK, td_thread_pool_post(get_on_worker, &w));
        if (order == 1)
            TD_CHECK(spin_until(&w.done, 1));
        if (order != 0)
            other = td_runner_rent(&pgated_method);
        if (order == 0 && POOLS_AT_SUCCESS)
            TD_CHECK(other != r);           /* not consumed yet: parked, not handed out */
        if (order == 1 && POOLS_AT_SUCCESS)
            TD_CHECK(other == r);           /* consumed on the worker: straight back */
        TD_CHECK_EQ(0, TD_FRAME(other, gate_frame)->v);    /* cleared by the rent */
        TD_CHECK(spin_until(&w.done, 1));
        TD_CHECK_EQ(TD_OK, w.rc);
        TD_CHECK_EQ(i, w.got);
        note_runner(seen, &nseen, WORKER_RUNNERS_MAX, other);
        TD_FRAME(other, gate_frame)->gate = td_from_result(i);
        TD_CHECK(td_runner_start_i64(other).task.source == NULL);
    }
    if (!POOLS_AT_SUCCESS)
        return;     /* pooled by the worker's release instead: a full pool may free it */
    /* Every runner of the loop, each consumed now, comes back (the pool's, then the parked
     * ones) before the pool allocates a new one. */
    td_runner *got[WORKER_RUNNERS_MAX + 1];
    int n = 0;
    uint64_t allocated = pgated_method.pool.allocated;
    while (n <= WORKER_RUNNERS_MAX && pgated_method.pool.allocated == allocated)
        got[n++] = td_runner_rent(&pgated_method);
    for (int i = 0; i < nseen; i++) {
        int back = 0;
        for (int j = 0; j < n; j++)
            back |= got[j] == seen[i];
        TD_CHECK(back);
    }
    for (int j = 0; j < n; j++) {
        TD_FRAME(got[j], gate_frame)->gate = td_from_result(1);
        TD_CHECK(td_runner_start_i64(got[j]).task.source == NULL);
    }
}

int main(void)
{
    if (runtime_init_with_workers(2) != TD_OK)
        return 2;
    td_method_register(&pgated_method);
    td_method_register(&pwide_method);
    TD_RUN(pooled_at_success_cleared_at_rent);
    TD_RUN(start_marks_the_unpooled);
    TD_RUN(rent_before_consumption_parks);
    TD_RUN(capacity_change_keeps_unconsumed);
    TD_RUN(every_consumption_path);
    TD_RUN(worker_consumes_main_rents);
    td_runtime_shutdown();
    return TD_TEST_SUMMARY();
}
