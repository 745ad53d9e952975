/*
 * aot.c - the AOT backend: drives clang (found on PATH, or $TANDEM_CLANG) to build the
 * generated TU into a shared module at release settings, plus its LLVM IR and
 * optimisation remarks for the inspector; loads modules with dlopen(RTLD_NOW|RTLD_LOCAL).
 *
 * Reproducibility: clang runs in the TU's folder with the TU's base name (the ELF
 * STT_FILE symbol is then path-free), -ffile-prefix-map=<root>=. (so __FILE__ is
 * "./runtime/src/x.c" whatever the staging folder), __DATE__/__TIME__/__TIMESTAMP__
 * pinned, -fdebug-compilation-dir=. (the remarks need line tables) and a content-derived
 * build id (--build-id=sha1). Same staging, same bytes.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend.h"
#include "tl_spawn.h"

static const char *const aot_release_flags[] = {
    "-std=gnu11", "-O2", "-DNDEBUG", "-fPIC", "-fvisibility=hidden", "-fdebug-compilation-dir=.",
    "-Wno-builtin-macro-redefined", "-D__DATE__=\"Jan  1 1970\"", "-D__TIME__=\"00:00:00\"",
    "-D__TIMESTAMP__=\"Thu Jan  1 00:00:00 1970\"",
    /* layout under control (issue 42): every function and every loop head on a 64-byte line,
     * so that a change elsewhere does not move a hot loop across a cache line (identical code
     * at two placements measured up to 10% apart). The loop padding runs once per loop
     * entry (nops): its cost is measured in the commit that added it. */
    "-falign-functions=64", "-falign-loops=64", NULL
};
static const char *const aot_link_flags[] = { "-shared", "-Wl,--build-id=sha1", "-Wl,-z,now", "-lpthread",
                                              "-lm", NULL };

/* $TANDEM_CLANG, else the first clang / clang-14 on PATH, else the configured one. */
static const char *aot_clang_path(void)
{
    static char found[PATH_MAX];
    if (found[0]) return found;
    const char *env = getenv("TANDEM_CLANG");
    if (env && *env) {
        snprintf(found, sizeof found, "%s", env);
        return found;
    }
    const char *path = getenv("PATH");
    static const char *const names[] = { "clang", "clang-14", NULL };
    for (int k = 0; names[k] && path; k++) {
        const char *p = path;
        while (*p) {
            const char *e = strchr(p, ':');
            size_t l = e ? (size_t)(e - p) : strlen(p);
            char cand[PATH_MAX];
            snprintf(cand, sizeof cand, "%.*s/%s", (int)l, l ? p : ".", names[k]);
            if (access(cand, X_OK) == 0) {
                snprintf(found, sizeof found, "%s", cand);
                return found;
            }
            p = e ? e + 1 : p + l;
        }
    }
#ifdef TD_CLANG_EXECUTABLE
    snprintf(found, sizeof found, "%s", TD_CLANG_EXECUTABLE);
#else
    snprintf(found, sizeof found, "clang");
#endif
    return found;
}

/* Run argv in cwd, its temporaries in tmpdir when not NULL (clang's objects between compile
 * and link: a killed build leaves them in the caller's folder, not the system's); stderr+
 * stdout captured into err (truncated). Returns exit status or -1. */
