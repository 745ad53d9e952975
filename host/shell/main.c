/*
 * main.c - `tandem-player`, the native host both backends run in.
 *
 *   tandem-player --backend aot --module A.so [--module B.so ...] --suite NAME [options]
 *   tandem-player --backend jit --tu A.c [--tu B.c ...] [--root DIR] --suite NAME [options]
 *
 * Loads every subject (AOT: dlopen RTLD_NOW|RTLD_LOCAL; JIT: one TCCState each), runs
 * the suite (warm-up calls, then one call per sample, alternating the subject order
 * between samples), counts allocations (alloc.c) and writes one JSON report (cJSON).
 *
 * Output markers (stdout, flushed line by line, so a crash leaves the trail):
 *   TANDEM-CASE-START: <subject> <case>
 *   TANDEM-CASE-PASS: <subject> <case> ns=<ns>
 *   TANDEM-CASE-FAIL: <subject> <case> at <file>:<line> expected <e> actual <a>
 *   TANDEM-PLAYER-RESULT: pass|fail|error|crash signal=<n>|timeout   (always the last line)
 * Exit: 0 pass, 1 a case failed / a suite could not run, 2 usage, 3 load or compile
 * error, 124 timeout (--timeout), crash = death by the signal (after the marker).
 *
 * The shell's files: args.c (the command line), host.c (the callbacks the suites report
 * through), report.c (the JSON report), alloc.c, clock.c, meter.c, stats.c, skip.c; run.h
 * holds the run they share. Here: loading the subjects and calling the suites.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "meter.h"
#include "run.h"

/* A suite name that can be a macro's: TD_PLAYER_SUITE_<name>. */
static int is_c_ident(const char *s)
{
    if (!s || !*s || (*s >= '0' && *s <= '9')) return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_'))
            return 0;
    return 1;
}

static int result(const char *what, int code)
{
    printf("TANDEM-PLAYER-RESULT: %s\n", what);
    fflush(stdout);
    return code;
}

/* The backend's options: the allocator to bind, the source root, and for the JIT the suite
 * to compile (the TU's TD_PLAYER_SUITES_CHOSEN; the runtime too only when the subject or
 * that suite uses it). --subjects lists them all. jit_defines: room for three. */
static void backend_options(td_backend_options *opt, const pl_args *a, const char **jit_defines,
                            char *suite_define, size_t len)
{
    memset(opt, 0, sizeof *opt);
    opt->root = pl_run.root;
    opt->symbols = td_player_alloc_symbols;
    if (!strcmp(pl_run.backend_name, "jit")) opt->layout_seed = (uint64_t)pl_run.layout_seed;
    jit_defines[0] = "TD_PLAYER_SUITES_CHOSEN=1";
    jit_defines[1] = suite_define;
    jit_defines[2] = NULL;
    if (!a->list_only && !strcmp(pl_run.backend_name, "jit")) {
        if (is_c_ident(pl_run.suite) && strlen(pl_run.suite) < len - 20)
            snprintf(suite_define, len, "TD_PLAYER_SUITE_%s=1", pl_run.suite);
        else
            jit_defines[1] = NULL;   /* no such suite can be compiled in: none is */
        opt->defines = jit_defines;
    }
}

/* Loads every subject into pl_run.subjects (in the command line's order, whatever the load
 * order). 0, or -1 with the error said. */
static int load_subjects(const pl_args *a, const td_backend_options *opt)
{
    if (pl_run.root && realpath(pl_run.root, pl_run.root_prefix) == NULL) pl_run.root_prefix[0] = 0;
    /* Load order decides which module's code and data land where (dlopen maps top-down;
     * tcc allocates each unit's code in turn); a fixed order is a fixed placement, the same
     * in every process: alternated by --load-reverse so that it is not a systematic bias. */
    for (int t = 0; t < a->npaths; t++) {
        int i = pl_run.load_reverse ? a->npaths - 1 - t : t;
        char err[16384];
        pl_subject *s = &pl_run.subjects[i];
        s->path = a->paths[i];
        if (pl_run.backend->load(a->paths[i], opt, &s->mod, err, sizeof err)) {
            fprintf(stderr, "tandem-player: cannot load %s:\n%s\n", a->paths[i], err);
            if (pl_run.load_reverse) pl_run.nsubjects = 0; /* the loaded ones are not pl_run.subjects[0..n) */
            return -1;
        }
        s->loaded = 1;
        pl_run.nsubjects++;
        if (!pl_run.root && !strcmp(pl_run.backend_name, "jit") && i == 0) {
            char tmp[PATH_MAX];
            if (realpath(a->paths[i], tmp)) {
                *strrchr(tmp, '/') = 0;
                snprintf(pl_run.root_prefix, sizeof pl_run.root_prefix, "%s", tmp);
            }
        }
        fprintf(stderr, "tandem-player: loaded %s subject '%s' (%s) in %.3f ms\n", pl_run.backend_name,
                s->mod.entry->subject, s->mod.entry->compiler, s->mod.compile_ns / 1e6);
    }
    return 0;
}

/* --meter-functions: the loaded code's functions where callgrind sees no symbols (JIT).
 * 0, or -1 with the error said. */
