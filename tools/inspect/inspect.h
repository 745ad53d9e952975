/*
 * inspect.h - the codegen inspector (`tandem inspect`): shared types.
 *
 * A contract (JSON) names functions and rules; the inspector checks each rule on the
 * AOT side (LLVM IR + optimisation remarks, via the LLVM-C API) and on the JIT side
 * (a libtcc object file: ELF symbols, relocations, LLVM-C disassembly), and writes a
 * side-by-side report (Markdown + JSON).
 *
 * Modules: contract.c (load/validate the contract), names.c (its functions exist in the
 * code), settings.c (its allowed settings), aot.c (IR + remarks), jit.c (tcc object),
 * report.c (Markdown/JSON), util.c (string lists, messages); the verb itself is
 * tools/inspect/inspect.c.
 */
#ifndef TD_INSPECT_H
#define TD_INSPECT_H

#include <stddef.h>

struct ti_options;

/* ---- small growable string list -------------------------------------------------- */
typedef struct ti_strlist {
    char **v;
    int n, cap;
} ti_strlist;

void ti_sl_add(ti_strlist *l, const char *s);
void ti_sl_addf(ti_strlist *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int ti_sl_has(const ti_strlist *l, const char *s);
void ti_sl_free(ti_strlist *l);
/* prefix, then the strings separated by sep, or `empty` when there are none (malloc'd). */
char *ti_sl_join(const ti_strlist *l, const char *prefix, const char *sep, const char *empty);
char *ti_strdup(const char *s);
char *ti_fmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Trim an LLVM instruction/disassembly print to one line of at most `max` chars,
 * dropping attached metadata (", !dbg !12"). Returns a new string. */
char *ti_oneline(const char *s, size_t max);

/* ---- contract ---------------------------------------------------------------------- */
typedef enum ti_rule_kind {
    TI_MUST_INLINE,
    TI_NO_INIT_CHECK,
    TI_NO_CALL,
    TI_CLEARS_FRAME,
    TI_NO_FRAME_COPY,
    TI_NO_LOCKED        /* no locked instruction: atomicrmw, cmpxchg, a seq_cst store or fence
                         * (x86: lock prefix, xchg with memory, mfence) */
} ti_rule_kind;

const char *ti_rule_name(ti_rule_kind k);

typedef enum ti_status {
    TI_PASS,
    TI_FAIL,
    TI_INFO,     /* reported, does not decide the exit code (e.g. tcc never inlines) */
    TI_SKIPPED,  /* the side was not run (--no-jit) */
    TI_ALLOWED   /* no_init_check: only branches on settings the contract allows (with a reason) */
} ti_status;

const char *ti_status_name(ti_status s);

typedef struct ti_result {
    ti_status status;
    char *summary;          /* one line: what was decided */
    ti_strlist evidence;    /* instructions / remarks that decided it, first is decisive */
    int sites;              /* must_inline: inlined call sites found (AOT) */
} ti_result;

typedef struct ti_rule {
    ti_rule_kind kind;
    char *function;         /* the function the rule is about */
    char *callee;           /* must_inline: the one callee this row is about */
    ti_strlist names;       /* no_call: the forbidden callees */
    long long frame_size;   /* clears_frame/no_frame_copy: bytes, -1 = undeclared/dynamic */
    char *frame_type;       /* optional IR struct name ("struct.td_frame") to size the frame */
    long long min_copy;     /* no_frame_copy: copies of >= this many bytes count (default: frame size, else 1) */
    int backends;           /* TI_ON_AOT | TI_ON_JIT: the function's "backends" (default both) */
    ti_result aot, jit;
} ti_rule;
#define TI_ON_AOT 1
#define TI_ON_JIT 2

/* A setting a hot path may branch on (init_guards.allowed_settings): "global" or
 * "global.field.sub", resolved to a byte range of the global by compiling the TU. */
typedef struct ti_setting {
    char *name;                  /* as written in the contract */
    char *global;                /* the global's name (before the first '.' or '[') */
    char *reason;
    long long off, size;         /* byte range in the global; size -1 until resolved */
} ti_setting;

typedef struct ti_contract {
    char *path;
    ti_strlist guard_vars;       /* exact names of "initialised" flags */
    ti_strlist guard_patterns;   /* fnmatch patterns of guard names */
    ti_strlist once_functions;   /* pthread_once, call_once, ... */
    ti_strlist initialisers;     /* declared initialiser functions */
    ti_strlist finalisers;       /* shutdown functions: their writes do not make a global "written after init" */
    ti_setting *settings;        /* allowed settings */
    int nsettings;
    ti_strlist allocators;       /* default list for "no_call": true */
    ti_rule *rules;
    int nrules;
} ti_contract;

/* Returns 0, or -1 with a message in err naming the file and the field. */
int ti_contract_load(const char *path, ti_contract *c, char *err, size_t errsz);
void ti_contract_free(ti_contract *c);
int ti_is_guard_name(const ti_contract *c, const char *name);
int ti_is_init_call(const ti_contract *c, const char *name);
int ti_is_once_call(const ti_contract *c, const char *name);
/* Bind the contract to the code inspected, before any rule is judged: refuse a function the
 * code does not have (ti_contract_names_check), then resolve the allowed settings' byte
 * ranges by compiling the TU with libtcc plus offsetof/sizeof probes (settings.c). Returns 0,
 * or -1 naming the contract's field and the reason. */
int ti_settings_resolve(ti_contract *c, const struct ti_options *o, char *err, size_t errsz);
/* -1 with a message naming the contract, the field functions.NAME and the name when a rule's
 * function is nowhere in the code inspected: the TU and the files it includes, read as text,
 * or the names TD_METHOD_DEFINE pastes (names.c); without --tu, the IR. Else 0. */
int ti_contract_names_check(const ti_contract *c, const struct ti_options *o, char *err, size_t errsz);

/* ---- remarks (read on the AOT side, also used to scope the JIT side) ----------------- */
typedef struct ti_remark {
    char *name;      /* Inlined, NeverInline, TooCostly, NoDefinition, ... */
    int passed;      /* !Passed */
    char *caller, *callee, *reason;
    char *file;
    unsigned line, col;
    char *text;      /* the remark's message, reassembled from its args */
} ti_remark;

typedef struct ti_remarks {
    ti_remark *v;
    int n, cap;
} ti_remarks;

int ti_remarks_load(const char *path, ti_remarks *r, char *err, size_t errsz);
void ti_remarks_free(ti_remarks *r);
/* Functions the AOT build inlined into `fn`, transitively (callees of inlined callees). */
void ti_inlined_closure(const ti_remarks *r, const char *fn, ti_strlist *out);

/* ---- the two sides -------------------------------------------------------------------- */
typedef struct ti_options {
    const char *contract, *tu, *ir, *remarks, *out;
    ti_strlist includes, defines;
    const char *clang, *tcc_lib;
    int no_jit, jit_strict, quiet;
} ti_options;

/* Compile `src` with libtcc (the options' -I/-D) into the object file `obj` (jit.c). */
int ti_tcc_compile(const ti_options *o, const char *src, const char *obj, char *err, size_t errsz);

/* Each returns 0, or -1 with a message in err when the input is unusable (exit 1). */
int ti_aot_check(ti_contract *c, const char *ir_path, const ti_remarks *rm, char *err, size_t errsz);
int ti_jit_check(ti_contract *c, const ti_options *o, const ti_remarks *rm, const char *obj_path,
                 char *err, size_t errsz);

/* ---- report ----------------------------------------------------------------------------- */
int ti_report_write(const ti_contract *c, const ti_options *o, const char *ir, const char *remarks,
                    const char *obj, int exit_code, char *err, size_t errsz);
int ti_exit_code(const ti_contract *c, int jit_strict);
int ti_aot_sites_satisfied(const ti_contract *c);

#endif
