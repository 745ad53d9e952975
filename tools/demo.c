/*
 * demo.c - `tandem demo`: the quick-start demo. Builds the demo suite with both
 * backends (clang AOT module, libtcc JIT player) and runs each player once, so the same
 * frame-by-frame narration of async methods on a real loop is printed twice.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tl_err.h"
#include "tl_opt.h"
#include "tl_proc.h"

int td_verb_build(int argc, char **argv);

static const tl_opt demo_opts[] = {
    { "out", 0, TL_OPT_PATH, "DIR", 0, 0, "where the players and reports go (default out/demo)" },
    { NULL, 0, 0, NULL, 0, 0, NULL }
};

static const tl_optspec demo_spec = {
    "tandem demo", "[--out DIR]",
    "Build the demo suite with both backends (clang AOT and libtcc JIT) into DIR\n"
    "and run it on each player: async methods on a real frame loop, narrated frame by frame.",
    demo_opts, "exit: 0 both players passed, 1 a build or a player failed, 2 usage", 0, 0
};

int td_verb_demo(int argc, char **argv)
{
    tl_optres o;
    int prc = tl_opt_parse(&demo_spec, argc, argv, &o);
    if (prc) { tl_opt_free(&o); return prc == TL_OPT_HELP ? 0 : 2; }
    const char *out = tl_opt_str(&o, "out", "out/demo");
    tl_opt_free(&o);
    static const char *const backends[2] = { "aot", "jit" };
    int failed = 0;
    for (int b = 0; b < 2; b++) {
        char dir[4096], report[4200];
        snprintf(dir, sizeof dir, "%s/%s", out, backends[b]);
        printf("== %s player (%s)\n", backends[b], b == 0 ? "clang -O2 module" : "libtcc, compiled at start-up");
        fflush(stdout);
        char *bargv[] = { "build", "--backend", (char *)backends[b], "--out", dir,
                          "--subject", "tandem", "--suite", "demo", NULL };
        if (td_verb_build(9, bargv) != 0) {
            tl_error(dir, NULL, "%s build failed", backends[b]);
            failed = 1;
            continue;
        }
        snprintf(report, sizeof report, "%s/demo-%s.json", dir, backends[b]);
        static const char *const once[] = { "--samples", "1", "--warmup", "0", NULL };
        if (tl_run_player(dir, backends[b], "demo", report, once) != 0)
            failed = 1;
    }
    printf("%s\n", failed ? "demo: FAILED" : "demo: both players ran the same async methods and passed");
    return failed ? 1 : 0;
}
