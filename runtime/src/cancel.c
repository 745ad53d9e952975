/*
 * cancel.c - cancellation sources, tokens and registrations (include/tandem/cancel.h).
 *
 * A source keeps its registrations in a doubly linked list under a mutex. Callbacks run
 * outside the lock; the node being run is published in `executing` so that unregistering
 * it from another thread waits for it to return.
 *
 * Registration nodes are type-stable: they come from one runtime-wide free list and are
 * freed only at td_runtime_shutdown, never with their source. A registration names its
 * node and the node's generation, which is bumped whenever the node leaves a registration
 * (fired, removed, or its source freed). So td_cancel_unregister on a registration that
 * already fired or whose source is gone reads only its own node, sees a newer generation
 * and returns, whenever it is called (waits unregister lazily, when their last owner goes).
 */
#include "../port/td_libc.h"
#include "td_internal.h"

struct td_cancel_node {
    td_cancel_node *prev, *next;
    td_cancel_source *owner;
    td_continuation_fn fn;
    void *arg;
    int linked;
    volatile uint32_t generation;  /* bumped whenever the node leaves a registration */
    td_cancel_node *all_next;      /* every node ever allocated (freed at shutdown) */
};

static td_spinlock cancel_nodes_lock = TD_SPINLOCK_INIT;
static td_cancel_node *cancel_nodes_free;
static td_cancel_node *cancel_nodes_all;

static td_cancel_node *cancel_node_take(void)
{
    td_spin_lock(&cancel_nodes_lock);
    td_cancel_node *n = cancel_nodes_free;
    if (n)
        cancel_nodes_free = n->next;
    td_spin_unlock(&cancel_nodes_lock);
    if (n == NULL && (n = (td_cancel_node *)calloc(1, sizeof(*n))) != NULL) {
        td_spin_lock(&cancel_nodes_lock);
        n->all_next = cancel_nodes_all;
        cancel_nodes_all = n;
        td_spin_unlock(&cancel_nodes_lock);
    }
    return n;
}

/* The node leaves its registration: later unregisters of it become no-ops. */
static void cancel_node_retire(td_cancel_node *n)
{
    n->linked = 0;
    td_atomic_fetch_add_u32(&n->generation, 1);
    td_spin_lock(&cancel_nodes_lock);
    n->next = cancel_nodes_free;
    cancel_nodes_free = n;
    td_spin_unlock(&cancel_nodes_lock);
}

struct td_cancel_source {
    pthread_mutex_t lock;
    volatile uint32_t canceled;
    td_cancel_node *head;
    td_cancel_node *volatile executing;
    uintptr_t executing_thread;
    /* linked sources: registrations on the parents, removed when this one is freed */
    td_cancel_registration *parents;
    int parent_count;
    /* cancel-after timer (a loop item); free is deferred while it is armed */
    td_loop *after_loop;
    int64_t after_deadline;
    int after_clock;
    volatile uint32_t after_armed;
    volatile uint32_t free_requested;
    int mutex_ready;
};

static td_pool cancel_pool;

td_cancel_source *td_cancel_source_new(void)
{
    td_cancel_source *cs = (td_cancel_source *)td_pool_rent(&cancel_pool);
    if (cs == NULL)
        return NULL;
    if (!cs->mutex_ready) {                 /* freshly allocated (zeroed) */
        pthread_mutex_init(&cs->lock, NULL);
        cs->mutex_ready = 1;
    }
    return cs;
}

/* Free what the source owns, ready for its next rental. */
static void cancel_source_reset(td_cancel_source *cs)
{
    for (int i = 0; i < cs->parent_count; i++)
        td_cancel_unregister(cs->parents[i]);
    free(cs->parents);
    cs->parents = NULL;
    cs->parent_count = 0;
    while (cs->head) {                        /* registrations never removed */
        td_cancel_node *n = cs->head;
        cs->head = n->next;
        cancel_node_retire(n);
    }
    cs->canceled = 0;
    cs->executing = NULL;
    cs->after_loop = NULL;
    cs->after_armed = 0;
    cs->free_requested = 0;
}

static void cancel_source_destroy(td_cancel_source *cs)
{
    cancel_source_reset(cs);
    td_pool_return(&cancel_pool, cs);
}

