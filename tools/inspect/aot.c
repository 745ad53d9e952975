/*
 * aot.c - the AOT side: the module's LLVM IR (parsed with the LLVM-C API) and the
 * inliner's optimisation remarks.
 *
 * Where a rule is evaluated (its "scope"):
 *   - the function itself when it is still defined in the IR (its body already holds
 *     everything the optimiser inlined into it);
 *   - a function that no longer exists as a symbol (a static function inlined at every
 *     call site) is evaluated on every function it was inlined into, found from the
 *     "Inlined" remarks (transitively, until a host that is still defined). This is
 *     conservative: the host's own code is checked too, and the evidence names the host.
 *     A function that is neither defined nor inlined anywhere fails the rule ("not in
 *     the module").
 *
 * must_inline g into F: satisfied per call site by an "Inlined" remark whose callee is g
 * and whose caller is F or a function inlined into F. It fails when a call to g is left
 * in F's code (the IR decides; the missed remark's reason is attached as evidence), or
 * when neither a remark nor a call exists (the contract names a call F does not make).
 */
#include "shape.h"

#include <llvm-c/Core.h>
#include <llvm-c/IRReader.h>
#include <llvm-c/Target.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct aot_ctx {
    LLVMContextRef ctx;
    LLVMModuleRef mod;
    LLVMTargetDataRef td;
    const ti_remarks *rm;
    const ti_contract *c;
    unsigned byval_kind;
    ti_sprog sp;        /* the shape model of the module (no_init_check) */
} aot_ctx;

static const char *vname(LLVMValueRef v)
{
    size_t n;
    const char *s = LLVMGetValueName2(v, &n);
    return s ? s : "";
}

static LLVMValueRef strip_casts(LLVMValueRef v)
{
    for (;;) {
        if (LLVMIsAConstantExpr(v)) {
            LLVMOpcode op = LLVMGetConstOpcode(v);
            if (op == LLVMBitCast || op == LLVMAddrSpaceCast || op == LLVMGetElementPtr) {
                v = LLVMGetOperand(v, 0);
                continue;
            }
        }
        if (LLVMIsABitCastInst(v) || LLVMIsAGetElementPtrInst(v) || LLVMIsAAddrSpaceCastInst(v)) {
            v = LLVMGetOperand(v, 0);
            continue;
        }
        if (LLVMIsAGlobalAlias(v)) {
            v = LLVMAliasGetAliasee(v);
            continue;
        }
        return v;
    }
}

/* The direct callee's name, or NULL for an indirect call / inline asm. */
static const char *callee_name(LLVMValueRef call)
{
    LLVMValueRef v = LLVMGetCalledValue(call);
    if (!v)
        return NULL;
    v = strip_casts(v);
    if (LLVMIsAFunction(v))
        return vname(v);
    return NULL;
}

static int is_call(LLVMValueRef i)
{
    LLVMOpcode op = LLVMGetInstructionOpcode(i);
    return op == LLVMCall || op == LLVMInvoke || op == LLVMCallBr;
}

static int is_memset(const char *n)
{
    return n && (!strncmp(n, "llvm.memset.", 12) || !strcmp(n, "memset") || !strcmp(n, "__memset_chk")
                 || !strcmp(n, "bzero") || !strcmp(n, "explicit_bzero"));
}

static int is_memcpy(const char *n)
{
    return n && (!strncmp(n, "llvm.memcpy.", 12) || !strncmp(n, "llvm.memmove.", 13) || !strcmp(n, "memcpy")
                 || !strcmp(n, "memmove") || !strcmp(n, "__memcpy_chk") || !strcmp(n, "__memmove_chk")
                 || !strcmp(n, "mempcpy") || !strcmp(n, "bcopy"));
}

