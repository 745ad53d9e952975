/*
 * task_model.h - a reference model of the task protocol, written from the public headers
 * (task.h, completion.h, compose.h, loop.h, cancel.h, adapter.h, shared.h, forget.h) and
 * nothing else. It is the fuzzer's spec: for every operation the executor (task_ops.c)
 * performs on the runtime, the model says first whether the operation is defined at all
 * (a usage error is never issued: querying a freed source, consuming a task twice on
 * purpose where its object may be gone, ...), then what the runtime must answer (return
 * code, outcome) and how every other handle changes (statuses, continuations that run,
 * cancellation callbacks that run).
 *
 * Single-threaded, one main loop at a time (a retired one is replaced by a fresh loop), the
 * realtime clock driven by hand (td_loop_config.now), every wait at timing UPDATE.
 */
#ifndef TASK_MODEL_H
#define TASK_MODEL_H

#include <stdint.h>

#define TM_MAX_HANDLES 40
#define TM_MAX_CS 8
#define TM_MAX_USER_REGS 12
#define TM_MAX_REGS_PER_CS (TM_MAX_HANDLES + TM_MAX_USER_REGS + 2 * TM_MAX_CS)  /* never full */
#define TM_MAX_INPUTS 3
#define TM_MAX_ITEMS 64
#define TM_MAX_SUBS 6
#define TM_MAX_QUEUE (TM_MAX_HANDLES * TM_MAX_SUBS)
/* With at most TM_MAX_HANDLES handles alive a pool never holds this many free objects, so
 * at this capacity or above no release frees its object (pool.h: the return frees only
 * when the pool is full). Below it a released object may be freed (task.h). */
#define TM_SAFE_CAPACITY 256u

/* Every way the fuzzer makes a task. */
typedef enum tm_kind {
    TM_MANUAL,          /* td_completion_source (typed view) */
    TM_AUTO,            /* td_auto_source (typed view) */
    TM_RUNNER_I64,      /* an async method awaiting a gate, returning gate + 1 */
    TM_RUNNER,          /* the same method's untyped start (TD_RETURN) */
    TM_FROM_RESULT,
    TM_FROM_ERROR,
    TM_FROM_CANCELED,
    TM_NEXT_FRAME,      /* stateless frame waits (the loop's stamp markers) */
    TM_YIELD,
    TM_DELAY_FRAME,
    TM_FRAME_TOKEN,     /* a frame wait with a cancel token (pooled wait) */
    TM_DELAY,           /* td_delay on the realtime clock, token optional */
    TM_WHEN_ALL,
    TM_WHEN_ANY,
    TM_RACE,
    TM_TIMEOUT,
    TM_ATTACH,
    TM_SUPPRESS,
    TM_CALLBACK,        /* td_from_callback */
    TM_FUTURE,          /* td_future_task */
    TM_SHARED,          /* td_shared_task_i64 of a handle made by td_task_share_rc */
    TM_KIND_COUNT
} tm_kind;

/* Who may use a handle's task: the fuzzer's user code, or something it was given to. */
enum { TM_OWNER_USER, TM_OWNER_COMBINATOR, TM_OWNER_FORGOTTEN };

/* What a completed task reads: status, value (when the model knows it) and error code
 * (a fault's or cancellation's code; a success's flag: 0, TD_ERR_TIMEOUT, TD_ERR_CANCELED). */
typedef struct tm_outcome {
    int status;
    int64_t value;
    int value_known;
    int code;
} tm_outcome;

/* A party told when a task completes (its continuation, in registration order). */
enum { TM_SUB_USER, TM_SUB_PARENT, TM_SUB_SHARED, TM_SUB_FORGET };
typedef struct tm_sub { int type; int target; } tm_sub;

typedef struct tm_handle {
    tm_kind kind;
    tm_outcome out;             /* status TD_PENDING until it completes */
    int consumed;               /* a consumer took it: its token is over */
    int sourceless;             /* a source-free task value: always reads its success */
    int multi_reader;           /* frame markers and shared tasks: get never consumes */
    int owner;                  /* TM_OWNER_* */
    int shared_by;              /* the TM_SHARED handle that owns this original, or -1 */
    int user_awaited;           /* a user continuation is registered (single consumer) */
    int cont_expected;          /* user continuations that must have run */
    tm_sub subs[TM_MAX_SUBS];
    int nsubs;
    int frame_driven;           /* may complete inside a frame (see tm_input_ok) */
    /* frame and timed waits */
    int loop_gen;               /* the loop it waits on */
    uint32_t target_frame;
    int64_t deadline;
    int cs;                     /* its cancel token, or -1 */
    int item_held;              /* its loop item still holds the object */
    /* combinators */
    int inputs[TM_MAX_INPUTS];
    int ninputs;
    int inputs_done;
    int decided;
    int with_error;             /* timeout */
    int delay_done;             /* timeout: its internal delay completed */
    tm_outcome all;             /* when_all: the outcome so far */
    /* producers */
    int answered;               /* callback / future / runner gate: the answer was given */
    int round_over;             /* a manual source's round ended by a reset */
    int no_answer;              /* adapter over a cancelled token: no answer reaches the task */
    /* the pool rule for a consumed task (task.h: a freed source must not be queried) */
    int consume_safe;
    uint32_t consume_epoch;
} tm_handle;

