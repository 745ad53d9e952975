/*
 * detail/word.h - the single-word completion protocol: the word's layout, its invariants, the
 * state table, and every write of the word. Not API: task.h includes it for the inline fast
 * paths. Every store or CAS of a source's word anywhere in the runtime goes through one of
 * TD_WORD_STORE_, TD_WORD_CAS_ or TD_WORD_INIT_ below, naming its actor, so a grep for them
 * finds every write, and a debug build (TD_DEBUG) checks each against the table.
 *
 * The state table. A word's state is (status, mode, claimed, version); the actors are the
 * parties of task.h's invariants (below). Each row: who writes, from which state, with
 * which write, to which state. Anything else is illegal and trips TD_ASSERT_STATE.
 *
 *   actor      from                               write                     to
 *   ---------  ---------------------------------  ------------------------  ---------------------------------
 *   owner      any (rent, reset, recycle)         release store             next version, PENDING, mode NONE,
 *                                                                           no flags (IMMORTAL kept)
 *   owner      PENDING with POOLED (a rent)       release store             the same, POOLED dropped
 *   claimer    PENDING, not claimed               CAS                       the same + CLAIMED
 *   completer  PENDING (claimed or not)           CAS (mode NONE);          final status, claim dropped, same
 *                                                 release store (mode       version and mode (+ RECORD for a
 *                                                 AWAITED/SHARED, claim     success with a record, + POOLED
 *                                                 holder, owner thread)     for a runner pooled at success)
 *   handover   PENDING, mode AWAITED (owned)      release store (window)    SUCCEEDED, mode CONSUMED
 *   registrar  PENDING, mode NONE                 CAS; plain store in the   mode AWAITED (+ RESUMES_RUNNER)
 *                                                 owner thread's window
 *   sharer     mode NONE                          CAS                       mode SHARED
 *   consumer   final, not claimed, mode NONE,     release store; CAS        mode CONSUMED, or the next
 *              AWAITED or SHARED (a handle's own  (a shared handle's)       version PENDING (+ POOLED for a
 *              take), CONSUMED (the release                                 runner pooled at success)
 *              after that take's CAS)
 *   revoker    writes `owned`, never the word (td_source_disown_, ownership.c)
 *
 * Invariants of a protocol source (stated once, relied on everywhere):
 *   - word = [version:22][resumes:1][pooled:1][flags:4][mode:2][status:2], see TD_WORD_* below. Status,
 *     consumption mode and version change only by CAS on this one word (or by the plain
 *     stores of its owner, the last invariant).
 *   - completion: the single completer writes value/error, then one CAS publishes the
 *     status. Sources that several producers may race to complete claim first (a CAS
 *     that sets the CLAIMED flag), write, then publish.
 *   - a continuation is registered by writing it, then one CAS setting mode AWAITED
 *     while the status is still pending; whichever CAS comes second sees the other, so
 *     the continuation runs exactly once, either inline by the awaiter or by the completer.
 *   - once a pending source's mode is AWAITED or SHARED, the mode is final and only its
 *     completer (the single one, or the claim holder) writes the word: it publishes the
 *     status with a release store instead of a CAS. A manual source's owner must not reset
 *     it while a completion is in flight (the reset would be lost, as any racing reset is).
 *   - consumption, by the task's single consumer once the status is final, copies the
 *     result out and releases the source, whose release ends the token with a plain release
 *     store (the pool's next version, or mode CONSUMED for a source that keeps its outcome),
 *     no read-modify-write (after completion nobody else writes the word). A source pooled
 *     at its completion (TD_WORD_POOLED: a runner, async.h) is released by that store of the
 *     next version alone, which the consumer writes itself. Every later query
 *     with the old token fails with TD_E_STALE, never reads another rental's result. Two
 *     threads consuming one task at the same instant is a usage error the runtime does
 *     not arbitrate; a shared handle (shared.h) gives one task to several consumers, and
 *     its own consumption is a CAS to mode CONSUMED. One completer consumes for the consumer:
 *     a manual completion source's result in the main thread's window, with a runner of that
 *     thread waiting on it, is handed to the runner as a source-free task and the store that
 *     publishes the success sets mode CONSUMED (completion.c), as the runner's take would.
 *   - every completion writes the value slot (but the handover above, whose source is
 *     consumed in the same store); the error slots are written by a fault, a
 *     cancellation and a success with a record (which also sets TD_WORD_RECORD in the word).
 *     A success without one leaves them as an earlier use left them: every reader of such a
 *     success writes a zero record instead of reading them.
 *   - a custom source (ops->get set: frame markers, shared handles, switches) never has
 *     status SUCCEEDED in its word, so one compare of the word (TD_SOURCE_CONSUME_WORD_WITH_)
 *     tells a protocol source ready for the consumption fast path without loading its ops.
 *   - a source whose pool was full when it was released is freed; like any freed object
 *     it must not be queried again (the pools keep SourcePoolCapacity sources alive).
 *   - ownership (src/ownership.c) takes the read-modify-writes above off the path where one
 *     thread does everything. A source rented or reset on the main thread (the pools' owner
 *     thread, pool.h) is owned by it (`owned` TD_SOURCE_OWNED_MAIN): the main thread then
 *     (td_main_writer_thread_, where the process has membarrier) writes its word with plain
 *     stores, each inside a window bracketed by a flag of its own (td_main_busy_) whose
 *     opening re-reads `owned`. Any other thread takes the
 *     ownership away before it writes the word (td_source_disown_: REVOKING, an asymmetric
 *     heavy barrier, a wait for the window to close, SHARED); from then on every party uses
 *     the CAS protocol until the source is rented again. Sources of every other kind, and
 *     those rented on other threads, are SHARED from the start. Reads need neither. An
 *     owned source is a protocol source and never claimed (the claim is the CAS protocol's).
 */
