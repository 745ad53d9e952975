/*
 * task_model.c - the reference model (task_model.h). Each rule cites the header sentence it
 * comes from; where the headers leave an order open (several completions in one frame) the
 * model follows the order loop.h states (a timing's queue before its items, items in the
 * order they were added) and the fuzzer avoids the rest (tm_input_ok).
 */
#include "task_model.h"
#include "task_model_internal.h"
#include <string.h>
#include <tandem/tandem.h>

static const char *const kind_names[TM_KIND_COUNT] = {
    "manual", "auto", "runner_i64", "runner", "from_result", "from_error", "from_canceled",
    "next_frame", "yield", "delay_frame", "frame_wait_token", "delay", "when_all", "when_any",
    "race", "timeout", "attach_cancel", "suppress_cancel", "from_callback", "future", "shared"
};

const char *tm_kind_name(tm_kind k)
{
    return (unsigned)k < TM_KIND_COUNT ? kind_names[k] : "?";
}

void tm_init(tm_model *m, int64_t now)
{
    memset(m, 0, sizeof(*m));
    m->now = now;
    m->source_cap = TD_DEFAULT_SOURCE_POOL_CAPACITY;
    m->runner_cap = TD_DEFAULT_RUNNER_POOL_CAPACITY;
}

static int is_marker(tm_kind k) { return k == TM_NEXT_FRAME || k == TM_YIELD || k == TM_DELAY_FRAME; }
static int is_runner(tm_kind k) { return k == TM_RUNNER || k == TM_RUNNER_I64; }

static int new_handle(tm_model *m, tm_kind kind)
{
    if (m->nh >= TM_MAX_HANDLES)
        return -1;
    int i = m->nh++;
    tm_handle *h = &m->h[i];
    memset(h, 0, sizeof(*h));
    h->kind = kind;
    h->out = tm_outcome_of_(TD_PENDING, 0, 0, 0);
    h->shared_by = -1;
    h->cs = -1;
    h->loop_gen = m->loop_gen;
    h->multi_reader = is_marker(kind) || kind == TM_SHARED;
    return i;
}

/* ---- consumption and the pool rule --------------------------------------------------- */

/* task.h: a source whose pool was full when it was released is freed and must not be
 * queried again. A consumed task may be queried (to read TD_E_STALE) only while its object
 * is certainly alive: another owner still holds it, or no pool could have freed it. */
static void consume(tm_model *m, int i)
{
    tm_handle *h = &m->h[i];
    h->consumed = 1;
    if (is_runner(h->kind)) {
        h->consume_safe = m->runner_cap >= TM_SAFE_CAPACITY;
        h->consume_epoch = m->runner_epoch;
    } else {
        h->consume_safe = m->source_cap >= TM_SAFE_CAPACITY;
        h->consume_epoch = m->source_epoch;
    }
}

/* compose.h / loop.h / adapter.h: the other owners a consumed object can still have. */
static int held_by_others(const tm_handle *h)
{
    switch (h->kind) {
    case TM_WHEN_ALL: case TM_WHEN_ANY: case TM_RACE: case TM_ATTACH: case TM_SUPPRESS:
    case TM_TIMEOUT:            /* a timeout's inputs: the producer and its delay */
        return h->inputs_done < h->ninputs;
    case TM_DELAY: case TM_FRAME_TOKEN:
        return h->item_held;
    case TM_CALLBACK: case TM_FUTURE:
        return !h->answered && !h->no_answer;
    default:
        return 0;
    }
}

static int object_alive(const tm_model *m, const tm_handle *h)
{
    if (h->kind == TM_MANUAL || h->sourceless || h->multi_reader || held_by_others(h))
        return 1;
    uint32_t epoch = is_runner(h->kind) ? m->runner_epoch : m->source_epoch;
    return h->consume_safe && h->consume_epoch == epoch;
}

/* ---- completion and its continuations ---------------------------------------------------- */

static void input_done(tm_model *m, int parent, int input);

