/*
 * smoke.h - shared helpers of the 42-case smoke suite (SMOKE.md).
 *
 * Each case is `void smoke_case_<n>(const td_player_host *host, void *ctx, void *arg)`
 * and runs on a fresh main loop (smoke_begin/smoke_end). A failed expectation records
 * file:line, expected and actual through the host and returns from the case; the suite
 * goes on with the next case. Cases never print; they report through the host.
 */
#ifndef SMOKE_H
#define SMOKE_H

#include <pthread.h>
#include <time.h>
#include <string.h>
#include <tandem/tandem.h>
#include "tandem_player.h"

#define SMOKE_ARGS const td_player_host *host, void *ctx, void *arg
/* TD_PCHECK_I64 and TD_PCHECK written out: one macro level, not two, for the checks libtcc
 * expands at every JIT player start (a nested macro costs tcc's preprocessor about as much
 * as the call it expands to). */
#define SMOKE_EQ(expected, actual) \
    do { if (!td_player_check_i64(host, ctx, __FILE__, __LINE__, (expected), (actual))) return; } while (0)
#define SMOKE_TRUE(cond) \
    do { if (!td_player_check_true(host, ctx, __FILE__, __LINE__, !!(cond), #cond)) return; } while (0)

/* The suite's runtime settings (SMOKE.md: flow off, tracking off, RunnerPoolCapacity 128). */
void smoke_settings(td_settings *s);
/* A fresh loop installed as the main loop (fake clock when clock != NULL). */
td_loop *smoke_loop_begin(int has_end_of_frame, int64_t *fake_clock_ns);
void smoke_loop_end(td_loop *loop);
/* Run frames until `t` is no longer pending, at most `max` frames; returns frames run. */
int smoke_run_until(td_loop *loop, td_task t, int max);
td_status smoke_status(td_task t);
/* Start fn(arg) on a new thread / join it. */
int smoke_thread_start(pthread_t *th, void *(*fn)(void *), void *arg);
void smoke_thread_join(pthread_t th);
/* Busy-wait (bounded, ~2 s) until *flag == value; returns 1 when reached. */
int smoke_wait_flag(volatile uint32_t *flag, uint32_t value);

#endif
