/*
 * td_test_runtime.h - helpers the runtime tests share (after td_test.h).
 */
#ifndef TD_TEST_RUNTIME_H
#define TD_TEST_RUNTIME_H

#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <time.h>
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

/* td_runtime_init with the default settings and `workers` worker threads. */
static inline int runtime_init_with_workers(uint32_t workers)
{
    td_settings s;
    td_settings_defaults(&s);
    s.worker_threads = workers;
    return td_runtime_init(&s);
}

static inline int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Run frames of the main loop until `t` is no longer pending (10 s bound).
 * Returns 1 when it completed. */
static inline int pump_until_done(td_task t)
{
    int64_t end = now_ns() + 10000000000LL;
    td_status st = TD_PENDING;
    while (td_task_status(t, &st) == TD_OK && st == TD_PENDING) {
        if (now_ns() > end)
            return 0;
        td_loop_run_frame(td_loop_main());
        sched_yield();
    }
    return 1;
}

/* Wait (10 s bound) until *flag == value. Returns 1 when reached. */
static inline int spin_until(volatile uint32_t *flag, uint32_t value)
{
    int64_t end = now_ns() + 10000000000LL;
    while (td_atomic_load_u32(flag) != value) {
        if (now_ns() > end)
            return 0;
        sched_yield();
    }
    return 1;
}

#endif
