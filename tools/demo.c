/*
 * demo.c - `tandem demo`: the quick-start demo. Stages the project (Tandem's own by
 * default), builds its demo suite on its gate subject with both backends (clang AOT module,
 * libtcc JIT player) and runs each player once, so the same frame-by-frame narration of
 * async methods on a real loop is printed twice.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "stage/stage_project.h"
#include "tl_err.h"
#include "tl_home.h"
#include "tl_opt.h"
#include "tl_proc.h"
#include "tl_project.h"

#define DEMO_SUITE TL_PROJECT_DEMO_SUITE

int td_verb_build(int argc, char **argv);

static const tl_opt demo_opts[] = {
    { "project", 0, TL_OPT_PATH, "DIR", 0, 0, "the project (its tandem.json: suites.demo, gate.subject; default:\n"
      "the nearest tandem.json from the current folder upward, else Tandem's own)" },
    { "out", 0, TL_OPT_PATH, "DIR", 0, 0, "where the staging, the players and the reports go (default out/demo)" },
    { NULL, 0, 0, NULL, 0, 0, NULL }
};

static const tl_optspec demo_spec = {
    "tandem demo", "[--project DIR] [--out DIR]",
    "Stage the project into DIR/staging, build its demo suite (tandem.json suites.demo) on its\n"
    "gate subject (gate.subject; Tandem's: the runtime, subject tandem) with both backends\n"
    "(clang AOT and libtcc JIT) into DIR/aot and DIR/jit, and run it on each player: Tandem's\n"
    "demo shows async methods on a real frame loop, narrated frame by frame.",
    demo_opts, "exit: 0 both players passed, 1 a build or a player failed, or the project names no demo\n"
    "suite (suites.demo), 2 usage", 0, 0
};

int td_verb_demo(int argc, char **argv)
{
    tl_optres o;
    int prc = tl_opt_parse(&demo_spec, argc, argv, &o);
    if (prc) { tl_opt_free(&o); return prc == TL_OPT_HELP ? 0 : 2; }
    const char *out = tl_opt_str(&o, "out", "out/demo"), *project = tl_opt_str(&o, "project", NULL);
    tl_opt_free(&o);
    tl_project p;
    char subject[64];
    if (tl_project_open(project, tl_home(), &p)) { tl_project_free(&p); return 1; }
    if (!tl_project_suite_find(&p, DEMO_SUITE)) {
        tl_error(p.file, "suites." DEMO_SUITE, "the project names no demo suite: `tandem demo` builds and runs the "
                 "suite named \"" DEMO_SUITE "\" on the gate subject (gate.subject)");
        tl_project_free(&p);
        return 1;
    }
    snprintf(subject, sizeof subject, "%s", p.gate_subject);
    char staging[4096];
    snprintf(staging, sizeof staging, "%s/staging", out);
    fflush(stdout);
    int staged = stage_project_run(p.root, staging);
    tl_project_free(&p);
    if (staged != 0) return 1;
    static const char *const backends[2] = { "aot", "jit" };
    int failed = 0;
    for (int b = 0; b < 2; b++) {
        char dir[4096], report[4200];
        snprintf(dir, sizeof dir, "%s/%s", out, backends[b]);
        printf("== %s player (%s), subject %s\n", backends[b], b == 0 ? "clang -O2 module" : "libtcc, compiled at start-up",
               subject);
        fflush(stdout);
        char *bargv[] = { "build", "--backend", (char *)backends[b], "--out", dir, "--staging", staging,
                          "--subject", subject, "--suite", DEMO_SUITE, NULL };
        if (td_verb_build(11, bargv) != 0) {
            tl_error(dir, NULL, "%s build failed", backends[b]);
            failed = 1;
            continue;
        }
        snprintf(report, sizeof report, "%s/demo-%s.json", dir, backends[b]);
        static const char *const once[] = { "--samples", "1", "--warmup", "0", NULL };
        if (tl_run_player(dir, backends[b], subject, DEMO_SUITE, report, once) != 0)
            failed = 1;
    }
    if (failed) printf("demo: FAILED\n");
    else printf("demo: both players ran the same demo suite on subject %s and passed\n", subject);
    return failed ? 1 : 0;
}
