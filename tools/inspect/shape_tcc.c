/*
 * shape_tcc.c - the shape model (shape.h) of a tcc object (the JIT side).
 *
 * tcc leaves every data reference and call to the linker, so relocations name the globals
 * and callees; the disassembly gives the rest. Each function is split into blocks at jump
 * targets and after jumps; a forward pass tracks what registers, stack slots (%rbp-relative)
 * and the flags hold:
 *     the address of a global (lea sym(%rip), a GOT load) or of a parameter (+ offset),
 *     a value loaded from a global or through a parameter (with the load that produced it),
 *     the address of a function.
 * From that: stores (mov/arith/xchg/cmpxchg to memory), calls with their register arguments,
 * indirect calls through a pointer loaded from a global, and conditional jumps whose flags
 * come from a loaded global (cmp/test, setcc). Registers are forgotten at block starts
 * (tcc keeps values across statements in stack slots, which are kept). A function that
 * returns the value its pointer argument points to (tcc's atomic-load helpers) makes the
 * call's result a load of the argument's global.
 */
#include "jit_obj.h"
#include "shape.h"

#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { AV_NONE, AV_ADDR_G, AV_ADDR_P, AV_VAL_G, AV_VAL_P, AV_FUNC, AV_GOT, AV_SLOT };

typedef struct av {
    int kind;
    int id;            /* global / param / function index; AV_SLOT: unused */
    long long off;     /* byte offset (-1 unknown); AV_SLOT: the %rbp displacement */
    int origin;        /* VAL: the instruction that loaded it */
    long long size;
} av;

#define NREG 16
#define NSLOT 256
enum { RAX, RCX, RDX, RBX, RSP, RBP, RSI, RDI };
static const int arg_regs[TI_MAX_ARGS] = { RDI, RSI, RDX, RCX, 8, 9 };

typedef struct tstate {
    av reg[NREG];
    av flags;
    long long slot_off[NSLOT];
    av slot[NSLOT];
    int nslot;
} tstate;

typedef struct tctx {
    ti_sprog *p;
    const jit_obj *j;
    const jit_fn *jf;
    ti_sfn *sf;
    int emit;
    int *block;        /* block of each instruction */
    int lock;
} tctx;

static int reg_index(const char *s, int *width)
{
    static const char *names[16][5] = {
        { "rax", "eax", "ax", "al", "ah" }, { "rcx", "ecx", "cx", "cl", "ch" }, { "rdx", "edx", "dx", "dl", "dh" },
        { "rbx", "ebx", "bx", "bl", "bh" }, { "rsp", "esp", "sp", "spl", 0 },  { "rbp", "ebp", "bp", "bpl", 0 },
        { "rsi", "esi", "si", "sil", 0 },   { "rdi", "edi", "di", "dil", 0 },
    };
    static const int widths[5] = { 8, 4, 2, 1, 1 };
    while (*s == '%' || *s == '*' || *s == ' ')
        s++;
    for (int r = 0; r < 8; r++)
        for (int k = 0; k < 5 && names[r][k]; k++)
            if (!strcmp(s, names[r][k])) {
                *width = widths[k];
                return r;
            }
    if (s[0] == 'r' && s[1] >= '0' && s[1] <= '9') {
        char *end;
        long n = strtol(s + 1, &end, 10);
        if (n >= 8 && n <= 15) {
            *width = *end == 'd' ? 4 : *end == 'w' ? 2 : *end == 'b' ? 1 : 8;
            return (int)n;
        }
    }
    return -1;
}

typedef struct opnd {
    int kind;          /* 0 none, 1 reg, 2 imm, 3 mem */
    int reg, width;
    long long disp;
    int base, index, rip;
} opnd;