static void cancel_source_finalize(void *obj)
{
    td_cancel_source *cs = (td_cancel_source *)obj;
    if (cs->mutex_ready)
        pthread_mutex_destroy(&cs->lock);
}

int td_cancel_runtime_init_(uint32_t capacity)
{
    int rc = td_pool_init(&cancel_pool, "cancel-source", sizeof(td_cancel_source), capacity);
    cancel_pool.finalize = cancel_source_finalize;
    return rc;
}

void td_cancel_runtime_shutdown_(void)
{
    td_pool_destroy(&cancel_pool);
    td_spin_lock(&cancel_nodes_lock);
    td_cancel_node *n = cancel_nodes_all;
    cancel_nodes_all = NULL;
    cancel_nodes_free = NULL;
    td_spin_unlock(&cancel_nodes_lock);
    while (n) {
        td_cancel_node *next = n->all_next;
        free(n);
        n = next;
    }
}
int td_cancel_set_capacity_(uint32_t capacity) { return td_pool_set_capacity(&cancel_pool, capacity); }

void td_cancel_source_free(td_cancel_source *cs)
{
    if (cs == NULL)
        return;
    pthread_mutex_lock(&cs->lock);
    int deferred = cs->after_armed != 0;
    if (deferred)
        cs->free_requested = 1;
    pthread_mutex_unlock(&cs->lock);
    if (!deferred)
        cancel_source_destroy(cs);
}

td_cancel_token td_cancel_source_token(td_cancel_source *cs)
{
    td_cancel_token t;
    t.source = cs;
    return t;
}

int td_cancel_is_requested(td_cancel_token t)
{
    return t.source != NULL && td_atomic_load_u32(&t.source->canceled) != 0;
}

int td_cancel_source_cancel(td_cancel_source *cs)
{
    pthread_mutex_lock(&cs->lock);
    if (cs->canceled) {
        pthread_mutex_unlock(&cs->lock);
        return 0;
    }
    td_atomic_store_u32(&cs->canceled, 1);
    cs->executing_thread = td_thread_self();
    while (cs->head) {
        /* newest first: the list is kept newest-at-head */
        td_cancel_node *n = cs->head;
        cs->head = n->next;
        if (cs->head)
            cs->head->prev = NULL;
        n->linked = 0;
        td_atomic_store_ptr((void *volatile *)&cs->executing, n);
        pthread_mutex_unlock(&cs->lock);
        n->fn(n->arg);
        pthread_mutex_lock(&cs->lock);
        td_atomic_store_ptr((void *volatile *)&cs->executing, NULL);
        cancel_node_retire(n);
    }
    pthread_mutex_unlock(&cs->lock);
    return 1;
}

td_cancel_registration td_cancel_register(td_cancel_token t, td_continuation_fn fn, void *arg)
{
    td_cancel_registration reg;
    reg.node = NULL;
    reg.generation = 0;
    td_cancel_source *cs = t.source;
    if (cs == NULL)
        return reg;
    pthread_mutex_lock(&cs->lock);
    if (cs->canceled) {
        pthread_mutex_unlock(&cs->lock);
        fn(arg);
        return reg;
    }
    td_cancel_node *n = cancel_node_take();
    if (n == NULL) {
        pthread_mutex_unlock(&cs->lock);
        return reg;
    }
    n->owner = cs;
    n->fn = fn;
    n->arg = arg;
    n->prev = NULL;
    n->next = cs->head;
    if (cs->head)
        cs->head->prev = n;
    cs->head = n;
    n->linked = 1;
    reg.node = n;
    reg.generation = n->generation;
    pthread_mutex_unlock(&cs->lock);
    return reg;
}

void td_cancel_unregister(td_cancel_registration reg)
{
    td_cancel_node *n = reg.node;
    /* A newer generation: the registration fired, was removed, or its source was freed;
     * the node may serve another registration now and its owner may be gone. */
    if (n == NULL || td_atomic_load_u32(&n->generation) != reg.generation)
        return;
    td_cancel_source *cs = n->owner;
    pthread_mutex_lock(&cs->lock);
    if (n->linked && n->generation == reg.generation) {
        if (n->prev)
            n->prev->next = n->next;
        else
            cs->head = n->next;
        if (n->next)
            n->next->prev = n->prev;
        cancel_node_retire(n);
        pthread_mutex_unlock(&cs->lock);
        return;
    }
    /* A callback runs with its node's generation unchanged until it returns. */
    int wait = n->generation == reg.generation &&
               td_atomic_load_ptr((void *volatile *)&cs->executing) == n &&
               cs->executing_thread != td_thread_self();
    pthread_mutex_unlock(&cs->lock);
    if (wait)
        while (td_atomic_load_ptr((void *volatile *)&cs->executing) == n)
            td_cpu_relax();
}

