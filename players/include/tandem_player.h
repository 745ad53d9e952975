/*
 * tandem_player.h - the module/host ABI between a compiled subject module and the
 * player shell (`tandem-player`). Both backends produce the same thing from the same
 * generated translation unit (TU): clang a shared module, libtcc an in-memory one.
 *
 * THE MODULE SIDE (what a TU provides)
 *   One exported object, `const td_player_module tandem_player_module`, the entry table.
 *   The generated registration (appended to the TU by the build) defines it; nobody
 *   writes it by hand. Under clang the TU is built with -fvisibility=hidden, so this is
 *   the only symbol the module exports.
 *
 * THE TU (one per subject), in this order, all with paths relative to the source root:
 *     #define TD_PLAYER_SUBJECT "<subject>"     and TD_PLAYER_SUBJECT_<subject> 1
 *     #define TD_PLAYER_SUITE_<suite> 1          for every suite of the build, unless
 *                                                TD_PLAYER_SUITES_CHOSEN (below)
 *     #include "runtime/src/<*.c, sorted>"       under #if when the subject does not use
 *                                                the runtime (below)
 *     #include "players/subjects/<subject>/<*.c, sorted>"
 *     #include "players/suites/<suite, sorted>/<*.c, sorted>"   each under
 *                                                #ifdef TD_PLAYER_SUITE_<suite>
 *     registration: #include "tandem_player.h", the suite table, `tandem_player_module`
 *     (the table and run_suite hold the suites compiled in).
 *   Everything is ONE translation unit: static names must not clash across files, so
 *   prefix statics with the suite/subject name (e.g. smoke_case_gate, cb_row_yield).
 *   Include paths: the source root, runtime/include, runtime/port, runtime/src,
 *   players/include.
 *
 * TD_PLAYER_SUITES_CHOSEN: a loader that defines it (with TD_PLAYER_SUITE_<suite> 1 for
 *   each suite it wants) compiles only those suites of the TU, and the runtime only when
 *   the subject or one of them uses it (the generator reads their #include lines: a file
 *   of runtime/include or runtime/src reached from the subject's or the suite's sources;
 *   runtime/port is header-only and always there). The TU's text stays the same for every
 *   choice. The JIT player compiles the one suite it runs (`--suite S`: libtcc compiles
 *   the runtime and the suites at start-up, like Mono compiling only what is called);
 *   `--subjects` and the AOT build compile every suite.
 *
 * A SUITE `players/suites/<name>/` (name is a C identifier) defines exactly one function
 *     int td_suite_<name>(const td_player_host *host, void *ctx);
 *   returning 0 when it ran (whatever its cases' outcomes) or a negative
 *   TD_PLAYER_E_* code when it could not run. It reports through the host callbacks,
 *   always passing `ctx` back unchanged. It must not print to stdout itself (the host
 *   prints markers); use host->log.
 *
 * SMOKE-STYLE SUITES report cases:
 *     host->expect_cases(ctx, 42);                      once, before the first case
 *     host->case_begin(ctx, "synchronous typed/untyped");
 *     ... host->case_fail(ctx, __FILE__, __LINE__, "17", "16");   first failure is kept
 *     host->case_end(ctx, elapsed_ns);                  passed = no case_fail since begin
 *   or use td_player_run_case() and the TD_PCHECK_* macros below, which do exactly that.
 *
 * BENCHMARK SUITES report one row sample per call:
 *     host->row(ctx, &(td_player_row){ .name = "yield", .ops = N, .ns = t, ... });
 *   or host->row_unsupported(ctx, "yield", "no stackless yield here") -> NA in reports.
 *   The shell calls run_suite once per sample (host->sample_index 0..samples-1, after
 *   host->warmup_index warm-up calls whose rows are discarded), alternating the order
 *   of the subjects loaded in the process between samples. A suite runs each of its rows
 *   once per call and times with host->now_ns (CLOCK_MONOTONIC); a row sample is at least
 *   TD_PLAYER_MIN_SAMPLE_NS of timed segments (td_bench.h tb_sample, host->sample_shape;
 *   tools/gate/SAMPLES.md). Defaults: suite "smoke"
 *   1 sample, no warm-up; other suites 10 samples, 1 warm-up (--samples/--warmup).
 *   Cases are recorded from the first measured call only (later calls run them unrecorded).
 *
 * THE SHELL'S REPORT (cJSON; default smoke-<backend>.json for suite smoke, else
 *   <suite>-<backend>.json): schemaVersion 1, kind "smoke" (cases reported) | "bench",
 *   suite, backend, buildId, compiler, flags, subjects[] {name, path, moduleCompiler,
 *   loadNs (AOT: dlopen; JIT: libtcc compile + relocate), compiledSuites (the module's
 *   suite table: JIT the suite it runs, AOT every suite), suiteResult},
 *   expectedCaseCount, passed, failure (null | {case, file, line, expected, actual}),
 *   cases[] {name, [subject when >1], passed, failure, ns}, samples, warmup,
 *   rows[] {subject, name, supported, [reason], samples[] {ns, ops, allocs, frees, bytes,
 *   check}}, processAllocations. passed is false when a case failed,
 *   a suite returned non-zero, or (smoke, unfiltered) the case count != expect_cases.
 *   Markers on stdout: TANDEM-CASE-START/PASS/FAIL, last line TANDEM-PLAYER-RESULT:
 *   pass | fail | error | crash signal=N [case=..] | timeout [case=..].
 *
 * ALLOCATION COUNTING: the shell interposes malloc, calloc, realloc, free,
 *   posix_memalign, aligned_alloc and memalign for the whole process (both backends),
 *   with atomic counters. host->alloc_read(&c) gives the totals; subtract two reads to
 *   count what a region allocated (single-threaded regions: other threads count too).
 *
 * Everything here compiles under clang -O2 and tcc 0.9.27: no atomics, no varargs
 * callbacks, plain C99.
 */
