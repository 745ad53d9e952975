/*
 * inspect.c - `tandem inspect`: check a codegen contract on the code the players run.
 *
 * AOT: the module's LLVM IR and optimisation remarks (given with --ir/--remarks, e.g.
 * the ones backends/aot writes next to the module, or produced here by running clang
 * with the AOT backend's flags on --tu). JIT: the same --tu compiled by libtcc into an
 * object, disassembled. See tools/inspect/inspect.h for the modules.
 *
 * Exit: 0 every rule holds, 3 a rule fails, 1 unusable inputs, 2 usage.
 */
#include "inspect.h"
#include "inspect_auto.h"
#include "tl_fs.h"
#include "tl_opt.h"
#include "tl_out.h"
#include "tl_spawn.h"

#include <cjson/cJSON.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>


#ifndef TD_INSPECT_CLANG
#define TD_INSPECT_CLANG "clang"
#endif
#ifndef TD_INSPECT_TCC_LIB
#define TD_INSPECT_TCC_LIB "/usr/lib/x86_64-linux-gnu/tcc"
#endif

static const tl_opt inspect_opts[] = {
    { "project", 0, TL_OPT_PATH, "DIR", 0, 0, "bare: the project inspected (its tandem.json: runtime.contract, the\n"
      "gate subject; default: the nearest tandem.json from the current folder\n"
      "upward, else Tandem's own)" },
    { "contract", 0, TL_OPT_PATH, "FILE", 0, 0, "the contract (JSON; bare: the project's runtime.contract, staged as\n"
      "runtime/contract.json); allowed\n"
      "settings naming a field (init_guards.allowed_settings) are resolved by\n"
      "compiling --tu with libtcc" },
    { "tu", 0, TL_OPT_PATH, "FILE.c", 0, 0, "the translation unit both backends compile" },
    { "ir", 0, TL_OPT_PATH, "FILE.ll", 0, 0, "the AOT module's IR (default: run clang -O2 -DNDEBUG -fPIC\n"
      "-fvisibility=hidden -S -emit-llvm with remarks on --tu, into --out)" },
    { "remarks", 0, TL_OPT_PATH, "FILE", 0, 0, "the AOT optimisation remarks YAML (required with --ir)" },
    { "out", 0, TL_OPT_PATH, "DIR", 0, 0, "where inspect.json and inspect.md go (default out/inspect)" },
    { "include", 'I', TL_OPT_PATH, "DIR", 0, 0, "include path for both compilers (repeat)" },
    { "define", 'D', TL_OPT_STR, "N[=V]", 0, 0, "define for both compilers (repeat; NDEBUG is always defined)" },
    { "no-jit", 0, TL_OPT_FLAG, NULL, 0, 0, "skip the JIT side (then --tu is optional when --ir is given)" },
    { "jit-strict", 0, TL_OPT_FLAG, NULL, 0, 0, "must_inline also fails on JIT (tcc never inlines, so normally info)" },
    { "clang", 0, TL_OPT_PATH, "PATH", 0, 0, "clang to produce IR (default $TANDEM_CLANG, else " TD_INSPECT_CLANG ")" },
    { "tcc-lib", 0, TL_OPT_PATH, "DIR", 0, 0, "tcc's library directory (default " TD_INSPECT_TCC_LIB ")" },
    { "quiet", 'q', TL_OPT_FLAG, NULL, 0, 0, "no per-rule table, only the summary" },
    { "json", 0, TL_OPT_FLAG, NULL, 0, 0, "stdout: one line, the summary object (exit code, verdict,\nreports); what it prints otherwise goes to stderr" },
    { NULL, 0, 0, NULL, 0, 0, NULL }
};

