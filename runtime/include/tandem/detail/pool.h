/*
 * detail/pool.h - the owner segment's fast paths: internal, exposed for inlining.
 *
 * Included by pool.h after the API; for the runtime's own hot rent and release sites (the
 * runners' generated releases and rents, detail/async.h, and td_pool_rent / td_pool_return
 * themselves). The segments and their rules are pool.h's.
 */
#ifndef TANDEM_DETAIL_POOL_H
#define TANDEM_DETAIL_POOL_H

#ifndef TANDEM_POOL_H
#error "detail/pool.h is included by tandem/pool.h, not directly"
#endif

extern volatile uintptr_t td_pool_owner_thread_;
/* 1 on the owner thread: the unlocked segment is ours. No owner (0) never matches: a live
 * thread's identity is never 0 (td_port.h). A macro: tcc, which never inlines, pays no
 * call for it on every rent and return. */
#define TD_POOL_ON_OWNER_() (td_pool_owner_thread_ == td_thread_self())

/* td_pool_return with the object first: the fallback of a release whose own argument is the object
 * (the generated runner releases, async.h), which then tail-calls it with its argument in
 * place. */
void td_pool_return_object_(void *obj, td_pool *p);

/* The owner segment's fast paths, for the runtime's own hot rent and release sites (the
 * runners, async.h, and td_pool_rent / td_pool_return themselves): statements, so tcc,
 * which never inlines, pays no call for them, and no flag for the caller to test again;
 * anything else (another thread, an empty or full segment) takes the fallback.
 * TD_POOL_RENT_OR_(p, obj, fallback): the lvalue obj gets the top of the owner's own
 * segment when this is the owner and the segment is not empty; else the value of
 * `fallback`. TD_POOL_RENT_THEN_OR_(p, obj, popped, fallback) (C): the same, the statement
 * `popped` run on a popped object. TD_POOL_POP_MARK_HELD_(p, obj, held, T, member, mark,
 * test_member, busy) (tcc): the pop alone, a popped object (a T) marked with the uint32_t
 * constant `mark` in `member` (a release store), and not taken when its uint32_t
 * `test_member` has a bit of the constant `busy`: `held` gets it, obj stays NULL.
 * TD_POOL_RETURN_OR_(p, obj, fallback): the owner pushes obj on its own segment when there
 * is room in the capacity and no other thread rents from the shared one; anything else
 * calls fallback(p, obj); TD_POOL_PUSH_IF_ROOM_(p, obj), an expression, is its push alone: 1
 * when pushed, else 0 and nothing done; TD_POOL_OWNER_PUSH_IF_ROOM_(p, obj) the same for a
 * caller that knows it is the owner thread (no test of it; under tcc the port's push, which
 * tests). Under tcc each is one asm block of the port (td_port.h) and `p`
 * is evaluated again for the fallback (a copy would live on the stack); elsewhere C. */
#if defined(td_port_owner_pop_)
#define TD_POOL_RENT_OR_(p, obj, fallback)                                              \
    do {                                                                                \
        td_port_owner_pop_((obj), (p), offsetof(td_pool, local_count),                  \
                           offsetof(td_pool, local), &td_pool_owner_thread_);           \
        if ((obj) == NULL)                                                              \
            (obj) = (fallback);                                                         \
    } while (0)
#define TD_POOL_POP_MARK_HELD_(p, obj, held, T, member, mark, test_member, busy)         \
    td_port_owner_pop_mark_held_((obj), (held), (p), offsetof(td_pool, local_count),     \
                                 offsetof(td_pool, local), &td_pool_owner_thread_,       \
                                 offsetof(T, member), (mark), offsetof(T, test_member),  \
                                 (busy))
#define TD_POOL_PUSH_IF_ROOM_(p, obj)                                                   \
    td_port_owner_push_((p), offsetof(td_pool, local_count), offsetof(td_pool, local_limit), \
                        offsetof(td_pool, local), &td_pool_owner_thread_, (obj))
#define TD_POOL_OWNER_PUSH_IF_ROOM_(p, obj) TD_POOL_PUSH_IF_ROOM_((p), (obj))
#define TD_POOL_RETURN_OR_(p, obj, fallback)                                            \
    do {                                                                                \
        if (!TD_POOL_PUSH_IF_ROOM_((p), (obj)))                                         \
            fallback((p), (obj));                                                       \
    } while (0)
#else
#define TD_POOL_RENT_THEN_OR_(p, obj, popped, fallback)                                 \
    do {                                                                                \
        td_pool *pl_p_ = (p);                                                           \
        if (TD_LIKELY(TD_POOL_ON_OWNER_())) {                                           \
            uint32_t pl_n_ = pl_p_->local_count;                                        \
            if (TD_LIKELY(pl_n_ > 0)) {                                                 \
                td_atomic_store_release_u32(&pl_p_->local_count, pl_n_ - 1);            \
                (obj) = pl_p_->local[pl_n_ - 1];                                        \
                popped;                                                                 \
                break;                                                                  \
            }                                                                           \
        }                                                                               \
        (obj) = (fallback);                                                             \
    } while (0)
#define TD_POOL_RENT_OR_(p, obj, fallback) TD_POOL_RENT_THEN_OR_((p), (obj), (void)0, (fallback))
#define TD_POOL_OWNER_PUSH_IF_ROOM_(p, obj)                                             \
    ({  td_pool *pl_p_ = (p);                                                           \
        int pl_pushed_ = 0;                                                             \
        uint32_t pl_n_ = pl_p_->local_count;                                            \
        if (TD_LIKELY(pl_n_ < td_atomic_load_u32(&pl_p_->local_limit))) {               \
            pl_p_->local[pl_n_] = (obj);                                                \
            td_atomic_store_release_u32(&pl_p_->local_count, pl_n_ + 1);                \
            pl_pushed_ = 1;                                                             \
        }                                                                               \
        pl_pushed_; })
#define TD_POOL_PUSH_IF_ROOM_(p, obj)                                                   \
    (TD_LIKELY(TD_POOL_ON_OWNER_()) && TD_POOL_OWNER_PUSH_IF_ROOM_((p), (obj)))
#define TD_POOL_RETURN_OR_(p, obj, fallback)                                            \
    do {                                                                                \
        if (!TD_POOL_PUSH_IF_ROOM_((p), (obj)))                                         \
            fallback((p), (obj));                                                       \
    } while (0)
#endif

#endif /* TANDEM_DETAIL_POOL_H */
