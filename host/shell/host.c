/*
 * host.c - what the player gives the modules it hosts: the host callbacks (td_player_host,
 * tandem_player.h) through which a suite reports its cases, row samples, settings,
 * validation failures and meter marks into the run (run.h), and the crash and timeout
 * markers that name the case under way.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "meter.h"
#include "run.h"

/* ---- crash / timeout markers (async-signal-safe) ---------------------------------- */

static char crash_case[256];

static void write_str(const char *s) { ssize_t r = write(1, s, strlen(s)); (void)r; }

static void on_crash(int sig)
{
    char num[16];
    int n = 0, v = sig;
    char rev[16];
    do { rev[n++] = (char)('0' + v % 10); v /= 10; } while (v && n < 15);
    for (int i = 0; i < n; i++) num[i] = rev[n - 1 - i];
    num[n] = 0;
    write_str("\nTANDEM-PLAYER-RESULT: crash signal=");
    write_str(num);
    if (crash_case[0]) { write_str(" case="); write_str(crash_case); }
    write_str("\n");
    signal(sig, SIG_DFL);
    raise(sig);
}

static void on_alarm(int sig)
{
    (void)sig;
    write_str("\nTANDEM-PLAYER-RESULT: timeout");
    if (crash_case[0]) { write_str(" case="); write_str(crash_case); }
    write_str("\n");
    _exit(124);
}

void pl_host_install_handlers(void)
{
    int sigs[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT };
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) signal(sigs[i], on_crash);
    signal(SIGALRM, on_alarm);
}

/* ---- host callbacks ---------------------------------------------------------------- */

pl_state pl_run;

static char *dup0(const char *s) { return strdup(s ? s : ""); }

/* v with room for one more of its n elements of `size` (capacity *cap, doubled from `first`);
 * out of memory aborts: a run that cannot record cannot report. */
static void *grow(void *v, size_t n, size_t *cap, size_t first, size_t size)
{
    if (n < *cap) return v;
    *cap = *cap ? *cap * 2 : first;
    v = realloc(v, *cap * size);
    if (!v) abort();
    return v;
}

static uint64_t host_now_ns(void) { return td_backend_now_ns(); }

static const char *subject_name(void)
{
    const td_player_module *e = pl_run.subjects[pl_run.cur_subject].mod.entry;
    return e ? e->subject : "?";
}

static const char *norm_file(const char *f)
{
    if (!f) return "";
    size_t l = strlen(pl_run.root_prefix);
    if (l && !strncmp(f, pl_run.root_prefix, l) && f[l] == '/') f += l + 1;
    while (f[0] == '.' && f[1] == '/') f += 2;
    return f;
}

static void host_expect_cases(void *ctx, int32_t count) { (void)ctx; pl_run.expected_cases = count; }

static void host_case_begin(void *ctx, const char *name)
{
    (void)ctx;
    pl_run.cur = NULL;
    snprintf(crash_case, sizeof crash_case, "%s", name ? name : "");
    if (!pl_run.record_cases) return;   /* cases are recorded from the first measured call only */
    pl_run.cases = grow(pl_run.cases, pl_run.ncases, &pl_run.capcases, 64, sizeof *pl_run.cases);
    pl_case *c = &pl_run.cases[pl_run.ncases++];
    memset(c, 0, sizeof *c);
    c->name = dup0(name);
    c->subject = dup0(subject_name());
    c->passed = 1;
    pl_run.cur = c;
    printf("TANDEM-CASE-START: %s %s\n", c->subject, c->name);
    fflush(stdout);
}

static void host_case_fail(void *ctx, const char *file, int32_t line, const char *expected,
                           const char *actual)
{
    (void)ctx;
    pl_case *c = pl_run.cur;
    if (!c) {
        if (pl_run.record_cases)
            fprintf(stderr, "tandem-player: case_fail outside a case (%s:%d)\n", norm_file(file), line);
        return;
    }
    c->passed = 0;
    if (c->has_failure) return;
    c->has_failure = 1;
    c->file = dup0(norm_file(file));
    c->line = line;
    c->expected = dup0(expected);
    c->actual = dup0(actual);
}