/* "in F: <instruction> (file:line)" */
char *ti_ir_ev_instr(const char *fn, LLVMValueRef i)
{
    char *p = LLVMPrintValueToString(i);
    char *one = ti_oneline(p, 220);
    LLVMDisposeMessage(p);
    unsigned fl = 0;
    const char *file = LLVMGetDebugLocFilename(i, &fl);
    char *s;
    if (file && fl)
        s = ti_fmt("%s: `%s` (%.*s:%u)", fn, one, (int)fl, file, LLVMGetDebugLocLine(i));
    else
        s = ti_fmt("%s: `%s`", fn, one);
    free(one);
    return s;
}

static void add_ev(ti_result *r, char *s)
{
    ti_sl_add(&r->evidence, s);
    free(s);
}

static char *ev_remark(const ti_remark *m)
{
    return ti_fmt("remark %s%s%s: %s (%s:%u:%u)", m->name, m->reason ? " reason=" : "", m->reason ? m->reason : "",
                  m->text ? m->text : "", m->file ? m->file : "?", m->line, m->col);
}

static LLVMValueRef defined_fn(aot_ctx *a, const char *name)
{
    LLVMValueRef f = LLVMGetNamedFunction(a->mod, name);
    if (f && !LLVMIsDeclaration(f))
        return f;
    return NULL;
}

/* The functions a rule on `fn` is evaluated on; returns 0 when fn is defined itself. */
static void scope_of(aot_ctx *a, const char *fn, ti_strlist *hosts)
{
    if (defined_fn(a, fn)) {
        ti_sl_add(hosts, fn);
        return;
    }
    ti_strlist work = { 0 };
    ti_sl_add(&work, fn);
    for (int w = 0; w < work.n; w++) {
        for (int i = 0; i < a->rm->n; i++) {
            const ti_remark *m = &a->rm->v[i];
            if (!m->passed || !m->callee || strcmp(m->callee, work.v[w]) || !m->caller)
                continue;
            if (ti_sl_has(&work, m->caller))
                continue;
            ti_sl_add(&work, m->caller);
            if (defined_fn(a, m->caller) && !ti_sl_has(hosts, m->caller))
                ti_sl_add(hosts, m->caller);
        }
    }
    ti_sl_free(&work);
}

/* Sets the scope; returns -1 (and fails the result) when there is nothing to check. */
static int scope_or_fail(aot_ctx *a, const char *fn, ti_strlist *hosts, ti_result *res, char **where)
{
    scope_of(a, fn, hosts);
    if (hosts->n == 0) {
        res->status = TI_FAIL;
        res->summary = ti_fmt("%s is not in the module (not defined, not inlined anywhere)", fn);
        add_ev(res, ti_fmt("no definition of @%s in the IR and no Inlined remark with Callee=%s", fn, fn));
        return -1;
    }
    if (defined_fn(a, fn))
        *where = ti_strdup(fn);
    else {
        size_t len = 0;
        for (int i = 0; i < hosts->n; i++)
            len += strlen(hosts->v[i]) + 2;
        char *s = calloc(1, len + 1);
        for (int i = 0; i < hosts->n; i++) {
            if (i)
                strcat(s, ", ");
            strcat(s, hosts->v[i]);
        }
        *where = ti_fmt("%s's inlined copies in %s", fn, s);
        free(s);
        add_ev(res, ti_fmt("%s no longer exists as a symbol (inlined everywhere): checked in %s", fn, *where));
    }
    return 0;
}

#define FOR_EACH_INSTR(F, I)                                                                    \
    for (LLVMBasicBlockRef bb_ = LLVMGetFirstBasicBlock(F); bb_; bb_ = LLVMGetNextBasicBlock(bb_)) \
        for (LLVMValueRef I = LLVMGetFirstInstruction(bb_); I; I = LLVMGetNextInstruction(I))

