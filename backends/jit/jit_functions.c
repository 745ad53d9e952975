/*
 * jit_functions.c - where the functions of a tcc state's in-memory code are, for the
 * instruction meter (callgrind names code without symbols by address only).
 *
 * libtcc lists only the global symbols of a relocated state; the static functions are in its
 * symbol table but not reachable. The same TU compiled to an ELF object (TCC_OUTPUT_OBJ, the
 * same includes and defines) has the same code: tcc generates code the same way for both
 * outputs, and relocation patches bytes in place, so every function's offset in the object's
 * code section is its offset in memory. The section's address in memory is that of any global
 * function (tcc_get_symbol) less its offset; every global function must give the same one,
 * or the layouts differ and nothing is returned. Outside the functions, in memory only: the
 * stubs through which tcc calls global functions there (one jump each), left unnamed.
 */
#include "jit_functions.h"

#include <elf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libtcc.h>

static int fn_by_addr(const void *a, const void *b)
{
    const td_backend_function *x = a, *y = b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

unsigned char *td_jit_read_file(const char *path, const char *what, size_t *size, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    long len = -1;
    unsigned char *data = NULL;
    if (f && fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (data = malloc((size_t)len + 1)) != NULL) {
        if (fread(data, 1, (size_t)len, f) == (size_t)len) {
            data[len] = 0;
        } else {
            free(data);
            data = NULL;
        }
    }
    if (f) fclose(f);
    if (!data) snprintf(err, errlen, "jit: %s: cannot read %s", path, what);
    *size = data ? (size_t)len : 0;
    return data;
}

int td_jit_object_functions(const char *obj_path, void *state, td_backend_function **out, size_t *n, char *err,
                            size_t errlen)
{
    size_t size;
    *out = NULL;
    *n = 0;
    unsigned char *data = td_jit_read_file(obj_path, "the object", &size, err, errlen);
    if (!data) return -1;
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)data;
    Elf64_Shdr *sh = NULL;
    td_backend_function *v = NULL;
    size_t nv = 0;
    int rc = -1;
    if (size < sizeof *eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
        eh->e_type != ET_REL || eh->e_shnum == 0 || eh->e_shoff > size ||
        (size - eh->e_shoff) / sizeof(Elf64_Shdr) < eh->e_shnum) {
        snprintf(err, errlen, "jit: %s: not a 64-bit ELF relocatable object", obj_path);
        goto done;
    }
    /* tcc does not align its section header table: read it through an aligned copy */
    unsigned nsec = eh->e_shnum;
    sh = malloc(sizeof *sh * nsec);
    if (!sh) goto nomem;
    memcpy(sh, data + eh->e_shoff, sizeof *sh * nsec);
    const Elf64_Shdr *symsec = NULL;
    for (unsigned i = 0; i < nsec; i++) {
        if (sh[i].sh_type != SHT_NOBITS && (sh[i].sh_offset > size || sh[i].sh_size > size - sh[i].sh_offset)) {
            snprintf(err, errlen, "jit: %s: section %u lies outside the file", obj_path, i);
            goto done;
        }
        if (sh[i].sh_type == SHT_SYMTAB) symsec = &sh[i];
    }
    if (!symsec || symsec->sh_link >= nsec) {
        snprintf(err, errlen, "jit: %s: no usable symbol table", obj_path);
        goto done;
    }
    const unsigned char *syms = data + symsec->sh_offset;   /* copied out: maybe not aligned */
    size_t nsym = symsec->sh_size / sizeof(Elf64_Sym);
    const char *str = (const char *)(data + sh[symsec->sh_link].sh_offset);
    size_t strsize = sh[symsec->sh_link].sh_size;
    unsigned code = 0;              /* the code section: tcc emits every function into one */
    uintptr_t base = 0;
    int based = 0;
    for (size_t i = 0; i < nsym; i++) {
        Elf64_Sym sym;
        const Elf64_Sym *y = &sym;
        memcpy(&sym, syms + i * sizeof sym, sizeof sym);
        if (ELF64_ST_TYPE(y->st_info) != STT_FUNC || y->st_shndx == SHN_UNDEF || y->st_shndx >= nsec ||
            !(sh[y->st_shndx].sh_flags & SHF_EXECINSTR))
            continue;
        if (y->st_name >= strsize || !memchr(str + y->st_name, 0, strsize - y->st_name) ||
            y->st_value > sh[y->st_shndx].sh_size || y->st_size > sh[y->st_shndx].sh_size - y->st_value) {
            snprintf(err, errlen, "jit: %s: symbol %zu is not inside its section", obj_path, i);
            goto done;
        }
        if (code && y->st_shndx != code) {
            snprintf(err, errlen, "jit: %s: functions in two code sections (%u, %u)", obj_path, code, y->st_shndx);
            goto done;
        }
        code = y->st_shndx;
        const char *name = str + y->st_name;
        if (ELF64_ST_BIND(y->st_info) == STB_GLOBAL) {
            void *at = tcc_get_symbol((TCCState *)state, name);
            uintptr_t b = (uintptr_t)at - (uintptr_t)y->st_value;
            if (!at) {
                snprintf(err, errlen, "jit: %s: the global function %s is not in the loaded state", obj_path, name);
                goto done;
            }
            if (based && b != base) {
                snprintf(err, errlen, "jit: %s: %s is not where the other global functions place it: the object's "
                                      "layout is not the loaded code's", obj_path, name);
                goto done;
            }
            base = b;
            based = 1;
        }
        td_backend_function *grown = realloc(v, sizeof *v * (nv + 1));
        if (!grown) goto nomem;
        v = grown;
        v[nv].name = strdup(name);
        v[nv].addr = (uintptr_t)y->st_value;   /* an offset until the base is known */
        v[nv].size = (size_t)y->st_size;
        if (!v[nv++].name) goto nomem;
    }
    if (!based) {
        snprintf(err, errlen, "jit: %s: no global function to place the code by", obj_path);
        goto done;
    }
    /* A function written in assembly (the port's) has no size: it reaches the next one, or
     * the section's end. Then the offsets become addresses. */
    qsort(v, nv, sizeof *v, fn_by_addr);
    for (size_t i = 0; i < nv; i++)
        if (v[i].size == 0)
            v[i].size = (size_t)((i + 1 < nv ? v[i + 1].addr : sh[code].sh_size) - v[i].addr);
    for (size_t i = 0; i < nv; i++) v[i].addr += base;
    *out = v;
    *n = nv;
    v = NULL;
    nv = 0;
    rc = 0;
    goto done;
nomem:
    snprintf(err, errlen, "jit: %s: out of memory", obj_path);
done:
    td_backend_functions_free(v, nv);
    free(sh);
    free(data);
    return rc;
}
