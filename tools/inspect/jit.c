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
#include "inspect.h"

#include <elf.h>
#include <libtcc.h>
#include <llvm-c/Disassembler.h>
#include <llvm-c/Target.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct jit_reloc {
    uint64_t off;
    char *sym;
    int is_func;       /* the symbol is a function (defined FUNC, or undefined and called) */
    unsigned type;
} jit_reloc;

typedef struct jit_insn {
    uint64_t off;      /* offset in its section */
    unsigned len;
    char *text;        /* disassembly, one line */
    const char *target; /* relocation symbol inside the instruction, if any */
} jit_insn;

typedef struct jit_fn {
    char *name;
    unsigned shndx;
    uint64_t value, size;
    jit_insn *insn;
    int ninsn;
} jit_fn;

typedef struct jit_obj {
    unsigned char *data;
    size_t size;
    jit_fn *fn;
    int nfn;
    jit_reloc *rel;       /* relocations against executable sections */
    unsigned *rel_sec;    /* their section */
    int nrel;
} jit_obj;

/* ---- compile with libtcc ------------------------------------------------------------------ */
typedef struct tcc_err { char buf[4096]; size_t len; } tcc_err;

static void tcc_on_error(void *opaque, const char *msg)
{
    tcc_err *e = opaque;
    int n = snprintf(e->buf + e->len, sizeof e->buf - e->len, "%s%s", e->len ? "; " : "", msg);
    if (n > 0 && e->len + (size_t)n < sizeof e->buf)
        e->len += (size_t)n;
}

static int tcc_compile_obj(const ti_options *o, const char *obj, char *err, size_t errsz)
{
    TCCState *s = tcc_new();
    if (!s) {
        snprintf(err, errsz, "libtcc: tcc_new failed");
        return -1;
    }
    tcc_err e = { .len = 0 };
    e.buf[0] = 0;
    tcc_set_error_func(s, &e, tcc_on_error);
    tcc_set_lib_path(s, o->tcc_lib);
    tcc_set_output_type(s, TCC_OUTPUT_OBJ);
    for (int i = 0; i < o->includes.n; i++)
        tcc_add_include_path(s, o->includes.v[i]);
    for (int i = 0; i < o->defines.n; i++) {
        char *d = ti_strdup(o->defines.v[i]);
        char *eq = strchr(d, '=');
        if (eq)
            *eq++ = 0;
        tcc_define_symbol(s, d, eq ? eq : NULL);
        free(d);
    }
    int rc = 0;
    if (tcc_add_file(s, o->tu) < 0) {
        snprintf(err, errsz, "%s: libtcc could not compile it: %s", o->tu, e.len ? e.buf : "?");
        rc = -1;
    } else if (tcc_output_file(s, obj) < 0) {
        snprintf(err, errsz, "%s: libtcc could not write the object: %s", obj, e.len ? e.buf : "?");
        rc = -1;
    }
    tcc_delete(s);
    return rc;
}

