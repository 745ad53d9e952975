/* Pools: rent from empty allocates, return to full frees, capacities are settings. */
#include <tandem/tandem.h>
#include "td_test.h"
#include "td_alloc_count.h"
#include <pthread.h>

static void rent_return_capacity(void)
{
    td_pool p;
    TD_CHECK_EQ(TD_OK, td_pool_init(&p, "test", 64, 2));
    void *a = td_pool_rent(&p);
    void *b = td_pool_rent(&p);
    void *c = td_pool_rent(&p);
    TD_CHECK(a && b && c && a != b && b != c);
    TD_CHECK_EQ(3, p.allocated);             /* empty pool: every rent allocated */
    td_pool_return(&p, a);
    td_pool_return(&p, b);
    TD_CHECK_EQ(2, td_pool_count(&p));
    td_pool_return(&p, c);                    /* full: freed */
    TD_CHECK_EQ(2, td_pool_count(&p));
    TD_CHECK_EQ(1, p.freed);
    /* LIFO: the last returned comes back first. */
    TD_CHECK(td_pool_rent(&p) == b);
    TD_CHECK(td_pool_rent(&p) == a);
    TD_CHECK_EQ(0, td_pool_count(&p));
    td_pool_return(&p, a);
    td_pool_return(&p, b);
    /* Raising the capacity keeps what is held; lowering frees the excess. */
    TD_CHECK_EQ(TD_OK, td_pool_set_capacity(&p, 8));
    TD_CHECK_EQ(2, td_pool_count(&p));
    TD_CHECK_EQ(TD_OK, td_pool_prefill(&p, 8));
    TD_CHECK_EQ(8, td_pool_count(&p));
    TD_CHECK_EQ(TD_OK, td_pool_set_capacity(&p, 3));
    TD_CHECK_EQ(3, td_pool_count(&p));
    TD_CHECK_EQ(3, td_pool_capacity(&p));
    TD_CHECK_EQ(1 + 5, p.freed);
    td_pool_destroy(&p);
}

static void warm_pool_is_allocation_free(void)
{
    if (!td_alloc_counting())
        return;
    td_pool p;
    TD_CHECK_EQ(TD_OK, td_pool_init(&p, "warm", 32, 16));
    TD_CHECK_EQ(TD_OK, td_pool_prefill(&p, 16));
    void *held[16];
    uint32_t before = td_alloc_count();
    for (int round = 0; round < 1000; round++) {
        for (int i = 0; i < 16; i++)
            held[i] = td_pool_rent(&p);
        for (int i = 0; i < 16; i++)
            td_pool_return(&p, held[i]);
    }
    TD_CHECK_EQ(0, td_alloc_count() - before);
    td_pool_destroy(&p);
}

static void runtime_capacity_settings(void)
{
    td_settings s;
    td_settings_defaults(&s);
    TD_CHECK_EQ(256, s.source_pool_capacity);
    TD_CHECK_EQ(128, s.runner_pool_capacity);
    TD_CHECK_EQ(0, s.flow);
    TD_CHECK_EQ(TD_OK, td_runtime_init(&s));
    TD_CHECK_EQ(TD_OK, td_set_source_pool_capacity(1024));
    TD_CHECK_EQ(1024, td_runtime_settings.source_pool_capacity);
    TD_CHECK_EQ(TD_OK, td_set_source_pool_capacity(256));
    td_runtime_shutdown();
}

/* Two segments: the owner (main) thread's unlocked one, and the locked one other threads
 * use. Objects cross in both directions; no object is lost or handed out twice, and a
 * worker that keeps renting what the main thread returns stops allocating. */
typedef struct { td_pool *p; void *obj; int op; } pool_job;

static void *pool_worker(void *arg)
{
    pool_job *j = (pool_job *)arg;
    if (j->op == 0)
        td_pool_return(j->p, j->obj);
    else
        j->obj = td_pool_rent(j->p);
    return NULL;
}

static void *pool_on_worker(td_pool *p, void *obj, int op)
{
    pool_job j;
    pthread_t th;
    j.p = p;
    j.obj = obj;
    j.op = op;
    if (pthread_create(&th, NULL, pool_worker, &j) != 0)
        return NULL;
    pthread_join(th, NULL);
    return j.obj;
}

