/*
 * async.c - pooled runners for stackless async methods (see include/tandem/async.h).
 */
#include "../port/td_libc.h"
#include "td_internal.h"

/* A runner's release and recycle are generated per method by TD_METHOD_DEFINE (async.h,
 * td_runner_ops_): the frame's size and the pool are constants there. Consumption's
 * release retires the version (TD_RUNNER_RETIRE_VERSION_), then recycles: the frame
 * cleared (it stays readable until then, async.h), the runner pooled. That is the path of
 * a runner not pooled by its success (td_runner_succeed_, below: another thread, a full
 * segment, a fault, tracking).
 * Nobody can rent the runner before it is pooled, and a query with the old token is stale
 * from the new version on, so the order of the two does not matter. Nothing else needs
 * resetting, by these invariants:
 *   - value and error slots: the value written by every completion (td_runner_finish_,
 *     td_source_succeed_own_, the start's in-place success), the
 *     error slots by every one that has a record (task.h), and read only then;
 *   - sync and the resume point: set by every start before the step runs (TD_RUNNER_START_),
 *     sync NULL after a suspension;
 *   - awaiting.task.source: NULL outside an await (every take clears it);
 *   - flowed / context: flowed is set only by a registration that succeeded (a failed one
 *     clears it, runner_suspend_return) and cleared by the resumption, context read only then;
 *   - a continuation runs only under a mode that the new word clears. */

/* Tracking (tracking.h) costs the default path nothing but the start's test: a runner
 * started with tracking on gets these operations in place of its method's until its
 * recycle, which forgets the rental before the runner can be re-rented and gives it back
 * its method's operations. A runner started with tracking off keeps its method's, whatever
 * tracking does meanwhile (it was never recorded). Generic (the frame's size from the
 * method) and out of line: rare. */
void td_runner_recycle_tracked_(td_runner *r)
{
    td_method *m = r->method;
    td_tracking_end_(r);
    r->source.ops = &m->ops->source;
    memset(r->frame, 0, TD_RUNNER_FRAME_BYTES_(m->frame_size));
    td_pool_return(&m->pool, r);
}

static void runner_release_tracked(td_source *s)
{
    TD_RUNNER_RETIRE_VERSION_(s);
    td_runner_recycle_tracked_((td_runner *)s);
}

static const td_runner_ops_ runner_tracked_ops = {
    { runner_release_tracked, NULL, NULL, NULL, "tracked runner" }, td_runner_recycle_tracked_ };

/* In td_runner_start: the method's recycle (its token never left the start). */
#define runner_start_release_(r) (((const td_runner_ops_ *)(const void *)(r)->source.ops)->recycle(r))

/* ---- runners pooled by their success (td_runner_succeed_, async.h) -----------------------
 * Invariants:
 *   - only the owner's segment of a method's pool holds runners whose task is not consumed
 *     (status not pending in their word): td_runner_succeed_ pushes there, on the pools'
 *     owner thread, and nothing moves an object from one segment to the other;
 *   - such a runner's frame stays as the step left it (the caller may read it until the
 *     consumption, above); its word has TD_WORD_POOLED, which the consumer's store of the
 *     next version keeps;
 *   - a rent takes a runner only with a pending word, the consumer's store seen (an acquire
 *     load: the consumer's reads of the value came before it), and clears its frame first
 *     if the word has the flag, which it then drops (TD_RUNNER_CLEAN_);
 *   - the parked list holds the runners a rent popped too early; only the owner thread
 *     touches it, and it gives each back once consumed (runner_unpark);
 *   - before a capacity change, which frees pooled objects, the owner's segment is settled:
 *     its unconsumed runners are parked (method_settle). */

/* td_runner_succeed_'s publication in its window of the completed word `done` (w the pending
 * word read there), then its continuation. Written out on each of its two paths: merged,
 * clang chose the word with two constants and an `or` on both. */
#define runner_publish_owned_(r, w, done)                                               \
    do {                                                                                \
        TD_WORD_STORE_(&(r)->source, TD_ACTOR_COMPLETER, (done));                         \
        TD_MAIN_OWNS_END_();                                                            \
        if (TD_WORD_OWNED_HAS_CONTINUATION_(w))                                         \
            runner_run_continuation(r);                                                 \
    } while (0)
