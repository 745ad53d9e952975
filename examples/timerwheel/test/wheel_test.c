/*
 * wheel_test.c - the wheel and its port layer, compiled by clang and by tcc (both paths of
 * wheel_ctz64 must agree with a plain loop). Exit 0 when every check holds.
 */
#include <stdio.h>

#include "wheel/wheel.h"
#include "wheel/wheel_port.h"

static int failures;
#define CHECK(c) do { if (!(c)) { failures++; printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #c); } } while (0)

static int fired_order[8], nfired;
static void on_due(void *arg) { fired_order[nfired++] = (int)(long)arg; }

int main(void)
{
    for (unsigned b = 0; b < 64; b++) {
        uint64_t x = 1ull << b;
        CHECK(wheel_ctz64(x) == b);
        CHECK(wheel_ctz64(x | (x << 1 ? x << 1 : 0)) == b);
        CHECK(wheel_ctz64(~0ull << b) == b);
    }
    wheel w;
    wheel_timer t[4];
    wheel_init(&w);
    CHECK(wheel_next_due(&w) == 0);
    CHECK(wheel_add(&w, &t[0], 0, on_due, (void *)0) == -1);
    CHECK(wheel_add(&w, &t[0], WHEEL_SLOTS, on_due, (void *)0) == -1);
    CHECK(wheel_add(&w, &t[0], 3, on_due, (void *)1) == 0);
    CHECK(wheel_add(&w, &t[1], 1, on_due, (void *)2) == 0);
    CHECK(wheel_add(&w, &t[2], 1, on_due, (void *)3) == 0);
    CHECK(wheel_add(&w, &t[3], WHEEL_SLOTS - 1, on_due, (void *)4) == 0);
    CHECK(w.pending == 4 && wheel_next_due(&w) == 1);
    CHECK(wheel_tick(&w) == 2 && fired_order[0] == 2 && fired_order[1] == 3);  /* in the order added */
    CHECK(wheel_next_due(&w) == 2);
    CHECK(wheel_tick(&w) == 0 && wheel_tick(&w) == 1 && fired_order[2] == 1);
    CHECK(wheel_next_due(&w) == WHEEL_SLOTS - 4);   /* wraps around the map */
    for (unsigned i = 0; i < WHEEL_SLOTS - 4; i++) wheel_tick(&w);
    CHECK(nfired == 4 && fired_order[3] == 4 && w.pending == 0 && wheel_next_due(&w) == 0);
    printf("wheel_test (%s): %s\n", WHEEL_COMPILER_NAME, failures ? "FAIL" : "PASS");
    return failures != 0;
}