static const tl_optspec inspect_spec = {
    "tandem inspect", "[--project DIR] [--contract FILE.json] [--out DIR]   (bare: the project's runtime)\n"
    "tandem inspect --contract FILE.json --tu FILE.c [--ir FILE.ll --remarks FILE.yaml]\n"
    "[--out DIR] [-I DIR]... [-D NAME[=VALUE]]... [--no-jit] [--jit-strict]\n"
    "[--clang PATH] [--tcc-lib DIR] [--quiet]",
    "Checks a codegen contract (must_inline, no_init_check, no_call, clears_frame, no_frame_copy,\n"
    "no_locked) on the AOT code (LLVM IR + inliner remarks) and on the JIT code (the TU compiled\n"
    "by libtcc); a function's \"backends\": [\"aot\"] or [\"jit\"] checks it on that side only.\n"
    "no_init_check works on the code's shape: a branch on a global whose guarded path stores it\n"
    "(lazy init), a branch on a global only the initialisers write (init guard), a once call, a\n"
    "call through a global function pointer its target overwrites; guard names are a 4th signal.\n"
    "\n"
    "Bare (no --tu, no --ir): the project (--project DIR, else the nearest tandem.json from the\n"
    "current folder upward, else Tandem's own): stage it into WORK/staging, build the AOT player\n"
    "of its gate subject (tandem.json gate.subject; Tandem's: tandem) into WORK/aot (or reuse it\n"
    "when the reuse rule allows), then check the project's contract (runtime.contract, staged\n"
    "as runtime/contract.json) on that player's translation unit, IR and remarks (AOT) and on\n"
    "the same unit under libtcc (JIT), with the backends' include paths; report in\n"
    "WORK/report. WORK: <project>/.tandem/inspect (Tandem's own project in a build tree:\n"
    "<build>/inspect; in an install: ~/.cache/tandem/inspect).\n"
    "--contract, --out and -I override. A project that names no contract (and no --contract)\n"
    "is refused before anything is staged, saying so: exit 1.",
    inspect_opts, "exit: 0 all rules hold, 3 a rule fails, 1 unusable inputs (also: a bare run on a project\n"
    "that names no contract), 2 usage", 0, 0
};

static int mkdir_p(const char *path)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++) {
        if (*p == '/') {
            *p = 0;
            if (mkdir(buf, 0777) && errno != EEXIST)
                return -1;
            *p = '/';
        }
    }
    if (mkdir(buf, 0777) && errno != EEXIST)
        return -1;
    return 0;
}

