/*
 * jit.c - the JIT backend: libtcc compiles the generated TU in memory, one TCCState per
 * loaded subject (states are independent: two subjects defining the same names live
 * side by side). No optimiser; -DNDEBUG like the AOT release build.
 *
 * Host symbols the module needs (the shell's malloc family, ...) are bound explicitly
 * with tcc_add_symbol; anything else resolves through the process (dlsym). Compile errors
 * arrive through tcc_set_error_func as "file:line: error: ..." and are returned whole.
 * libtcc 0.9.27 is not thread-safe: build/load from one thread at a time.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include <libtcc.h>

#include "backend.h"
#include "jit_functions.h"

#ifndef TD_TCC_LIB_PATH
#define TD_TCC_LIB_PATH "/usr/lib/x86_64-linux-gnu/tcc"
#endif

typedef struct jit_errors {
    char *buf;
    size_t len;
    size_t n;
    int count;
} jit_errors;

static void jit_on_error(void *opaque, const char *msg)
{
    jit_errors *e = opaque;
    e->count++;
    if (!e->buf || !e->len || e->n + 1 >= e->len) return;
    int k = snprintf(e->buf + e->n, e->len - e->n, "%s%s", e->n ? "\n" : "", msg);
    if (k > 0) e->n = e->n + (size_t)k < e->len ? e->n + (size_t)k : e->len - 1;
}

static const char *jit_lib_path(void)
{
    const char *env = getenv("TANDEM_TCC_LIB_PATH");
    return env && *env ? env : TD_TCC_LIB_PATH;
}

/* A state compiling to `output` (TCC_OUTPUT_MEMORY, or TCC_OUTPUT_OBJ for jit_functions:
 * the same includes and defines, so the same code; the host symbols only where it links). */
static TCCState *jit_new_state(const char *root, const td_backend_options *o, jit_errors *errs, int output)
{
    TCCState *s = tcc_new();
    if (!s) return NULL;
    tcc_set_lib_path(s, jit_lib_path());
    tcc_set_error_func(s, errs, jit_on_error);
    tcc_set_output_type(s, output);
    tcc_define_symbol(s, "NDEBUG", "1");
    if (root) {
        char *dirs[8];
        int nd = td_backend_include_dirs(root, dirs, 8);
        for (int i = 0; i < nd; i++) {
            tcc_add_include_path(s, dirs[i]);
            free(dirs[i]);
        }
    }
    for (const char *const *d = o ? o->include_dirs : NULL; d && *d; d++) tcc_add_include_path(s, *d);
    for (const char *const *d = o ? o->defines : NULL; d && *d; d++) {
        char name[256];
        const char *eq = strchr(*d, '=');
        snprintf(name, sizeof name, "%.*s", eq ? (int)(eq - *d) : (int)strlen(*d), *d);
        tcc_define_symbol(s, name, eq ? eq + 1 : "1");
    }
    for (const td_backend_symbol *y = o && output == TCC_OUTPUT_MEMORY ? o->symbols : NULL; y && y->name; y++)
        tcc_add_symbol(s, y->name, y->addr);
    return s;
}

static const char *jit_identity(void)
{
    static char id[128];
    if (id[0]) return id;
    /* Ask the compiler itself: __TINYC__ is its version as an integer (927 = 0.9.27). */
    jit_errors errs = { 0 };
    TCCState *s = jit_new_state(NULL, NULL, &errs, TCC_OUTPUT_MEMORY);
    int v = 0;
    if (s && tcc_compile_string(s, "int td_jit_version = __TINYC__;") == 0 &&
        tcc_relocate(s, TCC_RELOCATE_AUTO) >= 0) {
        int *p = tcc_get_symbol(s, "td_jit_version");
        if (p) v = *p;
    }
    if (s) tcc_delete(s);
    if (v) snprintf(id, sizeof id, "tcc %d.%d.%d (libtcc)", v / 10000, (v / 100) % 100, v % 100);
    else snprintf(id, sizeof id, "tcc (libtcc, version unknown)");
    return id;
}

static const char *jit_flags(void)
{
    /* the unit's alignment (players/include/td_layout.h) is part of the build: in the build id */
    return "libtcc TCC_OUTPUT_MEMORY -DNDEBUG (no optimiser), each source 64-byte aligned";
}

/* The TU's absolute path and its source root (o->root, else the TU's folder). 0, or -1
 * with err. */
