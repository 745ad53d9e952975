/*
 * runtime.h - explicit initialisation, settings and shutdown.
 *
 * The runtime is initialised once, explicitly, before any pooled operation; nothing on a
 * hot path tests an "initialised" flag. Task values (td_completed, td_from_result) need
 * no initialisation at all. Settings are plain static data read where they apply.
 */
#ifndef TANDEM_RUNTIME_H
#define TANDEM_RUNTIME_H

#include <stdint.h>
#include "task.h"

#define TD_DEFAULT_SOURCE_POOL_CAPACITY 256u
#define TD_DEFAULT_RUNNER_POOL_CAPACITY 128u

typedef struct td_settings {
    uint32_t source_pool_capacity;     /* SourcePoolCapacity, default 256 */
    uint32_t runner_pool_capacity;     /* RunnerPoolCapacity, default 128 */
    int flow;                          /* ambient context flow, default off */
    int tracking;                      /* active-task tracking, default off */
    uint32_t worker_threads;           /* thread-pool size, 0 = no pool started */
} td_settings;

/* The settings in force (read-only outside td_runtime_init / the setters). */
extern td_settings td_runtime_settings;

/* Fill `s` with the defaults. */
void td_settings_defaults(td_settings *s);
/* Initialise pools and the main loop's thread identity. `s` may be NULL (defaults).
 * The calling thread becomes the main thread. Returns TD_OK or an error. */
int td_runtime_init(const td_settings *s);
/* Free every pool; the runtime may be initialised again afterwards. */
void td_runtime_shutdown(void);

/* 1 when called on the thread that called td_runtime_init. */
int td_is_main_thread(void);
uintptr_t td_main_thread_id(void);

/* Capacity setters apply to every pool of that kind (sources; runners of every method). */
int td_set_source_pool_capacity(uint32_t capacity);
int td_set_runner_pool_capacity(uint32_t capacity);

#endif /* TANDEM_RUNTIME_H */