#ifndef TANDEM_PLAYER_H
#define TANDEM_PLAYER_H

/* Only what this header uses: every module includes it, and libtcc parses what it includes
 * at each JIT player start (no <stdio.h> here: the checks format their numbers themselves). */
#include <stddef.h>
#include <stdint.h>
#include "../../runtime/port/td_port.h"

/* THE ABI VERSIONS. Three headers form the interface between a module and the player,
 * and each carries its own version:
 *   TD_PLAYER_ABI_VERSION   (this file)    the entry table, the host table, row structs;
 *   TD_SUBJECT_ABI_VERSION  (td_subject.h) the workload table a subject implements;
 *   TD_BENCH_ABI_VERSION    (td_bench.h)   what a benchmark row sample means (units,
 *                                          segments, meters) in the player's reports.
 * The generated registration records the versions the TU was compiled against in its
 * entry table (abi_version, subject_abi, bench_abi; 0 = that header was not included),
 * and the player refuses, at load (AOT dlopen, JIT compile), a module whose versions are
 * not its own, naming both ("module M was built against player ABI 1, this player speaks
 * ABI 2"). Rebuild such a module from sources staged with this player's players/include.
 *
 * Bump a version when a struct layout or the meaning of a field or callback changes.
 * Appending a callback at the end of td_player_host does not bump it (modules check
 * host->size, see TD_PLAYER_HOST_*_SIZE). History: 1 the first table; 2 td_player_module
 * gained subject_abi and bench_abi. */
#define TD_PLAYER_ABI_VERSION 2u

/* The exported entry table's symbol name. */
#define TD_PLAYER_MODULE_SYMBOL "tandem_player_module"