static int file_ok(const char *p)
{
    struct stat st;
    return p && stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static int run_clang(const ti_options *o, const char *ll, const char *yaml, char *err, size_t errsz)
{
    ti_strlist a = { 0 };
    ti_sl_add(&a, o->clang);
    const char *fixed[] = { "-O2", "-DNDEBUG", "-fPIC", "-fvisibility=hidden", "-S", "-emit-llvm",
                            "-fsave-optimization-record=yaml" };
    for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++)
        ti_sl_add(&a, fixed[i]);
    ti_sl_addf(&a, "-foptimization-record-file=%s", yaml);
    for (int i = 0; i < o->includes.n; i++)
        ti_sl_addf(&a, "-I%s", o->includes.v[i]);
    for (int i = 0; i < o->defines.n; i++)
        if (strcmp(o->defines.v[i], "NDEBUG"))
            ti_sl_addf(&a, "-D%s", o->defines.v[i]);
    ti_sl_add(&a, o->tu);
    ti_sl_add(&a, "-o");
    ti_sl_add(&a, ll);
    char **argv = calloc((size_t)a.n + 1, sizeof(char *));
    for (int i = 0; i < a.n; i++)
        argv[i] = a.v[i];
    /* clang and its children die with inspect (tl_spawn.h); exit 127: it could not run */
    pid_t parent = getpid(), pid;
    fflush(NULL);
    if ((pid = fork()) == 0) {
        if (tl_spawn_child_init(parent)) _exit(127);
        tl_spawn_exec_guarded(argv, NULL);
    }
    int st = 0, rc = pid < 0 ? errno : 0;
    while (pid > 0 && waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    free(argv);
    ti_sl_free(&a);
    if (rc || (WIFEXITED(st) && WEXITSTATUS(st) == 127)) {
        snprintf(err, errsz, "cannot run %s: %s", o->clang, rc ? strerror(rc) : "not found or not executable");
        return -1;
    }
    if (!WIFEXITED(st) || WEXITSTATUS(st)) {
        snprintf(err, errsz, "%s: clang failed to compile it (exit %d)", o->tu, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
        return -1;
    }
    return 0;
}

/* --json: the verdict, the rule count, the report (tl_out.h). */
static void inspect_summary(int code, int nrules, const char *out)
{
    if (!tl_out_summary()) return;
    char *rp = ti_fmt("%s/inspect.json", out), *abs = tl_abspath(rp);
    cJSON_AddStringToObject(tl_out_summary(), "verdict", code ? "FAIL" : "PASS");
    cJSON_AddNumberToObject(tl_out_summary(), "rules", nrules);
    cJSON_AddStringToObject(tl_out_summary(), "report", abs ? abs : rp);
    free(rp);
    free(abs);
}

/* The state of one `tandem inspect`, shared by its phases in the order td_verb_inspect runs
 * them. */
typedef struct inspect_run {
    ti_options o;
    ti_auto au;                      /* a bare run's staged project (inspect_auto.h) */
    const char *project;
    int json, given_out, given_inc;
    ti_contract c;
    ti_remarks rm;
    char *ll, *yaml, *obj;           /* the AOT IR and remarks read, the JIT object written */
    char err[8192];
} inspect_run;

/* The options into g->o. 0 ok, else the verb's exit code (help: 0 through *exit_now). */
static int inspect_options(inspect_run *g, int argc, char **argv, int *exit_now)
{
    ti_options *o = &g->o;
    tl_optres r;
    *exit_now = 1;
    int prc = tl_opt_parse(&inspect_spec, argc, argv, &r);
    if (prc) {
        tl_opt_free(&r);
        return prc == TL_OPT_HELP ? 0 : 2;
    }
    g->project = tl_opt_str(&r, "project", NULL);
    o->contract = tl_opt_str(&r, "contract", NULL);
    o->tu = tl_opt_str(&r, "tu", NULL);
    o->ir = tl_opt_str(&r, "ir", NULL);
    o->remarks = tl_opt_str(&r, "remarks", NULL);
    o->out = tl_opt_str(&r, "out", o->out);
    o->clang = tl_opt_str(&r, "clang", o->clang);
    o->tcc_lib = tl_opt_str(&r, "tcc-lib", o->tcc_lib);
    int nv;
    const char *const *vals = tl_opt_all(&r, "include", &nv);
    for (int i = 0; i < nv; i++) ti_sl_add(&o->includes, vals[i]);
    vals = tl_opt_all(&r, "define", &nv);
    for (int i = 0; i < nv; i++) {
        if (!vals[i][0]) {
            fprintf(stderr, "tandem inspect: --define: empty name\n");
            tl_opt_free(&r);
            return 2;
        }
        ti_sl_add(&o->defines, vals[i]);
    }
    o->no_jit = tl_opt_given(&r, "no-jit") > 0;
    o->jit_strict = tl_opt_given(&r, "jit-strict") > 0;
    o->quiet = tl_opt_given(&r, "quiet") > 0;
    g->json = tl_opt_given(&r, "json") > 0;
    g->given_out = tl_opt_given(&r, "out") > 0, g->given_inc = tl_opt_given(&r, "include") > 0;
    tl_opt_free(&r);
    *exit_now = 0;
    return 0;
}

/* What is inspected: the given TU, IR and remarks, or bare (no --tu, no --ir) the project's
 * runtime as the AOT player compiles it. 0 ok, else the verb's exit code (reported). */
static int inspect_inputs(inspect_run *g)
{
    ti_options *o = &g->o;
    if (g->project && (o->tu || o->ir)) {
        fprintf(stderr, "tandem inspect: --project is for a bare run (no --tu, no --ir)\n");
        return 2;
    }
    if (!o->tu && !o->ir) {
        if (ti_auto_prepare(&g->au, g->project, o->contract != NULL))
            return 1;
        if (!o->contract) o->contract = g->au.contract;
        o->tu = g->au.tu;
        o->ir = g->au.ir;
        o->remarks = g->au.remarks;
        if (!g->given_out) o->out = g->au.out;
        for (int i = 0; i < g->au.ninc && !g->given_inc; i++) ti_sl_add(&o->includes, g->au.inc[i]);
    }
    if (!o->contract) {
        fprintf(stderr, "tandem inspect: --contract is required\n");
        return 2;
    }
    if (!o->tu && (!o->ir || !o->no_jit)) {
        fprintf(stderr, "tandem inspect: --tu is required (unless --ir, --remarks and --no-jit are given)\n");
        return 2;
    }
    if (!o->ir != !o->remarks) {
        fprintf(stderr, "tandem inspect: --ir and --remarks go together\n");
        return 2;
    }
    if (!ti_sl_has(&o->defines, "NDEBUG"))
        ti_sl_add(&o->defines, "NDEBUG");
    return 0;
}

/* The TU, the output folder, and the AOT IR and remarks: given, or produced by clang into
 * the output folder. 0 ok, 1 unusable (reported). */
static int inspect_aot_inputs(inspect_run *g)
{
    const ti_options *o = &g->o;
    if (o->tu && !file_ok(o->tu)) {
        fprintf(stderr, "tandem inspect: %s: no such file (--tu)\n", o->tu);
        return 1;
    }
    if (mkdir_p(o->out)) {
        fprintf(stderr, "tandem inspect: %s: cannot create the output folder: %s\n", o->out, strerror(errno));
        return 1;
    }
    if (o->ir) {
        if (!file_ok(o->ir)) {
            fprintf(stderr, "tandem inspect: %s: no such file (--ir)\n", o->ir);
            return 1;
        }
        if (!file_ok(o->remarks)) {
            fprintf(stderr, "tandem inspect: %s: no such file (--remarks)\n", o->remarks);
            return 1;
        }
        g->ll = ti_strdup(o->ir);
        g->yaml = ti_strdup(o->remarks);
        return 0;
    }
    g->ll = ti_fmt("%s/aot.ll", o->out);
    g->yaml = ti_fmt("%s/aot.remarks.yaml", o->out);
    if (run_clang(o, g->ll, g->yaml, g->err, sizeof g->err)) {
        fprintf(stderr, "tandem inspect: %s\n", g->err);
        return 1;
    }
    return 0;
}

/* Every rule checked on both sides (the JIT side skipped with --no-jit). 0 ok, 1 the
 * inputs are unusable (reported). */
static int inspect_check(inspect_run *g)
{
    ti_contract *c = &g->c;
    int bad = ti_settings_resolve(c, &g->o, g->err, sizeof g->err) ||
              ti_remarks_load(g->yaml, &g->rm, g->err, sizeof g->err) ||
              ti_aot_check(c, g->ll, &g->rm, g->err, sizeof g->err);
    if (!bad && g->o.no_jit) {
        for (int k = 0; k < c->nrules; k++) {
            c->rules[k].jit.status = TI_SKIPPED;
            c->rules[k].jit.summary = ti_strdup("JIT side not run (--no-jit)");
        }
    } else if (!bad) {
        g->obj = ti_fmt("%s/jit.o", g->o.out);
        bad = ti_jit_check(c, &g->o, &g->rm, g->obj, g->err, sizeof g->err);
    }
    if (bad)
        fprintf(stderr, "tandem inspect: %s\n", g->err);
    return bad ? 1 : 0;
}

/* The per-rule table (unless --quiet); the header says which column is which backend. */
static void inspect_print_rules(const ti_contract *c)
{
    if (c->nrules) printf("%-4s %-4s %-28s %-14s %s\n", "AOT", "JIT", "function", "rule", "argument");
    for (int k = 0; k < c->nrules; k++) {
        const ti_rule *r = &c->rules[k];
        printf("%-4s %-4s %-28s %-14s %s%s%s\n", ti_status_name(r->aot.status), ti_status_name(r->jit.status),
               r->function, ti_rule_name(r->kind), r->callee ? r->callee : "",
               r->aot.status == TI_FAIL ? "  AOT: " : "", r->aot.status == TI_FAIL ? r->aot.summary : "");
        if (r->jit.status == TI_FAIL)
            printf("          JIT: %s\n", r->jit.summary);
    }
}

/* Load the contract, check it, write the reports and say the verdict. The verb's exit code. */
static int inspect_contract(inspect_run *g)
{
    ti_options *o = &g->o;
    ti_contract *c = &g->c;
    if (ti_contract_load(o->contract, c, g->err, sizeof g->err)) {
        fprintf(stderr, "tandem inspect: %s\n", g->err);
        return 1;
    }
    if (inspect_aot_inputs(g) || inspect_check(g))
        return 1;
    int code = ti_exit_code(c, o->jit_strict);
    if (ti_report_write(c, o, g->ll, g->yaml, g->obj, code, g->err, sizeof g->err)) {
        fprintf(stderr, "tandem inspect: %s\n", g->err);
        return 1;
    }
    if (!o->quiet)
        inspect_print_rules(c);
    printf("inspect: %s (%d rules, %d must-inline sites satisfied on AOT); report: %s/inspect.md, %s/inspect.json\n",
           code ? "FAIL" : "PASS", c->nrules, ti_aot_sites_satisfied(c), o->out, o->out);
    inspect_summary(code, c->nrules, o->out);
    return code;
}

int td_verb_inspect(int argc, char **argv)
{
    inspect_run *g = calloc(1, sizeof *g);
    if (!g) {
        fprintf(stderr, "tandem inspect: out of memory\n");
        return 1;
    }
    ti_options *o = &g->o;
    o->out = "out/inspect";
    o->clang = getenv("TANDEM_CLANG") ? getenv("TANDEM_CLANG") : TD_INSPECT_CLANG;
    o->tcc_lib = TD_INSPECT_TCC_LIB;
    int exit_now, rc = inspect_options(g, argc, argv, &exit_now);
    if (!exit_now)
        rc = tl_out_begin("tandem inspect", 0, g->json) ? 2 : inspect_inputs(g);
    if (!exit_now && !rc)
        rc = inspect_contract(g);
    ti_remarks_free(&g->rm);
    ti_contract_free(&g->c);
    free(g->ll);
    free(g->yaml);
    free(g->obj);
    ti_auto_free(&g->au);
    ti_sl_free(&o->includes);
    ti_sl_free(&o->defines);
    free(g);
    return tl_out_end(rc);
}
