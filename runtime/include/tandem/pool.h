/*
 * pool.h - array-slot stacks of reusable objects.
 *
 * A pool holds up to `capacity` free objects of one size. Rent pops one (or allocates
 * when the pool is empty); return pushes one back (or frees it when the pool is full).
 * The slot array is allocated when the pool is set up or its capacity changes, never on
 * rent or return, so a warmed pool makes steady-state rent/return allocation-free.
 * Pools are shared across threads; a spin lock guards the few instructions of a push/pop.
 */
#ifndef TANDEM_POOL_H
#define TANDEM_POOL_H

#include <stddef.h>
#include <stdint.h>
#include "../../port/td_port.h"

typedef struct td_pool {
    td_spinlock lock;
    uint32_t count;          /* free objects held */
    uint32_t capacity;       /* slots available */
    size_t object_size;
    void **slots;
    const char *name;
    uint64_t allocated;      /* objects ever allocated by rent (statistics) */
    uint64_t freed;          /* objects freed by return to a full pool */
    int slots_owned;         /* 1 when `slots` was allocated by the pool (else static) */
    void (*finalize)(void *obj); /* called before the pool frees an object (optional) */
} td_pool;

/* Set up a pool (cold): allocates the slot array. Returns TD_OK or TD_E_NOMEM. */
int td_pool_init(td_pool *p, const char *name, size_t object_size, uint32_t capacity);
/* Free every held object and the slot array. */
void td_pool_destroy(td_pool *p);
/* Change the capacity (cold, explicit; e.g. "matched retention" before a burst).
 * Shrinking frees the objects beyond the new capacity. */
int td_pool_set_capacity(td_pool *p, uint32_t capacity);
/* Allocate objects up to `count` held (warm-up). */
int td_pool_prefill(td_pool *p, uint32_t count);

/* Pop a free object or allocate one (NULL only when allocation fails). A newly allocated
 * object is zeroed; a recycled one is as it was returned. */
void *td_pool_rent(td_pool *p);
/* Push an object back, or free it when the pool is full. */
void td_pool_return(td_pool *p, void *obj);

static inline uint32_t td_pool_count(const td_pool *p) { return p->count; }
static inline uint32_t td_pool_capacity(const td_pool *p) { return p->capacity; }

#endif /* TANDEM_POOL_H */