static void host_case_end(void *ctx, uint64_t ns)
{
    (void)ctx;
    pl_case *c = pl_run.cur;
    crash_case[0] = 0;
    if (!c) return;
    c->ns = ns;
    if (c->passed)
        printf("TANDEM-CASE-PASS: %s %s ns=%llu\n", c->subject, c->name, (unsigned long long)ns);
    else
        printf("TANDEM-CASE-FAIL: %s %s at %s:%d expected %s actual %s\n", c->subject, c->name,
               c->file, c->line, c->expected, c->actual);
    fflush(stdout);
    pl_run.cur = NULL;
    crash_case[0] = 0;
}

static pl_row *find_row(const char *name)
{
    const char *subj = subject_name();
    for (size_t i = 0; i < pl_run.nrows; i++)
        if (!strcmp(pl_run.rows[i].name, name) && !strcmp(pl_run.rows[i].subject, subj)) return &pl_run.rows[i];
    pl_run.rows = grow(pl_run.rows, pl_run.nrows, &pl_run.caprows, 32, sizeof *pl_run.rows);
    pl_row *r = &pl_run.rows[pl_run.nrows++];
    memset(r, 0, sizeof *r);
    r->subject = dup0(subj);
    r->name = dup0(name);
    r->samples = cJSON_CreateArray();
    return r;
}

static void row_record(const td_player_row *row, int ext, int64_t control_ns, int32_t subtract,
                       int64_t retained)
{
    pl_row *r = find_row(row->name);
    r->raw = grow(r->raw, r->nraw, &r->capraw, 16, sizeof *r->raw);
    pl_sample *x = &r->raw[r->nraw++];
    memset(x, 0, sizeof *x);
    x->ns = row->ns;
    x->ops = row->ops;
    x->allocs = row->allocs;
    x->frees = row->frees;
    x->bytes = row->bytes;
    x->check = row->check;
    x->has_ext = ext;
    if (r->skipped) { /* the suite ran a row it was told to skip: measured, so not skipped */
        r->skipped = r->unsupported = 0;
        free(r->reason);
        r->reason = NULL;
    }
    x->control_ns = control_ns;
    x->subtract = subtract;
    x->retained = retained;
    if (!strcmp(pl_run.shape_row, row->name)) {
        x->segments = pl_run.shape_segments;
        x->units = pl_run.shape_units;
    }
    pl_run.shape_row[0] = 0;
}

/* A row sample's report object: what every row sample states. */
static cJSON *sample_json(const td_player_row *row)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "ns", (double)row->ns);
    cJSON_AddNumberToObject(o, "ops", (double)row->ops);
    cJSON_AddNumberToObject(o, "allocs", (double)row->allocs);
    cJSON_AddNumberToObject(o, "frees", (double)row->frees);
    cJSON_AddNumberToObject(o, "bytes", (double)row->bytes);
    cJSON_AddNumberToObject(o, "check", (double)row->check);
    return o;
}

static void host_row(void *ctx, const td_player_row *row)
{
    (void)ctx;
    if (!pl_run.measuring || !row || !row->name) return;
    row_record(row, 0, 0, 0, 0);
    cJSON_AddItemToArray(find_row(row->name)->samples, sample_json(row));
}

static void host_row_ext(void *ctx, const td_player_row *row, const td_player_row_ext *ext)
{
    (void)ctx;
    if (!pl_run.measuring || !row || !row->name || !ext) return;
    int64_t control_ns = ext->control_ns, retained = ext->retained_bytes;
    row_record(row, 1, control_ns, ext->subtract_control, retained);
    pl_row *r = find_row(row->name);
    r->gated = ext->gated;
    cJSON *o = sample_json(row);
    cJSON_AddNumberToObject(o, "controlNs", (double)control_ns);
    cJSON_AddNumberToObject(o, "retainedBytes", (double)retained);
    if (r->raw[r->nraw - 1].segments) {
        cJSON_AddNumberToObject(o, "segments", (double)r->raw[r->nraw - 1].segments);
        cJSON_AddNumberToObject(o, "units", (double)r->raw[r->nraw - 1].units);
    }
    cJSON_AddItemToArray(r->samples, o);
}