#ifndef TANDEM_DETAIL_WORD_H
#define TANDEM_DETAIL_WORD_H

#ifndef TANDEM_TASK_H
#error "detail/word.h is included by tandem/task.h, not directly"
#endif

/* ---- the layout -------------------------------------------------------------------- */

/* td_source.owned */
#define TD_SOURCE_OWNED_SHARED 0u       /* the CAS protocol, for every party */
#define TD_SOURCE_OWNED_MAIN 1u         /* the main thread writes the word with plain stores */
#define TD_SOURCE_OWNED_REVOKING 2u     /* another thread is taking it away (ownership.c) */
/* Owned as MAIN, a runner that td_runner_succeed_ does not pool (async.h,
 * TD_RUNNER_UNPOOLED_IF_): the bit of MAIN set, so every window but the success's takes it. */
#define TD_SOURCE_OWNED_MAIN_UNPOOLED 3u
#define TD_SOURCE_OWNED_BY_MAIN_(o) (((o) & TD_SOURCE_OWNED_MAIN) != 0)
/* The thread that writes owned words with plain stores: the main thread, the pools' owner
 * (td_pool_set_owner_thread, set by td_runtime_init's main loop), where the process has the
 * heavy barrier (ownership.c), else 0. */
extern volatile uintptr_t td_main_writer_thread_;

#define TD_WORD_STATUS_MASK 0x3u
#define TD_WORD_MODE_SHIFT 2
#define TD_WORD_MODE_MASK (0x3u << TD_WORD_MODE_SHIFT)
#define TD_MODE_NONE (0u << TD_WORD_MODE_SHIFT)
#define TD_MODE_AWAITED (1u << TD_WORD_MODE_SHIFT)
#define TD_MODE_SHARED (2u << TD_WORD_MODE_SHIFT)
#define TD_MODE_CONSUMED (3u << TD_WORD_MODE_SHIFT)
#define TD_WORD_CLAIMED 0x10u           /* a racing completer owns the value slot */
#define TD_WORD_IMMORTAL 0x20u          /* static source: never consumed or recycled */
/* A stamp source (frame markers; a custom source, never recycled): its cont_arg points at a
 * volatile uint32_t stamp, and a task on it has succeeded once (int32_t)(stamp - token) >= 0.
 * The inline query fast paths below answer that without a call; until then its ops answer. */
#define TD_WORD_STAMPED 0x40u
/* A success that carries an error record (a flag record, compose.h): its consumption takes
 * the out-of-line path, so the inline one knows a success's error record is all zero. */
#define TD_WORD_RECORD 0x80u
/* A source that is in its pool already (a runner pooled by its own success on the pools'
 * owner thread, async.c): completed, its consumer's release is the store of the next version
 * alone, no ops call, and the flag stays in that pending word, which tells the pool's rent
 * that the runner is free but its frame not yet cleared (async.h, td_runner_rent). */