/* Out of line, the runner its one argument: called in place, the continuation's own argument
 * register made clang copy the runner out of it at the start of every step that inlines
 * td_runner_succeed_ (a copy per resumption). */
static TD_NOINLINE void runner_run_continuation(td_runner *r)
{
    r->source.cont_fn(r->source.cont_arg);
}

#define RUNNER_OWNED_POOLING(o) ((o) == TD_SOURCE_OWNED_MAIN)

TD_ALWAYS_INLINE void td_runner_succeed_(td_runner *r, int64_t value)
{
    td_method *m = r->method;
    /* The value first, outside any window: only the completer writes the slot, and nobody
     * reads it before the word says succeeded (td_source_succeed_own_ writes it again). The
     * argument's register is then free for the tests below. */
    r->source.value = value;
    /* a small frame (a rent clears it at once), not tracked (the tracked operations'
     * release forgets the rental): td_method.succeed_pools, which the start wrote into
     * `owned` (TD_RUNNER_UNPOOLED_IF_): MAIN alone is owned and pooling, one compare */
    if (TD_LIKELY(TD_MAIN_OWNS_BEGIN_IF_(&r->source, td_main_writer_thread_, RUNNER_OWNED_POOLING))) {
        /* pending, the mode final or NONE, never claimed (owned); only this thread writes it.
         * A rented runner's word has neither a status nor TD_WORD_POOLED (the rent drops
         * it): the flags are added, one `lea` on each branch. */
        uint32_t w = td_atomic_load_u32(&r->source.word);
        /* Pushed before the publication: nobody but this thread pops the owner's segment,
         * and a pending word is only read as free by a rent on this thread, which cannot run
         * before the store below. The window's thread is the pools' owner (ownership.c). */
        if (TD_UNLIKELY(!TD_POOL_OWNER_PUSH_IF_ROOM_(&m->pool, r))) {
            runner_publish_owned_(r, w, w + TD_SUCCEEDED);
            return;
        }
        runner_publish_owned_(r, w, w + (TD_SUCCEEDED | TD_WORD_POOLED));
        return;
    }
    td_source_succeed_own_(&r->source, value);
}

#if defined(TD_PORT_DEFINE_RUNNER_RETURN_)
/* The offsets and the constant the port's assembly names (td_port_tcc_asm.h). */
typedef char runner_port_return_layout_[(offsetof(td_runner, sync) == TD_ASM_RUNNER_SYNC &&
                                         offsetof(td_runner, source.value) == TD_ASM_SOURCE_VALUE &&
                                         TD_SUCCEEDED == TD_ASM_SUCCEEDED) ? 1 : -1];
TD_PORT_DEFINE_RUNNER_RETURN_(td_port_runner_return_, td_runner_succeed_);
#endif

/* 1 while r's task is not consumed (its status not pending): a rent must not take it. */
#define runner_unconsumed(r) ((td_atomic_load_u32(&(r)->source.word) & TD_WORD_STATUS_MASK) != 0)

/* The parked list's link: a completed runner's `context` (async.h) */
#define runner_parked_next(r) ((td_runner *)(r)->context)

static void runner_park(td_method *m, td_runner *r)
{
    r->context = NULL;
    if (m->parked_tail)
        m->parked_tail->context = r;
    else
        m->parked_head = r;
    m->parked_tail = r;
}

/* A consumed runner from the parked list, or NULL: at most RUNNER_UNPARK_SCAN looked at,
 * oldest first; an unconsumed one goes to the back. Owner thread only. */
#define RUNNER_UNPARK_SCAN 16
static td_runner *runner_unpark(td_method *m)
{
    for (int i = 0; i < RUNNER_UNPARK_SCAN && m->parked_head; i++) {
        td_runner *r = m->parked_head;
        m->parked_head = runner_parked_next(r);
        if (m->parked_head == NULL)
            m->parked_tail = NULL;
        r->context = NULL;
        if (!runner_unconsumed(r))
            return r;
        runner_park(m, r);
    }
    return NULL;
}

