/* Steady state allocates nothing: after a warm-up, these loops make zero allocations.
 * (Counting is off in sanitizer builds, which own malloc; the clang and tcc runs count.) */
#include <tandem/tandem.h>
#include "td_test.h"
#include "td_test_runtime.h"
#include "td_alloc_count.h"

#define ROUNDS 2000

/* A method awaiting next_frame n times. */
typedef struct { int i, n; } nf_frame;
static void nf_step(td_runner *r, nf_frame *f)
{
    TD_BEGIN(r);
    for (f->i = 0; f->i < f->n; f->i++)
        TD_AWAIT(r, td_next_frame(TD_TIMING_UPDATE));
    TD_END(r);
}
TD_METHOD_DEFINE(nf, nf_frame, nf_step);

static void run_until_done(td_loop *loop, td_task t)
{
    while (status_of(t) == TD_PENDING)
        td_loop_run_frame(loop);
}

static void next_frame_await_loop(void)
{
    td_loop *loop = td_loop_main();
    uint32_t before = 0;
    for (int round = 0; round < ROUNDS; round++) {
        if (round == ROUNDS / 2)
            before = td_alloc_count();
        td_runner *r = td_runner_rent(&nf_method);
        TD_FRAME(r, nf_frame)->n = 4;
        td_task t = td_runner_start(r);
        run_until_done(loop, t);
        td_outcome o;
        TD_CHECK_EQ(TD_OK, td_task_get(t, &o));
        TD_CHECK_EQ(TD_SUCCEEDED, o.status);
    }
    if (td_alloc_counting())
        TD_CHECK_EQ(0, td_alloc_count() - before);
}

/* A method with one suspension on an auto-reset source. */
typedef struct { td_task_i64 gate; int64_t v; } one_frame;
static void one_step(td_runner *r, one_frame *f)
{
    TD_BEGIN(r);
    TD_AWAIT_VALUE(r, f->gate, f->v);
    TD_RETURN_VALUE(r, f->v * 2);
    TD_END(r);
}
TD_METHOD_DEFINE(one, one_frame, one_step);

static void method_with_one_suspension(void)
{
    uint32_t before = 0;
    for (int round = 0; round < ROUNDS; round++) {
        if (round == ROUNDS / 2)
            before = td_alloc_count();
        td_auto_source *gate = td_auto_source_rent();
        td_task_i64 g = td_auto_source_task_i64(gate);
        td_runner *r = td_runner_rent(&one_method);
        TD_FRAME(r, one_frame)->gate = g;
        td_task_i64 t = td_runner_start_i64(r);
        td_auto_source_set_result(gate, g.task.token, round);
        td_outcome o;
        TD_CHECK_EQ(TD_OK, td_task_i64_get(t, &o));
        TD_CHECK_EQ(2 * round, o.value);
    }
    if (td_alloc_counting())
        TD_CHECK_EQ(0, td_alloc_count() - before);
}

static void when_any_of_leaf_waits(void)
{
    td_loop *loop = td_loop_main();
    uint32_t before = 0;
    for (int round = 0; round < ROUNDS; round++) {
        if (round == ROUNDS / 2)
            before = td_alloc_count();
        td_task in[3] = { td_delay_frame(3, TD_TIMING_UPDATE), td_next_frame(TD_TIMING_UPDATE),
                          td_delay_frame(2, TD_TIMING_UPDATE) };
        td_task_i64 any = td_when_any(in, 3);
        run_until_done(loop, any.task);
        td_outcome o;
        TD_CHECK_EQ(TD_OK, td_task_i64_get(any, &o));
        TD_CHECK_EQ(1, o.value);
        td_loop_run_frame(loop);          /* the late losers complete and are consumed */
        td_loop_run_frame(loop);
    }
    if (td_alloc_counting())
        TD_CHECK_EQ(0, td_alloc_count() - before);
}

static void race_of_leaf_waits(void)
{
    td_loop *loop = td_loop_main();
    uint32_t before = 0;
    for (int round = 0; round < ROUNDS; round++) {
        if (round == ROUNDS / 2)
            before = td_alloc_count();
        td_cancel_source *losers = td_cancel_source_new();   /* pooled */
        td_wait_options o = td_wait_defaults();
        o.cancel = td_cancel_source_token(losers);
        o.cancel_immediately = 1;
        td_task in[2] = { td_delay_frame_ex(1000, &o), td_next_frame(TD_TIMING_UPDATE) };
        td_task_i64 race = td_race(in, 2, losers);
        run_until_done(loop, race.task);
        td_outcome out;
        TD_CHECK_EQ(TD_OK, td_task_i64_get(race, &out));
        TD_CHECK_EQ(1, out.value);
        TD_CHECK(td_cancel_is_requested(o.cancel));
        td_loop_run_frame(loop);      /* the cancelled loser's item detaches */
        td_cancel_source_free(losers);
    }
    if (td_alloc_counting())
        TD_CHECK_EQ(0, td_alloc_count() - before);
}

int main(void)
{
    if (td_runtime_init(NULL) != TD_OK)
        return 2;
    TD_RUN(next_frame_await_loop);
    TD_RUN(method_with_one_suspension);
    TD_RUN(when_any_of_leaf_waits);
    TD_RUN(race_of_leaf_waits);
    td_runtime_shutdown();
    return TD_TEST_SUMMARY();
}