#define TD_WORD_POOLED 0x100u
/* A pending word awaited (mode AWAITED) by a runner's resumption, registered in the main
 * thread's window (td_runner_register_owned_, async.c): cont_fn is td_runner_resume_ and
 * cont_arg the runner until the word's next version. A completer that reads it hands the
 * result over without comparing cont_fn (td_completion_source_set_result); anything else
 * reads the word as it would without it (the consumption masks it with the mode,
 * TD_CONSUME_ANY_MODE_). */
#define TD_WORD_RESUMES_RUNNER 0x200u
#define TD_WORD_VERSION_SHIFT 10
#define TD_WORD_VERSION_MASK 0xFFFFFC00u
/* A protocol source's token is its version in place, the word's bits above the flags (w &
 * TD_WORD_VERSION_MASK): a token is compared with a word, or turned into the word it expects,
 * without a shift. One version on is one TD_TOKEN_STEP more (modulo 2^32); a value with any
 * of the low bits set is no token. (A stamp source's token is a frame number instead.) */
#define TD_TOKEN_STEP (1u << TD_WORD_VERSION_SHIFT)
/* The token's limit: a version has 32 - TD_WORD_VERSION_SHIFT = 22 bits, so a source's token
 * repeats after TD_TOKEN_PERIOD = 4,194,304 rounds (rentals, resets). A task value kept while
 * its source moves through fewer later rounds is stale; kept across exactly a multiple of
 * TD_TOKEN_PERIOD rounds it reads that round as its own (test_token_wrap). A hot loop goes
 * through that many rounds of one object in a fraction of a second: keep no task value
 * once it is consumed. */
#define TD_TOKEN_PERIOD (1u << (32 - TD_WORD_VERSION_SHIFT))
/* A recycled source's word: pending, mode NONE, no flags (TD_WORD_POOLED neither), the
 * version after w's. */
#define TD_WORD_NEXT_VERSION_(w) (((w) & TD_WORD_VERSION_MASK) + TD_TOKEN_STEP)


/* ---- the writes ------------------------------------------------------------------- */

/* The actors of the state table (the `actor` of every write below). */
typedef enum td_word_actor {
    TD_ACTOR_OWNER,         /* a new round: rent, reset, recycle; a rent's unpooling */
    TD_ACTOR_CLAIMER,       /* a racing completer takes the value slot */
    TD_ACTOR_COMPLETER,     /* the single completer (or claim holder) publishes the status */
    TD_ACTOR_HANDOVER,      /* a completer that consumes for the runner waiting (completion.c) */
    TD_ACTOR_REGISTRAR,     /* the one continuation */
    TD_ACTOR_SHARER,        /* a shared handle takes the task (shared.h) */
    TD_ACTOR_CONSUMER       /* the single consumer ends the token */
} td_word_actor;

#if defined(TD_DEBUG)
/* Debug builds (the ctest label `debug`): the table above, executed. NULL when the write of
 * `nw` over `old` by `actor` is one of its rows, else the rule it breaks. */