/* Return codes of run_suite / td_suite_<name>. */
enum {
    TD_PLAYER_OK = 0,
    TD_PLAYER_E_NO_SUITE = -1,     /* the suite is not compiled into this module */
    TD_PLAYER_E_ABI = -2,          /* host ABI version or size not supported */
    TD_PLAYER_E_SETUP = -3,        /* the suite could not set itself up */
    TD_PLAYER_E_FAILED = -4        /* the suite aborted (details were logged) */
};

/* Log levels for host->log. */
enum { TD_PLAYER_LOG_INFO = 0, TD_PLAYER_LOG_WARN = 1, TD_PLAYER_LOG_ERROR = 2 };

/* Process-wide allocation counters (since the shell started). */
typedef struct td_player_alloc_counts {
    uint64_t allocs;      /* successful malloc/calloc/posix_memalign/aligned_alloc/memalign,
                             plus realloc(NULL, n) */
    uint64_t reallocs;    /* realloc of a non-NULL pointer */
    uint64_t frees;       /* free of a non-NULL pointer, plus realloc(p, 0) */
    uint64_t bytes;       /* bytes requested by allocs and reallocs */
} td_player_alloc_counts;

/* One sample of one benchmark row. Unused fields 0. */
typedef struct td_player_row {
    const char *name;      /* row name, stable across subjects (e.g. "yield") */
    uint64_t ops;          /* operations performed in this sample */
    uint64_t ns;           /* elapsed nanoseconds of the timed region */
    uint64_t allocs;       /* alloc counter delta over the timed region */
    uint64_t frees;        /* free counter delta over the timed region */
    uint64_t bytes;        /* byte counter delta over the timed region */
    int64_t check;         /* a validation value (a checksum of results), reported raw */
} td_player_row;

/* Extra facts of a benchmark row sample (host->row_ext). */
typedef struct td_player_row_ext {
    int64_t control_ns;        /* idle / empty-loop control measured beside the sample; 0 none */
    int32_t subtract_control;  /* 1: ns/op = (ns - control_ns) / ops (throughput) */
    int32_t gated;             /* 1: a gated row; 0: report-only */
    int64_t retained_bytes;    /* live heap bytes after the row minus before it */
} td_player_row_ext;

