/*
 * shape_ir.c - the shape model (shape.h) of an LLVM module (the AOT side).
 *
 * Every defined function becomes blocks (its basic blocks) and events:
 *   - STORE: store, atomicrmw, cmpxchg, llvm.memset/memcpy/memmove, with the pointer
 *     decomposed into a global or a parameter plus a constant byte offset (GEPs with a
 *     non-constant index give an unknown offset: the whole global);
 *   - CALL: direct calls with their first arguments (globals, parameters, functions);
 *     indirect calls, with the global the function pointer was loaded from;
 *   - BRANCH: a conditional br or a switch whose condition is computed from a load of a
 *     global (followed through compares, casts, logic, phis, selects, llvm.expect).
 * Function addresses in global initialisers are the initial targets of function pointers.
 */
#include "shape.h"

#include <llvm-c/Core.h>
#include <llvm-c/DebugInfo.h>
#include <llvm-c/Target.h>
#include <stdlib.h>
#include <string.h>

typedef struct ir_ctx {
    ti_sprog *p;
    LLVMModuleRef mod;
    LLVMTargetDataRef td;
} ir_ctx;

static const char *vname(LLVMValueRef v)
{
    size_t n;
    const char *s = LLVMGetValueName2(v, &n);
    return s ? s : "";
}

static int global_index(ir_ctx *c, LLVMValueRef g)
{
    LLVMTypeRef t = LLVMGlobalGetValueType(g);
    long long size = LLVMTypeIsSized(t) ? (long long)LLVMABISizeOfType(c->td, t) : -1;
    return ti_sp_global(c->p, vname(g), LLVMIsGlobalConstant(g), size);
}

static int is_const_op(LLVMValueRef v, LLVMOpcode op)
{
    return LLVMIsAConstantExpr(v) && LLVMGetConstOpcode(v) == op;
}

/* A pointer as global/parameter/function + byte offset (-1 when not constant). */
static ti_sval decompose(ir_ctx *c, LLVMValueRef v)
{
    long long off = 0;
    int known = 1;
    for (int guard = 0; guard < 64; guard++) {
        if (LLVMIsAGetElementPtrInst(v) || is_const_op(v, LLVMGetElementPtr)) {
            LLVMTypeRef t = LLVMGetGEPSourceElementType(v);
            int n = LLVMGetNumOperands(v);
            for (int k = 1; k < n; k++) {
                LLVMValueRef idx = LLVMGetOperand(v, (unsigned)k);
                if (!LLVMIsAConstantInt(idx)) {
                    known = 0;
                    if (k > 1 && LLVMGetTypeKind(t) != LLVMStructTypeKind)
                        t = LLVMGetElementType(t);
                    continue;
                }
                long long iv = LLVMConstIntGetSExtValue(idx);
                if (k == 1)
                    off += iv * (long long)LLVMABISizeOfType(c->td, t);
                else if (LLVMGetTypeKind(t) == LLVMStructTypeKind) {
                    off += (long long)LLVMOffsetOfElement(c->td, t, (unsigned)iv);
                    t = LLVMStructGetTypeAtIndex(t, (unsigned)iv);
                } else {
                    t = LLVMGetElementType(t);
                    off += iv * (long long)LLVMABISizeOfType(c->td, t);
                }
            }
            v = LLVMGetOperand(v, 0);
            continue;
        }
        if (LLVMIsABitCastInst(v) || LLVMIsAAddrSpaceCastInst(v) || is_const_op(v, LLVMBitCast)
            || is_const_op(v, LLVMAddrSpaceCast)) {
            v = LLVMGetOperand(v, 0);
            continue;
        }
        break;
    }
    if (LLVMIsAGlobalAlias(v))
        v = LLVMAliasGetAliasee(v);
    if (LLVMIsAGlobalVariable(v))
        return (ti_sval){ TI_SV_GLOBAL, global_index(c, v), known ? off : -1 };
    if (LLVMIsAFunction(v))
        return (ti_sval){ TI_SV_FUNC, ti_sp_fn(c->p, vname(v)), 0 };
    if (LLVMIsAArgument(v)) {
        LLVMValueRef f = LLVMGetParamParent(v);
        int k = 0;
        for (LLVMValueRef a = LLVMGetFirstParam(f); a && a != v; a = LLVMGetNextParam(a))
            k++;
        return (ti_sval){ TI_SV_PARAM, k, known ? off : -1 };
    }
    return (ti_sval){ TI_SV_NONE, -1, 0 };
}