/* Park the unconsumed runners of the owner's segment (the cold capacity change's first
 * step, on the owner thread or with no owner: the pool's own rule, pool.h). */
static void method_settle(td_method *m)
{
    td_pool *p = &m->pool;
    uint32_t kept = 0, n;
    if (td_pool_owner_thread_ != 0 && !TD_POOL_ON_OWNER_())
        return;     /* another thread's segment (the pool's own rule for the cold paths) */
    n = td_atomic_load_u32(&p->local_count);
    for (uint32_t i = 0; i < n; i++) {
        td_runner *r = (td_runner *)p->local[i];
        if (runner_unconsumed(r))
            runner_park(m, r);
        else
            p->local[kept++] = r;
    }
    td_atomic_store_release_u32(&p->local_count, kept);
}

td_runner *td_runner_popped_(td_method *m, td_runner *r)
{
    uint32_t w = td_atomic_load_u32(&r->source.word);
    if (!(w & TD_WORD_STATUS_MASK)) {
        TD_RUNNER_CLEAN_(r, w);
        return r;
    }
    runner_park(m, r);      /* popped from the owner's segment: this is the owner thread */
    return td_runner_ready_(m);
}

/* Rent's slow path (async.h, td_runner_rent): anything but a free runner popped from the
 * owner's segment on the main thread (another thread, an empty segment, a runner not yet
 * consumed). A parked runner now consumed comes first when the pool is empty, then the
 * pool's own paths rent or allocate (an unconsumed runner they pop is parked); a freshly
 * allocated or prefilled runner (zeroed: no ops yet) is set up here. */
td_runner *td_runner_ready_(td_method *m)
{
    td_runner *r;
    uint32_t w;
    for (;;) {
        if (TD_POOL_ON_OWNER_() && m->parked_head && td_pool_count(&m->pool) == 0 &&
            (r = runner_unpark(m)) != NULL)
            break;
        r = (td_runner *)td_pool_rent(&m->pool);
        if (TD_UNLIKELY(r == NULL))
            return NULL;
        if (TD_LIKELY(!runner_unconsumed(r)))
            break;
        runner_park(m, r);  /* from the owner's segment (the invariants above) */
    }
    w = td_atomic_load_u32(&r->source.word);
    if (w & TD_WORD_POOLED)
        TD_RUNNER_CLEAN_(r, w);
    if (TD_UNLIKELY(r->source.ops == NULL)) {   /* freshly allocated or prefilled (zeroed) */
        if (TD_UNLIKELY(m->ops == NULL)) {      /* not a TD_METHOD_DEFINE method: no recycle */
            free(r);    /* not pooled: the owner's segment holds only set-up runners (pool.h) */
            return NULL;
        }
        r->source.ops = &m->ops->source;
        r->method = m;
        if (TD_UNLIKELY(!td_atomic_load_u32(&m->registered)))
            td_method_register(m);
    }
    TD_SOURCE_OWN_(&r->source);
    return r;
}

td_runner *(td_runner_rent)(td_method *m)
{
    return td_runner_rent(m);
}

/* tracking | flow (td_internal.h): the start's one test of both, a plain word so that tcc
 * loads it with one instruction. Every writer of either setting refreshes it. */
uint32_t td_runner_observed_;

void td_runner_observed_refresh_(void)
{
    td_runner_observed_ = (td_runtime_settings.tracking | td_runtime_settings.flow) != 0;
    td_ownership_refresh_registrar_();     /* flow, too */
}

/* The first step with tracking or flow on (both off by default): tracking records the
 * rental and gives the runner the tracked operations (above); with flow on, like an async
 * method's builder, the caller's context survives the call whatever the method does to it.
 * Out of line, behind one branch on both settings, so the default start stays small enough
 * to inline (runtime/contract.json). */
