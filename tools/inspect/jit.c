/*
 * jit.c - the JIT side: the same translation unit compiled by libtcc into an ELF object
 * (TCC_OUTPUT_OBJ), read with <elf.h>'s structs (section headers, .symtab, .rela.text),
 * each function's bytes disassembled with LLVM's disassembler C API.
 *
 * Call targets and global references come from the relocations that fall inside an
 * instruction (tcc leaves every call and data reference to the linker), so a call is
 * "call malloc" by its relocation, not by guessing.
 *
 * Scope: tcc never inlines, so the code the JIT player runs for F is F plus the callees
 * it calls where the AOT build inlined them. A rule on F is checked on F and on every
 * function the AOT remarks show inlined into F (transitively) that tcc emitted.
 * must_inline is reported as "not inlined (backend does not inline)" (status info),
 * a failure only with --jit-strict.
 */
#include "jit_obj.h"
#include "shape.h"

#include <elf.h>
#include <libtcc.h>
#include <llvm-c/Disassembler.h>
#include <llvm-c/Target.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>




static void add_ev(ti_result *r, char *s)
{
    ti_sl_add(&r->evidence, s);
    free(s);
}

/* ---- register tracking for a call's length argument (%rdx) ---------------------------------- */


/* Length passed in %rdx to the call at index ci: >= 0 a constant, -1 computed; `how` explains. */
static long long track_rdx(const jit_fn *f, int ci, char **how)
{
    const char *want = "rdx";
    for (int i = ci - 1; i >= 0 && i >= ci - 40; i--) {
        const jit_insn *in = &f->insn[i];
        if (ti_jit_is_call(in))
            break;
        char mn[64], src[128], dst[128];
        if (ti_jit_split_insn(in->text, mn, src, dst, sizeof mn < sizeof src ? sizeof mn : sizeof src) != 2)
            continue;
        if (dst[0] != '%' || strcmp(ti_jit_reg_family(dst), want))
            continue;
        if (!strncmp(mn, "mov", 3) && src[0] == '$') {
            *how = ti_fmt("length set by %s+0x%llx: `%s`", f->name, (unsigned long long)(in->off - f->value), in->text);
            return strtoll(src + 1, NULL, 0);
        }
        if (!strncmp(mn, "mov", 3) && src[0] == '%') {
            want = ti_jit_reg_family(src);
            continue;
        }
        *how = ti_fmt("length computed by %s+0x%llx: `%s`", f->name, (unsigned long long)(in->off - f->value), in->text);
        return -1;
    }
    *how = ti_strdup("length register not traced");
    return -1;
}

/* ---- rules --------------------------------------------------------------------------------- */
static void scope_fns(jit_obj *j, const ti_remarks *rm, const char *fn, jit_fn ***out, int *n)
{
    ti_strlist names = { 0 };
    ti_sl_add(&names, fn);
    if (rm)
        ti_inlined_closure(rm, fn, &names);
    *out = calloc((size_t)names.n, sizeof(jit_fn *));
    *n = 0;
    for (int i = 0; i < names.n; i++) {
        jit_fn *f = ti_jit_find_fn(j, names.v[i]);
        if (f)
            (*out)[(*n)++] = f;
    }
    ti_sl_free(&names);
}

static char *scope_desc(jit_fn **s, int n)
{
    if (n == 1)
        return ti_strdup(s[0]->name);
    size_t len = 64;
    for (int i = 1; i < n; i++)
        len += strlen(s[i]->name) + 2;
    char *d = calloc(1, len + strlen(s[0]->name));
    sprintf(d, "%s + callees AOT inlines (", s[0]->name);
    for (int i = 1; i < n; i++) {
        if (i > 1)
            strcat(d, ", ");
        strcat(d, s[i]->name);
    }
    strcat(d, ")");
    return d;
}

/* `st` stores 8 bytes of zero through a pointer: an immediate (movq $0, (...): the runtime's
 * td_zero_32 under tcc, runtime/port), or a register (movq %reg, (...)) that `prev` loaded
 * zero into (movabsq $0 / movq $0 / xorl of itself): tcc's `*(uint64_t *)p = 0`. */
