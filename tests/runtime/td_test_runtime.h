/*
 * td_test_runtime.h - helpers the runtime tests share (after td_test.h).
 */
#ifndef TD_TEST_RUNTIME_H
#define TD_TEST_RUNTIME_H

#include <string.h>
#include <tandem/tandem.h>

/* The status of t, or -1 when the query fails (stale, shared...). */
static inline td_status status_of(td_task t)
{
    td_status st = (td_status)-1;
    if (td_task_status(t, &st) != TD_OK)
        return (td_status)-1;
    return st;
}

/* A new loop with an end-of-frame phase, installed as the main loop. */
static inline td_loop *fresh_loop_with(td_now_fn now, int has_end_of_frame)
{
    td_loop_config cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.has_end_of_frame = has_end_of_frame;
    cfg.now = now;
    td_loop *loop = td_loop_create(&cfg);
    td_loop_set_main(loop);
    return loop;
}

#endif