static void run_sub(tm_model *m, int i, const tm_sub *s)
{
    tm_handle *h = &m->h[i];
    switch (s->type) {
    case TM_SUB_USER:
        h->cont_expected++;
        break;
    case TM_SUB_PARENT:
        input_done(m, s->target, i);
        break;
    case TM_SUB_SHARED:         /* shared.h: the handle consumes the original, keeps the outcome */
        if (!h->multi_reader && !h->sourceless)
            consume(m, i);
        tm_finish_(m, s->target, &h->out);
        break;
    case TM_SUB_FORGET:         /* forget.h: consumed when complete, an unobserved fault counted */
        consume(m, i);
        if (h->out.status == TD_FAULTED)
            m->unobserved++;
        break;
    }
}

/* The first completion wins (completion.h); the continuations run inline, in order. A frame
 * marker's continuations are queued on the loop instead (run_frame). */
void tm_finish_(tm_model *m, int i, const tm_outcome *o)
{
    tm_handle *h = &m->h[i];
    if (h->out.status != TD_PENDING)
        return;
    h->out = *o;
    if (is_marker(h->kind))
        return;
    for (int s = 0; s < h->nsubs; s++)
        run_sub(m, i, &h->subs[s]);
}

static int is_complete(const tm_handle *h) { return h->sourceless || h->out.status != TD_PENDING; }

/* td_task_on_completed's rule for one subscriber: TD_DONE when complete (not registered: a
 * user continuation never runs, the runtime's own subscribers take the task inline); else
 * registered (a marker's on the loop's queue). */
static int subscribe(tm_model *m, int i, int type, int target)
{
    tm_handle *h = &m->h[i];
    tm_sub s;
    s.type = type;
    s.target = target;
    if (is_complete(h)) {
        if (type != TM_SUB_USER)
            run_sub(m, i, &s);
        return TD_DONE;
    }
    if (is_marker(h->kind)) {
        if (m->nqueue < TM_MAX_QUEUE) {
            m->queue[m->nqueue].handle = i;
            m->queue[m->nqueue].sub = h->nsubs;
            m->nqueue++;
        }
    }
    if (h->nsubs < TM_MAX_SUBS)
        h->subs[h->nsubs++] = s;
    return TD_OK;
}

/* ---- combinators (compose.h) ---------------------------------------------------------------- */

static void decide_first(tm_model *m, int p, int idx, const tm_outcome *o)
{
    tm_handle *c = &m->h[p];
    if (c->decided)
        return;                 /* a late loser: consumed, nothing else */
    c->decided = 1;
    tm_outcome r = *o;
    switch (c->kind) {
    case TM_WHEN_ANY:
    case TM_RACE:               /* the winner's index as value; race cancels the losers first */
        if (c->kind == TM_RACE && c->cs >= 0)
            tm_cancel_source_(m, c->cs);
        r.value = idx;
        r.value_known = 1;
        break;
    case TM_TIMEOUT:            /* the producer's outcome, else timed out */
        if (idx == 1 && o->status == TD_SUCCEEDED)
            r = c->with_error ? tm_outcome_of_(TD_FAULTED, 0, 0, TD_ERR_TIMEOUT)
                              : tm_outcome_of_(TD_SUCCEEDED, 0, 1, TD_ERR_TIMEOUT);
        if (!c->delay_done) {   /* "a producer that wins stops the delay": abandoned, */
            c->delay_done = 1;  /* it completes at once and is consumed as a late loser */
            c->inputs_done++;
        }
        break;
    case TM_SUPPRESS:           /* a cancellation becomes a success flagged canceled */
        if (o->status == TD_CANCELED)
            r = tm_outcome_of_(TD_SUCCEEDED, 0, 1, TD_ERR_CANCELED);
        break;
    default:
        break;
    }
    tm_finish_(m, p, &r);
}

static void decide_all(tm_model *m, int p, const tm_outcome *o)
{
    tm_handle *c = &m->h[p];
    /* the first fault, else the first cancellation, else success */
    if (o->status != TD_SUCCEEDED &&
        (c->all.status == TD_SUCCEEDED || (c->all.status == TD_CANCELED && o->status == TD_FAULTED)))
        c->all = tm_outcome_of_(o->status, 0, 0, o->code);
    if (c->inputs_done == c->ninputs)
        tm_finish_(m, p, &c->all);
}