static int aot_run(char *const argv[], const char *cwd, const char *tmpdir, char *err, size_t errlen)
{
    int fds[2];
    if (pipe(fds) != 0) {
        snprintf(err, errlen, "pipe: %s", strerror(errno));
        return -1;
    }
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(err, errlen, "fork: %s", strerror(errno));
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    if (pid == 0) {
        /* The compiler and its children die with the tool that runs it (even a SIGKILLed
         * one): tl_spawn.h */
        if (tl_spawn_child_init(parent)) _exit(127);
        dup2(fds[1], 1);
        dup2(fds[1], 2);
        close(fds[0]);
        close(fds[1]);
        if (cwd && chdir(cwd) != 0) _exit(126);
        tl_spawn_exec_guarded(argv, tmpdir);
    }
    close(fds[1]);
    size_t n = 0;
    char tmp[4096];
    ssize_t k;
    if (errlen) err[0] = 0;
    while ((k = read(fds[0], tmp, sizeof tmp)) > 0 || (k < 0 && errno == EINTR)) {
        if (k <= 0) continue;
        if (errlen && n + 1 < errlen) {
            size_t c = (size_t)k < errlen - 1 - n ? (size_t)k : errlen - 1 - n;
            memcpy(err + n, tmp, c);
            n += c;
            err[n] = 0;
        }
    }
    close(fds[0]);
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static const char *aot_identity(void)
{
    static char id[512];
    if (id[0]) return id;
    char out[4096];
    char *argv[] = { (char *)aot_clang_path(), "--version", NULL };
    if (aot_run(argv, NULL, NULL, out, sizeof out) != 0) {
        snprintf(id, sizeof id, "unknown clang (%s)", argv[0]);
        return id;
    }
    out[strcspn(out, "\n")] = 0;
    snprintf(id, sizeof id, "%s", out);
    return id;
}

static const char *aot_flags(void)
{
    static char f[1024];
    if (f[0]) return f;
    size_t n = 0;
    for (int i = 0; aot_release_flags[i]; i++)
        n += (size_t)snprintf(f + n, sizeof f - n, "%s%s", n ? " " : "", aot_release_flags[i]);
    for (int i = 0; aot_link_flags[i]; i++)
        n += (size_t)snprintf(f + n, sizeof f - n, " %s", aot_link_flags[i]);
    snprintf(f + n, sizeof f - n, " -ffile-prefix-map=<root>=.");
    return f;
}

static int abs_path(const char *p, char *out, size_t len)
{
    char *r = realpath(p, NULL);
    if (!r) return -1;
    snprintf(out, len, "%s", r);
    free(r);
    return 0;
}

typedef struct argvec {
    char *v[96];
    int n;
    char *owned[96];
    int nowned;
} argvec;

static void av_add(argvec *a, const char *s) { if (a->n < 95) a->v[a->n++] = (char *)s; a->v[a->n] = NULL; }
static void av_addf(argvec *a, const char *fmt, const char *x)
{
    char *s = NULL;
    if (asprintf(&s, fmt, x) < 0 || a->nowned >= 96) { free(s); return; }
    a->owned[a->nowned++] = s;
    av_add(a, s);
}
static void av_free(argvec *a) { for (int i = 0; i < a->nowned; i++) free(a->owned[i]); }

/* The common part of a compile command: clang, release flags, includes, prefix map. */
static void aot_common_args(argvec *a, const char *root, const td_backend_options *o)
{
    char *dirs[8];
    av_add(a, aot_clang_path());
    for (int i = 0; aot_release_flags[i]; i++) av_add(a, aot_release_flags[i]);
    av_addf(a, "-ffile-prefix-map=%s=.", root);
    int nd = td_backend_include_dirs(root, dirs, 8);
    for (int i = 0; i < nd; i++) {
        av_addf(a, "-I%s", dirs[i]);
        free(dirs[i]);
    }
    for (const char *const *d = o->include_dirs; d && *d; d++) av_addf(a, "-I%s", *d);
    for (const char *const *d = o->defines; d && *d; d++) av_addf(a, "-D%s", *d);
}

static int aot_build(const td_backend_options *o, td_backend_result *r, char *err, size_t errlen)
{
    char root[PATH_MAX], tu[PATH_MAX], out[PATH_MAX], tudir[PATH_MAX];
    memset(r, 0, sizeof *r);
    if (abs_path(o->root, root, sizeof root) || abs_path(o->tu_path, tu, sizeof tu)) {
        snprintf(err, errlen, "aot: cannot resolve %s or %s", o->root, o->tu_path);
        return -1;
    }
    mkdir(o->out_dir, 0777);
    if (abs_path(o->out_dir, out, sizeof out)) {
        snprintf(err, errlen, "aot: cannot create %s", o->out_dir);
        return -1;
    }
    snprintf(tudir, sizeof tudir, "%s", tu);
    *strrchr(tudir, '/') = 0;
    if (!tudir[0]) snprintf(tudir, sizeof tudir, "/");
    const char *tubase = strrchr(tu, '/') + 1;
    const char *name = o->name ? o->name : "module";

    snprintf(r->module_path, sizeof r->module_path, "%s/%s.so", out, name);
    argvec a = { 0 };
    aot_common_args(&a, root, o);
    if (o->emit_remarks) {
        snprintf(r->remarks_path, sizeof r->remarks_path, "%s/%s.opt.yaml", out, name);
        av_add(&a, "-fsave-optimization-record=yaml");
        av_addf(&a, "-foptimization-record-file=%s", r->remarks_path);
    }
    av_add(&a, tubase);
    av_add(&a, "-o");
    av_add(&a, r->module_path);
    for (int i = 0; aot_link_flags[i]; i++) av_add(&a, aot_link_flags[i]);
    /* the subject's own link libraries (players/subjects/<name>/link.libs): -lNAME or a path */
    char *libs[TD_BACKEND_MAX_LIBS];
    int nlibs = td_backend_subject_libs(root, o->name, libs, TD_BACKEND_MAX_LIBS, err, errlen);
    if (nlibs < 0) {
        av_free(&a);
        return -1;
    }
    for (int i = 0; i < nlibs; i++) {
        av_addf(&a, td_backend_lib_is_name(libs[i]) ? "-l%s" : "%s", libs[i]);
        free(libs[i]);
    }
    char tmpdir[PATH_MAX + 8];   /* beside the player folder: not one of its files */
    snprintf(tmpdir, sizeof tmpdir, "%s.tmp", out);
    mkdir(tmpdir, 0700);
    uint64_t t0 = td_backend_now_ns();
    int st = aot_run(a.v, tudir, tmpdir, err, errlen);
    r->compile_ns = td_backend_now_ns() - t0;
    av_free(&a);
    if (st != 0) {
        size_t l = strlen(err);
        snprintf(err + l, errlen - l, "%saot: clang exited with status %d", l ? "\n" : "", st);
        rmdir(tmpdir);
        return -1;
    }
    if (o->emit_ir) {
        argvec b = { 0 };
        snprintf(r->ir_path, sizeof r->ir_path, "%s/%s.ll", out, name);
        aot_common_args(&b, root, o);
        av_add(&b, "-S");
        av_add(&b, "-emit-llvm");
        av_add(&b, tubase);
        av_add(&b, "-o");
        av_add(&b, r->ir_path);
        t0 = td_backend_now_ns();
        st = aot_run(b.v, tudir, tmpdir, err, errlen);
        r->ir_ns = td_backend_now_ns() - t0;
        av_free(&b);
        if (st != 0) {
            size_t l = strlen(err);
            snprintf(err + l, errlen - l, "%saot: clang -emit-llvm exited with status %d", l ? "\n" : "", st);
            rmdir(tmpdir);
            return -1;
        }
    }
    rmdir(tmpdir);   /* empty: clang removes its temporaries when it ends normally */
    if (errlen) err[0] = 0;   /* warnings are not errors */
    return 0;
}

static int aot_load(const char *path, const td_backend_options *o, td_backend_module *m, char *err,
                    size_t errlen)
{
    (void)o;
    memset(m, 0, sizeof *m);
    char abs[PATH_MAX];
    if (abs_path(path, abs, sizeof abs)) {
        snprintf(err, errlen, "aot: no module %s: %s", path, strerror(errno));
        return -1;
    }
    uint64_t t0 = td_backend_now_ns();
    void *h = dlopen(abs, RTLD_NOW | RTLD_LOCAL);
    m->compile_ns = td_backend_now_ns() - t0;
    if (!h) {
        snprintf(err, errlen, "aot: dlopen %s: %s", abs, dlerror());
        return -1;
    }
    const td_player_module *e = dlsym(h, TD_PLAYER_MODULE_SYMBOL);
    if (td_backend_check_entry(abs, e, err, errlen)) {
        dlclose(h);
        return -1;
    }
    m->handle = h;
    m->entry = e;
    return 0;
}

static void aot_unload(td_backend_module *m)
{
#ifdef TD_ASAN_BUILD
    if (m->handle && td_backend_keep_loaded(m->handle) == 0)
        m->handle = NULL;
#endif
    if (m->handle) dlclose(m->handle);
    m->handle = NULL;
    m->entry = NULL;
}

const td_backend td_backend_aot = {
    "aot", aot_identity, aot_flags, aot_build, aot_load, aot_unload, NULL,
};
