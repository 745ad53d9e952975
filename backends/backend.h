/*
 * backend.h - the one interface both backends implement, plus the TU generator.
 *
 *   td_tu_generate   source root + subject (+ suites) -> the text of ONE C file that
 *                    #includes every source of that subject with root-relative paths.
 *   backend->build   compile that TU to the backend's artifacts (AOT: shared module,
 *                    LLVM IR, optimisation remarks; JIT: an in-memory compile check).
 *   backend->load    produce a loaded module giving the entry table (AOT: dlopen of the
 *                    built .so, RTLD_NOW|RTLD_LOCAL; JIT: libtcc compile in memory).
 *   backend->unload  release it.
 *   identity/flags   recorded in manifests and reports.
 * Compile times are measured with CLOCK_MONOTONIC around the compiler work.
 *
 * Layering: backends know the module ABI (players/include/tandem_player.h) and nothing
 * else above the runtime; tools and the player shell call them.
 */
#ifndef TD_BACKEND_H
#define TD_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "tandem_player.h"

/* ---- generated translation unit ------------------------------------------------- */

/* The longest label (td_tu_spec.label); the unit holds it in an array of this size + 1
 * whatever its length, so that two labels do not lay the unit's data out differently. */
#define TD_TU_LABEL_MAX 64

typedef struct td_tu_spec {
    const char *root;              /* source root: staging folder or working tree */
    const char *subject;           /* players/subjects/<subject>/ (may be absent) */
    const char *const *suites;     /* NULL-terminated suite names; NULL = every folder
                                      under players/suites/ */
    int no_runtime;                /* 1: leave runtime/src/ sources out */
    const char *label;             /* the name the module reports (TD_PLAYER_SUBJECT, the
                                      entry table); NULL: the subject. A baseline revision
                                      of the runtime is built from players/subjects/tandem
                                      but reports "tandem@<rev>" (tools/baseline/baseline.c) */
    uint64_t layout_seed;          /* 0: the default layout; else a pad of td_layout_lines(
                                      td_layout_unit_seed(seed, label), id) cache lines
                                      before each source (players/include/td_layout.h):
                                      another layout of the same code */
} td_tu_spec;

/* The TU text (malloc'd, caller frees) and, optionally, the root-relative paths it
 * includes (malloc'd NULL-terminated array; free with td_tu_free_list). Returns 0, or
 * -1 with a message in err. Deterministic: same tree, same bytes. Each suite's sources
 * sit under #ifdef TD_PLAYER_SUITE_<suite>, all defined unless the compiler is given
 * TD_PLAYER_SUITES_CHOSEN (then only the suites it defines are compiled, and the runtime
 * only when the subject or one of them uses it: tandem_player.h, "THE TU"). */
int td_tu_generate(const td_tu_spec *spec, char **text, char ***included, char *err, size_t errlen);
void td_tu_free_list(char **list);

/* ---- layouts (issue 42): the same code at other addresses ------------------------- */

/* Seeds are below 2^53, so that a JSON number (manifests, reports) holds one exactly. */
#define TD_LAYOUT_SEED_MAX ((1ull << 53) - 1)
/* The pad before source `id` (its place in the unit, from 0) under `seed`: 0 for seed 0,
 * else splitmix64(seed + (id + 1) * 0x9E3779B97F4A7C15) % 64 cache lines. */
unsigned td_layout_lines(uint64_t seed, unsigned id);
/* The seed of one unit's pads under a layout's seed: `seed` mixed with the unit's label
 * (splitmix64(seed ^ FNV-1a(label)) & TD_LAYOUT_SEED_MAX, 1 if that is 0; 0 for seed 0), so
 * that two subjects built or loaded under one layout seed, the current runtime and a
 * baseline revision "tandem@rev", get independent pads: with the same pads, where each
 * module lands stays a bias in one direction in every layout (issue 42). */
uint64_t td_layout_unit_seed(uint64_t seed, const char *label);
/* Layout k's seed of an attempt seed: 0 (the default layout) for k == 0, else
 * splitmix64(attempt_seed + k) & TD_LAYOUT_SEED_MAX (1 if that is 0). */
uint64_t td_layout_seed_derive(uint64_t attempt_seed, unsigned k);
/* A generated unit's text re-laid with `seed`: every "TD_LAYOUT_FILE_START(lines, id)" line
 * gets td_layout_lines(td_layout_unit_seed(seed, label), id), label the unit's
 * TD_PLAYER_SUBJECT (what td_tu_generate writes with that seed; the JIT's --layout-seed).
 * Malloc'd text in *out; 0, or -1 (out of memory, no such line, or no label line). */
int td_tu_relayout(const char *text, uint64_t seed, char **out);
/* Conventional TU file name for a subject: "tandem-player-<subject>.c". */
void td_tu_file_name(const char *subject, char *buf, size_t len);

/* ---- backends -------------------------------------------------------------------- */

typedef struct td_backend_symbol {
    const char *name;
    const void *addr;
} td_backend_symbol;

typedef struct td_backend_options {
    const char *root;                  /* source root the TU's includes are relative to */
    const char *tu_path;               /* the generated TU file */
    const char *out_dir;               /* AOT: where artifacts go */
    const char *name;                  /* artifact base name (usually the subject) */
    const char *const *defines;        /* extra "NAME=VALUE" defines, NULL-terminated (JIT
                                          load: the player's TD_PLAYER_SUITES_CHOSEN and
                                          TD_PLAYER_SUITE_<suite>) */
    const char *const *include_dirs;   /* extra include folders after the root's, NULL-ended */
    const td_backend_symbol *symbols;  /* JIT: host symbols to bind, {NULL,NULL}-ended */
    int emit_ir;                       /* AOT build: also write <name>.ll */
    int emit_remarks;                  /* AOT build: also write <name>.opt.yaml */
    uint64_t layout_seed;              /* JIT: non-zero compiles the TU re-laid with this seed
                                          (td_tu_relayout; tandem-player --layout-seed) */
} td_backend_options;