/* A combinator's input completed: the combinator consumes it (compose.h). */
static void input_done(tm_model *m, int p, int input)
{
    tm_handle *c = &m->h[p];
    tm_handle *in = &m->h[input];
    int idx = 0;
    while (idx < c->ninputs && c->inputs[idx] != input)
        idx++;
    if (!in->multi_reader && !in->sourceless)
        consume(m, input);
    c->inputs_done++;
    tm_outcome o = in->sourceless ? tm_outcome_of_(TD_SUCCEEDED, in->out.value, 1, 0) : in->out;
    if (c->kind == TM_WHEN_ALL)
        decide_all(m, p, &o);
    else
        decide_first(m, p, idx, &o);
}

int tm_input_ok(const tm_model *m, int i, const int *chosen, int n)
{
    const tm_handle *h = &m->h[i];
    int frame_driven = 0;
    for (int k = 0; k < n; k++) {
        if (chosen[k] == i)
            return 0;
        frame_driven += m->h[chosen[k]].frame_driven;
    }
    /* Two inputs that may complete in one frame would make the winner depend on an order
     * the headers do not state: at most one frame-driven input per combinator. */
    if (h->frame_driven && frame_driven > 0)
        return 0;
    return h->owner == TM_OWNER_USER && !h->consumed && !h->user_awaited && h->shared_by < 0 &&
           h->nsubs < TM_MAX_SUBS;
}

void tm_add_item_(tm_model *m, int type, int target, int64_t deadline)
{
    if (m->nitems >= TM_MAX_ITEMS)
        return;
    m->items[m->nitems].type = type;
    m->items[m->nitems].target = target;
    m->items[m->nitems].deadline = deadline;
    m->nitems++;
}

static void timeout_delay_done(tm_model *m, int p, int status);

/* compose.h: a timeout's delay is made (with the options' token) before its inputs are
 * subscribed; it is input 1. A token cancelled already completes the delay canceled at
 * once, which the timeout takes once the producer is subscribed (unless that decided). */
static int timeout_delay_start(tm_model *m, int p, int64_t ns, int immediate)
{
    tm_handle *c = &m->h[p];
    c->frame_driven = 1;
    c->ninputs = 2;
    c->inputs[1] = -1;
    if (c->cs >= 0 && m->cs[c->cs].cancelled)
        return 1;
    tm_add_item_(m, TM_ITEM_TIMEOUT, p, m->now + ns);
    if (c->cs >= 0 && immediate)
        tm_add_reg_(m, c->cs, TM_REG_TIMEOUT, p);
    return 0;
}

int tm_make_combinator(tm_model *m, tm_kind kind, const int *inputs, int n, int cs, int64_t ns,
                       int with_error, int immediate)
{
    if (kind == TM_SUPPRESS && m->h[inputs[0]].sourceless) {
        /* compose.h: a source-free input is returned as it is */
        int i = new_handle(m, TM_SUPPRESS);
        if (i < 0)
            return -1;
        m->h[i].sourceless = 1;
        m->h[i].out = m->h[inputs[0]].out;
        m->h[inputs[0]].owner = TM_OWNER_COMBINATOR;
        return i;
    }
    int p = new_handle(m, kind);
    if (p < 0)
        return -1;
    tm_handle *c = &m->h[p];
    c->ninputs = n;
    c->cs = cs;
    c->with_error = with_error;
    c->all = tm_outcome_of_(TD_SUCCEEDED, 0, 1, 0);
    for (int k = 0; k < n; k++) {
        c->inputs[k] = inputs[k];
        c->frame_driven |= m->h[inputs[k]].frame_driven;
        m->h[inputs[k]].owner = TM_OWNER_COMBINATOR;
    }
    int delay_cancelled = kind == TM_TIMEOUT && timeout_delay_start(m, p, ns, immediate);
    if (kind == TM_ATTACH && cs >= 0)
        c->frame_driven = 1;
    for (int k = 0; k < n; k++)
        subscribe(m, inputs[k], TM_SUB_PARENT, p);
    if (delay_cancelled)
        timeout_delay_done(m, p, TD_CANCELED);
    if (kind == TM_ATTACH && cs >= 0 && !c->decided) {
        if (m->cs[cs].cancelled) {
            c->decided = 1;
            tm_outcome o = tm_canceled_outcome_();
            tm_finish_(m, p, &o);
        } else {
            tm_add_reg_(m, cs, TM_REG_ATTACH, p);
        }
    }
    return p;
}

/* The timeout's delay completed: elapsed, or cancelled (its token, the loop's retirement);
 * a no-op once the timeout was decided (the delay was abandoned then). */
