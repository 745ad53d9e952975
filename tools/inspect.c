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
#include "inspect/inspect.h"

#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#ifndef TD_INSPECT_CLANG
#define TD_INSPECT_CLANG "clang"
#endif
#ifndef TD_INSPECT_TCC_LIB
#define TD_INSPECT_TCC_LIB "/usr/lib/x86_64-linux-gnu/tcc"
#endif

static void usage(FILE *f)
{
    fprintf(f,
            "usage: tandem inspect --contract FILE.json --tu FILE.c [--ir FILE.ll --remarks FILE.yaml]\n"
            "                      [--out DIR] [-I DIR]... [-D NAME[=VALUE]]... [--no-jit] [--jit-strict]\n"
            "                      [--clang PATH] [--tcc-lib DIR] [--quiet]\n"
            "\n"
            "Checks a codegen contract (must_inline, no_init_check, no_call, clears_frame, no_frame_copy)\n"
            "on the AOT code (LLVM IR + inliner remarks) and on the JIT code (the TU compiled by libtcc).\n"
            "no_init_check works on the code's shape: a branch on a global whose guarded path stores it\n"
            "(lazy init), a branch on a global only the initialisers write (init guard), a once call, a\n"
            "call through a global function pointer its target overwrites; guard names are a 4th signal.\n"
            "\n"
            "  --contract FILE  the contract (JSON; see runtime/contract.json); allowed settings naming a\n"
            "                   field (init_guards.allowed_settings) are resolved by compiling --tu with libtcc\n"
            "  --tu FILE.c      the translation unit both backends compile\n"
            "  --ir FILE.ll     the AOT module's IR (default: run clang -O2 -DNDEBUG -fPIC\n"
            "                   -fvisibility=hidden -S -emit-llvm with remarks on --tu, into --out)\n"
            "  --remarks FILE   the AOT optimisation remarks YAML (required with --ir)\n"
            "  --out DIR        where inspect.json and inspect.md go (default out/inspect)\n"
            "  -I DIR, -D N[=V] include path / define for both compilers (NDEBUG is always defined)\n"
            "  --no-jit         skip the JIT side (then --tu is optional when --ir is given)\n"
            "  --jit-strict     must_inline also fails on JIT (tcc never inlines, so normally info)\n"
            "  --clang PATH     clang to produce IR (default %s)\n"
            "  --tcc-lib DIR    tcc's library directory (default %s)\n"
            "\n"
            "exit: 0 all rules hold, 3 a rule fails, 1 unusable inputs, 2 usage\n",
            TD_INSPECT_CLANG, TD_INSPECT_TCC_LIB);
}

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
    pid_t pid;
    int rc = posix_spawnp(&pid, o->clang, NULL, NULL, argv, environ);
    int st = 0;
    if (rc == 0)
        waitpid(pid, &st, 0);
    free(argv);
    ti_sl_free(&a);
    if (rc) {
        snprintf(err, errsz, "cannot run %s: %s", o->clang, strerror(rc));
        return -1;
    }
    if (!WIFEXITED(st) || WEXITSTATUS(st)) {
        snprintf(err, errsz, "%s: clang failed to compile it (exit %d)", o->tu, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
        return -1;
    }
    return 0;
}

int td_verb_inspect(int argc, char **argv)
{
    ti_options o = { 0 };
    o.out = "out/inspect";
    o.clang = getenv("TANDEM_CLANG") ? getenv("TANDEM_CLANG") : TD_INSPECT_CLANG;
    o.tcc_lib = TD_INSPECT_TCC_LIB;
    int rc = 2;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
#define NEXT()                                                               \
    (i + 1 < argc ? argv[++i]                                                \
                  : (fprintf(stderr, "tandem inspect: %s needs a value\n", a), (char *)NULL))
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            rc = 0;
            goto done;
        } else if (!strcmp(a, "--contract")) {
            if (!(o.contract = NEXT())) goto done;
        } else if (!strcmp(a, "--tu")) {
            if (!(o.tu = NEXT())) goto done;
        } else if (!strcmp(a, "--ir")) {
            if (!(o.ir = NEXT())) goto done;
        } else if (!strcmp(a, "--remarks")) {
            if (!(o.remarks = NEXT())) goto done;
        } else if (!strcmp(a, "--out")) {
            if (!(o.out = NEXT())) goto done;
        } else if (!strcmp(a, "--clang")) {
            if (!(o.clang = NEXT())) goto done;
        } else if (!strcmp(a, "--tcc-lib")) {
            if (!(o.tcc_lib = NEXT())) goto done;
        } else if (!strcmp(a, "-I") || !strcmp(a, "-D")) {
            const char *v = NEXT();
            if (!v) goto done;
            ti_sl_add(a[1] == 'I' ? &o.includes : &o.defines, v);
        } else if (!strncmp(a, "-I", 2) || !strncmp(a, "-D", 2)) {
            ti_sl_add(a[1] == 'I' ? &o.includes : &o.defines, a + 2);
        } else if (!strcmp(a, "--no-jit")) {
            o.no_jit = 1;
        } else if (!strcmp(a, "--jit-strict")) {
            o.jit_strict = 1;
        } else if (!strcmp(a, "--quiet") || !strcmp(a, "-q")) {
            o.quiet = 1;
        } else {
            fprintf(stderr, "tandem inspect: unknown option '%s'\n", a);
            usage(stderr);
            goto done;
        }