static void owner_segment_and_workers(void)
{
    TD_CHECK_EQ(TD_OK, td_runtime_init(NULL));
    td_pool p;
    TD_CHECK_EQ(TD_OK, td_pool_init(&p, "segments", 48, 4));
    /* Rent on main, return from a worker: the object lands in the shared segment and the
     * main thread gets it back once its own segment is empty. */
    void *a = td_pool_rent(&p);
    TD_CHECK(a != NULL);
    pool_on_worker(&p, a, 0);
    TD_CHECK_EQ(1, td_pool_count(&p));
    TD_CHECK(td_pool_rent(&p) == a);
    TD_CHECK_EQ(1, p.allocated);
    /* Main-thread rent/return is LIFO on the owner segment. */
    void *b = td_pool_rent(&p);
    td_pool_return(&p, a);
    td_pool_return(&p, b);
    TD_CHECK_EQ(2, td_pool_count(&p));
    TD_CHECK(td_pool_rent(&p) == b);
    td_pool_return(&p, b);
    /* A worker finds the shared segment empty: it allocates, and from then on what the
     * main thread returns goes where workers rent. */
    void *c = pool_on_worker(&p, NULL, 1);
    TD_CHECK(c != NULL && c != a && c != b);
    TD_CHECK_EQ(3, p.allocated);
    td_pool_return(&p, c);
    TD_CHECK(pool_on_worker(&p, NULL, 1) == c);
    td_pool_return(&p, c);
    uint64_t allocated = p.allocated;
    for (int i = 0; i < 100; i++) {
        void *w = pool_on_worker(&p, NULL, 1);
        TD_CHECK(w != NULL);
        td_pool_return(&p, w);
    }
    TD_CHECK_EQ(allocated, p.allocated);
    /* Capacity bounds both segments together: 4 held at most. */
    void *held[6];
    for (int i = 0; i < 6; i++)
        held[i] = td_pool_rent(&p);
    for (int i = 0; i < 3; i++)
        td_pool_return(&p, held[i]);
    for (int i = 3; i < 6; i++)
        pool_on_worker(&p, held[i], 0);
    TD_CHECK_EQ(4, td_pool_count(&p));
    /* A capacity change keeps the most recent objects, each in its segment (all four are in
     * the shared one: the main thread returns there while workers rent from it). */
    TD_CHECK_EQ(4, p.count);
    TD_CHECK_EQ(TD_OK, td_pool_set_capacity(&p, 2));
    TD_CHECK_EQ(2, td_pool_count(&p));
    TD_CHECK_EQ(2, p.count);
    TD_CHECK_EQ(0, p.local_count);
    TD_CHECK(td_pool_rent(&p) == held[3]);
    TD_CHECK(td_pool_rent(&p) == held[2]);
    td_pool_return(&p, held[2]);
    td_pool_return(&p, held[3]);
    td_pool_destroy(&p);
    td_runtime_shutdown();
}

/* The owner's segment holds only returned objects: prefill fills the shared one, and a
 * capacity change keeps each object in its segment, the owner's most recent first. */
static void owner_segment_holds_only_returned_objects(void)
{
    TD_CHECK_EQ(TD_OK, td_runtime_init(NULL));
    td_pool p;
    TD_CHECK_EQ(TD_OK, td_pool_init(&p, "returned", 48, 6));
    void *a = td_pool_rent(&p), *b = td_pool_rent(&p), *c = td_pool_rent(&p);
    td_pool_return(&p, a);
    td_pool_return(&p, b);
    td_pool_return(&p, c);
    TD_CHECK_EQ(3, p.local_count);
    TD_CHECK_EQ(TD_OK, td_pool_prefill(&p, 5));
    TD_CHECK_EQ(3, p.local_count);
    TD_CHECK_EQ(2, p.count);
    TD_CHECK_EQ(5, td_pool_count(&p));
    /* shrink to 4: the owner's three stay, one prefilled object stays shared, one is freed */
    uint64_t freed = p.freed;
    TD_CHECK_EQ(TD_OK, td_pool_set_capacity(&p, 4));
    TD_CHECK_EQ(3, p.local_count);
    TD_CHECK_EQ(1, p.count);
    TD_CHECK_EQ(freed + 1, p.freed);
    /* shrink to 2: the owner's two most recent stay, nothing shared */
    TD_CHECK_EQ(TD_OK, td_pool_set_capacity(&p, 2));
    TD_CHECK_EQ(2, p.local_count);
    TD_CHECK_EQ(0, p.count);
    TD_CHECK(td_pool_rent(&p) == c);
    TD_CHECK(td_pool_rent(&p) == b);
    td_pool_return(&p, b);
    td_pool_return(&p, c);
    td_pool_destroy(&p);
    td_runtime_shutdown();
}

int main(void)
{
    TD_RUN(rent_return_capacity);
    TD_RUN(warm_pool_is_allocation_free);
    TD_RUN(runtime_capacity_settings);
    TD_RUN(owner_segment_and_workers);
    TD_RUN(owner_segment_holds_only_returned_objects);
    return TD_TEST_SUMMARY();
}
