/*
 * td_stackful.h - the scheduler both stackful peers share (fcontext, ucontext). The
 * subject defines the context switch before including this file:
 *     typedef struct sf_switch { ... } sf_switch;          per-coroutine context state
 *     static int  sf_switch_make(sf_co *co);               context on co->stack, entry sf_body
 *     static void sf_switch_resume(sf_co *co);             main -> co
 *     static void sf_switch_suspend(sf_co *co);            co -> main
 * (declared here, defined after the include).
 *
 * Coroutines are pooled with their stacks (SF_STACK bytes each; default capacity 128, the
 * runtime's RunnerPoolCapacity; matched retention raises it to the cohort). A pooled
 * coroutine keeps its context: reuse hands it a new job and resumes it, with no
 * make-context and no copy. Every resumption happens from the main context.
 *
 * What each row means for a stackful peer:
 *   method completed       rent a coroutine, run it to completion (two switches),
 *                          read its result, return it (and its stack) to the pool;
 *   method next-frame      rent, run to its first suspension (it parks itself on the
 *                          next frame's resume list), the frame resumes it, get-result
 *                          reads the result and returns the coroutine to the pool;
 *   gates                  the coroutine parks on a gate (one waiter); completing the
 *                          gate resumes it inline, up to its next suspension;
 *   throughput loops       16 park/resume round trips per coroutine;
 *   cancellation groups    side by side: a coroutine per method parked on the next frame,
 *                          resumed by it, reading the group's token as its outcome (the
 *                          group a join count, td_peer.h); nested: one coroutine whose
 *                          methods are plain nested calls on its stack (its own, deep
 *                          enough for TD_SUBJECT_MAX_COHORT levels), the innermost parked;
 *   whenany, races         not expressible without a callback layer: NA.
 */
#ifndef TD_STACKFUL_H
#define TD_STACKFUL_H

#include <stdlib.h>

#include "td_peer.h"

#define SF_STACK (16u * 1024u)
/* The nested group's coroutine: TD_SUBJECT_MAX_COHORT nested calls (a few dozen bytes each
 * under clang, about a hundred and fifty under tcc) fit with room to spare. */
#define SF_DEEP_STACK (2u * 1024u * 1024u)
#define SF_DEFAULT_CAPACITY 128u

enum { SF_JOB_DONE = 0, SF_JOB_NEXTFRAME, SF_JOB_GATES, SF_JOB_LOOP, SF_JOB_CANCEL_MEMBER, SF_JOB_CANCEL_NESTED };

typedef struct sf_co sf_co;
struct sf_co {
    sf_switch sw;          /* the subject's context state */
    char *stack;
    uint32_t stack_bytes;
    uint32_t token;        /* cancellation groups: the group's token it was started with */
    int32_t job, typed, done, kind;
    uint32_t slot, susp, awaits;
    int64_t value;
    void *ambient;
};

static int sf_switch_make(sf_co *co);
static void sf_switch_resume(sf_co *co);
static void sf_switch_suspend(sf_co *co);

/* ---- the pool of coroutines (with their stacks) ---- */

static sf_co **sf_pool;
static uint32_t sf_pool_count, sf_pool_cap = SF_DEFAULT_CAPACITY;
static sf_co *sf_slots[TD_SUBJECT_MAX_COHORT];

static sf_co *sf_co_new(uint32_t stack_bytes)
{
    sf_co *co = (sf_co *)calloc(1, sizeof *co);
    if (!co) return NULL;
    co->stack_bytes = stack_bytes;
    co->stack = (char *)malloc(stack_bytes);
    if (!co->stack || sf_switch_make(co) != 0) {
        free(co->stack);
        free(co);
        return NULL;
    }
    return co;
}

static sf_co *sf_rent(void)
{
    if (sf_pool_count) return sf_pool[--sf_pool_count];
    return sf_co_new(SF_STACK);
}

