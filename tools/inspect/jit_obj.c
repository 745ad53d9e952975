/*
 * jit_obj.c - compile the TU with libtcc into an ELF object (TCC_OUTPUT_OBJ) and read it
 * with <elf.h>'s structs (section headers, .symtab, .rela.*), each function's bytes
 * disassembled with LLVM's disassembler C API (see jit_obj.h).
 */
#include "jit_obj.h"

#include <elf.h>
#include <libtcc.h>
#include <llvm-c/Disassembler.h>
#include <llvm-c/Target.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- compile with libtcc ------------------------------------------------------------------ */
typedef struct tcc_err { char buf[4096]; size_t len; } tcc_err;

static void tcc_on_error(void *opaque, const char *msg)
{
    tcc_err *e = opaque;
    int n = snprintf(e->buf + e->len, sizeof e->buf - e->len, "%s%s", e->len ? "; " : "", msg);
    if (n > 0 && e->len + (size_t)n < sizeof e->buf)
        e->len += (size_t)n;
}

int ti_tcc_compile(const ti_options *o, const char *src, const char *obj, char *err, size_t errsz)
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
    if (tcc_add_file(s, src) < 0) {
        snprintf(err, errsz, "%s: libtcc could not compile it: %s", src, e.len ? e.buf : "?");
        rc = -1;
    } else if (tcc_output_file(s, obj) < 0) {
        snprintf(err, errsz, "%s: libtcc could not write the object: %s", obj, e.len ? e.buf : "?");
        rc = -1;
    }
    tcc_delete(s);
    return rc;
}

/* ---- ELF ------------------------------------------------------------------------------------ */
int ti_jit_load(const char *path, jit_obj *j, char *err, size_t errsz)
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
    /* tcc does not align its section header table (e_shoff may be 4 mod 8): read it
     * through an aligned copy, never in place (UBSan: misaligned access) */
    unsigned nsec = eh->e_shnum;
    Elf64_Shdr *sh = malloc(sizeof(Elf64_Shdr) * (nsec ? nsec : 1));
    memcpy(sh, j->data + eh->e_shoff, sizeof(Elf64_Shdr) * nsec);
    const char *shstr = (const char *)(j->data + sh[eh->e_shstrndx].sh_offset);
    const Elf64_Shdr *symsec = NULL;
    for (unsigned i = 0; i < nsec; i++)
        if (sh[i].sh_type == SHT_SYMTAB)
            symsec = &sh[i];
    if (!symsec) {
        snprintf(err, errsz, "%s: no symbol table", path);
        free(sh);
        return -1;
    }
    const Elf64_Sym *syms = (const Elf64_Sym *)(j->data + symsec->sh_offset);
    size_t nsym = symsec->sh_size / sizeof(Elf64_Sym);
    const char *str = (const char *)(j->data + sh[symsec->sh_link].sh_offset);
    for (size_t i = 0; i < nsym; i++) {
        const Elf64_Sym *s = &syms[i];
        if (ELF64_ST_TYPE(s->st_info) == STT_OBJECT && s->st_shndx != SHN_UNDEF && s->st_shndx < nsec) {
            j->obj = realloc(j->obj, sizeof(jit_data) * (size_t)(j->nobj + 1));
            j->obj[j->nobj++] = (jit_data){ ti_strdup(str + s->st_name), s->st_shndx, s->st_value, s->st_size,
                                            !(sh[s->st_shndx].sh_flags & SHF_WRITE) };
            continue;
        }
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
        fn->global = ELF64_ST_BIND(s->st_info) == STB_GLOBAL;
    }
    for (unsigned i = 0; i < nsec; i++) {
        if (sh[i].sh_type != SHT_RELA || sh[i].sh_info >= nsec || !(sh[sh[i].sh_info].sh_flags & SHF_ALLOC))
            continue;
        if (!(sh[sh[i].sh_info].sh_flags & SHF_EXECINSTR)) {
            /* data: the addresses stored in initialised globals (function pointer tables) */
            const Elf64_Rela *ra = (const Elf64_Rela *)(j->data + sh[i].sh_offset);
            for (size_t k = 0; k < sh[i].sh_size / sizeof(Elf64_Rela); k++) {
                size_t si = ELF64_R_SYM(ra[k].r_info);
                if (si >= nsym || ELF64_R_TYPE(ra[k].r_info) != R_X86_64_64)
                    continue;
                j->dref = realloc(j->dref, sizeof(jit_dataref) * (size_t)(j->ndref + 1));
                j->dref[j->ndref++] = (jit_dataref){ sh[i].sh_info, ra[k].r_offset, ti_strdup(str + syms[si].st_name),
                                                     ELF64_ST_TYPE(syms[si].st_info) == STT_FUNC };
            }
            continue;
        }
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
            r->addend = ra[k].r_addend;
        }
    }
    /* disassemble every function */
    LLVMDisasmContextRef dc = LLVMCreateDisasm("x86_64-pc-linux-gnu", NULL, 0, NULL, NULL);
    if (!dc) {
        snprintf(err, errsz, "LLVM: no x86-64 disassembler");
        free(sh);
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
            in->rel = NULL;
            for (int r = 0; r < j->nrel; r++)
                if (j->rel_sec[r] == fn->shndx && j->rel[r].off >= in->off && j->rel[r].off < in->off + len) {
                    in->target = j->rel[r].sym;
                    in->rel = &j->rel[r];
                    break;
                }
            pc += len;
        }
    }
    LLVMDisasmDispose(dc);
    free(sh);
    return 0;
}

void ti_jit_free(jit_obj *j)
{
    for (int k = 0; k < j->nfn; k++) {
        for (int i = 0; i < j->fn[k].ninsn; i++)
            free(j->fn[k].insn[i].text);
        free(j->fn[k].insn);
        free(j->fn[k].name);
    }
    for (int r = 0; r < j->nrel; r++)
        free(j->rel[r].sym);
    for (int k = 0; k < j->nobj; k++)
        free(j->obj[k].name);
    for (int k = 0; k < j->ndref; k++)
        free(j->dref[k].sym);
    free(j->obj);
    free(j->dref);
    free(j->fn);
    free(j->rel);
    free(j->rel_sec);
    free(j->data);
}

jit_fn *ti_jit_find_fn(const jit_obj *j, const char *name)
{
    for (int k = 0; k < j->nfn; k++)
        if (!strcmp(j->fn[k].name, name))
            return &j->fn[k];
    return NULL;
}

int ti_jit_is_call(const jit_insn *in)
{
    return !strncmp(in->text, "call", 4);
}

char *ti_jit_ev_insn(const jit_fn *f, const jit_insn *in)
{
    if (ti_jit_is_call(in) && in->target)
        return ti_fmt("%s+0x%llx: `call %s` (reloc)", f->name, (unsigned long long)(in->off - f->value), in->target);
    if (in->target)
        return ti_fmt("%s+0x%llx: `%s` (reloc -> %s)", f->name, (unsigned long long)(in->off - f->value), in->text, in->target);
    return ti_fmt("%s+0x%llx: `%s`", f->name, (unsigned long long)(in->off - f->value), in->text);
}

const char *ti_jit_reg_family(const char *r)
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
int ti_jit_split_insn(const char *text, char *mn, char *src, char *dst, size_t sz)
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
