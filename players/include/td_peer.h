/*
 * td_peer.h - what the peer subjects (callback, fcontext, ucontext) share: their frame
 * counter, an emulated ambient context for flow-on rows, and the plain result handles
 * they use for the rows that have no method in them.
 *
 * A peer has no task value: a completed operation is a plain {done, value} handle and a
 * bare next-frame wait is a {target frame} stamp checked against the peer's frame
 * counter. So `Completed`, `FromResult<int>` and bare `NextFrame` rows are the same code
 * for every peer (the lower bound of "a handle with a result"), written once here.
 * Flow on: a peer captures the ambient pointer at every suspension and restores it at
 * resumption (a plain variable: the peers run on the main thread only).
 */
#ifndef TD_PEER_H
#define TD_PEER_H

#include <stdint.h>
#include "td_bench.h"

typedef struct peer_handle {
    int32_t done;
    int64_t value;
} peer_handle;

static uint32_t peer_frame_now;       /* frames run by the peer's loop */
static void *peer_ambient;            /* the ambient context (flow emulation) */
static int peer_flow;
static uint32_t peer_stamps[TD_SUBJECT_MAX_COHORT];

static void peer_set_flow(int on) { peer_flow = on; }

static const peer_handle peer_completed_handle = { 1, 0 };

static int64_t peer_completed_get(uint32_t n)
{
    int64_t sum = 0;
    for (uint32_t i = 0; i < n; i++) {
        const peer_handle *h = &peer_completed_handle;
        TB_OPAQUE(h);
        if (h->done) sum += 1;
    }
    return sum;
}

static int64_t peer_from_result_get(uint32_t n)
{
    int64_t sum = 0;
    for (uint32_t i = 0; i < n; i++) {
        peer_handle h;
        h.done = 1;
        h.value = i;
        TB_OPAQUE(h.done);
        if (h.done) sum += h.value;
    }
    return sum;
}

/* bare next-frame waits: a stamp per slot */
static void peer_stamps_schedule(uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) peer_stamps[i] = peer_frame_now + 1;
}

static uint32_t peer_stamps_pending(uint32_t n)
{
    uint32_t p = 0;
    for (uint32_t i = 0; i < n; i++) p += (int32_t)(peer_frame_now - peer_stamps[i]) < 0;
    return p;
}

static int64_t peer_stamps_get(uint32_t n)
{
    int64_t ok = 0;
    for (uint32_t i = 0; i < n; i++) ok += (int32_t)(peer_frame_now - peer_stamps[i]) >= 0;
    return ok;
}

/* ---- cancellation groups (td_subject.h, TD_CANCEL_*): the bookkeeping every peer shares ----
 * A peer's token is the group's number: cancelling sets `requested`; a method that resumes
 * at the frame reads it as its outcome (CANCELED naming the token it was started with), runs
 * its cleanup (peer_group_cleanup) and completes; the group completes when every method
 * has (side by side: a join count, the when_all's; nested: when the outermost has). */
typedef struct peer_group {
    uint32_t token;           /* this group's token (a new one per group) */
    int32_t requested;        /* the token was cancelled */
    int32_t typed, shape, started;
    uint32_t n, finished;     /* methods, methods completed */
    uint32_t cleanups, canceled;
    int64_t value;            /* typed: the group's result */
} peer_group;

static peer_group peer_grp;

static int peer_group_begin(int typed, int shape, uint32_t n)
{
    if (n == 0 || n > TD_SUBJECT_MAX_COHORT || (shape != TD_CANCEL_SIDE_BY_SIDE && shape != TD_CANCEL_NESTED) ||
        peer_grp.started)
        return -1;
    uint32_t token = peer_grp.token + 1;
    peer_grp = (peer_group){ 0 };
    peer_grp.token = token;
    peer_grp.typed = typed;
    peer_grp.shape = shape;
    peer_grp.started = 1;
    peer_grp.n = n;
    return 0;
}

static int peer_cancel_request(void)
{
    if (!peer_grp.started || peer_grp.requested) return -1;
    peer_grp.requested = 1;
    return 0;
}

/* The outcome a resumed leaf reads: 1 canceled (with the group's token), 0 reached. */
static int peer_group_observe(uint32_t token) { return peer_grp.requested && token == peer_grp.token; }

/* A method's cleanup step (its `finally`): counted, with the outcome it ends with. */
static void peer_group_cleanup(int canceled, uint32_t token)
{
    peer_grp.cleanups++;
    peer_grp.canceled += canceled && token == peer_grp.token;
}

/* A method completed with `value`: side by side, the join's count and the sum of results;
 * nested, the callers complete after their callees, so the last value is the outermost's. */
static void peer_group_finished(int64_t value)
{
    peer_grp.finished++;
    peer_grp.value = peer_grp.shape == TD_CANCEL_NESTED ? value : peer_grp.value + value;
}

static uint32_t peer_cancel_pending(void) { return peer_grp.n - peer_grp.finished; }

/* The group's outcome: CANCELED (naming the token) when a method read it, else SUCCEEDED. */
static int peer_group_get(td_cancel_tally *out)
{
    if (!peer_grp.started || peer_grp.finished != peer_grp.n) return -1;
    int canceled = peer_grp.canceled > 0;
    out->status = canceled ? TD_TALLY_CANCELED : TD_TALLY_SUCCEEDED;
    out->token_ok = canceled;
    out->cleanups = peer_grp.cleanups;
    out->canceled = peer_grp.canceled;
    out->value = peer_grp.typed && !canceled ? peer_grp.value : 0;
    peer_grp.started = 0;
    return 0;
}

#endif /* TD_PEER_H */