static int list_code_functions(const td_backend_options *opt, td_backend_function **fns, size_t *n)
{
    if (!pl_run.backend->functions || pl_run.nsubjects != 1) return 0;
    char err[4096];
    if (pl_run.backend->functions(&pl_run.subjects[0].mod, pl_run.subjects[0].path, opt, fns, n, err, sizeof err)) {
        fprintf(stderr, "tandem-player: --meter-functions: cannot list the functions of %s:\n%s\n",
                pl_run.subjects[0].path, err);
        return -1;
    }
    pl_meter_code_functions(*fns, *n, "jit");
    fprintf(stderr, "tandem-player: --meter-functions: %zu functions in the %s code\n", *n, pl_run.backend_name);
    return 0;
}

static void list_subjects(void)
{
    for (int i = 0; i < pl_run.nsubjects; i++) {
        const td_player_module *e = pl_run.subjects[i].mod.entry;
        printf("%s %s", e->subject, e->compiler);
        for (const char *const *q = e->suites; *q; q++) printf(" %s", *q);
        printf("\n");
    }
}

/* One suite call per subject, alternating the subject order between calls; with --load-reverse
 * the last subject runs first too (the warm-up's first allocations are its own). */
static void call_subjects(td_player_host *host, int k)
{
    for (int j = 0; j < pl_run.nsubjects; j++) {
        int idx = ((k + pl_run.load_reverse) % 2 == 0) ? j : pl_run.nsubjects - 1 - j;
        pl_subject *s = &pl_run.subjects[idx];
        if (s->suite_rc) continue;
        pl_run.cur_subject = idx;
        host->subject = s->mod.entry->subject;
        int rc;
        if (!pl_run.own_threads)
            rc = s->mod.entry->run_suite(pl_run.suite, host, NULL);
        else if (pl_subject_thread_call(idx, host, &rc))
            rc = TD_PLAYER_E_FAILED;
        pl_host_close_case();
        if (rc) {
            s->suite_rc = rc;
            fprintf(stderr, "tandem-player: subject '%s' suite '%s' returned %d%s\n", host->subject,
                    pl_run.suite, rc, rc == TD_PLAYER_E_NO_SUITE ? " (suite not compiled in)" : "");
        }
    }
}

/* The warm-up calls, then the measured ones; under the instruction meter one pass per meter
 * slot (pass 0 records the rows). */
static void run_samples(td_player_host *host, int icount)
{
    int total = pl_run.warmup + pl_run.samples;
    for (int k = 0; k < total; k++) {
        int warm = k < pl_run.warmup;
        pl_run.measuring = !warm;
        pl_run.record_cases = k == pl_run.warmup;
        host->warmup_index = warm ? k : -1;
        host->sample_index = warm ? -1 : k - pl_run.warmup;
        pl_run.sample = host->sample_index;
        for (int pass = 0; pass <= (icount && !warm ? pl_meter_max_slot() : 0); pass++) {
            pl_run.measuring = !warm && pass == 0;
            pl_run.metering = icount && !warm;
            if (icount) pl_meter_set_pass(warm ? -1 : pass);
            call_subjects(host, k);
        }
    }
    if (icount) pl_meter_set_pass(-1);
}

int main(int argc, char **argv)
{
    pl_args a;
    int rc = pl_args_parse(argc, argv, &a);
    if (rc != PL_ARGS_RUN) return rc;
    pl_meter_by_function(a.by_function);
    if (a.icount) {
        char merr[512];
        if (pl_meter_start(pl_run.meter_out, merr, sizeof merr)) {
            fprintf(stderr, "tandem-player: --meter instructions: %s\n", merr);
            return 2;
        }
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    pl_host_install_handlers();
    if (pl_run.timeout > 0) alarm((unsigned)pl_run.timeout);

    td_backend_options opt;
    const char *jit_defines[3];
    char suite_define[128];
    backend_options(&opt, &a, jit_defines, suite_define, sizeof suite_define);
    /* kept to the end: every later heap object lands heap_offset bytes further */
    void *heap_offset = pl_run.heap_offset > 0 ? malloc((size_t)pl_run.heap_offset) : NULL;
    if (load_subjects(&a, &opt)) return result("error", 3);
    td_backend_function *code_fns = NULL;
    size_t ncode_fns = 0;
    if (a.by_function && list_code_functions(&opt, &code_fns, &ncode_fns)) return result("error", 3);
    if (a.list_only) {
        list_subjects();
        return 0;
    }

    td_player_host host;
    pl_host_init(&host, a.icount);
    if (!a.is_smoke) pl_clock_calibrate(host.now_ns);
    /* a case suite has no rows to skip; one subject has no other to skip them */
    if (pl_run.skip_na_first && !a.is_smoke && !a.icount && pl_run.nsubjects > 1 &&
        pl_skip_probe(pl_run.subjects[0].mod.entry, pl_run.suite, &host) == 0)
        pl_host_skip_na_rows(&host);
    if (pl_run.own_threads && pl_subject_threads_start(pl_run.nsubjects)) return result("error", 3);
    run_samples(&host, a.icount);
    alarm(0);
    if (a.icount) {
        char merr[1024];
        if (pl_meter_collect(merr, sizeof merr)) {
            fprintf(stderr, "tandem-player: instruction meter: %s\n", merr);
            return result("error", 1);
        }
    }
    pl_subject_threads_stop(); /* before the modules they ran go */
    pl_meter_code_functions(NULL, 0, NULL);
    td_backend_functions_free(code_fns, ncode_fns);
    int passed = 0;
    if (pl_report_write(a.is_smoke || pl_run.ncases > 0, &passed)) return result("error", 1);
    for (int i = 0; i < pl_run.nsubjects; i++) pl_run.backend->unload(&pl_run.subjects[i].mod);
    pl_skip_free();
    free(heap_offset);
    return passed ? result("pass", 0) : result("fail", 1);
}