static void sf_return(sf_co *co)
{
    if (sf_pool_count < sf_pool_cap) {
        sf_pool[sf_pool_count++] = co;
        return;
    }
    free(co->stack);
    free(co);
}

static sf_co *sf_deep;     /* the nested cancellation group's coroutine (never pooled) */

static int sf_init(void)
{
    sf_pool = (sf_co **)calloc(TD_SUBJECT_MAX_COHORT, sizeof *sf_pool);
    sf_deep = sf_co_new(SF_DEEP_STACK);
    return sf_pool && sf_deep ? 0 : -1;
}

static void sf_retain(uint32_t cohort)
{
    sf_pool_cap = cohort ? (cohort > TD_SUBJECT_MAX_COHORT ? TD_SUBJECT_MAX_COHORT : cohort) : SF_DEFAULT_CAPACITY;
    while (sf_pool_count > sf_pool_cap) {
        sf_co *co = sf_pool[--sf_pool_count];
        free(co->stack);
        free(co);
    }
}

static const char *sf_capacities(void) { return "coroutine pool 128 (16 KiB stacks)"; }

/* ---- suspension points (run on the coroutine) ---- */

static void sf_park(sf_co *co)
{
    if (peer_flow) co->ambient = peer_ambient;
    sf_switch_suspend(co);
    if (peer_flow) peer_ambient = co->ambient;
}

/* the next frame's resume list */
static sf_co *sf_lists[2][TD_SUBJECT_MAX_COHORT];
static uint32_t sf_counts[2];
static int sf_next;

static void sf_wait_frame(sf_co *co)
{
    sf_lists[sf_next][sf_counts[sf_next]++] = co;
    sf_park(co);
}

typedef struct sf_gate { sf_co *waiter; int32_t done; int64_t value; } sf_gate;
static sf_gate sf_gates[TD_SUBJECT_MAX_COHORT * TD_SUBJECT_MAX_SUSPENSIONS];

static int64_t sf_await_gate(sf_co *co, sf_gate *g)
{
    if (!g->done) {
        g->waiter = co;
        sf_park(co);
    }
    return g->value;
}

/* A cancellation group's member: parked on the next frame, it reads the group's token. */
static void sf_cancel_member(sf_co *co)
{
    sf_wait_frame(co);
    int canceled = peer_group_observe(co->token);
    peer_group_cleanup(canceled, co->token);
    peer_group_finished(canceled ? 0 : co->value);
}

/* The nested group: method `depth` calls method depth - 1 on the same stack, the innermost
 * (0) parks on the next frame; each returns its callee's value + 1 after its cleanup. */
static int64_t sf_cancel_nested(sf_co *co, uint32_t depth, int *canceled)
{
    int64_t value = 1;
    if (depth == 0) {
        sf_wait_frame(co);
        *canceled = peer_group_observe(co->token);
    } else {
        value = sf_cancel_nested(co, depth - 1, canceled) + 1;
    }
    peer_group_cleanup(*canceled, co->token);
    peer_group_finished(*canceled ? 0 : value);
    return value;
}

/* The body every coroutine runs forever: one job per rental, then back to the caller. */
static void sf_body(sf_co *co)
{
    for (;;) {
        int64_t acc = 0;
        uint32_t k;
        switch (co->job) {
        case SF_JOB_DONE:
            break;
        case SF_JOB_NEXTFRAME:
            sf_wait_frame(co);
            break;
        case SF_JOB_GATES:
            for (k = 0; k < co->susp; k++)
                acc += sf_await_gate(co, &sf_gates[co->slot * TD_SUBJECT_MAX_SUSPENSIONS + k]);
            co->value = acc;
            break;
        case SF_JOB_LOOP:
            for (k = 0; k < co->awaits; k++) sf_wait_frame(co);
            break;
        case SF_JOB_CANCEL_MEMBER:
            sf_cancel_member(co);
            break;
        case SF_JOB_CANCEL_NESTED: {
            int canceled = 0;
            sf_cancel_nested(co, co->susp, &canceled);
            break;
        }
        }
        co->done = 1;
        sf_switch_suspend(co);
    }
}

