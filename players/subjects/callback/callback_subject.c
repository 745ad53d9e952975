/*
 * callback_subject.c - the lower bound: hand-written state machines whose continuations
 * are plain function pointers kept in per-frame arrays. Every slot's state is static
 * (no pool, no allocation ever); results are delivered into per-slot records.
 *   method completed:  the method calls its continuation inline with the result;
 *   method next-frame: the method registers its continuation in the next frame's array;
 *   gates:             a gate holds one waiter (fn, arg); completing it calls the waiter;
 *   loops:             the continuation re-registers itself for the next frame.
 * Flow on: the ambient pointer is captured at registration and restored at resumption.
 */
#include "td_peer.h"

typedef void (*cb_fn)(uint32_t slot);
typedef struct cb_entry { cb_fn fn; uint32_t slot; void *ambient; } cb_entry;

/* per-frame arrays: `cb_next` fills while the loop drains `cb_run` */
static cb_entry cb_lists[2][TD_SUBJECT_MAX_COHORT];
static uint32_t cb_counts[2];
static int cb_next;

static void cb_register(cb_fn fn, uint32_t slot)
{
    cb_entry *e = &cb_lists[cb_next][cb_counts[cb_next]++];
    e->fn = fn;
    e->slot = slot;
    e->ambient = peer_flow ? peer_ambient : NULL;
}

static void cb_frame(void)
{
    int run = cb_next;
    uint32_t n = cb_counts[run];
    cb_next ^= 1;
    cb_counts[cb_next] = 0;
    peer_frame_now++;
    cb_entry *l = cb_lists[run];
    for (uint32_t i = 0; i < n; i++) {
        if (peer_flow) peer_ambient = l[i].ambient;
        l[i].fn(l[i].slot);
    }
    cb_counts[run] = 0;
}

/* per-slot method state */
typedef struct cb_state {
    int32_t done;
    int32_t typed;
    uint32_t k, susp, i, awaits;
    int64_t value, acc;
} cb_state;
static cb_state cb_slots[TD_SUBJECT_MAX_COHORT];

typedef struct cb_gate { cb_fn waiter; uint32_t slot; int32_t done; int64_t value; void *ambient; } cb_gate;
static cb_gate cb_gates[TD_SUBJECT_MAX_COHORT * TD_SUBJECT_MAX_SUSPENSIONS];

static int cb_init(void) { return 0; }
static void cb_retain(uint32_t cohort) { (void)cohort; }
static const char *cb_capacities(void) { return "none (static per-slot state, no pools)"; }

/* ---- methods that complete synchronously: the continuation runs inline ---- */

typedef void (*cb_result_fn)(void *arg, int64_t value);
static void cb_sum_cont(void *arg, int64_t value) { *(int64_t *)arg += value; }

static void cb_method_done(cb_result_fn k, void *arg, int64_t value) { k(arg, value); }

static int64_t cb_method_completed_get(uint32_t n)
{
    int64_t sum = 0;
    cb_result_fn k = cb_sum_cont;
    TB_OPAQUE(k);
    for (uint32_t i = 0; i < n; i++) cb_method_done(k, &sum, 1);
    return sum;
}

static int64_t cb_method_completed_i64_get(uint32_t n)
{
    int64_t sum = 0;
    cb_result_fn k = cb_sum_cont;
    TB_OPAQUE(k);
    for (uint32_t i = 0; i < n; i++) cb_method_done(k, &sum, i);
    return sum;
}

/* ---- frame waits ---- */

static void cb_nf_resume(uint32_t slot)
{
    cb_state *s = &cb_slots[slot];
    s->done = 1;
}

static int cb_wait_schedule(int wl, uint32_t n)
{
    if (wl == TD_WL_NEXTFRAME) {
        peer_stamps_schedule(n);
        return 0;
    }
    for (uint32_t i = 0; i < n; i++) {
        cb_state *s = &cb_slots[i];
        s->done = 0;
        s->value = wl == TD_WL_METHOD_NEXTFRAME_I64 ? (int64_t)i + 1 : 0;
        cb_register(cb_nf_resume, i);
    }
    return 0;
}

static uint32_t cb_slots_pending(uint32_t n)
{
    uint32_t p = 0;
    for (uint32_t i = 0; i < n; i++) p += !cb_slots[i].done;
    return p;
}

static uint32_t cb_wait_pending(int wl, uint32_t n)
{
    return wl == TD_WL_NEXTFRAME ? peer_stamps_pending(n) : cb_slots_pending(n);
}