static TD_NOINLINE void runner_first_step_observed(td_runner *r, uint32_t token)
{
    if (td_runtime_settings.tracking) {
        td_tracking_begin_(r, token);
        r->source.ops = &runner_tracked_ops.source;
        TD_RUNNER_UNPOOLED_IF_(r, 1);
    }
    if (!td_runtime_settings.flow) {
        r->method->step(r, r->frame);
        return;
    }
    void *caller = td_context_current();
    r->method->step(r, r->frame);
    td_context_restore_(caller);
}

/* The generic start (TD_RUNNER_START_, async.h): the step through the method, tracking and
 * flow behind one test of both, and the runner's own recycle (ops: the method's, or the
 * tracked ones that the observed path gave it); a method whose frame is too wide to pool
 * at success marks its runner (TD_RUNNER_UNPOOLED_IF_, as the generated starts do). */
#define runner_start(r, t, on_success)                                                  \
    do {                                                                                \
        TD_RUNNER_UNPOOLED_IF_((r), (r)->method->succeed_pools == NULL);                \
        TD_RUNNER_START_((r), (t),                                                      \
                         if (TD_UNLIKELY(td_runner_observed_))                          \
                             runner_first_step_observed((r), (t).token);                \
                         else                                                           \
                             (r)->method->step((r), (r)->frame),                        \
                         on_success, runner_start_release_(r), (void)0);                \
    } while (0)

td_task td_runner_start(td_runner *r)
{
    td_task t;
    t.token = TD_RUNNER_RENTED_VERSION_(r);
    runner_start(r, t, t.token = 0);
    return t;
}

void td_runner_start_to_(td_runner *r, td_task *t)
{
    t->token = TD_RUNNER_RENTED_VERSION_(r);
    runner_start(r, *t, t->token = 0);
}

void td_runner_start_i64_to_(td_runner *r, td_task_i64 *t)
{
    t->value = (int64_t)TD_RUNNER_RENTED_VERSION_(r);
    runner_start(r, t->task, t->value = r->source.value);
}

/* The token goes in as the whole second word (the token zero-extended): the same bytes as
 * td_task_i64_of's value 0 then token, in one store. */
td_task_i64 td_runner_start_i64(td_runner *r)
{
    td_task_i64 t;
    t.value = (int64_t)TD_RUNNER_RENTED_VERSION_(r);
    runner_start(r, t.task, t.value = r->source.value);
    return t;
}

/* Resume in the captured context; the resuming thread gets its own back afterwards (only a
 * local is touched after the step: the runner may be gone). Out of line, so the common
 * resumption below is a tail call with no frame of its own. */
static TD_NOINLINE void runner_move_next_flowed(td_runner *r)
{
    void *resumer = td_context_current();
    td_context_restore_(r->context);
    r->flowed = 0;
    r->method->step(r, r->frame);
    td_context_restore_(resumer);
}

void td_runner_move_next(void *arg)
{
    td_runner *r = (td_runner *)arg;
    if (TD_UNLIKELY(r->flowed)) {
        runner_move_next_flowed(r);
        return;
    }
    r->method->step(r, r->frame);
}

/* The resumption of a frame wait queued with flow off (TD_RUNNER_FRAME_PUSH_,
 * td_runner_suspend_fast_, runner_suspend_return's marker path): flowed is 0 whenever a step
 * runs (set only by a registration with flow on, cleared by its resumption), and this
 * queuing captured nothing, so the step is called without the test. */
void td_runner_resume_frame_(void *arg)
{
    td_runner *r = (td_runner *)arg;
    r->method->step(r, r->frame);
}

/* The resumption of a registration that captured no context (flow off, or suppressed:
 * td_runner_suspend_at_ on an owned source, runner_suspend_return's registration), so no flow
 * test. Its own function, not td_runner_resume_frame_: the loop's retirement takes that one's
 * queue entries for frame waits (loop.c). */
void td_runner_resume_(void *arg)
{
    td_runner *r = (td_runner *)arg;
    r->method->step(r, r->frame);
}