static opnd parse_op(const char *s)
{
    opnd o = { 0 };
    o.base = o.index = -1;
    while (*s == ' ' || *s == '*')
        s++;
    if (!*s)
        return o;
    if (*s == '%') {
        o.reg = reg_index(s, &o.width);
        o.kind = o.reg >= 0 ? 1 : 0;
        return o;
    }
    if (*s == '$') {
        o.kind = 2;
        o.disp = strtoll(s + 1, NULL, 0);
        return o;
    }
    const char *par = strchr(s, '(');
    if (!par) {
        o.kind = 2;   /* an absolute operand: a jump displacement */
        o.disp = strtoll(s, NULL, 0);
        return o;
    }
    const char *colon = strchr(s, ':');   /* segment prefix (%fs:...) */
    if (colon && colon < par)
        s = colon + 1;
    o.kind = 3;
    o.disp = par > s ? strtoll(s, NULL, 0) : 0;
    char inner[64];
    snprintf(inner, sizeof inner, "%s", par + 1);
    char *close = strchr(inner, ')');
    if (close)
        *close = 0;
    char *comma = strchr(inner, ',');
    if (comma) {
        *comma = 0;
        int w;
        char *ix = comma + 1;
        char *c2 = strchr(ix, ',');
        if (c2)
            *c2 = 0;
        if (*ix)
            o.index = reg_index(ix, &w);
    }
    if (!strcmp(inner, "%rip"))
        o.rip = 1;
    else if (inner[0]) {
        int w;
        o.base = reg_index(inner, &w);
    }
    return o;
}

static av none(void)
{
    return (av){ AV_NONE, -1, 0, -1, -1 };
}

static int is_val(av v)
{
    return v.kind == AV_VAL_G || v.kind == AV_VAL_P;
}

static int is_got(unsigned t)
{
    return t == R_X86_64_GOTPCREL || t == R_X86_64_GOTPCRELX || t == R_X86_64_REX_GOTPCRELX;
}

static int sym_av(tctx *c, const char *sym, int is_func, long long off, av *out)
{
    if (is_func) {
        *out = (av){ AV_FUNC, ti_sp_fn(c->p, sym), 0, -1, -1 };
        c->p->fn[out->id].address_taken = 1;
        return 1;
    }
    int g = ti_sp_find_global(c->p, sym);
    if (g < 0)
        g = ti_sp_global(c->p, sym, 0, -1);
    *out = (av){ AV_ADDR_G, g, off, -1, -1 };
    return 1;
}

/* The address a memory operand designates. */
static av mem_addr(tctx *c, tstate *st, const jit_insn *in, const opnd *o)
{
    if (o->rip) {
        const jit_reloc *r = in->rel;
        av v = none();
        if (!r)
            return v;
        if (is_got(r->type)) {
            sym_av(c, r->sym, r->is_func, 0, &v);
            v.kind = v.kind == AV_FUNC ? AV_FUNC : AV_GOT;
            return v;
        }
        long long off = r->addend + (long long)(in->off + in->len - r->off);
        sym_av(c, r->sym, r->is_func, off, &v);
        return v;
    }
    if (o->base == RBP && o->index < 0)
        return (av){ AV_SLOT, -1, o->disp, -1, -1 };
    if (o->base < 0)
        return none();
    av b = st->reg[o->base];
    if (b.kind != AV_ADDR_G && b.kind != AV_ADDR_P)
        return none();
    b.off = (o->index >= 0 || b.off < 0) ? -1 : b.off + o->disp;
    return b;
}

static av *slot_ref(tstate *st, long long off, int create)
{
    for (int i = 0; i < st->nslot; i++)
        if (st->slot_off[i] == off)
            return &st->slot[i];
    if (!create || st->nslot == NSLOT)
        return NULL;
    st->slot_off[st->nslot] = off;
    st->slot[st->nslot] = none();
    return &st->slot[st->nslot++];
}

static ti_sval to_sval(av v)
{
    if (v.kind == AV_ADDR_G)
        return (ti_sval){ TI_SV_GLOBAL, v.id, v.off };
    if (v.kind == AV_ADDR_P)
        return (ti_sval){ TI_SV_PARAM, v.id, v.off };
    if (v.kind == AV_FUNC)
        return (ti_sval){ TI_SV_FUNC, v.id, 0 };
    return (ti_sval){ TI_SV_NONE, -1, 0 };
}

static int width_of(const char *mn, const opnd *a, const opnd *b)
{
    if (a && a->kind == 1)
        return a->width;
    if (b && b->kind == 1)
        return b->width;
    size_t n = strlen(mn);
    char s = n ? mn[n - 1] : 0;
    return s == 'b' ? 1 : s == 'w' ? 2 : s == 'l' ? 4 : s == 'q' ? 8 : -1;
}