/* ---- ELF ------------------------------------------------------------------------------------ */
static int elf_load(const char *path, jit_obj *j, char *err, size_t errsz)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errsz, "%s: cannot read the object", path);
        return -1;
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    j->data = malloc((size_t)n);
    j->size = (size_t)n;
    if (fread(j->data, 1, (size_t)n, f) != (size_t)n) {
        fclose(f);
        snprintf(err, errsz, "%s: read error", path);
        return -1;
    }
    fclose(f);
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)j->data;
    if (j->size < sizeof *eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64
        || eh->e_machine != EM_X86_64 || eh->e_type != ET_REL || eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) > j->size) {
        snprintf(err, errsz, "%s: not an x86-64 ELF relocatable object", path);
        return -1;
    }
    const Elf64_Shdr *sh = (const Elf64_Shdr *)(j->data + eh->e_shoff);
    unsigned nsec = eh->e_shnum;
    const char *shstr = (const char *)(j->data + sh[eh->e_shstrndx].sh_offset);
    const Elf64_Shdr *symsec = NULL;
    for (unsigned i = 0; i < nsec; i++)
        if (sh[i].sh_type == SHT_SYMTAB)
            symsec = &sh[i];
    if (!symsec) {
        snprintf(err, errsz, "%s: no symbol table", path);
        return -1;
    }
    const Elf64_Sym *syms = (const Elf64_Sym *)(j->data + symsec->sh_offset);
    size_t nsym = symsec->sh_size / sizeof(Elf64_Sym);
    const char *str = (const char *)(j->data + sh[symsec->sh_link].sh_offset);
    for (size_t i = 0; i < nsym; i++) {
        const Elf64_Sym *s = &syms[i];
        if (ELF64_ST_TYPE(s->st_info) != STT_FUNC || s->st_shndx == SHN_UNDEF || s->st_shndx >= nsec)
            continue;
        if (!(sh[s->st_shndx].sh_flags & SHF_EXECINSTR))
            continue;
        j->fn = realloc(j->fn, sizeof(jit_fn) * (size_t)(j->nfn + 1));
        jit_fn *fn = &j->fn[j->nfn++];
        memset(fn, 0, sizeof *fn);
        fn->name = ti_strdup(str + s->st_name);
        fn->shndx = s->st_shndx;
        fn->value = s->st_value;
        fn->size = s->st_size;
    }
    for (unsigned i = 0; i < nsec; i++) {
        if (sh[i].sh_type != SHT_RELA || sh[i].sh_info >= nsec || !(sh[sh[i].sh_info].sh_flags & SHF_EXECINSTR))
            continue;
        const Elf64_Rela *ra = (const Elf64_Rela *)(j->data + sh[i].sh_offset);
        size_t nr = sh[i].sh_size / sizeof(Elf64_Rela);
        for (size_t k = 0; k < nr; k++) {
            size_t si = ELF64_R_SYM(ra[k].r_info);
            if (si >= nsym)
                continue;
            const Elf64_Sym *s = &syms[si];
            j->rel = realloc(j->rel, sizeof(jit_reloc) * (size_t)(j->nrel + 1));
            j->rel_sec = realloc(j->rel_sec, sizeof(unsigned) * (size_t)(j->nrel + 1));
            jit_reloc *r = &j->rel[j->nrel];
            j->rel_sec[j->nrel++] = sh[i].sh_info;
            r->off = ra[k].r_offset;
            r->type = (unsigned)ELF64_R_TYPE(ra[k].r_info);
            if (ELF64_ST_TYPE(s->st_info) == STT_SECTION && s->st_shndx < nsec)
                r->sym = ti_fmt("%s+0x%llx", shstr + sh[s->st_shndx].sh_name, (unsigned long long)(ra[k].r_addend + 4));
            else
                r->sym = ti_strdup(str + s->st_name);
            r->is_func = ELF64_ST_TYPE(s->st_info) == STT_FUNC;
        }
    }
    /* disassemble every function */
    LLVMDisasmContextRef dc = LLVMCreateDisasm("x86_64-pc-linux-gnu", NULL, 0, NULL, NULL);
    if (!dc) {
        snprintf(err, errsz, "LLVM: no x86-64 disassembler");
        return -1;
    }
    LLVMSetDisasmOptions(dc, LLVMDisassembler_Option_PrintImmHex);
    for (int k = 0; k < j->nfn; k++) {
        jit_fn *fn = &j->fn[k];
        const Elf64_Shdr *ts = &sh[fn->shndx];
        if (fn->value + fn->size > ts->sh_size)
            continue;
        uint8_t *code = j->data + ts->sh_offset + fn->value;
        uint64_t pc = 0;
        int cap = 0;
        while (pc < fn->size) {
            char line[256];
            size_t len = LLVMDisasmInstruction(dc, code + pc, fn->size - pc, fn->value + pc, line, sizeof line);
            if (len == 0) {
                snprintf(line, sizeof line, ".byte 0x%02x", code[pc]);
                len = 1;
            }
            if (fn->ninsn == cap) {
                cap = cap ? cap * 2 : 64;
                fn->insn = realloc(fn->insn, sizeof(jit_insn) * (size_t)cap);
            }
            jit_insn *in = &fn->insn[fn->ninsn++];
            in->off = fn->value + pc;
            in->len = (unsigned)len;
            in->text = ti_oneline(line, 120);
            in->target = NULL;
            for (int r = 0; r < j->nrel; r++)
                if (j->rel_sec[r] == fn->shndx && j->rel[r].off >= in->off && j->rel[r].off < in->off + len) {
                    in->target = j->rel[r].sym;
                    break;
                }
            pc += len;
        }
    }
    LLVMDisasmDispose(dc);
    return 0;
}

