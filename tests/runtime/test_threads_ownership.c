/* Ownership (task.h's last invariant, ownership.c): sources rented on the main thread are
 * written there with plain stores until another thread takes them; these tests race a
 * worker's write against the main thread's plain ones, round after round, and check that
 * exactly one completion wins and every continuation runs exactly once. Built with TSan too,
 * and run again with TANDEM_NO_MEMBARRIER=1 (every write a CAS, as without the barrier). */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <tandem/tandem.h>
#include "td_test.h"
#include "td_test_rounds.h"

#define ROUNDS 3000

/* A delay that differs from round to round (odd rounds 0 to 15 pauses, even ones 0 to 383),
 * so that each side of a race wins in some rounds: the worker needs a cache miss and, to take
 * the ownership, a system call before it writes. */
static void spread(uint32_t round)
{
    for (uint32_t i = (round * 7919u) % (round & 1 ? 16u : 384u); i > 0; i--)
        td_cpu_relax();
}

/* ---- who owns what -------------------------------------------------------------------- */

static td_source *rented_on_worker;
static void *rent_on_worker(void *arg)
{
    (void)arg;
    td_auto_source *s = td_auto_source_rent();
    rented_on_worker = s ? td_auto_source_task(s).source : NULL;
    return NULL;
}

static void *complete_on_worker(void *arg)
{
    td_auto_source *s = (td_auto_source *)arg;
    td_auto_source_set_result(s, td_auto_source_task(s).token, 7);
    return NULL;
}

/* a manual source's set_result on a worker (the round it is at, the CAS protocol) */
static int worker_set_rc;
static int64_t worker_set_value;
static void *set_result_on_worker(void *arg)
{
    worker_set_rc = td_completion_source_set_result((td_completion_source *)arg, worker_set_value);
    return NULL;
}
static int set_result_from_worker(td_completion_source *cs, int64_t v)
{
    pthread_t th;
    worker_set_value = v;
    worker_set_rc = 99;
    if (pthread_create(&th, NULL, set_result_on_worker, cs) != 0)
        return 98;
    pthread_join(th, NULL);
    return worker_set_rc;
}

static void owned_on_main_shared_elsewhere(void)
{
    td_auto_source *s = td_auto_source_rent();
    TD_CHECK(s != NULL);
    td_task_i64 t = td_auto_source_task_i64(s);
    TD_CHECK_EQ(TD_SOURCE_OWNED_MAIN, t.task.source->owned);
    /* a worker's completion takes the ownership away, and its outcome is the one read */
    pthread_t th;
    TD_CHECK(pthread_create(&th, NULL, complete_on_worker, s) == 0);
    pthread_join(th, NULL);
    /* (without membarrier nothing is taken away: no window was ever opened) */
    TD_CHECK_EQ(td_main_writer_thread_ ? TD_SOURCE_OWNED_SHARED : TD_SOURCE_OWNED_MAIN, t.task.source->owned);
    td_outcome o;
    TD_CHECK_EQ(TD_OK, td_task_i64_get(t, &o));
    TD_CHECK_EQ(7, o.value);
    /* rented on a worker: never owned */
    TD_CHECK(pthread_create(&th, NULL, rent_on_worker, NULL) == 0);
    pthread_join(th, NULL);
    TD_CHECK(rented_on_worker != NULL);
    TD_CHECK_EQ(TD_SOURCE_OWNED_SHARED, rented_on_worker->owned);
    td_auto_source_set_result((td_auto_source *)rented_on_worker, td_source_token(rented_on_worker), 1);
    td_task_forget_result(td_task_of(rented_on_worker, td_source_token(rented_on_worker)));
    /* a completion source made or reset on the main thread is owned by it */
    td_completion_source *cs = td_completion_source_new();
    TD_CHECK(cs != NULL);
    TD_CHECK_EQ(TD_SOURCE_OWNED_MAIN, td_completion_source_task(cs).source->owned);
    td_completion_source_set_result(cs, 3);
    td_task_forget_result(td_completion_source_task(cs));
    td_completion_source_reset(cs);
    TD_CHECK_EQ(TD_SOURCE_OWNED_MAIN, td_completion_source_task(cs).source->owned);
    /* set_result on a worker completes the round the source is at, once; a reset opens the
     * next round, which a worker's set_result completes again (the old task stays stale) */
    td_task_i64 r1 = td_completion_source_task_i64(cs);
    TD_CHECK_EQ(TD_OK, set_result_from_worker(cs, 11));
    TD_CHECK_EQ(TD_DONE, set_result_from_worker(cs, 12));
    TD_CHECK_EQ(TD_DONE, td_completion_source_set_result(cs, 13));
    TD_CHECK_EQ(TD_OK, td_task_i64_get(r1, &o));
    TD_CHECK_EQ(11, o.value);
    td_completion_source_reset(cs);
    td_task_i64 r2 = td_completion_source_task_i64(cs);
    TD_CHECK_EQ(TD_OK, set_result_from_worker(cs, 14));
    TD_CHECK_EQ(TD_E_STALE, td_task_i64_get(r1, &o));
    TD_CHECK_EQ(TD_OK, td_task_i64_get(r2, &o));
    TD_CHECK_EQ(14, o.value);
    td_completion_source_free(cs);
}

