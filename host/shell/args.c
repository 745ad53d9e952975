/*
 * args.c - the player's command line (tl_opt, common/: the tools' convention): the option
 * table `tandem-player --help` is generated from, the checks of the values, and the
 * settings they imply, into the run (run.h).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdio.h>
#include <string.h>

#include "meter.h"
#include "run.h"
#include "tl_opt.h"

static const tl_opt player_opts[] = {
    { "backend", 0, TL_OPT_STR, "aot|jit", 0, 0, "the backend the subjects were built for" },
    { "module", 0, TL_OPT_PATH, "PATH", 0, 0, "AOT: a subject module (.so); repeat for more subjects" },
    { "tu", 0, TL_OPT_PATH, "PATH", 0, 0, "JIT: a generated translation unit; repeat for more subjects" },
    { "root", 0, TL_OPT_PATH, "DIR", 0, 0, "JIT: source root of the TU's includes (default: the TU's folder)" },
    { "suite", 0, TL_OPT_STR, "NAME", 0, 0, "suite to run (e.g. smoke)" },
    { "out", 0, TL_OPT_PATH, "FILE", 0, 0, "report (default smoke-<backend>.json or <suite>-<backend>.json)" },
    { "samples", 0, TL_OPT_INT, "N", 1, 1000000, "measured calls per subject (default 1 for smoke, 10 otherwise)" },
    { "warmup", 0, TL_OPT_INT, "N", 0, 1000000, "discarded warm-up calls (default 0 for smoke, 1 otherwise)" },
    { "ops", 0, TL_OPT_INT, "N", 1, 1000000000, "ops per row sample hint (default: the suite's)" },
    { "filter", 0, TL_OPT_STR, "STR", 0, 0, "only cases/rows whose name contains STR" },
    { "build-id", 0, TL_OPT_STR, "ID", 0, 0, "build id for the report (default: build-id file next to the module)" },
    { "timeout", 0, TL_OPT_INT, "SEC", 1, 86400, "abort with TANDEM-PLAYER-RESULT: timeout after SEC seconds" },
    { "retention", 0, TL_OPT_STR, "R", 0, 0, "bench: matched (default) or default pool retention" },
    { "flow", 0, TL_OPT_STR, "on|off", 0, 0, "bench: context flow for rows without their own flow arm (default off)" },
    { "quick", 0, TL_OPT_FLAG, NULL, 0, 0, "bench: few samples, small N (tests)" },
    { "skip-na-of-first", 0, TL_OPT_FLAG, NULL, 0, 0, "bench: the other subjects skip the rows the first one leaves\n"
      "unsupported (reported NA, \"skipped\": true); `tandem attempt` passes it\n"
      "(its first subject is the gate subject)" },
    { "load-reverse", 0, TL_OPT_FLAG, NULL, 0, 0, "load the subjects last to first (where each one's code lands;\n"
      "the report's subject order is unchanged): `tandem attempt` alternates it between processes" },
    { "shared-heap", 0, TL_OPT_FLAG, NULL, 0, 0, "bench: every subject's timed calls on the main thread, in one heap\n"
      "(by default each subject's run on a thread of its own, so in a malloc arena of its own:\n"
      "otherwise where one subject's objects land depends on the others' allocations; issue 42)" },
    { "heap-offset", 0, TL_OPT_INT, "BYTES", 0, 1048576, "bench: allocate BYTES before loading the subjects, never freed:\n"
      "every later heap object moves (a placement study: scripts/order_bias.py --heap-offsets)" },
    { "layout-seed", 0, TL_OPT_INT, "N", 0, 9007199254740991.0, "JIT: compile each unit with the pads of layout seed N\n"
      "(tandem build --layout-seed); AOT: the seed the modules were built with, reported only" },
    { "meter", 0, TL_OPT_STR, "M", 0, 0, "bench: time (default) or instructions: run under valgrind --tool=callgrind\n"
      "--collect-atstart=no --dump-instr=yes --dump-line=no --compress-pos=no\n"
      "--compress-strings=no --callgrind-out-file=F, one subject, at most 64 samples" },
    { "meter-out", 0, TL_OPT_PATH, "F", 0, 0, "bench: the callgrind output file F given to valgrind" },
    { "meter-functions", 0, TL_OPT_FLAG, NULL, 0, 0, "bench, --meter instructions: each row's instructions by function\n"
      "too (\"functions\" in the row's \"instructions\")" },
    { "subjects", 0, TL_OPT_FLAG, NULL, 0, 0, "load, list subjects and their suites, exit" },
    { NULL, 0, 0, NULL, 0, 0, NULL }
};

static const tl_optspec player_spec = {
    "tandem-player", "--backend aot|jit --suite NAME [options]",
    "The native host both backends run in: loads the subjects (AOT modules with dlopen,\n"
    "JIT translation units with libtcc), runs one suite and writes its JSON report.",
    player_opts, "Exit: 0 pass, 1 a case or row failed, 2 usage.", 0, 0
};

/* The options into pl_run and a; PL_ARGS_RUN, or the exit code (--help, a bad option). */
static int read_options(int argc, char **argv, pl_args *a, const char **retention, const char **flow,
                        const char **meter)
{
    tl_optres o;
    int prc = tl_opt_parse(&player_spec, argc, argv, &o);
    if (prc) { tl_opt_free(&o); return prc == TL_OPT_HELP ? 0 : 2; }
    pl_run.backend_name = tl_opt_str(&o, "backend", pl_run.backend_name);
    int nmod, ntu;
    const char *const *mods = tl_opt_all(&o, "module", &nmod), *const *tus = tl_opt_all(&o, "tu", &ntu);
    if (nmod + ntu > PL_MAX_SUBJECTS) {
        fprintf(stderr, "tandem-player: too many subjects (at most %d)\n", PL_MAX_SUBJECTS);
        tl_opt_free(&o);
        return 2;
    }
    a->nmodules = nmod;
    for (int i = 0; i < nmod; i++) a->paths[a->npaths++] = mods[i];
    for (int i = 0; i < ntu; i++) a->paths[a->npaths++] = tus[i];
    pl_run.root = tl_opt_str(&o, "root", pl_run.root);
    pl_run.suite = tl_opt_str(&o, "suite", pl_run.suite);
    pl_run.out = tl_opt_str(&o, "out", pl_run.out);
    pl_run.samples = (int)tl_opt_int(&o, "samples", pl_run.samples);
    pl_run.warmup = (int)tl_opt_int(&o, "warmup", pl_run.warmup);
    pl_run.ops = (int)tl_opt_int(&o, "ops", pl_run.ops);
    pl_run.filter = tl_opt_str(&o, "filter", pl_run.filter);
    pl_run.build_id = tl_opt_str(&o, "build-id", pl_run.build_id);
    pl_run.timeout = (int)tl_opt_int(&o, "timeout", pl_run.timeout);
    a->list_only = tl_opt_given(&o, "subjects") > 0;
    pl_run.quick = tl_opt_given(&o, "quick") > 0;
    pl_run.load_reverse = tl_opt_given(&o, "load-reverse") > 0;
    pl_run.own_threads = tl_opt_given(&o, "shared-heap") == 0;
    pl_run.layout_seed = tl_opt_int(&o, "layout-seed", 0);
    pl_run.heap_offset = (int)tl_opt_int(&o, "heap-offset", 0);
    pl_run.skip_na_first = tl_opt_given(&o, "skip-na-of-first") > 0;
    pl_run.meter_out = tl_opt_str(&o, "meter-out", pl_run.meter_out);
    *retention = tl_opt_str(&o, "retention", NULL);
    *flow = tl_opt_str(&o, "flow", NULL);
    *meter = tl_opt_str(&o, "meter", NULL);
    a->by_function = tl_opt_given(&o, "meter-functions") > 0;
    tl_opt_free(&o);
    return PL_ARGS_RUN;
}

