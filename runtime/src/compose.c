/*
 * compose.c - when_all, when_any, race, timeout, attached tokens, suppression
 * (see include/tandem/compose.h).
 *
 * One pooled promise serves every combinator. It has 1 + (inputs) owners: its consumer
 * and every input not yet completed-and-consumed. An input's continuation consumes the
 * input (so a late loser is observed, never leaked), records it, and drops its ownership;
 * the promise is recycled when the last owner is gone. The first input to decide the
 * outcome claims `decided` by CAS; only the claimant completes the promise.
 */
#include "../port/td_libc.h"
#include "td_internal.h"

typedef enum compose_kind { COMPOSE_ALL, COMPOSE_ANY, COMPOSE_TIMEOUT, COMPOSE_ATTACH, COMPOSE_SUPPRESS } compose_kind;

struct compose_promise;
typedef struct compose_node {
    struct compose_promise *p;
    uint32_t index;
    td_task_i64 input;
} compose_node;

typedef struct compose_promise {
    td_source source;            /* first member */
    compose_kind kind;
    uint32_t token;
    volatile uint32_t owners;
    volatile uint32_t remaining;
    volatile uint32_t decided;
    compose_node *nodes;
    uint32_t cap, count;
    int64_t *results;
    int *winner_out;
    td_cancel_source *losers;
    int with_error;
    td_cancel_token attach;
    td_cancel_registration reg;
    /* timeout: the delay, held so that a producer that wins can abandon it at once */
    td_source *delay;
    uint32_t delay_token;
    /* when_all: the first fault, else the first cancellation */
    td_spinlock all_lock;
    td_status all_status;
    td_error all_error;
} compose_promise;

static td_pool compose_pool;

static void compose_drop_owner(compose_promise *p)
{
    if (td_atomic_fetch_add_u32(&p->owners, (uint32_t)-1) != 1)
        return;
    td_cancel_unregister(p->reg);
    p->reg.node = NULL;
    p->results = NULL;
    p->winner_out = NULL;
    p->losers = NULL;
    p->attach.source = NULL;
    td_source_recycle(&p->source);
    td_pool_return(&compose_pool, p);
}

/* The consumer's release: its token ends at once (mode CONSUMED, task.h), whatever inputs
 * still hold the promise; only then its ownership drops (after the drop the last input may
 * recycle the promise, and a store then would overwrite the next rental's word). */
static void compose_release(td_source *s)
{
    td_source_keep_consumed_(s);
    compose_drop_owner((compose_promise *)s);
}

static const td_source_ops compose_ops = { compose_release, NULL, NULL, NULL, "combinator" };

static int compose_claim(compose_promise *p)
{
    uint32_t expected = 0;
    return td_atomic_cas_u32(&p->decided, &expected, 1);
}

static void compose_finish(compose_promise *p, td_status st, int64_t value, const td_error *err)
{
    td_source_complete(&p->source, p->token, st, value, err);
}

static void compose_on_all(compose_promise *p, compose_node *n, const td_outcome *o)
{
    if (p->results)
        p->results[n->index] = o->value;
    if (o->status != TD_SUCCEEDED) {
        td_spin_lock(&p->all_lock);
        if (p->all_status == TD_SUCCEEDED || (p->all_status == TD_CANCELED && o->status == TD_FAULTED)) {
            p->all_status = o->status;
            p->all_error = o->error;
        }
        td_spin_unlock(&p->all_lock);
    }
    if (td_atomic_fetch_add_u32(&p->remaining, (uint32_t)-1) == 1) {
        td_error e = p->all_error;
        compose_finish(p, p->all_status, 0, &e);
    }
}