/* ---- main-context side ---- */

static sf_co *sf_start(int job, uint32_t slot, int64_t value)
{
    sf_co *co = sf_rent();
    if (!co) return NULL;
    co->job = job;
    co->slot = slot;
    co->done = 0;
    co->value = value;
    sf_switch_resume(co);
    return co;
}

static int64_t sf_method_completed_get(uint32_t n)
{
    int64_t ok = 0;
    for (uint32_t i = 0; i < n; i++) {
        sf_co *co = sf_start(SF_JOB_DONE, 0, 1);
        if (co && co->done) ok += co->value;
        if (co) sf_return(co);
    }
    return ok;
}

static int64_t sf_method_completed_i64_get(uint32_t n)
{
    int64_t sum = 0;
    for (uint32_t i = 0; i < n; i++) {
        sf_co *co = sf_start(SF_JOB_DONE, 0, i);
        if (co && co->done) sum += co->value;
        if (co) sf_return(co);
    }
    return sum;
}

static void sf_frame(void)
{
    int run = sf_next;
    uint32_t n = sf_counts[run];
    sf_next ^= 1;
    sf_counts[sf_next] = 0;
    peer_frame_now++;
    for (uint32_t i = 0; i < n; i++) sf_switch_resume(sf_lists[run][i]);
    sf_counts[run] = 0;
}

static int sf_wait_schedule(int wl, uint32_t n)
{
    if (wl == TD_WL_NEXTFRAME) {
        peer_stamps_schedule(n);
        return 0;
    }
    for (uint32_t i = 0; i < n; i++) {
        sf_slots[i] = sf_start(SF_JOB_NEXTFRAME, i, wl == TD_WL_METHOD_NEXTFRAME_I64 ? (int64_t)i + 1 : 0);
        if (!sf_slots[i]) return -1;
    }
    return 0;
}

static uint32_t sf_slots_pending(uint32_t n)
{
    uint32_t p = 0;
    for (uint32_t i = 0; i < n; i++) p += !sf_slots[i] || !sf_slots[i]->done;
    return p;
}

static uint32_t sf_wait_pending(int wl, uint32_t n)
{
    return wl == TD_WL_NEXTFRAME ? peer_stamps_pending(n) : sf_slots_pending(n);
}

/* consumption: read the result, return the coroutine and its stack to the pool */
static int64_t sf_slots_get(int typed, uint32_t n)
{
    int64_t sum = 0;
    for (uint32_t i = 0; i < n; i++) {
        sf_co *co = sf_slots[i];
        if (!co || !co->done) continue;
        sum += typed ? co->value : 1;
        sf_slots[i] = NULL;
        sf_return(co);
    }
    return sum;
}

static int64_t sf_wait_get(int wl, uint32_t n)
{
    if (wl == TD_WL_NEXTFRAME) return peer_stamps_get(n);
    return sf_slots_get(wl == TD_WL_METHOD_NEXTFRAME_I64, n);
}

static int sf_gates_reset(uint32_t n, uint32_t susp)
{
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t k = 0; k < susp; k++) {
            sf_gate *g = &sf_gates[i * TD_SUBJECT_MAX_SUSPENSIONS + k];
            g->done = 0;
            g->waiter = NULL;
        }
    return 0;
}

static int sf_gates_start(int typed, uint32_t n, uint32_t susp)
{
    for (uint32_t i = 0; i < n; i++) {
        sf_co *co = sf_rent();
        if (!co) return -1;
        co->job = SF_JOB_GATES;
        co->slot = i;
        co->susp = susp;
        co->typed = typed;
        co->done = 0;
        sf_slots[i] = co;
        sf_switch_resume(co);
    }
    return 0;
}