/* A value out of a fixed set: 0, or 2 with the option and the value said. */
static int one_of(const char *opt, const char *v, const char *a, const char *b)
{
    if (!strcmp(v, a) || !strcmp(v, b)) return 0;
    fprintf(stderr, "tandem-player: --%s: '%s' is not %s or %s\n", opt, v, a, b);
    return 2;
}

int pl_args_parse(int argc, char **argv, pl_args *a)
{
    const char *retention, *flow, *meter;
    memset(a, 0, sizeof *a);
    pl_run.samples = -1;
    pl_run.warmup = -1;
    int rc = read_options(argc, argv, a, &retention, &flow, &meter);
    if (rc != PL_ARGS_RUN) return rc;
    if (retention) {
        if (one_of("retention", retention, "matched", "default")) return 2;
        pl_run.retention = retention;
    }
    if (flow) {
        if (one_of("flow", flow, "on", "off")) return 2;
        pl_run.flow = !strcmp(flow, "on");
    }
    if (meter) {
        if (one_of("meter", meter, "time", "instructions")) return 2;
        pl_run.meter = meter;
    }
    /* a backend's subjects only: --module for aot, --tu for jit */
    pl_run.backend = td_backend_find(pl_run.backend_name);
    int ntu = a->npaths - a->nmodules;
    if (!pl_run.backend || !a->npaths || (!pl_run.suite && !a->list_only) ||
        (a->nmodules > 0 && strcmp(pl_run.backend_name, "aot")) || (ntu > 0 && strcmp(pl_run.backend_name, "jit"))) {
        fprintf(stderr, "tandem-player: need --backend aot with --module, or --backend jit with --tu, and --suite\n");
        return 2;
    }
    a->is_smoke = pl_run.suite && !strcmp(pl_run.suite, "smoke");
    if (pl_run.samples < 0) pl_run.samples = a->is_smoke ? 1 : 10;
    if (pl_run.warmup < 0) pl_run.warmup = a->is_smoke ? 0 : 1;
    if (pl_run.samples < 1) pl_run.samples = 1;
    a->icount = pl_run.meter && !strcmp(pl_run.meter, "instructions");
    if (a->is_smoke || a->icount) pl_run.own_threads = 0; /* subject_thread.c: placement moves time only */
    if (a->by_function && !a->icount) {
        fprintf(stderr, "tandem-player: --meter-functions needs --meter instructions\n");
        return 2;
    }
    if (a->icount && (a->is_smoke || a->npaths != 1 || pl_run.samples > PL_METER_MAX_SAMPLES)) {
        fprintf(stderr, "tandem-player: --meter instructions: a bench suite, exactly one subject and at most %d "
                        "samples\n", PL_METER_MAX_SAMPLES);
        return 2;
    }
    return PL_ARGS_RUN;
}
