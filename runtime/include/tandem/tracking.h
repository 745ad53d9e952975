/*
 * tracking.h - active-task tracking for leak hunting (off by default).
 *
 * With td_settings.tracking on, every async method started records an entry (its runner,
 * token, method name and start site) that is removed when its task is consumed. An entry
 * still present long after it should have finished is a leaked or forgotten task.
 * Off, the cost is one branch on the plain setting at runner start and release.
 * The start site is the file and line of a TD_START / TD_START_I64 call (a plain
 * td_runner_start records the method name only). Entries live in a locked table that grows
 * while tracking is on; turning tracking off clears it.
 */
#ifndef TANDEM_TRACKING_H
#define TANDEM_TRACKING_H

#include <stdint.h>
#include "async.h"

typedef struct td_tracking_entry {
    const td_runner *runner;
    uint32_t token;             /* the task's token */
    const char *method;
    const char *file;           /* NULL when started without TD_START */
    int line;
    uint64_t serial;            /* start order */
} td_tracking_entry;

typedef void (*td_tracking_fn)(const td_tracking_entry *e, void *arg);

/* Tasks started and not yet consumed. */
uint32_t td_tracking_count(void);
/* Call fn for every active entry (oldest first, on a snapshot: fn may start or consume
 * tasks). Returns the number visited. */
uint32_t td_tracking_foreach(td_tracking_fn fn, void *arg);
/* Turn tracking on or off at run time (off clears the table). */
void td_tracking_enable(int on);

/* The start site of the next runner started on this thread (used by TD_START). */
void td_tracking_site(const char *file, int line);
#define TD_START(r) (td_tracking_site(__FILE__, __LINE__), td_runner_start(r))
#define TD_START_I64(r) (td_tracking_site(__FILE__, __LINE__), td_runner_start_i64(r))

#endif /* TANDEM_TRACKING_H */