typedef struct td_player_host {
    uint32_t abi_version;  /* TD_PLAYER_ABI_VERSION of the shell */
    uint32_t size;         /* sizeof(td_player_host) in the shell */
    const char *backend;   /* "aot" or "jit" */
    const char *subject;   /* the subject being run (same as the module's) */
    int32_t samples;       /* samples requested for a benchmark run */
    int32_t sample_index;  /* this call's sample, 0-based; -1 during warm-up */
    int32_t warmup_index;  /* warm-up call, 0-based; -1 during measured samples */
    int32_t ops_hint;      /* requested ops per row sample; 0 = the suite's default */
    const char *filter;    /* only run cases/rows whose name contains this; NULL = all */

    /* ---- smoke cases ---- */
    void (*expect_cases)(void *ctx, int32_t count);
    void (*case_begin)(void *ctx, const char *name);
    /* Records a failed expectation of the current case; only the first one is kept. */
    void (*case_fail)(void *ctx, const char *file, int32_t line, const char *expected,
                      const char *actual);
    void (*case_end)(void *ctx, uint64_t ns);

    /* ---- benchmark rows ---- */
    void (*row)(void *ctx, const td_player_row *row);
    void (*row_unsupported)(void *ctx, const char *name, const char *reason);

    /* ---- services ---- */
    void (*alloc_read)(td_player_alloc_counts *out);
    uint64_t (*now_ns)(void);
    void (*log)(void *ctx, int32_t level, const char *message);

    /* ---- appended for benchmark suites (check host->size >= TD_PLAYER_HOST_BENCH_SIZE) ----
     * row_ext: like row, plus the facts of td_player_row_ext (control, gated, retained).
     * fail: a validation failure of a timed operation; the report becomes completed:false.
     * setting: a key/value the report records under "settings" (pool capacities, ...).
     * alloc_live_bytes: live heap bytes now (malloc_usable_size of every live block). */
    void (*row_ext)(void *ctx, const td_player_row *row, const struct td_player_row_ext *ext);
    void (*fail)(void *ctx, const char *row, const char *message);
    void (*setting)(void *ctx, const char *key, const char *value);
    int64_t (*alloc_live_bytes)(void);
    const char *retention;  /* "matched" (default) or "default" */
    int32_t flow;           /* --flow: 0 off (default), 1 on; rows without their own flow arm */
    int32_t quick;          /* 1: few samples, small N (tests) */

    /* ---- appended for the instruction meter (host->size >= TD_PLAYER_HOST_METER_SIZE) ----
     * NULL unless the player runs with --meter instructions (under valgrind callgrind).
     * meter_on/meter_off: a timed segment of a meter in `slot` begins / ends; the shell
     *   switches callgrind's collection on only for the slot of the current pass.
     * meter_row: a row sample measured by a meter of `slot` over `segments` segments is
     *   about to be emitted; the shell dumps the counts collected since the last dump. */
    void (*meter_on)(int32_t slot);
    void (*meter_off)(int32_t slot);
    void (*meter_row)(void *ctx, const char *name, int32_t slot, uint64_t segments);

    /* ---- appended for long samples (host->size >= TD_PLAYER_HOST_SHAPE_SIZE) ----
     * sample_shape: the row sample about to be emitted (row_ext, same name) was timed over
     *   `segments` segments (start/stop pairs, two clock reads each) in `units` repetitions
     *   of the row's cohort, round or call (td_bench.h tb_sample). */
    void (*sample_shape)(void *ctx, const char *name, uint64_t segments, uint64_t units);

    /* ---- appended for the rows asked for (host->size >= TD_PLAYER_HOST_WANT_SIZE) ----
     * row_wanted: NULL, or 0 when the shell does not want the row `name` run for the subject
     *   of this call (the shell records why: `tandem-player --skip-na-of-first` skips, for
     *   the other subjects, the rows the first one leaves unsupported); asked after the
     *   suite knows the subject supports the row and after host->filter.
     * support_only: 1 in a call that only asks which rows the subject supports: the suite
     *   reports its unsupported rows (row_unsupported) and runs nothing else, the subject
     *   not even initialised (td_bench.h). */
    int32_t (*row_wanted)(void *ctx, const char *name);
    int32_t support_only;
} td_player_host;

#define TD_PLAYER_HOST_BENCH_SIZE (offsetof(td_player_host, quick) + sizeof(int32_t))
#define TD_PLAYER_HOST_METER_SIZE (offsetof(td_player_host, meter_row) + sizeof(void *))
#define TD_PLAYER_HOST_SHAPE_SIZE (offsetof(td_player_host, sample_shape) + sizeof(void *))
#define TD_PLAYER_HOST_WANT_SIZE (offsetof(td_player_host, support_only) + sizeof(int32_t))

/* Long samples: the smallest timed total of a benchmark row's sample (td_bench.h
 * tb_sample accumulates units up to it; the shell reports samples under it). */
#define TD_PLAYER_MIN_SAMPLE_NS 1000000ull

/* The entry table. abi_version stays the first field in every version, so a player can
 * always read it before trusting anything else. */
typedef struct td_player_module {
    uint32_t abi_version;              /* TD_PLAYER_ABI_VERSION the module was built with */
    uint32_t size;                     /* sizeof(td_player_module) */
    const char *subject;               /* e.g. "tandem", "callback" */
    const char *compiler;              /* "clang", "tcc" or "gcc" (from the TU's compiler) */
    const char *const *suites;         /* NULL-terminated names of the suites compiled in */
    /* Runs one suite: TD_PLAYER_OK or a TD_PLAYER_E_* code (E_ABI: the host's
     * abi_version differs or its size is smaller than this module's td_player_host). */
    int (*run_suite)(const char *suite, const td_player_host *host, void *ctx);
    uint32_t subject_abi;              /* TD_SUBJECT_ABI_VERSION seen by the TU; 0: not included */
    uint32_t bench_abi;                /* TD_BENCH_ABI_VERSION seen by the TU; 0: not included */
} td_player_module;

