/* TD_AWAIT_NEXT_FRAME / TD_AWAIT_YIELD: the frame awaits that build no task first. They
 * must answer exactly as TD_AWAIT of td_next_frame / td_yield: the frame they resume in,
 * same-frame yields to a later timing, cancellation when the loop is retired while they
 * wait, TD_ERR_NO_LOOP without a main loop, and the generic path from another thread. */
#include <tandem/tandem.h>
#include "td_test.h"
#include "td_test_runtime.h"

typedef struct { uint32_t i, n, yield; int64_t frames[8]; } fa_frame;
static void fa_step(td_runner *r, fa_frame *f)
{
    TD_BEGIN(r);
    for (f->i = 0; f->i < f->n; f->i++) {
        if (f->yield)
            TD_AWAIT_YIELD(r, TD_TIMING_UPDATE);
        else
            TD_AWAIT_NEXT_FRAME(r, TD_TIMING_UPDATE);
        f->frames[f->i] = td_loop_frame(td_loop_main());
    }
    TD_RETURN_VALUE(r, f->frames[f->n - 1]);
    TD_END(r);
}
TD_METHOD_DEFINE(fa, fa_frame, fa_step);

static td_task_i64 fa_start(uint32_t n, uint32_t yield, fa_frame **frame_out)
{
    td_runner *r = td_runner_rent(&fa_method);
    fa_frame *f = TD_FRAME(r, fa_frame);
    f->n = n;
    f->yield = yield;
    *frame_out = f;
    return td_runner_start_i64(r);
}

static void next_frame_resumes_one_frame_later(void)
{
    td_loop *loop = fresh_loop_with(NULL, 1);
    td_loop_run_frame(loop);                        /* frame 1 */
    fa_frame *f;
    td_task_i64 t = fa_start(3, 0, &f);
    for (int i = 0; i < 3; i++) {
        TD_CHECK_EQ(TD_PENDING, status_of(t.task));
        td_loop_run_frame(loop);
    }
    td_outcome o;
    TD_CHECK_EQ(TD_OK, td_task_i64_get(t, &o));
    TD_CHECK_EQ(TD_SUCCEEDED, o.status);
    TD_CHECK_EQ(4, o.value);                         /* frames 2, 3, 4 */
    td_loop_destroy(loop);
}

/* Started from inside Early Update, a yield to Update resumes in the same frame. */
static td_task_i64 yield_task;
static void start_yielder(void *arg)
{
    fa_frame *f;
    (void)arg;
    yield_task = fa_start(1, 1, &f);
}

static void yield_resumes_later_in_the_same_frame(void)
{
    td_loop *loop = fresh_loop_with(NULL, 1);
    td_loop_run_frame(loop);
    TD_CHECK_EQ(TD_OK, td_loop_post(loop, TD_TIMING_EARLY_UPDATE, start_yielder, NULL));
    td_loop_run_frame(loop);                        /* frame 2: started and resumed */
    td_outcome o;
    TD_CHECK_EQ(TD_OK, td_task_i64_get(yield_task, &o));
    TD_CHECK_EQ(TD_SUCCEEDED, o.status);
    TD_CHECK_EQ(2, o.value);
    /* between frames, a yield is the next frame's run */
    fa_frame *f;
    td_task_i64 t = fa_start(1, 1, &f);
    TD_CHECK_EQ(TD_PENDING, status_of(t.task));
    td_loop_run_frame(loop);
    TD_CHECK_EQ(TD_OK, td_task_i64_get(t, &o));
    TD_CHECK_EQ(3, o.value);
    td_loop_destroy(loop);
}

static void retirement_cancels_a_waiting_method(void)
{
    td_loop *loop = fresh_loop_with(NULL, 1);
    fa_frame *f;
    td_task_i64 a = fa_start(2, 0, &f);
    td_task_i64 b = fa_start(2, 1, &f);
    td_loop_run_frame(loop);
    td_loop_destroy(loop);
    td_outcome o;
    TD_CHECK_EQ(TD_OK, td_task_i64_get(a, &o));
    TD_CHECK_EQ(TD_CANCELED, o.status);
    TD_CHECK_EQ(TD_OK, td_task_i64_get(b, &o));
    TD_CHECK_EQ(TD_CANCELED, o.status);
}

static void no_main_loop_faults(void)
{
    td_loop *main_loop = td_loop_main();
    td_loop_set_main(NULL);
    fa_frame *f;
    td_task_i64 t = fa_start(1, 0, &f);
    td_loop_set_main(main_loop);
    td_outcome o;
    TD_CHECK_EQ(TD_OK, td_task_i64_get(t, &o));
    TD_CHECK_EQ(TD_FAULTED, o.status);
    TD_CHECK_EQ(TD_ERR_NO_LOOP, o.error.code);
}

int main(void)
{
    if (td_runtime_init(NULL) != TD_OK)
        return 2;
    td_loop *main_loop = td_loop_main();
    TD_RUN(next_frame_resumes_one_frame_later);
    TD_RUN(yield_resumes_later_in_the_same_frame);
    TD_RUN(retirement_cancels_a_waiting_method);
    td_loop_set_main(main_loop);
    TD_RUN(no_main_loop_faults);
    td_runtime_shutdown();
    return TD_TEST_SUMMARY();
}
