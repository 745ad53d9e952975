/*
 * asan_host.c - a minimal player host for running a generated subject TU under
 * AddressSanitizer + UndefinedBehaviorSanitizer. The TU (runtime + subject + suites +
 * registration) is compiled into this program with the sanitizers; the host runs one
 * smoke-style suite and fails on any failed case or a wrong case count.
 * Usage: asan_host SUITE
 */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "tandem_player.h"

extern const td_player_module tandem_player_module;

typedef struct asan_state {
    int expected, cases, failed, current_failed;
    char current[256];
} asan_state;

static void asan_expect(void *ctx, int32_t n) { ((asan_state *)ctx)->expected = n; }

static void asan_begin(void *ctx, const char *name)
{
    asan_state *s = (asan_state *)ctx;
    snprintf(s->current, sizeof s->current, "%s", name);
    s->current_failed = 0;
}

static void asan_fail(void *ctx, const char *file, int32_t line, const char *e, const char *a)
{
    asan_state *s = (asan_state *)ctx;
    if (!s->current_failed)
        printf("FAIL %s at %s:%d expected %s actual %s\n", s->current, file, line, e, a);
    s->current_failed = 1;
}

static void asan_end(void *ctx, uint64_t ns)
{
    asan_state *s = (asan_state *)ctx;
    (void)ns;
    s->cases++;
    s->failed += s->current_failed;
    if (!s->current_failed)
        printf("ok   %s\n", s->current);
}

static void asan_row(void *ctx, const td_player_row *r) { (void)ctx; (void)r; }
static void asan_row_na(void *ctx, const char *n, const char *why) { (void)ctx; (void)n; (void)why; }
static void asan_alloc(td_player_alloc_counts *c) { memset(c, 0, sizeof(*c)); }

static uint64_t asan_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void asan_log(void *ctx, int32_t level, const char *msg) { (void)ctx; (void)level; printf("log: %s\n", msg); }

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: asan_host SUITE\n");
        return 2;
    }
    asan_state st;
    memset(&st, 0, sizeof(st));
    td_player_host host;
    memset(&host, 0, sizeof(host));
    host.abi_version = TD_PLAYER_ABI_VERSION;
    host.size = sizeof(host);
    host.backend = "aot-asan";
    host.subject = tandem_player_module.subject;
    host.samples = 1;
    host.warmup_index = -1;
    host.expect_cases = asan_expect;
    host.case_begin = asan_begin;
    host.case_fail = asan_fail;
    host.case_end = asan_end;
    host.row = asan_row;
    host.row_unsupported = asan_row_na;
    host.alloc_read = asan_alloc;
    host.now_ns = asan_now;
    host.log = asan_log;
    int rc = tandem_player_module.run_suite(argv[1], &host, &st);
    printf("%d passed, %d failed\n", st.cases - st.failed, st.failed);
    if (rc != 0 || st.failed || st.cases != st.expected) {
        fprintf(stderr, "asan_host: suite %s: rc %d, %d of %d expected cases ran, %d failed\n",
                argv[1], rc, st.cases, st.expected, st.failed);
        return 1;
    }
    return 0;
}