static void compose_on_first(compose_promise *p, compose_node *n, const td_outcome *o)
{
    if (!compose_claim(p))
        return;                                  /* a late loser: consumed, nothing else */
    if (p->losers)
        td_cancel_source_cancel(p->losers);
    td_error flag = { TD_ERR_NONE, NULL, NULL };
    switch (p->kind) {
    case COMPOSE_ANY:
        if (p->winner_out)
            *p->winner_out = (int)n->index;
        compose_finish(p, o->status, p->results ? o->value : (int64_t)n->index, &o->error);
        break;
    case COMPOSE_TIMEOUT: {
        /* Decided either way: the delay's item must not poll the clock until its deadline. */
        td_source *delay = p->delay;
        p->delay = NULL;
        if (n->index == 0 || o->status != TD_SUCCEEDED) {
            /* The producer's outcome, or the delay's own cancellation (the options' token,
             * the loop's retirement) or fault: a cancellation reads as cancellation. */
            compose_finish(p, o->status, o->value, &o->error);
        } else if (p->with_error) {
            td_error e = { TD_ERR_TIMEOUT, "timed out", NULL };
            compose_finish(p, TD_FAULTED, 0, &e);
        } else {
            flag.code = TD_ERR_TIMEOUT;
            flag.message = "timed out";
            compose_finish(p, TD_SUCCEEDED, 0, &flag);
        }
        if (delay)
            td_wait_abandon_(delay, p->delay_token);
        break;
    }
    case COMPOSE_SUPPRESS:
        if (o->status == TD_CANCELED) {
            flag = o->error;
            flag.code = TD_ERR_CANCELED;
            compose_finish(p, TD_SUCCEEDED, 0, &flag);
        } else {
            compose_finish(p, o->status, o->value, &o->error);
        }
        break;
    default: /* COMPOSE_ATTACH: the input decided first */
        compose_finish(p, o->status, o->value, &o->error);
        break;
    }
}

static void compose_input_done(void *arg)
{
    compose_node *n = (compose_node *)arg;
    compose_promise *p = n->p;
    td_outcome o;
    int rc = td_task_i64_get(n->input, &o);
    if (rc != TD_OK) {
        o.status = TD_FAULTED;
        o.value = 0;
        o.error.code = rc;
        o.error.message = "combinator input was unusable (stale, shared or awaited)";
        o.error.cancel = NULL;
    }
    if (p->kind == COMPOSE_ALL)
        compose_on_all(p, n, &o);
    else
        compose_on_first(p, n, &o);
    compose_drop_owner(p);
}

static compose_promise *compose_rent(compose_kind kind, uint32_t count)
{
    compose_promise *p = (compose_promise *)td_pool_rent(&compose_pool);
    if (p == NULL)
        return NULL;
    if (p->source.ops == NULL)
        p->source.ops = &compose_ops;
    if (p->cap < count) {
        compose_node *nodes = (compose_node *)realloc(p->nodes, count * sizeof(compose_node));
        if (nodes == NULL) {
            td_pool_return(&compose_pool, p);
            return NULL;
        }
        p->nodes = nodes;
        p->cap = count;
    }
    p->kind = kind;
    p->token = td_source_token(&p->source);
    p->owners = 1 + count;
    p->remaining = count;
    p->decided = 0;
    p->count = count;
    p->all_status = TD_SUCCEEDED;
    memset(&p->all_error, 0, sizeof(p->all_error));
    p->reg.node = NULL;
    p->delay = NULL;
    return p;
}

/* Subscribe every input (typed, or untyped when `typed` is NULL); those already
 * complete are handled inline. */
static td_task compose_start(compose_promise *p, const td_task_i64 *typed, const td_task *untyped)
{
    uint32_t count = p->count;
    td_task result = td_task_of(&p->source, p->token);
    /* Hold one extra ownership while subscribing: inline completions may otherwise
     * drop the last input ownership before the loop has finished. */
    td_atomic_fetch_add_u32(&p->owners, 1);
    for (uint32_t i = 0; i < count; i++) {
        compose_node *n = &p->nodes[i];
        n->p = p;
        n->index = i;
        n->input = typed ? typed[i] : td_task_i64_of(untyped[i]);
        if (td_task_on_completed(n->input.task, compose_input_done, n) != TD_OK)
            compose_input_done(n);
    }
    compose_drop_owner(p);
    return result;
}

static td_task_i64 compose_fail_alloc(void)
{
    return td_from_error_i64(TD_E_NOMEM, "combinator allocation failed");
}

static td_task_i64 compose_all(const td_task_i64 *inputs, int count, int64_t *results)
{
    if (count <= 0)
        return td_from_result(0);
    compose_promise *p = compose_rent(COMPOSE_ALL, (uint32_t)count);
    if (p == NULL)
        return compose_fail_alloc();
    p->results = results;
    p->winner_out = NULL;
    p->losers = NULL;
    return td_task_i64_of(compose_start(p, inputs, NULL));
}

static td_task_i64 compose_untyped(compose_kind kind, const td_task *tasks, int count, td_cancel_source *losers)
{
    if (count <= 0)
        return kind == COMPOSE_ALL ? td_from_result(0)
                                   : td_from_error_i64(TD_E_INVALID, "when_any of no tasks");
    compose_promise *p = compose_rent(kind, (uint32_t)count);
    if (p == NULL)
        return compose_fail_alloc();
    p->results = NULL;
    p->winner_out = NULL;
    p->losers = losers;
    return td_task_i64_of(compose_start(p, NULL, tasks));
}

