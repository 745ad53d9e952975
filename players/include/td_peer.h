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

#endif /* TD_PEER_H */