typedef struct td_backend_result {
    char module_path[4096];            /* AOT: <out>/<name>.so; JIT: "" */
    char ir_path[4096];                /* AOT: <out>/<name>.ll when emitted */
    char remarks_path[4096];           /* AOT: <out>/<name>.opt.yaml when emitted */
    uint64_t compile_ns;               /* the module compile (AOT: .so; JIT: tcc) */
    uint64_t ir_ns;                    /* AOT: the IR compile */
} td_backend_result;

typedef struct td_backend_module {
    const td_player_module *entry;     /* the entry table */
    void *handle;                      /* dlopen handle or TCCState */
    uint64_t compile_ns;               /* JIT: compile+relocate; AOT: dlopen time */
} td_backend_module;

/* A function of a loaded module's code: its name and where it is (td_backend.functions). */
typedef struct td_backend_function {
    char *name;
    uintptr_t addr;
    size_t size;
} td_backend_function;

typedef struct td_backend {
    const char *name;                  /* "aot" | "jit" */
    /* e.g. "Debian clang version 14.0.6" / "tcc 0.9.27 (libtcc)". */
    const char *(*identity)(void);
    /* The compile flags, as one string (recorded in manifests). */
    const char *(*flags)(void);
    /* Compile the TU. Errors (with file:line from the compiler) go to err. 0 or -1. */
    int (*build)(const td_backend_options *o, td_backend_result *r, char *err, size_t errlen);
    /* Load: AOT takes `path` = the .so; JIT takes `path` = the TU (o gives root etc.). */
    int (*load)(const char *path, const td_backend_options *o, td_backend_module *m,
                char *err, size_t errlen);
    void (*unload)(td_backend_module *m);
    /* The functions of a loaded module's code (path and o as given to load), for the
     * instruction meter where callgrind sees no symbols: JIT. NULL where the module's own
     * symbols name them (AOT). 0 with *out (sorted by address, td_backend_functions_free)
     * and *n, or -1 with err. */
    int (*functions)(const td_backend_module *m, const char *path, const td_backend_options *o,
                     td_backend_function **out, size_t *n, char *err, size_t errlen);
} td_backend;

void td_backend_functions_free(td_backend_function *v, size_t n);

extern const td_backend td_backend_aot;
extern const td_backend td_backend_jit;
/* "aot" or "jit" -> the backend; NULL otherwise. */
const td_backend *td_backend_find(const char *name);

/* ---- shared helpers (backends/common.c) ----------------------------------------- */

uint64_t td_backend_now_ns(void);
/* Check the entry table of the module at `path` (for the message): the player, subject and
 * bench ABI versions it was built against must be this player's (tandem_player.h, "THE
 * ABI VERSIONS"), then its size and callbacks. 0, or -1 with err naming both versions. */
int td_backend_check_entry(const char *path, const td_player_module *m, char *err, size_t errlen);
/* Append include flags for a root: root, runtime/include, runtime/port, runtime/src,
 * players/include (in that order). Returns how many were written (each malloc'd). */
int td_backend_include_dirs(const char *root, char **dirs, int max);

/* Extra link libraries of a subject: the lines of <root>/players/subjects/<subject>/link.libs,
 * a file of the staged layout that `tandem stage` writes from the project's tandem.json
 * (subjects.NAME.link, tools/lib/tl_project.h). A line is a library name ("m",
 * "boost_context": clang -lNAME, tcc_add_library) or an absolute path to a library file
 * (linked as given); blank lines and '#' comments are skipped. The AOT backend links them
 * into the subject's module; the JIT backend adds them to the subject's TCCState.
 * Returns how many were written (each malloc'd), 0 if none, -1 when the file holds more than
 * max (err says so; nothing is returned). */
#define TD_BACKEND_MAX_LIBS 32
int td_backend_subject_libs(const char *root, const char *subject, char **libs, int max, char *err, size_t errlen);
/* Is a link.libs line a library name (else an absolute path)? */
int td_backend_lib_is_name(const char *lib);

/* TD_ASAN_BUILD: built with AddressSanitizer (the tools' sanitized build, TD_SANITIZE_TOOLS;
 * clang says so through __has_feature, gcc through __SANITIZE_ADDRESS__). The player's shell
 * then counts allocations through ASan's hooks (host/shell/alloc.c), and a module is never
 * unloaded: its handle is kept (td_backend_keep_loaded) so that a subject's pooled objects,
 * held until the process exits like any pool's, stay reachable from its globals and
 * LeakSanitizer reports only real leaks (an unloaded module's globals are gone and every
 * pooled object would read as leaked). */
#if defined(__has_feature)
#  if __has_feature(address_sanitizer)
#    define TD_ASAN_BUILD 1
#  endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(TD_ASAN_BUILD)
#  define TD_ASAN_BUILD 1
#endif
#ifdef TD_ASAN_BUILD
/* Remember a module handle until exit (a static root LeakSanitizer scans). 0, or -1 when the
 * table is full (the caller then unloads as usual). */
int td_backend_keep_loaded(void *handle);
#endif

#endif /* TD_BACKEND_H */