static void obj_free(jit_obj *j)
{
    for (int k = 0; k < j->nfn; k++) {
        for (int i = 0; i < j->fn[k].ninsn; i++)
            free(j->fn[k].insn[i].text);
        free(j->fn[k].insn);
        free(j->fn[k].name);
    }
    for (int r = 0; r < j->nrel; r++)
        free(j->rel[r].sym);
    free(j->fn);
    free(j->rel);
    free(j->rel_sec);
    free(j->data);
}

static jit_fn *find_fn(jit_obj *j, const char *name)
{
    for (int k = 0; k < j->nfn; k++)
        if (!strcmp(j->fn[k].name, name))
            return &j->fn[k];
    return NULL;
}

static int insn_is_call(const jit_insn *in)
{
    return !strncmp(in->text, "call", 4);
}

static char *ev_insn(const jit_fn *f, const jit_insn *in)
{
    if (insn_is_call(in) && in->target)
        return ti_fmt("%s+0x%llx: `call %s` (reloc)", f->name, (unsigned long long)(in->off - f->value), in->target);
    if (in->target)
        return ti_fmt("%s+0x%llx: `%s` (reloc -> %s)", f->name, (unsigned long long)(in->off - f->value), in->text, in->target);
    return ti_fmt("%s+0x%llx: `%s`", f->name, (unsigned long long)(in->off - f->value), in->text);
}

static void add_ev(ti_result *r, char *s)
{
    ti_sl_add(&r->evidence, s);
    free(s);
}

/* ---- register tracking for a call's length argument (%rdx) ---------------------------------- */
static const char *reg_family(const char *r)
{
    static const char *fam[][5] = {
        { "rax", "eax", "ax", "al", 0 }, { "rbx", "ebx", "bx", "bl", 0 }, { "rcx", "ecx", "cx", "cl", 0 },
        { "rdx", "edx", "dx", "dl", 0 }, { "rsi", "esi", "si", "sil", 0 }, { "rdi", "edi", "di", "dil", 0 },
    };
    while (*r == '%' || *r == ' ')
        r++;
    for (size_t i = 0; i < sizeof fam / sizeof *fam; i++)
        for (int k = 0; fam[i][k]; k++)
            if (!strcmp(r, fam[i][k]))
                return fam[i][0];
    static char buf[8][16];
    static int slot;
    char *b = buf[slot++ & 7];
    snprintf(b, 16, "%s", r);
    size_t n = strlen(b);
    if (n > 2 && b[0] == 'r' && (b[n - 1] == 'd' || b[n - 1] == 'w' || b[n - 1] == 'b'))
        b[n - 1] = 0;   /* r10d -> r10 */
    return b;
}

/* Split AT&T "mnem src, dst" into mnemonic, source, destination (top-level commas only). */
static int split_insn(const char *text, char *mn, char *src, char *dst, size_t sz)
{
    const char *p = text;
    size_t k = 0;
    while (*p && *p != ' ' && k + 1 < sz)
        mn[k++] = *p++;
    mn[k] = 0;
    while (*p == ' ')
        p++;
    const char *last = NULL;
    int depth = 0;
    for (const char *q = p; *q; q++) {
        if (*q == '(')
            depth++;
        else if (*q == ')')
            depth--;
        else if (*q == ',' && !depth)
            last = q;
    }
    if (!last) {
        snprintf(src, sz, "%s", p);
        dst[0] = 0;
        return 1;
    }
    snprintf(src, sz, "%.*s", (int)(last - p), p);
    const char *d = last + 1;
    while (*d == ' ')
        d++;
    snprintf(dst, sz, "%s", d);
    return 2;
}

