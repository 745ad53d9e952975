/*
 * cancel.h - cancellation sources, tokens and registrations.
 *
 * A source is cancelled once; cancelling runs its registered callbacks on the cancelling
 * thread, in reverse registration order, each exactly once. A token is a plain value
 * naming its source (a NULL source: can never be cancelled). Unregistering a callback
 * that is running on another thread waits until it has returned, so after
 * td_cancel_unregister the callback's argument may be freed.
 * Sources are pooled (td_cancel_source_new rents, _free returns): a race that makes a
 * fresh source per round allocates nothing once warm. Free a source only after every
 * wait registered on it has completed (a cancelled wait completes on the cancel call).
 */
#ifndef TANDEM_CANCEL_H
#define TANDEM_CANCEL_H

#include <stdint.h>
#include "task.h"

typedef struct td_cancel_source td_cancel_source;
typedef struct td_cancel_token { td_cancel_source *source; } td_cancel_token;
typedef struct td_cancel_node td_cancel_node;
typedef struct td_cancel_registration { td_cancel_node *node; uint32_t generation; } td_cancel_registration;

static inline td_cancel_token td_cancel_none(void) { td_cancel_token t; t.source = 0; return t; }

/* NULL when out of memory or before td_runtime_init (the pool is not set up). */
td_cancel_source *td_cancel_source_new(void);
void td_cancel_source_free(td_cancel_source *cs);
td_cancel_token td_cancel_source_token(td_cancel_source *cs);
/* Cancel now, on this thread. Returns 1 when this call cancelled it, 0 if already. */
int td_cancel_source_cancel(td_cancel_source *cs);
/* Cancel once `ns` of the loop's clock have passed (checked each frame; 0 = next frame;
 * a duration past the clock's range never elapses). loop NULL = the main loop. Returns
 * TD_OK; TD_E_INVALID with no loop, a bad clock, or a source armed on another loop;
 * TD_E_RETIRED when the loop was retired (not armed). A loop retired while the source is
 * armed cancels it then: its deadline can no longer be observed. */
struct td_loop;
int td_cancel_source_cancel_after(td_cancel_source *cs, int64_t ns, int clock, struct td_loop *loop);
/* A source cancelled when any of `tokens` is (and by its own cancel). */
td_cancel_source *td_cancel_source_linked(const td_cancel_token *tokens, int count);

int td_cancel_is_requested(td_cancel_token t);
/* Register fn(arg) to run on cancellation. When already cancelled, runs it now and
 * returns an empty registration. */
td_cancel_registration td_cancel_register(td_cancel_token t, td_continuation_fn fn, void *arg);
void td_cancel_unregister(td_cancel_registration reg);

/* The error record of a cancellation by `cs`. */
static inline td_error td_cancel_error(td_cancel_source *cs)
{
    td_error e;
    e.code = TD_ERR_CANCELED;
    e.message = "canceled";
    e.cancel = cs;
    return e;
}

#endif /* TANDEM_CANCEL_H */
