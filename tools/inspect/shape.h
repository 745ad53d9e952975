/*
 * shape.h - the no_init_check rule by shape: a small, backend-neutral model of a module
 * (functions, blocks, global stores, calls, branches on loaded globals) that both sides
 * build from their own code (shape_ir.c from the AOT LLVM IR, shape_tcc.c from the tcc
 * object), and one engine (shape.c) that finds on it:
 *
 *   1. lazy initialisation: a branch decided by a load of a mutable global whose guarded
 *      path stores that global (directly, through a pointer parameter of a callee, or in
 *      any function it calls, transitively; once primitives count as calls);
 *   2. initialisation guards: a branch on a global only the contract's initialisers write
 *      (the set computed from the initialisers' own code in the module);
 *   3. self-replacing entry points: an indirect call through a global function pointer
 *      that one of its possible targets overwrites;
 *   plus a call to a once primitive (pthread_once, call_once) or a declared initialiser.
 *
 * A branch on a setting the contract allows (init_guards.allowed_settings) is reported
 * as allowed, with its reason. Locations are (global, byte range); a store through a
 * pointer whose offset is not constant covers the whole global.
 */
#ifndef TD_INSPECT_SHAPE_H
#define TD_INSPECT_SHAPE_H

#include "inspect.h"

/* What a value is, as far as the shape rules care. */
typedef enum ti_sv_kind {
    TI_SV_NONE,
    TI_SV_GLOBAL,   /* the address of global `id` + off (off < 0: unknown offset) */
    TI_SV_PARAM,    /* the function's parameter `id` (a pointer) + off */
    TI_SV_FUNC      /* the address of function `id` */
} ti_sv_kind;

typedef struct ti_sval {
    ti_sv_kind kind;
    int id;
    long long off;
} ti_sval;

typedef enum ti_ev_kind {
    TI_EV_STORE,    /* a write to memory at `at` (size bytes, -1 unknown) */
    TI_EV_CALL,     /* a call: direct (callee >= 0) or indirect (fp: the global it was loaded from) */
    TI_EV_BRANCH    /* a conditional branch decided by the value loaded from `at` */
} ti_ev_kind;

#define TI_MAX_ARGS 6

typedef struct ti_sev {
    ti_ev_kind kind;
    int block;
    char *text;                /* evidence: the instruction, "fn+0x1a: `...`" or "fn: `...` (file:line)" */
    ti_sval at;                /* STORE: where; BRANCH: the loaded global */
    long long size;            /* STORE/BRANCH: bytes, -1 unknown */
    ti_sval value;             /* STORE: what was stored (a FUNC when a function address) */
    int rmw;                   /* STORE: the value stored is computed from the location's own value
                                  (a counter, a growth): not an initialisation */
    int inlined_from;          /* AOT: the function whose inlined code this is (debug scope), -1 */
    int callee;                /* CALL: function index, -1 indirect */
    ti_sval fp;                /* CALL indirect: GLOBAL the pointer was loaded from, else NONE */
    char *load_text;           /* CALL indirect / BRANCH: evidence of the load */
    ti_sval args[TI_MAX_ARGS]; /* CALL: what the first arguments are */
    int nargs;
    int *succ;                 /* BRANCH: successor blocks */
    int nsucc;
} ti_sev;

typedef struct ti_sloc {
    int g;
    long long lo, hi;          /* [lo, hi); hi < 0: the whole global */
    int rmw;                   /* every write seen is read-modify-write */
    char *why;                 /* the witness chain that proves the store */
} ti_sloc;

typedef struct ti_sploc {
    int param;
    long long lo, hi;
    int rmw;
    char *why;
} ti_sploc;

typedef struct ti_sfn {
    char *name;
    int defined, internal, address_taken;
    int nblocks;
    int **bsucc;               /* block successors */
    int *nbsucc;
    ti_sev *ev;
    int nev, cap;
    int ret_param;             /* JIT model: returns the value at its parameter (-1 none) */
    int ret_global;            /* JIT model: returns the value of this global (-1 none) */
    long long ret_goff;
    /* engine summaries */
    ti_sloc *w;                /* globals written, transitively */
    int nw, wcap;
    ti_sploc *pw;              /* writes through pointer parameters, transitively */
    int npw, pwcap;
    ti_sloc *lw;               /* globals written by this function's own code (callees' pointer writes bound) */
    int nlw, lwcap;
} ti_sfn;

typedef struct ti_sglobal {
    char *name;
    int constant;
    long long size;            /* -1 unknown */
} ti_sglobal;

typedef struct ti_sfpinit {   /* a function address in a global's initial value */
    int g;
    long long off;             /* -1 unknown */
    int fn;
} ti_sfpinit;

typedef struct ti_sprog {
    const char *side;          /* "AOT" / "JIT" */
    ti_sfn *fn;
    int nfn, fncap;
    ti_sglobal *g;
    int ng, gcap;
    ti_sfpinit *fpinit;
    int nfpinit, fpcap;
    int summarised;
    int local_done;
} ti_sprog;

/* ---- building (shape.c) ---- */
int ti_sp_fn(ti_sprog *p, const char *name);          /* find or add */
int ti_sp_find_fn(const ti_sprog *p, const char *name);
int ti_sp_global(ti_sprog *p, const char *name, int constant, long long size);
int ti_sp_find_global(const ti_sprog *p, const char *name);
ti_sev *ti_sp_event(ti_sfn *f, ti_ev_kind k, int block, char *text);   /* takes text */
void ti_sp_fpinit(ti_sprog *p, int g, long long off, int fn);
void ti_sp_free(ti_sprog *p);

/* ---- checking (shape.c) ---- */
/* Evaluate no_init_check on the functions `scope` (indices into p->fn) and add the findings
 * to `res` (status, summary and evidence are set). `where` names the scope. The name and
 * initialiser-call signals come from the caller in `name_hits` (evidence lines, may be empty). */
void ti_shape_check(ti_sprog *p, const ti_contract *c, const int *scope, int nscope, const char *where,
                    const ti_strlist *name_hits, ti_result *res);

/* ---- the two builders ---- */
struct LLVMOpaqueModule;
struct LLVMOpaqueValue;
/* "fn: `<instruction>` (file:line)" (aot.c) */
char *ti_ir_ev_instr(const char *fn, struct LLVMOpaqueValue *i);
int ti_shape_from_ir(ti_sprog *p, struct LLVMOpaqueModule *mod, char *err, size_t errsz);
struct jit_obj;
int ti_shape_from_tcc(ti_sprog *p, const struct jit_obj *j, char *err, size_t errsz);

#endif