/* Length passed in %rdx to the call at index ci: >= 0 a constant, -1 computed; `how` explains. */
static long long track_rdx(const jit_fn *f, int ci, char **how)
{
    const char *want = "rdx";
    for (int i = ci - 1; i >= 0 && i >= ci - 40; i--) {
        const jit_insn *in = &f->insn[i];
        if (insn_is_call(in))
            break;
        char mn[64], src[128], dst[128];
        if (split_insn(in->text, mn, src, dst, sizeof mn < sizeof src ? sizeof mn : sizeof src) != 2)
            continue;
        if (dst[0] != '%' || strcmp(reg_family(dst), want))
            continue;
        if (!strncmp(mn, "mov", 3) && src[0] == '$') {
            *how = ti_fmt("length set by %s+0x%llx: `%s`", f->name, (unsigned long long)(in->off - f->value), in->text);
            return strtoll(src + 1, NULL, 0);
        }
        if (!strncmp(mn, "mov", 3) && src[0] == '%') {
            want = reg_family(src);
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
        jit_fn *f = find_fn(j, names.v[i]);
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

static void jit_rule(jit_obj *j, const ti_contract *c, const ti_remarks *rm, ti_rule *r, int strict)
{
    ti_result *res = &r->jit;
    jit_fn *self = find_fn(j, r->function);
    if (!self) {
        res->status = TI_FAIL;
        res->summary = ti_fmt("%s is not in the tcc object", r->function);
        add_ev(res, ti_fmt("no FUNC symbol %s in .symtab", r->function));
        return;
    }
    jit_fn **sc;
    int nsc;
    scope_fns(j, rm, r->function, &sc, &nsc);
    char *where = scope_desc(sc, nsc);
    ti_strlist bad = { 0 }, good = { 0 }, other = { 0 };
    int ncalls = 0, ninsn = 0;
    long long min = r->min_copy >= 0 ? r->min_copy : r->frame_size >= 0 ? r->frame_size : 1;
    for (int s = 0; s < nsc; s++) {
        jit_fn *f = sc[s];
        for (int i = 0; i < f->ninsn; i++) {
            jit_insn *in = &f->insn[i];
            ninsn++;
            int call = insn_is_call(in);
            ncalls += call;
            char *e = NULL;
            switch (r->kind) {
            case TI_MUST_INLINE:
                if (call && in->target && !strcmp(in->target, r->callee))
                    ti_sl_add(&bad, e = ev_insn(f, in));
                break;
            case TI_NO_CALL:
                if (call && in->target && ti_sl_has(&r->names, in->target))
                    ti_sl_addf(&bad, "forbidden call: %s", e = ev_insn(f, in));
                break;
            case TI_NO_INIT_CHECK:
                if (call && in->target && ti_is_init_call(c, in->target))
                    ti_sl_addf(&bad, "initialiser call: %s", e = ev_insn(f, in));
                else if (!call && in->target && ti_is_guard_name(c, in->target))
                    ti_sl_addf(&bad, "guard access %s: %s", in->target, e = ev_insn(f, in));
                break;
            case TI_CLEARS_FRAME:
                if (call && in->target && (!strcmp(in->target, "memset") || !strcmp(in->target, "bzero"))) {
                    char *how = NULL;
                    long long n = track_rdx(f, i, &how);
                    e = ev_insn(f, in);
                    if (n >= 0 && r->frame_size >= 0 && n < r->frame_size)
                        ti_sl_addf(&other, "memset of %lld bytes, frame is %lld: %s; %s", n, r->frame_size, e, how);
                    else if (n >= 0 && r->frame_size < 0)
                        ti_sl_addf(&other, "memset of a constant %lld bytes (frame size undeclared: only a computed-length memset counts): %s; %s", n, e, how);
                    else
                        ti_sl_addf(&good, "%s; %s%s", e, how, n < 0 ? " (dynamic frame size, accepted)" : "");
                    free(how);
                }
                break;
            case TI_NO_FRAME_COPY:
                if (call && in->target && (!strcmp(in->target, "memcpy") || !strcmp(in->target, "memmove"))) {
                    char *how = NULL;
                    long long n = track_rdx(f, i, &how);
                    e = ev_insn(f, in);
                    if (n < 0 || n >= min)
                        ti_sl_addf(&bad, "copy%s: %s; %s", n < 0 ? " with a computed length" : "", e, how);
                    else
                        ti_sl_addf(&good, "small copy of %lld bytes ignored: %s", n, e);
                    free(how);
                } else if (strstr(in->text, "movs") && !strncmp(in->text, "rep", 3)) {
                    ti_sl_addf(&bad, "block copy: %s", e = ev_insn(f, in));
                } else if (call && !in->target) {
                    ti_sl_addf(&good, "indirect call (the step call): %s", e = ev_insn(f, in));
                }
                break;
            }
            free(e);
        }
    }
    switch (r->kind) {
    case TI_MUST_INLINE:
        if (bad.n) {
            res->status = strict ? TI_FAIL : TI_INFO;
            res->summary = ti_fmt("not inlined (backend does not inline): %d call(s) to %s", bad.n, r->callee);
        } else {
            res->status = TI_PASS;
            res->summary = ti_fmt("no call to %s in %s", r->callee, where);
        }
        break;
    case TI_CLEARS_FRAME:
        if (!bad.n && good.n) {
            res->status = TI_PASS;
            res->summary = ti_fmt("memset clears the frame in %s", where);
        } else {
            res->status = TI_FAIL;
            res->summary = other.n ? ti_fmt("no memset covering the frame in %s", where) : ti_fmt("no memset call in %s", where);
            for (int k = 0; k < other.n; k++)
                ti_sl_add(&bad, other.v[k]);
            if (!bad.n)
                ti_sl_addf(&bad, "%s: %d instruction(s), %d call(s), none to memset", where, ninsn, ncalls);
        }
        break;
    default:
        if (bad.n) {
            res->status = TI_FAIL;
            res->summary = ti_fmt("%d violation(s) in %s", bad.n, where);
        } else {
            res->status = TI_PASS;
            res->summary = ti_fmt("none in %s (%d instructions, %d calls)", where, ninsn, ncalls);
            if (r->kind != TI_NO_FRAME_COPY) {
                ti_strlist callees = { 0 };
                for (int s = 0; s < nsc; s++)
                    for (int i = 0; i < sc[s]->ninsn; i++)
                        if (insn_is_call(&sc[s]->insn[i]) && !ti_sl_has(&callees, sc[s]->insn[i].target ? sc[s]->insn[i].target : "(indirect)"))
                            ti_sl_add(&callees, sc[s]->insn[i].target ? sc[s]->insn[i].target : "(indirect)");
                size_t len = 32;
                for (int k = 0; k < callees.n; k++)
                    len += strlen(callees.v[k]) + 2;
                char *d = calloc(1, len);
                strcat(d, "calls: ");
                for (int k = 0; k < callees.n; k++) {
                    if (k)
                        strcat(d, ", ");
                    strcat(d, callees.v[k]);
                }
                if (!callees.n)
                    strcat(d, "none");
                ti_sl_add(&good, d);
                free(d);
                ti_sl_free(&callees);
            }
        }
    }
    ti_strlist *src = bad.n ? &bad : &good;
    for (int k = 0; k < src->n && k < 6; k++)
        ti_sl_add(&res->evidence, src->v[k]);
    free(where);
    free(sc);
    ti_sl_free(&bad);
    ti_sl_free(&good);
    ti_sl_free(&other);
}

int ti_jit_check(ti_contract *c, const ti_options *o, const ti_remarks *rm, const char *obj_path, char *err,
                 size_t errsz)
{
    if (tcc_compile_obj(o, obj_path, err, errsz))
        return -1;
    LLVMInitializeX86TargetInfo();
    LLVMInitializeX86TargetMC();
    LLVMInitializeX86Disassembler();
    jit_obj j = { 0 };
    if (elf_load(obj_path, &j, err, errsz)) {
        obj_free(&j);
        return -1;
    }
    for (int k = 0; k < c->nrules; k++)
        jit_rule(&j, c, rm, &c->rules[k], o->jit_strict);
    obj_free(&j);
    return 0;
}