static int jit_paths(const char *tu, const td_backend_options *o, char *root, char *tuabs, char *err,
                     size_t errlen)
{
    const char *r = o && o->root ? o->root : NULL;
    if (errlen) err[0] = 0;
    if (!realpath(tu, tuabs)) {
        snprintf(err, errlen, "jit: no translation unit %s", tu);
        return -1;
    }
    if (!r) {
        snprintf(root, PATH_MAX, "%s", tuabs);
        *strrchr(root, '/') = 0;
    } else if (!realpath(r, root)) {
        snprintf(err, errlen, "jit: no source root %s", r);
        return -1;
    }
    return 0;
}

/* With o->layout_seed: the TU re-laid with that seed (td_tu_relayout) in a private
 * temporary folder, under the TU's own file name (it names the subject); its quoted
 * includes find nothing beside it and go to the root's include folders, as the TU's own.
 * tuabs becomes that copy's path and dir the folder to remove (jit_relaid_done). */
static int jit_relaid(char *tuabs, const td_backend_options *o, char *dir, char *err, size_t errlen)
{
    dir[0] = 0;
    if (!o || !o->layout_seed) return 0;
    char *laid = NULL;
    size_t len = 0;
    char *text = (char *)td_jit_read_file(tuabs, "the unit", &len, err, errlen);
    if (!text || strlen(text) != len || td_tu_relayout(text, o->layout_seed, &laid)) {
        snprintf(err, errlen, "jit: --layout-seed: %s is not a generated unit with layout lines (TD_LAYOUT_FILE_START)",
                 tuabs);
        free(text);
        return -1;
    }
    free(text);
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, PATH_MAX, "%s/tandem-jit-layout-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    char path[PATH_MAX + 300];
    int made = mkdtemp(dir) != NULL, ok = made;
    if (ok) {
        snprintf(path, sizeof path, "%s/%s", dir, strrchr(tuabs, '/') + 1);
        FILE *f = fopen(path, "wb");
        ok = f && fputs(laid, f) >= 0;
        if (f && fclose(f)) ok = 0;
    }
    free(laid);
    if (!ok) {
        snprintf(err, errlen, "jit: --layout-seed: cannot write the re-laid unit of %s under %s", tuabs, dir);
        if (made) { unlink(path); rmdir(dir); }
        dir[0] = 0;
        return -1;
    }
    snprintf(tuabs, PATH_MAX, "%s", path);
    return 0;
}

static void jit_relaid_done(const char *tuabs, const char *dir)
{
    if (!dir[0]) return;
    unlink(tuabs);
    rmdir(dir);
}

/* Compile + relocate the unit at tuabs; on success *out is the live state and *entry the
 * entry table. */
static int jit_compile_at(const char *root, const char *tuabs, const td_backend_options *o, TCCState **out,
                          const td_player_module **entry, uint64_t *ns, char *err, size_t errlen)
{
    jit_errors errs = { err, errlen, 0, 0 };
    uint64_t t0 = td_backend_now_ns();
    TCCState *s = jit_new_state(root, o, &errs, TCC_OUTPUT_MEMORY);
    if (!s) {
        snprintf(err, errlen, "jit: tcc_new failed");
        return -1;
    }
    int rc = tcc_add_file(s, tuabs);
    /* The subject's link libraries (players/subjects/<subject>/link.libs), as the AOT
     * backend links them; the subject is named by the TU's file name. */
    const char *base = strrchr(tuabs, '/') ? strrchr(tuabs, '/') + 1 : tuabs;
    char subject[256];
    if (rc == 0 && sscanf(base, "tandem-player-%255[^.].c", subject) == 1) {
        char *libs[TD_BACKEND_MAX_LIBS];
        int nlibs = td_backend_subject_libs(root, subject, libs, TD_BACKEND_MAX_LIBS, err, errlen);
        if (nlibs < 0) {
            tcc_delete(s);
            return -1;
        }
        for (int i = 0; i < nlibs; i++) {
            int is_name = td_backend_lib_is_name(libs[i]);
            if (rc == 0 && (is_name ? tcc_add_library(s, libs[i]) : tcc_add_file(s, libs[i])) != 0) {
                char m[1200];
                snprintf(m, sizeof m, "jit: subject %s links %s%s (players/subjects/%s/link.libs, from the project's "
                         "subjects.%s.link): %s", subject, is_name ? "-l" : "", libs[i], subject, subject,
                         is_name ? "no such library on tcc's library path" : "cannot load it");
                jit_on_error(&errs, m);
                rc = -1;
            }
            free(libs[i]);
        }
    }
    if (rc == 0 && errs.count == 0) rc = tcc_relocate(s, TCC_RELOCATE_AUTO) < 0 ? -1 : 0;
    *ns = td_backend_now_ns() - t0;
    if (rc != 0 || errs.count) {
        size_t l = strlen(err);
        snprintf(err + l, errlen - l, "%sjit: tcc failed to compile %s", l ? "\n" : "", tuabs);
        tcc_delete(s);
        return -1;
    }
    const td_player_module *e = tcc_get_symbol(s, TD_PLAYER_MODULE_SYMBOL);
    if (td_backend_check_entry(tuabs, e, err, errlen)) {
        tcc_delete(s);
        return -1;
    }
    *out = s;
    *entry = e;
    return 0;
}