void tm_timeout_delay_done_(tm_model *m, int p, int status) { timeout_delay_done(m, p, status); }

static void timeout_delay_done(tm_model *m, int p, int status)
{
    tm_handle *c = &m->h[p];
    if (c->delay_done)
        return;
    c->delay_done = 1;
    c->inputs_done++;
    tm_outcome o = status == TD_SUCCEEDED ? tm_outcome_of_(TD_SUCCEEDED, 0, 1, 0) : tm_canceled_outcome_();
    decide_first(m, p, 1, &o);
}

/* ---- making tasks ------------------------------------------------------------------------- */

int tm_make_manual(tm_model *m, tm_kind kind)
{
    return new_handle(m, kind);             /* pending until its producer completes it */
}

int tm_make_value(tm_model *m, tm_kind kind, int64_t v, int code)
{
    int i = new_handle(m, kind);
    if (i < 0)
        return -1;
    tm_handle *h = &m->h[i];
    if (kind == TM_FROM_RESULT) {
        h->sourceless = 1;                  /* task.h: a typed task with no source */
        h->out = tm_outcome_of_(TD_SUCCEEDED, v, 1, 0);
    } else if (kind == TM_FROM_ERROR) {
        h->out = tm_outcome_of_(TD_FAULTED, 0, 0, code);
    } else {
        h->out = tm_canceled_outcome_();
    }
    return i;
}

/* loop.h: td_next_frame and td_yield between frames target the next frame; td_delay_frame(n)
 * the n-th frame from now. */
int tm_make_frame(tm_model *m, tm_kind kind, uint32_t frames)
{
    int i = new_handle(m, kind);
    if (i < 0)
        return -1;
    m->h[i].frame_driven = 1;
    m->h[i].target_frame = m->frame + (kind == TM_DELAY_FRAME ? frames : 1);
    return i;
}

/* Pooled waits (loop.h): a token already cancelled completes the wait canceled at once; else
 * a loop item checks it every frame, and cancel_immediately also registers on the token. */
int tm_make_wait(tm_model *m, tm_kind kind, uint32_t frames, int64_t ns, int cs, int immediate)
{
    int i = new_handle(m, kind);
    if (i < 0)
        return -1;
    tm_handle *h = &m->h[i];
    h->frame_driven = 1;
    h->cs = cs;
    h->target_frame = m->frame + frames;
    h->deadline = m->now + ns;
    if (cs >= 0 && m->cs[cs].cancelled) {
        h->out = tm_canceled_outcome_();
        return i;
    }
    if (cs >= 0 && immediate)
        tm_add_reg_(m, cs, TM_REG_WAIT, i);
    h->item_held = 1;
    tm_add_item_(m, TM_ITEM_WAIT, i, h->deadline);
    return i;
}

static tm_outcome adapter_outcome(int status, int64_t value)
{
    if (status == TD_ADAPT_OK)
        return tm_outcome_of_(TD_SUCCEEDED, value, 1, 0);
    if (status == TD_ADAPT_CANCELED)
        return tm_canceled_outcome_();
    return tm_outcome_of_(TD_FAULTED, 0, 0, status);
}

/* adapter.h: a cancelled token gives a canceled task and the operation is not started; a
 * token cancelled later completes the task canceled unless the answer came first; an
 * answer that succeeded before the task was returned gives a source-free task. */
int tm_make_adapter(tm_model *m, tm_kind kind, int cs, int inline_answer, int inline_status,
                    int64_t value)
{
    int i = new_handle(m, kind);
    if (i < 0)
        return -1;
    tm_handle *h = &m->h[i];
    h->cs = cs;
    h->frame_driven = cs >= 0;
    if (cs >= 0 && m->cs[cs].cancelled) {
        h->out = tm_canceled_outcome_();    /* a canceled task that no answer reaches */
        h->no_answer = 1;
        return i;
    }
    if (cs >= 0)
        tm_add_reg_(m, cs, TM_REG_ADAPTER, i);
    if (kind == TM_CALLBACK && inline_answer) {
        h->answered = 1;
        h->out = adapter_outcome(inline_status, value);
        h->sourceless = h->out.status == TD_SUCCEEDED;
    }
    return i;
}