td_task td_when_all(const td_task *tasks, int count)
{
    return compose_untyped(COMPOSE_ALL, tasks, count, NULL).task;
}

td_task td_when_all_i64(const td_task_i64 *tasks, int count, int64_t *results)
{
    return compose_all(tasks, count, results).task;
}

td_task_i64 td_when_any(const td_task *tasks, int count)
{
    return compose_untyped(COMPOSE_ANY, tasks, count, NULL);
}

td_task_i64 td_when_any_i64(const td_task_i64 *tasks, int count, int *winner_out)
{
    if (count <= 0)
        return td_from_error_i64(TD_E_INVALID, "when_any of no tasks");
    compose_promise *p = compose_rent(COMPOSE_ANY, (uint32_t)count);
    if (p == NULL)
        return compose_fail_alloc();
    static int64_t compose_typed_marker;   /* non-NULL results: report values, not indices */
    p->results = &compose_typed_marker;
    p->winner_out = winner_out;
    p->losers = NULL;
    return td_task_i64_of(compose_start(p, tasks, NULL));
}

td_task_i64 td_race(const td_task *tasks, int count, td_cancel_source *losers)
{
    return compose_untyped(COMPOSE_ANY, tasks, count, losers);
}

td_task_i64 td_timeout_i64(td_task_i64 t, int64_t ns, td_clock clock, int with_error, const td_wait_options *o)
{
    compose_promise *p = compose_rent(COMPOSE_TIMEOUT, 2);
    if (p == NULL)
        return compose_fail_alloc();
    td_wait_options wo = o ? *o : td_wait_defaults();
    td_task_i64 inputs[2];
    inputs[0] = t;
    inputs[1] = td_task_i64_of(td_delay_held_(ns, clock, &wo, &p->delay));
    p->delay_token = inputs[1].task.token;
    p->results = NULL;
    p->winner_out = NULL;
    p->losers = NULL;
    p->with_error = with_error;
    return td_task_i64_of(compose_start(p, inputs, NULL));
}

td_task td_timeout(td_task t, int64_t ns, td_clock clock, int with_error, const td_wait_options *o)
{
    return td_timeout_i64(td_task_i64_of(t), ns, clock, with_error, o).task;
}

static void compose_attach_fire(void *arg)
{
    compose_promise *p = (compose_promise *)arg;
    if (!compose_claim(p))
        return;
    td_error e = td_cancel_error(p->attach.source);
    compose_finish(p, TD_CANCELED, 0, &e);
}

td_task_i64 td_attach_cancel_i64(td_task_i64 t, td_cancel_token token)
{
    compose_promise *p = compose_rent(COMPOSE_ATTACH, 1);
    if (p == NULL)
        return compose_fail_alloc();
    p->results = NULL;
    p->winner_out = NULL;
    p->losers = NULL;
    p->attach = token;
    td_task result = compose_start(p, &t, NULL);
    /* The input was subscribed first, so a producer that already completed wins even
     * against a token cancelled before the call. Our consumer ownership keeps p alive. */
    if (token.source && !td_atomic_load_u32(&p->decided))
        p->reg = td_cancel_register(token, compose_attach_fire, p);
    return td_task_i64_of(result);
}

td_task_i64 td_suppress_cancel_i64(td_task_i64 t)
{
    if (t.task.source == NULL)
        return t;
    compose_promise *p = compose_rent(COMPOSE_SUPPRESS, 1);
    if (p == NULL)
        return compose_fail_alloc();
    p->results = NULL;
    p->winner_out = NULL;
    p->losers = NULL;
    return td_task_i64_of(compose_start(p, &t, NULL));
}

static void compose_finalize(void *obj) { free(((compose_promise *)obj)->nodes); }

int td_compose_runtime_init_(uint32_t capacity)
{
    int rc = td_pool_init(&compose_pool, "combinator", sizeof(compose_promise), capacity);
    compose_pool.finalize = compose_finalize;
    return rc;
}

void td_compose_runtime_shutdown_(void) { td_pool_destroy(&compose_pool); }
int td_compose_set_capacity_(uint32_t capacity) { return td_pool_set_capacity(&compose_pool, capacity); }
