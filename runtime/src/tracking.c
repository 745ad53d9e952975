/*
 * tracking.c - active-task tracking (see include/tandem/tracking.h).
 *
 * Invariants:
 *   - nothing here runs unless td_runtime_settings.tracking is on: async.c tests the plain
 *     setting before calling td_tracking_begin_ / td_tracking_end_, and td_tracking_site
 *     tests it before touching its thread keys.
 *   - the table is an array under tracking_lock (starts and releases come from any thread).
 *     Removal searches from the newest entry (most tasks are short-lived) and keeps the
 *     order, so foreach visits oldest first. Growth is the only allocation.
 *   - a start site travels from TD_START to the runner start through two pthread keys of
 *     the starting thread (tcc has no thread-local storage); begin consumes it.
 */
#include "../port/td_libc.h"
#include "td_internal.h"

static pthread_mutex_t tracking_lock;
static pthread_key_t tracking_file_key, tracking_line_key;
static td_tracking_entry *tracking_entries;
static uint32_t tracking_count_, tracking_cap;
static uint64_t tracking_serial;

void td_tracking_site(const char *file, int line)
{
    if (!td_runtime_settings.tracking)
        return;
    pthread_setspecific(tracking_file_key, file);
    pthread_setspecific(tracking_line_key, (void *)(intptr_t)line);
}

void td_tracking_begin_(td_runner *r, uint32_t token)
{
    const char *file = (const char *)pthread_getspecific(tracking_file_key);
    int line = (int)(intptr_t)pthread_getspecific(tracking_line_key);
    pthread_setspecific(tracking_file_key, NULL);
    pthread_setspecific(tracking_line_key, NULL);
    pthread_mutex_lock(&tracking_lock);
    if (tracking_count_ == tracking_cap) {
        uint32_t cap = tracking_cap ? tracking_cap * 2 : 64;
        td_tracking_entry *e = (td_tracking_entry *)realloc(tracking_entries, cap * sizeof(*e));
        if (e == NULL) {
            pthread_mutex_unlock(&tracking_lock);
            return;                        /* untracked rather than failing the start */
        }
        tracking_entries = e;
        tracking_cap = cap;
    }
    td_tracking_entry *e = &tracking_entries[tracking_count_++];
    e->runner = r;
    e->token = token;
    e->method = r->method->name;
    e->file = file;
    e->line = file ? line : 0;
    e->serial = ++tracking_serial;
    pthread_mutex_unlock(&tracking_lock);
}

void td_tracking_end_(td_runner *r)
{
    pthread_mutex_lock(&tracking_lock);
    for (uint32_t i = tracking_count_; i-- > 0;) {
        if (tracking_entries[i].runner == r) {
            memmove(&tracking_entries[i], &tracking_entries[i + 1],
                    (tracking_count_ - i - 1) * sizeof(td_tracking_entry));
            tracking_count_--;
            break;
        }
    }
    pthread_mutex_unlock(&tracking_lock);
}

uint32_t td_tracking_count(void)
{
    pthread_mutex_lock(&tracking_lock);
    uint32_t n = tracking_count_;
    pthread_mutex_unlock(&tracking_lock);
    return n;
}

uint32_t td_tracking_foreach(td_tracking_fn fn, void *arg)
{
    pthread_mutex_lock(&tracking_lock);
    uint32_t n = tracking_count_;
    td_tracking_entry *copy = n ? (td_tracking_entry *)malloc(n * sizeof(*copy)) : NULL;
    if (copy)
        memcpy(copy, tracking_entries, n * sizeof(*copy));
    pthread_mutex_unlock(&tracking_lock);
    if (copy == NULL)
        return 0;
    for (uint32_t i = 0; i < n; i++)
        fn(&copy[i], arg);
    free(copy);
    return n;
}

void td_tracking_enable(int on)
{
    pthread_mutex_lock(&tracking_lock);
    td_runtime_settings.tracking = on ? 1 : 0;
    td_runner_observed_refresh_();
    if (!on)
        tracking_count_ = 0;
    pthread_mutex_unlock(&tracking_lock);
}

int td_tracking_runtime_init_(void)
{
    if (pthread_mutex_init(&tracking_lock, NULL) != 0)
        return TD_E_NOMEM;
    if (pthread_key_create(&tracking_file_key, NULL) != 0 || pthread_key_create(&tracking_line_key, NULL) != 0)
        return TD_E_NOMEM;
    tracking_count_ = 0;
    tracking_serial = 0;
    return TD_OK;
}

void td_tracking_runtime_shutdown_(void)
{
    free(tracking_entries);
    tracking_entries = NULL;
    tracking_count_ = tracking_cap = 0;
    pthread_key_delete(tracking_file_key);
    pthread_key_delete(tracking_line_key);
    pthread_mutex_destroy(&tracking_lock);
}