/* Read an operand's value (a memory operand is a load). */
static av read_op(tctx *c, tstate *st, int idx, const opnd *o, int width)
{
    if (o->kind == 1)
        return st->reg[o->reg];
    if (o->kind != 3)
        return none();
    av a = mem_addr(c, st, &c->jf->insn[idx], o);
    if (a.kind == AV_GOT)
        return (av){ AV_ADDR_G, a.id, 0, -1, -1 };
    if (a.kind == AV_FUNC)
        return a;   /* a GOT load of a function's address */
    if (a.kind == AV_ADDR_G)
        return (av){ AV_VAL_G, a.id, a.off, idx, width };
    if (a.kind == AV_ADDR_P)
        return (av){ AV_VAL_P, a.id, a.off, idx, width };
    if (a.kind == AV_SLOT) {
        av *s = slot_ref(st, a.off, 0);
        return s ? *s : none();
    }
    return none();
}

static void write_op(tctx *c, tstate *st, int idx, const opnd *o, av v, int width)
{
    if (o->kind == 1) {
        st->reg[o->reg] = v;
        return;
    }
    if (o->kind != 3)
        return;
    av a = mem_addr(c, st, &c->jf->insn[idx], o);
    if (a.kind == AV_SLOT) {
        av *s = slot_ref(st, a.off, 1);
        if (s)
            *s = v;
        return;
    }
    if ((a.kind != AV_ADDR_G && a.kind != AV_ADDR_P) || !c->emit)
        return;
    ti_sev *e = ti_sp_event(c->sf, TI_EV_STORE, c->block[idx], ti_jit_ev_insn(c->jf, &c->jf->insn[idx]));
    e->at = to_sval(a);
    e->size = width;
    e->value = to_sval(v);
    /* the stored value was computed from a load of the same global / parameter */
    e->rmw = (v.kind == AV_VAL_G && a.kind == AV_ADDR_G && v.id == a.id)
             || (v.kind == AV_VAL_P && a.kind == AV_ADDR_P && v.id == a.id);
}

static char *origin_text(tctx *c, int origin)
{
    if (origin < 0)
        return NULL;
    const jit_insn *in = &c->jf->insn[origin];
    char *t = ti_jit_ev_insn(c->jf, in);
    if (ti_jit_is_call(in)) {
        char *s = ti_fmt("%s (returns the value it loads)", t);
        free(t);
        return s;
    }
    return t;
}

static void do_call(tctx *c, tstate *st, int idx, const char *src)
{
    const jit_insn *in = &c->jf->insn[idx];
    int callee = -1;
    av fpv = none();
    if (in->rel && !is_got(in->rel->type) && src[0] != '*')
        callee = ti_sp_fn(c->p, in->rel->sym);
    else {
        opnd o = parse_op(src);
        fpv = read_op(c, st, idx, &o, 8);
    }
    av ret = none();
    if (c->emit) {
        ti_sev *e = ti_sp_event(c->sf, TI_EV_CALL, c->block[idx], ti_jit_ev_insn(c->jf, in));
        e->callee = callee;
        for (int a = 0; a < TI_MAX_ARGS; a++)
            e->args[e->nargs++] = to_sval(st->reg[arg_regs[a]]);
        if (fpv.kind == AV_VAL_G) {
            e->fp = (ti_sval){ TI_SV_GLOBAL, fpv.id, fpv.off };
            e->load_text = origin_text(c, fpv.origin);
        }
    }
    if (callee >= 0 && c->p->fn[callee].ret_param >= 0) {
        av a = st->reg[arg_regs[c->p->fn[callee].ret_param]];
        if (a.kind == AV_ADDR_G)
            ret = (av){ AV_VAL_G, a.id, a.off, idx, -1 };
        else if (a.kind == AV_ADDR_P)
            ret = (av){ AV_VAL_P, a.id, a.off, idx, -1 };
    }
    if (callee >= 0 && c->p->fn[callee].ret_global >= 0)
        ret = (av){ AV_VAL_G, c->p->fn[callee].ret_global, c->p->fn[callee].ret_goff, idx, -1 };
    static const int clobber[] = { RAX, RCX, RDX, RSI, RDI, 8, 9, 10, 11 };
    for (size_t k = 0; k < sizeof clobber / sizeof *clobber; k++)
        st->reg[clobber[k]] = none();
    st->reg[RAX] = ret;
    st->flags = none();
}