static inline const char *td_word_rule_broken_(int actor, uint32_t old, uint32_t nw)
{
    uint32_t so = old & TD_WORD_STATUS_MASK, sn = nw & TD_WORD_STATUS_MASK;
    uint32_t mo = old & TD_WORD_MODE_MASK, mn = nw & TD_WORD_MODE_MASK;
    uint32_t vo = old & TD_WORD_VERSION_MASK, vn = nw & TD_WORD_VERSION_MASK;
    uint32_t next = vo + TD_TOKEN_STEP;
    uint32_t kept = TD_WORD_IMMORTAL | TD_WORD_STAMPED;     /* what no write may change */
    switch (actor) {
    case TD_ACTOR_OWNER:
        if (vn == next && sn == TD_PENDING && mn == TD_MODE_NONE &&
            (nw & ~(TD_WORD_VERSION_MASK | kept)) == 0 && (nw & kept) == (old & kept))
            return NULL;
        if (so == TD_PENDING && (old & TD_WORD_POOLED) && nw == (old & ~TD_WORD_POOLED))
            return NULL;
        return "owner: a new round is the next version, pending, mode NONE, no flags";
    case TD_ACTOR_CLAIMER:
        return so == TD_PENDING && !(old & TD_WORD_CLAIMED) && nw == (old | TD_WORD_CLAIMED)
               ? NULL : "claimer: only a pending, unclaimed word is claimed, nothing else changes";
    case TD_ACTOR_COMPLETER: {
        uint32_t same = ~(TD_WORD_STATUS_MASK | TD_WORD_CLAIMED | TD_WORD_RECORD | TD_WORD_POOLED);
        return so == TD_PENDING && sn != TD_PENDING && !(nw & TD_WORD_CLAIMED) &&
               (nw & same) == (old & same)
               ? NULL : "completer: a pending word gets its final status, claim dropped, the rest kept";
    }
    case TD_ACTOR_HANDOVER:
        return so == TD_PENDING && mo == TD_MODE_AWAITED && sn == TD_SUCCEEDED &&
               mn == TD_MODE_CONSUMED && vn == vo
               ? NULL : "handover: a pending awaited word becomes succeeded and consumed";
    case TD_ACTOR_REGISTRAR:
        return so == TD_PENDING && mo == TD_MODE_NONE && mn == TD_MODE_AWAITED &&
               (nw & ~(TD_WORD_MODE_MASK | TD_WORD_RESUMES_RUNNER)) == (old & ~TD_WORD_MODE_MASK)
               ? NULL : "registrar: a pending word in mode NONE gets mode AWAITED, nothing else";
    case TD_ACTOR_SHARER:
        return mo == TD_MODE_NONE && nw == ((old & ~TD_WORD_MODE_MASK) | TD_MODE_SHARED)
               ? NULL : "sharer: a word in mode NONE gets mode SHARED, nothing else";
    case TD_ACTOR_CONSUMER:
        /* From mode CONSUMED: the release that follows a shared handle's consuming CAS
         * (td_source_take_shared), by the same consumer. */
        if (so == TD_PENDING || (old & TD_WORD_CLAIMED))
            return "consumer: only a final, unclaimed word is consumed";
        if (nw == ((old & ~TD_WORD_MODE_MASK) | TD_MODE_CONSUMED))
            return NULL;
        if (vn == next && sn == TD_PENDING && (nw & ~(TD_WORD_VERSION_MASK | TD_WORD_POOLED)) == 0 &&
            (!(nw & TD_WORD_POOLED) || (old & TD_WORD_POOLED)))
            return NULL;
        return "consumer: the token ends with mode CONSUMED or the next version, pending";
    }
    return "no such actor";
}
/* Prints the source's kind, the actor, both words and the rule, then aborts (word.c). */
void td_word_illegal_(const td_source *s, int actor, uint32_t old, uint32_t nw, const char *rule,
                      const char *file, int line);
void td_assert_fail_(const char *expr, const char *file, int line);
#define TD_ASSERT(cond) ((cond) ? (void)0 : td_assert_fail_(#cond, __FILE__, __LINE__))
#define TD_ASSERT_STATE(s, actor, old, nw)                                              \
    do {                                                                                \
        const char *td_rb_ = td_word_rule_broken_((actor), (old), (nw));                \
        if (td_rb_)                                                                     \
            td_word_illegal_((s), (actor), (old), (nw), td_rb_, __FILE__, __LINE__);    \
    } while (0)
/* A release store of `nw` into s's word by `actor`. */
#define TD_WORD_STORE_(s, actor, nw)                                                    \
    do {                                                                                \
        td_source *td_ws_ = (td_source *)(s);                                           \
        uint32_t td_wn_ = (nw);                                                         \
        TD_ASSERT_STATE(td_ws_, (actor), td_atomic_load_u32(&td_ws_->word), td_wn_);    \
        td_atomic_store_release_u32(&td_ws_->word, td_wn_);                             \
    } while (0)
/* A CAS of s's word from *expected to nw by `actor`: 1 when it took (the table checked on
 * what it replaced), else 0 with *expected the word found. */
#define TD_WORD_CAS_(s, actor, expected, nw)                                            \
    ({  td_source *td_ws_ = (td_source *)(s);                                           \
        uint32_t *td_we_ = (expected), td_wo_ = *td_we_, td_wn_ = (nw);                 \
        int td_wok_ = td_atomic_cas_u32(&td_ws_->word, td_we_, td_wn_);                 \
        if (td_wok_)                                                                    \
            TD_ASSERT_STATE(td_ws_, (actor), td_wo_, td_wn_);                           \
        td_wok_; })