/* ---- must_inline ------------------------------------------------------------------------ */
static void check_must_inline(aot_ctx *a, ti_rule *r)
{
    ti_result *res = &r->aot;
    ti_strlist into = { 0 };   /* F and what was inlined into F */
    ti_sl_add(&into, r->function);
    ti_inlined_closure(a->rm, r->function, &into);
    int sites = 0, missed = 0;
    for (int i = 0; i < a->rm->n; i++) {
        const ti_remark *m = &a->rm->v[i];
        if (!m->callee || strcmp(m->callee, r->callee) || !m->caller || !ti_sl_has(&into, m->caller))
            continue;
        if (m->passed) {
            sites++;
            if (sites <= 3)
                add_ev(res, ev_remark(m));
        } else
            missed++;
    }
    /* the IR decides: any call to the callee left in F's code is a failure */
    ti_strlist hosts = { 0 };
    scope_of(a, r->function, &hosts);
    int left = 0;
    ti_strlist calls = { 0 };
    for (int h = 0; h < hosts.n; h++) {
        LLVMValueRef f = defined_fn(a, hosts.v[h]);
        FOR_EACH_INSTR(f, i)
        {
            if (!is_call(i))
                continue;
            const char *cn = callee_name(i);
            if (cn && !strcmp(cn, r->callee)) {
                left++;
                char *e = ti_ir_ev_instr(hosts.v[h], i);
                ti_sl_add(&calls, e);
                free(e);
            }
        }
    }
    res->sites = sites;
    if (left) {
        res->status = TI_FAIL;
        res->summary = ti_fmt("%d call(s) to %s left in %s (%d site(s) inlined)", left, r->callee, r->function, sites);
        ti_strlist ev = { 0 };
        for (int k = 0; k < calls.n; k++)
            ti_sl_add(&ev, calls.v[k]);
        for (int i = 0; i < a->rm->n; i++) {
            const ti_remark *m = &a->rm->v[i];
            if (!m->passed && m->callee && !strcmp(m->callee, r->callee) && m->caller && ti_sl_has(&into, m->caller)) {
                char *s = ev_remark(m); /* ti_sl_add copies it */
                ti_sl_add(&ev, s);
                free(s);
            }
        }
        for (int k = 0; k < res->evidence.n; k++)
            ti_sl_add(&ev, res->evidence.v[k]);
        ti_sl_free(&res->evidence);
        res->evidence = ev;
    } else if (sites == 0) {
        res->status = TI_FAIL;
        if (!hosts.n && !defined_fn(a, r->function))
            res->summary = ti_fmt("%s is not in the module and has no inlining remarks", r->function);
        else
            res->summary = ti_fmt("no call site of %s in %s: no Inlined remark and no call", r->callee, r->function);
        add_ev(res, ti_fmt("remarks: no Inlined remark with Callee=%s, Caller in {%s + %d inlined}; IR: no call",
                           r->callee, r->function, into.n - 1));
    } else {
        res->status = TI_PASS;
        res->summary = ti_fmt("inlined at %d site(s)%s", sites,
                              missed ? " (a missed remark exists but no call is left in the IR)" : "");
    }
    ti_sl_free(&calls);
    ti_sl_free(&hosts);
    ti_sl_free(&into);
}