static int jit_compile(const char *tu, const td_backend_options *o, TCCState **out,
                       const td_player_module **entry, uint64_t *ns, char *err, size_t errlen)
{
    char root[PATH_MAX], tuabs[PATH_MAX], dir[PATH_MAX];
    if (jit_paths(tu, o, root, tuabs, err, errlen) || jit_relaid(tuabs, o, dir, err, errlen)) return -1;
    int rc = jit_compile_at(root, tuabs, o, out, entry, ns, err, errlen);
    jit_relaid_done(tuabs, dir);
    return rc;
}

static int jit_build(const td_backend_options *o, td_backend_result *r, char *err, size_t errlen)
{
    TCCState *s;
    const td_player_module *e;
    memset(r, 0, sizeof *r);
    if (jit_compile(o->tu_path, o, &s, &e, &r->compile_ns, err, errlen)) return -1;
    tcc_delete(s);
    return 0;
}

static int jit_load(const char *path, const td_backend_options *o, td_backend_module *m, char *err,
                    size_t errlen)
{
    TCCState *s;
    memset(m, 0, sizeof *m);
    if (jit_compile(path, o, &s, &m->entry, &m->compile_ns, err, errlen)) return -1;
    m->handle = s;
    return 0;
}

static void jit_unload(td_backend_module *m)
{
#ifdef TD_ASAN_BUILD
    if (m->handle && td_backend_keep_loaded(m->handle) == 0)
        m->handle = NULL;
#endif
    if (m->handle) tcc_delete(m->handle);
    m->handle = NULL;
    m->entry = NULL;
}

/* The loaded code's functions (td_backend.functions): the TU compiled again, with the same
 * includes and defines, to an ELF object in a temporary file, whose symbol table places
 * every function, static ones too, in its code section (backends/jit/jit_functions.c); the
 * live state's global functions (tcc_get_symbol) give where that section is in memory. */
static int jit_functions(const td_backend_module *m, const char *path, const td_backend_options *o,
                         td_backend_function **out, size_t *n, char *err, size_t errlen)
{
    char root[PATH_MAX], tuabs[PATH_MAX], obj[PATH_MAX], dir[PATH_MAX];
    const char *tmp = getenv("TMPDIR");
    *out = NULL;
    *n = 0;
    if (!m || !m->handle) {
        snprintf(err, errlen, "jit: no loaded module");
        return -1;
    }
    if (jit_paths(path, o, root, tuabs, err, errlen)) return -1;
    snprintf(obj, sizeof obj, "%s/tandem-jit-functions-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    int fd = mkstemp(obj);
    if (fd < 0) {
        snprintf(err, errlen, "jit: %s: cannot create a temporary object file", obj);
        return -1;
    }
    if (jit_relaid(tuabs, o, dir, err, errlen)) { /* the layout the loaded code has */
        close(fd);
        unlink(obj);
        return -1;
    }
    close(fd);
    jit_errors errs = { err, errlen, 0, 0 };
    TCCState *s = jit_new_state(root, o, &errs, TCC_OUTPUT_OBJ);
    int rc = s && tcc_add_file(s, tuabs) == 0 && errs.count == 0 && tcc_output_file(s, obj) == 0 ? 0 : -1;
    if (s) tcc_delete(s);
    jit_relaid_done(tuabs, dir);
    if (rc) {
        size_t l = strlen(err);
        snprintf(err + l, errlen - l, "%sjit: tcc could not compile %s to an object", l ? "\n" : "", tuabs);
    } else
        rc = td_jit_object_functions(obj, m->handle, out, n, err, errlen);
    unlink(obj);
    return rc;
}

const td_backend td_backend_jit = {
    "jit", jit_identity, jit_flags, jit_build, jit_load, jit_unload, jit_functions,
};
