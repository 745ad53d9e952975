/*
 * td_test_rounds.h - the worker of the cross-thread race tests: it runs one action per round
 * the main thread starts (rounds numbered from 1) and says when it has, so that each round
 * races the worker's action against whatever the main thread does after starting it.
 */
#ifndef TD_TEST_ROUNDS_H
#define TD_TEST_ROUNDS_H

#include <pthread.h>
#include <tandem/tandem.h>
#include "td_test_wait.h"

typedef struct td_test_rounds {
    volatile uint32_t round;    /* the round the main thread started, 0 = none yet */
    volatile uint32_t done;     /* the last round the worker finished */
    volatile uint32_t stop;
    void (*action)(uint32_t round, void *arg);
    void *arg;
    pthread_t thread;
} td_test_rounds;

static void *td_test_rounds_worker(void *p)
{
    td_test_rounds *w = (td_test_rounds *)p;
    uint32_t seen = 0, turn = 0;
    while (!td_atomic_load_u32(&w->stop)) {
        uint32_t r = td_atomic_load_u32(&w->round);
        if (r == seen) {
            td_test_wait_turn(&turn);
            continue;
        }
        w->action(r, w->arg);
        seen = r;
        turn = 0;
        td_atomic_store_u32(&w->done, r);
    }
    return NULL;
}

/* 0, or the error of pthread_create. */
static int td_test_rounds_start(td_test_rounds *w, void (*action)(uint32_t, void *), void *arg)
{
    w->round = w->done = w->stop = 0;
    w->action = action;
    w->arg = arg;
    return pthread_create(&w->thread, NULL, td_test_rounds_worker, w);
}

/* The worker runs the round's action from now on. */
static void td_test_rounds_go(td_test_rounds *w, uint32_t round) { td_atomic_store_u32(&w->round, round); }

static void td_test_rounds_wait(td_test_rounds *w, uint32_t round)
{
    for (uint32_t turn = 0; td_atomic_load_u32(&w->done) != round;)
        td_test_wait_turn(&turn);
}

static void td_test_rounds_stop(td_test_rounds *w)
{
    td_atomic_store_u32(&w->stop, 1);
    pthread_join(w->thread, NULL);
}

#endif
