/*
 * remarks.c - optimisation remarks (clang -fsave-optimization-record=yaml), read with
 * LLVM's remarks C API (llvm-c/Remarks.h). Only the inliner's remarks are kept.
 */
#include "inspect.h"

#include <llvm-c/Remarks.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *rstr(LLVMRemarkStringRef s)
{
    if (!s)
        return ti_strdup("");
    uint32_t n = LLVMRemarkStringGetLen(s);
    char *d = malloc(n + 1);
    memcpy(d, LLVMRemarkStringGetData(s), n);
    d[n] = 0;
    return d;
}

static int is_inline_pass(const char *p)
{
    return !strcmp(p, "inline") || !strcmp(p, "always-inline") || !strcmp(p, "sample-profile-inline")
           || !strcmp(p, "partial-inlining");
}

int ti_remarks_load(const char *path, ti_remarks *r, char *err, size_t errsz)
{
    memset(r, 0, sizeof *r);
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errsz, "%s: cannot read the remarks file", path);
        return -1;
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    if (fread(buf, 1, (size_t)n, f) != (size_t)n) {
        fclose(f);
        free(buf);
        snprintf(err, errsz, "%s: read error", path);
        return -1;
    }
    fclose(f);
    buf[n] = 0;
    LLVMRemarkParserRef p = LLVMRemarkParserCreateYAML(buf, (uint64_t)n);
    LLVMRemarkEntryRef e;
    while ((e = LLVMRemarkParserGetNext(p))) {
        char *pass = rstr(LLVMRemarkEntryGetPassName(e));
        if (is_inline_pass(pass)) {
            if (r->n == r->cap) {
                r->cap = r->cap ? r->cap * 2 : 64;
                r->v = realloc(r->v, sizeof(ti_remark) * (size_t)r->cap);
            }
            ti_remark *m = &r->v[r->n++];
            memset(m, 0, sizeof *m);
            m->name = rstr(LLVMRemarkEntryGetRemarkName(e));
            m->passed = LLVMRemarkEntryGetType(e) == LLVMRemarkTypePassed;
            LLVMRemarkDebugLocRef dl = LLVMRemarkEntryGetDebugLoc(e);
            if (dl) {
                m->file = rstr(LLVMRemarkDebugLocGetSourceFilePath(dl));
                m->line = LLVMRemarkDebugLocGetSourceLine(dl);
                m->col = LLVMRemarkDebugLocGetSourceColumn(dl);
            }
            size_t tl = 0, tc = 256;
            char *text = malloc(tc);
            text[0] = 0;
            for (LLVMRemarkArgRef a = LLVMRemarkEntryGetFirstArg(e); a; a = LLVMRemarkEntryGetNextArg(a, e)) {
                char *k = rstr(LLVMRemarkArgGetKey(a));
                char *v = rstr(LLVMRemarkArgGetValue(a));
                if (!strcmp(k, "Caller") && !m->caller)
                    m->caller = ti_strdup(v);
                else if (!strcmp(k, "Callee") && !m->callee)
                    m->callee = ti_strdup(v);
                else if (!strcmp(k, "Reason") && !m->reason)
                    m->reason = ti_strdup(v);
                size_t vl = strlen(v);
                if (tl + vl + 1 > tc) {
                    tc = (tl + vl + 1) * 2;
                    text = realloc(text, tc);
                }
                memcpy(text + tl, v, vl + 1);
                tl += vl;
                free(k);
                free(v);
            }
            /* the YAML keeps quotes doubled ('') inside single-quoted scalars */
            char *w = text;
            for (char *q = text; *q; q++) {
                if (q[0] == '\'' && q[1] == '\'')
                    q++;
                *w++ = *q;
            }
            *w = 0;
            m->text = text;
            if (!m->caller)
                m->caller = rstr(LLVMRemarkEntryGetFunctionName(e));
        }
        free(pass);
        LLVMRemarkEntryDispose(e);
    }
    int bad = LLVMRemarkParserHasError(p);
    if (bad)
        snprintf(err, errsz, "%s: not a valid remarks file: %s", path, LLVMRemarkParserGetErrorMessage(p));
    LLVMRemarkParserDispose(p);
    free(buf);
    if (bad) {
        ti_remarks_free(r);
        return -1;
    }
    return 0;
}

void ti_remarks_free(ti_remarks *r)
{
    for (int i = 0; i < r->n; i++) {
        ti_remark *m = &r->v[i];
        free(m->name);
        free(m->caller);
        free(m->callee);
        free(m->reason);
        free(m->file);
        free(m->text);
    }
    free(r->v);
    memset(r, 0, sizeof *r);
}

void ti_inlined_closure(const ti_remarks *r, const char *fn, ti_strlist *out)
{
    ti_strlist work = { 0 };
    ti_sl_add(&work, fn);
    for (int w = 0; w < work.n; w++) {
        for (int i = 0; i < r->n; i++) {
            const ti_remark *m = &r->v[i];
            if (!m->passed || !m->callee || !m->caller || strcmp(m->caller, work.v[w]))
                continue;
            if (!ti_sl_has(&work, m->callee)) {
                ti_sl_add(&work, m->callee);
                ti_sl_add(out, m->callee);
            }
        }
    }
    ti_sl_free(&work);
}