static int block_index(LLVMValueRef fn, LLVMBasicBlockRef bb)
{
    int i = 0;
    for (LLVMBasicBlockRef b = LLVMGetFirstBasicBlock(fn); b; b = LLVMGetNextBasicBlock(b), i++)
        if (b == bb)
            return i;
    return -1;
}

static int is_call(LLVMValueRef i)
{
    LLVMOpcode op = LLVMGetInstructionOpcode(i);
    return op == LLVMCall || op == LLVMInvoke || op == LLVMCallBr;
}

static LLVMValueRef direct_callee(LLVMValueRef call)
{
    LLVMValueRef v = LLVMGetCalledValue(call);
    while (v && (LLVMIsABitCastInst(v) || is_const_op(v, LLVMBitCast)))
        v = LLVMGetOperand(v, 0);
    if (v && LLVMIsAGlobalAlias(v))
        v = LLVMAliasGetAliasee(v);
    return v && LLVMIsAFunction(v) ? v : NULL;
}

/* The conditional branches and switches a loaded value decides. */
static void branches_of(LLVMValueRef load, LLVMValueRef *out, int *nout, int max)
{
    LLVMValueRef work[64];
    int n = 0, seen = 0;
    work[n++] = load;
    while (n && seen < 64) {
        LLVMValueRef v = work[--n];
        seen++;
        for (LLVMUseRef u = LLVMGetFirstUse(v); u; u = LLVMGetNextUse(u)) {
            LLVMValueRef user = LLVMGetUser(u);
            if (!LLVMIsAInstruction(user))
                continue;
            LLVMOpcode op = LLVMGetInstructionOpcode(user);
            if ((op == LLVMBr && LLVMIsConditional(user)) || op == LLVMSwitch) {
                int dup = 0;
                for (int k = 0; k < *nout; k++)
                    dup |= out[k] == user;
                if (!dup && *nout < max)
                    out[(*nout)++] = user;
                continue;
            }
            int follow = op == LLVMICmp || op == LLVMFCmp || op == LLVMTrunc || op == LLVMZExt || op == LLVMSExt
                         || op == LLVMAnd || op == LLVMOr || op == LLVMXor || op == LLVMAdd || op == LLVMSub
                         || op == LLVMShl || op == LLVMLShr || op == LLVMAShr || op == LLVMSelect || op == LLVMPHI
                         || op == LLVMFreeze || op == LLVMExtractValue;
            if (op == LLVMCall) {
                LLVMValueRef cf = direct_callee(user);
                follow = cf && !strncmp(vname(cf), "llvm.expect", 11);
            }
            if (follow && n < 64)
                work[n++] = user;
        }
    }
}

static void add_branches(ir_ctx *c, ti_sfn *sf, LLVMValueRef fn, LLVMValueRef load, ti_sval at, long long size)
{
    LLVMValueRef br[8];
    int nbr = 0;
    branches_of(load, br, &nbr, 8);
    for (int k = 0; k < nbr; k++) {
        int b = block_index(fn, LLVMGetInstructionParent(br[k]));
        ti_sev *e = ti_sp_event(sf, TI_EV_BRANCH, b, ti_ir_ev_instr(sf->name, br[k]));
        e->at = at;
        e->size = size;
        e->load_text = ti_ir_ev_instr(sf->name, load);
        unsigned ns = LLVMGetNumSuccessors(br[k]);
        e->succ = calloc(ns + 1, sizeof(int));
        for (unsigned s = 0; s < ns; s++)
            e->succ[e->nsucc++] = block_index(fn, LLVMGetSuccessor(br[k], s));
    }
    (void)c;
}

static long long store_size(ir_ctx *c, LLVMValueRef v)
{
    LLVMTypeRef t = LLVMTypeOf(v);
    return LLVMTypeIsSized(t) ? (long long)LLVMStoreSizeOfType(c->td, t) : -1;
}

/* Whether a stored value is computed from a load of the same global or parameter (a
 * counter, a growth): operands followed a few levels deep. */