/* ---- no_init_check / no_call ------------------------------------------------------------- */
static void check_calls_and_guards(aot_ctx *a, ti_rule *r)
{
    ti_result *res = &r->aot;
    ti_strlist hosts = { 0 };
    char *where = NULL;
    if (scope_or_fail(a, r->function, &hosts, res, &where)) {
        ti_sl_free(&hosts);
        return;
    }
    int ninstr = 0, ncalls = 0, bad = 0, indirect = 0;
    ti_strlist callees = { 0 }, badev = { 0 };
    for (int h = 0; h < hosts.n; h++) {
        LLVMValueRef f = defined_fn(a, hosts.v[h]);
        FOR_EACH_INSTR(f, i)
        {
            ninstr++;
            LLVMOpcode op = LLVMGetInstructionOpcode(i);
            if (is_call(i)) {
                const char *cn = callee_name(i);
                if (!cn) {
                    indirect++;
                    continue;
                }
                if (!strncmp(cn, "llvm.", 5))
                    continue;
                ncalls++;
                if (!ti_sl_has(&callees, cn))
                    ti_sl_add(&callees, cn);
                /* once primitives are the shape check's (with their control and init function) */
                int hit = r->kind == TI_NO_CALL ? ti_sl_has(&r->names, cn) : ti_sl_has(&a->c->initialisers, cn);
                if (hit) {
                    bad++;
                    char *e = ti_ir_ev_instr(hosts.v[h], i);
                    ti_sl_addf(&badev, "%s %s", r->kind == TI_NO_CALL ? "forbidden call:" : "initialiser call:", e);
                    free(e);
                }
            } else if (r->kind == TI_NO_INIT_CHECK
                       && (op == LLVMLoad || op == LLVMAtomicRMW || op == LLVMAtomicCmpXchg)) {
                LLVMValueRef p = strip_casts(LLVMGetOperand(i, 0));
                if (LLVMIsAGlobalVariable(p)) {
                    if (ti_is_guard_name(a->c, vname(p))) {
                        bad++;
                        char *e = ti_ir_ev_instr(hosts.v[h], i);
                        ti_sl_addf(&badev, "name signal: guard load of @%s: %s", vname(p), e);
                        free(e);
                    }
                }
            }
        }
    }
    if (r->kind == TI_NO_INIT_CHECK) {
        int *scope = calloc((size_t)hosts.n + 1, sizeof(int));
        int ns = 0;
        for (int h = 0; h < hosts.n; h++) {
            int fi = ti_sp_find_fn(&a->sp, hosts.v[h]);
            if (fi >= 0)
                scope[ns++] = fi;
        }
        ti_shape_check(&a->sp, a->c, scope, ns, where, &badev, res);
        free(scope);
    } else if (bad) {
        res->status = TI_FAIL;
        res->summary = ti_fmt("%d forbidden call(s) in %s", bad, where);
        ti_strlist ev = { 0 };
        for (int k = 0; k < badev.n; k++)
            ti_sl_add(&ev, badev.v[k]);
        for (int k = 0; k < res->evidence.n; k++)
            ti_sl_add(&ev, res->evidence.v[k]);
        ti_sl_free(&res->evidence);
        res->evidence = ev;
    } else {
        res->status = TI_PASS;
        res->summary = ti_fmt("none of %d direct call(s) in %s is forbidden (%d instructions, %d indirect)",
                              ncalls, where, ninstr, indirect);
        char *s = ti_sl_join(&callees, "direct callees: ", ", ", "none");
        ti_sl_add(&res->evidence, s);
        free(s);
    }
    free(where);
    ti_sl_free(&callees);
    ti_sl_free(&badev);
    ti_sl_free(&hosts);
}

/* no_locked: what x86-64 executes as a locked instruction: atomicrmw and cmpxchg (lock
 * prefix), a sequentially consistent atomic store (xchg with memory) or fence (mfence).
 * Acquire loads and release stores are plain moves and pass. */
static void check_no_locked(aot_ctx *a, ti_rule *r)
{
    ti_result *res = &r->aot;
    ti_strlist hosts = { 0 };
    char *where = NULL;
    if (scope_or_fail(a, r->function, &hosts, res, &where)) {
        ti_sl_free(&hosts);
        return;
    }
    int ninstr = 0, bad = 0;
    for (int h = 0; h < hosts.n; h++) {
        LLVMValueRef f = defined_fn(a, hosts.v[h]);
        FOR_EACH_INSTR(f, i)
        {
            ninstr++;
            LLVMOpcode op = LLVMGetInstructionOpcode(i);
            const char *what = NULL;
            if (op == LLVMAtomicRMW)
                what = "atomicrmw";
            else if (op == LLVMAtomicCmpXchg)
                what = "cmpxchg";
            else if (op == LLVMStore && LLVMGetOrdering(i) == LLVMAtomicOrderingSequentiallyConsistent)
                what = "seq_cst store (xchg)";
            else if (op == LLVMFence && LLVMGetOrdering(i) == LLVMAtomicOrderingSequentiallyConsistent)
                what = "seq_cst fence (mfence)";
            if (what) {
                bad++;
                char *e = ti_ir_ev_instr(hosts.v[h], i);
                ti_sl_addf(&res->evidence, "locked: %s: %s", what, e);
                free(e);
            }
        }
    }
    if (bad) {
        res->status = TI_FAIL;
        res->summary = ti_fmt("%d locked instruction(s) in %s", bad, where);
    } else {
        res->status = TI_PASS;
        res->summary = ti_fmt("no locked instruction in %s (%d instructions)", where, ninstr);
    }
    free(where);
    ti_sl_free(&hosts);
}