/* ---- producers ------------------------------------------------------------------------------ */

int tm_can_produce(const tm_model *m, int i)
{
    const tm_handle *h = &m->h[i];
    switch (h->kind) {
    case TM_MANUAL:
        return !h->round_over;
    case TM_RUNNER: case TM_RUNNER_I64: case TM_FUTURE:
        return 1;
    case TM_AUTO:       /* the source object itself must still exist */
        return !h->consumed || object_alive(m, h);
    case TM_CALLBACK:   /* done is called exactly once */
        return !h->answered && !h->no_answer;
    default:
        return 0;
    }
}

int tm_produce(tm_model *m, int i, const tm_outcome *o)
{
    tm_handle *h = &m->h[i];
    int rc;
    tm_outcome r = *o;
    switch (h->kind) {
    case TM_MANUAL:     /* completion.h: the first completer wins, the others get TD_DONE */
        rc = h->out.status == TD_PENDING ? TD_OK : TD_DONE;
        break;
    case TM_AUTO:       /* a recycled source rejects its old token */
        rc = h->consumed ? TD_E_STALE : h->out.status == TD_PENDING ? TD_OK : TD_DONE;
        break;
    case TM_RUNNER: case TM_RUNNER_I64:
        /* the gate is a manual source the method awaits: its value + 1, faults and
         * cancellations propagate */
        rc = h->answered ? TD_DONE : TD_OK;
        if (h->answered)
            return rc;
        h->answered = 1;
        if (r.status == TD_SUCCEEDED) {
            r.value += 1;
            r.value_known = h->kind == TM_RUNNER_I64;
        }
        break;
    case TM_FUTURE:     /* set once: TD_OK, then TD_DONE */
        rc = h->answered ? TD_DONE : TD_OK;
        if (h->answered)
            return rc;
        h->answered = 1;
        break;
    default:            /* the callback's done: no return code */
        h->answered = 1;
        rc = TD_OK;
        break;
    }
    if (rc == TD_OK && !h->no_answer)
        tm_finish_(m, i, &r);
    return rc;
}

/* Defined while the old round's task is the user's and nobody waits on it: a waiter's
 * continuation would never run (completion.h: the reset is the owner's, between rounds). */
int tm_may_reset(const tm_model *m, int i)
{
    const tm_handle *h = &m->h[i];
    return h->kind == TM_MANUAL && !h->round_over && h->owner == TM_OWNER_USER &&
           h->nsubs == 0 && h->shared_by < 0 && m->nh < TM_MAX_HANDLES;
}

int tm_reset(tm_model *m, int i)
{
    m->h[i].round_over = 1;
    m->h[i].consumed = 1;       /* stale, and the source lives on: queries read TD_E_STALE */
    return tm_make_manual(m, TM_MANUAL);
}

/* ---- queries ---------------------------------------------------------------------------------- */

int tm_may_query(const tm_model *m, int i)
{
    const tm_handle *h = &m->h[i];
    if (h->owner != TM_OWNER_USER)
        return 0;               /* given to a combinator or forgotten: not ours any more */
    return !h->consumed || object_alive(m, h);
}

int tm_can_subscribe(const tm_model *m, int i) { return m->h[i].nsubs < TM_MAX_SUBS; }

static void consumer_outcome(const tm_handle *h, tm_outcome *out)
{
    *out = h->out;
    if (h->sourceless)
        out->value_known = 1;
}

/* task.h / loop.h / shared.h: get consumes a protocol source's completed task once; stale
 * afterwards; pending (awaited when a waiter is registered); shared after td_task_share.
 * Frame markers and shared tasks are multi-reader: get never consumes. */
int tm_get(tm_model *m, int i, tm_outcome *out)
{
    tm_handle *h = &m->h[i];
    if (h->sourceless) {
        consumer_outcome(h, out);
        return TD_OK;
    }
    if (h->multi_reader) {
        if (h->out.status == TD_PENDING)
            return TD_E_PENDING;
        consumer_outcome(h, out);
        return TD_OK;
    }
    if (h->consumed)
        return TD_E_STALE;
    if (h->shared_by >= 0)
        return TD_E_SHARED;
    if (h->out.status == TD_PENDING)
        return h->user_awaited ? TD_E_AWAITED : TD_E_PENDING;
    consumer_outcome(h, out);
    consume(m, i);
    return TD_OK;
}