static int derived_from(ir_ctx *c, LLVMValueRef v, ti_sval at)
{
    LLVMValueRef work[32];
    int n = 0, seen = 0;
    work[n++] = v;
    while (n && seen < 48) {
        LLVMValueRef x = work[--n];
        seen++;
        if (!LLVMIsAInstruction(x))
            continue;
        LLVMOpcode op = LLVMGetInstructionOpcode(x);
        if (op == LLVMLoad || op == LLVMAtomicRMW || op == LLVMAtomicCmpXchg) {
            ti_sval src = decompose(c, LLVMGetOperand(x, 0));
            if (src.kind == at.kind && src.id == at.id)
                return 1;
            continue;
        }
        if (op == LLVMCall || op == LLVMAlloca)
            continue;
        int no = LLVMGetNumOperands(x);
        for (int k = 0; k < no && n < 32; k++)
            work[n++] = LLVMGetOperand(x, (unsigned)k);
    }
    return 0;
}

/* The defined function whose code an inlined instruction is: its debug location's scope is
 * that function's subprogram (line tables are on: the remarks need them). -1 otherwise. */
static int inlined_from(ir_ctx *c, LLVMValueRef i)
{
    LLVMMetadataRef loc = LLVMInstructionGetDebugLoc(i);
    if (!loc || !LLVMDILocationGetInlinedAt(loc))
        return -1;
    LLVMMetadataRef scope = LLVMDILocationGetScope(loc);
    for (LLVMValueRef f = LLVMGetFirstFunction(c->mod); f; f = LLVMGetNextFunction(f))
        if (!LLVMIsDeclaration(f) && LLVMGetSubprogram(f) == scope)
            return ti_sp_find_fn(c->p, vname(f));
    return -1;
}

static void add_store(ir_ctx *c, ti_sfn *sf, int b, LLVMValueRef i, LLVMValueRef ptr, long long size, LLVMValueRef val)
{
    ti_sval at = decompose(c, ptr);
    if (at.kind != TI_SV_GLOBAL && at.kind != TI_SV_PARAM)
        return;
    ti_sev *e = ti_sp_event(sf, TI_EV_STORE, b, ti_ir_ev_instr(sf->name, i));
    e->at = at;
    e->size = size;
    e->inlined_from = inlined_from(c, i);
    if (val) {
        e->value = decompose(c, val);
        e->rmw = derived_from(c, val, at);
    }
    if (LLVMGetInstructionOpcode(i) == LLVMAtomicRMW)
        e->rmw = LLVMGetAtomicRMWBinOp(i) != LLVMAtomicRMWBinOpXchg;
}

static void add_call(ir_ctx *c, ti_sfn *sf, int b, LLVMValueRef i)
{
    LLVMValueRef cf = direct_callee(i);
    const char *cn = cf ? vname(cf) : NULL;
    if (cn && (!strncmp(cn, "llvm.memset.", 12) || !strncmp(cn, "llvm.memcpy.", 12) || !strncmp(cn, "llvm.memmove.", 13))) {
        LLVMValueRef len = LLVMGetOperand(i, 2);
        add_store(c, sf, b, i, LLVMGetOperand(i, 0), LLVMIsAConstantInt(len) ? (long long)LLVMConstIntGetZExtValue(len) : -1,
                  NULL);
        return;
    }
    if (cn && !strncmp(cn, "llvm.", 5))
        return;
    ti_sev *e = ti_sp_event(sf, TI_EV_CALL, b, ti_ir_ev_instr(sf->name, i));
    e->callee = cf ? ti_sp_fn(c->p, cn) : -1;
    unsigned na = LLVMGetNumArgOperands(i);
    for (unsigned k = 0; k < na && k < TI_MAX_ARGS; k++)
        e->args[e->nargs++] = decompose(c, LLVMGetOperand(i, k));
    if (!cf) {
        LLVMValueRef callee = LLVMGetCalledValue(i);
        if (LLVMIsALoadInst(callee)) {
            e->fp = decompose(c, LLVMGetOperand(callee, 0));
            if (e->fp.kind == TI_SV_GLOBAL)
                e->load_text = ti_ir_ev_instr(sf->name, callee);
            else
                e->fp.kind = TI_SV_NONE;
        }
    }
}