/* ---- frame rules ---------------------------------------------------------------------------- */
static long long frame_size(aot_ctx *a, ti_rule *r)
{
    if (r->frame_size >= 0)
        return r->frame_size;
    if (r->frame_type) {
        LLVMTypeRef t = LLVMGetTypeByName2(a->ctx, r->frame_type);
        if (t && LLVMTypeIsSized(t))
            return (long long)LLVMABISizeOfType(a->td, t);
    }
    return -1;
}

/* Decompose a pointer into base + constant byte offset; returns 0 when not constant. */
static int ptr_offset(aot_ctx *a, LLVMValueRef p, LLVMValueRef *base, long long *off)
{
    long long o = 0;
    for (;;) {
        int is_gep = LLVMIsAGetElementPtrInst(p)
                     || (LLVMIsAConstantExpr(p) && LLVMGetConstOpcode(p) == LLVMGetElementPtr);
        if (is_gep) {
            LLVMTypeRef t = LLVMGetGEPSourceElementType(p);
            int n = LLVMGetNumOperands(p);
            for (int k = 1; k < n; k++) {
                LLVMValueRef idx = LLVMGetOperand(p, (unsigned)k);
                if (!LLVMIsAConstantInt(idx))
                    return 0;
                long long iv = LLVMConstIntGetSExtValue(idx);
                if (k == 1) {
                    o += iv * (long long)LLVMABISizeOfType(a->td, t);
                } else if (LLVMGetTypeKind(t) == LLVMStructTypeKind) {
                    o += (long long)LLVMOffsetOfElement(a->td, t, (unsigned)iv);
                    t = LLVMStructGetTypeAtIndex(t, (unsigned)iv);
                } else {
                    t = LLVMGetElementType(t);
                    o += iv * (long long)LLVMABISizeOfType(a->td, t);
                }
            }
            p = LLVMGetOperand(p, 0);
            continue;
        }
        if (LLVMIsABitCastInst(p) || (LLVMIsAConstantExpr(p) && LLVMGetConstOpcode(p) == LLVMBitCast)) {
            p = LLVMGetOperand(p, 0);
            continue;
        }
        break;
    }
    *base = p;
    *off = o;
    return 1;
}

typedef struct span { LLVMValueRef base; long long lo, hi; } span;

/* The longest contiguous zero-filled run on `base` (spans merged, from any start). */
static long long longest_run(span *s, int n, LLVMValueRef base)
{
    long long best = 0;
    for (int a = 0; a < n; a++) {
        if (s[a].base != base)
            continue;
        long long start = s[a].lo, end = s[a].hi;
        int grew = 1;
        while (grew) {
            grew = 0;
            for (int k = 0; k < n; k++)
                if (s[k].base == base && s[k].lo <= end && s[k].hi > end && s[k].lo >= start) {
                    end = s[k].hi;
                    grew = 1;
                }
        }
        if (end - start > best)
            best = end - start;
    }
    return best;
}

static char *describe_len(const char *fn, LLVMValueRef len)
{
    if (LLVMIsAInstruction(len))
        return ti_ir_ev_instr(fn, len);
    if (LLVMIsAArgument(len)) {
        LLVMValueRef f = LLVMGetParamParent(len);
        unsigned k = 0;
        for (LLVMValueRef p = LLVMGetFirstParam(f); p && p != len; p = LLVMGetNextParam(p))
            k++;
        return ti_fmt("%s: parameter #%u of %s (the length is the caller's)", fn, k + 1, vname(f));
    }
    char *p = LLVMPrintValueToString(len);
    char *s = ti_fmt("%s: %s", fn, p);
    LLVMDisposeMessage(p);
    return s;
}

