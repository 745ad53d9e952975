/*
 * td_test_wait.h - one turn of a cross-thread test's wait for another thread.
 *
 * A wait pauses (td_cpu_relax) for its first TD_TEST_WAIT_SPINS turns, which keeps a race
 * tight when each thread has a core of its own, then yields the processor on every turn.
 * Why: when the two threads share one core (a busy CI host; `taskset -c 0`), a wait that only
 * pauses holds the core for the rest of its time slice, milliseconds per wait, and a test of
 * 20000 rounds ran past ctest's 120 s; with the yield the other thread runs at once.
 */
#ifndef TD_TEST_WAIT_H
#define TD_TEST_WAIT_H

#include <sched.h>
#include <stdint.h>
#include <tandem/tandem.h>

#define TD_TEST_WAIT_SPINS 1024u

/* Use: for (uint32_t turn = 0; !condition;) td_test_wait_turn(&turn); */
static inline void td_test_wait_turn(uint32_t *turn)
{
    if (*turn < TD_TEST_WAIT_SPINS) {
        (*turn)++;
        td_cpu_relax();
    } else {
        sched_yield();
    }
}

#endif