static int starts(const char *s, const char *p)
{
    return !strncmp(s, p, strlen(p));
}

static int is_jump(const char *mn)
{
    return mn[0] == 'j';
}

/* The jump's target instruction index, -1 when indirect or outside the function. */
static int jump_target(const jit_fn *f, int idx, const char *src)
{
    if (src[0] == '*' || src[0] == '%')
        return -1;
    const jit_insn *in = &f->insn[idx];
    long long to = (long long)(in->off + in->len) + strtoll(src, NULL, 0);
    for (int k = 0; k < f->ninsn; k++)
        if ((long long)f->insn[k].off == to)
            return k;
    return -1;
}

static void blocks(tctx *c, ti_sfn *sf)
{
    const jit_fn *f = c->jf;
    char *leader = calloc((size_t)f->ninsn + 1, 1);
    int *tgt = malloc(sizeof(int) * ((size_t)f->ninsn + 1));
    leader[0] = 1;
    for (int i = 0; i < f->ninsn; i++) {
        char mn[64], a[128], b[128];
        tgt[i] = -1;
        ti_jit_split_insn(f->insn[i].text, mn, a, b, sizeof mn);
        if (is_jump(mn)) {
            tgt[i] = jump_target(f, i, a);
            if (tgt[i] >= 0)
                leader[tgt[i]] = 1;
            leader[i + 1] = 1;
        } else if (starts(mn, "ret") || starts(mn, "ud2"))
            leader[i + 1] = 1;
    }
    int nb = 0;
    for (int i = 0; i < f->ninsn; i++) {
        nb += leader[i];
        c->block[i] = nb - 1;
    }
    for (int b = 0; b < sf->nblocks; b++)
        free(sf->bsucc[b]);
    free(sf->bsucc);
    free(sf->nbsucc);
    sf->nblocks = nb;
    sf->bsucc = calloc((size_t)nb + 1, sizeof(int *));
    sf->nbsucc = calloc((size_t)nb + 1, sizeof(int));
    for (int i = 0; i < f->ninsn; i++) {
        if (i + 1 < f->ninsn && !leader[i + 1])
            continue;
        int b = c->block[i];
        char mn[64], a[128], d[128];
        ti_jit_split_insn(f->insn[i].text, mn, a, d, sizeof mn);
        sf->bsucc[b] = calloc(2, sizeof(int));
        if (is_jump(mn) && tgt[i] >= 0)
            sf->bsucc[b][sf->nbsucc[b]++] = c->block[tgt[i]];
        int falls = !(is_jump(mn) && starts(mn, "jmp")) && !starts(mn, "ret") && !starts(mn, "ud2");
        if (falls && i + 1 < f->ninsn)
            sf->bsucc[b][sf->nbsucc[b]++] = c->block[i + 1];
    }
    free(leader);
    free(tgt);
}

static int is_arith(const char *mn)
{
    static const char *ops[] = { "add", "sub", "and", "or", "xor", "shl", "shr", "sar", "sal", "imul", "adc", "sbb",
                                 "neg", "not", "inc", "dec", "rol", "ror", "bsf", "bsr", 0 };
    for (int k = 0; ops[k]; k++)
        if (starts(mn, ops[k]))
            return 1;
    return 0;
}