static void build_fn(ir_ctx *c, LLVMValueRef fn)
{
    int idx = ti_sp_fn(c->p, vname(fn));
    ti_sfn *sf = &c->p->fn[idx];
    sf->defined = 1;
    LLVMLinkage l = LLVMGetLinkage(fn);
    sf->internal = l == LLVMInternalLinkage || l == LLVMPrivateLinkage;
    sf->nblocks = (int)LLVMCountBasicBlocks(fn);
    sf->bsucc = calloc((size_t)sf->nblocks + 1, sizeof(int *));
    sf->nbsucc = calloc((size_t)sf->nblocks + 1, sizeof(int));
    int b = 0;
    for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb), b++) {
        LLVMValueRef term = LLVMGetBasicBlockTerminator(bb);
        unsigned ns = term ? LLVMGetNumSuccessors(term) : 0;
        sf->bsucc[b] = calloc(ns + 1, sizeof(int));
        for (unsigned s = 0; s < ns; s++)
            sf->bsucc[b][sf->nbsucc[b]++] = block_index(fn, LLVMGetSuccessor(term, s));
        for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i)) {
            sf = &c->p->fn[idx];   /* ti_sp_fn may grow the array */
            LLVMOpcode op = LLVMGetInstructionOpcode(i);
            if (op == LLVMStore)
                add_store(c, sf, b, i, LLVMGetOperand(i, 1), store_size(c, LLVMGetOperand(i, 0)), LLVMGetOperand(i, 0));
            else if (op == LLVMAtomicRMW || op == LLVMAtomicCmpXchg)
                add_store(c, sf, b, i, LLVMGetOperand(i, 0), store_size(c, LLVMGetOperand(i, 1)), NULL);
            else if (is_call(i))
                add_call(c, sf, b, i);
            sf = &c->p->fn[idx];
            if (op == LLVMLoad || op == LLVMAtomicRMW || op == LLVMAtomicCmpXchg) {
                ti_sval at = decompose(c, LLVMGetOperand(i, 0));
                sf = &c->p->fn[idx];
                if (at.kind == TI_SV_GLOBAL)
                    add_branches(c, sf, fn, i, at, op == LLVMLoad ? store_size(c, i) : store_size(c, LLVMGetOperand(i, 1)));
            }
        }
    }
}

/* Function addresses inside a constant initialiser (offsets tracked through structs/arrays). */
static void init_targets(ir_ctx *c, int g, LLVMValueRef v, long long off)
{
    while (is_const_op(v, LLVMBitCast))
        v = LLVMGetOperand(v, 0);
    if (LLVMIsAFunction(v)) {
        ti_sp_fpinit(c->p, g, off, ti_sp_fn(c->p, vname(v)));
        return;
    }
    if (!LLVMIsAConstantStruct(v) && !LLVMIsAConstantArray(v))
        return;
    LLVMTypeRef t = LLVMTypeOf(v);
    int n = LLVMGetNumOperands(v);
    for (int k = 0; k < n; k++) {
        long long o = -1;
        if (off >= 0 && LLVMGetTypeKind(t) == LLVMStructTypeKind)
            o = off + (long long)LLVMOffsetOfElement(c->td, t, (unsigned)k);
        else if (off >= 0)
            o = off + k * (long long)LLVMABISizeOfType(c->td, LLVMGetElementType(t));
        init_targets(c, g, LLVMGetOperand(v, (unsigned)k), o);
    }
}

int ti_shape_from_ir(ti_sprog *p, LLVMModuleRef mod, char *err, size_t errsz)
{
    (void)err;
    (void)errsz;
    ir_ctx c = { p, mod, LLVMGetModuleDataLayout(mod) };
    p->side = "AOT";
    for (LLVMValueRef g = LLVMGetFirstGlobal(mod); g; g = LLVMGetNextGlobal(g)) {
        int gi = global_index(&c, g);
        LLVMValueRef init = LLVMIsDeclaration(g) ? NULL : LLVMGetInitializer(g);
        if (init)
            init_targets(&c, gi, init, 0);
    }
    /* every function first, so building never grows p->fn under a pointer into it */
    for (LLVMValueRef f = LLVMGetFirstFunction(mod); f; f = LLVMGetNextFunction(f))
        ti_sp_fn(p, vname(f));
    for (LLVMValueRef f = LLVMGetFirstFunction(mod); f; f = LLVMGetNextFunction(f)) {
        int idx = ti_sp_fn(p, vname(f));
        /* a use other than being called makes the address escape */
        for (LLVMUseRef u = LLVMGetFirstUse(f); u; u = LLVMGetNextUse(u)) {
            LLVMValueRef user = LLVMGetUser(u);
            if (!(LLVMIsAInstruction(user) && is_call(user) && direct_callee(user) == f))
                p->fn[idx].address_taken = 1;
        }
        if (!LLVMIsDeclaration(f))
            build_fn(&c, f);
    }
    return 0;
}
