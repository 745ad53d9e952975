/*
 * ucontext_subject.c - stackful coroutines on glibc makecontext/swapcontext. The
 * scheduler, pools and rows are td_stackful.h; this file is only the context switch.
 * (glibc's swapcontext saves and restores the signal mask: a system call per switch.)
 */
#include <ucontext.h>

typedef struct sf_switch {
    ucontext_t self;
    ucontext_t caller;
} sf_switch;

#include "td_stackful.h"

static sf_co *ucsub_starting;     /* the coroutine makecontext's entry picks up */

static void ucsub_entry(void)
{
    sf_co *co = ucsub_starting;
    sf_body(co);
}

static int sf_switch_make(sf_co *co)
{
    if (getcontext(&co->sw.self) != 0) return -1;
    co->sw.self.uc_stack.ss_sp = co->stack;
    co->sw.self.uc_stack.ss_size = co->stack_bytes;
    co->sw.self.uc_link = NULL;
    makecontext(&co->sw.self, ucsub_entry, 0);
    return 0;
}

static void sf_switch_resume(sf_co *co)
{
    ucsub_starting = co;
    swapcontext(&co->sw.caller, &co->sw.self);
}

static void sf_switch_suspend(sf_co *co) { swapcontext(&co->sw.self, &co->sw.caller); }

SF_SUBJECT_OPS("ucontext", sf_init);