/* The suspension on the awaited task {s, token} (s not NULL), returning 1 (suspended) or 0
 * (go on: completed already, or the registration was refused) from the enclosing function.
 * A macro, so both entries below run it without a call under tcc (which never inlines).
 *   - a frame wait (a stamp source) with flow off: one stamp check, then the loop's own
 *     queue (td_loop_marker_await_), not the generic registration chain;
 *   - else the registration (td_source_register_: a protocol source inline), after leaving the
 *     synchronous mode, of td_runner_move_next when a context was captured, else of
 *     td_runner_resume_ with TD_WORD_RESUMES_RUNNER (the completion's handover without a
 *     compare of cont_fn, completion.c); after TD_OK the runner may already be running on
 *     another thread, so it returns at once. */
#define runner_suspend_return(r, s, token)                                              \
    do {                                                                                \
        uint32_t *su_sync_ = (r)->sync;                                                 \
        if (TD_LIKELY(!td_runtime_settings.flow) &&                                     \
            (td_atomic_load_u32(&(s)->word) & TD_WORD_STAMPED)) {                       \
            if (td_source_stamp_at_((s), (token)))                                      \
                return 0;                                                               \
            (r)->sync = NULL;                                                           \
            if (td_loop_marker_await_((s), (token), td_runner_resume_frame_, (r)) == TD_OK) \
                return 1;                                                               \
            (r)->sync = su_sync_;                                                       \
            return 0;                                                                   \
        }                                                                               \
        td_continuation_fn su_fn_ = td_runner_resume_;                                  \
        uint32_t su_flags_ = TD_WORD_RESUMES_RUNNER;                                    \
        if (td_runtime_settings.flow && !td_context_flow_suppressed_()) {               \
            (r)->context = td_context_capture_();                                       \
            (r)->flowed = 1;                                                            \
            su_fn_ = td_runner_move_next;                                               \
            su_flags_ = 0;                                                              \
        }                                                                               \
        (r)->sync = NULL;                                                               \
        if (td_source_register_((s), (token), su_fn_, (r), su_flags_) == TD_OK)         \
            return 1;                                                                   \
        (r)->sync = su_sync_;                                                           \
        (r)->flowed = 0;    /* not suspended: nothing resumes in the captured context */ \
        (r)->context = NULL;                                                            \
        return 0;                                                                       \
    } while (0)

/* TD_AWAIT under compilers that do not inline (tcc): the task arrives in two registers and
 * is stored field by field (a struct assignment would be a memmove call there). */
int td_runner_await_task_(td_runner *r, td_task t)
{
    r->awaiting.task.source = t.source;
    r->awaiting.task.token = t.token;
    if (t.source == NULL)
        return 0;
    runner_suspend_return(r, t.source, t.token);
}

/* TD_AWAIT_VALUE and TD_AWAIT_OUTCOME under tcc: the same with a typed task, its second word
 * (the token, or a source-free task's result) stored whole, after the source. */
int td_runner_await_task_i64_(td_runner *r, td_task_i64 t)
{
    r->awaiting.task.source = t.task.source;
    r->awaiting.value = t.value;
    if (t.task.source == NULL)
        return 0;
    runner_suspend_return(r, t.task.source, t.task.token);
}

/* TD_AWAIT_NEXT_FRAME / TD_AWAIT_YIELD when the inline queue entry was refused
 * (TD_AWAIT_FRAME_ tried TD_RUNNER_FRAME_PUSH_ first, under both compilers): the task of
 * td_next_frame / td_yield, then the generic suspension on it (td_runner_await_task_). */
int td_runner_await_frame_(td_runner *r, td_timing t, int yield)
{
    r->resume |= TD_RESUME_TAKE_;   /* the resumption has this task to take (async.h) */
    /* The task goes straight to the call (in registers: no struct store, tcc) */
    return yield ? td_runner_await_task_(r, (td_yield)(t)) : td_runner_await_task_(r, (td_next_frame)(t));
}

/* TD_AWAIT_FRAME_'s slow paths where the compiler inlines (async.h): the step's tail calls.
 * When the await does not suspend, or the taken outcome lets the method go on, the step runs
 * on from its resume point here (r->resume is the await's; a take cleared `awaiting`). Never
 * inlined: inlined into the step, the call would no longer be the step's last. */
