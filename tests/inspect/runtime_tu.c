/*
 * runtime_tu.c - the real runtime as the players compile it: every runtime/src/ file in one
 * translation unit, plus a small driver that runs the hot paths (an async method that
 * awaits a frame wait, the loop's frame drain, task get, pool rent/return), so none of
 * them is dead code. Checked against runtime/contract.json by the inspect_runtime test.
 * Build flags: -I runtime/include -I runtime/port.
 */
#include "../../runtime/src/task.c"
#include "../../runtime/src/pool.c"
#include "../../runtime/src/completion.c"
#include "../../runtime/src/async.c"
#include "../../runtime/src/cancel.c"
#include "../../runtime/src/compose.c"
#include "../../runtime/src/context.c"
#include "../../runtime/src/loop.c"
#include "../../runtime/src/waits.c"
#include "../../runtime/src/runtime.c"

typedef struct drv_frame { int64_t n; int64_t got; } drv_frame;

static void drv_step(td_runner *r, drv_frame *f)
{
    TD_BEGIN(r);
    TD_AWAIT(r, td_yield(TD_TIMING_UPDATE));
    TD_AWAIT(r, td_next_frame(TD_TIMING_UPDATE));
    TD_RETURN_VALUE(r, f->n + 1);
    TD_END(r);
}
TD_METHOD_DEFINE(drv, drv_frame, drv_step);

int tandem_inspect_driver(int frames)
{
    td_settings s;
    td_settings_defaults(&s);
    if (td_runtime_init(&s) != TD_OK)
        return 1;
    int64_t sum = 0;
    for (int i = 0; i < frames; i++) {
        td_runner *r = td_runner_rent(&drv_method);
        TD_FRAME(r, drv_frame)->n = i;
        td_task_i64 t = td_runner_start_i64(r);
        for (int k = 0; k < 4; k++)
            td_loop_run_frame(td_loop_main());
        td_outcome o;
        if (td_task_i64_get(t, &o) == TD_OK)
            sum += o.value;
        void *obj = td_pool_rent(&td_auto_source_pool);
        td_pool_return(&td_auto_source_pool, obj);
    }
    td_runtime_shutdown();
    return (int)(sum & 0xff);
}