/* Compiler differences live in the runtime's port layer (runtime/port/td_port.h). */
#define TD_PLAYER_EXPORT TD_EXPORT
#define TD_PLAYER_COMPILER TD_COMPILER_NAME

/* ---- helpers for suites (static inline: each TU gets its own copy) ---------------- */

typedef void (*td_player_case_fn)(const td_player_host *host, void *ctx, void *arg);

/* 1 when the strings are equal. */
static inline int td_player_name_is(const char *a, const char *b)
{
    while (*a && *a == *b) { a++; b++; }
    return *a == *b;
}

/* 1 when `name` contains `filter` (host->filter: the cases and rows whose name contains
 * it; NULL or "" selects every name). */
static inline int td_player_name_selected(const char *name, const char *filter)
{
    if (!filter || !filter[0]) return 1;
    for (const char *h = name; *h; h++) {
        const char *a = h, *b = filter;
        while (*a && *b && *a == *b) { a++; b++; }
        if (!*b) return 1;
    }
    return 0;
}

/* case_begin, time fn, case_end. Honors host->filter (a filtered-out case is skipped
 * entirely; the report then shows fewer cases than expected). */
static inline void td_player_run_case(const td_player_host *host, void *ctx, const char *name,
                                      td_player_case_fn fn, void *arg)
{
    uint64_t t0, t1;
    if (!td_player_name_selected(name, host->filter)) return;
    host->case_begin(ctx, name);
    t0 = host->now_ns();
    fn(host, ctx, arg);
    t1 = host->now_ns();
    host->case_end(ctx, t1 - t0);
}

/* v in decimal into buf (at least 21 bytes), as printf's %lld writes it; returns buf. */
static inline char *td_player_i64_text(char *buf, int64_t v)
{
    char tmp[20];
    int n = 0;
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    do { tmp[n++] = (char)('0' + u % 10); u /= 10; } while (u);
    char *p = buf;
    if (v < 0) *p++ = '-';
    while (n) *p++ = tmp[--n];
    *p = 0;
    return buf;
}

static inline int td_player_check_i64(const td_player_host *host, void *ctx, const char *file,
                                      int line, int64_t expected, int64_t actual)
{
    char e[24], a[24];
    if (expected == actual) return 1;
    host->case_fail(ctx, file, line, td_player_i64_text(e, expected), td_player_i64_text(a, actual));
    return 0;
}

static inline int td_player_check_true(const td_player_host *host, void *ctx, const char *file,
                                       int line, int cond, const char *text)
{
    if (cond) return 1;
    host->case_fail(ctx, file, line, text, "false");
    return 0;
}

/* Evaluate to 1 when the expectation holds, else record it (file:line) and give 0:
 *     if (!TD_PCHECK_I64(host, ctx, 17, r)) return;  */
#define TD_PCHECK_I64(host, ctx, expected, actual) \
    td_player_check_i64((host), (ctx), __FILE__, __LINE__, (int64_t)(expected), (int64_t)(actual))
#define TD_PCHECK(host, ctx, cond) \
    td_player_check_true((host), (ctx), __FILE__, __LINE__, !!(cond), #cond)
#define TD_PCHECK_PTR_EQ(host, ctx, expected, actual) \
    td_player_check_i64((host), (ctx), __FILE__, __LINE__, (int64_t)(intptr_t)(expected), \
                        (int64_t)(intptr_t)(actual))

/* The entry table every module exports (defined by the generated registration). */
extern TD_PLAYER_EXPORT const td_player_module tandem_player_module;

#endif /* TANDEM_PLAYER_H */