static void step(tctx *c, tstate *st, int i)
{
    const jit_insn *in = &c->jf->insn[i];
    char mn[64], a[128], b[128];
    int nops = ti_jit_split_insn(in->text, mn, a, b, sizeof mn);
    if (!a[0])
        nops = 0;
    int lock = c->lock;
    c->lock = !strcmp(mn, "lock");
    if (c->lock)
        return;
    opnd s = parse_op(a), d = nops == 2 ? parse_op(b) : parse_op("");
    int w = width_of(mn, nops == 2 ? &d : &s, &s);
    (void)lock;
    if (starts(mn, "call")) {
        do_call(c, st, i, a);
    } else if (is_jump(mn)) {
        if (strcmp(mn, "jmp") && strcmp(mn, "jmpq") && is_val(st->flags) && c->emit) {
            av v = st->flags;
            if (v.kind == AV_VAL_G) {
                ti_sev *e = ti_sp_event(c->sf, TI_EV_BRANCH, c->block[i], ti_jit_ev_insn(c->jf, in));
                e->at = (ti_sval){ TI_SV_GLOBAL, v.id, v.off };
                e->size = v.size;
                e->load_text = origin_text(c, v.origin);
                int b0 = c->block[i];
                e->succ = calloc(3, sizeof(int));
                for (int k = 0; k < c->sf->nbsucc[b0]; k++)
                    e->succ[e->nsucc++] = c->sf->bsucc[b0][k];
            }
        }
    } else if (starts(mn, "cmpxchg") || starts(mn, "xchg") || starts(mn, "xadd")) {
        const opnd *m = d.kind == 3 ? &d : s.kind == 3 ? &s : NULL;
        const opnd *r = m == &d ? &s : &d;
        if (m) {
            av old = read_op(c, st, i, m, w);
            write_op(c, st, i, m, r->kind == 1 ? st->reg[r->reg] : none(), w);
            if (starts(mn, "cmpxchg"))
                st->reg[RAX] = old;
            else if (r->kind == 1)
                st->reg[r->reg] = old;
            st->flags = old;
        } else if (s.kind == 1 && d.kind == 1) {
            av t = st->reg[s.reg];
            st->reg[s.reg] = st->reg[d.reg];
            st->reg[d.reg] = t;
        }
    } else if (starts(mn, "lea")) {
        if (d.kind == 1) {
            av v = s.kind == 3 ? mem_addr(c, st, in, &s) : none();
            st->reg[d.reg] = (v.kind == AV_SLOT || v.kind == AV_GOT) ? none() : v;
        }
    } else if (starts(mn, "mov") || starts(mn, "cmov")) {
        if (nops == 2) {
            av v = read_op(c, st, i, &s, w);
            if (starts(mn, "cmov") && d.kind == 1 && !is_val(v))
                v = is_val(st->reg[d.reg]) ? st->reg[d.reg] : none();
            write_op(c, st, i, &d, v, w);
        }
    } else if (starts(mn, "cmp") || starts(mn, "test") || starts(mn, "bt")) {
        av x = read_op(c, st, i, &s, w), y = nops == 2 ? read_op(c, st, i, &d, w) : none();
        st->flags = is_val(y) ? y : is_val(x) ? x : none();
    } else if (starts(mn, "set")) {
        write_op(c, st, i, &s, st->flags, 1);
    } else if (is_arith(mn)) {
        const opnd *dst = nops == 2 ? &d : &s;
        av x = read_op(c, st, i, dst, w), y = nops == 2 ? read_op(c, st, i, &s, w) : none();
        av r = is_val(x) ? x : is_val(y) ? y : none();
        if (nops == 2 && s.kind == 1 && d.kind == 1 && s.reg == d.reg && (starts(mn, "xor") || starts(mn, "sub")))
            r = none();
        else if ((x.kind == AV_ADDR_G || x.kind == AV_ADDR_P) && nops == 2 && (starts(mn, "add") || starts(mn, "sub"))) {
            /* pointer arithmetic: a field (constant) or an element (unknown offset) */
            r = x;
            r.off = (s.kind == 2 && x.off >= 0) ? x.off + (starts(mn, "add") ? s.disp : -s.disp) : -1;
        }
        if (dst->kind == 3)
            write_op(c, st, i, dst, x, w);   /* arithmetic on memory: a read-modify-write */
        else
            write_op(c, st, i, dst, r, w);
        st->flags = r;
    } else if (starts(mn, "pop")) {
        if (s.kind == 1)
            st->reg[s.reg] = none();
    } else if (starts(mn, "cqto") || starts(mn, "cltd") || starts(mn, "cqo") || starts(mn, "cdq")) {
        st->reg[RDX] = none();
    } else if (starts(mn, "ret") || starts(mn, "leave")) {
        /* the return value summary is read by the caller of step() */
    } else if (nops >= 1) {
        const opnd *dst = nops == 2 ? &d : &s;
        if (dst->kind == 1)
            st->reg[dst->reg] = none();
    }
}