#else
/* Measured builds: the writes alone, the same code as before the table existed. */
#define TD_ASSERT(cond) ((void)0)
#define TD_ASSERT_STATE(s, actor, old, nw) ((void)0)
#define TD_WORD_STORE_(s, actor, nw) td_atomic_store_release_u32(&(s)->word, (nw))
#define TD_WORD_CAS_(s, actor, expected, nw) td_atomic_cas_u32(&(s)->word, (expected), (nw))
#endif
/* A word's first value, before any party can see the source (a static initialiser aside). */
#define TD_WORD_INIT_(s, w) td_atomic_store_release_u32(&(s)->word, (w))

/* ---- the consumer's writes ----------------------------------------------------------- */

/* The word of a protocol source whose task `token` succeeded and may be consumed by its
 * single consumer: the version, status SUCCEEDED, mode NONE or AWAITED (the awaiter is
 * the consumer), not claimed, immortal, stamped or carrying a record (TD_WORD_RECORD), and
 * TD_WORD_POOLED or not: the word, masked by the modes taken (below), compared with each of
 * the two (TD_SOURCE_CONSUME_WORD_WITH_). The token's low bits are zero, so adding the status
 * is OR-ing it (one lea on x86). */
#define TD_WORD_SUCCEEDED_AT_(token) ((uint32_t)(token) + (uint32_t)TD_SUCCEEDED)
/* The modes a consumption's fast path takes (the `modes` of TD_SOURCE_CONSUME_WORD_WITH_, a
 * mask of the word): NONE or AWAITED (the out-of-line queries, and a resumption's take, which
 * finds its own registration there unless the task completed before it), or NONE alone (the
 * inline queries: a task awaited through td_task_on_completed and then queried takes the
 * out-of-line path, and the common get compares the word as it is, no mask). */
#define TD_CONSUME_ANY_MODE_ (~(uint32_t)(TD_MODE_AWAITED | TD_WORD_RESUMES_RUNNER))
#define TD_CONSUME_MODE_NONE_ (~(uint32_t)0)

/* The consumer's release of a completed, mortal source whose word `w` it read, its result
 * copied out: a source pooled at its completion (TD_WORD_POOLED) by the store of the next
 * version, the flag kept; any other by its release (td_source_ops.release), which ends the
 * token itself in one store. The consumer writes nothing else to the word. */
#define TD_SOURCE_RELEASE_CONSUMED_(s, w)                                               \
    do {                                                                                \
        if ((w) & TD_WORD_POOLED)                                                       \
            TD_WORD_STORE_((s), TD_ACTOR_CONSUMER, TD_WORD_NEXT_VERSION_(w) | TD_WORD_POOLED); \
        else                                                                            \
            (s)->ops->release(s);                                                       \
    } while (0)
/* A release that keeps the outcome (a manual completion source until its reset), or whose
 * object other owners still hold (compose_release, wait_release, ...): mode CONSUMED, so
 * every later query with the token is stale. The word is still as completed
 * (mode NONE or AWAITED): OR-ing sets CONSUMED. */
#define td_source_keep_consumed_(s)                                                     \
    TD_WORD_STORE_((s), TD_ACTOR_CONSUMER, td_atomic_load_u32(&(s)->word) | TD_MODE_CONSUMED)

/* Consumption's common case (the invariants above): if `s`'s task `token` succeeded, `copy`
 * copies the result out of the source, named `sv` there, and the source is released with a
 * plain release store: a pooled one (the first test, runners) by the next version with the
 * flag, which is the expected word plus one version less the status; any other by its
 * release (TD_SOURCE_RELEASE_CONSUMED_). A statement expression: tcc, which never inlines, pays no
 * call for it. 1: consumed; 0: anything else (a custom source, a fault, a stale, shared or
 * pending token), for the out-of-line protocol. */
#define TD_SOURCE_CONSUME_IF_SUCCEEDED_(s, token, sv, copy)                              \
    TD_SOURCE_CONSUME_WORD_IF_SUCCEEDED_((s), td_atomic_load_u32(&sv->word), (token), sv, copy, \
                                         TD_CONSUME_ANY_MODE_)
/* The same with the word read already: `w`, an expression that may name `sv`; `modes`, the
 * modes taken (TD_CONSUME_ANY_MODE_ or TD_CONSUME_MODE_NONE_). */