static void check_clears_frame(aot_ctx *a, ti_rule *r)
{
    ti_result *res = &r->aot;
    ti_strlist hosts = { 0 };
    char *where = NULL;
    if (scope_or_fail(a, r->function, &hosts, res, &where)) {
        ti_sl_free(&hosts);
        return;
    }
    long long fs = frame_size(a, r);
    span *sp = NULL;
    int nsp = 0, cap = 0;
    char *pass_sum = NULL, *short_sum = NULL;
    ti_strlist pass_ev = { 0 }, other = { 0 };
    for (int h = 0; h < hosts.n && !pass_sum; h++) {
        LLVMValueRef f = defined_fn(a, hosts.v[h]);
        FOR_EACH_INSTR(f, i)
        {
            LLVMValueRef ptr = NULL;
            long long lo = 0, hi = 0;
            if (is_call(i) && is_memset(callee_name(i))) {
                const char *cn = callee_name(i);
                int bz = !strcmp(cn, "bzero") || !strcmp(cn, "explicit_bzero");
                LLVMValueRef val = bz ? NULL : LLVMGetOperand(i, 1);
                LLVMValueRef len = LLVMGetOperand(i, bz ? 1 : 2);
                if (val && !(LLVMIsAConstantInt(val) && LLVMConstIntGetZExtValue(val) == 0)) {
                    char *e = ti_ir_ev_instr(hosts.v[h], i);
                    ti_sl_addf(&other, "memset with a non-zero or unknown value: %s", e);
                    free(e);
                    continue;
                }
                if (!LLVMIsAConstantInt(len)) {
                    /* a computed length: the frame size is dynamic; accept and say so */
                    pass_sum = ti_fmt("memset with a computed length clears the frame in %s (dynamic frame size, accepted)",
                                      where);
                    char *e = ti_ir_ev_instr(hosts.v[h], i);
                    ti_sl_add(&pass_ev, e);
                    free(e);
                    e = describe_len(hosts.v[h], len);
                    ti_sl_addf(&pass_ev, "length operand (computed): %s", e);
                    free(e);
                    break;
                }
                long long n = (long long)LLVMConstIntGetZExtValue(len);
                if (fs < 0) {
                    /* an undeclared frame is a dynamic one: a constant memset clears
                     * something else (a field, a header), not the frame */
                    char *e = ti_ir_ev_instr(hosts.v[h], i);
                    ti_sl_addf(&other, "memset of a constant %lld bytes (frame size undeclared: only a computed-length memset counts): %s", n, e);
                    free(e);
                    continue;
                }
                ptr = LLVMGetOperand(i, 0);
                lo = 0;
                hi = n;
                char *e = ti_ir_ev_instr(hosts.v[h], i);
                ti_sl_addf(&other, "memset of %lld bytes: %s", n, e);
                free(e);
            } else if (LLVMGetInstructionOpcode(i) == LLVMStore && LLVMIsNull(LLVMGetOperand(i, 0))) {
                ptr = LLVMGetOperand(i, 1);
                hi = (long long)LLVMStoreSizeOfType(a->td, LLVMTypeOf(LLVMGetOperand(i, 0)));
            }
            if (!ptr)
                continue;
            LLVMValueRef base;
            long long off;
            if (!ptr_offset(a, ptr, &base, &off))
                continue;
            if (nsp == cap) {
                cap = cap ? cap * 2 : 32;
                sp = realloc(sp, sizeof(span) * (size_t)cap);
            }
            sp[nsp++] = (span){ base, off + lo, off + hi };
            if (fs >= 0) {
                long long cov = longest_run(sp, nsp, base);
                if (cov >= fs) {
                    pass_sum = ti_fmt("zero fill covers the %lld-byte frame in %s (a contiguous run of %lld bytes)", fs, where, cov);
                    char *e = ti_ir_ev_instr(hosts.v[h], i);
                    ti_sl_addf(&pass_ev, "last zero write completing the cover: %s", e);
                    free(e);
                    break;
                }
                if (!short_sum || cov > 0) {
                    free(short_sum);
                    short_sum = ti_fmt("zero writes cover at most %lld contiguous bytes of the %lld-byte frame", cov, fs);
                }
            }
        }
    }
    if (pass_sum) {
        res->status = TI_PASS;
        res->summary = pass_sum;
        for (int k = 0; k < pass_ev.n; k++)
            ti_sl_add(&res->evidence, pass_ev.v[k]);
    } else {
        res->status = TI_FAIL;
        if (short_sum)
            res->summary = ti_fmt("%s in %s", short_sum, where);
        else if (fs < 0 && nsp)
            res->summary = ti_fmt("no memset in %s; zero stores found but the frame size is not declared", where);
        else
            res->summary = ti_fmt("no memset/zero stores clearing the frame in %s", where);
        ti_strlist ev = { 0 };
        for (int k = 0; k < other.n; k++)
            ti_sl_add(&ev, other.v[k]);
        if (!other.n)
            ti_sl_addf(&ev, "%s: no call to llvm.memset/memset/bzero; %d zero store(s)", where, nsp);
        for (int k = 0; k < res->evidence.n; k++)
            ti_sl_add(&ev, res->evidence.v[k]);
        ti_sl_free(&res->evidence);
        res->evidence = ev;
    }
    free(short_sum);
    free(sp);
    free(where);
    ti_sl_free(&pass_ev);
    ti_sl_free(&other);
    ti_sl_free(&hosts);
}