static int jit_zero_store(const jit_insn *prev, const jit_insn *st)
{
    char reg[16];
    const char *t = st->text;
    while (*t == ' ' || *t == '\t')
        t++;
    if ((!strncmp(t, "movq $0, ", 9) || !strncmp(t, "movq $0x0, ", 11)) && strchr(t, '('))
        return 1;
    if (sscanf(t, "movq %%%15[a-z0-9], %*s", reg) != 1 || !strchr(t, '('))
        return 0;
    const char *p = prev->text;
    while (*p == ' ' || *p == '\t')
        p++;
    char a[24], h[24], b[24];
    snprintf(a, sizeof a, "$0, %%%s", reg);
    snprintf(h, sizeof h, "$0x0, %%%s", reg);
    if ((!strncmp(p, "movabsq", 7) || !strncmp(p, "movq", 4)) && (strstr(p, a) || strstr(p, h)))
        return 1;
    snprintf(b, sizeof b, "%%%s, %%%s", reg, reg);
    return !strncmp(p, "xor", 3) && strstr(p, b) != NULL;
}

/* What the scan of a rule's scope found: `bad` decides a failure, `good` is the evidence of
 * a pass, `other` the memsets too short for the frame (clears_frame). */
typedef struct jit_scan {
    ti_strlist bad, good, other;
    int ncalls, ninsn, zero_stores;
    char *zero_first;       /* clears_frame: the first zero store, as evidence */
    long long min;          /* no_frame_copy: copies of at least this many bytes count */
} jit_scan;

/* clears_frame on one instruction: a zero word store (counted against the declared frame)
 * or a memset / bzero call, judged by its length. Returns the evidence string to free. */
static char *scan_clears_frame(const ti_rule *r, jit_fn *f, int i, jit_scan *sc)
{
    jit_insn *in = &f->insn[i];
    int call = ti_jit_is_call(in);
    /* A declared frame may be cleared by word stores of zero (tcc: a zero loaded into a
     * register, then stored through a pointer): counted, then compared with its size. */
    if (r->frame_size > 0 && i > 0 && jit_zero_store(&f->insn[i - 1], in)) {
        sc->zero_stores++;
        if (sc->zero_stores == 1)
            sc->zero_first = ti_jit_ev_insn(f, in);
    }
    if (!call || !in->target || (strcmp(in->target, "memset") && strcmp(in->target, "bzero")))
        return NULL;
    char *how = NULL;
    long long n = track_rdx(f, i, &how);
    char *e = ti_jit_ev_insn(f, in);
    if (n >= 0 && r->frame_size >= 0 && n < r->frame_size)
        ti_sl_addf(&sc->other, "memset of %lld bytes, frame is %lld: %s; %s", n, r->frame_size, e, how);
    else if (n >= 0 && r->frame_size < 0)
        ti_sl_addf(&sc->other, "memset of a constant %lld bytes (frame size undeclared: only a computed-length memset counts): %s; %s", n, e, how);
    else
        ti_sl_addf(&sc->good, "%s; %s%s", e, how, n < 0 ? " (dynamic frame size, accepted)" : "");
    free(how);
    return e;
}

/* no_frame_copy on one instruction: a memcpy / memmove call of at least the frame's size
 * (or of a computed length), a block copy; the indirect step call is noted as good. */
static char *scan_frame_copy(jit_fn *f, int i, jit_scan *sc)
{
    jit_insn *in = &f->insn[i];
    int call = ti_jit_is_call(in);
    char *e = NULL;
    if (call && in->target && (!strcmp(in->target, "memcpy") || !strcmp(in->target, "memmove"))) {
        char *how = NULL;
        long long n = track_rdx(f, i, &how);
        e = ti_jit_ev_insn(f, in);
        if (n < 0 || n >= sc->min)
            ti_sl_addf(&sc->bad, "copy%s: %s; %s", n < 0 ? " with a computed length" : "", e, how);
        else
            ti_sl_addf(&sc->good, "small copy of %lld bytes ignored: %s", n, e);
        free(how);
    } else if (strstr(in->text, "movs") && !strncmp(in->text, "rep", 3)) {
        ti_sl_addf(&sc->bad, "block copy: %s", e = ti_jit_ev_insn(f, in));
    } else if (call && !in->target) {
        ti_sl_addf(&sc->good, "indirect call (the step call): %s", e = ti_jit_ev_insn(f, in));
    }
    return e;
}