TD_NOINLINE void td_runner_await_frame_then_(td_runner *r, td_timing t, int yield)
{
    if (td_runner_await_frame_(r, t, yield))
        return;
    r->method->step(r, r->frame);
}

TD_NOINLINE void td_runner_take_frame_then_(td_runner *r)
{
    if (td_runner_take_(r, 1, NULL))
        return;
    r->method->step(r, r->frame);
}

/* td_runner_suspend_at_'s other cases, out of line (so that its common case needs no register
 * of its own): flow on, a stamp source, a custom source, a lost CAS. */
static TD_NOINLINE int runner_suspend_other(td_runner *r, td_source *s, uint32_t token)
{
    runner_suspend_return(r, s, token);
}

/* The common suspension with flow off (td_runner_register_owned_): a source that the main
 * thread owns, awaited on the main thread, pending at the token in mode NONE (its word `w` as
 * read by the caller) takes td_runner_resume_ with a plain release store in the main thread's
 * window (task.h); 1 then, else 0 with nothing done. `w` is still the word: while the source
 * is owned only this thread writes it. An owned source is a protocol source (a runner, a
 * completion or auto source) and never claimed, so its word is compared whole, without
 * loading its ops. The synchronous mode is left before the store (the runner may be resumed as
 * soon as the window closes). td_runner_suspend_at_ takes anything else to
 * runner_suspend_other (the CAS protocol) in a tail call; the inline suspension (async.h)
 * calls either with what it read. */
int td_runner_register_owned_(td_runner *r, td_source *s, uint32_t token, uint32_t w)
{
    if (TD_LIKELY(TD_MAIN_OWNS_BEGIN_AS_(s, td_main_registrar_thread_))) {   /* flow off too */
        if (TD_LIKELY(w == token)) {
            r->sync = NULL;
            s->cont_fn = td_runner_resume_;
            s->cont_arg = r;
            TD_WORD_STORE_(s, TD_ACTOR_REGISTRAR, w | TD_MODE_AWAITED | TD_WORD_RESUMES_RUNNER);
            TD_MAIN_OWNS_END_();
            return 1;
        }
        TD_MAIN_OWNS_END_();
    }
    return 0;
}

int td_runner_suspend_at_(td_runner *r, td_source *s, uint32_t token, uint32_t w)
{
    if (td_runner_register_owned_(r, s, token, w))
        return 1;
    return runner_suspend_other(r, s, token);
}

int td_runner_suspend_(td_runner *r)
{
    td_source *s = r->awaiting.task.source;
    if (s == NULL)
        return 0;
    return td_runner_suspend_at_(r, s, r->awaiting.task.token, td_atomic_load_u32(&s->word));
}

/* TD_AWAIT's slow paths where the compiler inlines (async.h), as the frame wait's above: the
 * step's tail calls, never inlined into it, so that a step whose only calls are these keeps no
 * register across a call and saves none. When the await does not suspend, or the take lets
 * the method go on, the step runs on from its resume point here (r->resume is the await's):
 * the take then finds the outcome's value as a source-free task (the rest cleared the source)
 * and copies it to the await's destination itself. */
TD_NOINLINE void td_runner_suspend_then_(td_runner *r)
{
    /* the inline suspension tried the owned registration and the marker's queue already */
    if (runner_suspend_other(r, r->awaiting.task.source, r->awaiting.task.token))
        return;
    r->method->step(r, r->frame);
}

TD_NOINLINE void td_runner_take_then_(td_runner *r)
{
    int64_t v = 0;
    if (td_runner_take_(r, 1, &v))
        return;
    r->awaiting.value = v;          /* the source cleared by the take: a source-free task */
    r->method->step(r, r->frame);
}

/* The take's rest (td_runner_take_): the outcome through the protocol, a fault propagated
 * or (without propagation) kept in r->last. */