int tm_status(const tm_model *m, int i, int *status)
{
    const tm_handle *h = &m->h[i];
    if (h->sourceless) {
        *status = TD_SUCCEEDED;
        return TD_OK;
    }
    if (h->consumed && !h->multi_reader)
        return TD_E_STALE;
    if (h->shared_by >= 0)
        return TD_E_SHARED;     /* task.h: "the task was turned into a shared handle" */
    *status = h->out.status;
    return TD_OK;
}

int tm_on_completed(tm_model *m, int i)
{
    tm_handle *h = &m->h[i];
    if (h->sourceless)
        return TD_DONE;
    if (!h->multi_reader) {
        if (h->consumed)
            return TD_E_STALE;
        if (h->shared_by >= 0)
            return TD_E_SHARED;
        if (h->user_awaited)    /* single consumer: one waiter, before or after completion */
            return TD_E_AWAITED;
        if (h->out.status == TD_PENDING)
            h->user_awaited = 1;
    }
    return subscribe(m, i, TM_SUB_USER, 0);
}

/* shared.h: a handle over the task; the original reads TD_E_SHARED until the handle consumes
 * it at its completion. A task with a waiter cannot be shared (TD_E_AWAITED). */
int tm_share(tm_model *m, int i, int *shared)
{
    tm_handle *h = &m->h[i];
    *shared = -1;
    if (!h->multi_reader && !h->sourceless) {
        if (h->consumed)
            return TD_E_STALE;
        if (h->shared_by >= 0)
            return TD_E_SHARED;
        if (h->user_awaited)    /* "a source that already has a native waiter" */
            return TD_E_AWAITED;
    }
    int s = new_handle(m, TM_SHARED);
    if (s < 0)
        return TD_E_NOMEM;      /* the executor does not call the runtime then */
    m->h[s].frame_driven = m->h[i].frame_driven;
    m->h[s].inputs[0] = i;
    if (!h->multi_reader && !h->sourceless)
        h->shared_by = s;
    if (h->sourceless) {
        tm_outcome o = tm_outcome_of_(TD_SUCCEEDED, h->out.value, 1, 0);
        tm_finish_(m, s, &o);
    } else {
        subscribe(m, i, TM_SUB_SHARED, s);
    }
    *shared = s;
    return TD_OK;
}

int tm_may_forget(const tm_model *m, int i)
{
    const tm_handle *h = &m->h[i];
    return h->owner == TM_OWNER_USER && !h->consumed && !h->user_awaited && h->shared_by < 0;
}

/* forget.h: takes ownership; consumes at completion; a fault is reported once. Stateless
 * sources (frame waits, shared tasks) own nothing: a no-op. */
void tm_forget(tm_model *m, int i)
{
    tm_handle *h = &m->h[i];
    h->owner = TM_OWNER_FORGOTTEN;
    if (h->sourceless || h->multi_reader)
        return;
    subscribe(m, i, TM_SUB_FORGET, 0);
}

/* ---- the loop (loop.h) ------------------------------------------------------------------------ */

/* One loop item's turn: 1 keeps it for the next frame, 0 detaches it. A wait's item drops
 * its object once the wait completed by any means (its ownership ends there). */
static int tick_item(tm_model *m, const tm_item *it)
{
    if (it->type == TM_ITEM_CANCEL_AFTER) {
        if (m->now < it->deadline)
            return 1;
        m->cs[it->target].armed = 0;
        tm_cancel_source_(m, it->target);
        return 0;
    }
    if (it->type == TM_ITEM_TIMEOUT) {
        tm_handle *c = &m->h[it->target];
        if (c->delay_done)
            return 0;
        if (c->cs >= 0 && m->cs[c->cs].cancelled)
            timeout_delay_done(m, it->target, TD_CANCELED);
        else if (m->now >= it->deadline)
            timeout_delay_done(m, it->target, TD_SUCCEEDED);
        else
            return 1;
        return 0;
    }
    tm_handle *h = &m->h[it->target];
    if (h->out.status == TD_PENDING) {
        tm_outcome o;
        if (h->cs >= 0 && m->cs[h->cs].cancelled)
            o = tm_canceled_outcome_();     /* the token observed at the next frame */
        else if (h->kind == TM_FRAME_TOKEN ? (int32_t)(m->frame - h->target_frame) >= 0
                                           : m->now >= h->deadline)
            o = tm_outcome_of_(TD_SUCCEEDED, 0, 0, 0);
        else
            return 1;
        tm_finish_(m, it->target, &o);
    }
    h->item_held = 0;
    return 0;
}