/* One instruction of the scope against the rule. */
static void scan_insn(const ti_contract *c, const ti_rule *r, jit_fn *f, int i, jit_scan *sc)
{
    jit_insn *in = &f->insn[i];
    sc->ninsn++;
    int call = ti_jit_is_call(in);
    sc->ncalls += call;
    char *e = NULL;
    switch (r->kind) {
    case TI_MUST_INLINE:
        if (call && in->target && !strcmp(in->target, r->callee))
            ti_sl_add(&sc->bad, e = ti_jit_ev_insn(f, in));
        break;
    case TI_NO_CALL:
        if (call && in->target && ti_sl_has(&r->names, in->target))
            ti_sl_addf(&sc->bad, "forbidden call: %s", e = ti_jit_ev_insn(f, in));
        break;
    case TI_NO_INIT_CHECK:   /* the cheap signals; the shape check runs after the scan */
        if (call && in->target && ti_sl_has(&c->initialisers, in->target))
            ti_sl_addf(&sc->bad, "initialiser call: %s", e = ti_jit_ev_insn(f, in));
        else if (!call && in->target && ti_is_guard_name(c, in->target))
            ti_sl_addf(&sc->bad, "name signal: guard access %s: %s", in->target, e = ti_jit_ev_insn(f, in));
        break;
    case TI_CLEARS_FRAME:
        e = scan_clears_frame(r, f, i, sc);
        break;
    case TI_NO_LOCKED:   /* a lock prefix (tcc's "lock;" decodes as its own line), xchg
                          * with a memory operand (locked by definition), mfence */
        if (!strncmp(in->text, "lock", 4) || (!strncmp(in->text, "xchg", 4) && strchr(in->text, '(')) ||
            !strncmp(in->text, "mfence", 6))
            ti_sl_addf(&sc->bad, "locked: %s", e = ti_jit_ev_insn(f, in));
        break;
    case TI_NO_FRAME_COPY:
        e = scan_frame_copy(f, i, sc);
        break;
    }
    free(e);
}

/* no_init_check: the shape check (shape.c) over the scope, with the scan's name signals. */
static void judge_init_check(ti_sprog *sp, const ti_contract *c, jit_fn **scope_fn, int nsc, const char *where,
                             jit_scan *sc, ti_result *res)
{
    int *scope = calloc((size_t)nsc + 1, sizeof(int));
    int ns = 0;
    for (int s = 0; s < nsc; s++) {
        int fi = ti_sp_find_fn(sp, scope_fn[s]->name);
        if (fi >= 0)
            scope[ns++] = fi;
    }
    ti_shape_check(sp, c, scope, ns, where, &sc->bad, res);
    free(scope);
}

static void judge_clears_frame(const ti_rule *r, const char *where, jit_scan *sc, ti_result *res)
{
    if (!sc->bad.n && !sc->good.n && r->frame_size > 0 && (long long)sc->zero_stores * 8 >= r->frame_size) {
        res->status = TI_PASS;
        res->summary = ti_fmt("%d zero 8-byte store%s the declared %lld-byte frame in %s", sc->zero_stores,
                              sc->zero_stores == 1 ? " clears" : "s clear", r->frame_size, where);
        add_ev(res, ti_fmt("first: %s", sc->zero_first));
    } else if (!sc->bad.n && sc->good.n) {
        res->status = TI_PASS;
        res->summary = ti_fmt("memset clears the frame in %s", where);
    } else {
        res->status = TI_FAIL;
        res->summary = sc->other.n ? ti_fmt("no memset covering the frame in %s", where) : ti_fmt("no memset call in %s", where);
        for (int k = 0; k < sc->other.n; k++)
            ti_sl_add(&sc->bad, sc->other.v[k]);
        if (!sc->bad.n)
            ti_sl_addf(&sc->bad, "%s: %d instruction(s), %d call(s), none to memset", where, sc->ninsn, sc->ncalls);
    }
}

/* "calls: a, b" (or "none"): every callee of the scope, the evidence of a pass. */
static char *callees_line(jit_fn **scope_fn, int nsc)
{
    ti_strlist callees = { 0 };
    for (int s = 0; s < nsc; s++)
        for (int i = 0; i < scope_fn[s]->ninsn; i++) {
            const jit_insn *in = &scope_fn[s]->insn[i];
            const char *t = in->target ? in->target : "(indirect)";
            if (ti_jit_is_call(in) && !ti_sl_has(&callees, t))
                ti_sl_add(&callees, t);
        }
    char *d = ti_sl_join(&callees, "calls: ", ", ", "none");
    ti_sl_free(&callees);
    return d;
}