#undef NEXT
    }
    if (!o.contract) {
        fprintf(stderr, "tandem inspect: --contract is required\n");
        usage(stderr);
        goto done;
    }
    if (!o.tu && (!o.ir || !o.no_jit)) {
        fprintf(stderr, "tandem inspect: --tu is required (unless --ir, --remarks and --no-jit are given)\n");
        usage(stderr);
        goto done;
    }
    if (!o.ir != !o.remarks) {
        fprintf(stderr, "tandem inspect: --ir and --remarks go together\n");
        usage(stderr);
        goto done;
    }
    if (!ti_sl_has(&o.defines, "NDEBUG"))
        ti_sl_add(&o.defines, "NDEBUG");

    rc = 1;
    char err[8192] = "";
    ti_contract c;
    ti_remarks rm = { 0 };
    char *ll = NULL, *yaml = NULL, *obj = NULL;
    if (ti_contract_load(o.contract, &c, err, sizeof err)) {
        fprintf(stderr, "tandem inspect: %s\n", err);
        ti_contract_free(&c);
        goto done;
    }
    if (o.tu && !file_ok(o.tu)) {
        fprintf(stderr, "tandem inspect: %s: no such file (--tu)\n", o.tu);
        goto fail;
    }
    if (mkdir_p(o.out)) {
        fprintf(stderr, "tandem inspect: %s: cannot create the output folder: %s\n", o.out, strerror(errno));
        goto fail;
    }
    if (o.ir) {
        if (!file_ok(o.ir)) {
            fprintf(stderr, "tandem inspect: %s: no such file (--ir)\n", o.ir);
            goto fail;
        }
        if (!file_ok(o.remarks)) {
            fprintf(stderr, "tandem inspect: %s: no such file (--remarks)\n", o.remarks);
            goto fail;
        }
        ll = ti_strdup(o.ir);
        yaml = ti_strdup(o.remarks);
    } else {
        ll = ti_fmt("%s/aot.ll", o.out);
        yaml = ti_fmt("%s/aot.remarks.yaml", o.out);
        if (run_clang(&o, ll, yaml, err, sizeof err)) {
            fprintf(stderr, "tandem inspect: %s\n", err);
            goto fail;
        }
    }
    if (ti_settings_resolve(&c, &o, err, sizeof err)) {
        fprintf(stderr, "tandem inspect: %s\n", err);
        goto fail;
    }
    if (ti_remarks_load(yaml, &rm, err, sizeof err) || ti_aot_check(&c, ll, &rm, err, sizeof err)) {
        fprintf(stderr, "tandem inspect: %s\n", err);
        goto fail;
    }
    if (o.no_jit) {
        for (int k = 0; k < c.nrules; k++) {
            c.rules[k].jit.status = TI_SKIPPED;
            c.rules[k].jit.summary = ti_strdup("JIT side not run (--no-jit)");
        }
    } else {
        obj = ti_fmt("%s/jit.o", o.out);
        if (ti_jit_check(&c, &o, &rm, obj, err, sizeof err)) {
            fprintf(stderr, "tandem inspect: %s\n", err);
            goto fail;
        }
    }
    int code = ti_exit_code(&c, o.jit_strict);
    if (ti_report_write(&c, &o, ll, yaml, obj, code, err, sizeof err)) {
        fprintf(stderr, "tandem inspect: %s\n", err);
        goto fail;
    }
    if (!o.quiet) {
        for (int k = 0; k < c.nrules; k++) {
            const ti_rule *r = &c.rules[k];
            printf("%-4s %-4s %-28s %-14s %s%s%s\n", ti_status_name(r->aot.status), ti_status_name(r->jit.status),
                   r->function, ti_rule_name(r->kind), r->callee ? r->callee : "",
                   r->aot.status == TI_FAIL ? "  AOT: " : "", r->aot.status == TI_FAIL ? r->aot.summary : "");
            if (r->jit.status == TI_FAIL)
                printf("          JIT: %s\n", r->jit.summary);
        }
    }
    printf("inspect: %s (%d rules, %d must-inline sites satisfied on AOT); report: %s/inspect.md, %s/inspect.json\n",
           code ? "FAIL" : "PASS", c.nrules, ti_aot_sites_satisfied(&c), o.out, o.out);
    rc = code;
fail:
    ti_remarks_free(&rm);
    ti_contract_free(&c);
    free(ll);
    free(yaml);
    free(obj);
done:
    ti_sl_free(&o.includes);
    ti_sl_free(&o.defines);
    return rc;
}