static void entry_state(tstate *st)
{
    memset(st, 0, sizeof *st);
    for (int r = 0; r < NREG; r++)
        st->reg[r] = none();
    st->flags = none();
    for (int a = 0; a < TI_MAX_ARGS; a++)
        st->reg[arg_regs[a]] = (av){ AV_ADDR_P, a, 0, -1, -1 };
}

static void run_fn(tctx *c)
{
    tstate *st = malloc(sizeof *st);
    entry_state(st);
    c->lock = 0;
    for (int i = 0; i < c->jf->ninsn; i++) {
        if (i > 0 && c->block[i] != c->block[i - 1]) {
            for (int r = 0; r < NREG; r++)
                if (r != RBP && r != RSP)
                    st->reg[r] = none();
            st->flags = none();
        }
        char mn[64], a[128], b[128];
        ti_jit_split_insn(c->jf->insn[i].text, mn, a, b, sizeof mn);
        /* returns: at ret/leave, or at a jump to the epilogue */
        int to_ret = starts(mn, "ret") || starts(mn, "leave");
        if (!to_ret && !strcmp(mn, "jmp")) {
            int t = jump_target(c->jf, i, a);
            to_ret = t >= 0 && (starts(c->jf->insn[t].text, "leave") || starts(c->jf->insn[t].text, "ret"));
        }
        if (to_ret && !c->emit && st->reg[RAX].kind == AV_VAL_P && st->reg[RAX].off == 0)
            c->sf->ret_param = st->reg[RAX].id;
        if (to_ret && !c->emit && st->reg[RAX].kind == AV_VAL_G) {
            c->sf->ret_global = st->reg[RAX].id;
            c->sf->ret_goff = st->reg[RAX].off;
        }
        step(c, st, i);
    }
    free(st);
}

int ti_shape_from_tcc(ti_sprog *p, const jit_obj *j, char *err, size_t errsz)
{
    (void)err;
    (void)errsz;
    p->side = "JIT";
    for (int k = 0; k < j->nobj; k++)
        ti_sp_global(p, j->obj[k].name, j->obj[k].constant, (long long)j->obj[k].size);
    for (int k = 0; k < j->nfn; k++) {
        int fi = ti_sp_fn(p, j->fn[k].name);
        p->fn[fi].defined = 1;
        p->fn[fi].internal = !j->fn[k].global;
    }
    /* every symbol a relocation names, so building never grows p->fn under a pointer */
    for (int r = 0; r < j->nrel; r++) {
        if (j->rel[r].is_func || (ti_sp_find_global(p, j->rel[r].sym) < 0 && j->rel[r].type == R_X86_64_PLT32))
            ti_sp_fn(p, j->rel[r].sym);
        else if (ti_sp_find_fn(p, j->rel[r].sym) < 0)
            ti_sp_global(p, j->rel[r].sym, 0, -1);
    }
    for (int k = 0; k < j->ndref; k++) {
        if (!j->dref[k].is_func)
            continue;
        int fn = ti_sp_fn(p, j->dref[k].sym);
        p->fn[fn].address_taken = 1;
        for (int o = 0; o < j->nobj; o++) {
            const jit_data *d = &j->obj[o];
            if (d->shndx == j->dref[k].shndx && j->dref[k].off >= d->value && j->dref[k].off < d->value + d->size)
                ti_sp_fpinit(p, ti_sp_find_global(p, d->name), (long long)(j->dref[k].off - d->value), fn);
        }
    }
    /* pass 1: which functions return the value their pointer argument points to; pass 2: events */
    for (int pass = 0; pass < 2; pass++)
        for (int k = 0; k < j->nfn; k++) {
            const jit_fn *jf = &j->fn[k];
            tctx c = { p, j, jf, &p->fn[ti_sp_find_fn(p, jf->name)], pass, NULL, 0 };
            c.block = calloc((size_t)jf->ninsn + 1, sizeof(int));
            blocks(&c, c.sf);
            run_fn(&c);
            free(c.block);
        }
    return 0;
}