static int sf_gates_complete(uint32_t n, uint32_t k)
{
    int bad = 0;
    for (uint32_t i = 0; i < n; i++) {
        sf_gate *g = &sf_gates[i * TD_SUBJECT_MAX_SUSPENSIONS + k];
        if (g->done) bad = -1;
        g->done = 1;
        g->value = (int64_t)(i + k);
        if (g->waiter) {
            sf_co *w = g->waiter;
            g->waiter = NULL;
            sf_switch_resume(w);
        }
    }
    return bad;
}

static int64_t sf_gates_get(int typed, uint32_t n, uint32_t susp)
{
    (void)susp;
    return sf_slots_get(typed, n);
}

static int sf_loops_start(int kind, uint32_t n, uint32_t awaits)
{
    for (uint32_t i = 0; i < n; i++) {
        sf_co *co = sf_rent();
        if (!co) return -1;
        co->job = SF_JOB_LOOP;
        co->slot = i;
        co->awaits = awaits;
        co->kind = kind;
        co->value = kind == TD_LOOP_NEXTFRAME_I64 ? 42 : 0;
        co->done = 0;
        sf_slots[i] = co;
        sf_switch_resume(co);
    }
    return 0;
}

static int64_t sf_loops_get(int kind, uint32_t n) { return sf_slots_get(kind == TD_LOOP_NEXTFRAME_I64, n); }

/* ---- cancellation groups ---- */

static int sf_cancel_start(int typed, int shape, uint32_t n)
{
    if (peer_group_begin(typed, shape, n)) return -1;
    if (shape == TD_CANCEL_NESTED) {
        if (!sf_deep->done && sf_deep->job == SF_JOB_CANCEL_NESTED) return -1;   /* still parked */
        sf_deep->job = SF_JOB_CANCEL_NESTED;
        sf_deep->susp = n - 1;     /* the depth below the outermost */
        sf_deep->token = peer_grp.token;
        sf_deep->done = 0;
        sf_switch_resume(sf_deep);
        return 0;
    }
    for (uint32_t i = 0; i < n; i++) {
        sf_co *co = sf_rent();
        if (!co) return -1;
        co->job = SF_JOB_CANCEL_MEMBER;
        co->slot = i;
        co->value = (int64_t)i + 1;
        co->token = peer_grp.token;
        co->done = 0;
        sf_slots[i] = co;
        sf_switch_resume(co);
    }
    return 0;
}

/* Consumption: the group's outcome; the members' coroutines go back to the pool. */
static int sf_cancel_get(int typed, td_cancel_tally *out)
{
    (void)typed;
    int shape = peer_grp.shape;
    uint32_t n = peer_grp.n;
    if (peer_group_get(out)) return -1;
    if (shape == TD_CANCEL_SIDE_BY_SIDE)
        for (uint32_t i = 0; i < n; i++) {
            sf_return(sf_slots[i]);
            sf_slots[i] = NULL;
        }
    return 0;
}

#define SF_SUBJECT_OPS(NAME, INIT)                                                          \
    const td_subject_ops td_subject = {                                                     \
        NAME, "stackful",                                                                   \
        INIT, peer_set_flow, sf_retain, sf_capacities,                                      \
        peer_completed_get, peer_from_result_get, sf_method_completed_get,                  \
        sf_method_completed_i64_get,                                                        \
        sf_wait_schedule, sf_frame, sf_wait_pending, sf_wait_get,                           \
        sf_gates_reset, sf_gates_start, sf_gates_complete, sf_slots_pending, sf_gates_get,  \
        sf_loops_start, sf_slots_pending, sf_loops_get,                                     \
        NULL,                                                                               \
        sf_cancel_start, peer_cancel_request, peer_cancel_pending, sf_cancel_get,           \
        NULL, NULL,                                                                         \
        "a stackful coroutine library has no when_any (or race) without a callback layer",  \
    }

#endif /* TD_STACKFUL_H */