static int runner_take_rest(td_runner *r, int propagate, int64_t *value_out)
{
    td_source *s = r->awaiting.task.source;
    uint32_t token = r->awaiting.task.token;
    td_outcome o;
    int rc = TD_OK;
    if (s == NULL)          /* a source-free task awaited without propagation: succeeded */
        td_outcome_succeeded_(&o, r->awaiting.value);
    else
        rc = td_task_get_from_(s, token, &o);
    r->awaiting.task.source = NULL;
    if (TD_UNLIKELY(rc != TD_OK)) {
        o.status = TD_FAULTED;
        o.value = 0;
        o.error.code = rc;
        o.error.message = "awaited an unusable task (stale, shared or pending)";
        o.error.cancel = NULL;
    }
    if (!propagate) {       /* field by field: no memmove call under tcc */
        r->last.status = o.status;
        r->last.value = o.value;
        r->last.error.code = o.error.code;
        r->last.error.message = o.error.message;
        r->last.error.cancel = o.error.cancel;
        return 0;
    }
    if (TD_LIKELY(o.status == TD_SUCCEEDED)) {
        if (value_out)
            *value_out = o.value;
        return 0;
    }
    td_runner_finish_(r, o.status, 0, &o.error);
    return 1;
}

/* td_runner_take_now_'s fast paths here too, for the callers that come straight here (the
 * frame wait's slow take, td_runner_take_frame_then_, and tcc's); without propagation
 * (TD_AWAIT_OUTCOME) the rest keeps any outcome in r->last. */
int td_runner_take_(td_runner *r, int propagate, int64_t *value_out)
{
    if (!propagate)
        return runner_take_rest(r, 0, value_out);
    return TD_RUNNER_TAKE_OR_(r, value_out, runner_take_rest(r, 1, value_out));
}

void td_runner_finish_(td_runner *r, td_status st, int64_t value, const td_error *err)
{
    if (r->sync) {
        /* Still inside td_runner_start, never published: no CAS (see runner_start). A
         * success there is released at once, its error slot never read; a fault or a
         * cancellation is published here with a plain release store (nobody else has the
         * token yet), and the start returns the task. */
        r->source.value = value;
        if (TD_UNLIKELY(st != TD_SUCCEEDED || err))
            td_source_set_error_(&r->source, err);
        if (TD_LIKELY(st == TD_SUCCEEDED)) {
            *r->sync = (uint32_t)TD_SUCCEEDED;
            return;
        }
        r->sync = NULL;
        TD_WORD_STORE_(&r->source, TD_ACTOR_COMPLETER,
            (td_atomic_load_u32(&r->source.word) & ~TD_WORD_STATUS_MASK) | (uint32_t)st);
        return;
    }
    /* Asynchronous: the runner publishes its outcome as its own single completer. */
    td_source_complete_own_(&r->source, st, value, err);
}

/* ---- method registry (cold) --------------------------------------------------------- */

static td_method *async_methods;
static td_spinlock async_methods_lock = TD_SPINLOCK_INIT;

/* The registry lock is held across the capacity change, so a concurrent
 * td_set_runner_pool_capacity cannot interleave with it and leave this pool stale. */
void td_method_register(td_method *m)
{
    td_spin_lock(&async_methods_lock);
    if (!m->registered) {
        m->next = async_methods;
        async_methods = m;
        td_atomic_store_release_u32(&m->registered, 1);
        if (m->pool.capacity != td_runtime_settings.runner_pool_capacity)
            td_method_set_capacity(m, td_runtime_settings.runner_pool_capacity);
    }
    td_spin_unlock(&async_methods_lock);
}

int td_method_set_capacity(td_method *m, uint32_t capacity)
{
    method_settle(m);
    return td_pool_set_capacity(&m->pool, capacity);
}

int td_async_set_all_capacities_(uint32_t capacity)
{
    int rc = TD_OK;
    td_spin_lock(&async_methods_lock);
    for (td_method *it = async_methods; it; it = it->next)
        if (td_method_set_capacity(it, capacity) != TD_OK)
            rc = TD_E_NOMEM;
    td_spin_unlock(&async_methods_lock);
    return rc;
}

void td_async_runtime_shutdown_(void)
{
    for (td_method *it = async_methods; it; it = it->next) {
        td_method_set_capacity(it, 0);   /* unconsumed runners stay parked, not freed */
    }
}
