/*
 * fake_host.h - the player host the suite tests (test_*.c here) run one suite against: one
 * measured call of one sample (the checks of a measured call on), the rows picked by a
 * filter, the clock, live heap, row and failure callbacks the test's own.
 */
#ifndef TD_TEST_FAKE_HOST_H
#define TD_TEST_FAKE_HOST_H

#include <stdio.h>
#include <string.h>

#include "td_bench.h"

static void fake_host_alloc_read(td_player_alloc_counts *out) { memset(out, 0, sizeof *out); }
static void fake_host_log(void *ctx, int32_t level, const char *m) { (void)ctx, (void)level, fprintf(stderr, "log: %s\n", m); }

static td_player_host fake_host(const char *filter, uint64_t (*now_ns)(void), int64_t (*live_bytes)(void),
                                void (*row_ext)(void *, const td_player_row *, const td_player_row_ext *),
                                void (*fail)(void *, const char *, const char *))
{
    td_player_host h;
    memset(&h, 0, sizeof h);
    h.abi_version = TD_PLAYER_ABI_VERSION;
    h.size = sizeof h;
    h.backend = "aot";
    h.subject = "fake";
    h.samples = 1;
    h.sample_index = 0;     /* a measured call: samples of at least 1 ms, its checks on */
    h.warmup_index = -1;
    h.filter = filter;
    h.alloc_read = fake_host_alloc_read;
    h.now_ns = now_ns;
    h.log = fake_host_log;
    h.row_ext = row_ext;
    h.fail = fail;
    h.alloc_live_bytes = live_bytes;
    return h;
}

#endif