/* ---- racing completers: the main thread's plain completion against a worker's ---------- */

typedef struct {
    td_auto_source *volatile source;    /* the round's source and token, written before it */
    volatile uint32_t token;
    volatile int wins;                  /* the worker's TD_OK results */
} race;

static void race_complete(uint32_t round, void *arg)
{
    race *h = (race *)arg;
    td_auto_source *s = (td_auto_source *)td_atomic_load_ptr((void *volatile *)&h->source);
    if (td_auto_source_set_result(s, td_atomic_load_u32(&h->token), -(int64_t)round) == TD_OK)
        h->wins++;
}

static void racing_completers_one_wins(void)
{
    race h;
    memset(&h, 0, sizeof(h));
    td_test_rounds w;
    TD_CHECK(td_test_rounds_start(&w, race_complete, &h) == 0);
    int bad = 0, main_wins = 0;
    for (uint32_t round = 1; round <= ROUNDS && !bad; round++) {
        td_auto_source *s = td_auto_source_rent();
        td_task_i64 t = td_auto_source_task_i64(s);
        td_atomic_store_ptr((void *volatile *)&h.source, s);
        td_atomic_store_u32(&h.token, t.task.token);
        int before = h.wins;
        td_test_rounds_go(&w, round);              /* the worker completes now, and so do we */
        spread(round);
        int mine = td_auto_source_set_result(s, t.task.token, (int64_t)round) == TD_OK;
        td_test_rounds_wait(&w, round);
        int theirs = h.wins - before;
        td_outcome o;
        if (mine + theirs != 1 || td_task_i64_get(t, &o) != TD_OK ||
            o.value != (mine ? (int64_t)round : -(int64_t)round))
            bad = (int)round;
        main_wins += mine;
    }
    td_test_rounds_stop(&w);
    TD_CHECK_EQ(0, bad);
    printf("     main won %d of %d rounds\n", main_wins, ROUNDS);
}

/* ---- a runner's own completion on the main thread against a worker's registration ------- */

typedef struct { td_task_i64 gate; int64_t v; } gate_frame;
static void gate_step(td_runner *r, gate_frame *f)
{
    TD_BEGIN(r);
    TD_AWAIT_VALUE(r, f->gate, f->v);
    TD_RETURN_VALUE(r, f->v * 2);
    TD_END(r);
}
TD_METHOD_DEFINE(gate_waiter, gate_frame, gate_step);

typedef struct {
    td_task_i64 task;                /* the runner's task of this round (written before it) */
    volatile uint32_t runs;          /* continuation runs, all rounds */
    volatile int64_t got;            /* the value the continuation consumed this round */
    volatile uint32_t registered;    /* rounds in which the worker's registration was taken */
} reg;

static reg regs;

static void reg_continuation(void *arg)
{
    (void)arg;
    td_outcome o;
    regs.got = td_task_i64_get(regs.task, &o) == TD_OK ? o.value : -1;
    td_atomic_fetch_add_u32(&regs.runs, 1);
}

static void reg_register(uint32_t round, void *arg)
{
    (void)round;
    (void)arg;
    int rc = td_task_on_completed(regs.task.task, reg_continuation, NULL);
    if (rc == TD_DONE)
        reg_continuation(NULL);   /* complete already: not registered, consume it here */
    else if (rc == TD_OK)
        regs.registered++;
}