/* Run the marker continuations whose marker completed, in the order they were queued. */
static void drain_queue(tm_model *m)
{
    tm_queued due[TM_MAX_QUEUE];
    int ndue = 0, kept = 0;
    for (int k = 0; k < m->nqueue; k++) {
        if (m->h[m->queue[k].handle].out.status != TD_PENDING)
            due[ndue++] = m->queue[k];
        else
            m->queue[kept++] = m->queue[k];
    }
    m->nqueue = kept;
    for (int k = 0; k < ndue; k++)
        run_sub(m, due[k].handle, &m->h[due[k].handle].subs[due[k].sub]);
}

/* A frame: timing UPDATE's markers reach this frame, its queue drains, then its items run
 * in the order they were added (loop.h: a timing's queue first, then its items). */
void tm_run_frame(tm_model *m)
{
    m->frame++;
    for (int i = 0; i < m->nh; i++) {
        tm_handle *h = &m->h[i];
        if (is_marker(h->kind) && h->loop_gen == m->loop_gen && h->out.status == TD_PENDING &&
            (int32_t)(m->frame - h->target_frame) >= 0)
            h->out = tm_outcome_of_(TD_SUCCEEDED, 0, 1, 0);
    }
    drain_queue(m);
    int n = m->nitems, kept = 0;
    tm_item items[TM_MAX_ITEMS];
    memcpy(items, m->items, sizeof(items[0]) * (size_t)n);
    m->nitems = 0;              /* items added while they run come after the kept ones */
    tm_item added[TM_MAX_ITEMS];
    for (int k = 0; k < n; k++) {
        if (tick_item(m, &items[k]))
            items[kept++] = items[k];
    }
    int nadded = m->nitems;
    memcpy(added, m->items, sizeof(added[0]) * (size_t)nadded);
    memcpy(m->items, items, sizeof(items[0]) * (size_t)kept);
    memcpy(m->items + kept, added, sizeof(added[0]) * (size_t)nadded);
    m->nitems = kept + nadded;
}

void tm_advance(tm_model *m, int64_t ns) { m->now += ns; }

/* td_loop_destroy: items retire first (their waits complete canceled, an armed cancel_after
 * cancels its source), then every queued continuation runs with the markers reading
 * canceled. The fuzzer then installs a fresh main loop (frame 0). */
void tm_retire_loop(tm_model *m)
{
    int n = m->nitems;
    tm_item items[TM_MAX_ITEMS];
    memcpy(items, m->items, sizeof(items[0]) * (size_t)n);
    m->nitems = 0;
    for (int k = 0; k < n; k++) {
        const tm_item *it = &items[k];
        if (it->type == TM_ITEM_CANCEL_AFTER) {
            m->cs[it->target].armed = 0;
            tm_cancel_source_(m, it->target);
        } else if (it->type == TM_ITEM_TIMEOUT) {
            timeout_delay_done(m, it->target, TD_CANCELED);
        } else {
            tm_outcome o = tm_canceled_outcome_();
            tm_finish_(m, it->target, &o);
            m->h[it->target].item_held = 0;
        }
    }
    for (int i = 0; i < m->nh; i++) {
        tm_handle *h = &m->h[i];
        if (is_marker(h->kind) && h->loop_gen == m->loop_gen && h->out.status == TD_PENDING)
            h->out = tm_canceled_outcome_();
    }
    drain_queue(m);
    m->loop_gen++;
    m->frame = 0;
}

/* runtime.h: the setters apply to every pool of the kind; a capacity below the safe one
 * may free released objects (and shrinking frees the ones beyond it). */
void tm_set_source_capacity(tm_model *m, uint32_t cap)
{
    m->source_cap = cap;
    if (cap < TM_SAFE_CAPACITY)
        m->source_epoch++;
}

void tm_set_runner_capacity(tm_model *m, uint32_t cap)
{
    m->runner_cap = cap;
    if (cap < TM_SAFE_CAPACITY)
        m->runner_epoch++;
}