/* consumption: read the record and release the slot */
static int64_t cb_slots_get(int typed, uint32_t n)
{
    int64_t sum = 0;
    for (uint32_t i = 0; i < n; i++) {
        cb_state *s = &cb_slots[i];
        if (!s->done) continue;
        s->done = 0;
        sum += typed ? s->value : 1;
    }
    return sum;
}

static int64_t cb_wait_get(int wl, uint32_t n)
{
    if (wl == TD_WL_NEXTFRAME) return peer_stamps_get(n);
    return cb_slots_get(wl == TD_WL_METHOD_NEXTFRAME_I64, n);
}

/* ---- gates ---- */

static int cb_gates_reset(uint32_t n, uint32_t susp)
{
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t k = 0; k < susp; k++) {
            cb_gate *g = &cb_gates[i * TD_SUBJECT_MAX_SUSPENSIONS + k];
            g->done = 0;
            g->waiter = NULL;
        }
    return 0;
}

static void cb_gate_step(uint32_t slot);

/* await gate (slot, k): register, or continue inline when it is already complete */
static void cb_gate_await(uint32_t slot)
{
    cb_state *s = &cb_slots[slot];
    cb_gate *g = &cb_gates[slot * TD_SUBJECT_MAX_SUSPENSIONS + s->k];
    if (!g->done) {
        g->waiter = cb_gate_step;
        g->slot = slot;
        g->ambient = peer_flow ? peer_ambient : NULL;
        return;
    }
    cb_gate_step(slot);
}

static void cb_gate_step(uint32_t slot)
{
    cb_state *s = &cb_slots[slot];
    cb_gate *g = &cb_gates[slot * TD_SUBJECT_MAX_SUSPENSIONS + s->k];
    s->acc += g->value;
    if (++s->k < s->susp) {
        cb_gate_await(slot);
        return;
    }
    s->value = s->acc;
    s->done = 1;
}

static int cb_gates_start(int typed, uint32_t n, uint32_t susp)
{
    for (uint32_t i = 0; i < n; i++) {
        cb_state *s = &cb_slots[i];
        s->done = 0;
        s->typed = typed;
        s->k = 0;
        s->susp = susp;
        s->acc = 0;
        cb_gate_await(i);
    }
    return 0;
}

static int cb_gates_complete(uint32_t n, uint32_t k)
{
    int bad = 0;
    for (uint32_t i = 0; i < n; i++) {
        cb_gate *g = &cb_gates[i * TD_SUBJECT_MAX_SUSPENSIONS + k];
        if (g->done) bad = -1;
        g->done = 1;
        g->value = (int64_t)(i + k);
        if (g->waiter) {
            cb_fn w = g->waiter;
            g->waiter = NULL;
            if (peer_flow) peer_ambient = g->ambient;
            w(g->slot);
        }
    }
    return bad;
}

static int64_t cb_gates_get(int typed, uint32_t n, uint32_t susp)
{
    (void)susp;
    return cb_slots_get(typed, n);
}

/* ---- throughput loops ---- */

static void cb_loop_step(uint32_t slot)
{
    cb_state *s = &cb_slots[slot];
    if (++s->i < s->awaits) {
        cb_register(cb_loop_step, slot);
        return;
    }
    s->done = 1;
}

static int cb_loops_start(int kind, uint32_t n, uint32_t awaits)
{
    for (uint32_t i = 0; i < n; i++) {
        cb_state *s = &cb_slots[i];
        s->done = 0;
        s->i = 0;
        s->awaits = awaits;
        s->value = kind == TD_LOOP_NEXTFRAME_I64 ? 42 : 0;
        cb_register(cb_loop_step, i);
    }
    return 0;
}

static int64_t cb_loops_get(int kind, uint32_t n) { return cb_slots_get(kind == TD_LOOP_NEXTFRAME_I64, n); }

/* ---- whenany: a combinator record; the first input to complete wins ---- */

typedef struct cb_any { int32_t winner; int64_t value; uint32_t seen; } cb_any;

static void cb_any_on_input(cb_any *a, uint32_t j, int64_t value)
{
    a->seen++;
    if (a->winner < 0) {
        a->winner = (int32_t)j;
        a->value = value;
    }
}