#define TD_SOURCE_CONSUME_WORD_IF_SUCCEEDED_(s, w, token, sv, copy, modes)               \
    TD_SOURCE_CONSUME_WORD_WITH_((s), (w), (token), sv, copy, 1, (modes))
/* ... and `releases`, a constant: 0 leaves a success whose release is a call (not pooled at
 * its completion) to the caller's rest, as anything else */
#define TD_SOURCE_CONSUME_WORD_WITH_(s, w, token, sv, copy, releases, modes)             \
    ({  td_source *sv = (s);                                                            \
        uint32_t td_cw_ = (w) & (modes);                                                \
        uint32_t td_ce_ = TD_WORD_SUCCEEDED_AT_(token) + TD_WORD_POOLED;                \
        int td_ct_ = 1;                                                                 \
        if (TD_LIKELY(td_cw_ == td_ce_)) {                                              \
            copy;                                                                       \
            TD_WORD_STORE_(sv, TD_ACTOR_CONSUMER, td_ce_ + (TD_TOKEN_STEP                     \
                                                             - (uint32_t)TD_SUCCEEDED)); \
        } else if ((releases) && td_cw_ == td_ce_ - TD_WORD_POOLED) {                   \
            copy;                                                                       \
            sv->ops->release(sv);                                                       \
        } else                                                                          \
            td_ct_ = 0;                                                                 \
        td_ct_; })
/* ... the whole outcome into `out` (a query): the value; a success on this path has no
 * error record (TD_WORD_RECORD), so the record is written as zeros, not copied */
#define TD_SOURCE_CONSUME_SUCCESS_(s, token, out)                                        \
    TD_SOURCE_CONSUME_IF_SUCCEEDED_((s), (token), td_cs_, td_outcome_succeeded_((out), td_cs_->value))
/* ... only the value into `*(valp)` (the resumption's take) */
#define TD_SOURCE_TAKE_SUCCESS_(s, token, valp)                                          \
    TD_SOURCE_CONSUME_IF_SUCCEEDED_((s), (token), td_cs_, *(valp) = td_cs_->value)
/* ... the same in mode NONE only (the inline queries) */
#define TD_SOURCE_GET_SUCCESS_(s, token, valp)                                           \
    TD_SOURCE_CONSUME_WORD_IF_SUCCEEDED_((s), td_atomic_load_u32(&td_cs_->word), (token), td_cs_, \
                                         *(valp) = td_cs_->value, TD_CONSUME_MODE_NONE_)
/* ... the same for a source pooled at its completion only (TD_WORD_POOLED: its release is the
 * store, no call); 0 for any other, whose release is a call (the take of a step that makes
 * no call of its own but tail calls leaves those to its rest, async.h) */
#define TD_SOURCE_TAKE_POOLED_SUCCESS_(s, token, valp)                                   \
    TD_SOURCE_CONSUME_WORD_WITH_((s), td_atomic_load_u32(&td_cs_->word), (token), td_cs_, \
                                 *(valp) = td_cs_->value, 0, TD_CONSUME_ANY_MODE_)

/* The untyped inline queries' tests of the word `w` of a task's source `s` (not NULL), read
 * once, in this order: a success pooled at its completion (a method's task, the one most
 * often consumed), a reached stamp (frame waits, td_next_frame and td_yield, which need no
 * consumption: their word has TD_WORD_STAMPED and never matches the other two), any other
 * success in mode NONE. `copy` as TD_SOURCE_CONSUME_WORD_WITH_'s (td_cs_ the source). 1: the
 * task succeeded (consumed where it consumes); 0: anything else, for the out-of-line query.
 * A method's task first, as the most often consumed: the order is the measured one (its
 * commit gives the figures). */
#define TD_SOURCE_GET_WORD_ORDERED_(s, w, token, copy)                                  \
    (TD_SOURCE_CONSUME_WORD_WITH_((s), (w), (token), td_cs_, copy, 0, TD_CONSUME_MODE_NONE_) || \
     (((w) & TD_WORD_STAMPED) && td_source_stamp_at_((s), (token))) ||                  \
     TD_SOURCE_CONSUME_WORD_WITH_((s), (w), (token), td_cs_, copy, 1, TD_CONSUME_MODE_NONE_))

#endif /* TANDEM_DETAIL_WORD_H */
