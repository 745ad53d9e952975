/* Pools: rent from empty allocates, return to full frees, capacities are settings. */
#include <tandem/tandem.h>
#include "td_test.h"
#include "td_alloc_count.h"

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

int main(void)
{
    TD_RUN(rent_return_capacity);
    TD_RUN(warm_pool_is_allocation_free);
    TD_RUN(runtime_capacity_settings);
    return TD_TEST_SUMMARY();
}