static int64_t cb_whenany(int typed, uint32_t inputs, uint32_t reps)
{
    int64_t sum = 0;
    for (uint32_t rep = 0; rep < reps; rep++) {
        cb_any a;
        a.winner = -1;
        a.value = 0;
        a.seen = 0;
        for (uint32_t j = inputs; j-- > 0;) cb_any_on_input(&a, j, 100 + (int64_t)j);
        if (a.seen != inputs || a.winner != (int32_t)inputs - 1) return -1;
        sum += typed ? a.value : a.winner;
    }
    return sum;
}

/* ---- cancellation groups: a member is a frame callback; nested, a chain of continuations ---- */

static int64_t cb_member_values[TD_SUBJECT_MAX_COHORT];

/* a side-by-side member resumed by the frame: its outcome, cleanup, completion (the join) */
static void cb_member_resume(uint32_t slot)
{
    int canceled = peer_group_observe(peer_grp.token);
    peer_group_cleanup(canceled, peer_grp.token);
    peer_group_finished(canceled ? 0 : cb_member_values[slot]);
}

/* nested: level `level` completes with its callee's outcome, then its caller's continuation */
static void cb_nested_complete(uint32_t level, int canceled, int64_t value)
{
    peer_group_cleanup(canceled, peer_grp.token);
    peer_group_finished(canceled ? 0 : value);
    if (level > 0) cb_nested_complete(level - 1, canceled, value + 1);
}

static void cb_nested_resume(uint32_t innermost)
{
    cb_nested_complete(innermost, peer_group_observe(peer_grp.token), 1);
}

static int cb_cancel_start(int typed, int shape, uint32_t n)
{
    if (peer_group_begin(typed, shape, n)) return -1;
    if (shape == TD_CANCEL_NESTED) {
        cb_register(cb_nested_resume, n - 1);
        return 0;
    }
    for (uint32_t i = 0; i < n; i++) {
        cb_member_values[i] = (int64_t)i + 1;
        cb_register(cb_member_resume, i);
    }
    return 0;
}

static int cb_cancel_get(int typed, td_cancel_tally *out)
{
    (void)typed;
    return peer_group_get(out);
}

/* ---- per-frame race: the frame callback wins and cancels the loser on the signal ---- */

typedef struct cb_race {
    int32_t loser, settled, winner;
    uint32_t loser_canceled, cleanups;
    cb_fn signal_waiter;          /* the signal's one waiter (never raised) */
} cb_race;
static cb_race cb_rc;

static void cb_on_signal(uint32_t slot) { (void)slot; }   /* the signal never comes */

/* the method loser's continuation: its outcome, cleanup, completion */
static void cb_waiter_complete(int canceled)
{
    cb_rc.cleanups++;
    cb_rc.loser_canceled += canceled;
}

static void cb_race_on_frame(uint32_t slot)
{
    (void)slot;
    cb_rc.winner = 0;
    cb_rc.settled = 1;
    cb_rc.signal_waiter = NULL;             /* the loser leaves the signal */
    if (cb_rc.loser == TD_RACE_METHOD) cb_waiter_complete(1);
    else cb_rc.loser_canceled++;
}

static int cb_race_start(int loser)
{
    if (loser != TD_RACE_LEAF && loser != TD_RACE_METHOD) return -1;
    cb_rc = (cb_race){ 0 };
    cb_rc.loser = loser;
    cb_rc.winner = -1;
    cb_rc.signal_waiter = cb_on_signal;
    cb_register(cb_race_on_frame, 0);
    return 0;
}

static int cb_race_get(int loser, td_cancel_tally *out)
{
    if (!cb_rc.settled || cb_rc.loser != loser) return -1;
    out->status = TD_TALLY_SUCCEEDED;
    out->token_ok = 0;
    out->value = cb_rc.winner;
    out->cleanups = cb_rc.cleanups;
    out->canceled = cb_rc.loser_canceled;
    return 0;
}

const td_subject_ops td_subject = {
    "callback", "callbacks",
    cb_init, peer_set_flow, cb_retain, cb_capacities,
    peer_completed_get, peer_from_result_get, cb_method_completed_get, cb_method_completed_i64_get,
    cb_wait_schedule, cb_frame, cb_wait_pending, cb_wait_get,
    cb_gates_reset, cb_gates_start, cb_gates_complete, cb_slots_pending, cb_gates_get,
    cb_loops_start, cb_slots_pending, cb_loops_get,
    cb_whenany,
    cb_cancel_start, peer_cancel_request, peer_cancel_pending, cb_cancel_get,
    cb_race_start, cb_race_get,
    NULL,
};