/* A cancellation registration: what runs when its source is cancelled. */
enum { TM_REG_WAIT, TM_REG_ADAPTER, TM_REG_ATTACH, TM_REG_LINK, TM_REG_USER, TM_REG_TIMEOUT };
typedef struct tm_reg { int type; int target; int active; } tm_reg;

typedef struct tm_cancel {
    int cancelled;
    int armed;                  /* cancel_after item pending on the current loop */
    int armed_gen;
    tm_reg regs[TM_MAX_REGS_PER_CS];
    int nregs;
} tm_cancel_state;

typedef struct tm_user_reg {
    int cs;
    int slot;                   /* index in the source's regs, -1 when it ran at once */
    int runs_expected;
} tm_user_reg;

/* A loop item at timing UPDATE, in insertion order (loop.c keeps that order). */
enum { TM_ITEM_WAIT, TM_ITEM_TIMEOUT, TM_ITEM_CANCEL_AFTER };
typedef struct tm_item { int type; int target; int64_t deadline; } tm_item;

/* A continuation queued on a frame marker (stateless wait): runs at the target frame. */
typedef struct tm_queued { int handle; int sub; } tm_queued;

typedef struct tm_model {
    tm_handle h[TM_MAX_HANDLES];
    int nh;
    tm_cancel_state cs[TM_MAX_CS];
    int ncs;
    tm_user_reg ur[TM_MAX_USER_REGS];
    int nur;
    tm_item items[TM_MAX_ITEMS];
    int nitems;
    tm_queued queue[TM_MAX_QUEUE];
    int nqueue;
    uint32_t frame;             /* the current loop's frame */
    int loop_gen;
    int64_t now;
    uint32_t source_cap, runner_cap;
    uint32_t source_epoch, runner_epoch;   /* bumped when a capacity drops below safe */
    uint32_t unobserved;        /* td_unobserved_error_count */
} tm_model;

void tm_init(tm_model *m, int64_t now);
const char *tm_kind_name(tm_kind k);

/* ---- making tasks (each returns the new handle's index, -1 when the table is full) ---- */
int tm_make_manual(tm_model *m, tm_kind kind);                 /* MANUAL, AUTO, RUNNER(_I64) */
int tm_make_value(tm_model *m, tm_kind kind, int64_t v, int code);  /* FROM_* */
int tm_make_frame(tm_model *m, tm_kind kind, uint32_t frames); /* NEXT_FRAME, YIELD, DELAY_FRAME */
int tm_make_wait(tm_model *m, tm_kind kind, uint32_t frames, int64_t ns, int cs, int immediate);
/* cs: race's losers, attach's token, timeout's options token (cancel_immediately: immediate) */
int tm_make_combinator(tm_model *m, tm_kind kind, const int *inputs, int n, int cs, int64_t ns,
                       int with_error, int immediate);
int tm_make_adapter(tm_model *m, tm_kind kind, int cs, int inline_answer, int inline_status,
                    int64_t value);
/* Can `h` be given to a combinator (as one of `n` inputs already chosen in `chosen`)? */
int tm_input_ok(const tm_model *m, int h, const int *chosen, int n);

/* ---- producers ------------------------------------------------------------------------- */
/* Does `h` have a producer the fuzzer may complete now? */
int tm_can_produce(const tm_model *m, int h);
/* The answer of completing h's producer with `o`: TD_OK, TD_DONE or TD_E_STALE. */
int tm_produce(tm_model *m, int h, const tm_outcome *o);

/* completion.h: td_completion_source_reset starts the manual source's next round: every
 * task of the previous one becomes stale. The new round's task is a new handle (returned). */
int tm_may_reset(const tm_model *m, int h);
int tm_reset(tm_model *m, int h);

/* ---- queries: tm_may_query says whether the query is defined; the rest predict it ------- */
int tm_may_query(const tm_model *m, int h);
/* Room for one more subscriber (the model's bound, not the runtime's). */
int tm_can_subscribe(const tm_model *m, int h);
int tm_get(tm_model *m, int h, tm_outcome *out);
int tm_status(const tm_model *m, int h, int *status);
int tm_on_completed(tm_model *m, int h);
int tm_share(tm_model *m, int h, int *shared);
int tm_may_forget(const tm_model *m, int h);
void tm_forget(tm_model *m, int h);

/* ---- cancellation ------------------------------------------------------------------------ */
int tm_new_cancel(tm_model *m);
int tm_linked(tm_model *m, int a, int b);
int tm_cancel(tm_model *m, int c);                /* 1: this call cancelled it */
int tm_cancel_register(tm_model *m, int c);       /* the user registration's index */
void tm_cancel_unregister(tm_model *m, int r);
int tm_may_cancel_after(const tm_model *m, int c);
void tm_cancel_after(tm_model *m, int c, int64_t ns);

/* ---- the loop and the pools ---------------------------------------------------------------- */
void tm_run_frame(tm_model *m);
void tm_advance(tm_model *m, int64_t ns);
void tm_retire_loop(tm_model *m);
void tm_set_source_capacity(tm_model *m, uint32_t cap);
void tm_set_runner_capacity(tm_model *m, uint32_t cap);

#endif