static void host_sample_shape(void *ctx, const char *name, uint64_t segments, uint64_t units)
{
    (void)ctx;
    if (!name || strlen(name) >= sizeof pl_run.shape_row) return;
    snprintf(pl_run.shape_row, sizeof pl_run.shape_row, "%s", name);
    pl_run.shape_segments = segments;
    pl_run.shape_units = units;
}

/* A failed validation counts in warm-up too: a wrong operation is wrong whenever it runs. */
static void host_fail(void *ctx, const char *row, const char *message)
{
    (void)ctx;
    pl_run.nfailures++;
    fprintf(stderr, "tandem-player: VALIDATION FAILED: %s: %s: %s\n", subject_name(), row ? row : "",
            message ? message : "");
    if (pl_run.fail_message) return;
    pl_run.fail_row = dup0(row);
    pl_run.fail_subject = dup0(subject_name());
    pl_run.fail_message = dup0(message);
}

static void host_setting(void *ctx, const char *key, const char *value)
{
    (void)ctx;
    if (!key) return;
    if (!pl_run.settings) pl_run.settings = cJSON_CreateObject();
    cJSON *sub = cJSON_GetObjectItemCaseSensitive(pl_run.settings, subject_name());
    if (!sub) sub = cJSON_AddObjectToObject(pl_run.settings, subject_name());
    cJSON_DeleteItemFromObjectCaseSensitive(sub, key);
    cJSON_AddStringToObject(sub, key, value ? value : "");
}

static void host_meter_row(void *ctx, const char *name, int32_t slot, uint64_t segments)
{
    (void)ctx;
    if (!pl_run.metering || !name) return;
    size_t idx = (size_t)(find_row(name) - pl_run.rows);
    pl_meter_row(idx, pl_run.sample, slot, segments);
}

static void host_row_unsupported(void *ctx, const char *name, const char *reason)
{
    (void)ctx;
    if (!name) return;
    pl_row *r = find_row(name);
    if (!r->unsupported) {
        r->unsupported = 1;
        r->reason = dup0(reason);
    }
}

/* --skip-na-of-first: the other subjects skip the first one's NA rows, recorded NA "skipped" */
static int32_t host_row_wanted(void *ctx, const char *name)
{
    (void)ctx;
    if (!name || pl_run.cur_subject == 0 || !pl_skip_has(name)) return 1;
    pl_row *r = find_row(name);
    if (!r->unsupported) {
        r->unsupported = r->skipped = 1;
        r->reason = dup0(pl_skip_reason());
    }
    return 0;
}

static void host_log(void *ctx, int32_t level, const char *msg)
{
    (void)ctx;
    static const char *const lv[] = { "info", "warn", "error" };
    fprintf(stderr, "[%s %s] %s\n", subject_name(), level >= 0 && level <= 2 ? lv[level] : "log",
            msg ? msg : "");
}

/* ---- the host given to the suites ---------------------------------------------------- */

void pl_host_init(td_player_host *host, int icount)
{
    memset(host, 0, sizeof *host);
    host->abi_version = TD_PLAYER_ABI_VERSION;
    host->size = sizeof *host;
    host->backend = pl_run.backend_name;
    host->samples = pl_run.samples;
    host->ops_hint = pl_run.ops;
    host->filter = pl_run.filter;
    host->expect_cases = host_expect_cases;
    host->case_begin = host_case_begin;
    host->case_fail = host_case_fail;
    host->case_end = host_case_end;
    host->row = host_row;
    host->row_unsupported = host_row_unsupported;
    host->alloc_read = td_player_alloc_read;
    host->now_ns = host_now_ns;
    host->log = host_log;
    host->row_ext = host_row_ext;
    host->fail = host_fail;
    host->setting = host_setting;
    host->alloc_live_bytes = td_player_alloc_live_bytes;
    host->retention = pl_run.retention ? pl_run.retention : "matched";
    host->flow = pl_run.flow;
    host->quick = pl_run.quick;
    host->sample_shape = host_sample_shape;
    if (icount) {
        host->meter_on = pl_meter_on;
        host->meter_off = pl_meter_off;
        host->meter_row = host_meter_row;
    }
}

void pl_host_skip_na_rows(td_player_host *host) { host->row_wanted = host_row_wanted; }

void pl_host_close_case(void)
{
    if (!pl_run.cur) return;
    pl_run.cur->passed = 0;
    host_case_end(NULL, 0);
}