static void check_no_frame_copy(aot_ctx *a, ti_rule *r)
{
    ti_result *res = &r->aot;
    ti_strlist hosts = { 0 };
    char *where = NULL;
    if (scope_or_fail(a, r->function, &hosts, res, &where)) {
        ti_sl_free(&hosts);
        return;
    }
    long long fs = frame_size(a, r);
    long long min = r->min_copy >= 0 ? r->min_copy : fs >= 0 ? fs : 1;
    ti_strlist bad = { 0 }, good = { 0 };
    for (int h = 0; h < hosts.n; h++) {
        LLVMValueRef f = defined_fn(a, hosts.v[h]);
        FOR_EACH_INSTR(f, i)
        {
            LLVMOpcode op = LLVMGetInstructionOpcode(i);
            if (is_call(i)) {
                const char *cn = callee_name(i);
                if (is_memcpy(cn)) {
                    LLVMValueRef len = LLVMGetOperand(i, 2);
                    if (!strcmp(cn, "bcopy"))
                        len = LLVMGetOperand(i, 2);
                    char *e = ti_ir_ev_instr(hosts.v[h], i);
                    if (!LLVMIsAConstantInt(len))
                        ti_sl_addf(&bad, "copy with a computed length (may be the frame): %s", e);
                    else if ((long long)LLVMConstIntGetZExtValue(len) >= min)
                        ti_sl_addf(&bad, "copy of %llu bytes (>= %lld): %s", LLVMConstIntGetZExtValue(len), min, e);
                    else
                        ti_sl_addf(&good, "small copy of %llu bytes ignored (< %lld): %s", LLVMConstIntGetZExtValue(len), min, e);
                    free(e);
                    continue;
                }
                unsigned na = LLVMGetNumArgOperands(i);
                int byval = 0;
                for (unsigned k = 0; k < na; k++)
                    if (LLVMGetCallSiteEnumAttribute(i, k + 1, a->byval_kind))
                        byval = 1;
                char *e = ti_ir_ev_instr(hosts.v[h], i);
                if (byval)
                    ti_sl_addf(&bad, "argument passed by value (byval copy): %s", e);
                else if (!cn)
                    ti_sl_addf(&good, "indirect call (the step call) passes pointers only: %s", e);
                free(e);
            } else if (op == LLVMLoad || op == LLVMStore) {
                LLVMTypeRef t = LLVMTypeOf(op == LLVMLoad ? i : LLVMGetOperand(i, 0));
                LLVMTypeKind k = LLVMGetTypeKind(t);
                if ((k == LLVMStructTypeKind || k == LLVMArrayTypeKind)
                    && (long long)LLVMStoreSizeOfType(a->td, t) >= min) {
                    char *e = ti_ir_ev_instr(hosts.v[h], i);
                    ti_sl_addf(&bad, "aggregate %s of %llu bytes: %s", op == LLVMLoad ? "load" : "store",
                               LLVMStoreSizeOfType(a->td, t), e);
                    free(e);
                }
            }
        }
    }
    ti_strlist ev = { 0 };
    if (bad.n) {
        res->status = TI_FAIL;
        res->summary = ti_fmt("%d frame copy(ies) in %s", bad.n, where);
        for (int k = 0; k < bad.n; k++)
            ti_sl_add(&ev, bad.v[k]);
    } else {
        res->status = TI_PASS;
        res->summary = ti_fmt("no memcpy/memmove of >= %lld bytes, no byval argument, no aggregate load/store in %s", min, where);
        for (int k = 0; k < good.n && k < 4; k++)
            ti_sl_add(&ev, good.v[k]);
    }
    for (int k = 0; k < res->evidence.n; k++)
        ti_sl_add(&ev, res->evidence.v[k]);
    ti_sl_free(&res->evidence);
    res->evidence = ev;
    free(where);
    ti_sl_free(&bad);
    ti_sl_free(&good);
    ti_sl_free(&hosts);
}

