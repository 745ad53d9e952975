/*
 * jit_obj.h - the JIT side's view of a tcc object (jit_obj.c): functions with their
 * disassembled instructions, the relocations inside each instruction (symbol, type,
 * addend), data objects and the function addresses stored in data (relocations in data
 * sections). Used by the rules (jit.c) and the shape model (shape_tcc.c).
 */
#ifndef TD_INSPECT_JIT_OBJ_H
#define TD_INSPECT_JIT_OBJ_H

#include "inspect.h"

#include <stdint.h>

typedef struct jit_reloc {
    uint64_t off;
    char *sym;
    int is_func;       /* the symbol is a function (defined FUNC, or undefined and called) */
    unsigned type;     /* R_X86_64_* */
    long long addend;
} jit_reloc;

typedef struct jit_insn {
    uint64_t off;      /* offset in its section */
    unsigned len;
    char *text;        /* disassembly, one line */
    const char *target; /* relocation symbol inside the instruction, if any */
    const jit_reloc *rel; /* that relocation */
} jit_insn;

typedef struct jit_fn {
    char *name;
    unsigned shndx;
    uint64_t value, size;
    int global;        /* STB_GLOBAL binding */
    jit_insn *insn;
    int ninsn;
} jit_fn;

typedef struct jit_data {  /* a data object (STT_OBJECT) */
    char *name;
    unsigned shndx;
    uint64_t value, size;
    int constant;      /* in a read-only section */
} jit_data;

typedef struct jit_dataref { /* a symbol address stored in data: sec + off holds &sym */
    unsigned shndx;
    uint64_t off;
    char *sym;
    int is_func;
} jit_dataref;

typedef struct jit_obj {
    unsigned char *data;
    size_t size;
    jit_fn *fn;
    int nfn;
    jit_reloc *rel;       /* relocations against executable sections */
    unsigned *rel_sec;    /* their section */
    int nrel;
    jit_data *obj;
    int nobj;
    jit_dataref *dref;
    int ndref;
} jit_obj;

int ti_jit_load(const char *path, jit_obj *j, char *err, size_t errsz);
void ti_jit_free(jit_obj *j);
jit_fn *ti_jit_find_fn(const jit_obj *j, const char *name);
int ti_jit_is_call(const jit_insn *in);
/* "fn+0x1a: `text`" with the relocation's symbol when there is one. */
char *ti_jit_ev_insn(const jit_fn *f, const jit_insn *in);
/* Split AT&T "mnem src, dst" into mnemonic, source, destination (top-level commas only);
 * returns the number of operands found (1 or 2; 1 leaves dst empty). */
int ti_jit_split_insn(const char *text, char *mn, char *src, char *dst, size_t sz);
/* The 64-bit register family of a register name ("eax" -> "rax", "r10d" -> "r10"). */
const char *ti_jit_reg_family(const char *r);

#endif