static void own_completion_races_registration(void)
{
    memset(&regs, 0, sizeof(regs));
    td_completion_source *gate = td_completion_source_new();
    TD_CHECK(gate != NULL);
    td_test_rounds w;
    TD_CHECK(td_test_rounds_start(&w, reg_register, NULL) == 0);
    int bad = 0;
    for (uint32_t round = 1; round <= ROUNDS && !bad; round++) {
        td_completion_source_reset(gate);
        td_runner *r = td_runner_rent(&gate_waiter_method);
        TD_FRAME(r, gate_frame)->gate = td_completion_source_task_i64(gate);
        regs.task = td_runner_start_i64(r);          /* suspended on the gate */
        uint32_t runs = td_atomic_load_u32(&regs.runs);
        td_test_rounds_go(&w, round);                /* the worker registers now ... */
        spread(round);
        td_completion_source_set_result(gate, (int64_t)round);   /* ... as the runner completes */
        td_test_rounds_wait(&w, round);
        for (uint32_t turn = 0; td_atomic_load_u32(&regs.runs) == runs;)
            td_test_wait_turn(&turn);
        if (td_atomic_load_u32(&regs.runs) != runs + 1 || regs.got != 2 * (int64_t)round)
            bad = (int)round;
    }
    td_test_rounds_stop(&w);
    td_completion_source_free(gate);
    TD_CHECK_EQ(0, bad);
    printf("     the worker registered first in %u of %d rounds\n", regs.registered, ROUNDS);
}

/* 1 when the runtime should have registered membarrier: asked of the kernel and the
 * environment here, not read off the runtime's own state. */
static int membarrier_expected(void)
{
    /* membarrier(MEMBARRIER_CMD_QUERY): bit 3, MEMBARRIER_CMD_PRIVATE_EXPEDITED (8) */
    const char *off = getenv("TANDEM_NO_MEMBARRIER");
    long mask = syscall(SYS_membarrier, 0, 0, 0);
    return !(off && off[0] == '1') && mask > 0 && (mask & 8);
}

/* The writer of owned words is the pools' owner or nobody (ownership.c): it moves with every
 * td_pool_set_owner_thread, a shutdown clears both and an init gives both to the initialising
 * thread. A success pushes its runner on the owner's segment inside its window without
 * testing the owner (async.c, td_runner_succeed_): that relies on this. */
static void writer_follows_the_pools_owner(void)
{
    static int other;   /* an identity no thread has */
    uintptr_t self = td_thread_self(), moved, w0, o0;
    int barrier = membarrier_expected(), rc;
    TD_CHECK_EQ(self, td_pool_owner_thread_);
    TD_CHECK_EQ(barrier ? self : 0, td_main_writer_thread_);
    td_pool_set_owner_thread((uintptr_t)&other);    /* nothing runs until it is set back */
    moved = td_main_writer_thread_;
    td_pool_set_owner_thread(self);
    TD_CHECK_EQ(barrier ? (uintptr_t)&other : 0, moved);
    TD_CHECK_EQ(barrier ? self : 0, td_main_writer_thread_);
    td_runtime_shutdown();
    w0 = td_main_writer_thread_;
    o0 = td_pool_owner_thread_;
    rc = td_runtime_init(NULL);
    TD_CHECK_EQ(0, w0);
    TD_CHECK_EQ(0, o0);
    TD_CHECK_EQ(TD_OK, rc);
    TD_CHECK_EQ(self, td_pool_owner_thread_);
    TD_CHECK_EQ(barrier ? self : 0, td_main_writer_thread_);
}

int main(void)
{
    if (td_runtime_init(NULL) != TD_OK)
        return 2;
    printf("     the main thread %s\n", td_main_writer_thread_ == td_thread_self()
               ? "writes owned words with plain stores (membarrier)"
               : "writes every word with a CAS (no membarrier)");
    TD_RUN(owned_on_main_shared_elsewhere);
    TD_RUN(racing_completers_one_wins);
    TD_RUN(own_completion_races_registration);
    TD_RUN(writer_follows_the_pools_owner);     /* last: it shuts the runtime down and back up */
    td_runtime_shutdown();
    return TD_TEST_SUMMARY();
}