int ti_aot_check(ti_contract *c, const char *ir_path, const ti_remarks *rm, char *err, size_t errsz)
{
    aot_ctx a = { 0 };
    a.c = c;
    a.rm = rm;
    a.ctx = LLVMContextCreate();
    LLVMMemoryBufferRef buf = NULL;
    char *msg = NULL;
    if (LLVMCreateMemoryBufferWithContentsOfFile(ir_path, &buf, &msg)) {
        snprintf(err, errsz, "%s: cannot read the IR: %s", ir_path, msg ? msg : "?");
        LLVMDisposeMessage(msg);
        LLVMContextDispose(a.ctx);
        return -1;
    }
    if (LLVMParseIRInContext(a.ctx, buf, &a.mod, &msg)) {
        char *one = ti_oneline(msg ? msg : "?", 300);
        snprintf(err, errsz, "%s: not valid LLVM IR: %s", ir_path, one);
        free(one);
        LLVMDisposeMessage(msg);
        LLVMContextDispose(a.ctx);
        return -1;
    }
    a.td = LLVMGetModuleDataLayout(a.mod);
    a.byval_kind = LLVMGetEnumAttributeKindForName("byval", 5);
    if (ti_shape_from_ir(&a.sp, a.mod, err, errsz)) {
        ti_sp_free(&a.sp);
        LLVMDisposeModule(a.mod);
        LLVMContextDispose(a.ctx);
        return -1;
    }
    for (int k = 0; k < c->nrules; k++) {
        ti_rule *r = &c->rules[k];
        if (!(r->backends & TI_ON_AOT)) {
            r->aot.status = TI_SKIPPED;
            r->aot.summary = ti_fmt("not an AOT function (the contract's backends: jit)");
            continue;
        }
        switch (r->kind) {
        case TI_MUST_INLINE: check_must_inline(&a, r); break;
        case TI_NO_INIT_CHECK:
        case TI_NO_CALL: check_calls_and_guards(&a, r); break;
        case TI_CLEARS_FRAME: check_clears_frame(&a, r); break;
        case TI_NO_FRAME_COPY: check_no_frame_copy(&a, r); break;
        case TI_NO_LOCKED: check_no_locked(&a, r); break;
        }
    }
    ti_sp_free(&a.sp);
    LLVMDisposeModule(a.mod);
    LLVMContextDispose(a.ctx);
    return 0;
}