/* The result of a scanned rule (not no_init_check) and its first evidence lines. */
static void judge(const ti_rule *r, int strict, jit_fn **scope_fn, int nsc, const char *where, jit_scan *sc,
                  ti_result *res)
{
    switch (r->kind) {
    case TI_MUST_INLINE:
        if (sc->bad.n) {
            res->status = strict ? TI_FAIL : TI_INFO;
            res->summary = ti_fmt("not inlined (backend does not inline): %d call(s) to %s", sc->bad.n, r->callee);
        } else {
            res->status = TI_PASS;
            res->summary = ti_fmt("no call to %s in %s", r->callee, where);
        }
        break;
    case TI_CLEARS_FRAME:
        judge_clears_frame(r, where, sc, res);
        break;
    default:
        if (sc->bad.n) {
            res->status = TI_FAIL;
            res->summary = ti_fmt("%d violation(s) in %s", sc->bad.n, where);
        } else {
            res->status = TI_PASS;
            res->summary = ti_fmt("none in %s (%d instructions, %d calls)", where, sc->ninsn, sc->ncalls);
            if (r->kind != TI_NO_FRAME_COPY) {
                char *d = callees_line(scope_fn, nsc);
                ti_sl_add(&sc->good, d);
                free(d);
            }
        }
    }
    ti_strlist *src = sc->bad.n ? &sc->bad : &sc->good;
    for (int k = 0; k < src->n && k < 6; k++)
        ti_sl_add(&res->evidence, src->v[k]);
}

static void jit_rule(jit_obj *j, ti_sprog *sp, const ti_contract *c, const ti_remarks *rm, ti_rule *r, int strict)
{
    ti_result *res = &r->jit;
    if (!(r->backends & TI_ON_JIT)) {
        res->status = TI_SKIPPED;
        res->summary = ti_fmt("not a JIT function (the contract's backends: aot)");
        return;
    }
    if (!ti_jit_find_fn(j, r->function)) {
        res->status = TI_FAIL;
        res->summary = ti_fmt("%s is not in the tcc object", r->function);
        add_ev(res, ti_fmt("no FUNC symbol %s in .symtab", r->function));
        return;
    }
    jit_fn **scope_fn;
    int nsc;
    scope_fns(j, rm, r->function, &scope_fn, &nsc);
    char *where = scope_desc(scope_fn, nsc);
    jit_scan sc = { 0 };
    sc.min = r->min_copy >= 0 ? r->min_copy : r->frame_size >= 0 ? r->frame_size : 1;
    for (int s = 0; s < nsc; s++)
        for (int i = 0; i < scope_fn[s]->ninsn; i++)
            scan_insn(c, r, scope_fn[s], i, &sc);
    if (r->kind == TI_NO_INIT_CHECK)
        judge_init_check(sp, c, scope_fn, nsc, where, &sc, res);
    else
        judge(r, strict, scope_fn, nsc, where, &sc, res);
    free(where);
    free(sc.zero_first);
    free(scope_fn);
    ti_sl_free(&sc.bad);
    ti_sl_free(&sc.good);
    ti_sl_free(&sc.other);
}

int ti_jit_check(ti_contract *c, const ti_options *o, const ti_remarks *rm, const char *obj_path, char *err,
                 size_t errsz)
{
    if (ti_tcc_compile(o, o->tu, obj_path, err, errsz))
        return -1;
    LLVMInitializeX86TargetInfo();
    LLVMInitializeX86TargetMC();
    LLVMInitializeX86Disassembler();
    jit_obj j = { 0 };
    if (ti_jit_load(obj_path, &j, err, errsz)) {
        ti_jit_free(&j);
        return -1;
    }
    ti_sprog sp = { 0 };
    if (ti_shape_from_tcc(&sp, &j, err, errsz)) {
        ti_sp_free(&sp);
        ti_jit_free(&j);
        return -1;
    }
    for (int k = 0; k < c->nrules; k++)
        jit_rule(&j, &sp, c, rm, &c->rules[k], o->jit_strict);
    ti_sp_free(&sp);
    ti_jit_free(&j);
    return 0;
}
