/*
 * fcontext_subject.c - stackful coroutines on Boost.Context's make_fcontext/jump_fcontext
 * (libboost-context-dev, C linkage). The scheduler, pools and rows are td_stackful.h;
 * this file is only the context switch. Linking: the subject links libboost_context (a
 * project's tandem.json names it: "fcontext": {"folder": ..., "link": ["boost_context"]},
 * staged as players/subjects/fcontext/link.libs and read by both backends: the AOT one links
 * -lboost_context into the module, the JIT one adds the library to the TCCState).
 */
#include <stddef.h>

typedef void *fcontext_t;
typedef struct { fcontext_t fctx; void *data; } transfer_t;
transfer_t jump_fcontext(fcontext_t const to, void *vp);
fcontext_t make_fcontext(void *sp, size_t size, void (*fn)(transfer_t));

typedef struct sf_switch {
    fcontext_t self;     /* where to resume the coroutine */
    fcontext_t caller;   /* where the coroutine returns to */
} sf_switch;

#include "td_stackful.h"

static void fcsub_entry(transfer_t t)
{
    sf_co *co = (sf_co *)t.data;
    co->sw.caller = t.fctx;
    sf_body(co);
}

static int sf_switch_make(sf_co *co)
{
    co->sw.self = make_fcontext(co->stack + co->stack_bytes, co->stack_bytes, fcsub_entry);
    return co->sw.self ? 0 : -1;
}

static void sf_switch_resume(sf_co *co)
{
    transfer_t t = jump_fcontext(co->sw.self, co);
    co->sw.self = t.fctx;
}

static void sf_switch_suspend(sf_co *co)
{
    transfer_t t = jump_fcontext(co->sw.caller, NULL);
    co->sw.caller = t.fctx;
}

SF_SUBJECT_OPS("fcontext", sf_init);