static void cancel_linked_fire(void *arg) { td_cancel_source_cancel((td_cancel_source *)arg); }

td_cancel_source *td_cancel_source_linked(const td_cancel_token *tokens, int count)
{
    td_cancel_source *cs = td_cancel_source_new();
    if (cs == NULL)
        return NULL;
    cs->parents = (td_cancel_registration *)calloc((size_t)(count > 0 ? count : 1), sizeof(td_cancel_registration));
    if (cs->parents == NULL) {
        cancel_source_destroy(cs);
        return NULL;
    }
    for (int i = 0; i < count; i++) {
        cs->parents[i] = td_cancel_register(tokens[i], cancel_linked_fire, cs);
        cs->parent_count = i + 1;
    }
    return cs;
}

/* The cancel-after item is gone: disarm, and run a free that waited for it. */
static void cancel_after_detached(td_cancel_source *cs)
{
    pthread_mutex_lock(&cs->lock);
    cs->after_armed = 0;
    int destroy = cs->free_requested != 0;
    pthread_mutex_unlock(&cs->lock);
    if (destroy)
        cancel_source_destroy(cs);
}

/* The item's reads of what other threads write under the source's lock (a free, a re-arm
 * with a new deadline): under that lock too, once a frame. */
static int cancel_after_tick(void *arg)
{
    td_cancel_source *cs = (td_cancel_source *)arg;
    pthread_mutex_lock(&cs->lock);
    int done = cs->free_requested != 0;
    int clock = cs->after_clock;
    int64_t deadline = cs->after_deadline;
    pthread_mutex_unlock(&cs->lock);
    if (!done && td_loop_time(cs->after_loop, (td_clock)clock) >= deadline) {
        td_cancel_source_cancel(cs);
        done = 1;
    }
    if (!done && td_atomic_load_u32(&cs->canceled))
        done = 1;
    if (!done)
        return 1;
    cancel_after_detached(cs);
    return 0;
}

/* The loop was retired before the deadline: it can never be observed, so the source is
 * cancelled now (a wait that cannot complete ends canceled), and a deferred free runs. */
static void cancel_after_retire(void *arg)
{
    td_cancel_source *cs = (td_cancel_source *)arg;
    pthread_mutex_lock(&cs->lock);
    int freed = cs->free_requested != 0;
    pthread_mutex_unlock(&cs->lock);
    if (!freed)
        td_cancel_source_cancel(cs);
    cancel_after_detached(cs);
}

int td_cancel_source_cancel_after(td_cancel_source *cs, int64_t ns, int clock, td_loop *loop)
{
    if (loop == NULL && (loop = td_loop_main()) == NULL)
        return TD_E_INVALID;
    if ((unsigned)clock > TD_CLOCK_REALTIME)
        return TD_E_INVALID;
    if (td_loop_is_retired(loop))
        return TD_E_RETIRED;
    pthread_mutex_lock(&cs->lock);
    int armed = cs->after_armed != 0;
    if (armed && cs->after_loop != loop) {
        pthread_mutex_unlock(&cs->lock);
        return TD_E_INVALID;         /* one deadline, on one loop */
    }
    cs->after_loop = loop;
    cs->after_clock = clock;
    cs->after_deadline = td_deadline_after_(td_loop_time(loop, (td_clock)clock), ns);
    cs->after_armed = 1;
    pthread_mutex_unlock(&cs->lock);
    if (armed)
        return TD_OK;
    int rc = td_loop_add_item_retire_(loop, TD_TIMING_UPDATE, cancel_after_tick, cancel_after_retire, cs);
    if (rc != TD_OK) {
        pthread_mutex_lock(&cs->lock);
        cs->after_armed = 0;
        pthread_mutex_unlock(&cs->lock);
    }
    return rc;
}
