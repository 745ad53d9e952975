/*
 * pool.c - array-slot stacks (see include/tandem/pool.h).
 * Rent and return touch only the slot array under the spin lock; allocation happens
 * outside the lock and only when the pool is empty (rent) or full (return).
 */
#include <stdlib.h>
#include <string.h>
#include "td_internal.h"

static void pool_free_object(td_pool *p, void *obj)
{
    if (p->finalize)
        p->finalize(obj);
    free(obj);
}

int td_pool_init(td_pool *p, const char *name, size_t object_size, uint32_t capacity)
{
    memset(p, 0, sizeof(*p));
    p->name = name;
    p->object_size = object_size;
    if (capacity > 0) {
        p->slots = (void **)calloc(capacity, sizeof(void *));
        if (p->slots == NULL)
            return TD_E_NOMEM;
        p->slots_owned = 1;
    }
    p->capacity = capacity;
    return TD_OK;
}

void td_pool_destroy(td_pool *p)
{
    td_spin_lock(&p->lock);
    for (uint32_t i = 0; i < p->count; i++)
        pool_free_object(p, p->slots[i]);
    p->count = 0;
    if (p->slots_owned)
        free(p->slots);
    p->slots = NULL;
    p->slots_owned = 0;
    p->capacity = 0;
    td_spin_unlock(&p->lock);
}

int td_pool_set_capacity(td_pool *p, uint32_t capacity)
{
    void **fresh = NULL;
    if (capacity > 0) {
        fresh = (void **)calloc(capacity, sizeof(void *));
        if (fresh == NULL)
            return TD_E_NOMEM;
    }
    void **old;
    int old_owned;
    uint32_t excess_from, excess_to;
    td_spin_lock(&p->lock);
    excess_from = capacity < p->count ? capacity : p->count;
    excess_to = p->count;
    /* Objects beyond the new capacity are freed below, outside the lock. */
    void **excess = NULL;
    if (excess_to > excess_from) {
        excess = (void **)malloc((excess_to - excess_from) * sizeof(void *));
        if (excess == NULL) {
            td_spin_unlock(&p->lock);
            free(fresh);
            return TD_E_NOMEM;
        }
        memcpy(excess, p->slots + excess_from, (excess_to - excess_from) * sizeof(void *));
    }
    if (excess_from > 0)
        memcpy(fresh, p->slots, excess_from * sizeof(void *));
    old = p->slots;
    old_owned = p->slots_owned;
    p->slots = fresh;
    p->slots_owned = fresh != NULL;
    p->capacity = capacity;
    p->count = excess_from;
    p->freed += excess_to - excess_from;
    td_spin_unlock(&p->lock);
    for (uint32_t i = 0; i < excess_to - excess_from; i++)
        pool_free_object(p, excess[i]);
    free(excess);
    if (old_owned)
        free(old);
    return TD_OK;
}

int td_pool_prefill(td_pool *p, uint32_t count)
{
    if (count > p->capacity)
        count = p->capacity;
    while (td_pool_count(p) < count) {
        void *obj = calloc(1, p->object_size);
        if (obj == NULL)
            return TD_E_NOMEM;
        td_spin_lock(&p->lock);
        if (p->count < p->capacity) {
            p->slots[p->count++] = obj;
            obj = NULL;
        }
        td_spin_unlock(&p->lock);
        free(obj);
    }
    return TD_OK;
}

void *td_pool_rent(td_pool *p)
{
    void *obj = NULL;
    td_spin_lock(&p->lock);
    if (TD_LIKELY(p->count > 0))
        obj = p->slots[--p->count];
    td_spin_unlock(&p->lock);
    if (TD_UNLIKELY(obj == NULL)) {
        obj = calloc(1, p->object_size);
        td_spin_lock(&p->lock);
        p->allocated++;
        td_spin_unlock(&p->lock);
    }
    return obj;
}

void td_pool_return(td_pool *p, void *obj)
{
    td_spin_lock(&p->lock);
    if (TD_LIKELY(p->count < p->capacity)) {
        p->slots[p->count++] = obj;
        obj = NULL;
    } else {
        p->freed++;
    }
    td_spin_unlock(&p->lock);
    if (obj)
        pool_free_object(p, obj);
}
